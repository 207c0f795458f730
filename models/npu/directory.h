// How one NPU reaches another: which of its NICs to use and the fabric
// address of the peer's NIC on that fabric. Filled by the platform builder;
// read by every NPU.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "tlm/fabric_protocol.h"

namespace fabricsim {

struct PeerRoute {
  std::uint16_t nic = 0;         // index of the sender's NIC
  Address address = kNoAddress;  // the receiver's NIC on that fabric
  std::uint16_t fabric = 0;
};

class Directory {
 public:
  struct Attachment {
    std::uint16_t fabric;  // which network
    std::uint16_t nic;     // NIC index on the NPU
    Address address;       // the NIC's address on that network
  };

  /// The memory on a fabric that an NPU's MEM_LOAD and MEM_STORE nodes use.
  struct MemoryRoute {
    std::uint16_t nic = 0;         // the NPU's NIC on that fabric
    Address address = kNoAddress;  // the memory node's address
    std::uint64_t base = 0;        // the memory's address range
    std::uint64_t size = 0;
    std::string name;
  };

  void resize(int npus) {
    attachments_.resize(static_cast<std::size_t>(npus));
    memories_.resize(static_cast<std::size_t>(npus));
  }
  void set_memory(int rank, MemoryRoute route) { memories_.at(static_cast<std::size_t>(rank)) = std::move(route); }
  /// The NPU's remote memory, or nullptr.
  const MemoryRoute* memory(int rank) const {
    const auto& m = memories_.at(static_cast<std::size_t>(rank));
    return m.address == kNoAddress ? nullptr : &m;
  }
  int npus() const { return static_cast<int>(attachments_.size()); }
  void attach(int rank, std::uint16_t fabric, std::uint16_t nic, Address address) {
    attachments_.at(static_cast<std::size_t>(rank)).push_back(Attachment{fabric, nic, address});
  }
  /// Where rank `rank` is on fabric `fabric` (nullptr if it is not).
  const Attachment* on(int rank, std::uint16_t fabric) const {
    for (const Attachment& a : attachments(rank)) {
      if (a.fabric == fabric) return &a;
    }
    return nullptr;
  }
  const std::vector<Attachment>& attachments(int rank) const { return attachments_.at(static_cast<std::size_t>(rank)); }

  /// The first fabric (in declaration order, scale-up before scale-out) that
  /// both NPUs are on. Throws when they share none.
  PeerRoute route(int from, int to) const {
    const auto& mine = attachments(from);
    const auto& theirs = attachments(to);
    if (mine.size() == 1 && theirs.size() == 1 && mine[0].fabric == theirs[0].fabric) {
      return PeerRoute{mine[0].nic, theirs[0].address, mine[0].fabric};
    }
    for (const Attachment& a : attachments(from)) {
      for (const Attachment& b : attachments(to)) {
        if (a.fabric == b.fabric) return PeerRoute{a.nic, b.address, a.fabric};
      }
    }
    throw std::runtime_error("NPU " + std::to_string(from) + " and NPU " + std::to_string(to) + " share no fabric");
  }
  // ---- switch reduction units ---------------------------------------------
  /// Registers a unit; returns the (negative) peer id NPUs name it by.
  int add_unit(std::uint16_t fabric, Address address) {
    units_.push_back(Unit{fabric, address});
    const int peer = -static_cast<int>(units_.size());
    unit_peer_[key(fabric, address)] = peer;
    return peer;
  }
  struct Unit {
    std::uint16_t fabric;
    Address address;
  };
  const Unit& unit(int peer) const { return units_.at(static_cast<std::size_t>(-peer - 1)); }
  int unit_peer(std::uint16_t fabric, Address address) const { return unit_peer_.at(key(fabric, address)); }

  /// For NPUs that share no fabric: the NPU to hand a message to on the way
  /// (one that shares a fabric with `from`), along a path with the fewest
  /// relays. Throws when `to` cannot be reached at all.
  int next_hop(int from, int to) const;

  bool connected(int from, int to) const {
    for (const Attachment& a : attachments(from)) {
      for (const Attachment& b : attachments(to)) {
        if (a.fabric == b.fabric) return true;
      }
    }
    return false;
  }

 private:
  static std::uint64_t key(std::uint16_t fabric, Address a) { return static_cast<std::uint64_t>(fabric) << 32 | a; }

  std::vector<std::vector<Attachment>> attachments_;
  std::vector<MemoryRoute> memories_;
  std::vector<Unit> units_;
  std::unordered_map<std::uint64_t, int> unit_peer_;
  // next_hop caches, per destination, every NPU's next hop towards it.
  mutable std::vector<std::vector<int>> members_;  // per fabric
  mutable std::unordered_map<int, std::vector<int>> towards_;
};

}  // namespace fabricsim
