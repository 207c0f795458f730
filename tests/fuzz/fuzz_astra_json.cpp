// libFuzzer target: ASTRA-sim's system and remote-memory JSON files applied
// to a small platform. Bad input must be an InputError, nothing else.
#include "fuzz_input.h"
#include "platforms/assembly/topology_generators.h"
#include "platforms/importers/astra_system.h"

using namespace fabricsim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = fuzz::write_input(data, size, ".json");
  for (const bool system : {true, false}) {
    PlatformSpec spec;
    spec.npus = 8;
    spec.fabrics.push_back(make_ring({0, 1, 2, 3, 4, 5, 6, 7}, true, LinkParams{}));
    std::vector<std::string> notes;
    try {
      if (system) {
        apply_astra_system(path, spec, notes);
      } else {
        apply_astra_remote_memory(path, spec, notes);
      }
    } catch (const InputError&) {
    } catch (const std::invalid_argument&) {  // also bad input to the command (exit 2)
    }
  }
  return 0;
}
