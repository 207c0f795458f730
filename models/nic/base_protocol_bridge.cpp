#include "models/nic/base_protocol_bridge.h"

#include <algorithm>

namespace fabricsim {

/// One write on its way out. Blocking: b_transport waits on `left`.
/// Non-blocking: its payload joins the responses when the message has left.
class BaseProtocolBridge::Send final : public MessageOwner {
 public:
  Send(BaseProtocolBridge* bridge, tlm::tlm_generic_payload* gp) : bridge_(bridge), gp_(gp) {}
  void message_left(Message&, Tick left) override {
    if (!gp_) {
      left_.notify(delay_until(left));
      return;
    }
    Calendar::instance().schedule<&BaseProtocolBridge::on_write_left>(left, bridge_, gp_);
    delete this;
  }
  sc_core::sc_event& left() { return left_; }

 private:
  BaseProtocolBridge* bridge_;
  tlm::tlm_generic_payload* gp_;  // null: blocking
  sc_core::sc_event left_;
};

BaseProtocolBridge::BaseProtocolBridge(const sc_core::sc_module_name& name, Address address)
    : sc_core::sc_module(name),
      from_initiator("from_initiator"),
      to_target("to_target"),
      to_nic("to_nic"),
      from_nic("from_nic"),
      address_(address) {
  from_initiator.register_b_transport(this, &BaseProtocolBridge::b_transport);
  from_initiator.register_nb_transport_fw(this, &BaseProtocolBridge::nb_transport_fw);
  to_nic.register_nb_transport_bw<&BaseProtocolBridge::to_nic_bw>(this, 0);
  from_nic.register_nb_transport_fw<&BaseProtocolBridge::from_nic_fw>(this, 0);
  SC_THREAD(deliver_loop);
}

bool BaseProtocolBridge::post(tlm::tlm_generic_payload& gp, const sc_core::sc_time& delay, MessageOwner* owner) {
  const std::uint64_t length = gp.get_data_length();
  tlm::tlm_response_status refusal = tlm::TLM_OK_RESPONSE;
  if (gp.get_command() != tlm::TLM_WRITE_COMMAND) {
    refusal = tlm::TLM_COMMAND_ERROR_RESPONSE;
  } else if (gp.get_byte_enable_ptr() != nullptr) {
    refusal = tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  } else if (gp.get_streaming_width() < length) {
    refusal = tlm::TLM_BURST_ERROR_RESPONSE;
  } else if (length == 0 || gp.get_data_ptr() == nullptr) {
    refusal = tlm::TLM_GENERIC_ERROR_RESPONSE;
  } else if (const Address dst = static_cast<Address>(gp.get_address() >> 32);
             dst == address_ || (destinations_ && !destinations_(dst))) {
    refusal = tlm::TLM_ADDRESS_ERROR_RESPONSE;
  }
  if (refusal != tlm::TLM_OK_RESPONSE) {
    gp.set_response_status(refusal);
    ++stats_.refused;
    return false;
  }
  Message* m = Message::allocate();  // the receiver's reference
  m->ref();                          // and the sender's, dropped on END_REQ
  m->src = address_;
  m->dst = static_cast<Address>(gp.get_address() >> 32);
  m->bytes = length;
  m->tag.user = static_cast<std::uint32_t>(gp.get_address());
  m->data.assign(gp.get_data_ptr(), gp.get_data_ptr() + length);
  m->sender.owner = owner;
  ++stats_.messages_sent;
  stats_.bytes_sent += length;
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time d = delay;
  nic_in_(m->payload(), phase, d);  // the NIC takes it (TLM_ACCEPTED) and answers END_REQ when it has left
  return true;
}

void BaseProtocolBridge::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  Send send(this, nullptr);
  if (!post(gp, delay, &send)) return;
  sc_core::wait(send.left());
  delay = sc_core::SC_ZERO_TIME;
}

tlm::tlm_sync_enum BaseProtocolBridge::nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                       sc_core::sc_time& delay) {
  if (phase == tlm::END_RESP) {
    if (&gp != responding_) {
      SC_REPORT_ERROR(name(), "END_RESP for a transaction whose response is not outstanding");
      return tlm::TLM_COMPLETED;
    }
    responding_ = nullptr;
    if (gp.has_mm()) gp.release();
    if (delay > sc_core::SC_ZERO_TIME) {
      Calendar::instance().schedule<&BaseProtocolBridge::next_response>(absolute(delay),
                                                                        this);  // the END_RESP's own time
    } else {
      next_response();
    }
    return tlm::TLM_COMPLETED;
  }
  if (phase != tlm::BEGIN_REQ) {
    SC_REPORT_ERROR(name(), "only BEGIN_REQ and END_RESP come on the forward path");
    return tlm::TLM_COMPLETED;
  }
  auto* send = new Send(this, &gp);
  if (!post(gp, delay, send)) {
    delete send;
    return tlm::TLM_COMPLETED;  // early completion, with the error status
  }
  if (gp.has_mm()) gp.acquire();
  phase = tlm::END_REQ;  // at the request's own time: `delay` stays as it came
  return tlm::TLM_UPDATED;
}

void BaseProtocolBridge::on_write_left(tlm::tlm_generic_payload* gp) {
  responses_.push_back(gp);
  next_response();
}

void BaseProtocolBridge::next_response() {
  // One response at a time (the base protocol's response exclusion rule).
  while (!responding_ && !responses_.empty()) {
    tlm::tlm_generic_payload* gp = responses_.front();
    responses_.pop_front();
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    responding_ = gp;  // before the call: the initiator may send END_RESP from inside it
    const tlm::tlm_sync_enum r = from_initiator->nb_transport_bw(*gp, phase, delay);
    if (responding_ != gp) continue;  // END_RESP came during the call, and was handled
    if (r == tlm::TLM_COMPLETED || (r == tlm::TLM_UPDATED && phase == tlm::END_RESP)) {
      responding_ = nullptr;
      if (gp->has_mm()) gp->release();
    }  // otherwise END_RESP comes on the forward path
  }
}

tlm::tlm_sync_enum BaseProtocolBridge::to_nic_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase&,
                                                 sc_core::sc_time& delay) {
  Message* m = Message::cast(gp);  // END_REQ: its last byte has left the NIC
  m->sender.owner->message_left(*m, absolute(delay));
  m->unref();  // the sender's
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum BaseProtocolBridge::from_nic_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase&,
                                                   sc_core::sc_time& delay) {
  arrived_.emplace_back(Message::cast(gp), absolute(delay));
  arrival_.notify(sc_core::SC_ZERO_TIME);
  return tlm::TLM_COMPLETED;  // the bridge holds the receiver's reference until it has written the message out
}

void BaseProtocolBridge::deliver_loop() {
  // A member, not a local: this thread never returns, so a local's destructor
  // (and the extension array it frees) would never run.
  tlm::tlm_generic_payload& gp = delivery_;
  while (true) {
    while (arrived_.empty()) sc_core::wait(arrival_);
    auto [m, at] = arrived_.front();
    arrived_.pop_front();
    const Tick now = sc_core::sc_time_stamp().value();
    if (at > now) sc_core::wait(to_sc_time(at - now));
    if (m->bytes > 0xffffffffull) {
      SC_REPORT_ERROR(name(), ("a message of " + std::to_string(m->bytes) +
                               " bytes arrived: a generic payload carries at most 4 GiB - 1")
                                  .c_str());
    }
    unsigned char* data;
    if (m->data.size() == m->bytes) {
      data = m->data.data();
    } else {  // a message without data (from one of fabricsim's NPUs)
      if (zeros_.size() < m->bytes) zeros_.resize(m->bytes);
      data = zeros_.data();
    }
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(static_cast<std::uint64_t>(m->src) << 32 | m->tag.user);
    gp.set_data_ptr(data);
    gp.set_data_length(static_cast<unsigned>(m->bytes));
    gp.set_streaming_width(static_cast<unsigned>(m->bytes));
    gp.set_byte_enable_ptr(nullptr);
    gp.set_dmi_allowed(false);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    if (to_target.size() == 0) {
      SC_REPORT_ERROR(name(), "a message arrived, and to_target is not bound: bind it to receive");
    }
    to_target->b_transport(gp, delay);
    ++stats_.messages_received;
    stats_.bytes_received += m->bytes;
    if (gp.is_response_error()) ++stats_.delivery_errors;
    m->unref();  // the receiver's
    if (delay > sc_core::SC_ZERO_TIME) sc_core::wait(delay);
  }
}

}  // namespace fabricsim
