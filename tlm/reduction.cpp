#include "tlm/reduction.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace fabricsim {

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t man = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((man & 0x400u) == 0) {
        man <<= 1;
        --exp;
      }
      man &= 0x3ffu;
      bits = sign | (exp << 23) | (man << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint16_t float_to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t exp = (x >> 23) & 0xffu;
  std::uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow to infinity
  if (e <= 0) {
    if (e < -10) return sign;  // underflow to zero
    man |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half_man = man >> shift;
    const std::uint32_t rem = man & ((1u << shift) - 1);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_man & 1u))) ++half_man;
    return static_cast<std::uint16_t>(sign | half_man);
  }
  std::uint32_t h = (static_cast<std::uint32_t>(e) << 10) | (man >> 13);
  const std::uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: still right
  return static_cast<std::uint16_t>(sign | h);
}

std::uint16_t float_to_bf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

namespace {
// Floating-point results: every NaN becomes the canonical quiet NaN, as the
// RTL unit's (rtl/reduction_pkg.sv) do, whatever NaN the host's arithmetic made.
float combine_float(float a, float b, ReduceOp op) {
  const float r = combine(a, b, op);
  if (std::isnan(r)) {
    const std::uint32_t canonical = 0x7fc00000u;
    float f;
    std::memcpy(&f, &canonical, 4);
    return f;
  }
  return r;
}
std::int32_t combine_int(std::int32_t a, std::int32_t b, ReduceOp op) {
  if (op == ReduceOp::kSum) {  // wrap around, as hardware does
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
  }
  return combine(a, b, op);
}
}  // namespace

void reduce_into(std::uint8_t* dst, const std::uint8_t* src, std::uint64_t bytes, DataType type, ReduceOp op) {
  const unsigned eb = element_bytes(type);
  const std::uint64_t n = bytes / eb;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint8_t* d = dst + i * eb;
    const std::uint8_t* s = src + i * eb;
    switch (type) {
      case DataType::kFp32: {
        float a, b;
        std::memcpy(&a, d, 4);
        std::memcpy(&b, s, 4);
        a = combine_float(a, b, op);
        std::memcpy(d, &a, 4);
        break;
      }
      case DataType::kInt32: {
        std::int32_t a, b;
        std::memcpy(&a, d, 4);
        std::memcpy(&b, s, 4);
        a = combine_int(a, b, op);
        std::memcpy(d, &a, 4);
        break;
      }
      case DataType::kFp16: {
        std::uint16_t a, b;
        std::memcpy(&a, d, 2);
        std::memcpy(&b, s, 2);
        a = float_to_half(combine_float(half_to_float(a), half_to_float(b), op));
        std::memcpy(d, &a, 2);
        break;
      }
      case DataType::kBf16: {
        std::uint16_t a, b;
        std::memcpy(&a, d, 2);
        std::memcpy(&b, s, 2);
        a = float_to_bf16(combine_float(bf16_to_float(a), bf16_to_float(b), op));
        std::memcpy(d, &a, 2);
        break;
      }
    }
  }
  const std::uint64_t stray = bytes - n * eb;
  if (stray) std::memcpy(dst + n * eb, src + n * eb, stray);
}

const char* to_string(DataType t) {
  switch (t) {
    case DataType::kFp32:
      return "fp32";
    case DataType::kFp16:
      return "fp16";
    case DataType::kBf16:
      return "bf16";
    case DataType::kInt32:
      return "int32";
  }
  return "?";
}

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kMax:
      return "max";
  }
  return "?";
}

bool parse_data_type(const std::string& s, DataType& out) {
  for (DataType t : {DataType::kFp32, DataType::kFp16, DataType::kBf16, DataType::kInt32}) {
    if (s == to_string(t)) {
      out = t;
      return true;
    }
  }
  return false;
}

bool parse_reduce_op(const std::string& s, ReduceOp& out) {
  for (ReduceOp o : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
    if (s == to_string(o)) {
      out = o;
      return true;
    }
  }
  return false;
}

std::string element_text(const std::uint8_t* buf, std::uint64_t index, DataType type) {
  std::ostringstream os;
  const std::uint8_t* p = buf + index * element_bytes(type);
  switch (type) {
    case DataType::kFp32: {
      float f;
      std::memcpy(&f, p, 4);
      std::uint32_t u;
      std::memcpy(&u, p, 4);
      os << f << " (0x" << std::hex << u << ")";
      break;
    }
    case DataType::kInt32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      os << v;
      break;
    }
    case DataType::kFp16: {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      os << half_to_float(h) << " (0x" << std::hex << h << ")";
      break;
    }
    case DataType::kBf16: {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      os << bf16_to_float(h) << " (0x" << std::hex << h << ")";
      break;
    }
  }
  return os.str();
}

}  // namespace fabricsim
