// ASTRA-sim's network file (`topology: [ Ring, Switch ]`, `npus_count`,
// `bandwidth`, `latency`), read as ASTRA-sim reads it, apart from our own
// platform schema (loader.h), which hands such files here.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "platforms/assembly/platform_spec.h"

namespace fabricsim {

struct YamlDocument;

/// Does this YAML document look like an ASTRA-sim network file?
bool is_astra_network(const YAML::Node& root);

/// ASTRA-sim network file, read as ASTRA-sim reads it: bandwidth in its
/// "GB/s" (2^30 bytes per second), latency in ns, and ideal endpoints (no
/// per-message overhead, no packet headers), so closed forms hold on it.
PlatformSpec load_astra_network(const std::string& path);
/// The same, from a document already loaded (with any --set applied).
PlatformSpec read_astra_network(const YamlDocument& doc);

}  // namespace fabricsim
