// A memory's parameters (Memory::Params), without SystemC: the platform
// description holds them (platforms/assembly/platform_spec.h).
#pragma once

#include <cstdint>

#include "tlm/kernel/parameters.h"
#include "tlm/kernel/units.h"

namespace fabricsim {

struct MemoryParams {
  std::uint64_t base = 0;
  // One HBM3 stack: 16 GiB, 16 channels, 819 GB/s (JESD238, 6.4 Gb/s pins x 1024).
  std::uint64_t size_bytes = 16ull << 30;
  unsigned channels = 16;
  std::uint64_t interleave_bytes = 256;
  Bandwidth bandwidth = Bandwidth::GBps(819);  // all channels together
  Tick latency = ns_to_ticks(100);
  bool store_data = false;  // keep the bytes written (data mode, DMI, foreign platforms)
  Bandwidth channel_bandwidth() const {
    return Bandwidth::bytes_per_second(bandwidth.bytes_per_ps() * 1e12 / channels);
  }
  /// Every user-settable parameter, with unit, range and description.
  static const ParamTable<MemoryParams>& table();
};

}  // namespace fabricsim
