// Which algorithm a collective uses when the user has not said: by platform
// shape, group and size. The rules, and why, are in docs/collectives.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/collectives/collective.h"
#include "models/collectives/collective_engine.h"
#include "models/collectives/cost_model.h"
#include "models/collectives/nccl_tuner.h"
#include "models/collectives/platform_hints.h"

namespace fabricsim {

AlgorithmKind default_algorithm(const CollectiveConfig& config, CollectiveType type, std::uint64_t bytes,
                                const std::vector<int>& ranks, bool group_is_world, const PlatformHints& hints);

/// The protocol of a collective's steps. kPlain for algorithms that are not
/// point-to-point steps (in-switch, hierarchical). Otherwise the configured
/// one, or under `auto` NCCL's way: the protocol with the least estimate,
/// routed (cost_model.h) where the platform has a cost model, else
///   launch + steps x (step overhead + hop) + bus bytes on the wire / bandwidth
/// on the fabric that holds the whole group (else the slowest its members
/// are on); kPlain when the platform gives no costs.
CommProtocol choose_protocol(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type,
                             AlgorithmKind algorithm, std::uint64_t bytes, const std::vector<int>& ranks);
/// The costs of the fabric holding every rank, else of the slowest fabric
/// any of them is on; nullptr when the platform gives none.
const PlatformHints::FabricCosts* group_costs(const PlatformHints& hints, const std::vector<int>& ranks);
/// NCCL-style estimate (ticks) of an in-switch collective: its steps' plain
/// overhead and hops, and the bytes through a member's busiest link
/// direction (docs/collectives.md, "The default choice").
/// `links`: links on the longest path between two members (2 through one
/// switch; 4 up a tree of units to a spine and down): each unit a frame
/// passes beyond the first takes it whole before sending it on, and adds a
/// hop's half.
Estimate in_switch_estimate(const PlatformHints::FabricCosts& costs, bool pull, CollectiveType type,
                            std::uint64_t bytes, int n, int links = 2);
/// The protocol's cost-model estimate of the collective's time (ticks), for
/// choose_protocol and its tests.
double protocol_estimate(const CollectiveConfig& config, const PlatformHints::FabricCosts& costs, CommProtocol p,
                         CollectiveType type, AlgorithmKind algorithm, std::uint64_t bytes, int n);
const char* to_string(CommProtocol p);

/// Largest group the routed cost model is asked about: it runs every
/// member's programs and routes every message, O(members x messages).
constexpr int kRoutedCostModelMembers = 256;

/// The routed cost model's estimate (ticks) of every algorithm the default
/// choice weighs for this collective, in the order weighed (empty where the
/// platform has no cost model or the group is too large for it).
std::vector<std::pair<AlgorithmKind, double>> default_estimates(const CollectiveConfig& config, CollectiveType type,
                                                                std::uint64_t bytes, const std::vector<int>& ranks,
                                                                bool group_is_world, const PlatformHints& hints);

/// Each rank's node (a group of the platform's lowest level) less the first
/// rank's; empty on a platform of one level.
std::vector<int> node_offsets(const CollectiveConfig& config, const std::vector<int>& ranks);

/// Whether the default choice picks this collective's algorithm: false where
/// the platform, the system file or --set names one for the type, or the
/// system file runs groups smaller than the platform as rings.
bool chosen_by_default(const CollectiveConfig& config, CollectiveType type, const std::vector<int>& ranks);

/// The algorithms the default choice simulates before it takes one: those
/// default_estimates puts within config.probe_margin of its fastest, the
/// fastest estimate first, one of any with equal estimates (the same
/// messages). Fewer than two (the algorithm is not the default choice's to
/// make, no cost model, a margin of 0, or one clear winner): the estimate
/// decides alone, nothing is simulated.
std::vector<AlgorithmKind> probe_candidates(const CollectiveConfig& config, CollectiveType type, std::uint64_t bytes,
                                            const std::vector<int>& ranks, bool group_is_world,
                                            const PlatformHints& hints);

/// The levels a hierarchical collective of `bytes` over the whole platform
/// runs. All-reduce: those the platform or the user named keep their
/// algorithm, the others take the cost model's fastest (the platform's own
/// levels where there is no routed cost model). Other types: the type's
/// own levels. The pointer lasts as long as the platform.
const std::vector<Dimension>* choose_levels(const CollectiveConfig& config, const PlatformHints& hints,
                                            CollectiveType type, std::uint64_t bytes);

/// How a collective runs: what the platform or the user named, else the
/// default choice of the platform's library (collectives.library).
struct CollectiveChoice {
  AlgorithmKind algorithm = AlgorithmKind::kRing;
  CommProtocol protocol = CommProtocol::kPlain;
  /// Hierarchical: its levels (lasting as long as the platform); else the
  /// platform's dimensions.
  const std::vector<Dimension>* dims = nullptr;
  std::uint32_t channels = 0;  // a ring's channels across nodes; 0: the platform's
  /// Under `library: nccl`, chosen by default: NCCL's decision, and which of
  /// its candidates runs (`ran`: its index in decision.candidates). NCCL's
  /// own pick runs unless fabricsim cannot run it on this group (`note`
  /// says why); then the next in NCCL's order of time that it can.
  std::optional<NcclDecision> nccl;
  std::size_t ran = 0;
  std::string note;
  /// "NVLS/Simple x16" for reports: what NCCL runs, or "" when not NCCL's choice.
  std::string nccl_name() const;
};

/// The whole choice for one collective: algorithm, protocol, levels and
/// channels. Under `library: best` (or where the algorithm is named) as
/// choose_algorithm, choose_protocol and choose_levels give them; under
/// `library: nccl`, NCCL's tuner (nccl_tuner.h) mapped onto fabricsim's
/// algorithms (docs/collectives.md, "The collective library"). Throws
/// std::invalid_argument where the platform's named levels cannot run.
CollectiveChoice choose_collective(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type,
                                   std::uint64_t bytes, const std::vector<int>& ranks, bool group_is_world);

/// The configured algorithm for `type`, or the default choice.
AlgorithmKind choose_algorithm(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type,
                               std::uint64_t bytes, const std::vector<int>& ranks, bool group_is_world);

}  // namespace fabricsim
