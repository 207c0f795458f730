// Where a router sends a frame: destination address -> one of a set of
// equal-cost output ports, picked by the frame's flow hash so that a flow
// always takes the same path (no reordering) while different flows spread.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tlm/fabric_protocol.h"

namespace fabricsim {

/// Dimension-order routing on rings, tori and meshes, computed rather than
/// looked up: a node's coordinates are the mixed-radix digits of its address
/// (x + X*(y + Y*z)). The first differing dimension is corrected, the shorter
/// way round on a wrapped dimension (ties go the positive way); a
/// forward-only ring always goes the positive way.
struct DimensionOrder {
  std::vector<int> dims;
  std::vector<bool> wrap;
  bool forward_only = false;

  int coord(Address a, std::size_t d) const {
    Address v = a;
    for (std::size_t i = 0; i < d; ++i) v /= static_cast<Address>(dims[i]);
    return static_cast<int>(v % static_cast<Address>(dims[d]));
  }
  /// The dimension to move in and the direction (+1/-1); dim -1 when a == b.
  std::pair<int, int> step(Address from, Address to) const {
    Address f = from, t = to;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      const int n = dims[d];
      const int cf = static_cast<int>(f % static_cast<Address>(n));
      const int ct = static_cast<int>(t % static_cast<Address>(n));
      f /= static_cast<Address>(n);
      t /= static_cast<Address>(n);
      if (cf == ct) continue;
      int dir;
      if (forward_only) {
        dir = +1;
      } else if (wrap[d]) {
        const int forward = (ct - cf + n) % n;
        dir = forward <= n - forward ? +1 : -1;
      } else {
        dir = ct > cf ? +1 : -1;
      }
      return {static_cast<int>(d), dir};
    }
    return {-1, 0};
  }
};

class RoutingTable {
 public:
  /// Switches this table to computed dimension-order routing for the node at
  /// address `self`; port_of[d][0] is the port towards -1 in dimension d,
  /// port_of[d][1] towards +1 (-1 if none; the other is used, for size 2).
  void set_dimension_order(DimensionOrder dor, Address self, std::vector<std::array<int, 2>> port_of) {
    dor_ = std::move(dor);
    self_ = self;
    dor_ports_ = std::move(port_of);
    use_dor_ = true;
  }

  /// Sets the route to `dst`: `ports` are equal-cost choices, one picked per
  /// flow by hash. Destinations must be given in increasing address order;
  /// runs of consecutive addresses with the same ports are stored once, so a
  /// fat-tree switch holds a handful of entries, not one per NPU.
  void set(Address dst, const std::vector<std::uint16_t>& ports) {
    if (ports.empty()) throw std::invalid_argument("a route needs at least one port");
    if (!runs_.empty() && dst < runs_.back().end) {
      throw std::logic_error("routes must be set in increasing address order");
    }
    if (!runs_.empty() && runs_.back().end == dst && same_ports(runs_.back(), ports)) {
      ++runs_.back().end;
      return;
    }
    auto it = interned_.find(ports);
    std::uint32_t first;
    if (it != interned_.end()) {
      first = it->second;
    } else {
      first = static_cast<std::uint32_t>(ports_.size());
      ports_.insert(ports_.end(), ports.begin(), ports.end());
      interned_.emplace(ports, first);
    }
    runs_.push_back(Run{dst, dst + 1, first, static_cast<std::uint16_t>(ports.size())});
  }
  std::size_t runs() const { return runs_.size(); }
  /// After the last set(): a table of many short runs (a big switch, one
  /// NPU per port) is flattened to one entry per address, so a lookup is an
  /// index instead of a binary search.
  void finalize() {
    flat_.clear();
    if (runs_.size() <= 16 || runs_.back().end > 65536 || runs_.back().end > 4 * runs_.size()) return;
    flat_.assign(runs_.back().end, kNoRun);
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      for (Address a = runs_[i].begin; a < runs_[i].end; ++a) flat_[a] = static_cast<std::uint32_t>(i);
    }
  }
  /// Mixed into the flow hash. Each router gets its own, or every switch of
  /// a tier would pick the same port index for a flow (ECMP polarization:
  /// at a 4,096-NPU fat tree, some core links carried 20 times the mean).
  void set_salt(std::uint32_t salt) { salt_ = mix(salt + 0x9e3779b9u); }
  bool has(Address dst) const { return use_dor_ || find(dst) != nullptr; }

  /// The output port for a frame of `flow` to `dst`; throws if there is no route.
  std::uint16_t port(Address dst, std::uint32_t flow) const {
    if (use_dor_) {
      const auto [d, dir] = dor_.step(self_, dst);
      if (d < 0) throw std::runtime_error("no route to fabric address " + std::to_string(dst) + " from itself");
      const auto& p = dor_ports_[static_cast<std::size_t>(d)];
      const int port = p[dir > 0 ? 1 : 0] >= 0 ? p[dir > 0 ? 1 : 0] : p[dir > 0 ? 0 : 1];
      return static_cast<std::uint16_t>(port);
    }
    const Run* r = find(dst);
    if (!r) throw std::runtime_error("no route to fabric address " + std::to_string(dst));
    return ports_[r->first + (r->count == 1 ? 0 : hash_index(flow, r->count))];
  }
  /// The equal-cost ports towards `dst`, in place: `*count` of them from the
  /// returned pointer (table routing; throws if there is no route).
  const std::uint16_t* choices(Address dst, std::uint16_t* count) const {
    const Run* r = find(dst);
    if (!r) throw std::runtime_error("no route to fabric address " + std::to_string(dst));
    *count = r->count;
    return &ports_[r->first];
  }
  /// Where a flow's hash starts among `count` choices.
  std::uint32_t hash_index(std::uint32_t flow, std::uint16_t count) const { return mix(flow ^ salt_) % count; }
  bool dimension_order() const { return use_dor_; }
  /// All equal-cost ports towards `dst` (table routing only).
  std::vector<std::uint16_t> ports(Address dst) const {
    const Run* r = find(dst);
    if (!r) return {};
    return {ports_.begin() + r->first, ports_.begin() + r->first + r->count};
  }

 private:
  struct Run {
    Address begin, end;  // addresses [begin, end)
    std::uint32_t first;
    std::uint16_t count;
  };
  const Run* find(Address dst) const {
    if (!flat_.empty()) return dst < flat_.size() && flat_[dst] != kNoRun ? &runs_[flat_[dst]] : nullptr;
    auto it = std::upper_bound(runs_.begin(), runs_.end(), dst, [](Address a, const Run& r) { return a < r.begin; });
    if (it == runs_.begin()) return nullptr;
    --it;
    return dst < it->end ? &*it : nullptr;
  }
  bool same_ports(const Run& r, const std::vector<std::uint16_t>& ports) const {
    return r.count == ports.size() && std::equal(ports.begin(), ports.end(), ports_.begin() + r.first);
  }
  // A fixed integer hash: deterministic across runs and platforms.
  static std::uint32_t mix(std::uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
  }

  static constexpr std::uint32_t kNoRun = 0xffffffffu;
  std::vector<Run> runs_;
  std::vector<std::uint32_t> flat_;
  std::vector<std::uint16_t> ports_;
  std::map<std::vector<std::uint16_t>, std::uint32_t> interned_;
  std::uint32_t salt_ = 0;
  bool use_dor_ = false;
  DimensionOrder dor_;
  Address self_ = 0;
  std::vector<std::array<int, 2>> dor_ports_;
};

}  // namespace fabricsim
