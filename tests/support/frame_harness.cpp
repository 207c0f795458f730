#include "support/frame_harness.h"

#include <stdexcept>
#include <string>

namespace fabricsim::testutil {

namespace {}

void run_to_end() {
  sc_core::sc_start();
  if (auto e = Calendar::instance().take_error()) std::rethrow_exception(e);
}

Frame* make_frame(std::uint64_t wire_bytes, Address dst, std::uint32_t input) {
  Frame* f = Frame::allocate();
  f->bytes = wire_bytes;
  f->wire_bytes = wire_bytes;
  f->dst = dst;
  f->hop_in = input;
  f->last = true;
  return f;
}

// --- FrameSource ---------------------------------------------------------

FrameSource::FrameSource(const sc_core::sc_module_name& name, bool one_at_a_time)
    : sc_core::sc_module(name), out("out"), one_at_a_time_(one_at_a_time) {
  Calendar::instance();  // made during elaboration, before anything schedules
  out.register_nb_transport_bw<&FrameSource::out_bw>(this, 0);
}

void FrameSource::send(Frame* f, Tick at, Tick tail_after) {
  pending_.push_back(Pending{f, at, tail_after});
  offered_.push_back(kNever);
  left_.push_back(kNever);
  Calendar::instance().schedule<&FrameSource::offer_ready>(at, this);
}

void FrameSource::offer_ready() {
  const Tick now = now_ticks();
  while (next_ < pending_.size() && pending_[next_].at <= now && (!one_at_a_time_ || free_at_ <= now)) {
    offer(next_++);
  }
}

void FrameSource::offer(std::size_t i) {
  Frame* f = pending_[i].frame;
  const Tick now = now_ticks();
  f->head = now;
  f->tail = now + pending_[i].tail_after;
  offered_[i] = now;
  free_at_ = kNever;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  if (to_target_(f->payload(), phase, delay) == tlm::TLM_UPDATED) {
    if (phase != tlm::END_REQ)
      throw std::logic_error(std::string(name()) + ": answered with a phase other than END_REQ");
    frame_left(f, absolute(delay));
  }
}

void FrameSource::frame_left(Frame* f, Tick when) {
  // Latest first: the frame answered is nearly always the newest.
  for (std::size_t i = next_; i-- > 0;) {
    if (pending_[i].frame == f && left_[i] == kNever) {
      left_[i] = when;
      if (i + 1 == next_) {
        free_at_ = when;
        Calendar::instance().schedule<&FrameSource::offer_ready>(when, this);  // the next frame's turn
      }
      return;
    }
  }
  throw std::logic_error(std::string(name()) + ": END_REQ for a frame it did not send");
}

tlm::tlm_sync_enum FrameSource::out_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay) {
  if (phase != tlm::END_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on out");
  frame_left(Frame::cast(gp), absolute(delay));
  return tlm::TLM_ACCEPTED;
}

// --- FrameSink -----------------------------------------------------------

FrameSink::FrameSink(const sc_core::sc_module_name& name, Tick hold, Release how)
    : sc_core::sc_module(name), in("in"), hold_(hold), how_(how) {
  Calendar::instance();
  in.register_nb_transport_fw<&FrameSink::in_fw>(this, 0);
}

tlm::tlm_sync_enum FrameSink::in_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on in");
  Frame* f = Frame::cast(gp);
  Arrival a;
  a.called = now_ticks();
  a.head = absolute(delay);
  a.tail = f->tail;
  a.released = std::max(a.head, a.tail) + hold_;
  a.spread = f->spread;
  a.src = f->src;
  a.dst = f->dst;
  a.bytes = f->bytes;
  a.wire_bytes = f->wire_bytes;
  a.offset = f->offset;
  a.index = f->index;
  a.last = f->last;
  a.msg = f->msg;
  arrivals_.push_back(a);
  if (f->msg) messages_.insert(f->msg);
  if (how_ == Release::kLater) {
    Calendar::instance().schedule<&FrameSink::release>(a.released, this, f);
    return tlm::TLM_ACCEPTED;
  }
  f->retire();  // reused only after this calendar event: the caller may still compare the pointer
  phase = tlm::END_REQ;
  delay = delay_until(a.released);
  return tlm::TLM_UPDATED;
}

void FrameSink::release(Frame* f) {
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  to_sender_(f->payload(), phase, delay);
  f->retire();
}

const FrameSink::Arrival* FrameSink::find(std::uint32_t index) const {
  for (const Arrival& a : arrivals_) {
    if (a.index == index) return &a;
  }
  return nullptr;
}

void FrameSink::unref_messages() {
  for (Message* m : messages_) m->unref();
  messages_.clear();
}

// --- MessageSource and MessageSink --------------------------------------

MessageSource::MessageSource(const sc_core::sc_module_name& name) : sc_core::sc_module(name), out("out") {
  Calendar::instance();
  out.register_nb_transport_bw<&MessageSource::out_bw>(this, 0);
}

void MessageSource::post(Message* m, Tick at) {
  Calendar::instance().schedule<&MessageSource::send>(at, this, m);
}

void MessageSource::send(Message* m) {
  left_[m] = kNever;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  if (to_nic_(m->payload(), phase, delay) != tlm::TLM_ACCEPTED) {
    throw std::logic_error(std::string(name()) + ": the NIC did not accept a message");
  }
}

Tick MessageSource::left(const Message* m) const {
  auto it = left_.find(m);
  return it == left_.end() ? kNever : it->second;
}

tlm::tlm_sync_enum MessageSource::out_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                         sc_core::sc_time& delay) {
  if (phase != tlm::END_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on out");
  left_[Message::cast(gp)] = absolute(delay);
  return tlm::TLM_ACCEPTED;
}

MessageSink::MessageSink(const sc_core::sc_module_name& name) : sc_core::sc_module(name), in("in") {
  in.register_nb_transport_fw<&MessageSink::in_fw>(this, 0);
}

tlm::tlm_sync_enum MessageSink::in_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                      sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on in");
  delivered_.emplace_back(Message::cast(gp), absolute(delay));
  return tlm::TLM_COMPLETED;
}

}  // namespace fabricsim::testutil
