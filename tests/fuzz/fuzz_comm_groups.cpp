// libFuzzer target: the process-group (comm-groups) JSON reader.
#include <stdexcept>

#include "fuzz_input.h"
#include "traces/workload/trace_workload.h"

using namespace fabricsim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = fuzz::write_input(data, size, ".json");
  GroupTable groups(16);
  try {
    groups.load_json(path);
  } catch (const std::runtime_error&) {  // the reader's documented error
  }
  return 0;
}
