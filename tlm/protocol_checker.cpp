#include "tlm/protocol_checker.h"

#include <sstream>
#include <type_traits>

namespace fabricsim {

namespace {
constexpr const char* kind_name(bool frames) { return frames ? "frame" : "message"; }
}  // namespace

template <typename Protocol>
ProtocolChecker<Protocol>::ProtocolChecker(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), in("in"), out("out") {
  in.template register_nb_transport_fw<&ProtocolChecker::fw>(this, 0);
  out.template register_nb_transport_bw<&ProtocolChecker::bw>(this, 0);
}

template <typename Protocol>
void ProtocolChecker<Protocol>::violation(const std::string& rule, const Payload* p, const Phase* phase) {
  ++violations_;
  std::ostringstream s;
  s << name() << ": " << rule;
  if (p) s << " (payload " << static_cast<const void*>(p);
  if (p && phase) s << ", phase " << *phase;
  if (p) s << ")";
  s << " at " << sc_core::sc_time_stamp();
  SC_REPORT_ERROR(kReportType, s.str().c_str());
}

template <typename Protocol>
tlm::tlm_sync_enum ProtocolChecker<Protocol>::fw(int, Payload& p, Phase& phase, sc_core::sc_time& delay) {
  constexpr bool kFrames = std::is_same_v<Protocol, FrameProtocol>;
  const char* kind = kind_name(kFrames);
  if (!Protocol::is_ours(p)) {
    violation(std::string("a payload that is not a ") + kind + " on a " + kind + " socket", &p, &phase);
  }
  if (phase != tlm::BEGIN_REQ) violation("the forward path carries BEGIN_REQ only", &p, &phase);
  const Tick begin = absolute(delay);
  if constexpr (kFrames) {
    if (Frame::of(p) && Frame::cast(p)->tail < begin) violation("a frame whose tail is before its head", &p, &phase);
  }
  if (!outstanding_.emplace(&p, begin).second) {
    violation(std::string("BEGIN_REQ for a ") + kind + " whose BEGIN_REQ is still outstanding (no END_REQ yet)", &p,
              &phase);
  }
  ++transactions_;
  const tlm::tlm_sync_enum r = to_target_(p, phase, delay);
  switch (r) {
    case tlm::TLM_ACCEPTED:
      break;  // END_REQ comes by the backward path
    case tlm::TLM_UPDATED:
      if (phase != tlm::END_REQ) {
        outstanding_.erase(&p);
        violation("BEGIN_REQ answered TLM_UPDATED with a phase other than END_REQ", &p, &phase);
      } else {
        end_request(p, absolute(delay), "in the return path");
      }
      break;
    case tlm::TLM_COMPLETED:
      outstanding_.erase(&p);
      if (kFrames) violation("a frame answered TLM_COMPLETED: every frame gets an END_REQ", &p, &phase);
      break;
  }
  return r;
}

template <typename Protocol>
tlm::tlm_sync_enum ProtocolChecker<Protocol>::bw(int, Payload& p, Phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::END_REQ) {
    violation("the backward path carries END_REQ only", &p, &phase);
  } else {
    end_request(p, absolute(delay), "by the backward path");
  }
  const tlm::tlm_sync_enum r = to_initiator_(p, phase, delay);
  if (r == tlm::TLM_UPDATED) violation("END_REQ answered TLM_UPDATED (only ACCEPTED or COMPLETED)", &p, &phase);
  return r;
}

template <typename Protocol>
void ProtocolChecker<Protocol>::end_request(Payload& p, Tick at, const char* how) {
  const char* kind = kind_name(std::is_same_v<Protocol, FrameProtocol>);
  const auto it = outstanding_.find(&p);
  if (it == outstanding_.end()) {
    const tlm::tlm_phase phase = tlm::END_REQ;
    violation(std::string("END_REQ ") + how + " for a " + kind + " with no BEGIN_REQ outstanding (a second END_REQ?)",
              &p, &phase);
    return;
  }
  const Tick begin = it->second;
  outstanding_.erase(it);
  if (at < begin) {
    const tlm::tlm_phase phase = tlm::END_REQ;
    violation(std::string("END_REQ ") + how + " at " + to_sc_time(at).to_string() + ", before its BEGIN_REQ's time " +
                  to_sc_time(begin).to_string(),
              &p, &phase);
  }
}

template <typename Protocol>
void ProtocolChecker<Protocol>::end_of_simulation() {
  if (outstanding_.empty()) return;
  std::ostringstream s;
  s << name() << ": " << outstanding_.size() << " BEGIN_REQ without END_REQ when the simulation ended";
  SC_REPORT_WARNING(kReportType, s.str().c_str());
}

template class ProtocolChecker<MessageProtocol>;
template class ProtocolChecker<FrameProtocol>;

}  // namespace fabricsim
