// What the default choice of collective algorithms needs to know of the
// platform, without SystemC: the platform description holds it
// (platforms/assembly/platform_spec.h); algorithm_choice.h decides by it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/collectives/cost_model.h"
#include "models/collectives/nccl_tuner.h"

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
  /// Per fabric (declaration order), what the cost model of the default
  /// choices needs (cost_model.h). Empty: protocols are not chosen (`auto`
  /// leaves steps plain) and in-switch algorithms are taken wherever they
  /// apply.
  using FabricCosts = ::fabricsim::FabricCosts;
  std::vector<FabricCosts> fabric_costs;
  /// The platform's routed cost model (null: the rules of thumb of
  /// docs/collectives.md decide among point-to-point algorithms).
  CostModel* cost_model = nullptr;
  /// NCCL's tuner on this machine, where the platform runs NCCL
  /// (collectives.library: nccl).
  std::shared_ptr<const NcclTuner> nccl;
  /// The domain holding every rank, or -1.
  int in_switch_domain(const std::vector<int>& ranks) const;
  bool in_switch(const std::vector<int>& ranks) const { return in_switch_domain(ranks) >= 0; }
};

}  // namespace fabricsim
