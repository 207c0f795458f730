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
  /// The domain holding every rank, or -1.
  int in_switch_domain(const std::vector<int>& ranks) const;
  bool in_switch(const std::vector<int>& ranks) const { return in_switch_domain(ranks) >= 0; }
};

AlgorithmKind default_algorithm(CollectiveType type, std::uint64_t bytes, const std::vector<int>& ranks,
                                bool group_is_world, const PlatformHints& hints);

/// The configured algorithm for `type`, or the default choice.
AlgorithmKind choose_algorithm(const CollectiveConfig& config, const PlatformHints& hints, CollectiveType type,
                               std::uint64_t bytes, const std::vector<int>& ranks, bool group_is_world);

}  // namespace fabricsim
