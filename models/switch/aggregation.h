// The in-network aggregation control plane of one fabric, as a SHARP
// aggregation manager or the NVSwitch fabric manager sets groups up before
// collectives run: which NPUs a group has, and, for each reduction unit, what
// it aggregates and where it sends the result.
//
// Single level: every member hangs off the unit's switch (one NVSwitch, or
// each of the NVSwitches a DGX stripes over). Multi-level (fat trees): the
// members' leaf units aggregate their local members and pass partial results
// up a tree of units to a root, which sends the result back down.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tlm/fabric_protocol.h"

namespace fabricsim {

class AggregationManager {
 public:
  /// What one unit does for one group.
  struct Plan {
    std::vector<Address> local;     // members attached to this unit's switch, in group order
    std::vector<int> local_index;   // their indexes in the group
    std::vector<Address> children;  // units below, whose partial results this one combines
    Address parent = kNoAddress;    // unit above; none at the root
    /// Contributor -> its place in the order of combination: local members
    /// in group order, then the units below in address order.
    std::unordered_map<Address, int> position;
    unsigned expected() const { return static_cast<unsigned>(local.size() + children.size()); }
  };

  /// The fabric as the builder made it: for each switch, its unit's address
  /// (kNoAddress without one) and its level; for each NPU endpoint, the
  /// switches it hangs off (several when it stripes over them); and the
  /// switch graph.
  struct Topology {
    std::vector<Address> unit_of_switch;
    std::vector<int> level_of_switch;
    std::map<Address, std::vector<int>> switches_of_endpoint;           // NIC address -> switch indexes
    std::map<Address, std::vector<std::uint64_t>> weights_of_endpoint;  // the links' bandwidths, in the same order
    std::vector<std::vector<int>> switch_neighbours;                    // switch index -> switch indexes
  };
  void set_topology(Topology t) { topology_ = std::move(t); }

  /// Declares a group's members (their NIC addresses on this fabric, in group
  /// order). Idempotent: every member declares it when it starts a collective.
  void register_group(std::uint64_t group, const std::vector<Address>& members);
  bool has_group(std::uint64_t group) const { return members_.count(group) > 0; }
  const std::vector<Address>& members(std::uint64_t group) const;
  /// What unit `unit` does for `group`; throws ModelError when the unit is not
  /// on the group's tree.
  const Plan& plan(std::uint64_t group, Address unit);
  /// Whether the group's members all hang off the same switches (one, or
  /// several they stripe over): one unit per stripe, no tree. Otherwise each
  /// member hangs off one leaf switch and the units form a tree.
  bool single_level(std::uint64_t group);
  /// The units a group's member sends to: those of the switches it hangs off.
  std::vector<Address> units_of(Address endpoint) const;
  /// How an endpoint splits its bytes between those units (its links' bandwidths).
  const std::vector<std::uint64_t>& weights_of(Address endpoint) const;

 private:
  void build_tree(std::uint64_t group);
  const std::vector<int>& switches_of(Address endpoint) const;

  Topology topology_;
  std::map<std::uint64_t, bool> single_level_;
  std::map<std::uint64_t, std::vector<Address>> members_;
  std::map<std::uint64_t, std::map<Address, Plan>> plans_;
};

}  // namespace fabricsim
