// Reads a platform file: fabricsim's own YAML schema (docs/platforms.md) or
// an ASTRA-sim network file (`topology: [ Ring ]`, `npus_count`, `bandwidth`,
// `latency`, read by astra_network.h), told apart by their keys. Every error names the file, the line
// (or the --set flag that gave the value) and the problem.
#pragma once

#include <string>
#include <vector>

#include "platforms/assembly/platform_spec.h"
#include "platforms/assembly/yaml_input.h"

namespace fabricsim {

/// `overrides` (--set) are applied to the file's tree before it is read, so
/// each value gets the checks the file would give it.
PlatformSpec load_platform(const std::string& path, const std::vector<YamlOverride>& overrides = {});

}  // namespace fabricsim
