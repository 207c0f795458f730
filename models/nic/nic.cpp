#include "models/nic/nic.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace fabricsim {

const ParamTable<Nic::Params>& Nic::Params::table() {
  static const auto table =
      ParamTable<NicParams>("nic",
                            "an NPU's network interface: cuts messages into frames, sends them over its ports, "
                            "reassembles what arrives")
          .add("mtu", Quantity::kBytes, &NicParams::mtu_bytes, "payload bytes per packet")
          .range(1, static_cast<double>(limits::kMaxBytes))
          .legacy("mtu_bytes", 1, "bytes")
          .add("header", Quantity::kBytes, &NicParams::header_bytes, "bytes added on the wire per packet")
          .legacy("header_bytes", 1, "bytes")
          .add("segment", Quantity::kBytes, &NicParams::segment_bytes,
               "most message bytes per frame (a frame holds whole packets; at most 1 GiB, a DMA request's size)")
          .range(1, static_cast<double>(1ull << 30))
          .legacy("segment_bytes", 1, "bytes")
          .add("read_ahead", Quantity::kBytes, &NicParams::read_ahead_bytes,
               "bytes of frames each port reads from the NPU's memory ahead of the wire (outstanding DMA reads; "
               "at least one frame, at most 16; of a striped message, no more than the port's share); 0 or unset: "
               "derived by Little's law, the port's rate x (the DMA path's latency + a frame's read at the "
               "memory's bandwidth shared by every port reading and writing), in whole frames")
          .range(0, static_cast<double>(1u << 30))
          .add("message_overhead", Quantity::kDuration, &NicParams::message_overhead,
               "per message, before its first frame leaves")
          .legacy("message_overhead_ns", 1e3, "ns")
          .add("step_overhead_simple", Quantity::kDuration, &NicParams::step_overhead_simple,
               "per message of a collective step under NCCL's Simple protocol (data, fence, flag): its "
               "synchronization, in place of message_overhead; unset: message_overhead")
          .follows("message_overhead")
          .add("step_overhead_ll", Quantity::kDuration, &NicParams::step_overhead_ll,
               "the same under the LL protocol (a flag in every 8-byte line); unset: message_overhead")
          .follows("message_overhead")
          .add("step_overhead_ll128", Quantity::kDuration, &NicParams::step_overhead_ll128,
               "the same under the LL128 protocol (a flag in every 128-byte line); unset: message_overhead")
          .follows("message_overhead")
          .add("injection_bandwidth", Quantity::kBandwidth, &NicParams::injection,
               "most bytes per second the NPU hands the NIC, all ports together")
          .zero_unlimited()
          .legacy("injection_bandwidth_GBps", 1e9, "GB/s")
          .add("forward_latency", Quantity::kDuration, &NicParams::forward_latency,
               "head in to head out for frames passing through to other NPUs")
          .legacy("forward_latency_ns", 1e3, "ns")
          .add("stripe", Quantity::kFlag, &NicParams::stripe,
               "spread each message's frames over every port that leads to its destination");
  return table;
}

namespace {
constexpr std::size_t kMaxPrefetch = 16;
}  // namespace

std::uint32_t NicParams::derived_read_ahead(Bandwidth port_rate, Tick path_latency, Bandwidth read_rate,
                                            std::uint64_t segment) {
  if (segment == 0) return 0;
  if (port_rate.is_unlimited())
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(kMaxPrefetch * segment, 1u << 30));
  // A frame's read must be done by the time the frames ahead of it have
  // left: rate x (latency + the frame's own read) bytes in flight, at the
  // rate the port can keep (no faster than the memory gives it: reading
  // further ahead would only take the memory from others).
  const double read = static_cast<double>(path_latency + read_rate.time_for(static_cast<double>(segment)));
  const double rate = read_rate.is_unlimited() ? port_rate.bytes_per_ps()
                                               : std::min(port_rate.bytes_per_ps(), read_rate.bytes_per_ps());
  const double in_flight = rate * read;
  const auto frames = std::clamp<std::uint64_t>(
      static_cast<std::uint64_t>(std::ceil(in_flight / static_cast<double>(segment))), 1, kMaxPrefetch);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(frames * segment, 1u << 30));
}

Nic::Nic(const sc_core::sc_module_name& name, const Params& params)
    : sc_core::sc_module(name),
      tx("tx", params.ports),
      rx("rx", params.ports),
      in("in"),
      out("out"),
      dma("dma", *this),
      params_(params),
      tx_ports_(params.ports),
      forwarder_(*this, params.forward_latency) {
  if (params_.ports == 0) throw std::invalid_argument(std::string(this->name()) + ": a NIC needs at least one port");
  if (params_.mtu_bytes == 0) throw std::invalid_argument(std::string(this->name()) + ": mtu_bytes must be > 0");
  if (params_.segment_bytes < params_.mtu_bytes) params_.segment_bytes = params_.mtu_bytes;
  if (params_.read_ahead_bytes == 0) {
    params_.read_ahead_bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(params_.segment_bytes, 1u << 30));
  }
  params_.segment_bytes = params_.frame_bytes();
  for (unsigned p = 0; p < params_.ports; ++p) {
    forwarder_.add_port(tx[p], rx[p]);
    tx[p].register_nb_transport_bw<&Nic::tx_bw>(this, static_cast<int>(p));
    rx[p].register_nb_transport_fw<&Nic::rx_fw>(this, static_cast<int>(p));
  }
  in.register_nb_transport_fw<&Nic::in_fw>(this, 0);
  out.register_nb_transport_bw<&Nic::out_bw>(this, 0);
}

void Nic::end_of_elaboration() {
  dma_bound_ = dma.bound();
}

tlm::tlm_sync_enum Nic::in_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on in");
  Message* m = Message::cast(gp);
  if (delay == sc_core::SC_ZERO_TIME) {
    post(m);
  } else {
    calendar_.schedule<&Nic::post>(absolute(delay), this, m);
  }
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum Nic::rx_fw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on rx");
  Frame* f = Frame::cast(gp);
  if (f->dst != params_.address) {  // passing through
    forwarder_.pass_on(static_cast<unsigned>(port), f, absolute(delay));
    return tlm::TLM_ACCEPTED;
  }
  f->hop_in = static_cast<std::uint32_t>(port);
  // A CNP's or ACK's reference is this NIC's now, dropped in deliver().
  if (f->msg->notice != Message::Notice::kNone) f->holds_message = false;
  if (f->ecn && dcqcn_) congestion_seen(*f);
  if (window_ && f->msg->notice == Message::Notice::kNone) {
    acknowledge(*f);
    if (!window_->first_arrival(*f->msg, f->index, f->msg->nic.frames_total)) {  // a copy sent again: counted once
      const Tick tail = f->tail;
      f->release();
      phase = tlm::END_REQ;
      delay = delay_until(tail);
      return tlm::TLM_UPDATED;
    }
  }
  const Tick free_at = receive_local(f);
  if (free_at == kNever) return tlm::TLM_ACCEPTED;
  phase = tlm::END_REQ;
  delay = delay_until(free_at);
  return tlm::TLM_UPDATED;
}

tlm::tlm_sync_enum Nic::tx_bw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::END_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on tx");
  Frame* f = Frame::cast(gp);
  const Tick left = absolute(delay);
  if (!forwarder_.output_free(static_cast<unsigned>(port), f, left)) frame_sent(static_cast<unsigned>(port), f, left);
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum Nic::out_bw(int, tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) {
  throw std::logic_error(std::string(name()) + ": the sink of a message answers TLM_COMPLETED, not through bw");
}

void Nic::post(Message* m) {
  m->nic.posted_at = now_ticks();
  std::vector<std::uint16_t> stripe_ports;  // the ports a striped message spreads over
  if (params_.stripe && num_ports() > 1) stripe_ports = forwarder_.routes().ports(m->dst);
  m->nic.frame_payload = params_.segment_bytes;
  m->nic.stripe_ports = stripe_ports.size() > 1 ? static_cast<std::uint32_t>(stripe_ports.size()) : 1;
  if (stripe_ports.size() > 1 && m->kind == MessageKind::kUnicast && !m->hardware) {
    // A striping NIC interleaves a message over its links packet by packet
    // (NVLink spreads by address): the message is cut into about as many
    // frames for each port, in whole packets, so that a small one is not
    // sent on one link and a large one does not leave links idle at its end.
    // (In-switch messages keep whole segments: reduction units match frames
    // by index across members.)
    const std::uint64_t ports = stripe_ports.size();
    const std::uint64_t packets = std::max<std::uint64_t>(1, (m->bytes + params_.mtu_bytes - 1) / params_.mtu_bytes);
    const std::uint64_t per_port = (packets + ports - 1) / ports;  // packets
    const std::uint64_t segment_packets = params_.segment_bytes / params_.mtu_bytes;
    const std::uint64_t frames_per_port = (per_port + segment_packets - 1) / segment_packets;
    m->nic.frame_payload = (per_port + frames_per_port - 1) / frames_per_port * params_.mtu_bytes;
  }
  m->nic.frames_total = static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1, (m->bytes + m->nic.frame_payload - 1) / m->nic.frame_payload));
  m->nic.frames_sent = 0;
  if (m->dst == params_.address) throw std::logic_error(std::string(name()) + ": message addressed to itself");
  if (m->notice == Message::Notice::kNone) {
    ++stats_.messages_sent;
    if (m->kind != MessageKind::kPullRequest) stats_.bytes_sent += m->bytes;
  }
  if (stripe_ports.size() > 1) {
    // Each port's queue entry holds a reference: the message stays queued
    // on the ports that did not send its last frames until they look at it
    // again.
    for (auto p : stripe_ports) {
      m->ref();
      tx_ports_[p].sending[m->hardware ? 1 : 0].push_back(m);
    }
    for (auto p : stripe_ports) pump(p);
    return;
  }
  const unsigned port = num_ports() == 1 ? 0 : forwarder_.routes().port(m->dst, m->flow);
  TxPort& tp = tx_ports_[port];
  // The NPU's own unicast messages (not CNPs, ACKs, or in-switch messages,
  // which keep their order in the rotation: requeue()).
  if (!m->hardware && m->notice == Message::Notice::kNone && m->kind == MessageKind::kUnicast) {
    Message* last = tp.last_posted;
    tp.last_posted = m->queue != 0 ? m : nullptr;
    if (last && m->queue == last->queue && m->dst == last->dst) {
      last->nic.behind = m;  // offered when last's frames are all taken (next_frame)
      return;                // the port is busy with last's queue
    }
  }
  tp.sending[m->hardware ? 1 : 0].push_back(m);  // pump() takes it at once when the port is idle
  pump(port);
}

Frame* Nic::frame_of(Message* m, std::uint32_t index) const {
  Frame* f = Frame::allocate();
  f->msg = m;
  f->src = m->src;
  f->dst = m->dst;
  f->index = index;
  f->flow = queue_pair_flow(m->flow, index);
  f->offset = static_cast<std::uint64_t>(index) * m->nic.frame_payload;
  f->bytes = frame_bytes(*m, index);
  f->request = m->kind == MessageKind::kPullRequest;
  f->wire_bytes = frame_wire_bytes(*m, f->bytes);
  f->last = index + 1 == m->nic.frames_total;
  if (m->notice != Message::Notice::kNone) {
    // A CNP or ACK is one frame, which carries the receiving NIC's reference
    // (control_message()): a frame dropped on the way drops it with it.
    f->holds_message = true;
  } else if (window_) {
    m->ref();
    f->holds_message = true;
  }
  return f;
}

bool Nic::within_share(TxPort& tp) const {
  // A striped message's frames are shared out between its ports (its links
  // interleave it): a port reads ahead no more than its share of the message
  // it would take next, so that the first port to look does not read the
  // whole of a small message while the others idle.
  const auto& queue = tp.sending[pick_next(tp)];
  const Message* m = queue.empty() ? nullptr : queue.front();
  if (!m || !m->nic.striped() || m->nic.frames_sent == m->nic.frames_total) return true;
  const std::uint32_t share = (m->nic.frames_total + m->nic.stripe_ports - 1) / m->nic.stripe_ports;
  std::uint32_t held = 0;
  for (std::size_t i = 0; i < tp.prefetch.size(); ++i) held += tp.prefetch[i]->msg == m ? 1 : 0;
  return held < share;
}

Tick Nic::start_of(const Message& m) const {
  Tick t = ready_at(m);
  if (dcqcn_ && m.notice == Message::Notice::kNone)
    t = std::max(t, dcqcn_->next_start(Dcqcn::key(m.dst, queue_pair_flow(m.flow, m.nic.frames_sent))));
  return t;
}

Tick Nic::put_startable_first(InlineRing<Message*, 4>& queue) const {
  // A message still inside its software overhead (or held back by its
  // rate) must not hold the port while others could send, as a NIC's
  // scheduler sees to: the first that may send now goes first, else the one
  // that may send soonest. (Taking turns blindly, each message posted to a
  // busy port idled it for the whole overhead: overheads added up in series.)
  // Under a window transport only messages whose window has room count.
  while (!queue.empty() && queue.front()->nic.frames_sent == queue.front()->nic.frames_total) {
    queue.front()->unref();  // striped, its frames all taken by other ports: this queue entry's
    queue.pop_front();
  }
  if (queue.empty()) return kNever;
  const Tick now = now_ticks();
  const auto out = [this](const Message* m) {  // striped and done elsewhere, or its window full
    return m->nic.frames_sent == m->nic.frames_total || !window_allows(*m);
  };
  if (!out(queue.front())) {
    const Tick t = start_of(*queue.front());
    if (t <= now || queue.size() == 1) return t;
  }
  std::size_t best = 0;
  Tick best_start = kNever;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    if (out(queue[i])) continue;
    const Tick t = start_of(*queue[i]);
    if (t < best_start) {
      best = i;
      best_start = t;
      if (t <= now) break;
    }
  }
  if (best != 0) {
    Message* m = queue[best];
    queue.erase(best);
    queue.insert(0, m);
  }
  return best_start;
}

unsigned Nic::pick_next(TxPort& tp) const {
  unsigned c = tp.sending[tp.turn].empty() ? tp.turn ^ 1 : tp.turn;
  const Tick start = put_startable_first(tp.sending[c]);
  if (start > now_ticks() && !tp.sending[c ^ 1].empty() && put_startable_first(tp.sending[c ^ 1]) < start) c ^= 1;
  return c;
}

Frame* Nic::next_frame(unsigned port) {
  TxPort& tp = tx_ports_[port];
  // The classes take turns when both have something to send.
  const unsigned c = pick_next(tp);
  auto& queue = tp.sending[c];
  if (queue.empty()) return nullptr;  // its entries were striped messages sent by other ports
  tp.turn = c ^ 1;
  Message* m = queue.front();
  queue.pop_front();
  while (m->nic.frames_sent == m->nic.frames_total) {  // striped: other ports took its last frames
    m->unref();                                        // this queue entry's
    if (queue.empty()) return nullptr;
    m = queue.front();
    queue.pop_front();
  }
  Frame* f = frame_of(m, m->nic.frames_sent++);
  f->head = std::max(now_ticks(), ready_at(*m));
  if (window_ && m->notice == Message::Notice::kNone) {
    window_->sent(Dcqcn::key(f->dst, f->flow), m, f->index, f->wire_bytes, port, now_ticks());
    arm_timeout(Dcqcn::key(f->dst, f->flow));
  }
  f->hop_in = port;  // until it is sent: which port it is for
  if (!f->last) {
    requeue(queue, m);
  } else if (m->nic.striped()) {
    m->unref();  // this queue entry's (the sender's keeps it until the frame has left)
  } else {
    if (tp.last_posted == m) tp.last_posted = nullptr;         // nothing more can go behind it
    if (Message* next = m->nic.behind) queue.push_back(next);  // its queue's next message takes its turn
  }
  return f;
}

void Nic::requeue(InlineRing<Message*, 4>& queue, Message* m) {
  queue.push_back(m);  // round robin between messages
  if (m->queue == 0 || m->kind == MessageKind::kUnicast) return;
  // A collective's in-switch messages (reads, contributions, multicasts) to
  // one destination go in the order they were posted, as a channel's steps
  // do: the ones behind m move behind it again. Taking turns, the pieces in
  // flight would all advance together and finish together, and the next
  // level of a pipelined collective would get them in bursts. (Unicast
  // messages of a queue keep their order by waiting behind one another:
  // post().)
  const std::size_t others = queue.size() - 1;
  std::size_t i = 0;
  for (std::size_t seen = 0; seen < others; ++seen) {
    Message* x = queue[i];
    if (x->queue == m->queue && x->dst == m->dst && x->kind != MessageKind::kUnicast) {
      queue.erase(i);
      queue.push_back(x);
    } else {
      ++i;
    }
  }
}

void Nic::pump(unsigned port) {
  TxPort& tp = tx_ports_[port];
  if (tp.pumping) return;  // the loop below is already running further up the stack
  tp.pumping = true;
  for (;;) {
    if (!tp.frame_out && !tp.wake_pending) {
      Frame* f = nullptr;
      bool read_from_memory = false;
      if (!tp.resend.empty()) {  // frames lost on the way go first
        f = tp.resend.front();
        tp.resend.pop_front();
      } else if (!tp.prefetch.empty()) {
        if (tp.prefetch.front()->fetched) {
          f = tp.prefetch.front();
          tp.prefetch.pop_front();
          tp.prefetch_bytes -= f->bytes;
          f->fetched = false;
          read_from_memory = f->bytes > 0 && !f->request;
        }
      } else if (!dma_bound_ && !tp.idle()) {      // nothing to read first
        if (window_ && !window_open(port)) break;  // every window is full: an ACK wakes the port
        f = next_frame(port);
        if (!f) continue;
      }
      if (f) {
        // A frame read over a PCIe path slower than the wire waited for the
        // last of its bytes; a real NIC would have sent each packet as it
        // came, from when both the first byte and the port were there.
        const Tick first_in = read_from_memory ? f->spread : kNever;
        const Tick could_start = std::max({first_in, tp.free_at, injection_free_});
        f->head = std::max({f->head, now_ticks(), injection_free_});
        f->spread = first_in != kNever && f->head > could_start ? f->head - could_start : 0;
        if (dcqcn_ && f->msg->notice == Message::Notice::kNone) {
          const Tick unpaced = f->head;
          f->head = dcqcn_->pace(Dcqcn::key(f->dst, f->flow), f->wire_bytes, f->head);
          // Paced later, its packets would have gone together too.
          const Tick waited = f->head - unpaced;
          f->spread = f->spread > waited ? f->spread - waited : 0;
        }
        f->tail = f->head + params_.injection.time_for(static_cast<double>(f->wire_bytes));
        if (!params_.injection.is_unlimited()) injection_free_ = f->tail;
        tp.frame_out = true;
        Tick left = 0;
        if (forwarder_.send_from_here(port, f, &left)) frame_sent(port, f, left);
        continue;
      }
    }
    // Frames are read from memory ahead of the wire: up to read_ahead bytes
    // (so small frames do not wait out a memory latency each, and a fast
    // link is not held to one read's latency per frame).
    if (dma_bound_ && !tp.idle() && tp.prefetch.size() < kMaxPrefetch &&
        (tp.prefetch.empty() || tp.prefetch_bytes < params_.read_ahead_bytes) && within_share(tp) &&
        (!window_ || window_open(port))) {
      Frame* f = next_frame(port);
      if (!f) continue;
      tp.prefetch.push_back(f);
      tp.prefetch_bytes += f->bytes;
      if (f->bytes > 0 && !f->request) {
        f->fetched = false;  // until it has been read
        // A cut-through element on the way may answer before the last byte
        // is in, as long as the wire cannot outrun the bytes.
        MemoryStreaming streaming;
        streaming.consume_time = leave_time(f->wire_bytes);
        dma.stream(false, f->bytes, f, f->head - now_ticks(), streaming);
      } else {
        f->fetched = true;
      }
      continue;
    }
    break;
  }
  tp.pumping = false;
}

void Nic::frame_sent(unsigned port, Frame* f, Tick left) {
  TxPort& tp = tx_ports_[port];
  tp.frame_out = false;
  tp.free_at = left;
  Message* m = f->msg;
  m->nic.left_at = std::max(m->nic.left_at, left);
  // Under a window transport a message is done when every frame is acknowledged (acknowledged()).
  const bool by_ack = window_ && m->notice == Message::Notice::kNone;
  if (!by_ack && ++m->nic.frames_out == m->nic.frames_total) {
    // The whole message has left: tell the sender, whose buffer is now free.
    // By count and the latest time: a striped message's frames leave by
    // several ports, the one numbered last not necessarily last.
    if (m->notice != Message::Notice::kNone) {
      m->unref();  // made here: nobody else waits
    } else {
      tlm::tlm_phase phase = tlm::END_REQ;
      sc_core::sc_time delay = delay_until(m->nic.left_at);
      to_sender_(m->payload(), phase, delay);
    }
  }
  if ((tp.idle() && tp.prefetch.empty()) || tp.wake_pending) return;
  // Offer the next frame when this one has left, so that messages posted
  // meanwhile take their turn.
  if (left > now_ticks()) {
    tp.wake_pending = true;
    calendar_.schedule<&Nic::on_port_free>(left, this, port);
  } else {
    pump(port);
  }
}

Tick Nic::receive_local(Frame* f) {
  Message* m = f->msg;
  if (dma_bound_ && f->bytes > 0 && !f->request) {
    // Into memory once the tail is in; the buffer frees when it is written.
    // Its bytes came in from f->head on, or from f->spread before if the
    // sender sent them whole after they trickled in: a cut-through element
    // on the way may pass them on as they came.
    MemoryStreaming streaming;
    streaming.first_byte = f->head - std::min(f->spread, f->head);
    dma.stream(true, f->bytes, f, f->tail - now_ticks(), streaming);
    return kNever;
  }
  ++m->nic.frames_received;
  const Tick tail = f->tail;
  m->nic.delivered_at = std::max(m->nic.delivered_at, tail);
  // By count: striped frames and in-switch results may arrive out of order.
  if (m->nic.frames_received == m->nic.frames_total) calendar_.schedule<&Nic::deliver>(m->nic.delivered_at, this, m);
  f->release();
  return tail;  // the NIC drains at line rate: the buffer is free when the tail is in
}

void Nic::memory_done(Frame* f, bool write, tlm::tlm_response_status status) {
  if (status != tlm::TLM_OK_RESPONSE) {
    throw std::runtime_error(std::string(name()) + ": its memory refused a DMA access");
  }
  if (write) {  // a received frame is in memory
    written(f);
    return;
  }
  f->fetched = true;
  f->head = now_ticks();
  f->spread = dma.first_byte_in();  // scratch until it leaves (pump())
  pump(f->hop_in);
}

Tick Nic::leave_time(std::uint64_t wire_bytes) const {
  const double bytes = static_cast<double>(wire_bytes);
  const Tick at_injection = params_.injection.time_for(bytes);
  return line_rate_.is_unlimited() ? at_injection : std::max(at_injection, line_rate_.time_for(bytes));
}

void Nic::written(Frame* f) {
  Message* m = f->msg;
  forwarder_.release_input(f, now_ticks());
  f->release();
  // Writes can finish out of order: the message is in when all are.
  if (++m->nic.frames_received == m->nic.frames_total) {
    m->nic.delivered_at = now_ticks();
    deliver(m);
  }
}

void Nic::deliver(Message* m) {
  if (m->notice == Message::Notice::kCongestion) {  // a CNP for one of this NIC's queue pairs: the reaction point's
    if (dcqcn_) dcqcn_->notified(Dcqcn::key(m->src, m->flow), now_ticks());
    m->unref();
    return;
  }
  if (m->notice == Message::Notice::kAck) {
    if (window_) acknowledged(*m);
    m->unref();
    return;
  }
  if (window_) window_->forget(*m);
  ++stats_.messages_received;
  if (m->kind != MessageKind::kPullRequest) stats_.bytes_received += m->bytes;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  if (to_receiver_(m->payload(), phase, delay) != tlm::TLM_COMPLETED) {
    throw std::logic_error(std::string(name()) + ": the NPU must complete a delivered message at once");
  }
}

void Nic::set_transport(const Transport& t) {
  if (t.queue_pairs == 0) throw std::invalid_argument(std::string(name()) + ": queue_pairs must be at least 1");
  queue_pairs_ = t.queue_pairs;
  dcqcn_.reset();
  if (t.dcqcn) dcqcn_ = std::make_unique<Dcqcn>(t.dcqcn_params, t.line_rate);
  window_.reset();
  if (t.window) {
    WindowTransport::Params wp = t.window_params;
    wp.mss = wire_bytes(params_.segment_bytes);
    window_ = std::make_unique<WindowTransport>(wp);
  }
}

bool Nic::window_open(unsigned port) {
  // Whether some message (of either class) has a queue pair that may send
  // its next frame; pick_next() puts the one to go first.
  TxPort& tp = tx_ports_[port];
  if (tp.idle()) return false;
  const auto& queue = tp.sending[pick_next(tp)];
  if (queue.empty()) return false;
  // put_startable_first() left a message with frames to send in front.
  return window_allows(*queue.front());
}

bool Nic::window_allows(const Message& m) const {
  if (!window_ || m.notice != Message::Notice::kNone) return true;  // CNPs and ACKs are not windowed
  const std::uint32_t index = m.nic.frames_sent;
  return window_->may_send(Dcqcn::key(m.dst, queue_pair_flow(m.flow, index)),
                           frame_wire_bytes(m, frame_bytes(m, index)));
}

std::uint64_t Nic::frame_bytes(const Message& m, std::uint32_t index) const {
  const std::uint64_t offset = static_cast<std::uint64_t>(index) * m.nic.frame_payload;
  return std::min(m.nic.frame_payload, m.bytes - std::min(m.bytes, offset));
}

std::uint64_t Nic::frame_wire_bytes(const Message& m, std::uint64_t bytes) const {
  return params_.wire_bytes(bytes, m.kind, m.protocol);
}

void Nic::acknowledge(const Frame& f) {
  const std::uint64_t key = Dcqcn::key(f.src, f.flow);
  auto [it, fresh] = pending_acks_.try_emplace(key);
  PendingAcks& waiting = it->second;
  if (fresh) {
    waiting.to = f.src;
    waiting.flow = f.flow;
  }
  waiting.acks.push_back(Message::Acked{f.msg->id, f.index, f.ecn});
  waiting.ready = std::max(waiting.ready, f.tail);
  if (waiting.acks.size() >= window_->params().ack_every) {
    send_ack(waiting);
  } else if (!waiting.timer) {
    waiting.timer = true;
    calendar_.schedule<&Nic::on_ack_timer>(f.tail + window_->params().ack_delay, this, &waiting);
  }
}

Message* Nic::control_message(Message::Notice notice, Address to, std::uint32_t flow, std::uint64_t bytes) {
  // Made by the NIC itself: no software overhead, on the hardware class of
  // its queues, consumed by the NIC at `to` (deliver()).
  Message* m = Message::allocate();
  m->src = params_.address;
  m->dst = to;
  m->bytes = bytes;
  m->flow = flow;
  m->hardware = true;
  m->notice = notice;
  m->ref();  // one for the sending side (frame_sent), one for the receiving NIC (its frame carries it there)
  return m;
}

void Nic::send_ack(PendingAcks& waiting) {
  // A header-only packet naming the frames it acknowledges, once the last
  // of them is in whole.
  Message* ack = control_message(Message::Notice::kAck, waiting.to, waiting.flow, 0);
  ack->acked.swap(waiting.acks);
  waiting.acks.clear();
  window_->count_ack();
  calendar_.schedule<&Nic::post>(std::max(now_ticks(), waiting.ready), this, ack);
}

void Nic::acknowledged(const Message& ack) {
  std::vector<WindowTransport::Resend> resend;
  std::vector<Message*> completed;
  const std::uint64_t qp = Dcqcn::key(ack.src, ack.flow);
  window_->acknowledged(qp, ack.acked, now_ticks(), resend, completed);
  for (Message* m : completed) {  // every frame acknowledged: the sender's buffer is free
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    to_sender_(m->payload(), phase, delay);
  }
  send_again(resend);
  arm_timeout(qp);
  for (unsigned p = 0; p < num_ports(); ++p) pump(p);  // windows have opened
}

void Nic::send_again(const std::vector<WindowTransport::Resend>& resend) {
  for (const auto& r : resend) {
    Frame* f = frame_of(r.message, r.index);
    f->head = now_ticks();
    f->hop_in = r.port;
    tx_ports_[r.port].resend.push_back(f);
    window_->sent(Dcqcn::key(f->dst, f->flow), r.message, r.index, f->wire_bytes, r.port, now_ticks());
    arm_timeout(Dcqcn::key(f->dst, f->flow));
  }
  for (const auto& r : resend) pump(r.port);
}

void Nic::arm_timeout(std::uint64_t qp) {
  const Tick at = window_->timeout_at(qp);
  if (at == kNever) return;
  auto [it, fresh] = timeouts_.try_emplace(qp);
  TimeoutTimer& timer = it->second;
  if (fresh) timer.qp = qp;
  if (timer.pending) return;  // it will look again when it fires
  timer.pending = true;
  calendar_.schedule<&Nic::on_timeout>(std::max(at, now_ticks()), this, &timer);
}

void Nic::congestion_seen(const Frame& f) {
  if (!dcqcn_->should_notify(Dcqcn::key(f.src, f.flow), now_ticks())) return;
  // The CNP: RoCEv2's 16-byte BTH extension behind the packet's headers,
  // for the sender's queue pair, posted as an event of its own, not from
  // inside the receive call.
  Message* cnp = control_message(Message::Notice::kCongestion, f.src, f.flow, 16);
  calendar_.schedule<&Nic::post>(now_ticks(), this, cnp);
}

void Nic::on_port_free(unsigned port) {
  tx_ports_[port].wake_pending = false;
  pump(port);
}

void Nic::on_ack_timer(PendingAcks* waiting) {
  waiting->timer = false;
  if (!waiting->acks.empty()) send_ack(*waiting);
}

void Nic::on_timeout(TimeoutTimer* timer) {
  timer->pending = false;
  std::vector<WindowTransport::Resend> resend;
  window_->timer(timer->qp, now_ticks(), resend);
  send_again(resend);
  arm_timeout(timer->qp);
}

}  // namespace fabricsim
