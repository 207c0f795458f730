// The NIC's face for plain TLM-2.0: lets a model that knows nothing of the
// fabric protocol (tlm/fabric_protocol.h), a CPU or a DMA engine of another
// platform, send and receive messages through a NIC with base-protocol
// sockets (tlm_utils::simple_initiator_socket binds to `from_initiator`, a
// simple_target_socket takes `to_target`).
//
// Sending: a TLM_WRITE_COMMAND of N bytes at address A, on `from_initiator`,
// posts a message of N bytes (a copy of the data) to the fabric endpoint
// whose Address is A >> 32; the low 32 bits travel with the message. The
// message is posted at now + the annotated delay.
//   b_transport returns when the message's last byte has left the NIC (its
//   send buffer is free again), with the delay zeroed.
//   nb_transport: BEGIN_REQ is answered at once with TLM_UPDATED and END_REQ,
//   at the request's own annotated time (the NIC queues every message); BEGIN_RESP comes on the
//   backward path when the message has left the NIC, one response at a time
//   (a new BEGIN_RESP waits for the END_RESP of the one before).
// Refused, with the response status and nothing sent: a command other than
// WRITE (TLM_COMMAND_ERROR_RESPONSE), byte enables (BYTE_ENABLE_ERROR), a
// streaming width below the length (BURST_ERROR), no bytes
// (GENERIC_ERROR), a destination that is this NIC itself or not among
// set_destinations() (ADDRESS_ERROR).
//
// Receiving: each message the NIC delivers is written to `to_target` by
// b_transport: TLM_WRITE_COMMAND at (source Address << 32 | the sender's low
// 32 bits), with the sender's bytes (zeros for a message from one of
// fabricsim's NPUs, which carry none). One at a time, in order of arrival, as
// soon as it has arrived: the target's annotated delay and any wait hold up
// the next. The bridge takes every message the NIC delivers (no flow control
// back into the fabric).
//
// Sockets: from_initiator (base-protocol target), to_target (base-protocol
// initiator), to_nic / from_nic (bound to a Nic's `in` and `out`).
// Statistics: stats().
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <systemc>
#include <tlm>
#include <utility>

#include "tlm/fabric_protocol.h"
#include "tlm/kernel/calendar.h"

namespace fabricsim {

class BaseProtocolBridge : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(BaseProtocolBridge);

  struct Stats {
    std::uint64_t messages_sent = 0;
    std::uint64_t messages_received = 0;
    std::uint64_t bytes_sent = 0;
    std::uint64_t bytes_received = 0;
    std::uint64_t refused = 0;          // writes answered with an error status
    std::uint64_t delivery_errors = 0;  // deliveries the target answered with an error status
  };

  // Either may be left unbound: a bridge that only sends, or only receives.
  tlm_utils::simple_target_socket_optional<BaseProtocolBridge> from_initiator;  // writes to send
  tlm_utils::simple_initiator_socket_optional<BaseProtocolBridge> to_target;    // messages received
  MessageInitiatorSocket<BaseProtocolBridge> to_nic;                            // bind to Nic::in
  MessageTargetSocket<BaseProtocolBridge> from_nic;                             // Nic::out binds here

  /// `address`: the fabric Address of the NIC this bridge sits on.
  BaseProtocolBridge(const sc_core::sc_module_name& name, Address address);

  const Stats& stats() const { return stats_; }
  Address address() const { return address_; }
  /// Which destination Addresses a write may name: a write to any other is
  /// answered TLM_ADDRESS_ERROR_RESPONSE. Unset, every Address but this NIC's
  /// own is sent (a write to one no endpoint has then stops the simulation
  /// with the fabric's "no route" error, kept by Calendar::take_error()).
  void set_destinations(std::function<bool(Address)> accepts) { destinations_ = std::move(accepts); }

 private:
  class Send;  // one write on its way out: told when its message has left the NIC

  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  /// Checks a write and posts its message; false (status set) when refused.
  bool post(tlm::tlm_generic_payload& gp, const sc_core::sc_time& delay, MessageOwner* owner);
  void next_response();                              // also the calendar's event: an END_RESP's time
  void on_write_left(tlm::tlm_generic_payload* gp);  // the calendar's: its message has left

  tlm::tlm_sync_enum to_nic_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum from_nic_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void deliver_loop();

  Address address_;
  std::function<bool(Address)> destinations_;
  Stats stats_;
  ForwardPath<MessageProtocol> nic_in_{to_nic};
  // nb_transport: writes whose messages have left, waiting for BEGIN_RESP;
  // the one whose END_RESP is awaited.
  std::deque<tlm::tlm_generic_payload*> responses_;
  tlm::tlm_generic_payload* responding_ = nullptr;
  // Received messages, with when each arrived, waiting to be written out.
  std::deque<std::pair<Message*, Tick>> arrived_;
  sc_core::sc_event arrival_;
  std::vector<unsigned char> zeros_;
  tlm::tlm_generic_payload delivery_;  // the write deliver_loop makes of each received message
};

}  // namespace fabricsim
