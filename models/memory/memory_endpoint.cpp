#include "models/memory/memory_endpoint.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fabricsim {

MemoryEndpoint::MemoryEndpoint(const sc_core::sc_module_name& name, Address address)
    : sc_core::sc_module(name), from_nic("from_nic"), to_nic("to_nic"), memory("memory", *this), address_(address) {
  from_nic.register_nb_transport_fw<&MemoryEndpoint::from_nic_fw>(this, 0);
  to_nic.register_nb_transport_bw<&MemoryEndpoint::to_nic_bw>(this, 0);
}

tlm::tlm_sync_enum MemoryEndpoint::from_nic_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                               sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ || delay != sc_core::SC_ZERO_TIME) {
    throw std::logic_error(std::string(name()) + ": messages are delivered with BEGIN_REQ at their time");
  }
  Message* m = Message::cast(gp);
  using Op = Message::MemoryOp;
  if (m->memory.op != Op::kLoadRequest && m->memory.op != Op::kStoreData) {
    throw std::logic_error(std::string(name()) + ": a message that is not a memory request");
  }
  ++requests_;
  // Keep the request until the memory is done: it names who asked and what.
  const bool store = m->memory.op == Op::kStoreData;
  const std::uint64_t bytes = m->memory.bytes;
  if (bytes <= kMaxPiece) {
    memory.request(store, m->memory.address, bytes, m);
    return tlm::TLM_COMPLETED;
  }
  Pieces& p = pieces_[m];
  p.left = static_cast<std::uint32_t>((bytes + kMaxPiece - 1) / kMaxPiece);
  for (std::uint64_t at = 0; at < bytes; at += kMaxPiece) {
    memory.request(store, m->memory.address + at, std::min(kMaxPiece, bytes - at), m);
  }
  return tlm::TLM_COMPLETED;
}

void MemoryEndpoint::memory_done(Message* req, bool /*write*/, tlm::tlm_response_status status) {
  if (const auto it = pieces_.find(req); it != pieces_.end()) {
    it->second.failed |= status != tlm::TLM_OK_RESPONSE;
    if (--it->second.left > 0) return;
    if (it->second.failed) status = tlm::TLM_ADDRESS_ERROR_RESPONSE;
    pieces_.erase(it);
  }
  Message* reply = Message::allocate();
  reply->ref();  // the NIC's END_REQ and the receiver each drop one
  reply->src = address_;
  reply->dst = req->src;
  reply->flow = req->flow;
  reply->tag.user = req->tag.user;
  reply->tag.src_rank = req->tag.src_rank;
  reply->memory.request = req->memory.request;
  reply->memory.address = req->memory.address;
  reply->memory.bytes = req->memory.bytes;
  reply->memory.error = status != tlm::TLM_OK_RESPONSE;
  const bool load = req->memory.op == Message::MemoryOp::kLoadRequest;
  reply->memory.op = load ? Message::MemoryOp::kLoadData : Message::MemoryOp::kStoreAck;
  reply->bytes = load && !reply->memory.error ? req->memory.bytes : kMemoryRequestBytes;
  req->unref();
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  to_nic_path_(reply->payload(), phase, delay);
}

tlm::tlm_sync_enum MemoryEndpoint::to_nic_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                             sc_core::sc_time&) {
  if (phase != tlm::END_REQ) return tlm::TLM_ACCEPTED;
  Message* m = Message::cast(gp);
  m->unref();  // the answer has left
  return tlm::TLM_ACCEPTED;
}

}  // namespace fabricsim
