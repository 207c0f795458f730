// libFuzzer target: the platform loader (our YAML and ASTRA-sim's network
// format) on arbitrary text. Bad input must be an InputError, nothing else.
#include "fuzz_input.h"
#include "platforms/assembly/loader.h"

using namespace fabricsim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = fuzz::write_input(data, size, ".yaml");
  try {
    const PlatformSpec spec = load_platform(path);
    (void)spec;
  } catch (const InputError&) {
  } catch (const std::invalid_argument&) {  // also bad input to the command (exit 2)
  }
  return 0;
}
