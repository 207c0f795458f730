// A switch: any number of ports, a routing table filled by the platform
// builder, a per-hop latency, and cut-through forwarding (a frame's head
// leaves before its tail has arrived). Each port's input buffer is the
// receive buffer of the link that feeds it, with credit flow control; output
// ports serve frames first come, first served, by head arrival. Nothing is
// dropped, and frames of one flow follow one path in order. The policy is
// the Forwarder's (forwarding.h); the switch gives it ports.
//
// Sockets: tx[p] sends frames into the link leaving port p (initiator);
// rx[p] takes frames from the link arriving at port p (target), and returns
// its credit with END_REQ once the frame has left.
// Statistics: frames_forwarded().
#pragma once

#include "models/switch/forwarding.h"
#include "tlm/kernel/parameters.h"

namespace fabricsim {

class Switch : public sc_core::sc_module {
 public:
  struct Params {
    unsigned ports = 8;
    Tick hop_latency = 0;  // head arrival to head departure
    static const ParamTable<Params>& table() {
      static const auto table =
          ParamTable<Params>("switch", "a switch: cut-through, credit flow control, first come first served per output")
              .add("latency", Quantity::kDuration, &Params::hop_latency, "head arrival to head departure")
              .legacy("latency_ns", 1e3, "ns");
      return table;
    }
  };

  sc_core::sc_vector<FrameInitiatorSocket<Switch>> tx;  // port p, outgoing
  sc_core::sc_vector<FrameTargetSocket<Switch>> rx;     // port p, incoming

  Switch(const sc_core::sc_module_name& name, const Params& params);

  const Params& params() const { return params_; }
  Forwarder& forwarder() { return forwarder_; }
  const Forwarder& forwarder() const { return forwarder_; }
  std::uint64_t frames_forwarded() const { return forwarder_.frames_forwarded(); }

 private:
  tlm::tlm_sync_enum rx_fw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum tx_bw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  Params params_;
  Forwarder forwarder_;
};

}  // namespace fabricsim
