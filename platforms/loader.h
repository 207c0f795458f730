// Reads a platform file: fabricsim's own YAML schema (docs/platforms.md) or
// an ASTRA-sim network file (`topology: [ Ring ]`, `npus_count`, `bandwidth`,
// `latency`), told apart by their keys. Every error names the file, the line
// and the problem.
#pragma once

#include <string>

#include "platforms/platform_spec.h"

namespace fabricsim {

PlatformSpec load_platform(const std::string& path);

/// ASTRA-sim network file, read as ASTRA-sim reads it: bandwidth in its
/// "GB/s" (2^30 bytes per second), latency in ns, and ideal endpoints (no
/// per-message overhead, no packet headers), so closed forms hold on it.
PlatformSpec load_astra_network(const std::string& path);

}  // namespace fabricsim
