#include "models/switch/aggregation.h"

#include <algorithm>
#include <deque>
#include <set>

#include "tlm/util/errors.h"

namespace fabricsim {

void AggregationManager::register_group(std::uint64_t group, const std::vector<Address>& members) {
  auto it = members_.find(group);
  if (it != members_.end()) {
    if (it->second != members) throw std::logic_error("in-network group declared with different members");
    return;
  }
  members_[group] = members;
}

const std::vector<Address>& AggregationManager::members(std::uint64_t group) const {
  auto it = members_.find(group);
  if (it == members_.end()) throw std::logic_error("in-network group used before it was declared");
  return it->second;
}

const std::vector<int>& AggregationManager::switches_of(Address endpoint) const {
  auto it = topology_.switches_of_endpoint.find(endpoint);
  if (it == topology_.switches_of_endpoint.end() || it->second.empty()) {
    throw ModelError("an NPU of an in-switch group hangs off no switch");
  }
  return it->second;
}

std::vector<Address> AggregationManager::units_of(Address endpoint) const {
  std::vector<Address> out;
  for (int s : switches_of(endpoint)) out.push_back(topology_.unit_of_switch[static_cast<std::size_t>(s)]);
  return out;
}

const std::vector<std::uint64_t>& AggregationManager::weights_of(Address endpoint) const {
  auto it = topology_.weights_of_endpoint.find(endpoint);
  if (it == topology_.weights_of_endpoint.end()) throw std::logic_error("an endpoint without link weights");
  return it->second;
}

bool AggregationManager::single_level(std::uint64_t group) {
  auto it = single_level_.find(group);
  if (it != single_level_.end()) return it->second;
  const auto& m = members(group);
  bool same = true;
  for (Address a : m) same &= switches_of(a) == switches_of(m.front());
  single_level_[group] = same;
  if (!same) build_tree(group);
  return same;
}

const AggregationManager::Plan& AggregationManager::plan(std::uint64_t group, Address unit) {
  auto& g = plans_[group];
  auto it = g.find(unit);
  if (it != g.end()) return it->second;
  if (!single_level(group)) {
    throw ModelError("reduction unit at address " + std::to_string(unit) + " is not on the aggregation tree of group " +
                     std::to_string(group));
  }
  // One switch (or each of the switches the members stripe over) serves
  // every member.
  Plan p;
  const auto& m = members(group);
  for (std::size_t i = 0; i < m.size(); ++i) {
    const auto units = units_of(m[i]);
    if (std::find(units.begin(), units.end(), unit) == units.end()) {
      throw ModelError("reduction unit at address " + std::to_string(unit) + " does not reach every member of group " +
                       std::to_string(group));
    }
    p.position[m[i]] = static_cast<int>(p.local.size());
    p.local.push_back(m[i]);
    p.local_index.push_back(static_cast<int>(i));
  }
  return g.emplace(unit, std::move(p)).first->second;
}

void AggregationManager::build_tree(std::uint64_t group) {
  auto& plans = plans_[group];
  const auto& m = members(group);
  // Each member's leaf switch.
  std::vector<int> leaf_of(m.size());
  std::set<int> leaves;
  for (std::size_t i = 0; i < m.size(); ++i) {
    const auto& sw = switches_of(m[i]);
    if (sw.size() != 1) {
      throw ModelError("an in-switch group over several switches needs each member on one leaf switch; NPU address " +
                       std::to_string(m[i]) + " hangs off " + std::to_string(sw.size()));
    }
    leaf_of[i] = sw.front();
    leaves.insert(sw.front());
  }
  const auto level = [&](int s) { return topology_.level_of_switch[static_cast<std::size_t>(s)]; };
  // The root: among the switches of the lowest level that reach every leaf
  // going down only (a common ancestor), the one the group's key picks, so
  // that different groups spread over the spines.
  const int top = *std::max_element(topology_.level_of_switch.begin(), topology_.level_of_switch.end());
  std::vector<int> candidates;
  for (int lv = 1; lv <= top && candidates.empty(); ++lv) {
    for (std::size_t s = 0; s < topology_.level_of_switch.size(); ++s) {
      if (level(static_cast<int>(s)) != lv) continue;
      std::set<int> below{static_cast<int>(s)};
      std::deque<int> q{static_cast<int>(s)};
      while (!q.empty()) {
        const int v = q.front();
        q.pop_front();
        for (int u : topology_.switch_neighbours[static_cast<std::size_t>(v)]) {
          if (level(u) < level(v) && below.insert(u).second) q.push_back(u);
        }
      }
      if (std::includes(below.begin(), below.end(), leaves.begin(), leaves.end())) {
        candidates.push_back(static_cast<int>(s));
      }
    }
  }
  if (candidates.empty()) throw ModelError("the members of an in-switch group have no common ancestor switch");
  const int root = candidates[group % candidates.size()];
  // Down from the root: each switch's parent is the first upper neighbour
  // that reaches it (lowest index: deterministic).
  std::map<int, int> parent{{root, -1}};
  std::deque<int> q{root};
  while (!q.empty()) {
    const int v = q.front();
    q.pop_front();
    std::vector<int> lower = topology_.switch_neighbours[static_cast<std::size_t>(v)];
    std::sort(lower.begin(), lower.end());
    for (int u : lower) {
      if (level(u) < level(v) && !parent.count(u)) {
        parent[u] = v;
        q.push_back(u);
      }
    }
  }
  // The tree: the switches on the way from each leaf of the group to the root.
  std::set<int> used;
  for (int l : leaves) {
    for (int s = l; s >= 0 && used.insert(s).second; s = parent.at(s)) {
    }
  }
  for (int s : used) {
    const Address unit = topology_.unit_of_switch[static_cast<std::size_t>(s)];
    if (unit == kNoAddress) {
      throw ModelError("in-switch reduction over several switches needs a reduction unit in every switch of the tree");
    }
    Plan p;
    const int up = parent.at(s);
    p.parent = up >= 0 ? topology_.unit_of_switch[static_cast<std::size_t>(up)] : kNoAddress;
    for (int c : used) {
      if (parent.at(c) == s) p.children.push_back(topology_.unit_of_switch[static_cast<std::size_t>(c)]);
    }
    std::sort(p.children.begin(), p.children.end());
    for (std::size_t i = 0; i < m.size(); ++i) {
      if (leaf_of[i] == s) {
        p.position[m[i]] = static_cast<int>(p.local.size());
        p.local.push_back(m[i]);
        p.local_index.push_back(static_cast<int>(i));
      }
    }
    for (Address c : p.children) p.position[c] = static_cast<int>(p.position.size());
    plans[unit] = std::move(p);
  }
}

}  // namespace fabricsim
