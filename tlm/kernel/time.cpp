#include "tlm/kernel/time.h"

#include <sstream>

#include "tlm/util/errors.h"

namespace fabricsim {

namespace {
constexpr const char* kRange = "outside the simulator's time range (0 to 2^62 ps, about 53 days)";
}  // namespace

Tick checked_ticks(double ps, const char* what) {
  if (ps >= 0 && ps <= static_cast<double>(kMaxTime)) return static_cast<Tick>(std::llround(ps));
  std::ostringstream os;
  os << what << " of " << ps / 1e12 << " s is " << kRange;
  throw ModelError(os.str());
}

void Bandwidth::throw_too_long(double bytes) const {
  std::ostringstream os;
  os << "moving " << bytes << " bytes at " << GBps_value() << " GB/s takes " << bytes / bytes_per_ps_ / 1e12 << " s, "
     << kRange;
  throw ModelError(os.str());
}

}  // namespace fabricsim
