// Sockets for the fabric protocols: a TLM-2.0 socket bound to a member
// function of its module, with a tag saying which of several sockets a call
// came through; and the paths a module calls its peers through.
//
// Like tlm_utils' simple sockets, but non-blocking only: the simple target
// socket spawns a b_transport adapter thread per socket at start of
// simulation, which at thousands of sockets costs tens of megabytes of
// stacks. Fabric components never block, so a b_transport call on these
// sockets is reported as an error.
//
// Every message crosses about ten sockets, and with a thousand NPUs the
// sockets' own memory is cold each time: an ordinary call reads the calling
// port's interface pointer, then the target socket's callback, two cache
// misses per call. A `ForwardPath` or `BackwardPath` resolves its socket's
// far end on first use: when that is one of these tagged sockets, later calls
// go straight to the bound member function, reading only the path itself
// (kept by the caller next to its other working state); any other TLM-2.0
// socket is called through its interface as usual. Binding stays plain TLM.
#pragma once

#include <stdexcept>
#include <string>
#include <systemc>
#include <tlm>
#include <type_traits>

namespace fabricsim {

/// A bound callback: which function, on which module, with which tag.
template <typename Protocol>
struct DirectCall {
  using Payload = typename Protocol::tlm_payload_type;
  using Phase = typename Protocol::tlm_phase_type;
  using Fn = tlm::tlm_sync_enum (*)(sc_core::sc_module* module, int tag, Payload&, Phase&, sc_core::sc_time&);
  Fn fn = nullptr;
  sc_core::sc_module* module = nullptr;
  int tag = 0;
};

/// What a tagged socket tells a path about its callback.
template <typename Protocol>
class DirectTarget {
 public:
  virtual DirectCall<Protocol> direct_call() const = 0;

 protected:
  ~DirectTarget() = default;
};

namespace detail {
template <typename Module, typename Protocol,
          tlm::tlm_sync_enum (Module::*Callback)(int, typename Protocol::tlm_payload_type&,
                                                 typename Protocol::tlm_phase_type&, sc_core::sc_time&)>
tlm::tlm_sync_enum invoke(sc_core::sc_module* module, int tag, typename Protocol::tlm_payload_type& p,
                          typename Protocol::tlm_phase_type& ph, sc_core::sc_time& t) {
  // Made together with the registration that stored a Module here.
  return (static_cast<Module*>(module)->*Callback)(tag, p, ph, t);
}
}  // namespace detail

template <typename Module, typename Protocol>
class TaggedTargetSocket : public tlm::tlm_target_socket<64, Protocol>,
                           public tlm::tlm_fw_transport_if<Protocol>,  // public: paths cross-cast from it
                           public DirectTarget<Protocol> {
 public:
  using Payload = typename Protocol::tlm_payload_type;
  using Phase = typename Protocol::tlm_phase_type;
  using Callback = tlm::tlm_sync_enum (Module::*)(int, Payload&, Phase&, sc_core::sc_time&);

  explicit TaggedTargetSocket(const char* name) : tlm::tlm_target_socket<64, Protocol>(name) {
    this->bind(static_cast<tlm::tlm_fw_transport_if<Protocol>&>(*this));
  }
  /// nb_transport_fw calls on this socket call `module->Fn(tag, ...)`.
  template <Callback Fn>
  void register_nb_transport_fw(Module* module, int tag) {
    call_ = DirectCall<Protocol>{&detail::invoke<Module, Protocol, Fn>, module, tag};
  }
  DirectCall<Protocol> direct_call() const override { return call_; }

 private:
  /// Called through the interface: by an initiator that is not one of our
  /// paths (those call the callback directly), so possibly a foreign model.
  /// A payload not of this protocol's kind is answered with
  /// TLM_GENERIC_ERROR_RESPONSE and completed, never handed on to be cast.
  tlm::tlm_sync_enum nb_transport_fw(Payload& p, Phase& ph, sc_core::sc_time& t) override {
    if (!Protocol::is_ours(p)) {
      p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return tlm::TLM_COMPLETED;
    }
    return call_.fn(call_.module, call_.tag, p, ph, t);
  }
  void b_transport(Payload&, sc_core::sc_time&) override {
    SC_REPORT_ERROR(this->name(), "fabric sockets are non-blocking: b_transport is not supported");
  }
  bool get_direct_mem_ptr(Payload&, tlm::tlm_dmi&) override { return false; }
  unsigned int transport_dbg(Payload&) override { return 0; }

  DirectCall<Protocol> call_;
};

template <typename Module, typename Protocol>
class TaggedInitiatorSocket : public tlm::tlm_initiator_socket<64, Protocol>,
                              public tlm::tlm_bw_transport_if<Protocol>,  // public: paths cross-cast from it
                              public DirectTarget<Protocol> {
 public:
  using Payload = typename Protocol::tlm_payload_type;
  using Phase = typename Protocol::tlm_phase_type;
  using Callback = tlm::tlm_sync_enum (Module::*)(int, Payload&, Phase&, sc_core::sc_time&);

  explicit TaggedInitiatorSocket(const char* name) : tlm::tlm_initiator_socket<64, Protocol>(name) {
    this->bind(static_cast<tlm::tlm_bw_transport_if<Protocol>&>(*this));
  }
  /// nb_transport_bw calls on this socket call `module->Fn(tag, ...)`.
  template <Callback Fn>
  void register_nb_transport_bw(Module* module, int tag) {
    call_ = DirectCall<Protocol>{&detail::invoke<Module, Protocol, Fn>, module, tag};
  }
  DirectCall<Protocol> direct_call() const override { return call_; }

 private:
  tlm::tlm_sync_enum nb_transport_bw(Payload& p, Phase& ph, sc_core::sc_time& t) override {
    return call_.fn(call_.module, call_.tag, p, ph, t);
  }
  void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}

  DirectCall<Protocol> call_;
};

namespace detail {
/// A path through a port to the interface bound at its far end: the forward
/// transport interface (an initiator socket's) or the backward one (a target
/// socket's).
template <typename Protocol, bool kForward>
class Path {
  using Interface =
      std::conditional_t<kForward, tlm::tlm_fw_transport_if<Protocol>, tlm::tlm_bw_transport_if<Protocol>>;

 public:
  tlm::tlm_sync_enum operator()(typename Protocol::tlm_payload_type& p, typename Protocol::tlm_phase_type& ph,
                                sc_core::sc_time& t) {
    if (call_.fn) return call_.fn(call_.module, call_.tag, p, ph, t);
    if (!interface_) {
      resolve();
      return (*this)(p, ph, t);
    }
    if constexpr (kForward) {
      return interface_->nb_transport_fw(p, ph, t);
    } else {
      return interface_->nb_transport_bw(p, ph, t);
    }
  }

 protected:
  explicit Path(sc_core::sc_port_b<Interface>& port) : port_(&port) {}

 private:
  /// On first use, after elaboration has bound every port.
  void resolve() {
    Interface* far = port_->operator->();
    if (auto* tagged = dynamic_cast<const DirectTarget<Protocol>*>(far)) {
      call_ = tagged->direct_call();
      if (!call_.fn)
        throw std::logic_error(std::string(port_->name()) + ": bound to a socket with no callback registered");
    } else {
      interface_ = far;
    }
  }

  DirectCall<Protocol> call_;
  Interface* interface_ = nullptr;
  sc_core::sc_port_b<Interface>* port_;
};
}  // namespace detail

/// Calls nb_transport_fw on whatever an initiator socket is bound to.
template <typename Protocol>
class ForwardPath : public detail::Path<Protocol, true> {
 public:
  explicit ForwardPath(tlm::tlm_initiator_socket<64, Protocol>& socket) : ForwardPath::Path(socket) {}
};

/// Calls nb_transport_bw on whatever a target socket is bound to.
template <typename Protocol>
class BackwardPath : public detail::Path<Protocol, false> {
 public:
  explicit BackwardPath(tlm::tlm_target_socket<64, Protocol>& socket) : BackwardPath::Path(socket.get_base_port()) {}
};

}  // namespace fabricsim
