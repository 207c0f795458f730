// Max-min fair rates for flows sharing capacity-limited resources (links,
// NIC injection), recomputed only where something changed.
//
// Each flow crosses a list of resources. Its max-min fair rate is found by
// progressive filling: the resource whose capacity left, split evenly among
// its flows not yet fixed, is smallest fixes those flows at that share; the
// others it crosses lose what they take; repeat until every flow is fixed.
// No flow can then gain without taking from one that has no more.
//
// Adding or removing a flow changes the rates only of the flows connected
// to it through shared resources (its component), and of those only the
// ones at least as fast as a threshold: progressive filling fixes flows
// slowest first, and until it reaches the level of a removed flow (or the
// least an added flow can get, min over its path of capacity / flows) it
// runs the same with or without it, so every slower flow keeps its rate.
// Only the flows above the threshold, reached through one another, are
// recomputed, on what the slower ones leave: flows on disjoint paths (a
// ring on a switch) cost nothing when their neighbours start and end, and
// the fastest flow of a congested fabric ending costs only its peers.
//
// No SystemC: tests/flow/test_max_min_shares.cpp checks the arithmetic alone.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace fabricsim {

class MaxMinShares {
 public:
  using FlowId = std::uint32_t;
  using ResourceId = std::uint32_t;

  /// A resource of `capacity` (any unit per unit of time; the flows' rates
  /// come out in it). Capacity must be positive and finite: a resource
  /// without a limit is simply not listed in a flow's path.
  ResourceId add_resource(double capacity);
  std::size_t resources() const { return capacity_.size(); }
  double capacity(ResourceId r) const { return capacity_[r]; }

  /// A flow across `path` (at least one resource; a resource listed twice
  /// counts twice). Its rate is 0 until the next rebalance().
  FlowId add_flow(const std::vector<ResourceId>& path);
  /// The flow is gone; its id may be handed out again.
  void remove_flow(FlowId f);
  double rate(FlowId f) const { return flows_[f].rate; }
  std::size_t active_flows() const { return active_; }
  /// Flows on resource `r` now.
  std::size_t flows_on(ResourceId r) const { return on_[r].size(); }

  /// Recomputes the rates of every flow connected to a flow added or
  /// removed since the last call. `settle(f)` is called for each of them
  /// before its rate changes (for the caller to account what it moved at
  /// the old rate), `changed(f)` after, for each whose rate differs.
  template <class Settle, class Changed>
  void rebalance(Settle&& settle, Changed&& changed) {
    collect_component();
    for (FlowId f : component_flows_) settle(f);
    fill();
    for (FlowId f : component_flows_) {
      if (flows_[f].rate != flows_[f].previous) changed(f);
    }
  }
  bool needs_rebalance() const { return !dirty_.empty(); }

 private:
  struct Flow {
    std::vector<ResourceId> path;
    double rate = 0;
    double previous = 0;
    std::uint32_t seen = 0;  // component walk stamp
    bool fixed = false;
    bool live = false;
    bool fresh = false;  // added since the last rebalance: no rate yet
  };
  /// Whether `flow` keeps its rate in this rebalance (slower than the threshold).
  bool frozen(const Flow& flow) const { return !flow.fresh && flow.rate < threshold_; }
  void collect_component();
  void fill();

  std::vector<double> capacity_;
  std::vector<std::vector<FlowId>> on_;  // per resource: its flows
  std::vector<std::uint32_t> resource_seen_;
  std::vector<Flow> flows_;
  std::vector<FlowId> free_;
  std::vector<ResourceId> dirty_;  // resources whose flows changed
  std::size_t active_ = 0;
  std::uint32_t stamp_ = 0;
  double threshold_ = std::numeric_limits<double>::infinity();  // flows slower than this keep their rates (see the top)
  // Scratch, kept between calls so a rebalance does not allocate.
  std::vector<FlowId> component_flows_;
  std::vector<ResourceId> component_resources_;
  std::vector<double> left_;            // per resource: capacity not yet given
  std::vector<std::uint32_t> unfixed_;  // per resource: flows not yet fixed
  std::vector<ResourceId> shared_;      // resources whose flows are not all fixed yet
};

}  // namespace fabricsim
