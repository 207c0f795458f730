#include "models/collectives/algorithm_choice.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace fabricsim {

std::vector<int> node_offsets(const CollectiveConfig& config, const std::vector<int>& ranks) {
  if (config.dims.size() < 2 || ranks.empty()) return {};
  const Dimension& node = config.dims.front();
  const auto node_of = [&](int r) { return r / (node.size * node.stride) * node.stride + r % node.stride; };
  std::vector<int> out;
  out.reserve(ranks.size());
  for (const int r : ranks) out.push_back(node_of(r) - node_of(ranks.front()));
  return out;
}

namespace {
constexpr std::uint64_t kLarge = 1u << 20;  // where bandwidth starts to matter more than latency
bool power_of_two(int n) {
  return n > 0 && (n & (n - 1)) == 0;
}

/// The protocols a collective may run under: under `auto` each (Simple
/// first, which wins ties, then LL128 and LL), else the configured one.
std::vector<CommProtocol> candidate_protocols(const CollectiveConfig& config) {
  switch (config.protocol) {
    case ProtocolChoice::kSimple:
      return {CommProtocol::kSimple};
    case ProtocolChoice::kLL:
      return {CommProtocol::kLL};
    case ProtocolChoice::kLL128:
      return {CommProtocol::kLL128};
    case ProtocolChoice::kAuto:
      break;
  }
  return {CommProtocol::kSimple, CommProtocol::kLL128, CommProtocol::kLL};
}

/// Whether the default choice of protocol may run `a` under `p`: NCCL runs
/// PAT on Simple only (src/graph/tuning.cc); a platform or command line that
/// names a protocol gets it.
bool runs_protocol(const CollectiveConfig& config, AlgorithmKind a, CommProtocol p) {
  return config.protocol != ProtocolChoice::kAuto || a != AlgorithmKind::kPat || p == CommProtocol::kSimple;
}

/// Whether no two of `ranks` share a node, a group of the platform's lowest
/// level, on a platform of several levels. NCCL takes PAT only so ("one GPU
/// per node"); on one level there is no telling nodes from the network.
bool one_per_node(const CollectiveConfig& config, const std::vector<int>& ranks) {
  if (config.dims.size() < 2) return false;
  std::vector<int> nodes = node_offsets(config, ranks);
  std::sort(nodes.begin(), nodes.end());
  return std::adjacent_find(nodes.begin(), nodes.end()) == nodes.end();
}

/// Whether the reduction units of the domain holding `ranks` pull (NVLS).
bool pulls(const PlatformHints& hints, const std::vector<int>& ranks) {
  const int domain = hints.in_switch_domain(ranks);
  return domain >= 0 && static_cast<std::size_t>(domain) < hints.in_switch_pull.size() &&
         hints.in_switch_pull[static_cast<std::size_t>(domain)];
}
}  // namespace

int PlatformHints::in_switch_domain(const std::vector<int>& ranks) const {
  for (std::size_t d = 0; d < in_switch_domains.size(); ++d) {
    const auto& domain = in_switch_domains[d];
    bool all = true;
    for (int r : ranks) all &= std::binary_search(domain.begin(), domain.end(), r);
    if (all) return static_cast<int>(d);
  }
  return -1;
}

// The point-to-point choice, by the shape of the platform (rules 4-6 of
// docs/collectives.md).
namespace {
/// Whether a reduce-scatter or all-gather can run a phase per dimension:
/// several levels, each of ring or direct (hierarchical.cpp).
bool phased_levels(const CollectiveConfig& config, CollectiveType type, std::size_t members) {
  if (type != CollectiveType::kReduceScatter && type != CollectiveType::kReduceScatterBlock &&
      type != CollectiveType::kAllGather) {
    return false;
  }
  int used = 0;
  std::int64_t below = 1;  // NPUs the dimensions below group: a level's stride in ASTRA-sim's layout
  for (const Dimension& d : config.levels_for(type)) {
    if (d.size > 1) {
      ++used;
      if (d.algorithm != AlgorithmKind::kRing && d.algorithm != AlgorithmKind::kDirect) return false;
      if (d.stride != below) return false;
    }
    below *= d.size;
  }
  return used > 1 && static_cast<std::size_t>(below) == members;
}

AlgorithmKind point_to_point_default(CollectiveType type, std::uint64_t bytes, int n, const PlatformHints& hints);
double best_protocol_estimate(const CollectiveConfig& config, const PlatformHints::FabricCosts& costs,
                              CollectiveType type, AlgorithmKind a, std::uint64_t bytes, int n,
                              CommProtocol* chosen = nullptr);
std::optional<AlgorithmKind> routed_choice(const CollectiveConfig& config, CollectiveType type, std::uint64_t bytes,
                                           const std::vector<int>& ranks, bool group_is_world,
                                           const PlatformHints& hints);
}  // namespace

AlgorithmKind default_algorithm(const CollectiveConfig& config, CollectiveType type, std::uint64_t bytes,
                                const std::vector<int>& ranks, bool group_is_world, const PlatformHints& hints) {
  const int n = static_cast<int>(ranks.size());
  switch (type) {
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
    case CollectiveType::kAllToAll:
      return AlgorithmKind::kDirect;
    case CollectiveType::kBarrier:
      return AlgorithmKind::kHalvingDoubling;  // dissemination: log2(n) rounds of empty messages
    default:
      break;
  }
  // Where the platform has a routed cost model: the fastest by its estimate.
  if (hints.cost_model && n > 1 && n <= kRoutedCostModelMembers) {
    if (const auto best = routed_choice(config, type, bytes, ranks, group_is_world, hints)) return *best;
  }
  if (hints.shape == "multi_dimensional" && group_is_world && type == CollectiveType::kAllReduce) {
    return AlgorithmKind::kHierarchical;  // in-switch within the dimensions that have reduction units
  }
  if (hints.shape == "multi_dimensional" && group_is_world && phased_levels(config, type, ranks.size())) {
    return AlgorithmKind::kHierarchical;  // a phase per dimension, as for all-reduce
  }
  const AlgorithmKind p2p = point_to_point_default(type, bytes, n, hints);
  // Switch reduction units, where the group has them: broadcast and reduce
  // become one multicast or one reduction; all-reduce, all-gather and
  // reduce-scatter take them where the cost model finds them faster than the
  // point-to-point choice under its best protocol (a multicast also returns
  // the sender's own data, pulled reductions carry read requests, and on 2
  // members a pulled all-reduce moves more than a ring: docs/collectives.md).
  if (hints.in_switch(ranks)) {
    switch (type) {
      case CollectiveType::kBroadcast:
      case CollectiveType::kReduce:
        return AlgorithmKind::kInSwitch;
      case CollectiveType::kAllReduce:
      case CollectiveType::kAllGather:
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock: {
        const PlatformHints::FabricCosts* costs = group_costs(hints, ranks);
        if (!costs) return AlgorithmKind::kInSwitch;
        const double in_switch = in_switch_estimate(*costs, pulls(hints, ranks), type, bytes, n).total();
        return in_switch <= best_protocol_estimate(config, *costs, type, p2p, bytes, n) ? AlgorithmKind::kInSwitch
                                                                                        : p2p;
      }
      default:
        break;
    }
  }
  return p2p;
}

namespace {
AlgorithmKind point_to_point_default(CollectiveType type, std::uint64_t bytes, int n, const PlatformHints& hints) {
  const bool rooted = type == CollectiveType::kBroadcast || type == CollectiveType::kReduce;
  if (hints.shape == "fully_connected") return AlgorithmKind::kDirect;
  if (hints.shape == "ring" || hints.shape == "torus" || hints.shape == "mesh") {
    // Neighbours are one hop apart: rings use every link at once. Small
    // rooted collectives go down a binomial tree instead of a long chain.
    return rooted && bytes < kLarge ? AlgorithmKind::kHalvingDoubling : AlgorithmKind::kRing;
  }
  // Switched fabrics. On one non-blocking switch, halving-doubling moves the
  // same bytes as a ring in log2(n) steps instead of n - 1, as long as n is a
  // power of two (otherwise its folding rounds cost extra data). On fat trees
  // its long exchanges cross the core, so large collectives take the ring,
  // whose neighbours mostly share a leaf.
  if (bytes < kLarge) return AlgorithmKind::kHalvingDoubling;
  if (hints.shape == "switch" && power_of_two(n) && !rooted) return AlgorithmKind::kHalvingDoubling;
  return AlgorithmKind::kRing;
}
}  // namespace

namespace {
/// ASTRA-sim's system files run every group smaller than the platform as a ring.
bool subgroup_ring(const CollectiveConfig& config, CollectiveType type, const std::vector<int>& ranks) {
  if (!config.subgroups_ring || type == CollectiveType::kGather || type == CollectiveType::kScatter) return false;
  std::size_t npus = 1;
  for (const Dimension& d : config.dims) npus *= static_cast<std::size_t>(d.size);
  return ranks.size() != npus;
}
}  // namespace

bool chosen_by_default(const CollectiveConfig& config, CollectiveType type, const std::vector<int>& ranks) {
  return !subgroup_ring(config, type, ranks) && !config.algorithm[static_cast<int>(type)];
}

AlgorithmKind choose_algorithm(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type,
                               std::uint64_t bytes, const std::vector<int>& ranks, bool group_is_world) {
  if (subgroup_ring(config, type, ranks)) return AlgorithmKind::kRing;
  const auto& chosen = config.algorithm[static_cast<int>(type)];
  if (chosen) return *chosen;
  return default_algorithm(config, type, bytes, ranks, group_is_world, hints);
}

const char* to_string(CommProtocol p) {
  switch (p) {
    case CommProtocol::kPlain:
      return "plain";
    case CommProtocol::kSimple:
      return "simple";
    case CommProtocol::kLL:
      return "ll";
    case CommProtocol::kLL128:
      return "ll128";
  }
  return "?";
}

namespace {
bool point_to_point(AlgorithmKind a) {
  return a == AlgorithmKind::kRing || a == AlgorithmKind::kDirect || a == AlgorithmKind::kHalvingDoubling ||
         a == AlgorithmKind::kDoubleBinaryTree || a == AlgorithmKind::kPat;
}

int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

/// Steps one after another on the critical path (NCCL's nsteps for rings).
int sequential_steps(CollectiveType type, AlgorithmKind a, int n) {
  const bool all_reduce = type == CollectiveType::kAllReduce;
  switch (a) {
    case AlgorithmKind::kRing:
      return all_reduce ? 2 * (n - 1) : n - 1;
    case AlgorithmKind::kDirect:
      return all_reduce ? 2 : 1;
    case AlgorithmKind::kHalvingDoubling:
    case AlgorithmKind::kDoubleBinaryTree:
    case AlgorithmKind::kPat:
      return (all_reduce ? 2 : 1) * ceil_log2(n);
    default:
      return 1;
  }
}

/// Bytes each NPU sends, as nccl-tests' bus bandwidth counts them.
double bus_bytes(CollectiveType type, std::uint64_t bytes, int n) {
  const double s = static_cast<double>(bytes);
  switch (type) {
    case CollectiveType::kAllReduce:
      return s * 2.0 * (n - 1) / n;
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
      return s;
    case CollectiveType::kBarrier:
      return 0;
    default:
      return s * (n - 1) / n;
  }
}
}  // namespace

double protocol_estimate(const CollectiveConfig& config, const PlatformHints::FabricCosts& costs, CommProtocol p,
                         CollectiveType type, AlgorithmKind algorithm, std::uint64_t bytes, int n) {
  const double wire = static_cast<double>(protocol_bytes(static_cast<std::uint64_t>(bus_bytes(type, bytes, n)), p));
  const double seconds = costs.bandwidth > 0 ? wire / costs.bandwidth : 0;
  return static_cast<double>(config.launch(p)) +
         sequential_steps(type, algorithm, n) * static_cast<double>(costs.overhead(p) + costs.hop) + seconds * 1e12;
}

const PlatformHints::FabricCosts* group_costs(const PlatformHints& hints, const std::vector<int>& ranks) {
  for (const auto& f : hints.fabric_costs) {
    bool all = !f.npus.empty();
    for (int r : ranks) all = all && std::binary_search(f.npus.begin(), f.npus.end(), r);
    if (all) return &f;
  }
  const PlatformHints::FabricCosts* slowest = nullptr;
  for (const auto& f : hints.fabric_costs) {
    if (f.npus.empty()) continue;
    if (!slowest || f.step[0] > slowest->step[0] ||
        (f.step[0] == slowest->step[0] && f.bandwidth < slowest->bandwidth)) {
      slowest = &f;
    }
  }
  return slowest;
}

Estimate in_switch_estimate(const PlatformHints::FabricCosts& costs, bool pull, CollectiveType type,
                            std::uint64_t bytes, int n, int links) {
  // Bytes through a member's busiest link direction, in payload at the
  // fabric's goodput, and the steps software posts one after another:
  //   all-reduce, pulled: the answers to the unit's reads of all S, with a
  //     read request's header per packet, plus the S/n it multicasts; two
  //     steps (the pull, then the multicast);
  //   all-reduce, pushed: S up and S down; one step;
  //   all-gather: S down (the multicast returns the sender's own part);
  //   reduce-scatter: S up (pulled: and a barrier through the switch).
  const double s = static_cast<double>(bytes);
  double wire = s;
  int steps = 1;
  switch (type) {
    case CollectiveType::kAllReduce:
      if (pull) {
        wire = s * (1 + costs.header_share) + s / n;
        steps = 2;
      }
      break;
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
      if (pull) {
        wire = s * (1 + costs.header_share);
        steps = 2;
      }
      break;
    default:
      break;
  }
  const double seconds = costs.bandwidth > 0 ? wire / costs.bandwidth : 0;
  // A tree of units: each extra link is another unit that stores a frame
  // whole (SHARP's aggregation nodes) and half a hop of wire and switch.
  // A message is the member's S, or its S/n where the collective splits by
  // member (an all-gather's multicasts, a reduce-scatter's contributions).
  const bool split = type == CollectiveType::kAllGather || type == CollectiveType::kReduceScatter ||
                     type == CollectiveType::kReduceScatterBlock;
  const double message = split ? s / n : s;
  const double frame = costs.segment > 0 ? std::min(message, static_cast<double>(costs.segment)) : message;
  const double per_link =
      static_cast<double>(costs.hop) / 2 + (costs.bandwidth > 0 ? frame / costs.bandwidth * 1e12 : 0);
  const double tree = std::max(0, links - 2) * per_link;
  return Estimate{steps * (static_cast<double>(costs.plain + costs.hop) + tree), seconds * 1e12};
}

namespace {
/// Links on the longest path from the group's first member to another.
int longest_member_path(const CostModel& model, const std::vector<int>& ranks) {
  int longest = 2;
  std::vector<TrafficPaths::Use> uses;
  for (std::size_t k = 1; k < ranks.size(); ++k) {
    uses.clear();
    longest = std::max(longest, model.paths().path(ranks.front(), ranks[k], uses));
  }
  return longest;
}
}  // namespace

namespace {
/// The closed-form estimate of `a` under its best candidate protocol (which
/// `chosen` gets).
double best_protocol_estimate(const CollectiveConfig& config, const PlatformHints::FabricCosts& costs,
                              CollectiveType type, AlgorithmKind a, std::uint64_t bytes, int n, CommProtocol* chosen) {
  double best = std::numeric_limits<double>::infinity();
  for (CommProtocol p : candidate_protocols(config)) {
    const double t = protocol_estimate(config, costs, p, type, a, bytes, n);
    if (t < best) {
      best = t;
      if (chosen) *chosen = p;
    }
  }
  return best;
}
}  // namespace

namespace {
/// The group of NPU 0 at one level: `size` NPUs `stride` apart.
std::vector<int> level_group(const Dimension& level) {
  std::vector<int> group;
  for (int k = 0; k < level.size; ++k) group.push_back(k * level.stride);
  return group;
}

ProgramPlan plan_for(const CollectiveConfig& config, CollectiveType type, AlgorithmKind a, std::uint64_t bytes,
                     const std::vector<int>& ranks) {
  ProgramPlan plan;
  plan.type = type;
  plan.algorithm = a;
  plan.ranks = &ranks;
  plan.bytes = bytes;
  plan.chunks = config.chunks;
  plan.channels = config.channels;
  plan.element = element_bytes(config.dtype);
  plan.dims = &config.levels_for(type);
  plan.themis = config.dimension_order == LevelOrder::kThemis;
  plan.level_data = config.level_data;
  plan.direct_window = config.direct_window;
  return plan;
}

/// The routed estimate of a point-to-point algorithm under its best
/// protocol (the configured one unless `auto`); nullopt when it does not
/// apply to the type.
std::optional<Estimate> best_routed(const CollectiveConfig& config, CostModel& model, CollectiveType type,
                                    AlgorithmKind a, std::uint64_t bytes, const std::vector<int>& ranks,
                                    CommProtocol* chosen = nullptr) {
  std::optional<Estimate> best;
  try {
    const ProgramPlan plan = plan_for(config, type, a, bytes, ranks);
    for (CommProtocol p : candidate_protocols(config)) {
      if (!runs_protocol(config, a, p)) continue;
      const Estimate e = model.estimate(config, plan, p);
      if (!best || e.total() < best->total()) {
        best = e;
        if (chosen) *chosen = p;
      }
    }
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // the algorithm does not run this type
  }
  return best;
}

/// A hierarchical collective over `levels`: each level's phases on the
/// group of NPU 0 at that level, with the level's algorithm and its share of
/// the data; pipelined levels add their latencies and overlap their
/// transfers. All-reduce: each level's reduce-scatter and all-gather (the top
/// level's all-reduce), or, with whole levels, an all-reduce of all the
/// data. An in-switch level's reduce-scatter and all-gather move what its
/// all-reduce does when pulled, and S/n more up each link when pushed.
/// Reduce-scatter and all-gather: one phase of the type per level.
std::optional<double> hierarchical_estimate(const CollectiveConfig& config, CostModel& model,
                                            const PlatformHints& hints, CollectiveType type, std::uint64_t bytes,
                                            const std::vector<Dimension>& levels) {
  double latency = 0, transfer = 0, transfers = 0, serial = 0;
  std::uint64_t share = bytes;
  const bool all_reduce = type == CollectiveType::kAllReduce;
  const bool whole = all_reduce && config.level_data == LevelData::kWhole;
  const std::size_t top = top_level(levels);
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const int n = levels[l].size;
    if (n <= 1) continue;
    const std::vector<int> group = level_group(levels[l]);
    const AlgorithmKind a = levels[l].algorithm;
    Estimate level;
    if (a == AlgorithmKind::kInSwitch && all_reduce) {
      const FabricCosts* costs = group_costs(hints, group);
      if (!costs || !hints.in_switch(group)) return std::nullopt;
      const bool pull = pulls(hints, group);
      const int links = longest_member_path(model, group);
      const Estimate all = in_switch_estimate(*costs, pull, CollectiveType::kAllReduce, share, n, links);
      if (whole || (l == top && !pull && config.dimension_order != LevelOrder::kThemis)) {
        level = all;  // a pushed top level all-reduces (hierarchical.cpp)
      } else {
        // The level runs a reduce-scatter and then an all-gather. Pulled,
        // they load each link direction as the all-reduce does; pushed, the
        // all-gather sends each member's part up as well, so the way up
        // carries S + S/n.
        level.transfer = pull ? all.transfer : all.transfer * (1 + 1.0 / n);
        level.latency = in_switch_estimate(*costs, pull, CollectiveType::kReduceScatter, share, n, links).latency +
                        in_switch_estimate(*costs, pull, CollectiveType::kAllGather, share, n, links).latency;
      }
    } else {
      const std::vector<CollectiveType> phases =
          !all_reduce         ? std::vector<CollectiveType>{type}
          : l == top || whole ? std::vector<CollectiveType>{CollectiveType::kAllReduce}
                              : std::vector<CollectiveType>{CollectiveType::kReduceScatter, CollectiveType::kAllGather};
      for (CollectiveType t : phases) {
        try {
          const Estimate e = model.estimate(config, plan_for(config, t, a, share, group), CommProtocol::kPlain);
          level.latency += e.latency;
          level.transfer += e.transfer;
        } catch (const std::invalid_argument&) {
          return std::nullopt;  // the algorithm does not run that phase
        }
      }
    }
    latency += level.latency;
    transfer = std::max(transfer, level.transfer);
    transfers += level.transfer;
    serial += level.total();
    if (l != top && !whole) share = std::max<std::uint64_t>(1, share / static_cast<std::uint64_t>(n));
  }
  if (config.chunks_per_stage == 0) return serial;
  // Pipelined in K chunks (as the engine cuts them: collective_engine.cpp),
  // the slowest level's transfer, plus the other levels' share of one chunk
  // filling and draining the pipeline; in one chunk, the levels in turn.
  const std::uint64_t by_size =
      config.pipeline_chunk > 0 ? (bytes + config.pipeline_chunk - 1) / config.pipeline_chunk : 1;
  const double chunks =
      static_cast<double>(std::max<std::uint64_t>(std::max<std::uint32_t>(1, config.chunks), by_size));
  return latency + transfer + (transfers - transfer) / chunks;
}

/// The fastest levels for a hierarchical all-reduce by the estimate above:
/// a level the platform or the user named keeps its algorithm; the others
/// try ring, halving-doubling, direct, in-switch where the level's switches
/// have reduction units, and a double binary tree at the top.
std::optional<std::pair<std::vector<Dimension>, double>> best_levels(const CollectiveConfig& config, CostModel& model,
                                                                     const PlatformHints& hints, std::uint64_t bytes) {
  const auto& dims = config.dims;
  if (dims.size() < 2) return std::nullopt;
  // Levels the platform names must run; one that cannot is the user's to
  // hear of, not a candidate to pass over.
  // (Levels that all-reduce the whole chunk take a tree anywhere.)
  if (const std::string problem = hierarchical_levels_problem(dims);
      !problem.empty() && config.level_data == LevelData::kPart) {
    throw std::invalid_argument("the hierarchical algorithm does not apply to all_reduce: " + problem);
  }
  const std::size_t top = top_level(dims);
  std::vector<std::vector<AlgorithmKind>> choices(dims.size());
  for (std::size_t l = 0; l < dims.size(); ++l) {
    if (dims[l].named || dims[l].size <= 1) {
      choices[l] = {dims[l].algorithm};
      continue;
    }
    if (hints.in_switch(level_group(dims[l]))) choices[l].push_back(AlgorithmKind::kInSwitch);
    choices[l].insert(choices[l].end(),
                      {AlgorithmKind::kRing, AlgorithmKind::kHalvingDoubling, AlgorithmKind::kDirect});
    if (l == top) choices[l].push_back(AlgorithmKind::kDoubleBinaryTree);
  }
  std::optional<std::pair<std::vector<Dimension>, double>> best;
  std::vector<std::size_t> pick(dims.size(), 0);
  for (;;) {
    std::vector<Dimension> levels = dims;
    for (std::size_t l = 0; l < dims.size(); ++l) levels[l].algorithm = choices[l][pick[l]];
    if (const auto t = hierarchical_estimate(config, model, hints, CollectiveType::kAllReduce, bytes, levels)) {
      if (!best || *t < best->second) best = std::make_pair(levels, *t);
    }
    std::size_t l = 0;  // the next combination, like an odometer
    while (l < dims.size() && ++pick[l] == choices[l].size()) pick[l++] = 0;
    if (l == dims.size()) break;
  }
  return best;
}

std::optional<AlgorithmKind> routed_choice(const CollectiveConfig& config, CollectiveType type, std::uint64_t bytes,
                                           const std::vector<int>& ranks, bool group_is_world,
                                           const PlatformHints& hints) {
  std::optional<AlgorithmKind> pick;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [a, t] : default_estimates(config, type, bytes, ranks, group_is_world, hints)) {
    if (t < best) {
      best = t;
      pick = a;
    }
  }
  return pick;
}
}  // namespace

std::vector<std::pair<AlgorithmKind, double>> default_estimates(const CollectiveConfig& config, CollectiveType type,
                                                                std::uint64_t bytes, const std::vector<int>& ranks,
                                                                bool group_is_world, const PlatformHints& hints) {
  std::vector<std::pair<AlgorithmKind, double>> out;
  if (!hints.cost_model || ranks.size() < 2 || ranks.size() > static_cast<std::size_t>(kRoutedCostModelMembers)) {
    return out;
  }
  CostModel& model = *hints.cost_model;
  for (AlgorithmKind a : {AlgorithmKind::kRing, AlgorithmKind::kHalvingDoubling, AlgorithmKind::kDirect,
                          AlgorithmKind::kDoubleBinaryTree, AlgorithmKind::kPat}) {
    if (a == AlgorithmKind::kPat && !one_per_node(config, ranks)) continue;
    if (const auto e = best_routed(config, model, type, a, bytes, ranks)) out.emplace_back(a, e->total());
  }
  if (hints.in_switch(ranks)) {
    if (const FabricCosts* costs = group_costs(hints, ranks)) {
      const int n = static_cast<int>(ranks.size());
      out.emplace_back(
          AlgorithmKind::kInSwitch,
          in_switch_estimate(*costs, pulls(hints, ranks), type, bytes, n, longest_member_path(model, ranks)).total());
    }
  }
  if (group_is_world && type == CollectiveType::kAllReduce) {
    if (const auto b = best_levels(config, model, hints, bytes))
      out.emplace_back(AlgorithmKind::kHierarchical, b->second);
  }
  // Reduce-scatter and all-gather a phase per dimension, on their levels as
  // the platform or a system file gives them.
  if (group_is_world && phased_levels(config, type, ranks.size())) {
    if (const auto t = hierarchical_estimate(config, model, hints, type, bytes, config.levels_for(type))) {
      out.emplace_back(AlgorithmKind::kHierarchical, *t);
    }
  }
  return out;
}

std::vector<AlgorithmKind> probe_candidates(const CollectiveConfig& config, CollectiveType type, std::uint64_t bytes,
                                            const std::vector<int>& ranks, bool group_is_world,
                                            const PlatformHints& hints) {
  if (!(config.probe_margin > 0) || !chosen_by_default(config, type, ranks)) return {};
  if (config.library == CollectiveLibrary::kNccl && hints.nccl) return {};  // NCCL's tuner decides, by its own model
  switch (type) {  // default_algorithm takes these without weighing
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
    case CollectiveType::kAllToAll:
    case CollectiveType::kBarrier:
      return {};
    default:
      break;
  }
  auto estimates = default_estimates(config, type, bytes, ranks, group_is_world, hints);
  if (estimates.size() < 2) return {};
  // Stable: equal estimates keep the order weighed, so the first is the one
  // default_algorithm takes.
  std::stable_sort(estimates.begin(), estimates.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  const double limit = estimates.front().second * (1 + config.probe_margin);
  std::vector<AlgorithmKind> out;
  double last = -1;
  for (const auto& [a, t] : estimates) {
    // An estimate equal to the one before: the cost model routed the same
    // messages (on two members ring, direct, halving-doubling and the tree
    // are one exchange), so simulating it again would tell nothing.
    if (t <= limit && t != last) out.push_back(a);
    last = t;
  }
  if (out.size() < 2) out.clear();
  return out;
}

const std::vector<Dimension>* choose_levels(const CollectiveConfig& config, const PlatformHints& hints,
                                            CollectiveType type, std::uint64_t bytes) {
  if (type != CollectiveType::kAllReduce) return &config.levels_for(type);
  if (hints.cost_model && config.dims.size() > 1) {
    if (const auto b = best_levels(config, *hints.cost_model, hints, bytes)) return hints.cost_model->keep(b->first);
  }
  return &config.dims;
}

namespace {
/// Whether a hierarchical collective runs point-to-point steps only: every
/// level of more than one NPU runs ring, direct, halving-doubling or a tree,
/// and none has reduction units the level choice could take. Such steps pay
/// NCCL's launch and step costs as the same algorithms run flat do.
bool point_to_point_levels(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type) {
  for (const Dimension& d : config.levels_for(type)) {
    if (d.size <= 1) continue;
    if (!point_to_point(d.algorithm) || hints.in_switch(level_group(d))) return false;
  }
  return true;
}
}  // namespace

CommProtocol choose_protocol(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type,
                             AlgorithmKind algorithm, std::uint64_t bytes, const std::vector<int>& ranks) {
  const bool p2p_levels = algorithm == AlgorithmKind::kHierarchical && point_to_point_levels(config, hints, type);
  if (!point_to_point(algorithm) && !p2p_levels) return CommProtocol::kPlain;
  if (!runs_protocol(config, algorithm, CommProtocol::kLL)) return CommProtocol::kSimple;
  if (config.protocol != ProtocolChoice::kAuto) return candidate_protocols(config).front();
  const PlatformHints::FabricCosts* costs = group_costs(hints, ranks);
  if (!costs) return CommProtocol::kPlain;
  if (hints.cost_model && ranks.size() > 1 && ranks.size() <= static_cast<std::size_t>(kRoutedCostModelMembers)) {
    CommProtocol chosen = CommProtocol::kSimple;
    if (best_routed(config, *hints.cost_model, type, algorithm, bytes, ranks, &chosen)) return chosen;
  }
  // Without the routed model the closed forms below are for one algorithm:
  // levels are judged as their first level's algorithm over the group.
  AlgorithmKind judged = algorithm;
  if (p2p_levels) {
    judged = AlgorithmKind::kRing;
    for (const Dimension& d : config.levels_for(type)) {
      if (d.size > 1) {
        judged = d.algorithm;
        break;
      }
    }
  }
  CommProtocol best = CommProtocol::kSimple;
  best_protocol_estimate(config, *costs, type, judged, bytes, static_cast<int>(ranks.size()), &best);
  return best;
}

}  // namespace fabricsim

namespace fabricsim {

namespace {
const char* nccl_protocol_name(int p) {
  return p == 0 ? "LL" : p == 1 ? "LL128" : "Simple";
}

/// Nodes the group spans, as NCCL counts them: a node is every level of the
/// platform but the top one (its top level's stride of NPUs, in order).
int nodes_of(const CollectiveConfig& config, const std::vector<int>& ranks) {
  if (config.dims.size() < 2 || ranks.empty()) return 1;
  const int per_node = std::max(1, config.dims.back().stride);
  std::vector<int> nodes;
  nodes.reserve(ranks.size());
  for (int r : ranks) nodes.push_back(r / per_node);
  std::sort(nodes.begin(), nodes.end());
  return static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

/// The platform's levels with the node's level running `intra`, the top
/// running `top` and any between running rings, where they can run so
/// (an in-switch level needs reduction units); null where not.
const std::vector<Dimension>* nccl_levels(const CollectiveConfig& config, const PlatformHints& hints,
                                          AlgorithmKind intra, AlgorithmKind top) {
  if (!hints.cost_model || config.dims.size() < 2) return nullptr;
  std::vector<Dimension> levels = config.dims;
  const std::size_t t = top_level(levels);
  if (t >= levels.size()) return nullptr;
  bool first = true;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    if (levels[l].size <= 1) continue;
    levels[l].algorithm = first ? intra : l == t ? top : AlgorithmKind::kRing;
    levels[l].named = true;
    first = false;
    if (levels[l].algorithm == AlgorithmKind::kInSwitch && !hints.in_switch(level_group(levels[l]))) return nullptr;
  }
  if (!hierarchical_levels_problem(levels).empty()) return nullptr;
  return hints.cost_model->keep(levels);
}

/// How fabricsim runs NCCL's algorithm `a` on this group, if it can
/// (docs/collectives.md, "The collective library": NCCL's algorithms and
/// fabricsim's).
std::optional<CollectiveChoice> run_as(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type,
                                       NcclAlgorithm a, const std::vector<int>& ranks, bool group_is_world, int nodes,
                                       std::string& why_not) {
  const int n = static_cast<int>(ranks.size());
  const int per_node = std::max(1, n / std::max(1, nodes));
  const bool all_reduce = type == CollectiveType::kAllReduce;
  CollectiveChoice c;
  c.dims = &config.dims;
  const auto hierarchical = [&](AlgorithmKind intra, AlgorithmKind top) -> std::optional<CollectiveChoice> {
    if (!all_reduce) {
      why_not = "fabricsim's hierarchical " + std::string(to_string(type)) + " runs ring or direct levels only";
      return std::nullopt;
    }
    if (!group_is_world) {
      why_not = "fabricsim runs its levels over the whole platform only, and this group is " + std::to_string(n) +
                " of its NPUs";
      return std::nullopt;
    }
    const std::vector<Dimension>* levels = nccl_levels(config, hints, intra, top);
    if (!levels) {
      why_not = "the platform's levels cannot run " + std::string(to_string(intra)) + " within a node and " +
                to_string(top) + " across nodes";
      return std::nullopt;
    }
    c.algorithm = AlgorithmKind::kHierarchical;
    c.dims = levels;
    return c;
  };
  const auto in_switch_here = [&](bool pull) {
    const int d = hints.in_switch_domain(ranks);
    return d >= 0 && static_cast<std::size_t>(d) < hints.in_switch_pull.size() && hints.in_switch_pull[d] == pull;
  };
  switch (a) {
    case NcclAlgorithm::kRing:
      c.algorithm = AlgorithmKind::kRing;
      return c;
    case NcclAlgorithm::kPat:
      c.algorithm = AlgorithmKind::kPat;
      return c;
    case NcclAlgorithm::kTree:
      // NCCL's tree: a chain through each node's GPUs, a double binary tree
      // across nodes. One node, or one GPU per node: the double binary tree
      // over the group; several of each: the node's level as a ring (the
      // chain's bytes on every NVLink), the tree across.
      if (nodes == 1 || per_node == 1) {
        c.algorithm = AlgorithmKind::kDoubleBinaryTree;
        return c;
      }
      return hierarchical(AlgorithmKind::kRing, AlgorithmKind::kDoubleBinaryTree);
    case NcclAlgorithm::kNvls:
      if (nodes == 1) {
        if (!in_switch_here(true)) {
          why_not = "the group's switches do not pull (NVLS)";
          return std::nullopt;
        }
        c.algorithm = AlgorithmKind::kInSwitch;
        return c;
      }
      return hierarchical(AlgorithmKind::kInSwitch,
                          AlgorithmKind::kInSwitch);  // NVLS with CollNet (SHARP) across nodes
    case NcclAlgorithm::kNvlsTree:
      return hierarchical(AlgorithmKind::kInSwitch, AlgorithmKind::kDoubleBinaryTree);
    case NcclAlgorithm::kCollNetDirect:
    case NcclAlgorithm::kCollNetChain:
      if (per_node == 1 && in_switch_here(false)) {
        c.algorithm = AlgorithmKind::kInSwitch;
        return c;
      }
      return hierarchical(a == NcclAlgorithm::kCollNetDirect ? AlgorithmKind::kDirect : AlgorithmKind::kRing,
                          AlgorithmKind::kInSwitch);
  }
  return std::nullopt;
}

bool p2p_levels(const std::vector<Dimension>& levels) {
  for (const Dimension& d : levels) {
    if (d.size > 1 && !point_to_point(d.algorithm)) return false;
  }
  return true;
}
}  // namespace

std::string CollectiveChoice::nccl_name() const {
  if (!nccl || nccl->candidates.empty()) return "";
  const NcclCandidate& r = nccl->candidates[ran];
  return std::string(to_string(r.algorithm)) + "/" + nccl_protocol_name(r.protocol) + " x" + std::to_string(r.channels);
}

CollectiveChoice choose_collective(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type,
                                   std::uint64_t bytes, const std::vector<int>& ranks, bool group_is_world) {
  const int n = static_cast<int>(ranks.size());
  std::string fallback_note;
  if (config.library == CollectiveLibrary::kNccl && hints.nccl && chosen_by_default(config, type, ranks) && n > 1) {
    const int nodes = nodes_of(config, ranks);
    NcclDecision d = hints.nccl->decide(type, bytes, n, nodes);
    if (!d.candidates.empty()) {
      // NCCL's pick first, then the others by its time: the first that
      // fabricsim can run on this group runs.
      std::vector<std::size_t> order(d.candidates.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        const bool xp = d.candidates[x].algorithm == d.algorithm && d.candidates[x].protocol == d.protocol;
        const bool yp = d.candidates[y].algorithm == d.algorithm && d.candidates[y].protocol == d.protocol;
        if (xp != yp) return xp;
        return d.candidates[x].time_us < d.candidates[y].time_us;
      });
      std::string first_why;
      for (std::size_t k = 0; k < order.size(); ++k) {
        const NcclCandidate& cand = d.candidates[order[k]];
        std::string why;
        auto c = run_as(config, hints, type, cand.algorithm, ranks, group_is_world, nodes, why);
        if (k == 0) first_why = why;
        if (!c) continue;
        const bool p2p = point_to_point(c->algorithm) ||
                         (c->algorithm == AlgorithmKind::kHierarchical && c->dims && p2p_levels(*c->dims));
        if (!p2p) {
          c->protocol = CommProtocol::kPlain;
        } else if (config.protocol != ProtocolChoice::kAuto) {
          c->protocol = candidate_protocols(config).front();
        } else {
          c->protocol = protocol_of(cand.protocol);
        }
        if (c->algorithm == AlgorithmKind::kRing && nodes > 1) c->channels = static_cast<std::uint32_t>(cand.channels);
        c->ran = order[k];
        if (k > 0) {
          c->note = std::string("NCCL picks ") + to_string(d.algorithm) + "/" + nccl_protocol_name(d.protocol) +
                    ", which fabricsim cannot run here (" + first_why +
                    "); the next of NCCL's candidates by its time runs";
        }
        c->nccl = std::move(d);
        return *c;
      }
    }
    // None runs: fabricsim's own choice, saying so.
    if (NcclTuner::tunes(type)) {
      fallback_note = d.candidates.empty()
                          ? "NCCL has no algorithm and protocol enabled that run on this group (NCCL itself would fail "
                            "the call); fabricsim's fastest runs"
                          : "none of NCCL's candidates can run on this group in fabricsim; fabricsim's fastest runs";
    }
  }
  CollectiveChoice c;
  c.note = fallback_note;
  c.algorithm = choose_algorithm(config, hints, type, bytes, ranks, group_is_world);
  c.protocol = choose_protocol(config, hints, type, c.algorithm, bytes, ranks);
  c.dims = c.algorithm == AlgorithmKind::kHierarchical ? choose_levels(config, hints, type, bytes) : &config.dims;
  return c;
}

}  // namespace fabricsim
