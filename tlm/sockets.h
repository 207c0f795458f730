// Sockets for the fabric protocols: a TLM-2.0 socket bound to a member
// function of its module, with a tag saying which of several sockets a call
// came through.
//
// Like tlm_utils' simple sockets, but non-blocking only: the simple target
// socket spawns a b_transport adapter thread per socket at start of
// simulation, which at thousands of sockets costs tens of megabytes of
// stacks. Fabric components never block, so a b_transport call on these
// sockets is reported as an error.
#pragma once

#include <string>

#include <systemc>
#include <tlm>

namespace fabricsim {

template <typename Module, typename Protocol>
class TaggedTargetSocket : public tlm::tlm_target_socket<64, Protocol>,
                           private tlm::tlm_fw_transport_if<Protocol> {
 public:
  using Payload = typename Protocol::tlm_payload_type;
  using Phase = typename Protocol::tlm_phase_type;
  using Callback = tlm::tlm_sync_enum (Module::*)(int, Payload&, Phase&, sc_core::sc_time&);

  explicit TaggedTargetSocket(const char* name) : tlm::tlm_target_socket<64, Protocol>(name) {
    this->bind(static_cast<tlm::tlm_fw_transport_if<Protocol>&>(*this));
  }
  void register_nb_transport_fw(Module* module, Callback cb, int tag) {
    module_ = module;
    callback_ = cb;
    tag_ = tag;
  }

 private:
  tlm::tlm_sync_enum nb_transport_fw(Payload& p, Phase& ph, sc_core::sc_time& t) override {
    return (module_->*callback_)(tag_, p, ph, t);
  }
  void b_transport(Payload&, sc_core::sc_time&) override {
    SC_REPORT_ERROR(this->name(), "fabric sockets are non-blocking: b_transport is not supported");
  }
  bool get_direct_mem_ptr(Payload&, tlm::tlm_dmi&) override { return false; }
  unsigned int transport_dbg(Payload&) override { return 0; }

  Module* module_ = nullptr;
  Callback callback_ = nullptr;
  int tag_ = 0;
};

template <typename Module, typename Protocol>
class TaggedInitiatorSocket : public tlm::tlm_initiator_socket<64, Protocol>,
                              private tlm::tlm_bw_transport_if<Protocol> {
 public:
  using Payload = typename Protocol::tlm_payload_type;
  using Phase = typename Protocol::tlm_phase_type;
  using Callback = tlm::tlm_sync_enum (Module::*)(int, Payload&, Phase&, sc_core::sc_time&);

  explicit TaggedInitiatorSocket(const char* name) : tlm::tlm_initiator_socket<64, Protocol>(name) {
    this->bind(static_cast<tlm::tlm_bw_transport_if<Protocol>&>(*this));
  }
  void register_nb_transport_bw(Module* module, Callback cb, int tag) {
    module_ = module;
    callback_ = cb;
    tag_ = tag;
  }

 private:
  tlm::tlm_sync_enum nb_transport_bw(Payload& p, Phase& ph, sc_core::sc_time& t) override {
    return (module_->*callback_)(tag_, p, ph, t);
  }
  void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}

  Module* module_ = nullptr;
  Callback callback_ = nullptr;
  int tag_ = 0;
};

}  // namespace fabricsim
