#include "tlm/protocol_checker.h"

#include <sstream>
#include <type_traits>

namespace fabricsim {

namespace {
constexpr const char* kind_name(bool frames) {
  return frames ? "frame" : "message";
}
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
    // Logged rather than thrown: never hand it on, where it would be cast.
    p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return tlm::TLM_COMPLETED;
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

// --- BaseProtocolChecker --------------------------------------------------

BaseProtocolChecker::BaseProtocolChecker(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), in("in"), out("out") {
  in.bind(static_cast<tlm::tlm_fw_transport_if<>&>(*this));
  out.bind(static_cast<tlm::tlm_bw_transport_if<>&>(*this));
}

void BaseProtocolChecker::violation(const std::string& rule, const tlm::tlm_generic_payload& gp) {
  ++violations_;
  std::ostringstream s;
  s << name() << ": " << rule << " (transaction " << static_cast<const void*>(&gp) << ", "
    << (gp.is_read()    ? "READ"
        : gp.is_write() ? "WRITE"
                        : "IGNORE")
    << " at 0x" << std::hex << gp.get_address() << std::dec << ") at " << sc_core::sc_time_stamp();
  SC_REPORT_ERROR(kReportType, s.str().c_str());
}

void BaseProtocolChecker::advance(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase,
                                  const sc_core::sc_time& delay, const char* where) {
  const auto it = state_.find(&gp);
  const auto expect = [&](bool ok, const std::string& what) {
    if (!ok) violation(std::string(where) + ": " + what, gp);
  };
  const Tick at = absolute(delay);
  if (it != state_.end() && phase != tlm::BEGIN_REQ) {
    expect(at >= it->second.at, phase.get_name() + std::string(" annotated at ") + to_sc_time(at).to_string() +
                                    ", before the transaction's previous phase at " +
                                    to_sc_time(it->second.at).to_string());
    it->second.at = at;
  }
  if (phase == tlm::BEGIN_REQ) {
    expect(it == state_.end(), "BEGIN_REQ for a transaction already in progress");
    expect(!blocking_.count(&gp), "BEGIN_REQ for a transaction that is in b_transport");
    expect(requesting_ == nullptr,
           "BEGIN_REQ while another request has had neither END_REQ nor BEGIN_RESP "
           "(request exclusion)");
    expect(gp.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE,
           "BEGIN_REQ with a response status other than TLM_INCOMPLETE_RESPONSE");
    state_[&gp] = {State::kRequest, at};
    requesting_ = &gp;
    ++transactions_;
  } else if (phase == tlm::END_REQ) {
    expect(it != state_.end() && it->second.state == State::kRequest, "END_REQ for a transaction not awaiting it");
    if (it != state_.end()) it->second.state = State::kAwaitingResponse;
    if (requesting_ == &gp) requesting_ = nullptr;
  } else if (phase == tlm::BEGIN_RESP) {
    expect(it != state_.end() && it->second.state != State::kResponse, "BEGIN_RESP for a transaction with no request");
    expect(responding_ == nullptr, "BEGIN_RESP while another response awaits END_RESP (response exclusion)");
    expect(gp.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE,
           "BEGIN_RESP with the response status still TLM_INCOMPLETE_RESPONSE");
    state_[&gp] = {State::kResponse, at};
    if (requesting_ == &gp) requesting_ = nullptr;  // BEGIN_RESP ends the request phase too
    responding_ = &gp;
  } else if (phase == tlm::END_RESP) {
    expect(it != state_.end() && it->second.state == State::kResponse, "END_RESP for a transaction with no response");
    complete(gp, nullptr);
  } else {
    violation(std::string(where) + ": a phase the base protocol does not have", gp);
  }
}

void BaseProtocolChecker::complete(tlm::tlm_generic_payload& gp, const char* where) {
  state_.erase(&gp);
  if (requesting_ == &gp) requesting_ = nullptr;
  if (responding_ == &gp) responding_ = nullptr;
  if (where && gp.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE) {
    violation(std::string(where) + ": TLM_COMPLETED with the response status still TLM_INCOMPLETE_RESPONSE", gp);
  }
}

tlm::tlm_sync_enum BaseProtocolChecker::nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                        sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ && phase != tlm::END_RESP) {
    violation("the forward path carries BEGIN_REQ and END_RESP only", gp);
  } else {
    advance(gp, phase, delay, "forward path");
  }
  const tlm::tlm_phase sent = phase;
  const tlm::tlm_sync_enum r = out->nb_transport_fw(gp, phase, delay);
  if (r == tlm::TLM_COMPLETED) {
    complete(gp, "forward path's return");
  } else if (r == tlm::TLM_UPDATED) {
    if (sent == tlm::END_RESP || (phase != tlm::END_REQ && phase != tlm::BEGIN_RESP)) {
      violation("the forward path's return: TLM_UPDATED to a phase that cannot follow", gp);
    } else {
      advance(gp, phase, delay, "forward path's return");
    }
  }
  return r;
}

tlm::tlm_sync_enum BaseProtocolChecker::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                        sc_core::sc_time& delay) {
  if (phase != tlm::END_REQ && phase != tlm::BEGIN_RESP) {
    violation("the backward path carries END_REQ and BEGIN_RESP only", gp);
  } else {
    advance(gp, phase, delay, "backward path");
  }
  const tlm::tlm_phase sent = phase;
  const tlm::tlm_sync_enum r = in->nb_transport_bw(gp, phase, delay);
  if (r == tlm::TLM_COMPLETED) {
    complete(gp, "backward path's return");
  } else if (r == tlm::TLM_UPDATED) {
    if (sent != tlm::BEGIN_RESP || phase != tlm::END_RESP) {
      violation("the backward path's return: TLM_UPDATED to a phase that cannot follow", gp);
    } else {
      advance(gp, phase, delay, "backward path's return");
    }
  }
  return r;
}

void BaseProtocolChecker::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  if (state_.count(&gp)) violation("b_transport of a transaction in progress on nb_transport", gp);
  if (gp.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE) {
    violation("b_transport with a response status other than TLM_INCOMPLETE_RESPONSE", gp);
  }
  blocking_.insert(&gp);
  ++transactions_;
  out->b_transport(gp, delay);
  blocking_.erase(&gp);
  if (gp.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE) {
    violation("b_transport returned with the response status still TLM_INCOMPLETE_RESPONSE", gp);
  }
}

bool BaseProtocolChecker::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
  return out->get_direct_mem_ptr(gp, dmi);
}
unsigned int BaseProtocolChecker::transport_dbg(tlm::tlm_generic_payload& gp) {
  return out->transport_dbg(gp);
}
void BaseProtocolChecker::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
  in->invalidate_direct_mem_ptr(start, end);
}

void BaseProtocolChecker::end_of_simulation() {
  if (state_.empty()) return;
  std::ostringstream s;
  s << name() << ": " << state_.size() << " transaction(s) not completed when the simulation ended";
  SC_REPORT_WARNING(kReportType, s.str().c_str());
}

}  // namespace fabricsim
