// One direction of a link: a transmitter that serializes frames at the link's
// bandwidth, a wire that delays them by its latency, and the credit counter
// for the buffer at its receiving end.
//
// A full-duplex link is two of these, one per direction (the builder makes
// both). Frames are sent first come, first served. A frame starts when the
// transmitter is free, its head is ready and the receiver's buffer will have
// room for the whole frame; it ends after its serialization time, or when its
// tail has arrived if that is later (cut-through from a slower input holds
// the link at the input's rate). Credits come back one link latency after the
// receiver reports, with END_REQ, that the frame has left its buffer.
//
// Lossless Ethernet (RoCE) replaces credits with priority flow control
// (set_pfc): the receiver pauses the link when its input buffer passes XOFF
// and releases it at XON, each signal one latency on its way back, and the
// sender starts frames one at a time so that a pause stops the next one.
// Lossy Ethernet (set_lossy) has no flow control: the receiver drops a frame
// its port has no room for. A switch's egress queue may mark frames for
// congestion (set_ecn, RED-style). docs/transports.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/link/link_params.h"
#include "models/link/shared_buffer.h"
#include "tlm/fabric_protocol.h"
#include "tlm/kernel/calendar.h"
#include "tlm/kernel/fifo.h"
#include "tlm/kernel/parameters.h"
#include "tlm/output_backlog.h"
#include "tlm/timeline_sink.h"

namespace fabricsim {

class Link : public sc_core::sc_module, public OutputBacklog {
 public:
  using Params = LinkParams;  // models/link/link_params.h

  struct Stats {
    std::uint64_t frames = 0;
    std::uint64_t payload_bytes = 0;
    std::uint64_t wire_bytes = 0;
    Tick busy = 0;                        // time spent serializing
    std::uint64_t peak_buffer_bytes = 0;  // most credits in use at once (PFC: most bytes in the receiver's buffer)
    // Ethernet links (zero on credit links):
    std::uint64_t pauses = 0;            // PFC PAUSEs the receiver sent
    Tick paused = 0;                     // time the sender spent paused
    std::uint64_t ecn_marks = 0;         // frames marked Congestion Experienced here
    std::uint64_t peak_queue_bytes = 0;  // most bytes a frame found queued ahead of it at the sender
    std::uint64_t queue_bytes_seen = 0;  // their sum over frames: / frames is the mean queue a frame finds
    std::uint64_t drops = 0;             // lossy: frames the receiver had no room for
  };

  /// Priority flow control (IEEE 802.1Qbb) on the one lossless priority, in
  /// place of credits. The receiver pauses the link when its input buffer
  /// holds more than `xoff` bytes and resumes it when it holds `xon` or
  /// fewer; PAUSE and RESUME reach the sender one latency later, and the
  /// sender finishes the frame it is sending. The buffer above xoff is the
  /// headroom for what is in flight meanwhile: at least two latencies of
  /// line rate plus two frames (checked here).
  struct Pfc {
    std::uint64_t xoff = 0;
    std::uint64_t xon = 0;
  };
  /// ECN marking of the queue at this link's sender (a switch's egress
  /// port), RED-style on the bytes a frame finds ahead of it: never below
  /// kmin, with probability pmax x (q - kmin) / (kmax - kmin) up to kmax,
  /// always above. `seed` makes the draws repeatable.
  struct Ecn {
    std::uint64_t kmin = 0;
    std::uint64_t kmax = 0;
    double pmax = 0;
    std::uint64_t seed = 1;
  };
  /// `largest_frame` is the most wire bytes a frame on this link can have.
  /// With `pool` (the receiving switch's shared buffer), xoff is dynamic:
  /// the port pauses when it holds more than alpha x the pool's free bytes
  /// (and never above `pfc.xoff`, which keeps the headroom), and resumes
  /// the same xoff - xon gap below that.
  void set_pfc(const Pfc& pfc, std::uint64_t largest_frame, SharedBuffer* pool = nullptr);
  void set_ecn(const Ecn& ecn);
  /// Lossy Ethernet: no flow control at all. A frame whose head reaches the
  /// receiver when its port holds too much is dropped: too much is more than
  /// alpha x the free bytes of `pool` (the switch's shared buffer, dynamic
  /// thresholds), or, without a pool, more than `buffer`.
  void set_lossy(SharedBuffer* pool);
  bool has_pfc() const { return ethernet_ && ethernet_->has_pfc; }
  bool is_lossy() const { return ethernet_ && ethernet_->lossy; }
  bool marks_ecn() const { return ethernet_ && ethernet_->has_ecn; }
  /// Bytes of frames queued at the sender now, waiting to start.
  std::uint64_t queued_bytes() const { return waiting_bytes_; }
  /// The frame being sent and the queued ones, as time from `at`.
  Tick backlog(Tick at) const override;
  /// The headroom PFC needs above xoff on this link.
  static std::uint64_t pfc_headroom(const Params& params, std::uint64_t largest_frame);

  FrameTargetSocket<Link> in;      // from the sender (NIC or switch port)
  FrameInitiatorSocket<Link> out;  // to the receiver

  Link(const sc_core::sc_module_name& name, const Params& params);

  const Params& params() const { return params_; }
  const Stats& stats() const { return stats_; }
  /// Reports every frame to a timeline as link `id` (null: none).
  void set_timeline(TimelineSink* timeline, int id) {
    timeline_ = timeline;
    timeline_id_ = id;
  }
  /// Frames waiting for credits, for reports on a stuck simulation.
  std::size_t frames_waiting() const { return waiting_.size(); }
  std::string describe_waiting() const;

 private:
  tlm::tlm_sync_enum in_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum out_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  /// Starts as many waiting frames as credits allow, in order.
  void send_waiting();
  /// Sends frame `f` from `start` to `end`: tells the sender when it has
  /// left and hands it to the receiver. `used` is the receiver's buffer
  /// once it is in, for the timeline.
  /// `deliver` false (lossy): the frame is handed over when its head arrives, if it has room.
  void launch(Frame* f, Tick start, Tick end, Tick duration, std::uint64_t used, bool deliver = true);

  // Ethernet links (lossless with PFC, or lossy).
  struct Change {
    Tick at;
    std::uint64_t bytes;
    Frame* frame;  // lossy: the frame, handed over (or dropped) when its head arrives
  };
  struct Ethernet {
    bool has_pfc = false;
    bool has_ecn = false;
    bool lossy = false;
    SharedBuffer* pool = nullptr;  // the switch's shared buffer (lossy, or PFC with dynamic xoff)
    Pfc pfc;
    Ecn ecn;
    std::uint64_t rng = 0;
    std::uint64_t occupancy = 0;    // the receiver's input buffer
    bool receiver_pausing = false;  // the receiver has sent PAUSE, not yet RESUME
    bool sender_paused = false;     // the sender has heard PAUSE, not yet RESUME
    Tick paused_since = 0;
    bool wake_pending = false;
    Tick service_start = 0;           // the frame being sent (one at a time): its start
    std::uint64_t service_bytes = 0;  // and its wire bytes

    InlineRing<Change, 8> arrivals;  // frames' heads reaching the receiver, in time order
    InlineRing<Change, 8> releases;  // frames leaving the receiver's buffer, by time
  };
  // Calendar events (Ethernet only).
  void on_wake();           // the waiting frame may start
  void on_heads_arrived();  // frames' heads reach the receiver's buffer
  void on_released();       // frames have left the receiver's buffer
  void on_pause();          // the receiver's PAUSE reaches the sender
  void on_resume();         // and its RESUME
  /// Lossless or lossy Ethernet: no credits; frames start one at a time.
  bool one_at_a_time() const { return ethernet_ && (ethernet_->has_pfc || ethernet_->lossy); }
  /// Starts the next waiting frame if it can start now (and PFC has not
  /// paused the link); else wakes up when it can.
  void send_one_at_a_time();
  /// Lossy: frames whose heads have arrived are handed over, or dropped.
  void lossy_arrivals();
  void receiver_released(std::uint64_t bytes, Tick at);
  void receiver_changed();
  /// ECN: marks `f`, about to join the queue, by what it finds ahead of it
  /// when its head arrives.
  void mark_congestion(Frame* f);
  /// Bytes queued at this port at time `at` (>= now): what is left of the
  /// frame being sent and the waiting frames that have arrived by then.
  std::uint64_t queued_at(Tick at) const;
  /// Starts a read request at once on its own virtual channel; returns when
  /// it has left, or kNever if it had to queue for credit.
  Tick send_request(Frame* f);
  /// Earliest time >= from at which `need` bytes of the buffer are free, or
  /// kNever when that depends on a credit whose return time is unknown.
  Tick credit_time(std::uint64_t need, Tick from);
  /// Buffer bytes still held at time `t` (>= now).
  std::uint64_t held_at(Tick t) const;
  void forget_returned_credits();
  void credit_returned(Frame* f, Tick left_receiver);
  void schedule_return(Tick back, std::uint64_t bytes);

  // The receive buffer's credits. A frame's bytes are held from when it
  // starts until one latency after the receiver's END_REQ. Frames whose
  // END_REQ has not come yet are `unreturned_` (few: the receiver answers
  // most at once); the others wait in `returning_`, sorted by return time,
  // so that spent credits are forgotten from its front and the time at which
  // enough room is free is found by walking from the front: no step scans
  // every frame in flight (with small frames and a large buffer that is
  // thousands).
  struct Unreturned {
    Frame* frame;
    std::uint64_t bytes;
  };
  struct Returning {
    Tick back;
    std::uint64_t bytes;
  };
  // Everything a frame touches, together (after the sockets, which are only
  // read at elaboration): with a thousand links each one is cold when its
  // next frame comes, and every cache line here is a miss.
  Tick busy_until_ = 0;
  Tick request_busy_until_ = 0;        // the read-request virtual channel
  std::uint64_t in_flight_bytes_ = 0;  // credits held: unreturned_ and returning_
  std::uint64_t waiting_bytes_ = 0;    // wire bytes of the frames in waiting_
  Frame* answering_ = nullptr;         // frame whose BEGIN_REQ is being answered in the return path
  Tick answer_end_ = kNever;
  bool sending_ = false;
  Params params_;
  Calendar& calendar_ = Calendar::instance();
  ForwardPath<FrameProtocol> to_receiver_{out};
  BackwardPath<FrameProtocol> to_sender_{in};
  InlineRing<Frame*, 4> waiting_;
  InlineRing<Unreturned, 4> unreturned_;
  InlineRing<Returning, 8> returning_;  // by `back`
  Stats stats_;
  TimelineSink* timeline_ = nullptr;
  int timeline_id_ = -1;
  std::vector<std::uint32_t> blocked_inputs_;  // scratch for send_waiting()
  std::unique_ptr<Ethernet> ethernet_;         // null on credit links: their path is unchanged
};

}  // namespace fabricsim
