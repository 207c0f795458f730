// Reads a platform file: fabricsim's own YAML schema (docs/platforms.md) or
// an ASTRA-sim network file (`topology: [ Ring ]`, `npus_count`, `bandwidth`,
// `latency`, read by astra_network.h), told apart by their keys. Every error names the file, the line
// and the problem.
#pragma once

#include <string>

#include "platforms/platform_spec.h"

namespace fabricsim {

PlatformSpec load_platform(const std::string& path);

}  // namespace fabricsim
