#include "platforms/assembly/in_network_control.h"

#include <stdexcept>

#include "tlm/util/errors.h"

namespace fabricsim {

void InNetworkControl::add_fabric(std::uint16_t fabric, AggregationManager* manager, bool pull,
                                  std::uint64_t pipeline_bytes, std::uint32_t pipeline_depth) {
  if (fabrics_.size() <= fabric) fabrics_.resize(fabric + 1u);
  fabrics_[fabric] = Fabric{manager, pull, pipeline_bytes, pipeline_depth};
}

bool InNetworkControl::any() const {
  for (const Fabric& f : fabrics_) {
    if (f.manager) return true;
  }
  return false;
}

InSwitchPlan InNetworkControl::in_switch_plan(const std::vector<int>& ranks, int me) {
  std::uint16_t fabric = 0;
  bool found = false;
  for (const auto& a : directory_.attachments(ranks.at(static_cast<std::size_t>(me)))) {
    if (a.fabric >= fabrics_.size() || !fabrics_[a.fabric].manager) continue;
    bool all = true;
    for (int r : ranks) all &= directory_.on(r, a.fabric) != nullptr;
    if (all) {
      fabric = a.fabric;
      found = true;
      break;
    }
  }
  if (!found) {
    throw std::invalid_argument("the NPUs of the group are not all on one fabric whose switches have reduction units");
  }
  const Fabric& units = fabrics_[fabric];
  AggregationManager& manager = *units.manager;
  std::vector<Address> members;
  std::uint64_t key = 0xcbf29ce484222325ull ^ fabric;  // FNV-1a over the members' addresses
  for (int r : ranks) {
    members.push_back(directory_.on(r, fabric)->address);
    key = (key ^ members.back()) * 0x100000001b3ull;
  }
  manager.register_group(key, members);
  InSwitchPlan plan;
  plan.group = key;
  const Address mine = members.at(static_cast<std::size_t>(me));
  try {
    const bool flat = manager.single_level(key);
    plan.pull = flat && units.pull;
    plan.pipeline_bytes = units.pipeline_bytes;
    plan.pipeline_depth = units.pipeline_depth;
    // Every member splits its bytes as the first member does, so that the
    // stripes line up at each unit.
    const auto& weights = manager.weights_of(flat ? members.front() : mine);
    for (Address u : manager.units_of(mine)) {
      if (u == kNoAddress) throw ModelError("a switch of the group has no reduction unit");
      plan.units.push_back(directory_.unit_peer(fabric, u));
    }
    plan.weights.assign(weights.begin(), weights.end());
  } catch (const ModelError& e) {
    throw std::invalid_argument(e.what());
  }
  return plan;
}

}  // namespace fabricsim
