// A protocol checker for the fabric protocols (tlm/fabric_protocol.h): a
// module that sits between any initiator socket and the target socket it
// would be bound to, passes every call through unchanged, and reports each
// breach of the protocol's rules as an SC_REPORT_ERROR of type
// "fabricsim/protocol" naming the checker, the rule, the payload and the time
// (SystemC's default action for an error throws it; a call that breaks a rule
// is then not passed on, and leaves nothing outstanding but what it found).
//
//   initiator.out.bind(checker.in);  checker.out.bind(target.in);
//
// The rules, for messages (MessageChecker) and frames (FrameChecker):
//  - the payload is one of the protocol's (a Message or a Frame);
//  - the forward path carries BEGIN_REQ only, the backward path END_REQ only;
//  - a payload is not begun again while its BEGIN_REQ is outstanding;
//  - every BEGIN_REQ gets exactly one END_REQ: in the return path (TLM_UPDATED
//    with END_REQ), or later by the backward path after TLM_ACCEPTED; messages
//    may also be taken whole (TLM_COMPLETED: a sink), frames may not;
//  - END_REQ comes only for an outstanding payload, never before the time its
//    BEGIN_REQ announced;
//  - a frame's tail is never before its head;
//  - the backward path answers TLM_ACCEPTED or TLM_COMPLETED.
// At the end of the simulation, payloads still outstanding are reported as a
// warning (a run stopped early leaves some). BaseProtocolChecker, below, does
// the same for the TLM-2.0 base protocol.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <unordered_set>

#include "tlm/fabric_protocol.h"

namespace fabricsim {

template <typename Protocol>
class ProtocolChecker : public sc_core::sc_module {
 public:
  using Payload = typename Protocol::tlm_payload_type;
  using Phase = typename Protocol::tlm_phase_type;
  static constexpr const char* kReportType = "fabricsim/protocol";

  TaggedTargetSocket<ProtocolChecker, Protocol> in;      // the initiator binds here
  TaggedInitiatorSocket<ProtocolChecker, Protocol> out;  // bind to the target

  explicit ProtocolChecker(const sc_core::sc_module_name& name);

  std::uint64_t transactions() const { return transactions_; }
  std::size_t outstanding() const { return outstanding_.size(); }
  std::uint64_t violations() const { return violations_; }

 private:
  tlm::tlm_sync_enum fw(int, Payload& p, Phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum bw(int, Payload& p, Phase& phase, sc_core::sc_time& delay);
  /// Checks an END_REQ for `p` at absolute time `at` and retires it.
  void end_request(Payload& p, Tick at, const char* how);
  void violation(const std::string& rule, const Payload* p, const Phase* phase);
  void end_of_simulation() override;

  ForwardPath<Protocol> to_target_{out};
  BackwardPath<Protocol> to_initiator_{in};
  std::unordered_map<const Payload*, Tick> outstanding_;  // BEGIN_REQ time, by payload
  std::uint64_t transactions_ = 0;
  std::uint64_t violations_ = 0;
};

/// The same for the TLM-2.0 base protocol (a memory's socket, the NIC
/// bridge's): initiator.socket.bind(checker.in); checker.out.bind(target.in).
/// Its rules (IEEE 1666-2011, 15.2): the forward path carries BEGIN_REQ and
/// END_RESP, the backward path END_REQ and BEGIN_RESP, each in its order for
/// a transaction; no BEGIN_REQ while another request has had neither END_REQ
/// nor BEGIN_RESP (request exclusion), no BEGIN_RESP while another response
/// awaits END_RESP (response exclusion); no phase annotated with a time
/// before the transaction's previous phase; a request starts with its status
/// TLM_INCOMPLETE_RESPONSE and is not answered with it (b_transport's return,
/// BEGIN_RESP, TLM_COMPLETED); a transaction is not in b_transport and
/// nb_transport at once. DMI and debug calls pass through.
class BaseProtocolChecker : public sc_core::sc_module,
                            private tlm::tlm_fw_transport_if<>,
                            private tlm::tlm_bw_transport_if<> {
 public:
  static constexpr const char* kReportType = "fabricsim/protocol";
  tlm::tlm_target_socket<32> in;
  tlm::tlm_initiator_socket<32> out;

  explicit BaseProtocolChecker(const sc_core::sc_module_name& name);

  std::uint64_t transactions() const { return transactions_; }
  std::size_t outstanding() const { return state_.size(); }
  std::uint64_t violations() const { return violations_; }

 private:
  enum class State { kRequest, kAwaitingResponse, kResponse };
  struct Progress {
    State state;
    Tick at;  // the annotated time of its latest phase
  };

  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override;
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) override;
  unsigned int transport_dbg(tlm::tlm_generic_payload& gp) override;
  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) override;

  /// The transaction has moved to `phase` (called or returned): checks the
  /// order and the exclusion rules and records it.
  void advance(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase, const sc_core::sc_time& delay,
               const char* where);
  void complete(tlm::tlm_generic_payload& gp, const char* where);
  void violation(const std::string& rule, const tlm::tlm_generic_payload& gp);
  void end_of_simulation() override;

  std::unordered_map<const tlm::tlm_generic_payload*, Progress> state_;
  const tlm::tlm_generic_payload* requesting_ = nullptr;          // a request without END_REQ yet
  const tlm::tlm_generic_payload* responding_ = nullptr;          // a response without END_RESP yet
  std::unordered_set<const tlm::tlm_generic_payload*> blocking_;  // in b_transport
  std::uint64_t transactions_ = 0;
  std::uint64_t violations_ = 0;
};

using MessageChecker = ProtocolChecker<MessageProtocol>;
using FrameChecker = ProtocolChecker<FrameProtocol>;

extern template class ProtocolChecker<MessageProtocol>;
extern template class ProtocolChecker<FrameProtocol>;

}  // namespace fabricsim
