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
    case 1:
      return 2.5e9 * 8 / 10 / 8;
    case 2:
      return 5e9 * 8 / 10 / 8;
    case 3:
      return 8e9 * 128 / 130 / 8;
    case 4:
      return 16e9 * 128 / 130 / 8;
    case 5:
      return 32e9 * 128 / 130 / 8;
    default:
      return 0;
  }
}

}  // namespace

Bandwidth PcieSwitch::Params::data_bandwidth(unsigned port_lanes) const {
  const double payload = static_cast<double>(max_payload_bytes);
  const unsigned l = port_lanes == 0 ? lanes : port_lanes;
  return Bandwidth::bytes_per_second(l * lane_bytes_per_second(generation) * payload /
                                     (payload + static_cast<double>(tlp_overhead_bytes)));
}

const ParamTable<PcieSwitch::Params>& PcieSwitch::Params::table() {
  static const auto table =
      ParamTable<PcieSwitchParams>("pcie",
                                   "a PCIe switch between each NIC and its GPU's memory (GPUDirect RDMA crosses it), "
                                   "with an uplink to the CPU (staging through host memory crosses it): "
                                   "cut-through, one pipe each way per port")
          .add("generation", Quantity::kCount, &PcieSwitchParams::generation,
               "PCIe generation, 1 to 5 (2.5, 5, 8, 16, 32 GT/s per lane; 6.0's FLIT mode is not modelled)")
          .range(1, 5)
          .add("lanes", Quantity::kCount, &PcieSwitchParams::lanes,
               "lanes of the device's and the GPU's ports: 1, 2, 4, 8, 16 or 32")
          .range(1, 32)
          .add("max_payload", Quantity::kBytes, &PcieSwitchParams::max_payload_bytes,
               "Max_Payload_Size: data bytes per TLP, 128 to 4096, a power of two")
          .range(128, 4096)
          .add("tlp_overhead", Quantity::kBytes, &PcieSwitchParams::tlp_overhead_bytes,
               "bytes each TLP adds to its data: framing and sequence number, header, LCRC (and ECRC if used)")
          .range(0, 64)
          .add("latency", Quantity::kDuration, &PcieSwitchParams::latency, "through the switch, one way")
          .add("devices_per_switch", Quantity::kCount, &PcieSwitchParams::devices_per_switch,
               "NIC/GPU pairs on one switch, sharing its uplink to the CPU (consecutive NPUs)")
          .range(1, 16)
          .choice("gpudirect_rdma", &PcieSwitchParams::gpudirect_rdma, {"on", "write_only", "off"},
                  "on: the NIC reads and writes GPU memory directly; write_only: sends are staged through host "
                  "memory (NCCL_NET_GDR_READ=0); off: both are (NCCL without GPUDirect RDMA)")
          .add("uplink_lanes", Quantity::kCount, &PcieSwitchParams::uplink_lanes,
               "lanes of the port toward the CPU: 1, 2, 4, 8, 16 or 32")
          .range(1, 32)
          .add("host_latency", Quantity::kDuration, &PcieSwitchParams::host_latency,
               "staged: from the switch's uplink into host memory and out again (root complex and DRAM)");
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
  const std::uint64_t mps = params_.max_payload_bytes;
  if (lane_bytes_per_second(params_.generation) == 0) {
    throw std::invalid_argument(std::string(this->name()) + ": PCIe generation " + std::to_string(params_.generation) +
                                " is not modelled (1 to 5)");
  }
  for (const unsigned l : {params_.lanes, params_.uplink_lanes}) {
    if (!Params::valid_lanes(l)) {
      throw std::invalid_argument(std::string(this->name()) + ": " + std::to_string(l) +
                                  " lanes; a PCIe port has 1, 2, 4, 8, 16 or 32");
    }
  }
  if (params_.devices_per_switch == 0) {
    throw std::invalid_argument(std::string(this->name()) + ": devices_per_switch 0; a switch has at least one device");
  }
  if (!Params::valid_max_payload(mps)) {
    throw std::invalid_argument(std::string(this->name()) + ": max_payload " + std::to_string(mps) +
                                " bytes; PCIe allows 128, 256, 512, 1024, 2048 or 4096");
  }
  bandwidth_ = params_.data_bandwidth();
  uplink_bandwidth_ = params_.data_bandwidth(params_.uplink_lanes);
  from_devices.register_nb_transport_fw(this, &PcieSwitch::nb_transport_fw);
  from_devices.register_b_transport(this, &PcieSwitch::b_transport);
  from_devices.register_get_direct_mem_ptr(this, &PcieSwitch::get_direct_mem_ptr);
  from_devices.register_transport_dbg(this, &PcieSwitch::transport_dbg);
  to_memory.register_nb_transport_bw(this, &PcieSwitch::nb_transport_bw);
}

void PcieSwitch::end_of_elaboration() {
  const unsigned devices = from_devices.size(), memories = to_memory.size();
  if (devices != memories) {
    SC_REPORT_ERROR(name(), ("bound to " + std::to_string(devices) + " devices and " + std::to_string(memories) +
                             " memories; each device reaches the memory bound in its place")
                                .c_str());
  }
  if (devices > params_.devices_per_switch) {
    SC_REPORT_ERROR(name(), ("bound to " + std::to_string(devices) + " devices, more than devices_per_switch (" +
                             std::to_string(params_.devices_per_switch) + ")")
                                .c_str());
  }
  pairs_.resize((devices + std::max(1u, params_.devices_per_port) - 1) / std::max(1u, params_.devices_per_port));
  requesting_.resize(memories);
  responding_.resize(devices);
}

PcieSwitch::Pair& PcieSwitch::pair(int device) {
  // The functions of one shared NIC take its one port.
  return pairs_[static_cast<std::size_t>(device) / std::max(1u, params_.devices_per_port)];
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
  a->first_at_host = a->last_at_host = 0;
  return a;
}

void PcieSwitch::free_access(Access* a) {
  spare_.push_back(a);
}

Tick PcieSwitch::reserve(PipeRef pipe, Tick earliest, std::uint64_t bytes) {
  const Tick start = std::max(pipe.free, earliest);
  const Tick take = pipe.rate.time_for(static_cast<double>(bytes));
  pipe.free = start + take;
  pipe.busy += take;
  return pipe.free;
}

Tick PcieSwitch::SharedPipe::reserve(Tick earliest, Tick take, Tick now) {
  constexpr Tick kMemory = 1'000'000'000;  // 1 ms
  if (now > kMemory) {
    while (!busy_.empty() && busy_.begin()->second < now - kMemory) {
      forgotten_until_ = std::max(forgotten_until_, busy_.begin()->second);
      busy_.erase(busy_.begin());
    }
  }
  Tick start = std::max(earliest, forgotten_until_);
  if (take == 0) return start;  // nothing to carry: no interval, which would only split a gap
  auto next = busy_.upper_bound(start);
  if (next != busy_.begin()) start = std::max(start, std::prev(next)->second);
  while (next != busy_.end() && next->first < start + take) {
    start = std::max(start, next->second);
    ++next;
  }
  Tick begin = start, end = start + take;
  if (next != busy_.begin()) {  // merge with the interval just before if it ends here
    const auto before = std::prev(next);
    if (before->second == begin) {
      begin = before->first;
      busy_.erase(before);
    }
  }
  if (next != busy_.end() && next->first == end) {
    end = next->second;
    busy_.erase(next);
  }
  busy_[begin] = end;
  return start;
}

Tick PcieSwitch::one_tlp(std::uint64_t bytes, Bandwidth rate) const {
  return rate.time_for(static_cast<double>(std::min(bytes, params_.max_payload_bytes)));
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
  calendar_.schedule<&PcieSwitch::arrive>(now_ticks() + delay.value(), this, new_access(gp, device));
  phase = tlm::END_REQ;  // at the request's own time: `delay` stays as it came
  return tlm::TLM_UPDATED;
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
  const Tick last_in = now + one_tlp(bytes, bandwidth_);
  if (params_.stages_writes()) {
    to_host(a, device_to_switch(a->device), first, last_in);
    return;
  }
  const Tick through = std::max(reserve(device_to_switch(a->device), first, bytes), last_in);
  forward(a, through - now + params_.latency);
}

void PcieSwitch::to_host(Access* a, PipeRef port, Tick earliest, Tick not_before) {
  const std::uint64_t bytes = a->gp->get_data_length();
  stats_.bytes_via_host += bytes;
  const Tick port_start = std::max(port.free, earliest);
  const Tick port_end = std::max(reserve(port, earliest, bytes), not_before);
  // The uplink takes the bytes as they come out of the port.
  const Tick take = uplink_bandwidth_.time_for(static_cast<double>(bytes));
  const Tick up = uplink_to_host_.reserve(port_start, take, now_ticks());
  stats_.busy_to_host += take;
  const Tick in_host = params_.latency + params_.host_latency;
  a->first_at_host = up + one_tlp(bytes, uplink_bandwidth_) + in_host;
  a->last_at_host = std::max(up + take, port_end) + in_host;
  // A write whose bytes trickled in may have been in host memory before now:
  // its way back is reserved now, from then (as its way up was).
  calendar_.schedule<&PcieSwitch::from_host>(std::max(now_ticks(), a->first_at_host), this, a);
}

void PcieSwitch::from_host(Access* a) {
  const Tick now = now_ticks();
  const std::uint64_t bytes = a->gp->get_data_length();
  const Tick take = uplink_bandwidth_.time_for(static_cast<double>(bytes));
  const Tick down = uplink_from_host_.reserve(a->first_at_host, take, now);
  stats_.busy_from_host += take;
  // Then the pair's own port, cut-through, toward the GPU or the device.
  PipeRef port = a->gp->is_write() ? switch_to_gpu(a->device) : switch_to_device(a->device);
  const Tick start = std::max(port.free, down);
  const Tick end = std::max(reserve(port, down, bytes), std::max(down + take, a->last_at_host));
  if (a->gp->is_write()) {
    forward(a, end - now + params_.latency);
    return;
  }
  answer_read(a, {start, end});
}

void PcieSwitch::forward(Access* a, Tick delay) {
  Requests& out = requesting_[static_cast<std::size_t>(a->device)];
  if (out.awaiting_end_req) {  // the base protocol: one request at a time until END_REQ
    out.waiting.push_back({a, now_ticks() + delay});
    return;
  }
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time d = to_sc_time(delay);
  at_memory_[a->gp] = a;
  const tlm::tlm_sync_enum r = to_memory[a->device]->nb_transport_fw(*a->gp, phase, d);
  if (r == tlm::TLM_COMPLETED || (r == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) {
    // Answered at once (refused, or an early completion): as if at now + d.
    at_memory_.erase(a->gp);
    if (r == tlm::TLM_UPDATED) {
      tlm::tlm_phase end = tlm::END_RESP;
      to_memory[a->device]->nb_transport_fw(*a->gp, end, d);
    }
    calendar_.schedule<&PcieSwitch::memory_done>(now_ticks() + d.value(), this, a);
  } else if (r == tlm::TLM_ACCEPTED) {
    out.awaiting_end_req = true;  // END_REQ (or the response) comes on the backward path
  }
}

void PcieSwitch::request_ended(int memory) {
  Requests& out = requesting_[static_cast<std::size_t>(memory)];
  out.awaiting_end_req = false;
  while (!out.awaiting_end_req && !out.waiting.empty()) {
    const Pending next = out.waiting.front();
    out.waiting.pop_front();
    forward(next.access, next.due > now_ticks() ? next.due - now_ticks() : 0);
  }
}

tlm::tlm_sync_enum PcieSwitch::nb_transport_bw(int memory, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                               sc_core::sc_time& delay) {
  if (phase == tlm::END_REQ) {
    request_ended(memory);
    return tlm::TLM_ACCEPTED;
  }
  if (phase != tlm::BEGIN_RESP) return tlm::TLM_ACCEPTED;
  // BEGIN_RESP ends the request too
  if (requesting_[static_cast<std::size_t>(memory)].awaiting_end_req) request_ended(memory);
  const auto it = at_memory_.find(&gp);
  if (it == at_memory_.end()) {
    SC_REPORT_ERROR(name(), "a response for a request it did not send");
    return tlm::TLM_COMPLETED;
  }
  Access* a = it->second;
  at_memory_.erase(it);
  calendar_.schedule<&PcieSwitch::memory_done>(now_ticks() + delay.value(), this, a);
  phase = tlm::END_RESP;
  return tlm::TLM_COMPLETED;
}

void PcieSwitch::memory_done(Access* a) {
  tlm::tlm_generic_payload& gp = *a->gp;
  const Tick now = now_ticks();
  gp.set_dmi_allowed(false);  // the memory's DMI hint is not passed on (get_direct_mem_ptr)
  if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
    ++stats_.errors;  // the completion carries no data back
    calendar_.schedule<&PcieSwitch::respond>(now + params_.latency, this, a);
    return;
  }
  if (gp.is_write()) {  // posted: done once in memory
    respond(a);
    return;
  }
  if (!gp.is_read()) {  // no data: the completion crosses back
    calendar_.schedule<&PcieSwitch::respond>(now + params_.latency, this, a);
    return;
  }
  const std::uint64_t bytes = gp.get_data_length();
  if (params_.stages_reads()) {  // the GPU copies it into host memory first
    to_host(a, gpu_to_switch(a->device), now, 0);
    return;
  }
  PipeRef pipe = switch_to_device(a->device);
  const Tick start = std::max(now, pipe.free);
  answer_read(a, {start, reserve(pipe, now, bytes)});
}

void PcieSwitch::answer_read(Access* a, Span out) {
  tlm::tlm_generic_payload& gp = *a->gp;
  const std::uint64_t bytes = gp.get_data_length();
  stats_.bytes_to_device += bytes;
  const Tick last_in = out.end + params_.latency;
  const Tick first_in = out.start + one_tlp(bytes, bandwidth_) + params_.latency;
  Tick answer = last_in;
  if (StreamTiming* t = gp.get_extension<StreamTiming>(); t && t->consume_time > 0) {
    answer = std::max(first_in, last_in > t->consume_time ? last_in - t->consume_time : 0);
    t->first_byte = first_in;
  }
  calendar_.schedule<&PcieSwitch::respond>(answer, this, a);
}

void PcieSwitch::respond(Access* a) {
  const auto device = static_cast<std::size_t>(a->device);
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
  Responses& out = responding_[static_cast<std::size_t>(device)];
  out.awaiting_end_resp = false;
  if (out.waiting.empty()) return;
  Access* next = out.waiting.front();
  out.waiting.pop_front();
  respond(next);
}

void PcieSwitch::b_transport(int device, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const Tick now = now_ticks();
  const std::uint64_t bytes = gp.get_data_length();
  // Up the uplink, into host memory and out, down the uplink, in sequence.
  auto through_host = [&](Tick from, std::uint64_t n) {
    const Tick take = uplink_bandwidth_.time_for(static_cast<double>(n));
    stats_.busy_to_host += take;
    stats_.busy_from_host += take;
    const Tick up = uplink_to_host_.reserve(from, take, now) + take + params_.latency + params_.host_latency;
    return uplink_from_host_.reserve(up, take, now) + take;
  };
  if (gp.is_write()) {
    ++stats_.writes;
    stats_.bytes_to_memory += bytes;
    Tick through = reserve(device_to_switch(device), now + delay.value(), bytes);
    if (params_.stages_writes()) {
      stats_.bytes_via_host += bytes;
      through = through_host(through, bytes);
      through = reserve(switch_to_gpu(device), through, bytes);
    }
    delay = to_sc_time(through + params_.latency - now);
    to_memory[device]->b_transport(gp, delay);
    gp.set_dmi_allowed(false);
    if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
      ++stats_.errors;
      delay += to_sc_time(params_.latency);  // the error's completion crosses back
    }
    return;
  }
  delay += to_sc_time(params_.latency);
  to_memory[device]->b_transport(gp, delay);
  gp.set_dmi_allowed(false);
  if (!gp.is_read() || gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
    if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) ++stats_.errors;
    delay += to_sc_time(params_.latency);  // no data: the completion crosses back
    return;
  }
  ++stats_.reads;
  stats_.bytes_to_device += bytes;
  Tick ready = now + delay.value();
  if (params_.stages_reads()) {
    stats_.bytes_via_host += bytes;
    ready = through_host(reserve(gpu_to_switch(device), ready, bytes), bytes);
  }
  const Tick through = reserve(switch_to_device(device), ready, bytes);
  delay = to_sc_time(through + params_.latency - now);
}

bool PcieSwitch::get_direct_mem_ptr(int, tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  dmi.allow_none();  // direct access would skip the path's time
  return false;
}

unsigned int PcieSwitch::transport_dbg(int device, tlm::tlm_generic_payload& gp) {
  return to_memory[device]->transport_dbg(gp);
}

}  // namespace fabricsim
