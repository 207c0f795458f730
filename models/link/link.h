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
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "tlm/fabric_protocol.h"
#include "tlm/fifo.h"
#include "tlm/parameters.h"
#include "tlm/timeline.h"

namespace fabricsim {

class Link : public sc_core::sc_module {
 public:
  struct Params {
    Bandwidth bandwidth = Bandwidth::GBps(50);  // per direction
    Tick latency = ns_to_ticks(500);            // wire and credit-return delay
    std::uint64_t buffer_bytes = 4u << 20;      // input buffer at the receiving end
    std::uint64_t bubble_bytes = 0;             // extra room a frame entering a ring needs (set by the builder)
    /// Every user-settable parameter, with unit, range and description.
    static const ParamTable<Params>& table();
  };

  struct Stats {
    std::uint64_t frames = 0;
    std::uint64_t payload_bytes = 0;
    std::uint64_t wire_bytes = 0;
    Tick busy = 0;                        // time spent serializing
    std::uint64_t peak_buffer_bytes = 0;  // most credits in use at once
  };

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
  Frame* answering_ = nullptr;         // frame whose BEGIN_REQ is being answered in the return path
  Tick answer_end_ = kNever;
  bool sending_ = false;
  Params params_;
  ForwardPath<FrameProtocol> to_receiver_{out};
  BackwardPath<FrameProtocol> to_sender_{in};
  InlineRing<Frame*, 4> waiting_;
  InlineRing<Unreturned, 4> unreturned_;
  InlineRing<Returning, 8> returning_;  // by `back`
  Stats stats_;
  TimelineSink* timeline_ = nullptr;
  int timeline_id_ = -1;
  std::vector<std::uint32_t> blocked_inputs_;  // scratch for send_waiting()
};

}  // namespace fabricsim
