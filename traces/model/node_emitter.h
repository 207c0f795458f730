// What the model generators share: Chakra nodes made as they are read, in
// counting mode or for real (a first pass counts them, so the reader gets
// dense ids without a pass over nodes it would keep), GPU ops written with
// their tensors as PyTorch's converter writes them, and collectives,
// sends and receives on named process groups, and the step's program: the
// groups' metadata, then the rank's schedule units, then the step's end,
// once per training step. A generator (a transformer's RankNodes, a
// ResNet's) derives and says what a unit and a step's end make.
#pragma once

#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "traces/generator/et_writer.h"
#include "traces/model/training_job.h"
#include "traces/reader/node_source.h"

namespace fabricsim::model_nodes {

constexpr std::uint64_t kNone = ~std::uint64_t{0};

struct Tensor {
  std::vector<std::int64_t> shape;
  std::uint32_t element_bytes = 2;
  std::int64_t id = 0;
  double elements() const {
    double e = 1;
    for (auto d : shape) e *= static_cast<double>(d);
    return e;
  }
  double bytes() const { return elements() * element_bytes; }
};

/// An op's argument: a tensor, a list of tensors, or a scalar as written.
struct Arg {
  std::vector<Tensor> tensors;
  bool list = false;
  std::string scalar;
  static Arg of(const Tensor& t) { return Arg{{t}, false, ""}; }
  static Arg value(std::string s) { return Arg{{}, false, std::move(s)}; }
};

/// An op's inputs or outputs as the converter writes them: values, shapes
/// and types, tensors as [id, storage, offset, elements, element size, device].
void write_io(ChakraProtoMsg::IOInfo* io, const std::vector<Arg>& args);
/// The same args as parse_op_args reads them back from that text.
std::vector<traces::OpArg> op_args(const std::vector<Arg>& args);

class NodeEmitter : public traces::NodeSource {
 public:
  const std::string& name() const override { return name_; }
  std::optional<std::uint64_t> dense_ids() const override { return count_; }
  void index(std::vector<std::uint64_t>& ids) override {
    for (std::uint64_t i = 0; i < count_; ++i) ids.push_back(i);
  }
  bool next(ChakraProtoMsg::Node& node) override {
    while (out_.empty()) {
      if (!expand_next()) return false;
    }
    node.Swap(&out_.front().node);
    std::swap(io_, out_.front().io);
    has_io_ = out_.front().has_io;
    out_.pop_front();
    return true;
  }
  const traces::OpIo* structured_io() const override { return has_io_ ? &io_ : nullptr; }
  /// Runs through the whole step in counting mode: how many nodes it makes.
  std::uint64_t count_all() {
    while (expand_next()) {
    }
    return next_id_;
  }

 protected:
  /// Rank `rank` of `job`: its name, element size, process groups (by kind:
  /// tp, dp, ...) and its pipeline stage's schedule.
  NodeEmitter(const TrainingJob& job, int rank, OpIoForm form, bool count_only, std::uint64_t count)
      : form_(form),
        count_only_(count_only),
        count_(count),
        name_("model " + (job.name().empty() ? std::string("job") : job.name()) + ", rank " + std::to_string(rank)),
        eb_(job.training().element_bytes()),
        units_(job.schedule(job.coords(rank).p)),
        steps_(job.training().steps) {
    for (const auto& [group, ranks] : job.groups_of(rank)) {
      group_[group.substr(0, group.find('_'))] = group;
      group_ranks_[group] = ranks;
    }
  }

  /// What a schedule unit (a chunk's forward or backward of a microbatch)
  /// and the end of a step (gradients, optimizer) make.
  virtual void run_unit(const TrainingJob::Unit& u) = 0;
  virtual void end_of_step() = 0;

  /// Makes the next few nodes (into out_); false when every step is over.
  bool expand_next() {
    if (!started_) {
      started_ = true;
      for (const auto& [group, ranks] : group_ranks_) metadata_group(group, ranks);
      return true;
    }
    if (step_ >= static_cast<int>(steps_)) return false;
    if (unit_ < units_.size()) {
      run_unit(units_[unit_++]);
      return true;
    }
    end_of_step();
    unit_ = 0;
    ++step_;
    return true;
  }
  bool last_step() const { return step_ + 1 == static_cast<int>(steps_); }

  // ---- emitting nodes ----
  ChakraProtoMsg::Node& begin(ChakraProtoMsg::NodeType type, const std::string& name) {
    if (count_only_) {
      scratch_.Clear();
      return scratch_;
    }
    out_.emplace_back();
    ChakraProtoMsg::Node& n = out_.back().node;
    n.set_id(next_id_);
    n.set_name(name);
    n.set_type(type);
    return n;
  }
  std::uint64_t finish(ChakraProtoMsg::Node& n, const std::vector<std::uint64_t>& deps) {
    if (!count_only_) {
      for (auto d : deps) {
        if (d != kNone) n.add_data_deps(d);
      }
    }
    return next_id_++;
  }

  void metadata_group(const std::string& name, const std::vector<int>& ranks) {
    auto& n = begin(ChakraProtoMsg::METADATA_NODE, "process_group " + name);
    if (!count_only_) {
      traces::add_string(n, "pg_name", name);
      auto* a = n.add_attr();
      a->set_name("ranks");
      for (int r : ranks) a->mutable_int64_list()->add_values(r);
    }
    finish(n, {});
  }

  Tensor tensor(std::vector<std::int64_t> shape, std::uint32_t element_bytes = 0) {
    return Tensor{std::move(shape), element_bytes ? element_bytes : eb_, next_tensor_++};
  }

  /// A GPU op after the one before it (and after what it was told to wait for).
  std::uint64_t compute(const char* op, const char* schema, const std::vector<Arg>& in, const std::vector<Arg>& out) {
    auto& n = begin(ChakraProtoMsg::COMP_NODE, op);
    if (!count_only_) {
      traces::add_string(n, "op_schema", schema ? schema : op);
      traces::add_bool(n, "is_cpu_op", false);
      if (form_ == OpIoForm::kStructured) {
        Emitted& e = out_.back();
        e.io.inputs = op_args(in);
        e.io.outputs = op_args(out);
        e.has_io = true;
      } else if (form_ == OpIoForm::kText) {
        write_io(n.mutable_inputs(), in);
        write_io(n.mutable_outputs(), out);
      }
    }
    std::vector<std::uint64_t> deps = std::move(waits_);
    waits_.clear();
    deps.push_back(last_compute_);
    last_compute_ = finish(n, deps);
    return last_compute_;
  }
  void wait(std::uint64_t id) {
    if (id != kNone) waits_.push_back(id);
  }

  /// A collective on the group of `kind` (tp, dp, ...), after the group's
  /// previous one and `after`; comm_size as Chakra means it (each rank's
  /// input: an all-gather's shard).
  std::uint64_t collective(ChakraProtoMsg::CollectiveCommType type, double bytes, const std::string& kind,
                           std::vector<std::uint64_t> after, const char* what) {
    const auto g = group_.find(kind);
    if (g == group_.end()) return kNone;  // a group of one: nothing to do
    auto& n = begin(ChakraProtoMsg::COMM_COLL_NODE, std::string(kind) + "_" + what);
    if (!count_only_) {
      traces::add_bool(n, "is_cpu_op", false);
      traces::add_int(n, "comm_type", static_cast<std::int64_t>(type));
      traces::add_uint(n, "comm_size", static_cast<std::uint64_t>(std::llround(bytes)));
      traces::add_string(n, "pg_name", g->second);
    }
    std::uint64_t& previous = last_collective_[g->second];
    after.push_back(previous);
    previous = finish(n, after);
    return previous;
  }
  /// A collective the next compute waits for.
  void blocking(ChakraProtoMsg::CollectiveCommType type, double bytes, const std::string& kind, const char* what) {
    wait(collective(type, bytes, kind, {last_compute_}, what));
  }

  std::uint64_t send(int peer, double bytes, std::int64_t tag, const std::string& pg, const char* what) {
    auto& n = begin(ChakraProtoMsg::COMM_SEND_NODE, what);
    if (!count_only_) {
      traces::add_bool(n, "is_cpu_op", false);
      traces::add_int(n, "comm_dst", peer);
      traces::add_int(n, "comm_tag", tag);
      traces::add_uint(n, "comm_size", static_cast<std::uint64_t>(std::llround(bytes)));
      traces::add_string(n, "pg_name", pg);
    }
    return finish(n, {last_compute_});
  }
  std::uint64_t recv(int peer, double bytes, std::int64_t tag, const std::string& pg, const char* what) {
    auto& n = begin(ChakraProtoMsg::COMM_RECV_NODE, what);
    if (!count_only_) {
      traces::add_bool(n, "is_cpu_op", false);
      traces::add_int(n, "comm_src", peer);
      traces::add_int(n, "comm_tag", tag);
      traces::add_uint(n, "comm_size", static_cast<std::uint64_t>(std::llround(bytes)));
      traces::add_string(n, "pg_name", pg);
    }
    return finish(n, {});
  }

  void elementwise(const char* op, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
    std::vector<Arg> i, o;
    for (const auto& t : in) i.push_back(Arg::of(t));
    for (const auto& t : out) o.push_back(Arg::of(t));
    compute(op, nullptr, i, o);
  }

  /// A node made and not yet read, with its op's args where held structured.
  struct Emitted {
    ChakraProtoMsg::Node node;
    traces::OpIo io;
    bool has_io = false;
  };

  OpIoForm form_;
  bool count_only_;
  std::uint64_t count_;
  std::string name_;
  std::uint32_t eb_ = 2;                  // the training dtype's element size
  std::vector<TrainingJob::Unit> units_;  // the rank's stage's schedule
  std::uint32_t steps_;
  bool started_ = false;
  int step_ = 0;                                         // the training step being made
  std::size_t unit_ = 0;                                 // its next unit
  std::map<std::string, std::string> group_;             // kind -> group name
  std::map<std::string, std::vector<int>> group_ranks_;  // group name -> ranks
  std::deque<Emitted> out_;
  traces::OpIo io_;  // the args of the node next() gave last
  bool has_io_ = false;
  ChakraProtoMsg::Node scratch_;
  std::uint64_t next_id_ = 0;
  std::int64_t next_tensor_ = 1;
  std::uint64_t last_compute_ = kNone;
  std::vector<std::uint64_t> waits_;
  std::map<std::string, std::uint64_t> last_collective_;
};

/// Rank `rank`'s nodes from generator `Nodes`: counted once, then made as
/// they are read.
template <class Nodes>
std::unique_ptr<traces::NodeSource> counted_source(const TrainingJob& job, int rank, OpIoForm form) {
  Nodes counter(job, rank, form, true, 0);
  const std::uint64_t count = counter.count_all();
  return std::make_unique<Nodes>(job, rank, form, false, count);
}

}  // namespace fabricsim::model_nodes
