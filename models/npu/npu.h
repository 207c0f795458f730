// An NPU: the component that runs a workload. It has compute resources (a
// GPU-like engine and a CPU), a collective engine, point-to-point messaging,
// and access to remote memory, and it talks to the fabric through one NIC
// per network it is attached to.
//
// Work reaches it as operations (compute, collective, send, recv, memory),
// each reported done to the client that started it. The Chakra trace driver
// (traces/workload/trace_workload.h) is the usual client; collbench drives collectives directly.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <tuple>
#include <utility>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "models/npu/activity.h"
#include "models/npu/compute_model.h"
#include "models/npu/directory.h"
#include "models/npu/npu_params.h"
#include "tlm/fabric_protocol.h"
#include "tlm/kernel/calendar.h"
#include "tlm/kernel/parameters.h"
#include "tlm/memory_client.h"
#include "tlm/timeline_sink.h"

namespace fabricsim {

/// What a client starts an operation for, handed back when it ends: an
/// object of the client's own, of a class derived from this empty one (a
/// trace's node), so that the NPU holds it typed and costs it no space.
struct NpuOperation {};

/// Someone who starts operations on an NPU and wants to hear when they end.
class NpuClient {
 public:
  virtual void operation_done(NpuOperation* op) = 0;
  /// Where operation `op` comes from, for error messages ("file: node 7
  /// (...)"), or "" when the client cannot say.
  virtual std::string where(const NpuOperation* /*op*/) const { return ""; }

 protected:
  ~NpuClient() = default;
};

/// The trace node an operation runs, for timelines and messages.
struct OpLabel {
  std::int64_t node = -1;
  const std::string* name = nullptr;  // must outlive the operation
};

struct ComputeOp {
  OpLabel label;
  KernelWork work;            // what the compute model times
  Tick recorded = 0;          // duration recorded in the trace
  bool use_recorded = false;  // replay, or nothing the model can time
  int recorded_class = -1;    // a recorded GPU op's kernel class, for the report (-1: unknown)
  bool on_cpu = false;
};

/// A finished collective, as the report lists it.
struct CollectiveRecord {
  std::uint64_t node_id = 0;
  std::string name;
  CollectiveType type = CollectiveType::kAllReduce;
  AlgorithmKind algorithm = AlgorithmKind::kRing;
  CommProtocol protocol = CommProtocol::kPlain;
  std::uint32_t channels = 0;          // a ring's channels across nodes (0: the platform's)
  std::uint8_t nccl_algorithm = 0xff;  // CollectiveSpec's: what NCCL chose
  std::uint8_t nccl_protocol = 0;
  std::uint64_t bytes = 0;
  std::string group;
  Tick start = 0;
  Tick end = 0;
};

/// The collectives of one kind an NPU ran (name, type, algorithm, protocol,
/// channels, bytes and group alike): how many, and their durations.
struct CollectiveSummary {
  CollectiveRecord first;  // the kind's first call
  std::uint64_t count = 0;
  Tick total = 0, shortest = 0, longest = 0;
};

class Npu : public sc_core::sc_module, public CollectiveEngine::Host, private MemoryClient<unsigned>::Listener {
 public:
  using Params = NpuParams;  // models/npu/npu_params.h

  sc_core::sc_vector<MessageInitiatorSocket<Npu>> to_nic;  // one per NIC
  sc_core::sc_vector<MessageTargetSocket<Npu>> from_nic;
  /// Local memory (HBM), optional: bind hbm.socket to a memory, and compute
  /// nodes move their tensor bytes through it.
  MemoryClient<unsigned> hbm;  // each request names the compute resource it reads for

  Npu(const sc_core::sc_module_name& name, int rank, unsigned nics, const Params& params, const Directory& directory,
      const CollectiveConfig& collectives);

  int rank() const override { return rank_; }
  const Params& params() const { return params_; }
  /// The platform's in-network reduction control plane, if it has reduction units.
  void set_in_switch(InSwitchResolver* control) { in_switch_ = control; }

  // ---- operations ----------------------------------------------------------
  void start_compute(const ComputeOp& op, NpuClient* client, NpuOperation* ctx);
  void start_collective(const CollectiveSpec& spec, NpuClient* client, NpuOperation* ctx);
  void start_send(int peer, std::uint64_t bytes, std::int64_t tag, NpuClient* client, NpuOperation* ctx,
                  const OpLabel& label = {});
  void start_recv(int peer, std::uint64_t bytes, std::int64_t tag, NpuClient* client, NpuOperation* ctx,
                  const OpLabel& label = {});
  /// `what` names the operation (its trace node) in errors.
  void start_memory(bool store, std::uint64_t bytes, const std::string& what, NpuClient* client, NpuOperation* ctx,
                    const OpLabel& label = {});
  /// Checks this NPU's collectives against the other members' calls.
  void set_agreement(CollectiveAgreement* agreement) { collectives_.set_agreement(agreement); }
  /// The key of the next collective started here in group `group_id`
  /// (however many workloads, custom collectives' included, start them).
  std::uint64_t next_collective_key(std::uint32_t group_id) const { return collectives_.next_key(group_id); }
  /// Records this NPU's operations on a timeline, if it is in its subset.
  void set_timeline(TimelineSink* timeline);

  /// The time a compute op takes alone (its model's, or its recorded duration).
  Tick compute_time(const ComputeOp& op) const;
  /// Times GPU kernels with `model` instead of the one npu.compute names.
  void set_compute_model(std::shared_ptr<const ComputeModel> model) { compute_model_ = std::move(model); }
  const ComputeModel& compute_model() const { return *compute_model_; }

  // ---- results ------------------------------------------------------------
  const ActivityTotals& activity() const { return activity_.totals(); }
  /// Busy time of each compute resource (its nodes' durations summed).
  Tick gpu_busy() const { return compute_[0].busy; }
  /// The GPU's time by kernel class (what the compute model timed), and the
  /// recorded durations' ("recorded").
  struct ClassTime {
    std::uint64_t kernels = 0;
    Tick busy = 0;
    double flops = 0;
  };
  const std::array<ClassTime, kKernelClasses + 1>& gpu_by_class() const { return by_class_; }
  Tick cpu_busy() const { return compute_[1].busy; }
  Tick finish_time() const { return finish_; }
  /// The collectives this NPU ran, in the order they ended: the first
  /// `collective_list_limit` of them (a 3,072-GPU step runs millions, whose
  /// list would outgrow the run); every one is counted in the summary.
  const std::vector<CollectiveRecord>& collectives() const { return collective_log_; }
  std::uint64_t collectives_run() const { return collectives_run_; }
  const std::vector<CollectiveSummary>& collective_summary() const { return collective_kinds_; }
  void set_collective_list_limit(std::size_t n) { collective_list_limit_ = n; }
  /// Data-mode mismatches found by this NPU (empty when all collectives checked out).
  const std::vector<std::string>& data_errors() const { return data_errors_; }
  void clear_data_errors() { data_errors_.clear(); }
  std::uint64_t unmatched_messages() const;
  /// The first message sent to this NPU that no receive took, as "NPU p
  /// (node n) sent B bytes to NPU r with tag t"; "" if none.
  std::string describe_unreceived() const;
  /// A receive that waits for a peer which sent this NPU a message under
  /// another tag (the traces disagree), described; "" when there is none.
  std::string describe_tag_mismatch() const;
  /// Operations started and not finished, one line each, for stuck reports.
  std::vector<std::string> describe_unfinished() const;
  std::size_t operations_in_flight() const { return in_flight_; }
  /// Messages this NPU passed on for NPUs it shares no fabric with.
  std::uint64_t messages_relayed() const { return relayed_; }
  void finalize() { activity_.finish(finish_); }

 private:
  // CollectiveEngine::Host
  Message* new_message(int peer, std::uint64_t bytes) override;
  void post(Message* m) override;
  void collective_done(CollectiveRun& run) override;
  InSwitchResolver* in_switch() override { return in_switch_; }

  tlm::tlm_sync_enum nic_bw(int nic, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nic_fw(int nic, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  // Also calendar events: a message the NIC delivered with a delay; an
  // operation's end (a send's last byte left, a stand-in memory access).
  void message_arrived(Message* m);

  enum class OpType { kCompute, kCollective, kSend, kRecv, kMemory };
  struct Pending final : MessageOwner, CollectiveOwner {  // an operation in flight
    explicit Pending(Npu* owner) : npu(owner) {}
    /// A send's message has left: the send ends then.
    void message_left(Message& m, Tick left) override;
    Npu* npu;
    std::uint64_t seq = 0;
    NpuClient* client = nullptr;
    NpuOperation* ctx = nullptr;
    OpType type = OpType::kCompute;
    ActivityTracker::Kind kind = ActivityTracker::kCompute;
    std::string what;
    Tick started = 0;
    OpLabel label;
    std::uint64_t bytes = 0;
    int peer = -1;
  };
  /// `active`: the operation counts as running from now (compute waiting for
  /// its resource does not).
  Pending* begin_op(NpuClient* client, NpuOperation* ctx, OpType type, std::string what, bool active = true);
  void end_op(Pending* p);
  /// A receive and the message it matched: checks they agree on the size.
  void receive_matched(Pending* recv, Message* m, std::int64_t tag);

  // compute resources: index 0 GPU, 1 CPU; each runs one op at a time, in order
  struct ComputeJob {
    Tick compute = 0;             // the arithmetic (or the recorded duration)
    std::uint64_t hbm_bytes = 0;  // moved through the HBM meanwhile
    Pending* op = nullptr;
    OpLabel label;
    std::uint64_t tensor_bytes = 0;
    int cls = -1;  // the kernel class that timed it; -1: a recorded duration
    double flops = 0;
  };
  struct ComputeResource {
    std::deque<ComputeJob> queue;
    Pending* running = nullptr;
    ComputeJob job;      // the one running
    int parts_left = 0;  // the arithmetic and the HBM reads still running
    Tick started = 0;
    Tick busy = 0;
  };
  void compute_part_done(unsigned resource);
  std::array<ClassTime, kKernelClasses + 1> by_class_{};  // the last: recorded durations
  void memory_done(unsigned resource, bool write, tlm::tlm_response_status status) override;
  void run_next(unsigned resource);

  // point-to-point: matched by (peer, tag), first come first served
  struct P2pKey {
    int peer;
    std::int64_t tag;
    bool operator<(const P2pKey& o) const { return peer != o.peer ? peer < o.peer : tag < o.tag; }
  };
  std::map<P2pKey, std::deque<Message*>> unexpected_p2p_;
  // remote memory operations waiting for their answer, by request number
  std::map<std::uint64_t, Pending*> memory_ops_;
  std::uint64_t next_memory_op_ = 0;
  std::uint64_t memory_cursor_ = 0;
  std::map<P2pKey, std::deque<std::pair<std::uint64_t, Pending*>>> posted_recvs_;

  std::vector<ForwardPath<MessageProtocol>> nic_path_;  // per NIC: messages to send
  int rank_;
  Params params_;
  Calendar& calendar_ = Calendar::instance();
  const Directory& directory_;
  InSwitchResolver* in_switch_ = nullptr;
  TimelineSink* timeline_ = nullptr;
  // Most algorithms talk to the same peer round after round.
  int cached_peer_ = -1;
  int cached_hop_ = -1;
  PeerRoute cached_route_;
  Address cached_src_ = kNoAddress;
  CollectiveEngine collectives_;
  ComputeResource compute_[2];
  std::shared_ptr<const ComputeModel> compute_model_;  // GPU kernels
  RooflineModel cpu_model_;                            // CPU nodes with num_ops
  ActivityTracker activity_;
  Tick finish_ = 0;
  std::size_t in_flight_ = 0;
  std::uint64_t relayed_ = 0;
  std::vector<CollectiveRecord> collective_log_;
  std::size_t collective_list_limit_ = ~std::size_t{0};
  std::uint64_t collectives_run_ = 0;
  std::vector<CollectiveSummary> collective_kinds_;  // in the order each kind first ended
  std::map<
      std::tuple<std::string, std::string, int, int, int, std::uint32_t, std::uint8_t, std::uint8_t, std::uint64_t>,
      std::size_t>
      kind_index_;  // name, group, type, algorithm, protocol, channels, NCCL's choice, bytes -> collective_kinds_
  std::vector<std::string> data_errors_;
  std::map<std::uint64_t, std::unique_ptr<Pending>> live_;  // by start order, for stuck reports
  std::uint64_t next_seq_ = 0;
};

}  // namespace fabricsim
