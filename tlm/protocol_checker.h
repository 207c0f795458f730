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
// warning (a run stopped early leaves some).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include <systemc>
#include <tlm>

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

using MessageChecker = ProtocolChecker<MessageProtocol>;
using FrameChecker = ProtocolChecker<FrameProtocol>;

extern template class ProtocolChecker<MessageProtocol>;
extern template class ProtocolChecker<FrameProtocol>;

}  // namespace fabricsim
