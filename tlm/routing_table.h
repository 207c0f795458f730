// Where a router sends a frame: destination address -> one of a set of
// equal-cost output ports, picked by the frame's flow hash so that a flow
// always takes the same path (no reordering) while different flows spread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <stdexcept>
#include <string>
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

  /// Replaces the route to `dst` with `ports` (tried in this order by hash).
  void set(Address dst, const std::vector<std::uint16_t>& ports) {
    if (ports.empty()) throw std::invalid_argument("a route needs at least one port");
    if (dst >= entries_.size()) entries_.resize(dst + 1, Entry{0, 0});
    // Many destinations share a port list (all "up" ports of a leaf switch):
    // store each distinct list once.
    auto it = interned_.find(ports);
    std::uint32_t first;
    if (it != interned_.end()) {
      first = it->second;
    } else {
      first = static_cast<std::uint32_t>(ports_.size());
      ports_.insert(ports_.end(), ports.begin(), ports.end());
      interned_.emplace(ports, first);
    }
    entries_[dst] = Entry{first, static_cast<std::uint16_t>(ports.size())};
  }
  std::size_t memory_bytes() const { return entries_.capacity() * sizeof(Entry) + ports_.capacity() * 2; }
  bool has(Address dst) const { return dst < entries_.size() && entries_[dst].count > 0; }
  /// The output port for a frame of `flow` to `dst`; throws if there is no route.
  std::uint16_t port(Address dst, std::uint32_t flow) const {
    if (use_dor_) {
      const auto [d, dir] = dor_.step(self_, dst);
      if (d < 0) throw std::runtime_error("no route to fabric address " + std::to_string(dst) + " from itself");
      const auto& p = dor_ports_[static_cast<std::size_t>(d)];
      const int port = p[dir > 0 ? 1 : 0] >= 0 ? p[dir > 0 ? 1 : 0] : p[dir > 0 ? 0 : 1];
      return static_cast<std::uint16_t>(port);
    }
    if (!has(dst)) throw std::runtime_error("no route to fabric address " + std::to_string(dst));
    const Entry& e = entries_[dst];
    return ports_[e.first + (e.count == 1 ? 0 : mix(flow) % e.count)];
  }
  std::vector<std::uint16_t> ports(Address dst) const {
    if (!has(dst)) return {};
    const Entry& e = entries_[dst];
    return {ports_.begin() + e.first, ports_.begin() + e.first + e.count};
  }

 private:
  // A fixed integer hash: deterministic across runs and platforms.
  static std::uint32_t mix(std::uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
  }
  struct Entry {
    std::uint32_t first;
    std::uint16_t count;
  };
  std::vector<Entry> entries_;
  std::vector<std::uint16_t> ports_;
  bool use_dor_ = false;
  DimensionOrder dor_;
  Address self_ = 0;
  std::vector<std::array<int, 2>> dor_ports_;
  std::map<std::vector<std::uint16_t>, std::uint32_t> interned_;
};

}  // namespace fabricsim
