#include "models/switch/forwarding.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim {

Forwarder::Forwarder(const sc_core::sc_module& owner, Tick hop_latency)
    : owner_(owner), hop_latency_(hop_latency), calendar_(Calendar::instance()) {}

void Forwarder::add_port(OutputSocket& output, InputSocket& input) {
  ports_.push_back(Port{ForwardPath<FrameProtocol>(output), BackwardPath<FrameProtocol>(input)});
  sockets_.push_back(Sockets{&output, &input});
}

void Forwarder::set_port_ring(unsigned port, int ring) {
  ports_.at(port).ring = ring;
}

void Forwarder::pass_on(unsigned port, Frame* f, Tick head_arrival) {
  f->hop_in = port;
  // Forward in time order of head arrival plus hop latency (see
  // set_lookahead): at once when that order is already settled.
  const Tick leave = head_arrival + hop_latency_;
  const Tick when = leave - std::min(leave, lookahead_);
  if (when <= now_ticks()) {
    forward(f);
  } else {
    calendar_.schedule<&Forwarder::forward>(when, this, f);
  }
}

void Forwarder::forward(Frame* f) {
  const bool fixed = choice_ == PortChoice::kFlowHash || choice_ == PortChoice::kDestination;
  const unsigned out = fixed ? routes_.port(f->dst, f->flow) : choose_port(f);
  f->head += hop_latency_;
  f->tail += hop_latency_;
  const int ring_out = ports_[out].ring;
  f->entering_ring = ring_out >= 0 && ports_[f->hop_in].ring != ring_out;
  ++frames_forwarded_;
  // The next hop rewrites hop_in when the frame reaches it, possibly before
  // the call returns: keep ours.
  const std::uint32_t hop_in = f->hop_in;
  Tick left = 0;
  if (offer(out, f, &left)) release(f, hop_in, left);
}

unsigned Forwarder::choose_port(const Frame* f) {
  if (routes_.dimension_order()) return routes_.port(f->dst, f->flow);
  std::uint16_t count = 0;
  const std::uint16_t* choices = routes_.choices(f->dst, &count);
  if (count == 1) return choices[0];
  if (choice_ == PortChoice::kSpray) return choices[spray_next_++ % count];
  // Frames are forwarded in order of their departure (see set_lookahead),
  // so each port's backlog is what this frame would find behind it. Ties
  // (idle ports) start from the flow's hash, so idle flows still spread.
  const std::uint32_t first = routes_.hash_index(f->flow, count);
  const Tick at = std::max(f->head + hop_latency_, now_ticks());
  const auto backlog = [&](unsigned port) {
    return port < backlogs_.size() && backlogs_[port] ? backlogs_[port]->backlog(at) : Tick{0};
  };
  unsigned best = choices[first];
  Tick least = backlog(best);
  for (std::uint16_t k = 1; k < count && least > 0; ++k) {
    const unsigned port = choices[(first + k) % count];
    const Tick b = backlog(port);
    if (b < least) {
      best = port;
      least = b;
    }
  }
  return best;
}

bool Forwarder::offer(unsigned port, Frame* f, Tick* left) {
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = delay_until(std::max(f->head, now_ticks()));
  if (ports_[port].output(f->payload(), phase, delay) != tlm::TLM_UPDATED) return false;
  if (phase != tlm::END_REQ) {
    throw std::logic_error(std::string(owner_.name()) + ": link answered with a phase other than END_REQ");
  }
  *left = absolute(delay);
  return true;
}

bool Forwarder::send_from_here(unsigned port, Frame* f, Tick* left) {
  f->hop_in = kFromHere;
  f->entering_ring = ports_[port].ring >= 0;
  return offer(port, f, left);
}

bool Forwarder::output_free(unsigned, Frame* f, Tick when) {
  // A link reports END_REQ through its backward path before passing the
  // frame on, so hop_in is still ours here.
  if (f->hop_in == kFromHere) return false;
  release(f, f->hop_in, when);
  return true;
}

void Forwarder::release(Frame* f, std::uint32_t port, Tick when) {
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_core::sc_time delay = delay_until(when);
  ports_[port].input(f->payload(), phase, delay);
}

}  // namespace fabricsim
