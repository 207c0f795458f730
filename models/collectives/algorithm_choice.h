// Which algorithm a collective uses when the user has not said: by platform
// shape, group and size. The rules, and why, are in docs/collectives.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/collective.h"
#include "models/collectives/collective_engine.h"

namespace fabricsim {

/// What the default choice needs to know of the platform.
struct PlatformHints {
  /// ring, fully_connected, switch, fat_tree, torus, mesh, netlist, or
  /// multi_dimensional (several dimensions of more than one NPU).
  std::string shape = "ring";
  /// The NPUs of each fabric whose switches have reduction units (sorted):
  /// a group inside one of them can run in-switch collectives.
  std::vector<std::vector<int>> in_switch_domains;
  /// Per domain: its units pull (NVLS: members read reduced ranges) rather
  /// than push (SHARP: contributions go up, results come down).
  std::vector<bool> in_switch_pull;
  /// Per fabric (declaration order), what NCCL's cost model needs to pick a
  /// protocol: its NPUs (sorted), each protocol's per-step latency
  /// (Simple, LL, LL128: the NIC's step overhead plus a link's latency) and
  /// the bytes per second an NPU sends into it. Empty: protocols are not
  /// chosen (`auto` leaves steps plain).
  struct FabricCosts {
    std::vector<int> npus;
    Tick step[3] = {0, 0, 0};
    double bandwidth = 0;
  };
  std::vector<FabricCosts> fabric_costs;
  /// The domain holding every rank, or -1.
  int in_switch_domain(const std::vector<int>& ranks) const;
  bool in_switch(const std::vector<int>& ranks) const { return in_switch_domain(ranks) >= 0; }
};

AlgorithmKind default_algorithm(CollectiveType type, std::uint64_t bytes, const std::vector<int>& ranks,
                                bool group_is_world, const PlatformHints& hints);

/// The protocol of a collective's steps. kPlain for algorithms that are not
/// point-to-point steps (in-switch, hierarchical). Otherwise the configured
/// one, or under `auto` NCCL's way: the protocol with the least
///   launch + steps x step latency + bus bytes on the wire / bandwidth,
/// on the fabric that holds the whole group (else the slowest its members
/// are on); kPlain when the platform gives no costs.
CommProtocol choose_protocol(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type,
                             AlgorithmKind algorithm, std::uint64_t bytes, const std::vector<int>& ranks);
/// The protocol's cost-model estimate of the collective's time (ticks), for
/// choose_protocol and its tests.
double protocol_estimate(const CollectiveConfig& config, const PlatformHints::FabricCosts& costs, CommProtocol p,
                         CollectiveType type, AlgorithmKind algorithm, std::uint64_t bytes, int n);
const char* to_string(CommProtocol p);

/// The configured algorithm for `type`, or the default choice.
AlgorithmKind choose_algorithm(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type,
                               std::uint64_t bytes, const std::vector<int>& ranks, bool group_is_world);

}  // namespace fabricsim
