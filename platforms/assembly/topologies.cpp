#include "platforms/assembly/topologies.h"

#include "platforms/assembly/topology_generators.h"

namespace fabricsim {

namespace {

std::vector<int> dims_of(const TopologyRequest& r, const std::string& name) {
  const YAML::Node d = r.in.required(r.node, "dims", "a " + name + " fabric");
  const auto dims = whole_number_list(r.in, d, "dims", limits::kMaxNpus);
  if (dims.size() < 2 || dims.size() > 3) r.in.fail(d, "a " + name + " has 2 or 3 dimensions");
  return dims;
}

FatTreeShape fat_tree_shape(const TopologyRequest& r) {
  const YamlInput& in = r.in;
  FatTreeShape shape;
  constexpr std::uint64_t kPorts = 1 << 16;  // ports (or rails) per switch, generously
  shape.levels = static_cast<int>(in.count(r.node, "levels", 2, 1, 3));
  shape.leaf_down = static_cast<int>(in.count(r.node, "leaf_down", 16, 1, kPorts));
  shape.leaf_up = static_cast<int>(in.count(r.node, "leaf_up", static_cast<std::uint64_t>(shape.leaf_down), 1, kPorts));
  shape.pod_leaves = static_cast<int>(in.count(r.node, "pod_leaves", 16, 1, kPorts));
  shape.agg_up = static_cast<int>(in.count(r.node, "agg_up", static_cast<std::uint64_t>(shape.pod_leaves), 1, kPorts));
  shape.rails = static_cast<int>(in.count(r.node, "rails", 1, 1, kPorts));
  return shape;
}

}  // namespace

// The registry: one entry per topology (its generator is in generators.cpp).
const std::vector<TopologyKind>& topology_kinds() {
  static const std::vector<TopologyKind> kinds = {
      {"ring",
       "a bidirectional ring, routed the shorter way",
       {},
       [](const TopologyRequest& r) { return make_ring(r.ranks, true, r.link); }},
      {"unidirectional_ring",
       "a ring whose traffic only goes to rank + 1",
       {},
       [](const TopologyRequest& r) { return make_ring(r.ranks, false, r.link); }},
      {"fully_connected",
       "a link per pair of NPUs",
       {},
       [](const TopologyRequest& r) { return make_fully_connected(r.ranks, r.link); }},
      {"switch",
       "one switch (or, with lanes, one per entry, each NPU bonded to switch j by lanes[j] links)",
       {"lanes"},
       [](const TopologyRequest& r) {
         if (!r.node["lanes"]) return make_single_switch(r.ranks, r.link, r.switch_params.hop_latency);
         return make_switch_planes(r.ranks, whole_number_list(r.in, r.node["lanes"], "lanes", limits::kMaxNpus), r.link,
                                   r.switch_params.hop_latency);
       }},
      {"torus",
       "a 2-D or 3-D torus, dimension-order routed",
       {"dims"},
       [](const TopologyRequest& r) { return make_torus(r.ranks, dims_of(r, "torus"), true, r.link); }},
      {"mesh",
       "a 2-D or 3-D mesh, dimension-order routed",
       {"dims"},
       [](const TopologyRequest& r) { return make_torus(r.ranks, dims_of(r, "mesh"), false, r.link); }},
      {"fat_tree",
       "leaf-spine (2 levels) or pods with a core (3), rail-optimized with rails > 1",
       {"levels", "leaf_down", "leaf_up", "pod_leaves", "agg_up", "rails"},
       [](const TopologyRequest& r) {
         return make_fat_tree(r.ranks, fat_tree_shape(r), r.link, r.uplink, r.switch_params.hop_latency);
       }},
      {"netlist", "switches and links as listed", {"switches", "links"}, read_netlist},
  };
  return kinds;
}

const TopologyKind* find_topology(const std::string& name) {
  for (const TopologyKind& k : topology_kinds()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string topology_names() {
  std::string out;
  for (const TopologyKind& k : topology_kinds()) out += (out.empty() ? "" : ", ") + k.name;
  return out;
}

}  // namespace fabricsim
