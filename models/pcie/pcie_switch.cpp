#include "models/pcie/pcie_switch.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tlm/stream_timing.h"

namespace fabricsim {

namespace {

/// Data bytes per second one lane of `generation` carries, after its line
/// encoding: 2.5 and 5 GT/s with 8b/10b (PCIe 1.0, 2.0), then 8, 16 and
/// 32 GT/s with 128b/130b (3.0, 4.0, 5.0). PCI-SIG base specifications.
double lane_bytes_per_second(unsigned generation) {
  switch (generation) {
    case 1: return 2.5e9 * 8 / 10 / 8;
    case 2: return 5e9 * 8 / 10 / 8;
    case 3: return 8e9 * 128 / 130 / 8;
    case 4: return 16e9 * 128 / 130 / 8;
    case 5: return 32e9 * 128 / 130 / 8;
    default: return 0;
  }
}

}  // namespace

Bandwidth PcieSwitch::Params::data_bandwidth() const {
  const double payload = static_cast<double>(max_payload_bytes);
  return Bandwidth::bytes_per_second(lanes * lane_bytes_per_second(generation) * payload /
                                     (payload + static_cast<double>(tlp_overhead_bytes)));
}

const ParamTable<PcieSwitch::Params>& PcieSwitch::Params::table() {
  static const auto table =
      ParamTable<Params>("pcie", "a PCIe switch between each NIC and its GPU's memory (GPUDirect RDMA crosses it): "
                                 "cut-through, one pipe each way at the links' data rate")
          .add("generation", Quantity::kCount, &Params::generation,
               "PCIe generation, 1 to 5 (2.5, 5, 8, 16, 32 GT/s per lane; 6.0's FLIT mode is not modelled)")
          .range(1, 5)
          .add("lanes", Quantity::kCount, &Params::lanes, "lanes of the device's and the GPU's ports: 1, 2, 4, 8, 16 or 32")
          .range(1, 32)
          .add("max_payload", Quantity::kBytes, &Params::max_payload_bytes,
               "Max_Payload_Size: data bytes per TLP, 128 to 4096, a power of two")
          .range(128, 4096)
          .add("tlp_overhead", Quantity::kBytes, &Params::tlp_overhead_bytes,
               "bytes each TLP adds to its data: framing and sequence number, header, LCRC (and ECRC if used)")
          .range(0, 64)
          .add("latency", Quantity::kDuration, &Params::latency, "through the switch, one way");
  return table;
}

bool PcieSwitch::Params::valid_lanes(unsigned lanes) {
  return lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16 || lanes == 32;
}

bool PcieSwitch::Params::valid_max_payload(std::uint64_t bytes) {
  return bytes >= 128 && bytes <= 4096 && (bytes & (bytes - 1)) == 0;
}

PcieSwitch::PcieSwitch(const sc_core::sc_module_name& name, const Params& params)
    : sc_core::sc_module(name), from_devices("from_devices"), to_memory("to_memory"), params_(params) {
  const unsigned l = params_.lanes;
  const std::uint64_t mps = params_.max_payload_bytes;
  if (lane_bytes_per_second(params_.generation) == 0) {
    throw std::invalid_argument(std::string(this->name()) + ": PCIe generation " + std::to_string(params_.generation) +
                                " is not modelled (1 to 5)");
  }
  if (!Params::valid_lanes(l)) {
    throw std::invalid_argument(std::string(this->name()) + ": " + std::to_string(l) +
                                " lanes; a PCIe port has 1, 2, 4, 8, 16 or 32");
  }
  if (!Params::valid_max_payload(mps)) {
    throw std::invalid_argument(std::string(this->name()) + ": max_payload " + std::to_string(mps) +
                                " bytes; PCIe allows 128, 256, 512, 1024, 2048 or 4096");
  }
  bandwidth_ = params_.data_bandwidth();
  Calendar::instance();  // made during elaboration, before anything schedules
  from_devices.register_nb_transport_fw(this, &PcieSwitch::nb_transport_fw);
  from_devices.register_b_transport(this, &PcieSwitch::b_transport);
  from_devices.register_get_direct_mem_ptr(this, &PcieSwitch::get_direct_mem_ptr);
  from_devices.register_transport_dbg(this, &PcieSwitch::transport_dbg);
  to_memory.register_nb_transport_bw(this, &PcieSwitch::nb_transport_bw);
}

PcieSwitch::Access* PcieSwitch::new_access(tlm::tlm_generic_payload& gp, int device) {
  Access* a;
  if (spare_.empty()) {
    all_.push_back(std::make_unique<Access>());
    a = all_.back().get();
  } else {
    a = spare_.back();
    spare_.pop_back();
  }
  a->gp = &gp;
  a->device = device;
  return a;
}

void PcieSwitch::free_access(Access* a) { spare_.push_back(a); }

Tick PcieSwitch::reserve(Tick& pipe_free, Tick earliest, std::uint64_t bytes, Tick& busy) {
  const Tick start = std::max(pipe_free, earliest);
  const Tick take = bandwidth_.time_for(static_cast<double>(bytes));
  pipe_free = start + take;
  busy += take;
  return pipe_free;
}

Tick PcieSwitch::one_tlp(std::uint64_t bytes) const {
  return bandwidth_.time_for(static_cast<double>(std::min(bytes, params_.max_payload_bytes)));
}

tlm::tlm_sync_enum PcieSwitch::nb_transport_fw(int device, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                               sc_core::sc_time& delay) {
  if (phase == tlm::END_RESP) {
    response_ended(device);
    return tlm::TLM_COMPLETED;
  }
  if (phase != tlm::BEGIN_REQ) {
    SC_REPORT_ERROR(name(), "unexpected phase on the base protocol");
    return tlm::TLM_COMPLETED;
  }
  // Pipes are reserved in time order: every access is handled at its own time.
  Calendar::instance().schedule(now_ticks() + delay.value(), this, kArrive, new_access(gp, device));
  phase = tlm::END_REQ;
  delay = sc_core::SC_ZERO_TIME;
  return tlm::TLM_UPDATED;
}

void PcieSwitch::on_calendar(std::uint32_t kind, void* arg) {
  Access* a = static_cast<Access*>(arg);
  switch (kind) {
    case kArrive: arrive(a); break;
    case kMemoryDone: memory_done(a); break;
    case kRespond: respond(a); break;
    default: break;
  }
}

void PcieSwitch::arrive(Access* a) {
  tlm::tlm_generic_payload& gp = *a->gp;
  const std::uint64_t bytes = gp.get_data_length();
  if (!gp.is_write()) {  // a read, or a command that moves no data (IGNORE)
    if (gp.is_read()) ++stats_.reads;
    forward(a, params_.latency);
    return;
  }
  ++stats_.writes;
  stats_.bytes_to_memory += bytes;
  const Tick now = now_ticks();
  Tick first = now;
  if (const StreamTiming* t = gp.get_extension<StreamTiming>(); t && t->first_byte != kNever) {
    first = std::min(t->first_byte, now);
  }
  // The last TLP cannot leave before the last byte is in.
  const Tick through = std::max(reserve(to_memory_free_, first, bytes, stats_.busy_to_memory), now + one_tlp(bytes));
  forward(a, through - now + params_.latency);
}

void PcieSwitch::forward(Access* a, Tick delay) {
  if (awaiting_end_req_) {  // the base protocol: one request at a time until END_REQ
    to_memory_queue_.push_back({a, now_ticks() + delay});
    return;
  }
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time d = to_sc_time(delay);
  at_memory_[a->gp] = a;
  const tlm::tlm_sync_enum r = to_memory->nb_transport_fw(*a->gp, phase, d);
  if (r == tlm::TLM_COMPLETED || (r == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) {
    // Answered at once (refused, or an early completion): as if at now + d.
    at_memory_.erase(a->gp);
    if (r == tlm::TLM_UPDATED) {
      tlm::tlm_phase end = tlm::END_RESP;
      to_memory->nb_transport_fw(*a->gp, end, d);
    }
    Calendar::instance().schedule(now_ticks() + d.value(), this, kMemoryDone, a);
  } else if (r == tlm::TLM_ACCEPTED) {
    awaiting_end_req_ = true;  // END_REQ (or the response) comes on the backward path
  }
}

void PcieSwitch::request_ended() {
  awaiting_end_req_ = false;
  while (!awaiting_end_req_ && !to_memory_queue_.empty()) {
    const Pending next = to_memory_queue_.front();
    to_memory_queue_.pop_front();
    forward(next.access, next.due > now_ticks() ? next.due - now_ticks() : 0);
  }
}

tlm::tlm_sync_enum PcieSwitch::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                               sc_core::sc_time& delay) {
  if (phase == tlm::END_REQ) {
    request_ended();
    return tlm::TLM_ACCEPTED;
  }
  if (phase != tlm::BEGIN_RESP) return tlm::TLM_ACCEPTED;
  if (awaiting_end_req_) request_ended();  // BEGIN_RESP ends the request too
  const auto it = at_memory_.find(&gp);
  if (it == at_memory_.end()) {
    SC_REPORT_ERROR(name(), "a response for a request it did not send");
    return tlm::TLM_COMPLETED;
  }
  Access* a = it->second;
  at_memory_.erase(it);
  Calendar::instance().schedule(now_ticks() + delay.value(), this, kMemoryDone, a);
  phase = tlm::END_RESP;
  return tlm::TLM_COMPLETED;
}

void PcieSwitch::memory_done(Access* a) {
  tlm::tlm_generic_payload& gp = *a->gp;
  const Tick now = now_ticks();
  gp.set_dmi_allowed(false);  // the memory's DMI hint is not passed on (get_direct_mem_ptr)
  if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
    ++stats_.errors;  // the completion carries no data back
    Calendar::instance().schedule(now + params_.latency, this, kRespond, a);
    return;
  }
  if (gp.is_write()) {  // posted: done once in memory
    respond(a);
    return;
  }
  if (!gp.is_read()) {  // no data: the completion crosses back
    Calendar::instance().schedule(now + params_.latency, this, kRespond, a);
    return;
  }
  const std::uint64_t bytes = gp.get_data_length();
  stats_.bytes_to_device += bytes;
  const Tick start = std::max(now, to_device_free_);
  const Tick last_in = reserve(to_device_free_, now, bytes, stats_.busy_to_device) + params_.latency;
  const Tick first_in = start + one_tlp(bytes) + params_.latency;
  Tick answer = last_in;
  if (StreamTiming* t = gp.get_extension<StreamTiming>(); t && t->consume_time > 0) {
    answer = std::max(first_in, last_in > t->consume_time ? last_in - t->consume_time : 0);
    t->first_byte = first_in;
  }
  Calendar::instance().schedule(answer, this, kRespond, a);
}

void PcieSwitch::respond(Access* a) {
  const auto device = static_cast<std::size_t>(a->device);
  if (device >= responding_.size()) responding_.resize(device + 1);
  Responses& out = responding_[device];
  if (out.awaiting_end_resp) {  // the base protocol: one response at a time until END_RESP
    out.waiting.push_back(a);
    return;
  }
  tlm::tlm_phase phase = tlm::BEGIN_RESP;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  tlm::tlm_generic_payload& gp = *a->gp;
  free_access(a);  // before the call: the device may send its next access from inside it
  if (from_devices[static_cast<int>(device)]->nb_transport_bw(gp, phase, delay) == tlm::TLM_ACCEPTED) {
    out.awaiting_end_resp = true;  // END_RESP comes on the forward path
  }
}

void PcieSwitch::response_ended(int device) {
  const auto d = static_cast<std::size_t>(device);
  if (d >= responding_.size()) return;
  Responses& out = responding_[d];
  out.awaiting_end_resp = false;
  if (out.waiting.empty()) return;
  Access* next = out.waiting.front();
  out.waiting.pop_front();
  respond(next);
}

void PcieSwitch::b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const Tick now = now_ticks();
  const std::uint64_t bytes = gp.get_data_length();
  if (gp.is_write()) {
    ++stats_.writes;
    stats_.bytes_to_memory += bytes;
    const Tick through = reserve(to_memory_free_, now + delay.value(), bytes, stats_.busy_to_memory);
    delay = to_sc_time(through + params_.latency - now);
    to_memory->b_transport(gp, delay);
    gp.set_dmi_allowed(false);
    if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
      ++stats_.errors;
      delay += to_sc_time(params_.latency);  // the error's completion crosses back
    }
    return;
  }
  delay += to_sc_time(params_.latency);
  to_memory->b_transport(gp, delay);
  gp.set_dmi_allowed(false);
  if (!gp.is_read() || gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
    if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) ++stats_.errors;
    delay += to_sc_time(params_.latency);  // no data: the completion crosses back
    return;
  }
  ++stats_.reads;
  stats_.bytes_to_device += bytes;
  const Tick through = reserve(to_device_free_, now + delay.value(), bytes, stats_.busy_to_device);
  delay = to_sc_time(through + params_.latency - now);
}

bool PcieSwitch::get_direct_mem_ptr(int, tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  dmi.allow_none();  // direct access would skip the path's time
  return false;
}

unsigned int PcieSwitch::transport_dbg(int, tlm::tlm_generic_payload& gp) { return to_memory->transport_dbg(gp); }

}  // namespace fabricsim
