// SHA-256 (FIPS 180-4), for the provenance of outputs: which input files,
// byte for byte, a result came from.
#pragma once

#include <string>

namespace fabricsim {

/// SHA-256 of `bytes`, as 64 hex digits.
std::string sha256_hex(const std::string& bytes);

}  // namespace fabricsim
