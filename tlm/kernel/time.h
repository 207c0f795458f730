// The simulation's clock: the current time as a Tick, and conversions to
// SystemC's time. Ticks and bandwidths themselves are in units.h.
#pragma once

#include <systemc>

#include "tlm/kernel/units.h"

namespace fabricsim {

namespace detail {
// While the fabric calendar drains, it publishes the current time here:
// sc_time_stamp() is a library call, made several times per message.
extern bool g_calendar_now_valid;
extern Tick g_calendar_now;
}  // namespace detail

inline Tick now_ticks() {
  return detail::g_calendar_now_valid ? detail::g_calendar_now : sc_core::sc_time_stamp().value();
}
inline sc_core::sc_time to_sc_time(Tick t) {
  return sc_core::sc_time::from_value(t);
}
/// Throws unless the SystemC time resolution is 1 ps, which every Tick assumes.
void require_picosecond_resolution();

}  // namespace fabricsim
