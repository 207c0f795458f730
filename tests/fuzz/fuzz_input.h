// Shared by the fuzz targets: our readers take paths, so each input is
// written to one scratch file per process. SystemC's library calls sc_main
// from its own main(), which libFuzzer replaces; the symbol must exist.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fabricsim::fuzz {

inline const std::string& write_input(const std::uint8_t* data, std::size_t size, const char* suffix) {
  static const std::string path = [&] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp ? tmp : "/tmp") + "/fabricsim-fuzz-" + std::to_string(::getpid()) + suffix;
  }();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}

}  // namespace fabricsim::fuzz

extern "C" int sc_main(int, char**) {
  return 0;
}
