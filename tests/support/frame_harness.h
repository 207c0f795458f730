// Test ends for one fabric component bound straight to its sockets, without
// a platform file or builder: a source that offers frames at given times and
// honours END_REQ, a sink that records when each frame's head and tail arrive
// and returns its credit (at once or after a hold), and the same two for
// messages on a NIC's `in` and `out`.
//
// Frames and messages are pooled: whoever ends a frame's life retires it (the
// sink, or the component under test when it consumes frames, as a reduction
// unit does); tests drop their own message references when the run is over.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <systemc>
#include <vector>

#include "tlm/fabric_protocol.h"
#include "tlm/kernel/calendar.h"

namespace fabricsim::testutil {

/// Runs the kernel to the end and rethrows what a calendar event threw.
void run_to_end();

/// A data frame of `wire_bytes` (its payload too: no headers) for `dst`,
/// coming from input `input` (what a switch would put in hop_in).
Frame* make_frame(std::uint64_t wire_bytes, Address dst = 0, std::uint32_t input = 0);

class FrameSource : public sc_core::sc_module {
 public:
  FrameInitiatorSocket<FrameSource> out;

  /// `one_at_a_time`: a frame is offered only once the one before it has
  /// left (its END_REQ time has come), as a NIC port or switch output does.
  /// Otherwise each is offered at its own time, whatever is outstanding.
  explicit FrameSource(const sc_core::sc_module_name& name, bool one_at_a_time = true);

  /// Offers `f` at `at` (or when the frame before has left, if later): its
  /// head is available then and its tail `tail_after` later.
  void send(Frame* f, Tick at, Tick tail_after = 0);

  /// Per frame, in the order sent: when it was offered, and when it had left
  /// this source (END_REQ; kNever if it never did).
  const std::vector<Tick>& offered() const { return offered_; }
  const std::vector<Tick>& left() const { return left_; }

 private:
  struct Pending {
    Frame* frame;
    Tick at;
    Tick tail_after;
  };
  void offer_ready();  // also the calendar's event: the next frame's turn
  void offer(std::size_t i);
  void frame_left(Frame* f, Tick when);
  tlm::tlm_sync_enum out_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  bool one_at_a_time_;
  ForwardPath<FrameProtocol> to_target_{out};
  std::vector<Pending> pending_;
  std::size_t next_ = 0;
  Tick free_at_ = 0;  // one at a time: when the last frame offered has left (kNever: not known yet)
  std::vector<Tick> offered_;
  std::vector<Tick> left_;
};

class FrameSink : public sc_core::sc_module {
 public:
  FrameTargetSocket<FrameSink> in;

  /// How the sink returns a frame's buffer (END_REQ): in the return path of
  /// BEGIN_REQ with its time annotated, or by a backward call at that time.
  enum class Release { kInReturnPath, kLater };

  /// Each frame is held `hold` after its tail has arrived, then released.
  explicit FrameSink(const sc_core::sc_module_name& name, Tick hold = 0, Release how = Release::kInReturnPath);

  /// A frame as it arrived (copied out: the frame itself is retired).
  struct Arrival {
    Tick called = 0;  // when BEGIN_REQ came
    Tick head = 0;    // when its head arrived (BEGIN_REQ's time)
    Tick tail = 0;    // when its tail arrived
    Tick released = 0;
    Tick spread = 0;  // Frame::spread
    Address src = kNoAddress;
    Address dst = kNoAddress;
    std::uint64_t bytes = 0;
    std::uint64_t wire_bytes = 0;
    std::uint64_t offset = 0;
    std::uint32_t index = 0;
    bool last = false;
    Message* msg = nullptr;
  };
  /// In the order BEGIN_REQ came (a link calls when it grants a frame, which
  /// may be well before its head arrives).
  const std::vector<Arrival>& arrivals() const { return arrivals_; }
  /// The first arrival of the frame with this index; null if none came.
  const Arrival* find(std::uint32_t index) const;

  /// Drops the receiver's reference to each message whose frames came here
  /// (a reduction unit's results).
  void unref_messages();

 private:
  void release(Frame* f);  // the calendar's: END_REQ for a held frame
  tlm::tlm_sync_enum in_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  Tick hold_;
  Release how_;
  BackwardPath<FrameProtocol> to_sender_{in};
  std::vector<Arrival> arrivals_;
  std::set<Message*> messages_;
};

/// Posts messages into a NIC's `in` and records when each has left (END_REQ).
class MessageSource : public sc_core::sc_module {
 public:
  MessageInitiatorSocket<MessageSource> out;
  explicit MessageSource(const sc_core::sc_module_name& name);
  /// Posts `m` at `at` (annotated delay zero: the NIC takes it then).
  void post(Message* m, Tick at);
  /// When `m`'s last byte had left the NIC; kNever if it has not.
  Tick left(const Message* m) const;

 private:
  void send(Message* m);  // the calendar's: BEGIN_REQ now
  tlm::tlm_sync_enum out_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  ForwardPath<MessageProtocol> to_nic_{out};
  std::map<const Message*, Tick> left_;
};

/// Takes messages a NIC delivers on `out` and records when each came.
class MessageSink : public sc_core::sc_module {
 public:
  MessageTargetSocket<MessageSink> in;
  explicit MessageSink(const sc_core::sc_module_name& name);
  const std::vector<std::pair<Message*, Tick>>& delivered() const { return delivered_; }

 private:
  tlm::tlm_sync_enum in_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  std::vector<std::pair<Message*, Tick>> delivered_;
};

}  // namespace fabricsim::testutil
