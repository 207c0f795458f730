#include "models/flow/max_min_shares.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace fabricsim {

MaxMinShares::ResourceId MaxMinShares::add_resource(double capacity) {
  if (!(capacity > 0) || !std::isfinite(capacity)) {
    throw std::invalid_argument("a shared resource needs a positive, finite capacity");
  }
  capacity_.push_back(capacity);
  on_.emplace_back();
  resource_seen_.push_back(0);
  left_.push_back(0);
  unfixed_.push_back(0);
  return static_cast<ResourceId>(capacity_.size() - 1);
}

MaxMinShares::FlowId MaxMinShares::add_flow(const std::vector<ResourceId>& path) {
  if (path.empty()) throw std::invalid_argument("a flow must cross at least one shared resource");
  for (ResourceId r : path) {
    if (r >= on_.size()) throw std::out_of_range("a flow crosses a resource that does not exist");
  }
  FlowId f;
  if (!free_.empty()) {
    f = free_.back();
    free_.pop_back();
  } else {
    f = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
  }
  Flow& flow = flows_[f];
  flow.path = path;
  flow.rate = 0;
  flow.previous = 0;
  flow.live = true;
  for (ResourceId r : path) {
    on_[r].push_back(f);
    dirty_.push_back(r);
  }
  // The least it can get: no flow's max-min rate is below its narrowest
  // equal split. Flows slower than that keep their rates.
  double least = std::numeric_limits<double>::infinity();
  for (ResourceId r : path) least = std::min(least, capacity_[r] / static_cast<double>(on_[r].size()));
  threshold_ = std::min(threshold_, least * (1 - 1e-9));
  flow.fresh = true;
  ++active_;
  return f;
}

void MaxMinShares::remove_flow(FlowId f) {
  Flow& flow = flows_.at(f);
  if (!flow.live) throw std::logic_error("a flow removed twice");
  for (ResourceId r : flow.path) {
    auto& list = on_[r];
    const auto it = std::find(list.begin(), list.end(), f);
    *it = list.back();
    list.pop_back();
    dirty_.push_back(r);
  }
  // Flows slower than it keep their rates (a flow never rated frees nothing).
  threshold_ = std::min(threshold_, flow.fresh ? 0.0 : flow.rate * (1 - 1e-9));
  flow.live = false;
  flow.fresh = false;
  flow.path.clear();
  flow.rate = 0;
  free_.push_back(f);
  --active_;
}

void MaxMinShares::collect_component() {
  // Every flow and resource reachable from the changed resources through
  // shared resources: breadth first, stamped so each is taken once.
  ++stamp_;
  component_flows_.clear();
  component_resources_.clear();
  for (ResourceId r : dirty_) {
    if (resource_seen_[r] == stamp_) continue;
    resource_seen_[r] = stamp_;
    component_resources_.push_back(r);
  }
  dirty_.clear();
  for (std::size_t i = 0; i < component_resources_.size(); ++i) {
    for (FlowId f : on_[component_resources_[i]]) {
      Flow& flow = flows_[f];
      if (flow.seen == stamp_ || frozen(flow)) continue;  // a frozen flow keeps its rate: not a way through
      flow.seen = stamp_;
      component_flows_.push_back(f);
      for (ResourceId r : flow.path) {
        if (resource_seen_[r] == stamp_) continue;
        resource_seen_[r] = stamp_;
        component_resources_.push_back(r);
      }
    }
  }
}

void MaxMinShares::fill() {
  // Progressive filling of the component's flows, on what the frozen flows
  // (slower than the threshold) leave of each resource.
  for (ResourceId r : component_resources_) {
    left_[r] = capacity_[r];
    unfixed_[r] = 0;
    for (FlowId f : on_[r]) {
      if (flows_[f].seen == stamp_) {
        ++unfixed_[r];
      } else {
        left_[r] -= flows_[f].rate;
      }
    }
  }
  // A flow alone on every resource it crosses (each step of a ring on a
  // switch) simply gets its narrowest: no level for it.
  for (FlowId f : component_flows_) {
    Flow& flow = flows_[f];
    flow.previous = flow.fresh ? -1.0 : flow.rate;  // a new flow is always told its rate
    flow.fresh = false;
    flow.fixed = true;
    double rate = std::numeric_limits<double>::infinity();
    for (ResourceId r : flow.path) {
      if (unfixed_[r] != 1) {
        flow.fixed = false;
        break;
      }
      rate = std::min(rate, std::max(0.0, left_[r]));
    }
    if (!flow.fixed) continue;
    flow.rate = rate;
    for (ResourceId r : flow.path) unfixed_[r] = 0;
  }
  // Level by level: the smallest fair share among the resources still
  // shared is the next level; every resource at that share (to rounding)
  // fixes its unfixed flows at it, which leaves its other resources less
  // to share among fewer (their shares only rise).
  auto& shared = shared_;
  shared.clear();
  for (ResourceId r : component_resources_) {
    if (unfixed_[r] > 0) shared.push_back(r);
  }
  while (!shared.empty()) {
    double level = std::numeric_limits<double>::infinity();
    for (ResourceId r : shared) level = std::min(level, std::max(0.0, left_[r]) / unfixed_[r]);
    const double bound = level * (1 + 1e-12);
    std::size_t kept = 0;
    for (ResourceId r : shared) {
      if (unfixed_[r] > 0 && std::max(0.0, left_[r]) / unfixed_[r] <= bound) {
        for (FlowId f : on_[r]) {
          Flow& flow = flows_[f];
          if (flow.seen != stamp_ || flow.fixed) continue;
          flow.fixed = true;
          flow.rate = level;
          for (ResourceId q : flow.path) {
            left_[q] -= level;
            --unfixed_[q];
          }
        }
      }
      if (unfixed_[r] > 0) shared[kept++] = r;
    }
    shared.resize(kept);
  }
  threshold_ = std::numeric_limits<double>::infinity();
}

}  // namespace fabricsim
