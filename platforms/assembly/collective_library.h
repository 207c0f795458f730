// The collective library a platform names (`collectives.library: nccl`):
// its tuner's tables read from a library file (platforms/libraries/), the
// job's settings (`collectives.nccl`), and the machine as NCCL's topology
// detection would see it, read off the platform's netlist. The tuner itself
// is models/collectives/nccl_tuner.h; docs/collectives.md, "The collective
// library", says how each value is found.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "models/collectives/nccl_tuner.h"
#include "platforms/assembly/yaml_input.h"

namespace fabricsim {

struct PlatformSpec;

/// `collectives.nccl`: the settings (NcclSettings::table()) and `tuning`, the
/// library file (a path relative to the platform file).
struct NcclSection {
  NcclSettings settings;
  NcclTuning tuning;
  std::string tuning_file;
};
NcclSection read_nccl_section(const YamlInput& platform, const YAML::Node& node);

/// A library file: every table of NcclTuning, checked (file:line on error).
NcclTuning read_nccl_tuning(const std::string& path);

/// NCCL's view of the machine: a node is every dimension but the top one
/// (all NPUs on a platform of one); its GPU links are those of the first
/// fabric joining NPU 0 to NPU 1, its network the first fabric joining
/// NPU 0 to the next node (else the first other fabric NPU 0 is on).
NcclMachine nccl_machine(const PlatformSpec& spec);

}  // namespace fabricsim
