#include "platforms/assembly/topology_generators.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

namespace fabricsim {

std::vector<int> iota_ranks(int n, int first) {
  std::vector<int> r(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = first + i;
  return r;
}

void add_nics(FabricSpec& f, const std::vector<int>& ranks) {
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    FabricNode node;
    node.kind = FabricNode::Kind::kNic;
    node.name = "npu" + std::to_string(ranks[i]);
    node.npu = ranks[i];
    node.address = static_cast<Address>(i);
    f.nodes.push_back(node);
  }
}

namespace {

int add_switch(FabricSpec& f, const std::string& name, Tick latency, int level) {
  FabricNode sw;
  sw.kind = FabricNode::Kind::kSwitch;
  sw.name = name;
  sw.hop_latency = latency;
  sw.level = level;
  f.nodes.push_back(sw);
  return static_cast<int>(f.nodes.size()) - 1;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

/// Most connections a generated fabric may have: at about 20 KB each to
/// build (docs/performance.md, "Building a platform") 2^24 take 335 GB, past
/// any machine; checked before the list is made (a 3-level fat tree with
/// leaf_up = agg_up = 65,536 once overflowed an int and crashed).
constexpr double kMaxGeneratedEdges = 16777216;

void require_edges(double edges, const std::string& what) {
  if (edges > kMaxGeneratedEdges) {
    char count[32];
    std::snprintf(count, sizeof count, "%.4g", edges);
    throw std::invalid_argument(what + " has " + count +
                                " connections, more than the 16777216 any machine could build (about 20 KB each)");
  }
}

}  // namespace

FabricSpec make_ring(const std::vector<int>& ranks, bool bidirectional, const LinkParams& link) {
  const int n = static_cast<int>(ranks.size());
  require(n >= 1, "a ring needs at least one NPU");
  FabricSpec f;
  f.topology = bidirectional ? "ring" : "unidirectional_ring";
  add_nics(f, ranks);
  f.routing = Routing::kDimensionOrder;
  f.dims = {n};
  f.wrap = {true};
  f.forward_only = !bidirectional;
  for (int r = 0; r < n; ++r) f.nodes[static_cast<std::size_t>(r)].coords = {r};
  if (n == 2) f.edges.push_back(FabricEdge{0, 1, link, 0});
  // Each edge joins r and r+1. A unidirectional ring routes only r -> r+1;
  // the other direction of each link carries nothing but credits.
  if (n > 2) {
    for (int r = 0; r < n; ++r) f.edges.push_back(FabricEdge{r, (r + 1) % n, link, 0});
  }
  return f;
}

FabricSpec make_fully_connected(const std::vector<int>& ranks, const LinkParams& link) {
  const int n = static_cast<int>(ranks.size());
  require_edges(0.5 * n * (n - 1.0), "a fully connected fabric of " + std::to_string(n) + " NPUs");
  FabricSpec f;
  f.topology = "fully_connected";
  add_nics(f, ranks);
  f.routing = Routing::kShortestPath;
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) f.edges.push_back(FabricEdge{a, b, link, -1});
  }
  return f;
}

FabricSpec make_single_switch(const std::vector<int>& ranks, const LinkParams& link, Tick switch_latency) {
  const int n = static_cast<int>(ranks.size());
  FabricSpec f;
  f.topology = "switch";
  add_nics(f, ranks);
  const int sw = add_switch(f, "switch", switch_latency, 1);
  f.routing = Routing::kUpDown;
  for (int r = 0; r < n; ++r) f.edges.push_back(FabricEdge{r, sw, link, -1});
  return f;
}

FabricSpec make_switch_planes(const std::vector<int>& ranks, const std::vector<int>& lanes, const LinkParams& link,
                              Tick switch_latency) {
  require(!lanes.empty(), "\"lanes\" needs one entry per switch");
  const int n = static_cast<int>(ranks.size());
  require_edges(
      static_cast<double>(n) * static_cast<double>(lanes.size()),
      "a switch of " + std::to_string(n) + " NPUs in " + std::to_string(lanes.size()) + " planes (\"lanes\")");
  FabricSpec f;
  f.topology = "switch";
  add_nics(f, ranks);
  f.routing = Routing::kUpDown;
  for (std::size_t j = 0; j < lanes.size(); ++j) {
    require(lanes[j] >= 1, "every switch needs at least one lane to each NPU");
    const int sw = add_switch(f, "switch" + std::to_string(j), switch_latency, 1);
    LinkParams bonded = link;  // the lanes to one switch act as one link
    bonded.bandwidth = Bandwidth::bytes_per_second(link.bandwidth.bytes_per_ps() * 1e12 * lanes[j]);
    bonded.buffer_bytes = link.buffer_bytes * static_cast<std::uint64_t>(lanes[j]);
    for (int r = 0; r < n; ++r) f.edges.push_back(FabricEdge{r, sw, bonded, -1, false, lanes[j]});
  }
  return f;
}

FabricSpec make_torus(const std::vector<int>& ranks, const std::vector<int>& dims, bool wrap, const LinkParams& link) {
  require(!dims.empty(), "a torus or mesh needs dimensions");
  std::int64_t total = 1;  // wide: 65536 x 65536 overflows int
  for (int d : dims) {
    require(d >= 1, "torus and mesh dimensions must be >= 1");
    total = std::min<std::int64_t>(total * d, std::int64_t{1} << 40);
  }
  require(total == static_cast<std::int64_t>(ranks.size()), "the dimensions multiply to " + std::to_string(total) +
                                                                ", not the " + std::to_string(ranks.size()) + " NPUs");
  FabricSpec f;
  f.topology = std::string(wrap ? "torus" : "mesh") + std::to_string(dims.size()) + "d";
  add_nics(f, ranks);
  f.routing = Routing::kDimensionOrder;
  f.dims = dims;
  f.wrap.assign(dims.size(), wrap);
  for (int i = 0; i < static_cast<int>(total); ++i) {
    auto& c = f.nodes[static_cast<std::size_t>(i)].coords;
    int v = i;
    for (int d : dims) {
      c.push_back(v % d);
      v /= d;
    }
  }
  for (int i = 0; i < static_cast<int>(total); ++i) {
    const auto& c = f.nodes[static_cast<std::size_t>(i)].coords;
    int stride = 1;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      const int n = dims[d];
      const int x = c[d];
      const bool has_next = x + 1 < n || (wrap && n > 2);
      if (n > 1 && has_next) {
        const int j = i + ((x + 1) % n - x) * stride;
        // Each ring of a torus dimension is deadlock-free under bubble flow
        // control; a mesh needs none.
        f.edges.push_back(FabricEdge{i, j, link, wrap ? static_cast<int>(d) : -1});
      }
      stride *= n;
    }
  }
  return f;
}

FabricSpec make_fat_tree(const std::vector<int>& ranks, const FatTreeShape& s, const LinkParams& link,
                         const LinkParams& uplink, Tick switch_latency) {
  const int n = static_cast<int>(ranks.size());
  require(s.levels == 2 || s.levels == 3, "a fat tree has 2 or 3 levels");
  require(s.leaf_down >= 1 && s.leaf_up >= 1, "leaf_down and leaf_up must be >= 1");
  require(s.rails >= 1 && n % s.rails == 0, "the NPUs must divide evenly into rails");
  {
    const double leaves = std::ceil(static_cast<double>(n) / s.leaf_down), up = s.leaf_up;
    const double pods = s.levels == 3 ? std::ceil(leaves / std::max(1, s.pod_leaves)) : 0;
    require_edges(n + leaves * up + pods * up * std::max(1, s.agg_up),
                  "a " + std::to_string(s.levels) + "-level fat tree of " + std::to_string(n) + " NPUs");
  }
  FabricSpec f;
  f.topology = std::to_string(s.levels) + "_level_fat_tree";
  f.routing = Routing::kUpDown;
  // Rail-optimized: addresses are rail-major (rail k's NPUs are contiguous),
  // so each leaf serves one rail.
  std::vector<int> order(ranks.size());
  const int per_rail = n / s.rails;
  for (int a = 0; a < n; ++a) {
    const int rail = a / per_rail, k = a % per_rail;
    order[static_cast<std::size_t>(a)] = ranks[static_cast<std::size_t>(k * s.rails + rail)];
  }
  add_nics(f, order);
  const int leaves = (n + s.leaf_down - 1) / s.leaf_down;
  std::vector<int> leaf(static_cast<std::size_t>(leaves));
  for (int l = 0; l < leaves; ++l)
    leaf[static_cast<std::size_t>(l)] = add_switch(f, "leaf" + std::to_string(l), switch_latency, 1);
  for (int a = 0; a < n; ++a)
    f.edges.push_back(FabricEdge{a, leaf[static_cast<std::size_t>(a / s.leaf_down)], link, -1});
  if (s.levels == 2) {
    std::vector<int> spine(static_cast<std::size_t>(s.leaf_up));
    for (int j = 0; j < s.leaf_up; ++j)
      spine[static_cast<std::size_t>(j)] = add_switch(f, "spine" + std::to_string(j), switch_latency, 2);
    for (int l = 0; l < leaves; ++l) {
      for (int j = 0; j < s.leaf_up; ++j) {
        f.edges.push_back(
            FabricEdge{leaf[static_cast<std::size_t>(l)], spine[static_cast<std::size_t>(j)], uplink, -1});
      }
    }
    return f;
  }
  require(s.pod_leaves >= 1 && s.agg_up >= 1, "pod_leaves and agg_up must be >= 1");
  const int pods = (leaves + s.pod_leaves - 1) / s.pod_leaves;
  std::vector<int> core(static_cast<std::size_t>(s.leaf_up) * static_cast<std::size_t>(s.agg_up));
  for (std::size_t c = 0; c < core.size(); ++c) core[c] = add_switch(f, "core" + std::to_string(c), switch_latency, 3);
  for (int p = 0; p < pods; ++p) {
    std::vector<int> agg(static_cast<std::size_t>(s.leaf_up));
    for (int j = 0; j < s.leaf_up; ++j) {
      agg[static_cast<std::size_t>(j)] =
          add_switch(f, "agg" + std::to_string(p) + "_" + std::to_string(j), switch_latency, 2);
    }
    for (int l = p * s.pod_leaves; l < std::min(leaves, (p + 1) * s.pod_leaves); ++l) {
      for (int j = 0; j < s.leaf_up; ++j) {
        f.edges.push_back(FabricEdge{leaf[static_cast<std::size_t>(l)], agg[static_cast<std::size_t>(j)], uplink, -1});
      }
    }
    for (int j = 0; j < s.leaf_up; ++j) {
      for (int m = 0; m < s.agg_up; ++m) {
        f.edges.push_back(FabricEdge{
            agg[static_cast<std::size_t>(j)],
            core[static_cast<std::size_t>(j) * static_cast<std::size_t>(s.agg_up) + static_cast<std::size_t>(m)],
            uplink, -1});
      }
    }
  }
  return f;
}

void attach_memories(FabricSpec& f, std::vector<MemorySpec> memories, const LinkParams& link) {
  if (memories.empty()) return;
  int sw = -1, switches = 0;
  Address next = 0;
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    if (f.nodes[i].kind == FabricNode::Kind::kSwitch) {
      sw = static_cast<int>(i);
      ++switches;
    } else {
      next = std::max(next, f.nodes[i].address + 1);
    }
  }
  require(switches == 1, "memories attach to a fabric with one switch (topology: switch), or to a netlist");
  for (auto& m : memories) {
    FabricNode node;
    node.kind = FabricNode::Kind::kMemory;
    node.name = m.name;
    node.address = next++;
    node.memory = static_cast<int>(f.memories.size());
    f.nodes.push_back(node);
    f.edges.push_back(FabricEdge{static_cast<int>(f.nodes.size()) - 1, sw, m.link ? *m.link : link, -1});
    f.memories.push_back(std::move(m));
  }
}

std::vector<std::vector<int>> rank_groups(int npus, int size, int stride) {
  require(size >= 1 && stride >= 1, "group size and stride must be >= 1");
  const std::int64_t span = static_cast<std::int64_t>(size) * stride;  // 65536 x 65536 overflows int
  require(span <= npus && npus % span == 0, std::to_string(npus) + " NPUs do not divide into groups of " +
                                                std::to_string(size) + " with stride " + std::to_string(stride));
  std::vector<std::vector<int>> groups;
  for (int hi = 0; hi < npus / static_cast<int>(span); ++hi) {
    for (int lo = 0; lo < stride; ++lo) {
      std::vector<int> g;
      for (int i = 0; i < size; ++i) g.push_back(lo + stride * (i + size * hi));
      groups.push_back(std::move(g));
    }
  }
  return groups;
}

double bisection_bandwidth(const FabricSpec& f) {
  // Dinic's max-flow from a super source (NICs at the lower half of the
  // addresses) to a super sink (the upper half).
  const int nn = static_cast<int>(f.nodes.size());
  const int src = nn, dst = nn + 1;
  struct Arc {
    int to;
    double cap;
    std::size_t rev;
  };
  std::vector<std::vector<Arc>> g(static_cast<std::size_t>(nn + 2));
  auto add = [&](int a, int b, double ab, double ba) {
    g[static_cast<std::size_t>(a)].push_back(Arc{b, ab, g[static_cast<std::size_t>(b)].size()});
    g[static_cast<std::size_t>(b)].push_back(Arc{a, ba, g[static_cast<std::size_t>(a)].size() - 1});
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (const FabricEdge& e : f.edges) {
    const double bw = e.link.bandwidth.bytes_per_ps() * 1e12;
    add(e.a, e.b, bw, bw);
  }
  int nics = 0;
  for (const auto& n : f.nodes) nics += n.kind == FabricNode::Kind::kNic ? 1 : 0;
  for (int i = 0; i < nn; ++i) {
    const FabricNode& n = f.nodes[static_cast<std::size_t>(i)];
    if (n.kind != FabricNode::Kind::kNic) continue;
    if (static_cast<int>(n.address) < nics / 2) {
      add(src, i, inf, 0);
    } else {
      add(i, dst, inf, 0);
    }
  }
  double flow = 0;
  std::vector<int> level(g.size());
  std::vector<std::size_t> it(g.size());
  for (;;) {
    std::fill(level.begin(), level.end(), -1);
    std::deque<int> q{src};
    level[static_cast<std::size_t>(src)] = 0;
    while (!q.empty()) {
      const int v = q.front();
      q.pop_front();
      for (const Arc& a : g[static_cast<std::size_t>(v)]) {
        if (a.cap > 1e-9 && level[static_cast<std::size_t>(a.to)] < 0) {
          level[static_cast<std::size_t>(a.to)] = level[static_cast<std::size_t>(v)] + 1;
          q.push_back(a.to);
        }
      }
    }
    if (level[static_cast<std::size_t>(dst)] < 0) break;
    std::fill(it.begin(), it.end(), 0);
    std::function<double(int, double)> push = [&](int v, double limit) -> double {
      if (v == dst) return limit;
      for (std::size_t& i = it[static_cast<std::size_t>(v)]; i < g[static_cast<std::size_t>(v)].size(); ++i) {
        Arc& a = g[static_cast<std::size_t>(v)][i];
        if (a.cap > 1e-9 && level[static_cast<std::size_t>(a.to)] == level[static_cast<std::size_t>(v)] + 1) {
          const double got = push(a.to, std::min(limit, a.cap));
          if (got > 0) {
            a.cap -= got;
            g[static_cast<std::size_t>(a.to)][a.rev].cap += got;
            return got;
          }
        }
      }
      return 0;
    };
    while (const double got = push(src, inf)) flow += got;
  }
  return flow;
}

void share_nics(FabricSpec& f, const std::vector<int>& ranks, int per_nic, const LinkParams& inner) {
  require(per_nic >= 1, "gpus_per_nic must be >= 1");
  if (per_nic == 1) return;
  require(ranks.size() % static_cast<std::size_t>(per_nic) == 0, "gpus_per_nic " + std::to_string(per_nic) +
                                                                     " does not divide the fabric's " +
                                                                     std::to_string(ranks.size()) + " NPUs");
  for (const FabricEdge& e : f.edges) {
    require(e.ring < 0, "NICs are shared on switched fabrics only (a ring's NICs pass frames on)");
  }
  const std::size_t ports = f.nodes.size();
  for (std::size_t u = 0; u < ports; ++u) {
    FabricNode& port = f.nodes[u];
    if (port.kind != FabricNode::Kind::kNic) continue;
    const auto first = std::find(ranks.begin(), ranks.end(), port.npu);
    require(first != ranks.end() && (first - ranks.begin()) % per_nic == 0,
            "a shared NIC's first NPU is not a group's");
    const Address a = port.address;
    const int group = static_cast<int>(first - ranks.begin());
    // The functions reach the port at the port's whole rate (their DMA is
    // bounded where PCIe is modelled, not here).
    int uplinks = 0;
    LinkParams function_link = inner;
    for (const FabricEdge& e : f.edges) {
      if (!e.internal && (e.a == static_cast<int>(u) || e.b == static_cast<int>(u))) {
        function_link.bandwidth = e.link.bandwidth;
        ++uplinks;
      }
    }
    require(uplinks == 1, "a shared NIC has one port into the fabric, and this topology gives each NIC " +
                              std::to_string(uplinks) +
                              " links (switch planes, a direct topology): NICs with several "
                              "ports shared by several GPUs are not modelled");
    port.kind = FabricNode::Kind::kSwitch;
    port.nic_port = true;
    port.name = "nic" + std::to_string(a);
    port.npu = -1;
    port.address = kNoAddress;
    port.hop_latency = 0;
    port.level = 0;
    for (int j = 0; j < per_nic; ++j) {
      FabricNode nic;
      nic.kind = FabricNode::Kind::kNic;
      nic.npu = ranks[static_cast<std::size_t>(group + j)];
      nic.name = "npu" + std::to_string(nic.npu);
      nic.address = a * static_cast<Address>(per_nic) + static_cast<Address>(j);
      f.nodes.push_back(nic);
      f.edges.push_back(FabricEdge{static_cast<int>(f.nodes.size()) - 1, static_cast<int>(u), function_link, -1});
    }
  }
  f.gpus_per_nic = per_nic;
}

}  // namespace fabricsim
