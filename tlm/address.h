// Fabric addresses, apart from the protocol so that parameter structs can
// name them without SystemC.
#pragma once

#include <cstdint>

namespace fabricsim {

/// A fabric endpoint's address: every NIC port pair, reduction unit and memory
/// node on a fabric has one, assigned by the platform builder.
using Address = std::uint32_t;
constexpr Address kNoAddress = 0xffffffffu;

}  // namespace fabricsim
