// The fabric protocol: what fabric components say to each other through
// their TLM-2.0 sockets, and when.
//
// Two conversations, each with its own protocol-types class so that a socket
// of one cannot be bound to a socket of the other (or to a memory's base
// protocol socket) by mistake.
//
// 1. Messages, between an NPU (or any traffic source) and its NIC
//    (`MessageProtocol`). The payload is a tlm_generic_payload whose
//    extension is a `Message`.
//      source --BEGIN_REQ(delay)--> NIC.in   the message is posted at now+delay
//      source <--END_REQ(delay)---  NIC.in   its last byte has left the NIC at
//                                            now+delay: the send buffer is free
//      NIC.out --BEGIN_REQ(delay)--> sink    the whole message has arrived at
//                                            now+delay; the sink answers
//                                            TLM_COMPLETED
//
// 2. Frames, between NICs, links and switches (`FrameProtocol`). A frame is a
//    run of up to `segment_bytes` of one message, cut into MTU packets that
//    travel back to back (headers counted in `wire_bytes`). It is the unit a
//    link serializes and a switch arbitrates.
//      sender --BEGIN_REQ(delay)--> receiver   the frame's head is available to
//                                              the receiver at now+delay and its
//                                              tail at frame.tail (cut-through:
//                                              the head moves on before the tail
//                                              has arrived)
//      sender <--END_REQ(delay)---- receiver   the frame has left the receiver's
//                                              buffer at now+delay
//    The receiver may answer BEGIN_REQ at once with TLM_UPDATED, phase END_REQ
//    and the delay, or return TLM_ACCEPTED and call nb_transport_bw later.
//    Unlike the base protocol, a sender may have many frames outstanding:
//    flow control is by credits. A link knows the buffer at its receiving end
//    and starts a frame only when the buffer will have room for it; END_REQ is
//    what returns the credit. Every frame gets exactly one END_REQ.
//
// Timing is annotated: every call carries the absolute time of what it reports
// as now+delay, and a receiver that needs to act in time order schedules the
// work in the fabric calendar (tlm/kernel/calendar.h) at that time.
#pragma once

#include <cstdint>
#include <tlm>
#include <vector>

#include "tlm/address.h"
#include "tlm/data_type.h"
#include "tlm/kernel/time.h"
#include "tlm/message_kind.h"
#include "tlm/sockets.h"

namespace fabricsim {

class Message;
class Frame;

/// Whoever posted a message and waits to hear that its last byte has left
/// the NIC (END_REQ): an NPU's send, a collective run. Told the time.
class MessageOwner {
 public:
  virtual void message_left(Message& m, Tick left) = 0;

 protected:
  ~MessageOwner() = default;
};

/// Whoever made a frame and waits to hear that it has left the next hop's
/// buffer (a reduction unit's result copies).
class FrameOwner {
 public:
  virtual void frame_left(Frame& f, Tick left) = 0;

 protected:
  ~FrameOwner() = default;
};

namespace detail {
/// Marks a generic payload as one of ours, so that a foreign payload arriving
/// on a fabric socket is told apart and refused instead of cast: our payloads
/// carry no data bytes (length 0), and their data pointer points at one of
/// these, which no other payload can. A field of the payload itself, not an
/// extension, whose lookup reads another heap block.
extern unsigned char g_message_mark;
extern unsigned char g_frame_mark;
}  // namespace detail

// A fabric socket lets in only payloads of its protocol's kind
// (TaggedTargetSocket asks `is_ours` when it is called through its interface,
// the way a foreign initiator calls it); behind it, components cast.
struct MessageProtocol {
  using tlm_payload_type = tlm::tlm_generic_payload;
  using tlm_phase_type = tlm::tlm_phase;
  static bool is_ours(tlm::tlm_generic_payload& gp);
};
struct FrameProtocol {
  using tlm_payload_type = tlm::tlm_generic_payload;
  using tlm_phase_type = tlm::tlm_phase;
  static bool is_ours(tlm::tlm_generic_payload& gp);
};

/// A message: the unit an NPU hands to a NIC and a NIC hands back. The same
/// object travels from source to sink (simulated memory is shared), so the
/// sink reads the sender's tags directly. It is the generic payload itself
/// (every payload on a MessageProtocol socket is a Message), which saves an
/// extension lookup per hop. Pooled: no allocation per message.
class Message : public tlm::tlm_generic_payload {
 public:
  static Message* allocate();
  /// Each holder drops its reference once; the last returns it to the pool.
  void ref() { ++refs_; }
  void unref();

  tlm::tlm_generic_payload& payload() { return *this; }
  /// The Message `gp` is, or null when it is not one of ours.
  static Message* of(tlm::tlm_generic_payload& gp) {
    return gp.get_data_ptr() == &detail::g_message_mark ? static_cast<Message*>(&gp) : nullptr;
  }
  /// A payload a MessageProtocol socket has let in, which is always a Message.
  static Message* cast(tlm::tlm_generic_payload& gp) { return static_cast<Message*>(&gp); }

  // --- what the fabric needs -------------------------------------------
  Address src = kNoAddress;
  Address dst = kNoAddress;
  std::uint64_t bytes = 0;
  MessageKind kind = MessageKind::kUnicast;
  /// Made by hardware (a memory system answering a switch's read), not by
  /// software: no per-message overhead at the NIC.
  bool hardware = false;
  /// A collective step's protocol: what the NIC adds per message and on the
  /// wire (message_kind.h).
  CommProtocol protocol = CommProtocol::kPlain;
  std::uint32_t flow = 0;  // spreads flows over equal-cost paths; same flow, same path
  /// The sender's work queue (0: none): a collective's. A unicast message
  /// posted right behind one with the same queue and destination leaves its
  /// NIC port after it, as a queue pair's work requests do; in-switch
  /// messages of one queue to one destination keep their posting order;
  /// other messages take turns frame by frame (models/nic/nic.h).
  std::uint32_t queue = 0;
  /// Transport control made by the NIC at `src` for the queue pair `flow` of
  /// the NIC at `dst`: consumed by that NIC, never delivered to its NPU.
  ///   kCongestion: RoCE's CNP (DCQCN);
  ///   kAck: acknowledges the frames in `acked` (window transports: TCP, DCTCP).
  enum class Notice : std::uint8_t { kNone, kCongestion, kAck };
  Notice notice = Notice::kNone;

  // --- the NICs' bookkeeping (next to the above: the hot path) -----------
  struct NicProgress {
    std::uint32_t frames_total = 0;
    std::uint32_t frames_sent = 0;
    std::uint32_t frames_received = 0;
    std::uint32_t frames_out = 0;     // sent frames whose leaving the output link has reported
    std::uint64_t frame_payload = 0;  // message bytes per frame (the last may hold fewer)
    std::uint32_t stripe_ports = 1;   // the NIC ports it spreads over (striped: more than one)
    bool striped() const { return stripe_ports > 1; }
    Message* behind = nullptr;  // the next message of its queue, offered once this one's frames are taken
    Tick posted_at = 0;
    Tick left_at = 0;  // when the last of those left
    Tick delivered_at = 0;
  } nic;
  std::uint64_t id = 0;

  // --- opaque to the fabric: the sender's own tags, read by the receiver --
  struct Tags {
    std::uint64_t collective = 0;  // which collective (or point-to-point tag); memory traffic has its own (memory)
    std::uint32_t chunk = 0;
    std::uint32_t step = 0;
    std::uint32_t src_rank = 0;
    std::uint32_t user = 0;  // which class of message (CollectiveEngine: MessageClass)
  } tag;

  // --- the sending NPU's: how it sent the message, who waits for it -------
  struct Sender {
    std::uint32_t port = 0;         // which of its NICs the message leaves by
    std::int32_t final_rank = -1;   // relayed by NPUs: the NPU it is really for
    bool relayed = false;           // this leg was sent by a relaying NPU, not the origin
    std::int64_t origin_node = -1;  // point-to-point: the sender's trace node, named if its receive disagrees
    MessageOwner* owner = nullptr;  // told when the message has left; null: nobody waits
  } sender;

  // --- in-network reduction (kinds other than kUnicast) --------------------
  struct Reduction {
    std::uint64_t group = 0;        // the group's key at the reduction units
    std::int32_t target = -1;       // group index of the member that gets the result; -1: all
    std::uint64_t data_offset = 0;  // pull requests: where the requested bytes lie in the buffer
    std::uint32_t slot_base = 0;    // slot of this message's first frame (a pull's answer is one frame)
    DataType dtype = DataType::kFp32;
    ReduceOp op = ReduceOp::kSum;
  } reduction;

  // --- memory traffic (MEM_LOAD / MEM_STORE to a memory on the fabric) ----
  enum class MemoryOp : std::uint8_t { kNone, kLoadRequest, kStoreData, kLoadData, kStoreAck };
  struct MemoryAccess {
    MemoryOp op = MemoryOp::kNone;  // which leg of a load or a store this message is
    bool error = false;             // the memory refused the access
    std::uint64_t request = 0;      // the requester's number for the access, echoed in the answer
    std::uint64_t address = 0;
    std::uint64_t bytes = 0;
  } memory;

  // --- data mode: the bytes themselves (empty otherwise) ------------------
  std::vector<std::uint8_t> data;

  // --- an ACK's contents (Notice::kAck) ------------------------------------
  struct Acked {
    std::uint64_t message = 0;  // the data message's id
    std::uint32_t index = 0;    // its frame
    bool ecn = false;           // the frame arrived marked (ECN echo)
  };
  std::vector<Acked> acked;

  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;

 private:
  Message();
  void reset();
  int refs_ = 0;
};

/// A frame: a run of one message's bytes on its way through the fabric. Like
/// Message, it is the generic payload itself.
class Frame : public tlm::tlm_generic_payload {
 public:
  static Frame* allocate();
  /// Retires the frame. Callers up the stack may still hold it (a link
  /// answering in its return path), so it is reused only after the current
  /// calendar event has finished: see recycle_retired().
  void retire();
  /// Retires the frame, dropping its reference to its message if it holds one.
  void release() {
    if (holds_message) {
      holds_message = false;
      msg->unref();
    }
    retire();
  }
  /// Makes retired frames available again; the calendar calls this between
  /// events, when no call chain can still refer to them.
  static void recycle_retired();
  static bool any_retired();

  tlm::tlm_generic_payload& payload() { return *this; }
  /// The Frame `gp` is, or null when it is not one of ours.
  static Frame* of(tlm::tlm_generic_payload& gp) {
    return gp.get_data_ptr() == &detail::g_frame_mark ? static_cast<Frame*>(&gp) : nullptr;
  }
  /// A payload a FrameProtocol socket has let in, which is always a Frame.
  static Frame* cast(tlm::tlm_generic_payload& gp) { return static_cast<Frame*>(&gp); }

  Message* msg = nullptr;
  Address src = kNoAddress;
  Address dst = kNoAddress;
  std::uint64_t offset = 0;      // first message byte carried
  std::uint64_t bytes = 0;       // message bytes carried
  std::uint64_t wire_bytes = 0;  // bytes on the wire, packet headers included
  std::uint32_t index = 0;       // frame number within the message
  bool last = false;             // last frame of the message
  bool request = false;          // a read request: header-only packets on a virtual channel of their own
  bool fetched = false;          // the sending NIC's: its bytes have been read from memory
  std::uint32_t flow = 0;
  /// Set by a router when this hop enters a ring dimension; links then demand
  /// room for one more frame (bubble flow control, deadlock-free on rings).
  bool entering_ring = false;
  /// Congestion Experienced: a switch's egress queue marked it (ECN, RED
  /// thresholds: models/link/link.h); the receiving NIC answers with a
  /// congestion notification when its transport has congestion control.
  bool ecn = false;
  /// The frame holds a reference to `msg` (window transports: a copy sent
  /// again may arrive after its message was delivered and completed).
  /// Whoever ends the frame's life drops it: release().
  bool holds_message = false;
  /// Scratch for the router holding the frame: the port it came in on.
  std::uint32_t hop_in = 0;
  /// Told when the frame has left the next hop (a reduction unit's copies).
  FrameOwner* owner = nullptr;

  // Timing, rewritten at each hop by whoever hands the frame on:
  Tick head = 0;  // when the first byte is available to the callee
  Tick tail = 0;  // when the last byte is
  /// How long before `head` its bytes began to come in at the sender: a NIC
  /// reading the frame over a PCIe path slower than its wire sends it whole
  /// once the wire cannot outrun the rest, where a real NIC sends each packet
  /// as it comes. A receiver that passes the bytes on as they come (a NIC
  /// writing through a PCIe switch) takes them as having come over
  /// [head - spread, tail]. Kept from hop to hop, less what the frame waits
  /// for a link or DCQCN's pacing (its packets would have been squeezed
  /// together too); 0 for a frame sent whole.
  /// (The sending NIC's scratch until the frame leaves: when its first byte
  /// came in from memory.)
  Tick spread = 0;

  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;

 private:
  Frame();
};

template <typename Module>
using MessageInitiatorSocket = TaggedInitiatorSocket<Module, MessageProtocol>;
template <typename Module>
using MessageTargetSocket = TaggedTargetSocket<Module, MessageProtocol>;
template <typename Module>
using FrameInitiatorSocket = TaggedInitiatorSocket<Module, FrameProtocol>;
template <typename Module>
using FrameTargetSocket = TaggedTargetSocket<Module, FrameProtocol>;

inline bool MessageProtocol::is_ours(tlm::tlm_generic_payload& gp) {
  return Message::of(gp) != nullptr;
}
inline bool FrameProtocol::is_ours(tlm::tlm_generic_payload& gp) {
  return Frame::of(gp) != nullptr;
}

/// Convenience for annotated calls: the delay from now to absolute time t.
inline sc_core::sc_time delay_until(Tick t) {
  return to_sc_time(t - now_ticks());
}
inline Tick absolute(const sc_core::sc_time& delay) {
  return now_ticks() + delay.value();
}

}  // namespace fabricsim
