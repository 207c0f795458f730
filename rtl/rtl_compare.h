// Comparing an RTL result with the reference arithmetic, in the terms an RTL
// designer debugs in: which output beat, which lane, and both values. Plain
// C++ (no SystemC, no Verilator), shared by the transactor and the unit bench.
#pragma once

#include <cstdint>
#include <string>

#include "tlm/data_type.h"

namespace fabricsim {

/// The first element where `rtl` and `reference` differ, as "beat B, lane L
/// (element E): RTL <value>, reference <value>", or "" when every element
/// agrees. `beat_bytes`: the RTL's beat width in bytes.
std::string first_rtl_difference(const std::uint8_t* rtl, const std::uint8_t* reference, std::uint64_t bytes,
                                 DataType type, unsigned beat_bytes);

}  // namespace fabricsim
