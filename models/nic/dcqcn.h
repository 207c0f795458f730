// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
// SIGCOMM 2015), as a RoCE NIC runs it: the rate of each queue pair.
//
// Three parts, as in the paper:
//  - congestion point: a switch marks frames ECN (Link::set_ecn);
//  - notification point: the receiving NIC answers a marked frame with a
//    congestion notification packet (CNP) to the sender, at most one per
//    queue pair per `cnp_interval` (should_notify);
//  - reaction point: the sending NIC keeps per queue pair a current rate Rc,
//    a target rate Rt and a congestion estimate alpha. On a CNP:
//      Rt = Rc, Rc = Rc (1 - alpha / 2), alpha = (1 - g) alpha + g.
//    Every `alpha_period` without a CNP, alpha = (1 - g) alpha. Every
//    `rate_timer` and every `byte_counter` bytes sent, the rate rises:
//      the first `fast_recovery` times (each counter): Rc = (Rt + Rc) / 2;
//      then additive increase: Rt += rate_ai, Rc = (Rt + Rc) / 2;
//      once both counters pass fast_recovery, hyper increase by rate_hai
//      times the smaller count past it.
//    Frames of the queue pair are paced at Rc.
// Timers are evaluated lazily, when the queue pair next sends or is
// notified, with the same result as firing them on time: between those
// moments nothing else reads the state.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "models/nic/dcqcn_params.h"
#include "tlm/kernel/parameters.h"
#include "tlm/kernel/time.h"

namespace fabricsim {

class Dcqcn {
 public:
  using Params = DcqcnParams;  // models/nic/dcqcn_params.h

  struct Stats {
    std::uint64_t cnps_sent = 0;      // as a notification point
    std::uint64_t cnps_received = 0;  // as a reaction point
    double lowest_rate = 0;           // bytes/s, the lowest Rc any queue pair reached (0: none cut)
  };

  Dcqcn(const Params& params, Bandwidth line_rate);

  /// The earliest time >= `ready` at which a frame of `wire_bytes` of queue
  /// pair `qp` may start, at its current rate; the frame is counted as sent
  /// then.
  Tick pace(std::uint64_t qp, std::uint64_t wire_bytes, Tick ready);
  /// When the next frame of `qp` may start (0 for a queue pair not yet seen).
  Tick next_start(std::uint64_t qp) const;
  /// A CNP for `qp` has arrived.
  void notified(std::uint64_t qp, Tick now);
  /// Notification point: a marked frame of the sender's queue pair `qp` has
  /// arrived; true if a CNP is to be sent for it now.
  bool should_notify(std::uint64_t qp, Tick now);

  /// Queue pair `qp`'s current rate, bytes/s (line rate for one not seen).
  double rate(std::uint64_t qp) const;
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

  /// A queue pair's key: the peer's address and the flow.
  static std::uint64_t key(std::uint32_t peer, std::uint32_t flow) {
    return (static_cast<std::uint64_t>(peer) << 32) | flow;
  }

 private:
  struct QueuePair {
    double rc = 0, rt = 0;  // bytes/ps
    double alpha = 1;
    Tick alpha_due = 0;       // next alpha decay
    Tick timer_due = 0;       // next timer increase
    std::uint64_t bytes = 0;  // toward the byte counter
    std::uint32_t timer_steps = 0, byte_steps = 0;
    Tick next_start = 0;
    bool cut = false;  // rate below line: timers matter
  };
  QueuePair& queue_pair(std::uint64_t qp);
  /// Runs the timers of `q` due up to `now`.
  void catch_up(QueuePair& q, Tick now);
  void increase(QueuePair& q, bool by_timer);

  Params params_;
  double line_;  // bytes/ps
  std::unordered_map<std::uint64_t, QueuePair> queue_pairs_;
  std::unordered_map<std::uint64_t, Tick> last_cnp_;  // notification point
  Stats stats_;
};

}  // namespace fabricsim
