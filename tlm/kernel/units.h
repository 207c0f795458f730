// Time and bandwidth as numbers, shared by every component and by every
// parameter: no SystemC here, so that parameter structs and the platform
// description can be read without it (the simulation's clock is time.h).
//
// All fabricsim models count time in picoseconds (the SystemC default
// resolution), as an unsigned 64-bit "Tick". Bandwidths are kept as bytes per
// picosecond so that a transfer time is one division.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace fabricsim {

using Tick = std::uint64_t;  // picoseconds
constexpr Tick kNever = std::numeric_limits<Tick>::max();
/// The latest simulated time: 2^62 ps, about 53 days. Every duration is at
/// most this too, so a time plus a duration never wraps a Tick (and stays
/// far below SystemC's own 2^64 ps limit).
constexpr Tick kMaxTime = Tick{1} << 62;

/// A duration in picoseconds, rounded, checked against kMaxTime: NaN,
/// negative and too-long durations throw a ModelError (exit 2) naming
/// `what`, instead of wrapping into a wrong time.
Tick checked_ticks(double ps, const char* what);

inline Tick ns_to_ticks(double ns) {
  const double ps = ns * 1000.0;
  if (ps >= 0 && ps <= static_cast<double>(kMaxTime)) return static_cast<Tick>(std::llround(ps));
  return checked_ticks(ps, "a duration");  // throws
}
inline double ticks_to_ns(Tick t) {
  return static_cast<double>(t) / 1000.0;
}
inline double ticks_to_us(Tick t) {
  return static_cast<double>(t) / 1e6;
}

/// A data rate. Zero means "unlimited": transfers take no time.
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_second(double bps) { return Bandwidth(bps * 1e-12); }
  /// 10^9 bytes per second, as datasheets and nccl-tests count.
  static constexpr Bandwidth GBps(double g) { return bytes_per_second(g * 1e9); }
  /// 2^30 bytes per second, as ASTRA-sim's network files count "GB/s".
  static constexpr Bandwidth GiBps(double g) { return bytes_per_second(g * 1073741824.0); }
  static constexpr Bandwidth unlimited() { return Bandwidth(); }

  bool is_unlimited() const { return bytes_per_ps_ <= 0.0; }
  double bytes_per_ps() const { return bytes_per_ps_; }
  double GBps_value() const { return bytes_per_ps_ * 1e3; }
  /// Time to move `bytes` at this rate, rounded to the nearest picosecond.
  /// Past kMaxTime it throws a ModelError rather than wrap.
  Tick time_for(double bytes) const {
    if (is_unlimited()) return 0;
    const double ps = bytes / bytes_per_ps_;
    if (ps >= 0 && ps <= static_cast<double>(kMaxTime)) return static_cast<Tick>(std::llround(ps));
    throw_too_long(bytes);
  }

 private:
  constexpr explicit Bandwidth(double bytes_per_ps) : bytes_per_ps_(bytes_per_ps) {}
  [[noreturn]] void throw_too_long(double bytes) const;
  double bytes_per_ps_ = 0.0;
};

}  // namespace fabricsim
