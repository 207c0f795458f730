// Element arithmetic for reductions, shared by the NPUs' collective engines
// and the switches' reduction units so that both compute the same bits.
//
// fp32 arithmetic is IEEE binary32, round to nearest even, subnormals kept;
// min(a, b) = b < a ? b : a and max(a, b) = a < b ? b : a; every NaN result is
// the canonical quiet NaN 0x7fc00000. fp16 and bf16 are widened to fp32,
// combined, and rounded back to nearest even once per operation. int32 sums
// wrap. The RTL unit (rtl/reduction_pkg.sv) computes the same bits. Results
// depend on the order in which contributions are combined; every caller
// documents its order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "tlm/data_type.h"

namespace fabricsim {

float half_to_float(std::uint16_t h);
std::uint16_t float_to_half(float f);
inline float bf16_to_float(std::uint16_t b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
std::uint16_t float_to_bf16(float f);

/// op(a, b) on two values of one arithmetic type, as every element type is
/// combined once widened (min and max as std::min and std::max).
template <typename T>
T combine(T a, T b, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return a + b;
    case ReduceOp::kMin:
      return std::min(a, b);
    case ReduceOp::kMax:
      return std::max(a, b);
  }
  return a;
}

/// dst[i] = op(dst[i], src[i]) for `bytes / element_bytes(type)` elements.
/// Stray bytes past the last whole element are copied from src.
void reduce_into(std::uint8_t* dst, const std::uint8_t* src, std::uint64_t bytes, DataType type, ReduceOp op);

const char* to_string(DataType t);
const char* to_string(ReduceOp op);
bool parse_data_type(const std::string& s, DataType& out);
bool parse_reduce_op(const std::string& s, ReduceOp& out);
/// The value of element `index` of a buffer, for error messages.
std::string element_text(const std::uint8_t* buf, std::uint64_t index, DataType type);

}  // namespace fabricsim
