#include "rtl/rtl_compare.h"

#include <cstring>
#include <sstream>

#include "tlm/reduction.h"

namespace fabricsim {

std::string first_rtl_difference(const std::uint8_t* rtl, const std::uint8_t* reference, std::uint64_t bytes,
                                 DataType type, unsigned beat_bytes) {
  const unsigned eb = element_bytes(type);
  const std::uint64_t per_beat = beat_bytes / eb;
  for (std::uint64_t i = 0; i < bytes / eb; ++i) {
    if (std::memcmp(rtl + i * eb, reference + i * eb, eb) == 0) continue;
    std::ostringstream os;
    os << "beat " << i / per_beat << ", lane " << i % per_beat << " (element " << i << "): RTL "
       << element_text(rtl, i, type) << ", reference " << element_text(reference, i, type);
    return os.str();
  }
  return "";
}

}  // namespace fabricsim
