// The in-network reduction control plane: what SHARP's aggregation manager
// or the NVSwitch fabric manager is to a real machine. It knows, per fabric,
// the switches' reduction units (their AggregationManager) and how the
// platform runs them, and answers a collective's question "how does member
// `me` of these ranks use the units?" (collective.h, InSwitchResolver). NPUs
// reach it only through that interface: nothing of an NPU knows a switch.
#pragma once

#include <cstdint>
#include <vector>

#include "models/collectives/collective.h"
#include "models/npu/directory.h"
#include "models/switch/aggregation.h"

namespace fabricsim {

class InNetworkControl final : public InSwitchResolver {
 public:
  explicit InNetworkControl(const Directory& directory) : directory_(directory) {}

  /// A fabric whose switches have reduction units: its aggregation manager,
  /// whether all-reduce pulls (NVLS) or pushes (SHARP), and the pull pipeline.
  void add_fabric(std::uint16_t fabric, AggregationManager* manager, bool pull, std::uint64_t pipeline_bytes,
                  std::uint32_t pipeline_depth);
  bool any() const;

  /// The first fabric (scale-up before scale-out) with reduction units that
  /// every member is on; the group is set up there on its first use.
  InSwitchPlan in_switch_plan(const std::vector<int>& ranks, int me) override;

 private:
  struct Fabric {
    AggregationManager* manager = nullptr;
    bool pull = false;
    std::uint64_t pipeline_bytes = 1 << 20;
    std::uint32_t pipeline_depth = 4;
  };
  const Directory& directory_;
  std::vector<Fabric> fabrics_;  // by fabric index
};

}  // namespace fabricsim
