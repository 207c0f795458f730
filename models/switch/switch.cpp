#include "models/switch/switch.h"

#include <stdexcept>
#include <string>

namespace fabricsim {

Switch::Switch(const sc_core::sc_module_name& name, const Params& params)
    : sc_core::sc_module(name),
      tx("tx", params.ports),
      rx("rx", params.ports),
      params_(params),
      forwarder_(*this, params.hop_latency) {
  for (unsigned p = 0; p < params.ports; ++p) {
    forwarder_.add_port(tx[p], rx[p]);
    tx[p].register_nb_transport_bw<&Switch::tx_bw>(this, static_cast<int>(p));
    rx[p].register_nb_transport_fw<&Switch::rx_fw>(this, static_cast<int>(p));
  }
}

tlm::tlm_sync_enum Switch::rx_fw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                 sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on rx");
  forwarder_.pass_on(static_cast<unsigned>(port), Frame::cast(gp), absolute(delay));
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum Switch::tx_bw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                 sc_core::sc_time& delay) {
  if (phase != tlm::END_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on tx");
  if (!forwarder_.output_free(static_cast<unsigned>(port), Frame::cast(gp), absolute(delay))) {
    throw std::logic_error(std::string(name()) + ": a switch makes no frames of its own");
  }
  return tlm::TLM_ACCEPTED;
}

}  // namespace fabricsim
