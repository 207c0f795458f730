// The topologies a platform file's fabric entry can name, by name: the
// registry the loader reads `topology:` through. A topology is a generator
// (topology_generators.h) and one entry in topology_kinds() (topologies.cpp) naming its
// own keys; docs/platforms.md shows a worked example.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/switch/switch.h"
#include "platforms/assembly/platform_spec.h"
#include "platforms/assembly/yaml_input.h"

namespace fabricsim {

/// What a topology is built from: its fabric entry (for its own keys), the
/// NPUs of this group, and the fabric's link, uplink, switch and reduction
/// unit settings.
struct TopologyRequest {
  const YamlInput& in;
  const YAML::Node& node;
  const std::vector<int>& ranks;
  const LinkParams& link;
  const LinkParams& uplink;
  const Switch::Params& switch_params;
  const std::optional<ReductionSpec>& reduction;
};

struct TopologyKind {
  std::string name;
  std::string description;
  std::vector<std::string> keys;  // keys of a fabric entry only this topology reads
  /// Builds the fabric; std::invalid_argument for a shape it cannot make.
  std::function<FabricSpec(const TopologyRequest&)> make;
};

const std::vector<TopologyKind>& topology_kinds();
/// The kind named `name`, or null.
const TopologyKind* find_topology(const std::string& name);
/// "ring, unidirectional_ring, ...": for messages.
std::string topology_names();

/// A netlist fabric entry (loader.cpp: it shares the loader's readers of
/// switches, reduction units and memories).
FabricSpec read_netlist(const TopologyRequest& r);

}  // namespace fabricsim
