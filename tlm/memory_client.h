// How fabric components (an NPU's compute engine, a NIC's DMA, a memory
// node's controller) use a memory: timing-only base-protocol requests over
// nb_transport, each reported done to a listener. Payloads are pooled.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <string>
#include <tlm>
#include <type_traits>
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

/// What MemoryClient<Context> has that does not depend on its context's
/// type: the socket, the payload pool, the streaming window.
class MemoryClientCore : public tlm::tlm_mm_interface {
 public:
  /// Bind `socket` to a memory's target socket, or leave it unbound (the
  /// component then has no memory in the way).
  tlm_utils::simple_initiator_socket_optional<MemoryClientCore> socket;

  bool bound() const { return socket.size() > 0; }
  void set_window(std::uint64_t base, std::uint64_t span) {
    window_base_ = base;
    window_span_ = span;
    cursor_ = 0;
  }
  /// The next stream() starts at the window's base again.
  void rewind() { cursor_ = 0; }
  std::size_t outstanding() const { return outstanding_; }
  /// Inside the listener's memory_done for a read: when its first byte came
  /// in, as a streaming element on the way said (StreamTiming), else now.
  Tick first_byte_in() const { return first_byte_in_; }

 protected:
  explicit MemoryClientCore(const char* name);
  ~MemoryClientCore() override;
  /// `ctx` comes back to done_for() as it was given: MemoryClient<Context>
  /// gives only its Context's bits.
  void issue(bool write, std::uint64_t address, std::uint64_t bytes, std::uint64_t ctx, Tick delay,
             MemoryStreaming streaming);
  void issue_streamed(bool write, std::uint64_t bytes, std::uint64_t ctx, Tick delay, MemoryStreaming streaming);
  virtual void done_for(std::uint64_t ctx, bool write, tlm::tlm_response_status status) = 0;

 private:
  void free(tlm::tlm_generic_payload* gp) override;
  tlm::tlm_sync_enum nb_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void done(tlm::tlm_generic_payload& gp);

  struct Ext : tlm::tlm_extension<Ext> {
    std::uint64_t ctx = 0;
    tlm::tlm_extension_base* clone() const override { return new Ext(*this); }
    void copy_from(const tlm::tlm_extension_base& e) override { ctx = static_cast<const Ext&>(e).ctx; }
  };

  std::vector<tlm::tlm_generic_payload*> free_;
  std::vector<tlm::tlm_generic_payload*> all_;
  std::size_t outstanding_ = 0;
  std::uint64_t window_base_ = 0, window_span_ = 0, cursor_ = 0;
  Tick first_byte_in_ = 0;
};

/// A component's way to its memory: each request names what it is for, a
/// pointer to the component's own object (a NIC's frame, a memory node's
/// request message) or an integer (an NPU's compute resource), handed back
/// as that type when the memory is done.
template <class Context>
class MemoryClient final : public MemoryClientCore {
  static_assert(std::is_pointer_v<Context> || std::is_integral_v<Context>,
                "a memory request's context is a pointer or an integer");

 public:
  class Listener {
   public:
    /// The request for `ctx` is done: a write or a read, its response
    /// status says how.
    virtual void memory_done(Context ctx, bool write, tlm::tlm_response_status status) = 0;

   protected:
    ~Listener() = default;
  };

  MemoryClient(const char* name, Listener& listener) : MemoryClientCore(name), listener_(listener) {}

  /// A READ or WRITE of `bytes` at `address`, starting at now + `delay`.
  void request(bool write, std::uint64_t address, std::uint64_t bytes, Context ctx, Tick delay = 0,
               MemoryStreaming streaming = {}) {
    issue(write, address, bytes, pack(ctx), delay, streaming);
  }
  /// Like request(), at the next address of a rolling window [base, base +
  /// span): components that only need the bytes' timing spread them over
  /// the memory's channels as a stream would.
  void stream(bool write, std::uint64_t bytes, Context ctx, Tick delay = 0, MemoryStreaming streaming = {}) {
    issue_streamed(write, bytes, pack(ctx), delay, streaming);
  }

 private:
  static std::uint64_t pack(Context c) {
    if constexpr (std::is_pointer_v<Context>) {
      return reinterpret_cast<std::uintptr_t>(c);
    } else {
      return static_cast<std::uint64_t>(c);
    }
  }
  void done_for(std::uint64_t bits, bool write, tlm::tlm_response_status status) override {
    // The bits pack() made of a Context when the request was issued.
    if constexpr (std::is_pointer_v<Context>) {
      listener_.memory_done(reinterpret_cast<Context>(static_cast<std::uintptr_t>(bits)), write, status);
    } else {
      listener_.memory_done(static_cast<Context>(bits), write, status);
    }
  }
  Listener& listener_;
};

}  // namespace fabricsim
