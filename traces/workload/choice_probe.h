// The default choice by simulation, for trace replays: where the cost model
// estimates several algorithms too close to tell apart
// (collectives.probe_margin), the first member to reach the collective forks
// this process once per candidate. Each child is the whole simulation at that
// moment, goes on with its candidate forced on every member, and reports
// the time from that start to the last member's end; the parent then takes
// the fastest and goes on as if it had known. The children carry the rest
// of the workload as it runs at that time, so the choice sees the
// contention the collective meets (docs/collectives.md, "Probing").
//
// The children run side by side, as many at once as the process has CPUs
// (cpus_available: a Slurm or taskset allocation). One probe per
// simulation, shared by its NPUs' workloads. A child does not probe again
// (its other collectives take the estimate's choice) and writes to no file
// but its report: its descriptors are cut loose from the parent's
// (simulation_copy.h); it reads on in the traces.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/collectives/algorithm_choice.h"
#include "models/collectives/collective.h"
#include "tlm/kernel/time.h"
#include "tlm/util/simulation_copy.h"

namespace fabricsim {

class ChoiceProbe {
 public:
  /// What makes two collectives the same question: type, size, root, whether
  /// the group is the whole platform, whether it lies in a domain of
  /// reduction units (and whose units pull or push), the group's ranks less
  /// its first, and their nodes less the first's (node_offsets). The repeats
  /// of a step, and the same collective on each data-parallel group of a
  /// symmetric platform, share one; a group inside a node and a group across
  /// two do not.
  struct Shape {
    int type = 0;
    std::uint64_t bytes = 0;
    int root = 0;
    bool world = false;
    int in_switch = -1;  // -1: no domain holds the group; 0: push units; 1: pull units
    std::vector<int> offsets;
    std::vector<int> nodes;
    static Shape of(CollectiveType type, std::uint64_t bytes, int root, bool world, const Group& group,
                    const CollectiveConfig& config, const PlatformHints& hints);
    bool operator<(const Shape& o) const {
      return std::tie(type, bytes, root, world, in_switch, offsets, nodes) <
             std::tie(o.type, o.bytes, o.root, o.world, o.in_switch, o.offsets, o.nodes);
    }
  };

  /// The algorithm a member of `group` runs for the group's collective `key`
  /// (as the engine keys it: group id << 40 | sequence).
  /// The first member decides: the decision for an earlier collective of
  /// the same shape if there was one, else, with two candidates or more,
  /// the fastest simulated (`estimated` where none ran); the others take
  /// that. `shape` and `candidates` (probe_candidates) are asked only by the
  /// first member, `candidates` only where a decision is made.
  AlgorithmKind choose(std::uint64_t key, const Group& group, const std::function<Shape()>& shape,
                       const std::function<std::vector<AlgorithmKind>()>& candidates, AlgorithmKind estimated);
  /// A member ended the collective `key`. In a child probing it, the last
  /// member's end reports the time and ends the child.
  void member_done(std::uint64_t key);
  /// In a child: ends it without a report (its simulation ended without the
  /// collective). Call after every sc_start.
  void end_child_if_any() const;

  bool in_child() const { return child_.out != nullptr; }
  /// A collective decided by simulation, for the report.
  struct Decision {
    std::string group;
    CollectiveType type = CollectiveType::kAllReduce;
    std::uint64_t bytes = 0;
    AlgorithmKind chosen = AlgorithmKind::kRing;
    /// Each candidate, in the order simulated, and its time from the first
    /// member's start to the last member's end (kNever: it did not end).
    std::vector<std::pair<AlgorithmKind, Tick>> simulated;
    /// Why probing stopped before every candidate ran (no process or
    /// temporary file could be made; a copy that could not be waited for is
    /// listed above without a time), or empty.
    std::string failure;
  };
  const std::vector<Decision>& decisions() const { return decisions_; }
  /// Children run for them.
  std::uint64_t children_run() const { return children_run_; }

 private:
  /// A child started and not yet reaped.
  struct Started {
    int pid = -1;
    std::FILE* out = nullptr;  // where it writes its time
  };
  /// Forks a child to probe `key`: true in the child; false in the parent,
  /// with the child in `started`. Throws std::system_error where no child
  /// could be made.
  bool start_child(std::uint64_t key, std::size_t members, Started* started);
  /// Waits for a started child and reads its time into `time` (`has_time`
  /// false when it ended without one). Throws std::system_error where it
  /// cannot be waited for (it is killed and reaped first).
  static void finish_child(const Started& started, bool* has_time, Tick* time);

  struct Decided {
    AlgorithmKind algorithm = AlgorithmKind::kRing;
    std::size_t started = 0;  // members that have taken it
  };
  struct Child {
    std::FILE* out = nullptr;  // set in a child only
    std::uint64_t key = 0;
    std::size_t remaining = 0;
    Tick start = 0;
  };
  std::unordered_map<std::uint64_t, Decided> open_;  // until every member has taken it
  std::map<Shape, AlgorithmKind> by_shape_;
  Child child_;
  std::vector<Decision> decisions_;
  std::uint64_t children_run_ = 0;
  unsigned side_by_side_ = cpus_available();  // children run at once
};

}  // namespace fabricsim
