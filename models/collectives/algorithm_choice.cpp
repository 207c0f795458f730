#include "models/collectives/algorithm_choice.h"

#include <algorithm>

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
