// A window-based reliable transport at a NIC, per queue pair: TCP (Reno:
// slow start, congestion avoidance, fast retransmit, timeout) over lossy
// Ethernet, or DCTCP (the same window cut in proportion to the fraction of
// ECN-marked bytes, Alizadeh et al., SIGCOMM 2010).
//
// The sender keeps each queue pair's frames in flight in the order sent and
// may have at most min(cwnd, max_window) bytes of them. The receiver
// acknowledges every frame (an ACK per `ack_every` frames, or `ack_delay`
// after the first one waiting), echoing its ECN mark. A queue pair takes one
// path and links keep order, so when a frame is acknowledged every frame of
// its queue pair sent before it and not yet acknowledged was lost: it is sent
// again (fast retransmit), and the window halves once per round trip (Reno)
// or by alpha/2 (DCTCP). Frames unacknowledged for `rto` are all lost: the
// window falls to one packet. A frame that arrives twice (its ACK was slow,
// not lost) is acknowledged again and counted once.
//
// This class is the bookkeeping only, free of SystemC: the NIC sends what it
// says and schedules its timer (models/nic/nic.cpp).
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "models/nic/window_transport_params.h"
#include "tlm/fabric_protocol.h"
#include "tlm/kernel/parameters.h"

namespace fabricsim {

class WindowTransport {
 public:
  using Control = WindowControl;
  using Params = WindowTransportParams;  // models/nic/window_transport_params.h

  struct Stats {
    std::uint64_t retransmissions = 0;  // frames sent again
    std::uint64_t timeouts = 0;
    std::uint64_t fast_retransmits = 0;  // losses found by a later frame's ACK
    std::uint64_t duplicates = 0;        // frames that arrived a second time
    std::uint64_t acks_sent = 0;
    std::uint64_t window_cuts = 0;
  };

  /// A frame to send again: its message and index, and the port it went by.
  struct Resend {
    Message* message;
    std::uint32_t index;
    unsigned port;
  };

  explicit WindowTransport(const Params& params);

  // --- sender -------------------------------------------------------------
  /// Whether queue pair `qp` may put `wire_bytes` more in flight now.
  bool may_send(std::uint64_t qp, std::uint64_t wire_bytes);
  /// Frame `index` of `m` has been sent on `qp` by `port`.
  void sent(std::uint64_t qp, Message* m, std::uint32_t index, std::uint64_t wire_bytes, unsigned port, Tick now);
  /// An ACK for `qp` has come: frames it names are done (messages all of
  /// whose frames are now acknowledged are appended to `completed`), frames
  /// sent before them and still out were lost (appended to `resend`).
  void acknowledged(std::uint64_t qp, const std::vector<Message::Acked>& acks, Tick now, std::vector<Resend>& resend,
                    std::vector<Message*>& completed);
  /// When `qp`'s oldest frame times out (kNever: nothing in flight).
  Tick timeout_at(std::uint64_t qp) const;
  /// The timer of `qp` has fired at `now`: if its oldest frame has timed
  /// out, every frame in flight is lost (appended to `resend`).
  void timer(std::uint64_t qp, Tick now, std::vector<Resend>& resend);

  // --- receiver -----------------------------------------------------------
  /// Frame `index` of `m` (of `total`) has arrived: false if it had already.
  bool first_arrival(const Message& m, std::uint32_t index, std::uint32_t total);
  /// `m` is being delivered: its arrivals are forgotten. Throws if a frame
  /// of it never arrived (a copy was counted as a first arrival).
  void forget(const Message& m);
  void count_ack() { ++stats_.acks_sent; }

  const Params& params() const { return params_; }
  const Stats& stats() const { return stats_; }
  /// Queue pair `qp`'s congestion window, bytes.
  double window(std::uint64_t qp) const;

 private:
  struct InFlight {
    Message* message;
    std::uint32_t index;
    std::uint64_t wire;
    std::uint64_t seq;  // send order
    Tick sent;
    unsigned port;
  };
  struct QueuePair {
    double cwnd = 0, ssthresh = 1e18;
    std::uint64_t in_flight = 0;
    std::uint64_t next_seq = 0;
    std::uint64_t recover_seq = 0;  // Reno/DCTCP: no second cut until a frame sent after the first is acked
    std::deque<InFlight> out;
    // DCTCP: bytes acknowledged and marked in the current window of data
    double alpha = 1;
    std::uint64_t window_end_seq = 0, acked_bytes = 0, marked_bytes = 0;
  };
  QueuePair& queue_pair(std::uint64_t qp);
  void lose_all(QueuePair& q, std::vector<Resend>& resend);

  Params params_;
  std::unordered_map<std::uint64_t, QueuePair> queue_pairs_;
  std::unordered_map<std::uint64_t, std::vector<bool>> arrived_;  // by message id
  Stats stats_;
};

}  // namespace fabricsim
