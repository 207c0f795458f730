// A memory on the fabric: the controller of a pooled or expansion memory
// (CXL-like), between the memory node's NIC and its Memory.
//
// NPUs send it requests as messages: a load request (a 64-byte message
// naming the address and size) is answered with the data; a store (the
// data itself) is answered with a 64-byte acknowledgement once written.
// Requests run concurrently and share the memory's bandwidth. A request the
// memory refuses (outside its range) is answered with an error.
#pragma once

#include <cstdint>
#include <systemc>
#include <unordered_map>

#include "tlm/fabric_protocol.h"
#include "tlm/memory_client.h"

namespace fabricsim {

constexpr std::uint64_t kMemoryRequestBytes = 64;

class MemoryEndpoint : public sc_core::sc_module, private MemoryClient<Message*>::Listener {
 public:
  MessageTargetSocket<MemoryEndpoint> from_nic;   // requests
  MessageInitiatorSocket<MemoryEndpoint> to_nic;  // answers
  MemoryClient<Message*> memory;                  // bind memory.socket to the Memory

  MemoryEndpoint(const sc_core::sc_module_name& name, Address address);

  std::uint64_t requests() const { return requests_; }

 private:
  tlm::tlm_sync_enum from_nic_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum to_nic_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void memory_done(Message* req, bool write, tlm::tlm_response_status status) override;

  ForwardPath<MessageProtocol> to_nic_path_{to_nic};
  Address address_;
  std::uint64_t requests_ = 0;
  /// A request larger than a TLM payload's 32-bit length goes to the memory
  /// in pieces (kMaxPiece); it is answered when its last piece is done.
  static constexpr std::uint64_t kMaxPiece = 1ull << 30;
  struct Pieces {
    std::uint32_t left = 0;
    bool failed = false;
  };
  std::unordered_map<const Message*, Pieces> pieces_;
};

}  // namespace fabricsim
