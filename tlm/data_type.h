// Element types and reduction operations: plain C++, no SystemC, so that
// code built without it (the RTL bench) shares them.
#pragma once

#include <cstdint>

namespace fabricsim {

/// Element types that reductions understand.
enum class DataType : std::uint8_t { kFp32, kFp16, kBf16, kInt32 };
enum class ReduceOp : std::uint8_t { kSum, kMin, kMax };
inline unsigned element_bytes(DataType t) {
  return t == DataType::kFp16 || t == DataType::kBf16 ? 2 : 4;
}

}  // namespace fabricsim
