// SHA-256 (FIPS 180-4), for the provenance of outputs: which input files,
// byte for byte, a result came from.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace fabricsim {

/// Incremental: update() with the bytes in order, then hex() once.
class Sha256 {
 public:
  void update(const char* data, std::size_t size);
  std::string hex();

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<unsigned char, 64> buffer_{};
  std::size_t used_ = 0;
  std::uint64_t bytes_ = 0;
};

/// SHA-256 of `bytes`, as 64 hex digits.
std::string sha256_hex(const std::string& bytes);

}  // namespace fabricsim
