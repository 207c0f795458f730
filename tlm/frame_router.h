// The forwarding half of every fabric node that has several ports: switches,
// and NICs of direct topologies (rings, tori, meshes), which pass on traffic
// for other NPUs as TPU-style routers do.
//
// A frame arriving on rx[p] for another node leaves when its head has
// arrived plus the hop latency (cut-through: the tail may still be on its
// way), on the port the routing table names. The input buffer is released
// (END_REQ back on rx[p]) when the frame's tail has left on the output link.
// Output ports serve frames first come, first served, by head arrival time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "tlm/calendar.h"
#include "tlm/fabric_protocol.h"
#include "tlm/routing_table.h"

namespace fabricsim {

class FrameRouter : public sc_core::sc_module, public Calendar::Client {
 public:
  sc_core::sc_vector<FrameInitiatorSocket<FrameRouter>> tx;  // port p, outgoing
  sc_core::sc_vector<FrameTargetSocket<FrameRouter>> rx;     // port p, incoming

  unsigned num_ports() const { return num_ports_; }
  RoutingTable& routes() { return routes_; }
  const RoutingTable& routes() const { return routes_; }
  /// Marks port p as part of ring `ring` (a ring or one torus dimension); frames
  /// moving onto a ring from elsewhere get bubble flow control.
  void set_port_ring(unsigned port, int ring);
  Tick hop_latency() const { return hop_latency_; }
  /// The smallest latency of the links into this node. A frame whose head
  /// arrives at t was handed to its link at t - latency or earlier, so by
  /// t + hop - lookahead every frame that can reach an output before it is
  /// known here: forwarding then keeps each output's reservations in time
  /// order, and a frame whose link started it at once is forwarded without
  /// an event of its own.
  void set_lookahead(Tick min_input_latency) { lookahead_ = min_input_latency; }
  std::uint64_t frames_forwarded() const { return frames_forwarded_; }

 protected:
  FrameRouter(const sc_core::sc_module_name& name, unsigned ports, Tick hop_latency);

  static constexpr std::uint32_t kFromHere = 0xffffffffu;  // hop_in of frames made here
  static constexpr std::uint32_t kFirstSubclassEvent = 16;

  /// Is this frame for this node rather than passing through?
  virtual bool is_local(const Frame& f) const = 0;
  /// Takes a frame for this node, when BEGIN_REQ arrives (timing in f: head,
  /// tail). Returns when its buffer space is free, or kNever if the subclass
  /// will call release_input() later.
  virtual Tick receive_local(Frame* f) = 0;
  /// A frame sent with send_from_here() has left on `port` at time `left`.
  virtual void frame_sent(unsigned port, Frame* f, Tick left) = 0;
  /// Subclass calendar events (kind >= kFirstSubclassEvent).
  virtual void on_event(std::uint32_t kind, void* arg) = 0;

  /// Offers a frame originating at this node to output `port`.
  void send_from_here(unsigned port, Frame* f);
  /// END_REQ for a local frame: its space in the input buffer is free at `when`.
  void release_input(Frame* f, Tick when) { end_request(f, f->hop_in, when); }

 private:
  void end_request(Frame* f, std::uint32_t port, Tick when);
  void on_calendar(std::uint32_t kind, void* arg) final;
  tlm::tlm_sync_enum rx_fw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum tx_bw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void offer(unsigned port, Frame* f);
  void left(unsigned port, Frame* f, std::uint32_t hop_in, Tick when);
  void forward(Frame* f);

  /// What a frame needs of a port, in one place (one cache miss, not three).
  struct Port {
    ForwardPath<FrameProtocol> tx;   // into its output link
    BackwardPath<FrameProtocol> rx;  // END_REQ back to its input link
    int ring = -1;                   // see set_port_ring
  };
  unsigned num_ports_;
  Tick hop_latency_;
  Tick lookahead_ = 0;
  std::uint64_t frames_forwarded_ = 0;
  std::vector<Port> ports_;
  RoutingTable routes_;
};

}  // namespace fabricsim
