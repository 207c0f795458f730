// ASTRA-sim's system configuration file (`--system FILE`), mapped onto
// fabricsim's settings so ASTRA-sim users can run their own files.
#pragma once

#include <string>
#include <vector>

#include "platforms/assembly/platform_spec.h"
#include "platforms/assembly/yaml_input.h"

namespace fabricsim {

/// Applies the file to `spec`. Keys fabricsim does not model are listed in
/// `notes` (once each). Throws InputError naming the file and key.
/// `overrides` (--set system.KEY=VALUE, given here without "system.") set
/// top-level keys before the file is read; an error at one names the flag, and
/// a key fabricsim does not know is refused rather than ignored.
void apply_astra_system(const std::string& path, PlatformSpec& spec, std::vector<std::string>& notes,
                        const std::vector<YamlOverride>& overrides = {});

/// ASTRA-sim's remote-memory file (`--remote-memory FILE`): memory-type
/// NO_MEMORY_EXPANSION, PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION
/// (num-nodes, num-npus-per-node) or MEMORY_POOL, remote-mem-latency (ns) and
/// remote-mem-bw (GB/s). Adds a fabric of links that do not limit: one switch
/// joining every NPU and the memories, so one request alone takes
/// latency + size / bandwidth and concurrent requests to a shared memory
/// share its bandwidth.
void apply_astra_remote_memory(const std::string& path, PlatformSpec& spec, std::vector<std::string>& notes);

}  // namespace fabricsim
