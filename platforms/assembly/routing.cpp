#include "platforms/assembly/routing.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>

namespace fabricsim {

std::vector<std::vector<PortInfo>> port_map(const FabricSpec& f) {
  std::vector<std::vector<PortInfo>> ports(f.nodes.size());
  for (std::size_t e = 0; e < f.edges.size(); ++e) {
    const FabricEdge& edge = f.edges[e];
    ports[static_cast<std::size_t>(edge.a)].push_back(PortInfo{static_cast<int>(e), edge.b});
    ports[static_cast<std::size_t>(edge.b)].push_back(PortInfo{static_cast<int>(e), edge.a});
  }
  return ports;
}

namespace {

bool has_switches(const FabricSpec& f) {
  for (const auto& n : f.nodes) {
    if (n.kind == FabricNode::Kind::kSwitch) return true;
  }
  return false;
}

/// Whether frames for others may pass through node v: switches always, NICs
/// on fabrics without switches, memories never.
bool forwards_through(const FabricSpec& f, int v, bool nics_forward) {
  const auto k = f.nodes[static_cast<std::size_t>(v)].kind;
  return k == FabricNode::Kind::kSwitch || (k == FabricNode::Kind::kNic && nics_forward);
}

/// Node index of the endpoint (NIC or memory) at each fabric address (-1
/// where there is none).
std::vector<int> nic_of_address(const FabricSpec& f) {
  std::size_t count = 0;
  for (const auto& n : f.nodes) {
    if (n.kind != FabricNode::Kind::kSwitch) count = std::max<std::size_t>(count, n.address + 1);
  }
  std::vector<int> nic(count, -1);
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    if (f.nodes[i].kind != FabricNode::Kind::kSwitch) nic[f.nodes[i].address] = static_cast<int>(i);
  }
  return nic;
}

void breadth_first(const FabricSpec& f, const std::vector<std::vector<PortInfo>>& ports, bool keep_all,
                   const RouteSink& sink) {
  const bool nics_forward = !has_switches(f);
  const auto nics = nic_of_address(f);
  const std::size_t nn = f.nodes.size();
  std::vector<int> dist(nn);
  std::vector<std::uint16_t> next;
  for (std::size_t rank = 0; rank < nics.size(); ++rank) {  // rank: the destination's address
    const int dst = nics[rank];
    if (dst < 0) continue;
    std::fill(dist.begin(), dist.end(), -1);
    dist[static_cast<std::size_t>(dst)] = 0;
    std::deque<int> queue{dst};
    while (!queue.empty()) {
      const int v = queue.front();
      queue.pop_front();
      // Frames reach v's neighbours only through nodes that forward.
      if (v != dst && !forwards_through(f, v, nics_forward)) continue;
      for (const PortInfo& p : ports[static_cast<std::size_t>(v)]) {
        if (dist[static_cast<std::size_t>(p.peer)] < 0) {
          dist[static_cast<std::size_t>(p.peer)] = dist[static_cast<std::size_t>(v)] + 1;
          queue.push_back(p.peer);
        }
      }
    }
    for (std::size_t u = 0; u < nn; ++u) {
      if (static_cast<int>(u) == dst || dist[u] < 0) continue;
      next.clear();
      for (std::size_t p = 0; p < ports[u].size(); ++p) {
        const int v = ports[u][p].peer;
        const bool forwards = v == dst || forwards_through(f, v, nics_forward);
        if (forwards && dist[static_cast<std::size_t>(v)] == dist[u] - 1) {
          next.push_back(static_cast<std::uint16_t>(p));
          if (!keep_all) break;
        }
      }
      if (!next.empty()) sink(static_cast<int>(u), static_cast<Address>(rank), next);
    }
  }
}

void dimension_order(const FabricSpec& f, const std::vector<std::vector<PortInfo>>& ports, const RouteSink& sink) {
  const auto nics = nic_of_address(f);
  const DimensionOrder dor = dimension_order_of(f);
  for (std::size_t u = 0; u < f.nodes.size(); ++u) {
    const Address self = f.nodes[u].address;
    const auto step_ports = dimension_ports(f, ports, static_cast<int>(u));
    for (std::size_t rank = 0; rank < nics.size(); ++rank) {
      if (nics[rank] < 0 || static_cast<int>(u) == nics[rank]) continue;
      const auto [d, dir] = dor.step(self, static_cast<Address>(rank));
      const auto& p = step_ports[static_cast<std::size_t>(d)];
      const int port = p[dir > 0 ? 1 : 0] >= 0 ? p[dir > 0 ? 1 : 0] : p[dir > 0 ? 0 : 1];
      if (port >= 0) sink(static_cast<int>(u), static_cast<Address>(rank), {static_cast<std::uint16_t>(port)});
    }
  }
}

}  // namespace

DimensionOrder dimension_order_of(const FabricSpec& f) {
  DimensionOrder d;
  d.dims = f.dims;
  d.wrap = f.wrap;
  d.forward_only = f.forward_only;
  return d;
}

std::vector<std::array<int, 2>> dimension_ports(const FabricSpec& f, const std::vector<std::vector<PortInfo>>& ports,
                                                int u) {
  const auto& cu = f.nodes[static_cast<std::size_t>(u)].coords;
  std::vector<std::array<int, 2>> out(f.dims.size(), std::array<int, 2>{-1, -1});
  const auto& mine = ports[static_cast<std::size_t>(u)];
  for (std::size_t p = 0; p < mine.size(); ++p) {
    const auto& cv = f.nodes[static_cast<std::size_t>(mine[p].peer)].coords;
    for (std::size_t d = 0; d < f.dims.size(); ++d) {
      if (cu[d] == cv[d]) continue;
      const int n = f.dims[d];
      if ((cu[d] + 1) % n == cv[d] && out[d][1] < 0) out[d][1] = static_cast<int>(p);
      if ((cu[d] - 1 + n) % n == cv[d] && out[d][0] < 0) out[d][0] = static_cast<int>(p);
    }
  }
  return out;
}

namespace {

/// Destination routing (load_balancing: destination) on a fat tree: of a
/// destination's equal-cost up ports, a level-l switch takes the one at
/// (t / m_l) mod n, t the destination's place in the tree (its leaf's rank x
/// the most endpoints a leaf has + its place among its leaf's endpoints),
/// m_l the product of the up-port counts below level l: d-mod-k, as
/// InfiniBand's subnet manager routes a fat tree, so the endpoints of one leaf
/// reach one another leaf over distinct up links.
RouteSink destination_routes(const FabricSpec& f, const std::vector<std::vector<PortInfo>>& ports,
                             const std::vector<int>& nics, const RouteSink& sink) {
  const auto is_switch = [&](int v) { return f.nodes[static_cast<std::size_t>(v)].kind == FabricNode::Kind::kSwitch; };
  // Endpoints are NICs and memories; a switch's reduction unit is not one
  // (it would make a spine that hosts one count as a leaf).
  const auto is_endpoint = [&](int v) {
    const auto k = f.nodes[static_cast<std::size_t>(v)].kind;
    return k == FabricNode::Kind::kNic || k == FabricNode::Kind::kMemory;
  };
  // Leaves in node order, each endpoint's place among its leaf's.
  std::vector<int> leaf_rank(f.nodes.size(), -1), down_count(f.nodes.size(), 0);
  std::vector<double> place(nics.size(), 0);
  int leaves = 0, most_down = 1;
  for (std::size_t v = 0; v < f.nodes.size(); ++v) {
    if (!is_switch(static_cast<int>(v))) continue;
    for (const PortInfo& p : ports[v]) {
      if (!is_endpoint(p.peer)) continue;
      if (leaf_rank[v] < 0) leaf_rank[v] = leaves++;
      most_down = std::max(most_down, ++down_count[v]);
    }
  }
  std::vector<int> seen(f.nodes.size(), 0);
  std::vector<int> leaf_of(nics.size(), -1);
  for (std::size_t v = 0; v < f.nodes.size(); ++v) {
    if (!is_switch(static_cast<int>(v)) || leaf_rank[v] < 0) continue;
    for (const PortInfo& p : ports[v]) {
      if (!is_endpoint(p.peer)) continue;
      const Address a = f.nodes[static_cast<std::size_t>(p.peer)].address;
      if (a < nics.size() && leaf_of[a] < 0) {
        leaf_of[a] = static_cast<int>(v);
        place[a] = static_cast<double>(leaf_rank[v]) * most_down + seen[v]++;
      }
    }
  }
  // Up ports per level: the most any switch of the level has.
  int top = 0;
  for (const auto& n : f.nodes) top = std::max(top, n.kind == FabricNode::Kind::kSwitch ? n.level : 0);
  std::vector<double> up(static_cast<std::size_t>(top) + 1, 1);
  for (std::size_t v = 0; v < f.nodes.size(); ++v) {
    if (!is_switch(static_cast<int>(v))) continue;
    const int l = f.nodes[v].level;
    double n = 0;
    for (const PortInfo& p : ports[v]) n += is_switch(p.peer) && f.nodes[static_cast<std::size_t>(p.peer)].level > l;
    up[static_cast<std::size_t>(l)] = std::max(up[static_cast<std::size_t>(l)], n);
  }
  std::vector<double> below(up.size(), 1);  // m_l
  for (std::size_t l = 1; l < up.size(); ++l) below[l] = below[l - 1] * up[l - 1];
  return [&f, place, below, sink](int node, Address address, const std::vector<std::uint16_t>& candidates) {
    if (candidates.size() < 2 || f.nodes[static_cast<std::size_t>(node)].kind != FabricNode::Kind::kSwitch) {
      return sink(node, address, candidates);
    }
    const double m = below[static_cast<std::size_t>(f.nodes[static_cast<std::size_t>(node)].level)];
    const auto pick =
        static_cast<std::size_t>(std::fmod(std::floor(place[address] / m), static_cast<double>(candidates.size())));
    sink(node, address, {candidates[pick]});
  };
}

}  // namespace

void compute_routes(const FabricSpec& f, const std::vector<std::vector<PortInfo>>& ports, const RouteSink& given) {
  const auto nics = nic_of_address(f);
  const RouteSink sink = f.transport.load_balancing == PortChoice::kDestination && f.routing == Routing::kUpDown
                             ? destination_routes(f, ports, nics, given)
                             : given;
  // Reduction units need routes only to and from the members they serve
  // (units of different switches may not reach each other): the check below
  // is over NICs and memories.
  const auto checked = [&](std::size_t address) {
    return nics[address] >= 0 &&
           f.nodes[static_cast<std::size_t>(nics[address])].kind != FabricNode::Kind::kReductionUnit;
  };
  // Count, per endpoint, the checked destinations it has a route to.
  std::vector<std::size_t> reached(f.nodes.size(), 0);
  const RouteSink counting = [&](int node, Address rank, const std::vector<std::uint16_t>& p) {
    if (checked(rank)) ++reached[static_cast<std::size_t>(node)];
    sink(node, rank, p);
  };
  switch (f.routing) {
    case Routing::kShortestPath:
      breadth_first(f, ports, false, counting);
      break;
    case Routing::kUpDown:
      breadth_first(f, ports, true, counting);
      break;
    case Routing::kDimensionOrder:
      dimension_order(f, ports, counting);
      break;
  }
  std::size_t nic_count = 0;
  for (std::size_t a = 0; a < nics.size(); ++a) nic_count += checked(a) ? 1 : 0;
  for (std::size_t a = 0; a < nics.size(); ++a) {
    if (!checked(a) || reached[static_cast<std::size_t>(nics[a])] + 1 == nic_count) continue;
    // Name the first destination it cannot reach.
    std::vector<bool> ok(nics.size(), false);
    breadth_first(f, ports, false, [&](int node, Address rank, const std::vector<std::uint16_t>&) {
      if (node == nics[a]) ok[rank] = true;
    });
    const auto what = [&](std::size_t address) {
      const FabricNode& n = f.nodes[static_cast<std::size_t>(nics[address])];
      if (n.kind == FabricNode::Kind::kMemory) return "memory \"" + n.name + "\"";
      return "NPU " + std::to_string(n.npu);
    };
    for (std::size_t b = 0; b < nics.size(); ++b) {
      if (b != a && checked(b) && !ok[b]) {
        throw InputError("fabric \"" + f.name + "\": " + what(b) + " is unreachable from " + what(a));
      }
    }
    throw InputError("fabric \"" + f.name + "\": the routes from " + what(a) + " are incomplete");
  }
}

std::vector<std::vector<int>> route_hops(const FabricSpec& f) {
  const auto ports = port_map(f);
  const auto nics = nic_of_address(f);
  // next[u][rank] = first port of u towards rank
  std::vector<std::vector<int>> next(f.nodes.size(), std::vector<int>(nics.size(), -1));
  compute_routes(f, ports, [&](int node, Address address, const std::vector<std::uint16_t>& p) {
    next[static_cast<std::size_t>(node)][address] = p.front();
  });
  std::vector<std::vector<int>> hops(nics.size(), std::vector<int>(nics.size(), 0));
  for (std::size_t a = 0; a < nics.size(); ++a) {
    for (std::size_t b = 0; b < nics.size(); ++b) {
      if (a == b || nics[a] < 0 || nics[b] < 0) continue;
      int u = nics[a], h = 0;
      while (u != nics[b]) {
        const int p = next[static_cast<std::size_t>(u)][b];
        if (p < 0 || ++h > static_cast<int>(f.nodes.size())) {
          throw InputError("fabric \"" + f.name + "\": routing loop or dead end from NPU " + std::to_string(a) +
                           " to NPU " + std::to_string(b));
        }
        u = ports[static_cast<std::size_t>(u)][static_cast<std::size_t>(p)].peer;
      }
      hops[a][b] = h;
    }
  }
  return hops;
}

}  // namespace fabricsim
