// The cost model of the default choices (algorithm_choice.h): NCCL's way of
// estimating a collective, latency + bytes / bandwidth, with the bytes of
// each algorithm routed over the platform's own links, so that contention
// (a direct exchange crossing a ring's links, a tree's root) shows.
//
// It needs two things of a platform: each fabric's costs (overheads, hop
// latency, payload rate) and, where it can give them, the paths messages
// take (TrafficPaths, implemented by the platform builder).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/collectives/collective.h"
#include "tlm/kernel/units.h"
#include "tlm/message_kind.h"

namespace fabricsim {

struct CollectiveConfig;

/// A fabric as the cost model sees it (read off its first NIC).
struct FabricCosts {
  std::vector<int> npus;      // its NPUs, sorted
  Tick step[3] = {0, 0, 0};   // the NIC's step overhead per protocol: Simple, LL, LL128
  double bandwidth = 0;       // bytes per second of payload an NPU sends into it (headers taken off)
  Tick plain = 0;             // a plain message's overhead (in-switch steps)
  Tick hop = 0;               // NPU to NPU (or to a switch's unit): two links and a switch
  double header_share = 0;    // header / (mtu + header): a pulled byte's read request
  std::uint64_t segment = 0;  // most message bytes per frame (0: a message is one frame)
  Tick overhead(CommProtocol p) const { return per_protocol(p, plain, step[0], step[1], step[2]); }
};

/// Where messages go on a platform: for the cost model, not the simulation.
class TrafficPaths {
 public:
  struct Use {
    std::uint32_t link;  // a directed link, 0 .. links() - 1
    double share;        // of the message's bytes (striped or equal-cost paths split them)
    bool first;          // a link out of the sender itself
  };
  /// Appends the links a message from NPU `from` to NPU `to` crosses, and
  /// returns the links on its longest branch.
  virtual int path(int from, int to, std::vector<Use>& out) const = 0;
  virtual std::size_t links() const = 0;
  /// A link's payload rate, bytes per second (less its packets' headers).
  virtual double rate(std::uint32_t link) const = 0;
  /// The costs of the fabric a message from `from` to `to` travels on.
  virtual const FabricCosts& costs(int from, int to) const = 0;

 protected:
  ~TrafficPaths() = default;
};

/// An estimate, split so that pipelined levels can add latencies and take
/// the largest transfer (ticks).
struct Estimate {
  double latency = 0;   // launch and steps one after another
  double transfer = 0;  // bytes through the busiest link
  double total() const { return latency + transfer; }
};

/// A point-to-point algorithm (ring, direct, halving-doubling, double
/// binary tree) under protocol `p`: every member's programs are run on paper
/// and each message routed, giving
///   latency  = launch + per round, the slowest of its messages' step
///              overhead and hops;
///   transfer = the larger of the busiest link's bytes / its rate, and the
///              first chunk's rounds one after another (each its busiest
///              link's time) with the other chunks following the slowest.
/// `plan.ranks` are global ranks; sends to reduction units are not counted.
Estimate routed_estimate(const CollectiveConfig& config, const TrafficPaths& paths, const ProgramPlan& plan,
                         CommProtocol p);

/// routed_estimate over one platform's paths, remembered: every member of a
/// group asks for the same collective, and a trace repeats its collectives.
class CostModel {
 public:
  explicit CostModel(const TrafficPaths& paths) : paths_(paths) {}
  const TrafficPaths& paths() const { return paths_; }
  Estimate estimate(const CollectiveConfig& config, const ProgramPlan& plan, CommProtocol p);
  /// A lasting copy of `levels` (collectives keep a pointer to their levels).
  const std::vector<Dimension>* keep(const std::vector<Dimension>& levels);

 private:
  const TrafficPaths& paths_;
  std::unordered_map<std::string, Estimate> known_;
  std::deque<std::vector<Dimension>> kept_;
};

}  // namespace fabricsim
