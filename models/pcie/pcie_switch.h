// A PCIe switch on the way from a device that masters DMA (a NIC) to the
// memory it reads and writes (a GPU's HBM, through the GPU's own PCIe port):
// what GPUDirect RDMA crosses. A TLM-2.0 base-protocol interconnect: any
// number of initiators bind to `from_devices`, `to_memory` binds to the
// memory's target socket, and each payload passes through unchanged.
//
// Timing, apart from function. The device's port and the GPU's port are
// links of `lanes` lanes of PCIe `generation`, each direction on its own; a
// direction carries TLPs of at most `max_payload` bytes, each with
// `tlp_overhead` bytes of framing, header and LCRC, so its data rate is
//   lanes x rate per lane x encoding x max_payload / (max_payload + overhead)
// (Gen5 x16, 256 B payloads: 63.0 GB/s x 256/280 = 57.6 GB/s). Both ports of
// the path run at that rate, so the path is one pipe per direction, busy
// until its last transfer ends. Crossing the switch takes `latency` each way.
//
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
//   b_transport: the same pipes, but the memory's time and the transfer in
//   sequence (a loosely timed initiator gets no cut-through).
//   DMI is refused, so that every access pays the path; debug transport
//   passes through. A command other than READ and WRITE crosses both ways
//   and takes no pipe. The base protocol's exclusion rules hold on both
//   sides: one request to the memory until its END_REQ, one response to a
//   device until its END_RESP (the others wait, in order).
// Pipes are reserved in time order: a read's at the memory's answer, a
// write's at its request (its first byte may be earlier; writes are then
// ordered by their last byte).
// The memory's own time (its latency, its bandwidth share) is not overlapped
// with the pipe: an H100's HBM (3.35 TB/s) moves bytes 58x faster than a
// PCIe 5.0 x16 port, one HBM3 stack 14x.
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
// (about 1-2% of a link), several devices' traffic meeting inside the switch
// on separate ports (the crossbar is taken as non-blocking), and the root
// complex: traffic to the CPU does not cross this element.
//
// Sockets: from_devices (base-protocol target, any number of initiators),
// to_memory (base-protocol initiator). Statistics: stats().
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm/calendar.h"
#include "tlm/parameters.h"
#include "tlm/time.h"

namespace fabricsim {

class PcieSwitch : public sc_core::sc_module, private Calendar::Client {
 public:
  struct Params {
    unsigned generation = 5;   // PCIe 1.0 to 5.0 (the encoding and rate per lane follow)
    unsigned lanes = 16;       // x1 ... x32, both ports
    std::uint64_t max_payload_bytes = 256;  // Max_Payload_Size the devices negotiated
    /// Per TLP: 4DW header with 64-bit addresses (16 B), framing token and
    /// sequence number (4 B), LCRC (4 B); ECRC would add 4 B.
    std::uint64_t tlp_overhead_bytes = 24;
    Tick latency = ns_to_ticks(115);  // through the switch, one way
    /// The data rate of each direction (see the header's comment).
    Bandwidth data_bandwidth() const;
    /// Whether PCIe has ports of `lanes` lanes: 1, 2, 4, 8, 16 or 32.
    static bool valid_lanes(unsigned lanes);
    /// Whether PCIe allows a Max_Payload_Size of `bytes`: 128 to 4096, a power of two.
    static bool valid_max_payload(std::uint64_t bytes);
    /// Every user-settable parameter, with unit, range and description.
    static const ParamTable<Params>& table();
  };

  struct Stats {
    std::uint64_t reads = 0, writes = 0;
    std::uint64_t bytes_to_device = 0, bytes_to_memory = 0;  // data, each direction
    Tick busy_to_device = 0, busy_to_memory = 0;            // time each pipe carried data
    std::uint64_t errors = 0;                                // accesses the memory refused
  };

  tlm_utils::multi_passthrough_target_socket<PcieSwitch> from_devices;
  tlm_utils::simple_initiator_socket<PcieSwitch> to_memory;

  PcieSwitch(const sc_core::sc_module_name& name, const Params& params);

  const Params& params() const { return params_; }
  const Stats& stats() const { return stats_; }

 private:
  struct Access {
    tlm::tlm_generic_payload* gp = nullptr;
    int device = 0;
  };
  enum : std::uint32_t { kArrive = 0, kMemoryDone = 1, kRespond = 2 };
  struct Pending {  // a request held until the memory's END_REQ
    Access* access;
    Tick due;
  };
  struct Responses {  // per device: the base protocol's one response at a time
    bool awaiting_end_resp = false;
    std::deque<Access*> waiting;
  };

  tlm::tlm_sync_enum nb_transport_fw(int device, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void b_transport(int device, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(int device, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(int device, tlm::tlm_generic_payload& gp);
  void on_calendar(std::uint32_t kind, void* arg) override;

  /// The access has reached the switch (kArrive): a read goes on to the
  /// memory, a write takes the pipe toward it first.
  void arrive(Access* a);
  /// Sends `a` on to the memory, to arrive `delay` from now.
  void forward(Access* a, Tick delay);
  /// The memory has answered `a` (kMemoryDone, at the answer's time).
  void memory_done(Access* a);
  /// Answers the device now (kRespond), or once its last response has ended.
  void respond(Access* a);
  void response_ended(int device);
  /// The memory has ended the request in flight: the next held one goes.
  void request_ended();
  /// Reserves `bytes` on the pipe whose free time is `pipe_free`, from
  /// `earliest` on; returns when the last byte is through.
  Tick reserve(Tick& pipe_free, Tick earliest, std::uint64_t bytes, Tick& busy);
  /// How long the first (or last) TLP of an access of `bytes` takes on a pipe.
  Tick one_tlp(std::uint64_t bytes) const;
  Access* new_access(tlm::tlm_generic_payload& gp, int device);
  void free_access(Access* a);

  Params params_;
  Bandwidth bandwidth_;  // params_.data_bandwidth(), once
  Stats stats_;
  Tick to_device_free_ = 0, to_memory_free_ = 0;  // the pipes, busy until
  std::unordered_map<tlm::tlm_generic_payload*, Access*> at_memory_;
  bool awaiting_end_req_ = false;
  std::deque<Pending> to_memory_queue_;
  std::vector<Responses> responding_;
  std::vector<std::unique_ptr<Access>> all_;
  std::vector<Access*> spare_;
};

}  // namespace fabricsim
