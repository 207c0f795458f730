// Every member of a group must call the same collective at the same place in
// the group's sequence: NCCL and MPI require it, and when members disagree
// they hang or return wrong data. Our engines would do the same, or worse,
// carry on with the first member's layout. So the first member to start a
// group's collective number s records what it asked for, and every other
// member's call is compared with that, field by field; a difference stops
// the run naming both members, their trace nodes and the two values.
//
// One per platform, shared by its NPUs' collective engines. An entry lives
// until the group's last member has started that collective.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "models/collectives/collective_engine.h"

namespace fabricsim {

class CollectiveAgreement {
 public:
  /// Member `rank`'s call `spec`, the group's collective number `seq` (its
  /// key `key`). Throws std::invalid_argument naming both members when it
  /// differs from the first member's call.
  void check(std::uint64_t key, std::uint64_t seq, const CollectiveSpec& spec, int rank);

  /// Collectives some member has started and some other has not yet.
  std::size_t open() const { return open_.size(); }

 private:
  struct Call {
    int rank = 0;
    std::uint64_t node_id = 0;
    std::string name;
    CollectiveType type = CollectiveType::kAllReduce;
    std::uint64_t bytes = 0;
    int root = 0;
    DataType dtype = DataType::kFp32;
    ReduceOp op = ReduceOp::kSum;
  };
  struct Entry {
    Call first;
    std::size_t started = 0;  // members that have called it
  };
  static Call call_of(const CollectiveSpec& spec, int rank);
  /// What differs between `spec` (from `rank`) and `first`, or "".
  static std::string difference(const CollectiveSpec& spec, int rank, const Call& first, std::uint64_t seq);
  std::unordered_map<std::uint64_t, Entry> open_;
};

}  // namespace fabricsim
