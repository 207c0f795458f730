#include "models/collectives/algorithm_choice.h"

#include <algorithm>
#include <cmath>

namespace fabricsim {

namespace {
constexpr std::uint64_t kLarge = 1u << 20;  // where bandwidth starts to matter more than latency
constexpr std::uint64_t kInSwitchAllGather = 4u << 20;
constexpr std::uint64_t kInSwitchReduceScatter = 1u << 20;
bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }
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

namespace {
/// Whether an in-switch all-reduce of n members moves fewer bytes through
/// each NPU's busiest link direction than a ring's 2(n-1)/n S. Pulled (NVLS):
/// the units read all of S from every member and each member stores its
/// reduced S/n for the multicast, (1 + 1/n) S up: fewer from n = 4 on
/// (equal at 3). Pushed (SHARP): S up and S down: fewer from n = 3 on.
bool in_switch_all_reduce_moves_less(int n, bool pull) {
  return pull ? n + 1 < 2 * (n - 1) : n < 2 * (n - 1);
}
}  // namespace

AlgorithmKind default_algorithm(CollectiveType type, std::uint64_t bytes, const std::vector<int>& ranks,
                                bool group_is_world, const PlatformHints& hints) {
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
  const bool rooted = type == CollectiveType::kBroadcast || type == CollectiveType::kReduce;
  if (hints.shape == "multi_dimensional" && group_is_world && type == CollectiveType::kAllReduce) {
    return AlgorithmKind::kHierarchical;  // in-switch within the dimensions that have reduction units
  }
  // Switch reduction units, where the group has them: all-reduce sends each
  // byte up once and down once (where that is fewer bytes than a ring's:
  // not on 2 NPUs), broadcast and reduce become one multicast or one
  // reduction. All-gather and reduce-scatter gain only while few steps
  // matter more than bytes: a multicast also returns the sender's own data,
  // and pulled reductions carry read requests (crossovers on dgx_h100,
  // docs/collectives.md).
  if (const int domain = hints.in_switch_domain(ranks); domain >= 0) {
    const bool pull = static_cast<std::size_t>(domain) < hints.in_switch_pull.size() &&
                      hints.in_switch_pull[static_cast<std::size_t>(domain)];
    switch (type) {
      case CollectiveType::kAllReduce:
        if (in_switch_all_reduce_moves_less(n, pull)) return AlgorithmKind::kInSwitch;
        break;
      case CollectiveType::kBroadcast:
      case CollectiveType::kReduce:
        return AlgorithmKind::kInSwitch;
      case CollectiveType::kAllGather:
        if (bytes < kInSwitchAllGather) return AlgorithmKind::kInSwitch;
        break;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
        if (bytes < kInSwitchReduceScatter) return AlgorithmKind::kInSwitch;
        break;
      default:
        break;
    }
  }
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

AlgorithmKind choose_algorithm(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type,
                               std::uint64_t bytes, const std::vector<int>& ranks, bool group_is_world) {
  const auto& chosen = config.algorithm[static_cast<int>(type)];
  if (chosen) return *chosen;
  return default_algorithm(type, bytes, ranks, group_is_world, hints);
}

}  // namespace fabricsim

namespace fabricsim {

const char* to_string(CommProtocol p) {
  switch (p) {
    case CommProtocol::kPlain: return "plain";
    case CommProtocol::kSimple: return "simple";
    case CommProtocol::kLL: return "ll";
    case CommProtocol::kLL128: return "ll128";
  }
  return "?";
}

namespace {
bool point_to_point(AlgorithmKind a) {
  return a == AlgorithmKind::kRing || a == AlgorithmKind::kDirect || a == AlgorithmKind::kHalvingDoubling ||
         a == AlgorithmKind::kDoubleBinaryTree;
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
    case AlgorithmKind::kRing: return all_reduce ? 2 * (n - 1) : n - 1;
    case AlgorithmKind::kDirect: return all_reduce ? 2 : 1;
    case AlgorithmKind::kHalvingDoubling:
    case AlgorithmKind::kDoubleBinaryTree: return (all_reduce ? 2 : 1) * ceil_log2(n);
    default: return 1;
  }
}

/// Bytes each NPU sends, as nccl-tests' bus bandwidth counts them.
double bus_bytes(CollectiveType type, std::uint64_t bytes, int n) {
  const double s = static_cast<double>(bytes);
  switch (type) {
    case CollectiveType::kAllReduce: return s * 2.0 * (n - 1) / n;
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce: return s;
    case CollectiveType::kBarrier: return 0;
    default: return s * (n - 1) / n;
  }
}
}  // namespace

double protocol_estimate(const CollectiveConfig& config, const PlatformHints::FabricCosts& costs, CommProtocol p,
                         CollectiveType type, AlgorithmKind algorithm, std::uint64_t bytes, int n) {
  const int index = p == CommProtocol::kLL ? 1 : p == CommProtocol::kLL128 ? 2 : 0;
  const double wire = static_cast<double>(protocol_bytes(static_cast<std::uint64_t>(bus_bytes(type, bytes, n)), p));
  const double seconds = costs.bandwidth > 0 ? wire / costs.bandwidth : 0;
  return static_cast<double>(config.launch(p)) + sequential_steps(type, algorithm, n) * static_cast<double>(costs.step[index]) +
         seconds * 1e12;
}

CommProtocol choose_protocol(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type,
                             AlgorithmKind algorithm, std::uint64_t bytes, const std::vector<int>& ranks) {
  if (!point_to_point(algorithm)) return CommProtocol::kPlain;
  switch (config.protocol) {
    case ProtocolChoice::kSimple: return CommProtocol::kSimple;
    case ProtocolChoice::kLL: return CommProtocol::kLL;
    case ProtocolChoice::kLL128: return CommProtocol::kLL128;
    case ProtocolChoice::kAuto: break;
  }
  // The fabric holding the whole group; else the slowest its members use.
  const PlatformHints::FabricCosts* costs = nullptr;
  for (const auto& f : hints.fabric_costs) {
    bool all = !f.npus.empty();
    for (int r : ranks) all = all && std::binary_search(f.npus.begin(), f.npus.end(), r);
    if (all) {
      costs = &f;
      break;
    }
  }
  if (!costs) {
    for (const auto& f : hints.fabric_costs) {
      if (f.npus.empty()) continue;
      if (!costs || f.step[0] > costs->step[0] || (f.step[0] == costs->step[0] && f.bandwidth < costs->bandwidth)) {
        costs = &f;
      }
    }
  }
  if (!costs) return CommProtocol::kPlain;
  const int n = static_cast<int>(ranks.size());
  CommProtocol best = CommProtocol::kSimple;
  double best_time = protocol_estimate(config, *costs, best, type, algorithm, bytes, n);
  for (CommProtocol p : {CommProtocol::kLL128, CommProtocol::kLL}) {
    const double t = protocol_estimate(config, *costs, p, type, algorithm, bytes, n);
    if (t < best_time) {
      best = p;
      best_time = t;
    }
  }
  return best;
}

}  // namespace fabricsim
