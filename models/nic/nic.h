// A NIC: an NPU's port into one fabric.
//
// Sending, it takes messages from its NPU (`in`), waits out the per-message
// overhead, cuts each message into frames of up to `segment_bytes` (MTU
// packets back to back, a header per packet; a striped message into about
// as many frames for each of its ports) and offers them to its output link,
// one frame at a time per port and round robin between the messages it is
// sending, never faster than its injection bandwidth. A collective's
// messages to one destination (Message::queue) go in order, as a queue
// pair's work requests and a channel's steps do: a unicast message posted
// right behind another of its queue to the same destination waits for that
// one's frames (one posted later, after another queue's, takes turns with
// it), and in-switch messages keep their posting order in the rotation
// (requeue()). Receiving, it counts
// a message's frames and hands the message to its NPU (`out`) when the tail of
// the last one has arrived. A NIC with several ports (rings, tori, meshes)
// also forwards frames addressed to other NPUs, by the switch's policy (a
// Forwarder, models/switch/forwarding.h).
//
// Sockets: in (target) takes messages from the NPU; out (initiator) hands
// received messages to the NPU; tx[p]/rx[p] send frames into and take frames
// from the links of port p; dma (optional) reaches the NPU's memory.
// Statistics: stats() (messages and bytes each way), frames_forwarded().
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "models/nic/dcqcn.h"
#include "models/nic/nic_params.h"
#include "models/nic/window_transport.h"
#include "models/switch/forwarding.h"
#include "tlm/kernel/calendar.h"
#include "tlm/kernel/fifo.h"
#include "tlm/kernel/parameters.h"
#include "tlm/memory_client.h"

namespace fabricsim {

class Nic : public sc_core::sc_module, private MemoryClient<Frame*>::Listener {
 public:
  using Params = NicParams;  // models/nic/nic_params.h

  struct Stats {
    std::uint64_t messages_sent = 0;
    std::uint64_t messages_received = 0;
    std::uint64_t bytes_sent = 0;
    std::uint64_t bytes_received = 0;
  };

  sc_core::sc_vector<FrameInitiatorSocket<Nic>> tx;  // port p, frames out
  sc_core::sc_vector<FrameTargetSocket<Nic>> rx;     // port p, frames in
  MessageTargetSocket<Nic> in;                       // messages to send, from the NPU
  MessageInitiatorSocket<Nic> out;                   // messages received, to the NPU
  /// The NPU's memory, optional: bound, the NIC reads each frame from it
  /// before sending and writes each frame into it after receiving, and a
  /// frame's receive buffer is free only once it is written.
  MemoryClient<Frame*> dma;

  Nic(const sc_core::sc_module_name& name, const Params& params);

  const Params& params() const { return params_; }
  const Stats& stats() const { return stats_; }
  Address address() const { return params_.address; }
  unsigned num_ports() const { return params_.ports; }
  /// How it passes on frames for other NPUs; its routing table.
  Forwarder& forwarder() { return forwarder_; }
  const Forwarder& forwarder() const { return forwarder_; }
  std::uint64_t frames_forwarded() const { return forwarder_.frames_forwarded(); }
  /// Bytes on the wire for `bytes` of payload, headers included.
  std::uint64_t wire_bytes(std::uint64_t bytes) const { return params_.wire_bytes(bytes); }

  /// What the fabric's transport asks of its NICs (RoCE: platforms set it
  /// from the fabric's `transport` section).
  struct Transport {
    /// Queue pairs per connection, as NCCL opens (NCCL_IB_QPS_PER_CONNECTION):
    /// a message's frames take them in turn, each its own flow to ECMP.
    std::uint32_t queue_pairs = 1;
    bool dcqcn = false;  // rate control per queue pair (dcqcn.h)
    Dcqcn::Params dcqcn_params;
    bool window = false;                    // reliable window transport per queue pair (window_transport.h)
    WindowTransport::Params window_params;  // its mss is set from the NIC's packets
    Bandwidth line_rate;                    // the port's: DCQCN's highest rate
  };
  void set_transport(const Transport& t);
  /// DCQCN's state, or null when the NIC has none.
  const Dcqcn* dcqcn() const { return dcqcn_.get(); }
  /// The window transport's state, or null.
  const WindowTransport* window_transport() const { return window_.get(); }
  /// The rate of its ports' links: how long a frame takes to leave, which a
  /// cut-through element on the DMA path (a PCIe switch) needs to know when
  /// the NIC may start sending bytes it is still reading. Unset: the
  /// injection cap alone.
  void set_line_rate(Bandwidth rate) { line_rate_ = rate; }
  /// The flow of frame `index` of a message of flow `flow`: its queue pair.
  std::uint32_t queue_pair_flow(std::uint32_t flow, std::uint32_t index) const {
    return queue_pairs_ <= 1 ? flow : flow + (index % queue_pairs_) * 0x9e3779b9u;
  }

 private:
  Tick receive_local(Frame* f);
  void frame_sent(unsigned port, Frame* f, Tick left);

  tlm::tlm_sync_enum rx_fw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum tx_bw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  tlm::tlm_sync_enum in_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum out_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  // post() and deliver() are also calendar events: a message posted with a
  // delay, a message whose last frame is in.
  void post(Message* m);
  void pump(unsigned port);
  void on_port_free(unsigned port);  // the calendar's: the frame on `port` has left
  Frame* next_frame(unsigned port);
  void memory_done(Frame* f, bool write, tlm::tlm_response_status status) override;
  void written(Frame* f);
  void deliver(Message* m);
  /// When `m` is past its software overhead (at once for the NIC's own).
  Tick ready_at(const Message& m) const { return m.nic.posted_at + (m.hardware ? 0 : params_.overhead(m.protocol)); }
  /// When `m`'s next frame may start: ready_at() and, under DCQCN, when its
  /// queue pair's rate allows.
  Tick start_of(const Message& m) const;
  /// Puts first the first message of `queue` that may start now, else the
  /// one that may start soonest; returns when that one may start (kNever if
  /// none may send). Drops the spent striped entries it finds in front.
  Tick put_startable_first(InlineRing<Message*, 4>& queue) const;
  /// Frame `index` of `m`, cut as every frame is.
  Frame* frame_of(Message* m, std::uint32_t index) const;
  /// Message bytes frame `index` of `m` carries.
  std::uint64_t frame_bytes(const Message& m, std::uint32_t index) const;
  /// Wire bytes of a frame of `m` carrying `bytes` of it.
  std::uint64_t frame_wire_bytes(const Message& m, std::uint64_t bytes) const;
  /// A CNP or ACK made by this NIC for the NIC at `to`.
  Message* control_message(Message::Notice notice, Address to, std::uint32_t flow, std::uint64_t bytes);
  // Window transport.
  struct PendingAcks {  // frames from one queue pair waiting to be acknowledged
    Address to = kNoAddress;
    std::uint32_t flow = 0;
    std::vector<Message::Acked> acks;
    Tick ready = 0;  // the latest tail among them: the ACK cannot leave before
    bool timer = false;
  };
  struct TimeoutTimer {
    std::uint64_t qp = 0;
    bool pending = false;
  };
  /// Whether some message on `port` has a queue pair whose window lets its
  /// next frame go (pick_next() puts it first).
  bool window_open(unsigned port);
  /// Whether `m`'s queue pair's window lets its next frame go (always without
  /// a window transport, and for CNPs and ACKs).
  bool window_allows(const Message& m) const;
  void acknowledge(const Frame& f);
  void send_ack(PendingAcks& waiting);
  void acknowledged(const Message& ack);
  void send_again(const std::vector<WindowTransport::Resend>& resend);
  void arm_timeout(std::uint64_t qp);
  void on_ack_timer(PendingAcks* waiting);  // the calendar's: ack_delay has passed
  void on_timeout(TimeoutTimer* timer);     // the calendar's: a queue pair's timeout
  /// Notification point: a marked frame has arrived.
  void congestion_seen(const Frame& f);

  struct TxPort {
    /// Messages with frames still to offer, round robin within each class:
    /// [0] the NPU's own, [1] its memory system's answers to read requests
    /// (a virtual channel of their own; the port alternates between the two).
    InlineRing<Message*, 4> sending[2];
    unsigned turn = 0;
    /// The NPU's message posted last, while it still has frames to offer: a
    /// message of the same queue to the same destination goes behind it.
    Message* last_posted = nullptr;
    bool idle() const { return sending[0].empty() && sending[1].empty(); }
    bool frame_out = false;  // a frame offered and not yet started
    Tick free_at = 0;        // when its last frame left: it could send from then
    bool wake_pending = false;
    bool pumping = false;
    Fifo<Frame*> prefetch;         // taken from the messages, in order: being read from memory, or read
    InlineRing<Frame*, 4> resend;  // window transport: frames lost on the way, sent again first
    std::uint64_t prefetch_bytes = 0;
  };
  /// Whether the port may read ahead another frame of the message it takes next.
  bool within_share(TxPort& tp) const;
  /// The class the port takes its next frame from (its queue's front is the
  /// message): the classes take turns, but one that can send now goes before
  /// one that cannot.
  unsigned pick_next(TxPort& tp) const;

  void end_of_elaboration() override;
  /// Puts m, which has frames left, back into its class's rotation.
  static void requeue(InlineRing<Message*, 4>& queue, Message* m);

  // What a message or frame touches, together (see Link).
  Tick injection_free_ = 0;
  bool dma_bound_ = false;  // dma.bound(), which reads the socket, kept here
  Params params_;
  Calendar& calendar_ = Calendar::instance();
  BackwardPath<MessageProtocol> to_sender_{in};    // END_REQ: a message has left
  ForwardPath<MessageProtocol> to_receiver_{out};  // a message has arrived
  Stats stats_;
  std::vector<TxPort> tx_ports_;
  Forwarder forwarder_;
  std::uint32_t queue_pairs_ = 1;
  std::unique_ptr<Dcqcn> dcqcn_;             // null unless the transport has it: the hot path only tests it
  std::unique_ptr<WindowTransport> window_;  // likewise
  std::unordered_map<std::uint64_t, PendingAcks> pending_acks_;  // by queue pair (sender, flow)
  std::unordered_map<std::uint64_t, TimeoutTimer> timeouts_;     // by queue pair (receiver, flow)
  Bandwidth line_rate_ = Bandwidth::unlimited();                 // set_line_rate()
  /// How long `wire_bytes` take to leave: at the slower of the injection
  /// cap and the line rate.
  Tick leave_time(std::uint64_t wire_bytes) const;
};

}  // namespace fabricsim
