// The trace driver: replays one rank's Chakra execution trace on its NPU,
// which it drives through the NPU's operation interface (Npu::start_compute,
// start_send, start_collective... and NpuClient for completions), so the NPU
// knows nothing of Chakra.
//
// Nodes are streamed from the file and issued when their dependencies (data
// and control) have finished. Only a window of nodes is held in memory,
// running or not (the rank's look-ahead, like a GPU's launch queue); a
// first pass over the file records which node ids exist, so a dependency on
// a node that is not in the file is recognised (counted, reported once, and
// ignored, as real PyTorch traces need) while one that points forward waits.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "models/collectives/algorithm_choice.h"
#include "models/collectives/collective_engine.h"
#include "models/npu/npu.h"
#include "traces/reader/node_source.h"
#include "traces/workload/process_groups.h"

namespace ChakraProtoMsg {
class Node;  // the trace's node as protobuf reads it (traces/reader)
}

namespace fabricsim {

class ChoiceProbe;

struct WorkloadOptions {
  bool replay = false;                     // use recorded durations for compute
  bool model_operators = false;            // time GPU nodes without num_ops from their op and shapes
  unsigned max_collectives_in_flight = 1;  // per NPU; 0 = unlimited
  std::size_t window = 4096;               // nodes held in memory, running ones included (docs/workload.md)
  const CollectiveConfig* collectives = nullptr;
  const PlatformHints* hints = nullptr;
  GroupTable* groups = nullptr;
  /// Per collective type, a Chakra trace prefix run in its place (ASTRA-sim's
  /// custom collectives); null or absent: the collective engine runs it.
  const std::map<CollectiveType, std::string>* custom_collectives = nullptr;
  /// Decides by simulation where the estimate cannot (choice_probe.h); null:
  /// the estimate decides.
  ChoiceProbe* probe = nullptr;
};

/// How the compute nodes of a trace were timed, for the report.
struct ComputeTiming {
  std::uint64_t gpu_modelled = 0;    // timed by the compute model
  std::uint64_t gpu_part_of_op = 0;  // later kernels of a modelled op (its time is on the first)
  std::uint64_t gpu_recorded = 0;    // kept their recorded duration (replay, or nothing to model)
  std::uint64_t gpu_unmodelled = 0;  // of those: no num_ops, and the platform's model times no ops
  std::uint64_t cpu_modelled = 0;    // num_ops at cpu_flops, or npu.compute.host_op_time
  std::uint64_t cpu_recorded = 0;
  std::map<std::string, std::uint64_t> unknown_ops;  // GPU ops the model does not know, with counts
};

/// "c10d::allreduce_", "nccl:all_gather"... -> the collective, for traces
/// whose COMM_COLL_NODEs carry no comm_type.
std::optional<CollectiveType> collective_from_op_name(const std::string& name);

/// What a rank's workload asks of the simulator, read in a pass of its own
/// before the run (TraceWorkload::survey), for the resource estimate.
struct WorkSurvey {
  std::uint64_t operations = 0;                       // nodes read and run, of every kind
  std::map<std::uint64_t, std::uint64_t> send_sizes;  // bytes -> sends of that size
  /// A distinct collective: type, bytes, group id, root.
  using Key = std::tuple<int, std::uint64_t, std::uint32_t, int>;
  struct Calls {
    CollectiveSpec spec;  // as this rank would start it (the default choice's algorithm, no probe)
    std::uint64_t calls = 0;
    std::string first;  // where it is first called ("file: node N (...)"), for messages
  };
  std::map<Key, Calls> collectives;
};

class TraceWorkload final : public NpuClient {
 public:
  /// Indexes the file (first pass); throws traces::TraceError.
  TraceWorkload(Npu& npu, std::string path, int npus, const WorkloadOptions& options);
  /// Reads the nodes `source` gives (a file, or a generator's in-process nodes).
  TraceWorkload(Npu& npu, std::unique_ptr<traces::NodeSource> source, int npus, const WorkloadOptions& options);
  ~TraceWorkload();

  /// Issues the first ready nodes; call at time zero.
  void start();
  /// Reads past the window until a node can be issued; false if none can.
  bool unstick();
  /// Control dependencies that closed a cycle and were dropped.
  std::uint64_t broken_cycles() const { return broken_cycles_; }

  bool finished() const { return done_count_ == node_count_; }
  std::uint64_t nodes_total() const { return node_count_; }
  std::uint64_t nodes_done() const { return done_count_; }
  std::uint64_t missing_dependencies() const { return missing_deps_; }
  std::size_t peak_nodes_held() const { return peak_held_; }
  const ComputeTiming& compute_timing() const { return timing_; }
  /// Nodes of types the simulator does not run (storage, batch, checkpoint,
  /// or newer than it knows), by type: they took no time.
  const std::map<std::string, std::uint64_t>& unrun_types() const { return unrun_types_; }
  const std::string& path() const { return path_; }
  /// Warnings about the trace, each once: (kind, text).
  const std::vector<std::pair<std::string, std::string>>& warnings() const { return warnings_; }
  /// Time when communication of a kind was in flight and no GPU compute
  /// node was (shared equally among the kinds in flight together): the
  /// kind is a node's process-group name up to its first '_' (tp, dp, ep,
  /// cp, pp: the generated steps' names), "p2p" for other sends and
  /// receives, "other" for other collectives.
  const std::map<std::string, Tick>& exposed_by_kind() const { return exposed_by_kind_; }
  /// Reads every node of `source` (a fresh reader of this rank's trace or
  /// generator) and adds what it asks to `out`: its operations, sends and
  /// collectives, each collective as this rank would start it. Defines the
  /// trace's process groups as the run does; throws traces::TraceError for a
  /// node the run would refuse, so bad input is refused before the run.
  void survey(traces::NodeSource& source, WorkSurvey& out);
  /// What each unfinished node waits for, for stuck reports.
  std::vector<std::string> describe_stuck() const;

 private:
  struct Node;
  void operation_done(NpuOperation* op) override;
  std::string where(const NpuOperation* op) const override;
  void read_ahead(bool until_ready);
  /// Takes a node read from its source; `io`: its op's args where the
  /// source holds them structured (NodeSource::structured_io), else nullptr.
  void add(const ChakraProtoMsg::Node& pn, const traces::OpIo* io);
  /// A node's fields, checked (fails naming the node).
  void read_fields(const ChakraProtoMsg::Node& pn, Node& n);
  /// Decides how a compute node is timed: its model's work, or its record.
  void time_compute(const ChakraProtoMsg::Node& pn, const traces::OpIo* io, Node& n);
  void issue_ready();
  bool break_a_cycle();
  /// Starts a ready node; a ModelError comes back naming the node.
  void issue(Node* n);
  void launch(Node* n);
  void start_collective(Node* n);
  /// A collective node's type, group, size and the platform's settings;
  /// fails naming the node.
  CollectiveSpec collective_spec(const Node& n);
  /// Its algorithm, protocol, levels and channels: the default choice, or
  /// the probe's where it decides (a node with a collective key).
  void choose(const Node& n, CollectiveSpec& spec);
  /// Runs the custom collective's trace for this NPU in place of node n.
  void start_custom_collective(Node* n, const std::string& prefix);
  void complete(Node* n);
  /// A GPU compute or communication node starts (+1) or ends (-1).
  void track(const Node& n, int delta);
  void warn(const std::string& key, const std::string& text);
  void define_groups(const ChakraProtoMsg::Node& pn);
  /// "file: node N ("name", TYPE)", the place errors name.
  std::string describe(const Node& n) const;
  void add_group(const std::string& name, const std::vector<std::int64_t>& ranks, std::uint64_t node);
  [[noreturn]] void fail(const Node& n, const std::string& what) const;
  std::int64_t slot(std::uint64_t id) const;

  Npu& npu_;
  std::string path_;
  int npus_;
  WorkloadOptions options_;
  struct Reader;
  std::unique_ptr<Reader> reader_;
  bool eof_ = false;

  // index of the ids in the file (first pass): dense bitmap or sorted list
  bool dense_ = false;
  std::uint64_t min_id_ = 0;
  std::vector<std::uint64_t> sorted_ids_;
  std::vector<bool> present_;
  std::vector<bool> done_;
  std::uint64_t node_count_ = 0;
  std::uint64_t done_count_ = 0;

  std::unordered_map<std::uint64_t, std::unique_ptr<Node>> held_;
  struct Waiter {
    Node* node;
    bool control;  // a ctrl_dep (else a data_dep)
  };
  std::unordered_map<std::uint64_t, std::vector<Waiter>> waiters_;  // dependency id -> nodes waiting on it
  std::deque<Node*> ready_;
  std::deque<Node*> collective_queue_;
  unsigned collectives_running_ = 0;
  std::size_t running_ = 0;
  bool issuing_ = false;                 // inside issue_ready(): nested calls return at once
  bool window_full_of_running_ = false;  // the last read_ahead stopped at a window of running nodes
  std::size_t peak_held_ = 0;
  std::uint64_t read_past_window_ = 0;  // times nothing could run within the window
  std::uint64_t last_read_id_ = 0;
  std::uint64_t missing_deps_ = 0;
  std::uint64_t self_deps_ = 0;
  std::uint64_t broken_cycles_ = 0;
  std::vector<std::pair<std::string, std::string>> warnings_;
  std::map<std::string, int> warned_;
  ComputeTiming timing_;
  std::function<void()> on_finished_;                        // a custom collective's trace: tell the node it stands for
  std::vector<std::unique_ptr<TraceWorkload>> custom_runs_;  // their traces, running or done
  std::map<std::string, std::uint64_t> unrun_types_;
  std::optional<std::int64_t> last_modelled_op_;  // rf_id of the last GPU kernel the model timed
  std::map<std::string, Tick> exposed_by_kind_;
  std::map<std::string, int> comm_running_;  // by kind
  int comm_in_flight_ = 0, gpu_in_flight_ = 0;
  Tick last_tracked_ = 0;
  bool surveying_ = false;  // survey(): warnings wait for the run
};

}  // namespace fabricsim
