// A window transport's parameters (WindowTransport::Params), without
// SystemC: the platform description holds them (platforms/assembly/platform_spec.h).
#pragma once

#include <cstdint>

#include "tlm/kernel/parameters.h"
#include "tlm/kernel/units.h"

namespace fabricsim {

/// How a window transport grows and cuts its window.
enum class WindowControl { kReno, kDctcp };

struct WindowTransportParams {
  WindowControl control = WindowControl::kReno;
  std::uint64_t mss = 4096;                  // bytes per packet (the NIC's MTU; set by the platform)
  std::uint64_t initial_window = 10 * 4096;  // RFC 6928: 10 segments
  std::uint64_t max_window = 512 << 10;      // the receiver's window: the most bytes in flight per queue pair
  Tick rto = 1'000'000'000;                  // 1 ms
  std::uint32_t ack_every = 2;               // RFC 1122: an ACK for at least every second segment
  Tick ack_delay = 500'000;                  // 0.5 us
  double dctcp_g = 1.0 / 16;                 // DCTCP paper
  static const ParamTable<WindowTransportParams>& table();
};

}  // namespace fabricsim
