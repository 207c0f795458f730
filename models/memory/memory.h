// A memory: HBM stacks, a pooled or expansion memory. A TLM-2.0 base-protocol
// target (b_transport and nb_transport, READ and WRITE on an address range,
// DMI when it stores data) that any initiator can use, fabricsim's own or a
// foreign platform's.
//
// Timing: the address range is interleaved over `channels` channels,
// `interleave_bytes` at a time; each channel moves `channel_bandwidth`. A
// request uses the channels its bytes fall on, in proportion. Concurrent
// requests share the channels max-min fairly (progressive filling: every
// request's rate grows together until a channel it uses is full), so N
// readers of the whole range each get 1/N of the bandwidth, and a request
// confined to one channel gets at most that channel. A request completes
// `latency` after its last byte has been moved. nb_transport follows this
// exactly; b_transport, which must answer at once, returns the time the
// request would take if nothing else arrived after it (and its load still
// slows later requests).
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/memory/memory_params.h"
#include "tlm/kernel/calendar.h"
#include "tlm/kernel/parameters.h"
#include "tlm/kernel/time.h"

namespace fabricsim {

class Memory : public sc_core::sc_module {
 public:
  using Params = MemoryParams;  // models/memory/memory_params.h

  struct Stats {
    std::uint64_t reads = 0, writes = 0;
    std::uint64_t bytes_read = 0, bytes_written = 0;
    Tick busy = 0;  // time at least one request was moving data
    std::uint64_t errors = 0;
  };

  /// Any number of initiators may bind here.
  tlm_utils::multi_passthrough_target_socket<Memory> in;

  Memory(const sc_core::sc_module_name& name, const Params& params);

  const Params& params() const { return params_; }
  const Stats& stats() const { return stats_; }
  double total_bandwidth_GBps() const { return params_.bandwidth.GBps_value(); }
  /// Bytes of [address, address + length) on each channel.
  std::vector<std::uint64_t> channel_bytes(std::uint64_t address, std::uint64_t length) const;
  std::size_t requests_in_flight() const { return active_.size(); }

 private:
  struct Request {
    tlm::tlm_generic_payload* gp = nullptr;
    int initiator = 0;
    bool blocking = false;
    double remaining = 0;                            // bytes still to move
    std::vector<std::pair<unsigned, double>> share;  // (channel, fraction of its bytes)
    double rate = 0;                                 // bytes per ps, from the last sharing
  };

  void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(int id, tlm::tlm_generic_payload& gp);
  struct Delayed {  // an nb request that starts later than it was made
    tlm::tlm_generic_payload* gp;
    int initiator;
  };
  // The calendar's events: the soonest request may have finished (unless
  // the shares changed since: a later generation); a request made with a
  // delay starts.
  void on_completion(std::uint64_t generation);
  void on_delayed_start(Delayed* d);

  /// Checks the command and range; sets the response status and returns
  /// false when the request cannot be served.
  bool check(tlm::tlm_generic_payload& gp);
  void copy_data(tlm::tlm_generic_payload& gp);
  std::uint8_t* page(std::uint64_t offset);
  Request* begin(tlm::tlm_generic_payload& gp, int initiator, bool blocking);
  std::unique_ptr<Request> new_request();  // a spare one when there is one
  /// Brings every request's remaining bytes to now, ends those done,
  /// recomputes the shares and schedules the next completion.
  void advance();
  void share_bandwidth();
  void fill_shares(double channel_bytes_per_ps);  // progressive filling of several requests
  void schedule_completion();
  void respond(Request* r);  // also the calendar's event

  Params params_;
  Calendar& calendar_ = Calendar::instance();
  Bandwidth channel_bandwidth_;  // params_.channel_bandwidth(), once: it is read per request
  Stats stats_;
  std::vector<std::unique_ptr<Request>> active_;
  std::vector<std::unique_ptr<Request>> spare_;  // finished requests, reused: one per access would be two allocations
  // share_bandwidth's scratch, per channel (capacity, load, full) and per request (frozen).
  std::vector<double> fill_capacity_, fill_load_;
  std::vector<char> fill_frozen_, fill_full_;
  Tick last_ = 0;
  std::uint64_t generation_ = 0;  // completion events from before the last change are stale
  std::map<std::uint64_t, std::unique_ptr<std::uint8_t[]>> pages_;
};

}  // namespace fabricsim
