// A PCIe switch between devices that master DMA (NICs) and the memories they
// read and write (GPUs' HBM, each through the GPU's own port), with an
// uplink to the CPU's root complex: what GPUDirect RDMA crosses, and what
// NCCL's staging through host memory crosses when it is off. A TLM-2.0
// base-protocol interconnect: initiators bind to `from_devices` and memories
// to `to_memory`, pairwise: the k-th device bound reaches the k-th memory
// bound (a NIC's DMA reaches the GPU beside it; the GPUs' memories share one
// address layout, so the pair, not the address, routes). Each payload passes
// through unchanged.
//
// Timing, apart from function. Every port is a link of `lanes` lanes of PCIe
// `generation` (the uplink `uplink_lanes`), each direction on its own; a
// direction carries TLPs of at most `max_payload` bytes, each with
// `tlp_overhead` bytes of framing, header and LCRC, so its data rate is
//   lanes x rate per lane x encoding x max_payload / (max_payload + overhead)
// (Gen5 x16, 256 B payloads: 63.0 GB/s x 256/280 = 57.6 GB/s). Crossing the
// switch takes `latency` each way.
//
// With GPUDirect RDMA (`gpudirect_rdma: on`) a device's and its GPU's ports
// carry the same bytes at the same rate, so the pair's path is one pipe per
// direction, busy until its last transfer ends; pairs do not share pipes,
// except the pairs of one NIC shared by several GPUs (devices_per_port),
// whose single port carries all of theirs.
// The switch is cut-through, as PCIe switches are: a TLP goes on as soon as
// its header is in, so a large access is not held for its whole transfer at
// every hop.
//   READ: the request crosses to the memory (latency); when the memory has
//   the data, the bytes take the pipe toward the device (after what is
//   already on it) and cross back (latency). The device gets its response
//   when the last byte is in, or, if its payload carries StreamTiming with a
//   consume_time, as early as using the bytes at that pace (a NIC putting
//   them on the wire) cannot outrun them, and never before the first TLP is in;
//   its StreamTiming then says when that first TLP came in (first_byte).
//   WRITE: the bytes take the pipe toward the memory from when the first was
//   ready at the device (StreamTiming::first_byte; without it, from the
//   request), and cannot finish before the last one plus one TLP's time;
//   then they cross to the memory. The response (the write done in memory)
//   is the memory's.
//
// Staged through host memory (NCCL without GPUDirect RDMA: `off` for both
// directions; `write_only`, NCCL_NET_GDR_READ=0, for reads, the sends), the
// bytes go the long way, cut-through at every port:
//   READ: GPU port toward the switch, uplink toward the CPU (latency), host
//   memory (host_latency), uplink back, device port (latency). The GPU's
//   copy into host memory starts when its memory has the data, the device's
//   read out of it when the first TLP has been in host memory host_latency.
//   WRITE: device port, uplink toward the CPU (latency), host memory
//   (host_latency), uplink back, GPU port (latency), then into the memory.
// The uplink is shared by every pair on the switch (`devices_per_switch`), so
// a staged byte takes it once each way: two pairs staging both directions at
// B each put 4B on each direction of it.
//
//   b_transport: the same pipes, but the memory's time and the transfers in
//   sequence (a loosely timed initiator gets no cut-through).
//   DMI is refused, so that every access pays the path; debug transport
//   passes through. A command other than READ and WRITE crosses both ways
//   and takes no pipe. The base protocol's exclusion rules hold on both
//   sides: one request to each memory until its END_REQ, one response to a
//   device until its END_RESP (the others wait, in order).
// A pair's own pipes are reserved in time order: a read's at the memory's
// answer (its way back from host memory when its first TLP is there), a
// write's at its request (its first byte may be earlier; writes are then
// ordered by their last byte). The uplink is asked for out of order (a
// write from its first byte, a read's copy from when the GPU's port is
// free), so it keeps its busy intervals and a reservation takes the first
// gap long enough. Where the uplink is faster than the ports, a transfer
// holds it for its own time at the uplink's rate from when its bytes start
// out of the port: as a burst, where the bytes would share it spread out.
// The memory's own time (its latency, its bandwidth share) is not overlapped
// with the pipe: an H100's HBM (3.35 TB/s) moves bytes 58x faster than a
// PCIe 5.0 x16 port, one HBM3 stack 14x. Host memory's bandwidth is not
// modelled, only its latency: a DDR5-4800 socket of 8 channels (307 GB/s)
// is 5.3x one Gen5 x16 uplink's two directions.
//
// One tlp_overhead serves both directions: right for writes (a 4DW header
// with 64-bit addresses); read completions carry a 3DW header, 4 bytes less,
// so reads are about 1.4% faster than modelled at 256-byte payloads.
//
// Frames cross the wire whole: a NIC sends a frame once enough of it is in
// for the wire not to outrun its bytes. Where the PCIe path is slower than
// the link, that is later than a real NIC's first packet, so the frame
// carries how much later (Frame::spread), and the receiving NIC writes it
// through its own PCIe switch as from that earlier time: a message then ends
// as its last byte comes over the receiver's PCIe, as packet by packet.
//
// Not modelled: read requests' upstream bytes, ACK and flow-control DLLPs
// (about 1-2% of a link), several pairs' traffic meeting inside the switch
// elsewhere than on the uplink (the crossbar is taken as non-blocking),
// NCCL's staging in slots (it copies a slot into host memory before the
// proxy posts it: about one slot's time more latency per message than
// cut-through), and traffic between the CPU and a GPU that no device asked
// for (no shipped trace has host-device copies).
//
// Sockets: from_devices (base-protocol target, any number of initiators),
// to_memory (base-protocol initiator, one memory per device, same order).
// Statistics: stats().
#pragma once

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "models/pcie/pcie_switch_params.h"
#include "tlm/kernel/calendar.h"
#include "tlm/kernel/parameters.h"
#include "tlm/kernel/time.h"

namespace fabricsim {

class PcieSwitch : public sc_core::sc_module {
 public:
  using GpuDirect = PcieGpuDirect;

  using Params = PcieSwitchParams;  // models/pcie/pcie_switch_params.h

  struct Stats {
    std::uint64_t reads = 0, writes = 0;
    std::uint64_t bytes_to_device = 0, bytes_to_memory = 0;  // data, each direction
    Tick busy_to_device = 0, busy_to_memory = 0;             // time the devices' ports carried data
    std::uint64_t bytes_via_host = 0;                        // data staged through host memory
    Tick busy_to_host = 0, busy_from_host = 0;               // time the uplink carried data, each way
    std::uint64_t errors = 0;                                // accesses the memory refused
  };

  tlm_utils::multi_passthrough_target_socket<PcieSwitch> from_devices;
  tlm_utils::multi_passthrough_initiator_socket<PcieSwitch> to_memory;

  PcieSwitch(const sc_core::sc_module_name& name, const Params& params);

  const Params& params() const { return params_; }
  const Stats& stats() const { return stats_; }

 private:
  struct Access {
    tlm::tlm_generic_payload* gp = nullptr;
    int device = 0;
    Tick first_at_host = 0;  // staged: when its first TLP is ready in host memory
    Tick last_at_host = 0;   // and its last byte
  };
  struct Pending {  // a request held until its memory's END_REQ
    Access* access;
    Tick due;
  };
  struct Responses {  // per device: the base protocol's one response at a time
    bool awaiting_end_resp = false;
    std::deque<Access*> waiting;
  };
  struct Requests {  // per memory: the base protocol's one request at a time
    bool awaiting_end_req = false;
    std::deque<Pending> waiting;
  };
  /// A pair's pipes, busy until. With GPUDirect RDMA the device's port
  /// and the GPU's carry the same bytes: to_device and to_memory stand for
  /// both. Staged, they are the device's port, gpu_* the GPU's.
  struct Pair {
    Tick to_device = 0, to_memory = 0;
    Tick gpu_to_switch = 0, switch_to_gpu = 0;
  };
  /// When bytes through pipes in a row, cut-through, begin leaving the
  /// last pipe and when the last one is through.
  struct Span {
    Tick start = 0, end = 0;
  };

  tlm::tlm_sync_enum nb_transport_fw(int device, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(int memory, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void b_transport(int device, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(int device, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(int device, tlm::tlm_generic_payload& gp);

  /// The access has reached the switch (a calendar event): a read goes on to the
  /// memory, a write takes the pipe toward it first (or toward the host).
  void arrive(Access* a);
  /// Sends `a` on to its memory, to arrive `delay` from now.
  void forward(Access* a, Tick delay);
  /// The memory has answered `a` (a calendar event at the answer's time).
  void memory_done(Access* a);
  /// A staged access's first TLP has been in host memory host_latency
  /// (a calendar event): it takes the uplink back and the port on.
  void from_host(Access* a);
  /// A read's bytes leave the last pipe as `out` says: answer the device.
  void answer_read(Access* a, Span out);
  /// Answers the device now (a calendar event), or once its last response has ended.
  void respond(Access* a);
  void response_ended(int device);
  /// The memory has ended the request in flight: the next held one goes.
  void request_ended(int memory);
  /// One direction of the uplink. The pairs' staged bytes meet on it, and a
  /// write that trickled in asks for it from its first byte, which may be
  /// before reads that asked earlier: so it keeps its busy intervals and a
  /// reservation takes the first gap long enough from its earliest start,
  /// instead of queueing behind the last reservation (a busy-until is right
  /// only when reserved in time order).
  class SharedPipe {
   public:
    /// Reserves `take` from `earliest` on, in the first gap long enough, and
    /// returns its start. Forgets intervals that ended a millisecond before
    /// `now` (a reservation never starts before what is forgotten).
    Tick reserve(Tick earliest, Tick take, Tick now);

   private:
    std::map<Tick, Tick> busy_;  // start -> end: disjoint, merged where they touch
    Tick forgotten_until_ = 0;
  };
  /// A pipe: busy until `free`, its busy time counted in `busy`.
  struct PipeRef {
    Tick& free;
    Tick& busy;
    Bandwidth rate;
  };
  /// Reserves `bytes` on the pipe from `earliest` on; returns when the last
  /// byte is through.
  static Tick reserve(PipeRef pipe, Tick earliest, std::uint64_t bytes);
  /// A staged access's bytes take its own `port` toward the switch from
  /// `earliest`, its last byte through no earlier than `not_before`, and on
  /// up the uplink into host memory; they come back down (a calendar event) from
  /// the first TLP's arrival there plus host_latency.
  void to_host(Access* a, PipeRef port, Tick earliest, Tick not_before);
  /// How long the first (or last) TLP of an access of `bytes` takes at `rate`.
  Tick one_tlp(std::uint64_t bytes, Bandwidth rate) const;
  PipeRef device_to_switch(int device) { return {pair(device).to_memory, stats_.busy_to_memory, bandwidth_}; }
  PipeRef switch_to_device(int device) { return {pair(device).to_device, stats_.busy_to_device, bandwidth_}; }
  PipeRef gpu_to_switch(int device) { return {pair(device).gpu_to_switch, gpu_busy_, bandwidth_}; }
  PipeRef switch_to_gpu(int device) { return {pair(device).switch_to_gpu, gpu_busy_, bandwidth_}; }
  void end_of_elaboration() override;
  Pair& pair(int device);
  Access* new_access(tlm::tlm_generic_payload& gp, int device);
  void free_access(Access* a);

  Params params_;
  Calendar& calendar_ = Calendar::instance();
  Bandwidth bandwidth_;         // params_.data_bandwidth(), once
  Bandwidth uplink_bandwidth_;  // the uplink's
  Stats stats_;
  std::vector<Pair> pairs_;
  SharedPipe uplink_to_host_, uplink_from_host_;
  Tick gpu_busy_ = 0;  // the GPUs' ports, staged (not reported)
  std::unordered_map<tlm::tlm_generic_payload*, Access*> at_memory_;
  std::vector<Requests> requesting_;
  std::vector<Responses> responding_;
  std::vector<std::unique_ptr<Access>> all_;
  std::vector<Access*> spare_;
};

}  // namespace fabricsim
