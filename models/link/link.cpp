#include "models/link/link.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace fabricsim {

const ParamTable<Link::Params>& Link::Params::table() {
  static const auto table =
      ParamTable<LinkParams>("link", "a full-duplex link; each direction serializes frames and returns credits")
          .add("bandwidth", Quantity::kBandwidth, &LinkParams::bandwidth, "data rate of each direction")
          .legacy("bandwidth_GBps", 1e9, "GB/s")
          .add("latency", Quantity::kDuration, &LinkParams::latency,
               "wire delay, head out to head in; credits return after it too")
          .legacy("latency_ns", 1e3, "ns")
          .add("buffer", Quantity::kBytes, &LinkParams::buffer_bytes,
               "input buffer at the receiving end: the bytes of credit")
          .range(1, static_cast<double>(limits::kMaxBytes))
          .legacy("buffer_bytes", 1, "bytes");
  return table;
}

Link::Link(const sc_core::sc_module_name& name, const Params& params)
    : sc_core::sc_module(name), in("in"), out("out"), params_(params) {
  if (params_.buffer_bytes == 0) throw std::invalid_argument(std::string(this->name()) + ": buffer_bytes must be > 0");
  in.register_nb_transport_fw<&Link::in_fw>(this, 0);
  out.register_nb_transport_bw<&Link::out_bw>(this, 0);
}

tlm::tlm_sync_enum Link::in_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on in");
  Frame* f = Frame::cast(gp);
  const std::uint64_t need = f->wire_bytes + (f->entering_ring ? params_.bubble_bytes : 0);
  if (need > params_.buffer_bytes) {
    std::ostringstream os;
    os << name() << ": a frame of " << need << " bytes cannot fit the " << params_.buffer_bytes
       << "-byte receive buffer";
    throw std::runtime_error(os.str());
  }
  f->head = absolute(delay);
  if (f->request && !ethernet_) {
    // Read requests ride a virtual channel of their own (as NVLink's do),
    // with their own credits: they neither queue behind data frames nor
    // take the data frames' buffer.
    phase = tlm::END_REQ;
    delay = delay_until(send_request(f));
    return tlm::TLM_UPDATED;
  }
  if (ethernet_) mark_congestion(f);
  waiting_bytes_ += f->wire_bytes;
  waiting_.push_back(f);
  // If the frame starts during this call, answer in the return path. A call
  // made from inside send_waiting() (the sender reacting to an END_REQ) only
  // queues: the running loop picks the frame up and answers with a bw call.
  Frame* const outer = answering_;
  const Tick outer_end = answer_end_;
  answering_ = f;
  answer_end_ = kNever;
  if (!sending_) {
    if (one_at_a_time()) {
      send_one_at_a_time();
    } else {
      send_waiting();
    }
  }
  const Tick end = answer_end_;
  answering_ = outer;
  answer_end_ = outer_end;
  if (end != kNever) {
    phase = tlm::END_REQ;
    delay = delay_until(end);
    return tlm::TLM_UPDATED;
  }
  return tlm::TLM_ACCEPTED;
}

void Link::forget_returned_credits() {
  const Tick now = now_ticks();
  while (!returning_.empty() && returning_.front().back <= now) {
    in_flight_bytes_ -= returning_.front().bytes;
    returning_.pop_front();
  }
}

void Link::schedule_return(Tick back, std::uint64_t bytes) {
  if (bytes == 0) return;  // a read request: its credit is the request channel's
  // Returns mostly come in time order: the place is at or near the end.
  std::size_t pos = returning_.size();
  while (pos > 0 && returning_[pos - 1].back > back) --pos;
  returning_.insert(pos, Returning{back, bytes});
}

std::uint64_t Link::held_at(Tick t) const {
  std::uint64_t held = in_flight_bytes_;
  for (std::size_t i = 0; i < returning_.size() && returning_[i].back <= t; ++i) held -= returning_[i].bytes;
  return held;
}

Tick Link::credit_time(std::uint64_t need, Tick from) {
  // Fast path: room even if no credit has come back yet.
  if (in_flight_bytes_ + need <= params_.buffer_bytes) return from;
  forget_returned_credits();
  std::uint64_t held = in_flight_bytes_;
  std::size_t i = 0;
  for (; i < returning_.size() && returning_[i].back <= from; ++i) held -= returning_[i].bytes;
  if (held + need <= params_.buffer_bytes) return from;
  for (; i < returning_.size(); ++i) {
    held -= returning_[i].bytes;
    if (held + need <= params_.buffer_bytes) return returning_[i].back;
  }
  return kNever;  // only credits whose return time is unknown would make room
}

void Link::send_waiting() {
  sending_ = true;
  // Frames start in arrival order, except that a frame which cannot start
  // (no credit yet) does not hold up frames from other inputs: with bubble
  // flow control a frame entering a ring needs more room than one passing
  // along it, and the one passing along must not wait behind it. Frames of
  // one input keep their order, so no flow is reordered.
  if (params_.bubble_bytes > 0) blocked_inputs_.clear();
  std::size_t i = 0;
  while (i < waiting_.size()) {
    Frame* f = waiting_[i];
    if (params_.bubble_bytes > 0 && !blocked_inputs_.empty() &&
        std::find(blocked_inputs_.begin(), blocked_inputs_.end(), f->hop_in) != blocked_inputs_.end()) {
      ++i;
      continue;
    }
    const Tick duration = params_.bandwidth.time_for(static_cast<double>(f->wire_bytes));
    const Tick ready = std::max({now_ticks(), f->head, busy_until_});
    const std::uint64_t need = f->wire_bytes + (f->entering_ring ? params_.bubble_bytes : 0);
    const Tick credit = credit_time(need, ready);
    if (credit == kNever) {  // wait for the receiver's END_REQ
      // Without bubble flow control every frame needs only its own size, so
      // the ones behind would not get credit either: plain first come, first
      // served (and no scan of a long queue on every credit).
      if (params_.bubble_bytes == 0) break;
      blocked_inputs_.push_back(f->hop_in);
      ++i;
      continue;
    }
    waiting_.erase(i);
    waiting_bytes_ -= f->wire_bytes;
    const Tick start = std::max(ready, credit);
    // Cut-through: the last byte cannot leave before it has arrived, so a link
    // fed by a slower one is held at the slower rate.
    const Tick end = std::max(start + duration, f->tail);
    // Occupancy of the receive buffer once this frame is in it.
    forget_returned_credits();
    const std::uint64_t used = held_at(start) + f->wire_bytes;
    stats_.peak_buffer_bytes = std::max(stats_.peak_buffer_bytes, used);
    launch(f, start, end, duration, used);
  }
  sending_ = false;
}

void Link::launch(Frame* f, Tick start, Tick end, Tick duration, std::uint64_t used, bool deliver) {
  if (timeline_) timeline_->link_frame(timeline_id_, start, start + duration, used);
  unreturned_.push_back(Unreturned{f, f->wire_bytes});
  in_flight_bytes_ += f->wire_bytes;
  busy_until_ = end;
  ++stats_.frames;
  stats_.payload_bytes += f->bytes;
  stats_.wire_bytes += f->wire_bytes;
  stats_.busy += duration;

  // Tell the sender when the frame has left it (its buffer is then free).
  if (f == answering_) {
    answer_end_ = end;
  } else {
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_core::sc_time d = delay_until(end);
    to_sender_(f->payload(), phase, d);
  }

  // A frame that waited here had its packets squeezed together as they would
  // have been: less of its spread (fabric_protocol.h) is left.
  if (f->spread > 0) {
    const Tick waited = start > f->head ? start - f->head : 0;
    f->spread = f->spread > waited ? f->spread - waited : 0;
  }
  // Hand the frame to the receiver: head after the wire latency.
  f->head = start + params_.latency;
  f->tail = end + params_.latency;
  if (!deliver) return;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time d = delay_until(f->head);
  if (to_receiver_(f->payload(), phase, d) == tlm::TLM_UPDATED) {
    if (phase != tlm::END_REQ)
      throw std::logic_error(std::string(name()) + ": receiver answered with a phase other than END_REQ");
    credit_returned(f, absolute(d));  // answered in the return path
  }
}

Tick Link::send_request(Frame* f) {
  const Tick duration = params_.bandwidth.time_for(static_cast<double>(f->wire_bytes));
  const Tick start = std::max({now_ticks(), f->head, request_busy_until_});
  const Tick end = std::max(start + duration, f->tail);
  request_busy_until_ = end;
  // It takes its time on the wire from the data frames granted after it.
  busy_until_ = std::max(busy_until_, start) + duration;
  unreturned_.push_back(Unreturned{f, 0});  // its credit is the request channel's
  ++stats_.frames;
  stats_.wire_bytes += f->wire_bytes;
  stats_.busy += duration;
  if (timeline_) timeline_->link_frame(timeline_id_, start, start + duration, held_at(start));
  f->head = start + params_.latency;
  f->tail = end + params_.latency;
  const bool was_sending = sending_;
  sending_ = true;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time d = delay_until(f->head);
  if (to_receiver_(f->payload(), phase, d) == tlm::TLM_UPDATED) {
    if (phase != tlm::END_REQ)
      throw std::logic_error(std::string(name()) + ": receiver answered with a phase other than END_REQ");
    credit_returned(f, absolute(d));
  }
  sending_ = was_sending;
  return end;
}

void Link::credit_returned(Frame* f, Tick left_receiver) {
  // Usually the newest (answered in the return path) or the oldest (a
  // switch forwarding first come, first served): look there first.
  const std::size_t n = unreturned_.size();
  std::size_t i = n;
  if (n > 0 && unreturned_[n - 1].frame == f) {
    i = n - 1;
  } else {
    for (std::size_t k = 0; k < n; ++k) {
      if (unreturned_[k].frame == f) {
        i = k;
        break;
      }
    }
  }
  if (i == n) throw std::logic_error(std::string(name()) + ": END_REQ for a frame this link is not carrying");
  const std::uint64_t bytes = unreturned_[i].bytes;
  unreturned_.erase(i);
  if (one_at_a_time()) {  // no credits: the receiver's buffer is PFC's business, or nobody's
    in_flight_bytes_ -= bytes;
    receiver_released(bytes, left_receiver);
    return;
  }
  schedule_return(left_receiver + params_.latency, bytes);
}

tlm::tlm_sync_enum Link::out_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::END_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on out");
  Frame* f = Frame::cast(gp);
  credit_returned(f, absolute(delay));
  if (!waiting_.empty() && !sending_ && !one_at_a_time()) send_waiting();
  return tlm::TLM_ACCEPTED;
}

// --- Ethernet: PFC, ECN, drops ------------------------------------------------

namespace {
/// splitmix64: a repeatable stream of draws per link.
double next_uniform(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}
}  // namespace

std::uint64_t Link::pfc_headroom(const Params& params, std::uint64_t largest_frame) {
  // After the frame that crosses xoff arrives, the PAUSE takes a latency to
  // reach the sender, which finishes the frame it is sending; what it sent
  // in that round trip is still arriving: 2 latencies of line rate, the
  // frame in progress and the one that crossed.
  const double round_trip = params.bandwidth.bytes_per_ps() * 2.0 * static_cast<double>(params.latency);
  return static_cast<std::uint64_t>(round_trip + 0.999999) + 2 * largest_frame;
}

void Link::set_pfc(const Pfc& pfc, std::uint64_t largest_frame, SharedBuffer* pool) {
  if (params_.bubble_bytes > 0) {
    throw std::invalid_argument(std::string(name()) +
                                ": PFC cannot replace the credits of a ring's bubble flow control");
  }
  if (pfc.xon > pfc.xoff) {
    throw std::invalid_argument(std::string(name()) + ": PFC xon (" + std::to_string(pfc.xon) +
                                " bytes) is above xoff (" + std::to_string(pfc.xoff) + " bytes)");
  }
  const std::uint64_t headroom = pfc_headroom(params_, largest_frame);
  if (pfc.xoff + headroom > params_.buffer_bytes) {
    throw std::invalid_argument(
        std::string(name()) + ": a " + std::to_string(params_.buffer_bytes) + "-byte buffer has no room for PFC xoff " +
        std::to_string(pfc.xoff) + " bytes plus the " + std::to_string(headroom) +
        " bytes of headroom it needs (two latencies at line rate and two frames of " + std::to_string(largest_frame) +
        " bytes); it needs at least " + std::to_string(pfc.xoff + headroom) + " bytes, or a lower xoff");
  }
  if (!ethernet_) ethernet_ = std::make_unique<Ethernet>();
  ethernet_->has_pfc = true;
  ethernet_->pfc = pfc;
  ethernet_->pool = pool;
}

void Link::set_ecn(const Ecn& ecn) {
  if (ecn.kmax < ecn.kmin) {
    throw std::invalid_argument(std::string(name()) + ": ECN kmax is below kmin");
  }
  if (!(ecn.pmax >= 0 && ecn.pmax <= 1))
    throw std::invalid_argument(std::string(name()) + ": ECN pmax is not in [0, 1]");
  if (!ethernet_) ethernet_ = std::make_unique<Ethernet>();
  ethernet_->has_ecn = true;
  ethernet_->ecn = ecn;
  ethernet_->rng = ecn.seed;
}

void Link::mark_congestion(Frame* f) {
  Ethernet& l = *ethernet_;
  // The queue a switch sees is the one the frame finds when its head reaches
  // the egress port, not the one there is when the switch hands it over
  // early (with its head still on the way): measured at the head's arrival,
  // a lone flow at or below line rate finds nothing ahead of it.
  const Tick at = std::max(now_ticks(), f->head);
  const std::uint64_t q = queued_at(at);
  stats_.peak_queue_bytes = std::max(stats_.peak_queue_bytes, q);
  stats_.queue_bytes_seen += q;
  const Ecn& e = l.ecn;
  bool mark = false;
  if (l.has_ecn && q > e.kmin) {
    mark = q > e.kmax;
    if (!mark) {
      const double p =
          e.pmax * static_cast<double>(q - e.kmin) / static_cast<double>(std::max<std::uint64_t>(1, e.kmax - e.kmin));
      mark = next_uniform(l.rng) < p;
    }
  }
  if (mark) {
    f->ecn = true;
    ++stats_.ecn_marks;
  }
  if (timeline_) timeline_->link_queue(timeline_id_, at, q, mark);
}

std::uint64_t Link::queued_at(Tick at) const {
  const Ethernet& l = *ethernet_;
  // What is left of the frame being sent: it drains evenly from its start to
  // its end (at the input's rate if its tail holds the link).
  std::uint64_t q = 0;
  if (busy_until_ > at && l.service_bytes > 0) {
    const Tick start = std::min(l.service_start, at);
    q += static_cast<std::uint64_t>(static_cast<double>(l.service_bytes) * static_cast<double>(busy_until_ - at) /
                                    static_cast<double>(busy_until_ - start));
  }
  // The frames waiting ahead that will have arrived by then, less what the
  // port sends of them meanwhile (in order, each once its head is in and the
  // port is free; nothing while PFC holds the port).
  Tick free_at = std::max(busy_until_, now_ticks());
  for (std::size_t i = 0; i < waiting_.size(); ++i) {
    const Frame* w = waiting_[i];
    if (w->head > at) continue;
    if (l.sender_paused) {
      q += w->wire_bytes;
      continue;
    }
    const Tick start = std::max(free_at, w->head);
    const Tick end = std::max(start + params_.bandwidth.time_for(static_cast<double>(w->wire_bytes)), w->tail);
    free_at = end;
    if (end <= at) continue;
    if (start >= at) {
      q += w->wire_bytes;
    } else {
      q += static_cast<std::uint64_t>(static_cast<double>(w->wire_bytes) * static_cast<double>(end - at) /
                                      static_cast<double>(end - start));
    }
  }
  return q;
}

void Link::send_one_at_a_time() {
  Ethernet& l = *ethernet_;
  sending_ = true;
  // One frame at a time, each when it can start: a PAUSE that arrives
  // meanwhile stops the next.
  while (!waiting_.empty() && !l.sender_paused) {
    Frame* f = waiting_.front();
    const Tick now = now_ticks();
    const Tick ready = std::max({now, f->head, busy_until_});
    if (ready > now) {
      if (!l.wake_pending) {
        l.wake_pending = true;
        calendar_.schedule<&Link::on_wake>(ready, this);
      }
      break;
    }
    waiting_.pop_front();
    waiting_bytes_ -= f->wire_bytes;
    const Tick duration = params_.bandwidth.time_for(static_cast<double>(f->wire_bytes));
    const Tick end = std::max(now + duration, f->tail);
    // Its bytes count in the receiver's buffer from when its head is there.
    l.service_start = now;
    l.service_bytes = f->wire_bytes;
    l.arrivals.push_back(Change{now + params_.latency, f->wire_bytes, l.lossy ? f : nullptr});
    calendar_.schedule<&Link::on_heads_arrived>(now + params_.latency, this);
    launch(f, now, end, duration, l.occupancy + f->wire_bytes, !l.lossy);
  }
  sending_ = false;
}

void Link::set_lossy(SharedBuffer* pool) {
  if (params_.bubble_bytes > 0) {
    throw std::invalid_argument(std::string(name()) + ": a ring's bubble flow control needs credits, not a lossy link");
  }
  if (!ethernet_) ethernet_ = std::make_unique<Ethernet>();
  ethernet_->lossy = true;
  ethernet_->pool = pool;
}

void Link::lossy_arrivals() {
  Ethernet& l = *ethernet_;
  const Tick now = now_ticks();
  while (!l.arrivals.empty() && l.arrivals.front().at <= now) {
    Frame* f = l.arrivals.front().frame;
    const std::uint64_t bytes = l.arrivals.front().bytes;
    l.arrivals.pop_front();
    const bool room = l.pool ? l.pool->admits(l.occupancy, bytes) : l.occupancy + bytes <= params_.buffer_bytes;
    if (!room) {  // dropped: it never reaches the receiver, and its sender will find out
      ++stats_.drops;
      if (timeline_) timeline_->link_drop(timeline_id_, now);
      for (std::size_t i = 0; i < unreturned_.size(); ++i) {
        if (unreturned_[i].frame == f) {
          unreturned_.erase(i);
          break;
        }
      }
      in_flight_bytes_ -= bytes;
      f->release();
      continue;
    }
    l.occupancy += bytes;
    if (l.pool) l.pool->take(bytes);
    stats_.peak_buffer_bytes = std::max(stats_.peak_buffer_bytes, l.occupancy);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    if (to_receiver_(f->payload(), phase, d) == tlm::TLM_UPDATED) {
      if (phase != tlm::END_REQ)
        throw std::logic_error(std::string(name()) + ": receiver answered with a phase other than END_REQ");
      credit_returned(f, absolute(d));
    }
  }
}

void Link::receiver_released(std::uint64_t bytes, Tick at) {
  Ethernet& l = *ethernet_;
  if (at <= now_ticks()) {
    l.occupancy -= bytes;
    if (l.pool) l.pool->give(bytes);
    receiver_changed();
    return;
  }
  std::size_t pos = l.releases.size();
  while (pos > 0 && l.releases[pos - 1].at > at) --pos;
  l.releases.insert(pos, Change{at, bytes, nullptr});
  calendar_.schedule<&Link::on_released>(at, this);
}

void Link::receiver_changed() {
  Ethernet& l = *ethernet_;
  stats_.peak_buffer_bytes = std::max(stats_.peak_buffer_bytes, l.occupancy);
  if (!l.has_pfc) return;
  if (l.occupancy > params_.buffer_bytes) {
    // set_pfc checked the headroom: this is a modelling error, not an input's.
    throw std::logic_error(std::string(name()) + ": PFC headroom exceeded: " + std::to_string(l.occupancy) +
                           " bytes in a " + std::to_string(params_.buffer_bytes) + "-byte buffer");
  }
  // With a shared buffer the threshold falls as the switch fills (dynamic
  // thresholds); bytes above it go to this port's headroom. A paused port
  // looks again when its own bytes change, not when other ports free room,
  // as ns-3's RDMA switch checks resume on the dequeued packet's port.
  std::uint64_t xoff = l.pfc.xoff;
  if (l.pool) xoff = std::min(xoff, static_cast<std::uint64_t>(std::max(0.0, l.pool->threshold())));
  const std::uint64_t gap = l.pfc.xoff - l.pfc.xon;
  const std::uint64_t xon = xoff > gap ? xoff - gap : 0;
  if (!l.receiver_pausing && l.occupancy > xoff) {
    l.receiver_pausing = true;
    ++stats_.pauses;
    calendar_.schedule<&Link::on_pause>(now_ticks() + params_.latency, this);
  } else if (l.receiver_pausing && l.occupancy <= xon) {
    l.receiver_pausing = false;
    calendar_.schedule<&Link::on_resume>(now_ticks() + params_.latency, this);
  }
}

void Link::on_wake() {
  ethernet_->wake_pending = false;
  if (!sending_) send_one_at_a_time();
}

void Link::on_heads_arrived() {
  Ethernet& l = *ethernet_;
  if (l.lossy) {
    lossy_arrivals();
    return;
  }
  const Tick now = now_ticks();
  while (!l.arrivals.empty() && l.arrivals.front().at <= now) {
    l.occupancy += l.arrivals.front().bytes;
    if (l.pool) l.pool->take(l.arrivals.front().bytes);
    l.arrivals.pop_front();
  }
  receiver_changed();
}

void Link::on_released() {
  Ethernet& l = *ethernet_;
  const Tick now = now_ticks();
  while (!l.releases.empty() && l.releases.front().at <= now) {
    l.occupancy -= l.releases.front().bytes;
    if (l.pool) l.pool->give(l.releases.front().bytes);
    l.releases.pop_front();
  }
  receiver_changed();
}

void Link::on_pause() {
  ethernet_->sender_paused = true;
  ethernet_->paused_since = now_ticks();
}

void Link::on_resume() {
  Ethernet& l = *ethernet_;
  const Tick now = now_ticks();
  l.sender_paused = false;
  stats_.paused += now - l.paused_since;
  if (timeline_) timeline_->link_paused(timeline_id_, l.paused_since, now);
  if (!sending_) send_one_at_a_time();
}

Tick Link::backlog(Tick at) const {
  const Tick sending = busy_until_ > at ? busy_until_ - at : 0;
  return sending + params_.bandwidth.time_for(static_cast<double>(waiting_bytes_));
}

std::string Link::describe_waiting() const {
  std::ostringstream os;
  os << name() << ": " << waiting_.size() << " frame(s) waiting for credits";
  if (!waiting_.empty()) {
    const Frame* f = waiting_.front();
    os << " (first: " << f->wire_bytes << " bytes from address " << f->src << " to " << f->dst << ")";
  }
  return os.str();
}

}  // namespace fabricsim
