#include "platforms/generators.h"

#include <stdexcept>
#include <string>

namespace fabricsim {

int add_nics(FabricSpec& f, int n) {
  for (int r = 0; r < n; ++r) {
    FabricNode node;
    node.kind = FabricNode::Kind::kNic;
    node.name = "npu" + std::to_string(r);
    node.npu = r;
    f.nodes.push_back(node);
  }
  return n;
}

FabricSpec make_ring(int n, bool bidirectional, const Link::Params& link) {
  if (n < 1) throw std::invalid_argument("a ring needs at least one NPU");
  FabricSpec f;
  f.topology = bidirectional ? "ring" : "unidirectional_ring";
  add_nics(f, n);
  f.routing = Routing::kDimensionOrder;
  f.dims = {n};
  f.wrap = {true};
  for (int r = 0; r < n; ++r) f.nodes[static_cast<std::size_t>(r)].coords = {r};
  if (n == 1) return f;
  if (n == 2) {  // two NPUs: one link between them
    f.edges.push_back(FabricEdge{0, 1, link, 0});
    return f;
  }
  // Each edge joins r and r+1. A unidirectional ring uses only the r -> r+1
  // direction of each (the builder still makes both directions).
  for (int r = 0; r < n; ++r) f.edges.push_back(FabricEdge{r, (r + 1) % n, link, 0});
  f.forward_only = !bidirectional;
  return f;
}

FabricSpec make_fully_connected(int n, const Link::Params& link) {
  FabricSpec f;
  f.topology = "fully_connected";
  add_nics(f, n);
  f.routing = Routing::kShortestPath;
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) f.edges.push_back(FabricEdge{a, b, link, -1});
  }
  return f;
}

FabricSpec make_single_switch(int n, const Link::Params& link, Tick switch_latency) {
  FabricSpec f;
  f.topology = "switch";
  add_nics(f, n);
  FabricNode sw;
  sw.kind = FabricNode::Kind::kSwitch;
  sw.name = "switch0";
  sw.hop_latency = switch_latency;
  sw.level = 1;
  f.nodes.push_back(sw);
  f.routing = Routing::kUpDown;
  for (int r = 0; r < n; ++r) f.edges.push_back(FabricEdge{r, n, link, -1});
  return f;
}

}  // namespace fabricsim
