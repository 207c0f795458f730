// How a switch forwards frames: the policy of every fabric node that passes
// traffic on. A Switch is this and nothing else; a NIC of a direct topology
// (ring, torus, mesh) composes one to pass on frames for other NPUs, as
// TPU-style routers do.
//
// A frame arriving on input p for another node leaves when its head has
// arrived plus the hop latency (cut-through: the tail may still be on its
// way), on the output port the routing table names. Outputs serve frames
// first come, first served, by head arrival time: a frame is offered to its
// output only once every frame that could reach that output earlier is known
// (the lookahead below), so each output link's reservations are made in time
// order. The input buffer is released (END_REQ back to the input link: the
// credit returns) when the frame's tail has left on the output link.
//
// The forwarder holds no sockets of its own: its node owns them (named for
// the node's role) and hands the forwarder the frames that pass through.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "models/switch/port_choice.h"
#include "tlm/fabric_protocol.h"
#include "tlm/kernel/calendar.h"
#include "tlm/output_backlog.h"
#include "tlm/routing_table.h"

namespace fabricsim {

class Forwarder final {
 public:
  using OutputSocket = tlm::tlm_initiator_socket<64, FrameProtocol>;
  using InputSocket = tlm::tlm_target_socket<64, FrameProtocol>;
  /// hop_in of frames made at this node rather than received.
  static constexpr std::uint32_t kFromHere = 0xffffffffu;

  /// `owner` names the node in errors; `hop_latency` is head in to head out.
  Forwarder(const sc_core::sc_module& owner, Tick hop_latency);

  /// Port p (in the order added) sends on `output` and receives on `input`.
  void add_port(OutputSocket& output, InputSocket& input);
  unsigned num_ports() const { return static_cast<unsigned>(ports_.size()); }
  OutputSocket& output(unsigned port) { return *sockets_.at(port).output; }
  InputSocket& input(unsigned port) { return *sockets_.at(port).input; }

  RoutingTable& routes() { return routes_; }
  const RoutingTable& routes() const { return routes_; }
  /// Marks port p as part of ring `ring` (a ring or one torus dimension);
  /// frames moving onto a ring from elsewhere get bubble flow control.
  void set_port_ring(unsigned port, int ring);
  /// Adaptive routing and spraying reorder a flow's frames: only for
  /// transports that accept that (the builder checks). Adaptive routing
  /// reads each port's backlog from `set_backlog`.
  void set_port_choice(PortChoice choice) { choice_ = choice; }
  void set_backlog(unsigned port, const OutputBacklog* backlog) {
    if (backlogs_.size() <= port) backlogs_.resize(port + 1, nullptr);
    backlogs_[port] = backlog;
  }
  Tick hop_latency() const { return hop_latency_; }
  /// The smallest latency of the links into this node. A frame whose head
  /// arrives at t was handed to its link at t - latency or earlier, so by
  /// t + hop - lookahead every frame that can reach an output before it is
  /// known here: forwarding then keeps each output's reservations in time
  /// order, and a frame whose link started it at once is forwarded without
  /// an event of its own.
  void set_lookahead(Tick min_input_latency) { lookahead_ = min_input_latency; }
  std::uint64_t frames_forwarded() const { return frames_forwarded_; }

  /// A frame for another node has arrived on `port` (BEGIN_REQ, its head at
  /// `head_arrival`): it is forwarded, and its input released when it has left.
  void pass_on(unsigned port, Frame* f, Tick head_arrival);
  /// Offers a frame made at this node to output `port`. Returns true if it
  /// has already been accepted (it leaves at `*left`); otherwise the output
  /// reports it later through output_free().
  bool send_from_here(unsigned port, Frame* f, Tick* left);
  /// END_REQ back to the link a frame for this node came in on: its space in
  /// the input buffer is free at `when`.
  void release_input(Frame* f, Tick when) { release(f, f->hop_in, when); }
  /// The output link on `port` has accepted a frame (END_REQ on its backward
  /// path): returns false if the frame was made here, for the node to handle;
  /// a passing frame's input is released.
  bool output_free(unsigned port, Frame* f, Tick when);

 private:
  void forward(Frame* f);  // also the calendar's event: its head's turn to leave
  /// BEGIN_REQ to the link on `port`; true if it answered at once that the
  /// frame leaves at `*left`.
  bool offer(unsigned port, Frame* f, Tick* left);
  void release(Frame* f, std::uint32_t port, Tick when);
  /// The output port for `f` under adaptive routing or spraying.
  unsigned choose_port(const Frame* f);

  /// What a frame needs of a port, in one place (one cache miss, not three).
  struct Port {
    ForwardPath<FrameProtocol> output;  // into its output link
    BackwardPath<FrameProtocol> input;  // END_REQ back to its input link
    int ring = -1;                      // see set_port_ring
  };
  struct Sockets {  // for the builder's binding only
    OutputSocket* output;
    InputSocket* input;
  };
  const sc_core::sc_module& owner_;
  Tick hop_latency_;
  Calendar& calendar_;
  Tick lookahead_ = 0;
  std::uint64_t frames_forwarded_ = 0;
  PortChoice choice_ = PortChoice::kFlowHash;
  std::uint32_t spray_next_ = 0;  // spraying: the turn of the next frame
  std::vector<Port> ports_;
  std::vector<const OutputBacklog*> backlogs_;  // per port, for adaptive routing (apart: Port stays small)
  std::vector<Sockets> sockets_;
  RoutingTable routes_;
};

}  // namespace fabricsim
