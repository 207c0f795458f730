#include "models/link/link.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace fabricsim {

Link::Link(const sc_core::sc_module_name& name, const Params& params)
    : sc_core::sc_module(name), in("in"), out("out"), params_(params) {
  if (params_.buffer_bytes == 0) throw std::invalid_argument(std::string(this->name()) + ": buffer_bytes must be > 0");
  in.register_nb_transport_fw(this, &Link::in_fw, 0);
  out.register_nb_transport_bw(this, &Link::out_bw, 0);
}

tlm::tlm_sync_enum Link::in_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on in");
  Frame* f = Frame::of(gp);
  const std::uint64_t need = f->wire_bytes + (f->entering_ring ? params_.bubble_bytes : 0);
  if (need > params_.buffer_bytes) {
    std::ostringstream os;
    os << name() << ": a frame of " << need << " bytes cannot fit the " << params_.buffer_bytes
       << "-byte receive buffer";
    throw std::runtime_error(os.str());
  }
  f->head = absolute(delay);
  if (f->request) {
    // Read requests ride a virtual channel of their own (as NVLink's do),
    // with their own credits: they neither queue behind data frames nor
    // take the data frames' buffer.
    phase = tlm::END_REQ;
    delay = delay_until(send_request(f));
    return tlm::TLM_UPDATED;
  }
  waiting_.push_back(f);
  // If the frame starts during this call, answer in the return path. A call
  // made from inside send_waiting() (the sender reacting to an END_REQ) only
  // queues: the running loop picks the frame up and answers with a bw call.
  Frame* const outer = answering_;
  const Tick outer_end = answer_end_;
  answering_ = f;
  answer_end_ = kNever;
  if (!sending_) send_waiting();
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
  std::size_t keep = 0;
  for (const InFlight& e : in_flight_) {
    if (e.credit_back > now) {
      in_flight_[keep++] = e;
    } else {
      in_flight_bytes_ -= e.bytes;
    }
  }
  in_flight_.resize(keep);
}

Tick Link::credit_time(std::uint64_t need, Tick from) {
  // Fast path: room even if no credit has come back yet.
  if (in_flight_bytes_ + need <= params_.buffer_bytes) return from;
  forget_returned_credits();
  if (in_flight_bytes_ + need <= params_.buffer_bytes) return from;
  std::uint64_t used = 0;
  scratch_.clear();
  for (const InFlight& e : in_flight_) {
    if (e.credit_back > from) {
      used += e.bytes;
      if (e.credit_back != kNever) scratch_.push_back(e);
    }
  }
  if (used + need <= params_.buffer_bytes) return from;
  std::sort(scratch_.begin(), scratch_.end(),
            [](const InFlight& a, const InFlight& b) { return a.credit_back < b.credit_back; });
  for (const InFlight& e : scratch_) {
    used -= e.bytes;
    if (used + need <= params_.buffer_bytes) return e.credit_back;
  }
  return kNever;
}

void Link::send_waiting() {
  sending_ = true;
  // Frames start in arrival order, except that a frame which cannot start
  // (no credit yet) does not hold up frames from other inputs: with bubble
  // flow control a frame entering a ring needs more room than one passing
  // along it, and the one passing along must not wait behind it. Frames of
  // one input keep their order, so no flow is reordered.
  blocked_inputs_.clear();
  std::size_t i = 0;
  while (i < waiting_.size()) {
    Frame* f = waiting_[i];
    if (!blocked_inputs_.empty() &&
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
    const Tick start = std::max(ready, credit);
    // Cut-through: the last byte cannot leave before it has arrived, so a link
    // fed by a slower one is held at the slower rate.
    const Tick end = std::max(start + duration, f->tail);

    // Occupancy of the receive buffer once this frame is in it.
    if (in_flight_.size() > 32) forget_returned_credits();
    std::uint64_t used = f->wire_bytes;
    for (const InFlight& e : in_flight_) {
      if (e.credit_back > start) used += e.bytes;
    }
    stats_.peak_buffer_bytes = std::max(stats_.peak_buffer_bytes, used);
    if (timeline_) timeline_->link_frame(timeline_id_, start, start + duration, used);
    const std::size_t entry = in_flight_.size();
    in_flight_.push_back(InFlight{f, f->wire_bytes, kNever});
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
      in->nb_transport_bw(f->payload(), phase, d);
    }

    // Hand the frame to the receiver: head after the wire latency.
    f->head = start + params_.latency;
    f->tail = end + params_.latency;
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time d = delay_until(f->head);
    if (out->nb_transport_fw(f->payload(), phase, d) == tlm::TLM_UPDATED) {
      if (phase != tlm::END_REQ) throw std::logic_error(std::string(name()) + ": receiver answered with a phase other than END_REQ");
      // Answered in the return path: the entry is still where we put it
      // (nothing compacts in_flight_ while sending_ is set).
      in_flight_[entry].credit_back = absolute(d) + params_.latency;
    }
  }
  sending_ = false;
}

Tick Link::send_request(Frame* f) {
  const Tick duration = params_.bandwidth.time_for(static_cast<double>(f->wire_bytes));
  const Tick start = std::max({now_ticks(), f->head, request_busy_until_});
  const Tick end = std::max(start + duration, f->tail);
  request_busy_until_ = end;
  // It takes its time on the wire from the data frames granted after it.
  busy_until_ = std::max(busy_until_, start) + duration;
  in_flight_.push_back(InFlight{f, 0, kNever});  // its credit is the request channel's
  const std::size_t entry = in_flight_.size() - 1;
  ++stats_.frames;
  stats_.wire_bytes += f->wire_bytes;
  stats_.busy += duration;
  if (timeline_) timeline_->link_frame(timeline_id_, start, start + duration, in_flight_bytes_);
  f->head = start + params_.latency;
  f->tail = end + params_.latency;
  const bool was_sending = sending_;
  sending_ = true;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time d = delay_until(f->head);
  if (out->nb_transport_fw(f->payload(), phase, d) == tlm::TLM_UPDATED) {
    if (phase != tlm::END_REQ) throw std::logic_error(std::string(name()) + ": receiver answered with a phase other than END_REQ");
    in_flight_[entry].credit_back = absolute(d) + params_.latency;
  }
  sending_ = was_sending;
  return end;
}

void Link::credit_returned(Frame* f, Tick left_receiver) {
  for (InFlight& e : in_flight_) {
    if (e.frame == f && e.credit_back == kNever) {
      e.credit_back = left_receiver + params_.latency;
      return;
    }
  }
  throw std::logic_error(std::string(name()) + ": END_REQ for a frame this link is not carrying");
}

tlm::tlm_sync_enum Link::out_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::END_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on out");
  credit_returned(Frame::of(gp), absolute(delay));
  if (!waiting_.empty() && !sending_) send_waiting();
  return tlm::TLM_ACCEPTED;
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
