#include "tlm/memory_client.h"

#include <stdexcept>
#include <string>

namespace fabricsim {

MemoryClientCore::MemoryClientCore(const char* name) : socket(name) {
  socket.register_nb_transport_bw(this, &MemoryClientCore::nb_bw);
}

MemoryClientCore::~MemoryClientCore() {
  for (auto* gp : all_) {
    gp->set_mm(nullptr);
    delete gp;
  }
}

void MemoryClientCore::free(tlm::tlm_generic_payload* gp) {
  free_.push_back(gp);
}

void MemoryClientCore::issue(bool write, std::uint64_t address, std::uint64_t bytes, std::uint64_t ctx, Tick delay,
                             MemoryStreaming streaming) {
  tlm::tlm_generic_payload* gp;
  if (free_.empty()) {
    gp = new tlm::tlm_generic_payload(this);
    gp->set_extension(new Ext);
    gp->set_extension(new StreamTiming);
    all_.push_back(gp);
  } else {
    gp = free_.back();
    free_.pop_back();
  }
  gp->acquire();
  gp->set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  gp->set_address(address);
  gp->set_data_ptr(nullptr);    // timing only
  if (bytes > 0xffffffffull) {  // a TLM payload's length is 32 bits: callers cut larger requests
    throw std::logic_error("MemoryClient: a request of " + std::to_string(bytes) + " bytes (at most 2^32 - 1)");
  }
  gp->set_data_length(static_cast<unsigned>(bytes));
  gp->set_streaming_width(static_cast<unsigned>(bytes));
  gp->set_byte_enable_ptr(nullptr);
  gp->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  gp->get_extension<Ext>()->ctx = ctx;
  StreamTiming* timing = gp->get_extension<StreamTiming>();
  timing->first_byte = streaming.first_byte;
  timing->consume_time = streaming.consume_time;
  ++outstanding_;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time d = to_sc_time(delay);
  const tlm::tlm_sync_enum r = socket->nb_transport_fw(*gp, phase, d);
  if (r == tlm::TLM_COMPLETED) done(*gp);  // refused at once (an error status)
}

void MemoryClientCore::issue_streamed(bool write, std::uint64_t bytes, std::uint64_t ctx, Tick delay,
                                      MemoryStreaming streaming) {
  if (window_span_ == 0) throw std::logic_error("MemoryClient::stream without a window");
  if (bytes > window_span_) bytes = window_span_;  // callers split larger transfers
  if (cursor_ + bytes > window_span_) cursor_ = 0;
  const std::uint64_t a = window_base_ + cursor_;
  cursor_ += bytes;
  issue(write, a, bytes, ctx, delay, streaming);
}

tlm::tlm_sync_enum MemoryClientCore::nb_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time&) {
  if (phase != tlm::BEGIN_RESP) return tlm::TLM_ACCEPTED;
  done(gp);
  phase = tlm::END_RESP;
  return tlm::TLM_COMPLETED;
}

void MemoryClientCore::done(tlm::tlm_generic_payload& gp) {
  --outstanding_;
  const std::uint64_t ctx = gp.get_extension<Ext>()->ctx;
  const auto status = gp.get_response_status();
  const StreamTiming* timing = gp.get_extension<StreamTiming>();
  first_byte_in_ = gp.is_read() && timing->first_byte != kNever ? timing->first_byte : now_ticks();
  // The transaction ends when this call returns: the payload goes back to
  // the pool after the listener, so a request it makes at once takes
  // another (reusing this one would begin it again while its BEGIN_RESP is
  // still being answered).
  done_for(ctx, gp.is_write(), status);
  gp.release();
}

}  // namespace fabricsim
