// How fabric components (an NPU's compute engine, a NIC's DMA, a memory
// node's controller) use a memory: timing-only base-protocol requests over
// nb_transport, each reported done to a listener. Payloads are pooled.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <string>
#include <tlm>
#include <vector>

#include "tlm/kernel/time.h"
#include "tlm/stream_timing.h"

namespace fabricsim {

/// How a request's bytes move, for cut-through elements on the way
/// (StreamTiming says what each field means).
struct MemoryStreaming {
  Tick first_byte = kNever;  // a write: when its first byte was ready
  Tick consume_time = 0;     // a read: how long the initiator takes to use the bytes
};

class MemoryClient : public tlm::tlm_mm_interface {
 public:
  class Listener {
   public:
    /// Request `ctx` is done (its response status says how).
    virtual void memory_done(void* ctx, tlm::tlm_response_status status) = 0;

   protected:
    ~Listener() = default;
  };

  /// Bind `socket` to a memory's target socket, or leave it unbound (the
  /// component then has no memory in the way).
  tlm_utils::simple_initiator_socket_optional<MemoryClient> socket;

  MemoryClient(const char* name, Listener& listener);
  ~MemoryClient() override;

  bool bound() const { return socket.size() > 0; }
  /// A READ or WRITE of `bytes` at `address`, starting at now + `delay`.
  void request(bool write, std::uint64_t address, std::uint64_t bytes, void* ctx, Tick delay = 0,
               MemoryStreaming streaming = {});
  /// Like request(), at the next address of a rolling window [base, base +
  /// span): components that only need the bytes' timing spread them over
  /// the memory's channels as a stream would.
  void stream(bool write, std::uint64_t bytes, void* ctx, Tick delay = 0, MemoryStreaming streaming = {});
  void set_window(std::uint64_t base, std::uint64_t span) {
    window_base_ = base;
    window_span_ = span;
    cursor_ = 0;
  }
  /// The next stream() starts at the window's base again.
  void rewind() { cursor_ = 0; }
  std::size_t outstanding() const { return outstanding_; }
  /// Inside Listener::memory_done for a read: when its first byte came in,
  /// as a streaming element on the way said (StreamTiming), else now.
  Tick first_byte_in() const { return first_byte_in_; }

 private:
  void free(tlm::tlm_generic_payload* gp) override;
  tlm::tlm_sync_enum nb_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void done(tlm::tlm_generic_payload& gp);

  struct Ext : tlm::tlm_extension<Ext> {
    void* ctx = nullptr;
    tlm::tlm_extension_base* clone() const override { return new Ext(*this); }
    void copy_from(const tlm::tlm_extension_base& e) override { ctx = static_cast<const Ext&>(e).ctx; }
  };

  Listener& listener_;
  std::vector<tlm::tlm_generic_payload*> free_;
  std::vector<tlm::tlm_generic_payload*> all_;
  std::size_t outstanding_ = 0;
  std::uint64_t window_base_ = 0, window_span_ = 0, cursor_ = 0;
  Tick first_byte_in_ = 0;
};

}  // namespace fabricsim
