#include "tlm/frame_router.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim {

namespace {
constexpr std::uint32_t kForward = 0;
}

FrameRouter::FrameRouter(const sc_core::sc_module_name& name, unsigned ports, Tick hop_latency)
    : sc_core::sc_module(name), tx("tx", ports), rx("rx", ports), num_ports_(ports), hop_latency_(hop_latency) {
  Calendar::instance();  // made during elaboration, before anything schedules
  ports_.reserve(ports);
  for (unsigned p = 0; p < ports; ++p) {
    ports_.push_back(Port{ForwardPath<FrameProtocol>(tx[p]), BackwardPath<FrameProtocol>(rx[p])});
    tx[p].register_nb_transport_bw<&FrameRouter::tx_bw>(this, static_cast<int>(p));
    rx[p].register_nb_transport_fw<&FrameRouter::rx_fw>(this, static_cast<int>(p));
  }
}

void FrameRouter::set_port_ring(unsigned port, int ring) { ports_.at(port).ring = ring; }

tlm::tlm_sync_enum FrameRouter::rx_fw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                      sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on rx");
  Frame* f = Frame::cast(gp);
  f->hop_in = static_cast<std::uint32_t>(port);
  if (is_local(*f)) {
    const Tick free_at = receive_local(f);
    if (free_at == kNever) return tlm::TLM_ACCEPTED;
    phase = tlm::END_REQ;
    delay = delay_until(free_at);
    return tlm::TLM_UPDATED;
  }
  // Forward in time order of head arrival plus hop latency (see
  // set_lookahead): at once when that order is already settled.
  const Tick leave = absolute(delay) + hop_latency_;
  const Tick when = leave - std::min(leave, lookahead_);
  if (when <= now_ticks()) {
    forward(f);
  } else {
    Calendar::instance().schedule(when, this, kForward, f);
  }
  return tlm::TLM_ACCEPTED;
}

void FrameRouter::forward(Frame* f) {
  const unsigned out = routes_.port(f->dst, f->flow);
  f->head += hop_latency_;
  f->tail += hop_latency_;
  const int ring_out = ports_[out].ring;
  f->entering_ring = ring_out >= 0 && ports_[f->hop_in].ring != ring_out;
  ++frames_forwarded_;
  offer(out, f);
}

void FrameRouter::send_from_here(unsigned port, Frame* f) {
  f->hop_in = kFromHere;
  f->entering_ring = ports_[port].ring >= 0;
  offer(port, f);
}

void FrameRouter::offer(unsigned port, Frame* f) {
  // The next hop rewrites hop_in when the frame reaches it, possibly before
  // this call returns: keep ours.
  const std::uint32_t hop_in = f->hop_in;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = delay_until(std::max(f->head, now_ticks()));
  if (ports_[port].tx(f->payload(), phase, delay) == tlm::TLM_UPDATED) {
    if (phase != tlm::END_REQ) throw std::logic_error(std::string(name()) + ": link answered with a phase other than END_REQ");
    left(port, f, hop_in, absolute(delay));
  }
}

tlm::tlm_sync_enum FrameRouter::tx_bw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                      sc_core::sc_time& delay) {
  if (phase != tlm::END_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on tx");
  // A link reports END_REQ through bw before passing the frame on, so
  // hop_in is still ours here.
  Frame* f = Frame::cast(gp);
  left(static_cast<unsigned>(port), f, f->hop_in, absolute(delay));
  return tlm::TLM_ACCEPTED;
}

void FrameRouter::left(unsigned port, Frame* f, std::uint32_t hop_in, Tick when) {
  if (hop_in == kFromHere) {
    frame_sent(port, f, when);
  } else {
    end_request(f, hop_in, when);
  }
}

void FrameRouter::end_request(Frame* f, std::uint32_t port, Tick when) {
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_core::sc_time delay = delay_until(when);
  ports_[port].rx(f->payload(), phase, delay);
}

void FrameRouter::on_calendar(std::uint32_t kind, void* arg) {
  if (kind == kForward) {
    forward(static_cast<Frame*>(arg));
  } else {
    on_event(kind, arg);
  }
}

}  // namespace fabricsim
