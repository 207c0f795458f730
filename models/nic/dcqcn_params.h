// DCQCN's parameters (Dcqcn::Params), without SystemC: the platform
// description holds them (platforms/assembly/platform_spec.h).
#pragma once

#include <cstdint>

#include "tlm/kernel/parameters.h"
#include "tlm/kernel/units.h"

namespace fabricsim {

struct DcqcnParams {
  double g = 1.0 / 256;                                         // alpha's gain
  Tick cnp_interval = 50'000'000;                               // 50 us: most one CNP per queue pair per interval
  Tick alpha_period = 55'000'000;                               // 55 us: alpha decays once per period without a CNP
  Tick rate_timer = 55'000'000;                                 // 55 us: T, the rate-increase timer
  std::uint64_t byte_counter = 10'000'000;                      // B: a rate-increase step per B bytes sent
  std::uint32_t fast_recovery = 5;                              // F: steps of fast recovery before additive increase
  Bandwidth rate_ai = Bandwidth::bytes_per_second(40e6 / 8);    // 40 Mb/s
  Bandwidth rate_hai = Bandwidth::bytes_per_second(400e6 / 8);  // 400 Mb/s
  Bandwidth min_rate = Bandwidth::bytes_per_second(100e6 / 8);  // 100 Mb/s: the floor of Rc
  static const ParamTable<DcqcnParams>& table();
};

}  // namespace fabricsim
