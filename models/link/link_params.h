// A link direction's parameters (Link::Params), without SystemC: the platform
// description holds them (platforms/assembly/platform_spec.h).
#pragma once

#include <cstdint>

#include "tlm/kernel/parameters.h"
#include "tlm/kernel/units.h"

namespace fabricsim {

struct LinkParams {
  Bandwidth bandwidth = Bandwidth::GBps(50);  // per direction
  Tick latency = ns_to_ticks(500);            // wire and credit-return delay
  std::uint64_t buffer_bytes = 4u << 20;      // input buffer at the receiving end
  std::uint64_t bubble_bytes = 0;             // extra room a frame entering a ring needs (set by the builder)
  /// Every user-settable parameter, with unit, range and description.
  static const ParamTable<LinkParams>& table();
};

}  // namespace fabricsim
