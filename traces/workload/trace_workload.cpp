#include "traces/workload/trace_workload.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "models/collectives/algorithm_choice.h"
#include "tlm/util/errors.h"
#include "tlm/util/json_input.h"
#include "traces/reader/et_reader.h"
#include "traces/workload/choice_probe.h"
#include "traces/workload/kernel_work.h"

namespace fabricsim {

namespace {
constexpr std::uint64_t kNoCollectiveKey = ~std::uint64_t{0};  // not the engine's
}  // namespace

using traces::attr_int;
using traces::attr_string;
using traces::TraceError;

// ---- the trace driver ----------------------------------------------------------------

namespace {

/// Sum of num_elem * elem_bytes over tensors written PyTorch-style as
/// [tensor_id, storage_id, offset, num_elem, elem_bytes, 'device'];
/// nullopt when the sum does not fit in 64 bits (a corrupt trace).
std::optional<std::uint64_t> tensor_bytes(const std::string& values) {
  std::uint64_t total = 0;
  std::size_t i = 0;
  while ((i = values.find('[', i)) != std::string::npos) {
    ++i;
    std::int64_t f[5];
    std::size_t j = i;
    bool ok = true;
    for (int k = 0; k < 5 && ok; ++k) {
      while (j < values.size() && values[j] == ' ') ++j;
      std::size_t used = 0;
      try {
        f[k] = std::stoll(values.substr(j, 24), &used);
      } catch (const std::exception&) {
        ok = false;
        break;
      }
      j += used;
      while (j < values.size() && values[j] == ' ') ++j;
      if (j >= values.size() || values[j] != ',') ok = false;
      ++j;
    }
    while (j < values.size() && values[j] == ' ') ++j;
    if (ok && j < values.size() && (values[j] == '\'' || values[j] == '"') && f[3] >= 0 && f[4] > 0) {
      std::uint64_t bytes = 0;
      if (__builtin_mul_overflow(static_cast<std::uint64_t>(f[3]), static_cast<std::uint64_t>(f[4]), &bytes) ||
          __builtin_add_overflow(total, bytes, &total)) {
        return std::nullopt;
      }
    }
  }
  return total;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::optional<CollectiveType> collective_from_op_name(const std::string& name) {
  std::string n = lower(name);
  n.erase(std::remove(n.begin(), n.end(), '_'), n.end());
  // Longest names first: "reducescatter" contains "reduce", "allgather" "gather".
  const std::pair<const char*, CollectiveType> names[] = {
      {"allreduce", CollectiveType::kAllReduce}, {"reducescatter", CollectiveType::kReduceScatter},
      {"allgather", CollectiveType::kAllGather}, {"alltoall", CollectiveType::kAllToAll},
      {"broadcast", CollectiveType::kBroadcast}, {"barrier", CollectiveType::kBarrier},
      {"reduce", CollectiveType::kReduce},       {"gather", CollectiveType::kGather},
      {"scatter", CollectiveType::kScatter}};
  for (const auto& [key, type] : names) {
    if (n.find(key) != std::string::npos) return type;
  }
  return std::nullopt;
}

void TraceWorkload::define_groups(const ChakraProtoMsg::Node& pn) {
  // A group as attributes (pg_name + ranks), or PyTorch's process-group
  // configuration as JSON (a list of {"pg_name", "ranks"}), in an attribute
  // or in the node's inputs.
  const auto name = traces::attr_string(pn, "pg_name");
  const auto ranks = traces::attr_int_list(pn, "ranks");
  if (name && ranks) {
    add_group(*name, *ranks, pn.id());
    return;
  }
  std::string json;
  if (auto v = traces::attr_string(pn, "pg_config")) json = *v;
  if (json.empty() && pn.name().find("process_group:init") != std::string::npos) {
    const std::string& in = pn.inputs().values();
    const auto a = in.find("[{"), b = in.rfind("}]");
    if (a != std::string::npos && b != std::string::npos && b > a) json = in.substr(a, b - a + 2);
  }
  if (json.empty()) return;
  try {
    const auto j = parse_json_strictly(
        json, path_ + ": node " + std::to_string(pn.id()) + " (\"" + pn.name() + "\"): process-group configuration");
    // A list of groups, or an object of them keyed by their names (as some
    // PyTorch versions write it; it was skipped, and the groups' collectives
    // then ran over the wrong ranks or none). Anything else is refused.
    if (!j.is_array() && !j.is_object()) {
      throw TraceError(path_ + ": node " + std::to_string(pn.id()) + " (\"" + pn.name() +
                       "\"): the process-group configuration is " + json_excerpt(j) +
                       ", not a list (or an object) of {\"pg_name\", \"ranks\"}");
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      const auto& g = *it;
      // An entry's name: its pg_name, or in the keyed form its key.
      std::string pg;
      if (g.is_object() && g.contains("pg_name")) {
        pg = g["pg_name"].is_string() ? g["pg_name"].get<std::string>() : json_excerpt(g["pg_name"]);
      } else if (j.is_object()) {
        pg = it.key();
      }
      if (!g.is_object() || pg.empty() || !g.contains("ranks")) {
        warn("pg_entry", "process-group entries without a name or without \"ranks\" define no group (first: node " +
                             std::to_string(pn.id()) + ", " + json_excerpt(g) + ")");
        continue;
      }
      std::vector<std::int64_t> wide;
      try {
        wide = options_.groups->json_ranks(g["ranks"]);
      } catch (const std::runtime_error& e) {
        throw TraceError(path_ + ": node " + std::to_string(pn.id()) + ": process group \"" + pg + "\": " + e.what());
      }
      // "ranks": [] is every rank; its group_size, when given, must say so.
      if (wide.empty() && g.contains("group_size") && g["group_size"].is_number_integer() &&
          g["group_size"].get<std::int64_t>() != npus_) {
        throw TraceError(path_ + ": node " + std::to_string(pn.id()) + ": process group \"" + pg +
                         "\" lists \"ranks\": [] (every rank: " + std::to_string(npus_) +
                         ") but \"group_size\": " + json_excerpt(g["group_size"]));
      }
      add_group(pg, wide, pn.id());
    }
  } catch (const nlohmann::json::exception& e) {
    throw TraceError(path_ + ": node " + std::to_string(pn.id()) + " (\"" + pn.name() +
                     "\"): unreadable process-group configuration: " + e.what());
  }
}

void TraceWorkload::add_group(const std::string& name, const std::vector<std::int64_t>& listed, std::uint64_t node) {
  try {
    // PyTorch writes its default group (and any group of every rank) as
    // "ranks": []: all the ranks of the workload.
    std::vector<std::int64_t> wide = listed;
    if (wide.empty()) {
      for (int r = 0; r < npus_; ++r) wide.push_back(r);
    }
    std::vector<int> ranks = options_.groups->narrow(name, wide);
    if (const Group* g = options_.groups->find(name)) {
      if (g->ranks != ranks)
        throw std::runtime_error("process group \"" + name + "\" is defined with other ranks elsewhere");
      return;  // every rank's trace defines the same groups
    }
    options_.groups->add(name, std::move(ranks));
  } catch (const std::runtime_error& e) {
    throw TraceError(path_ + ": node " + std::to_string(node) + ": " + e.what());
  }
}

struct TraceWorkload::Reader {
  explicit Reader(std::unique_ptr<traces::NodeSource> s) : source(std::move(s)) {}
  std::unique_ptr<traces::NodeSource> source;
  ChakraProtoMsg::Node scratch;
};

/// The fields of a Chakra node the simulator uses.
struct TraceWorkload::Node : NpuOperation {
  std::uint64_t id = 0;
  std::string name;
  int type = 0;
  Tick recorded = 0;  // duration_micros, or the host model's time for a CPU node
  bool has_num_ops = false;
  double num_ops = 0;
  std::uint64_t tensor_size = 0;
  bool is_cpu = false;
  bool use_recorded = true;  // compute: the recorded duration, else `work`
  int recorded_class = -1;   // replay: the kernel class of a recorded GPU op, for the report
  KernelWork work;
  bool has_comm_type = false;
  std::int64_t comm_type = 0;
  std::uint64_t comm_size = 0;
  std::optional<std::int64_t> comm_src;  // absent: the previous rank
  std::optional<std::int64_t> comm_dst;  // absent: the next rank
  std::int64_t comm_tag = 0;
  std::int64_t priority = 0;
  std::int64_t root = 0;
  std::string pg_name;
  /// A collective the engine runs: the group's key for it (group id << 40 |
  /// its sequence in the group), as the choice probe knows it.
  std::uint64_t collective_key = kNoCollectiveKey;
  std::uint32_t deps_left = 0;
  bool issued = false;
};

TraceWorkload::TraceWorkload(Npu& npu, std::string path, int npus, const WorkloadOptions& options)
    : TraceWorkload(npu, std::make_unique<traces::EtFileSource>(std::move(path)), npus, options) {}

TraceWorkload::TraceWorkload(Npu& npu, std::unique_ptr<traces::NodeSource> source, int npus,
                             const WorkloadOptions& options)
    : npu_(npu), path_(source->name()), npus_(npus), options_(options) {
  if (const auto count = source->dense_ids()) {
    // A generator: ids 0 to count-1, each once.
    node_count_ = *count;
    dense_ = true;
    min_id_ = 0;
    present_.assign(node_count_, true);
    done_.assign(node_count_, false);
    reader_ = std::make_unique<Reader>(std::move(source));
    return;
  }
  // First pass: which ids exist.
  source->index(sorted_ids_);
  if (source->lacks_metadata()) {
    warn("metadata", "no GlobalMetadata record (Chakra's writers put one first): the first record is node " +
                         std::to_string(sorted_ids_.empty() ? 0 : sorted_ids_.front()) + ", read as a node");
  }
  node_count_ = sorted_ids_.size();
  std::sort(sorted_ids_.begin(), sorted_ids_.end());
  for (std::size_t i = 1; i < sorted_ids_.size(); ++i) {
    if (sorted_ids_[i] == sorted_ids_[i - 1]) {
      throw TraceError(path_ + ": node id " + std::to_string(sorted_ids_[i]) + " appears more than once");
    }
  }
  if (!sorted_ids_.empty()) {
    min_id_ = sorted_ids_.front();
    // A bitmap over the range when it is small; ids 0 and 2^64-1 make a
    // range that wraps to zero if counted as max - min + 1.
    const std::uint64_t span_minus_one = sorted_ids_.back() - min_id_;
    dense_ = span_minus_one < 4 * node_count_ + 1024;
    const std::uint64_t span = span_minus_one + 1;
    if (dense_) {
      present_.assign(span, false);
      for (auto v : sorted_ids_) present_[v - min_id_] = true;
      std::vector<std::uint64_t>().swap(sorted_ids_);
      done_.assign(span, false);
    } else {
      done_.assign(node_count_, false);
    }
  }
  reader_ = std::make_unique<Reader>(std::move(source));
}

TraceWorkload::~TraceWorkload() = default;

std::int64_t TraceWorkload::slot(std::uint64_t id) const {
  if (dense_) {
    if (id < min_id_ || id - min_id_ >= present_.size() || !present_[id - min_id_]) return -1;
    return static_cast<std::int64_t>(id - min_id_);
  }
  auto it = std::lower_bound(sorted_ids_.begin(), sorted_ids_.end(), id);
  if (it == sorted_ids_.end() || *it != id) return -1;
  return it - sorted_ids_.begin();
}

void TraceWorkload::warn(const std::string& key, const std::string& text) {
  if (surveying_) return;  // the run reads the same nodes and says it then (a group defined further on is not missing)
  if (warned_[key]++ == 0) warnings_.emplace_back(key, path_ + ": " + text);
}

std::string TraceWorkload::describe(const Node& n) const {
  return path_ + ": node " + std::to_string(n.id) + " (\"" + text_excerpt(n.name) + "\", " +
         traces::node_type_name(n.type) + ")";
}

std::string TraceWorkload::where(const NpuOperation* op) const {
  return describe(*static_cast<const Node*>(op));  // every operation this workload starts is a node
}

void TraceWorkload::fail(const Node& n, const std::string& what) const {
  throw TraceError(describe(n) + ": " + what);
}

namespace {
/// What an attribute holds, for a message: "text", "a list", "a number".
std::string attr_kind(const ChakraProtoMsg::AttributeProto& a) {
  using A = ChakraProtoMsg::AttributeProto;
  switch (a.value_case()) {
    case A::kStringVal:
      return "text (\"" + a.string_val().substr(0, 40) + (a.string_val().size() > 40 ? "...\")" : "\")");
    case A::kBytesVal:
      return "bytes";
    case A::VALUE_NOT_SET:
      return "empty";
    default:
      return "a list";
  }
}
}  // namespace

void TraceWorkload::read_fields(const ChakraProtoMsg::Node& pn, Node& n) {
  // A number written as a whole double (1048576.0) is taken; one of another
  // kind (text, a list) or with a fraction is refused, not read as absent (a
  // 1 MiB all-reduce once ran as 0 bytes).
  const auto whole_attr = [&](const char* key) -> std::optional<std::int64_t> {
    const auto* a = traces::find_attr(pn, key);
    if (!a) return std::nullopt;
    using A = ChakraProtoMsg::AttributeProto;
    if (const auto v = attr_int(pn, key)) return v;
    if (a->value_case() == A::kDoubleVal || a->value_case() == A::kFloatVal) {
      const double d = a->value_case() == A::kDoubleVal ? a->double_val() : a->float_val();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) return static_cast<std::int64_t>(d);
      fail(n, std::string(key) + " " + std::to_string(d) + " must be a whole number");
    }
    fail(n, std::string(key) + " is " + attr_kind(*a) + ", not a number");
  };
  n.id = pn.id();
  n.name = pn.name();
  n.type = pn.type();
  n.recorded = static_cast<Tick>(std::min<std::uint64_t>(pn.duration_micros(), kMaxTime / 1000000)) * 1000000ull;
  if (pn.duration_micros() > kMaxTime / 1000000) {
    fail(n, "duration_micros " + std::to_string(pn.duration_micros()) +
                " is past the simulator's time range (at most 2^62 ps, about 53 days)");
  }
  if (auto v = traces::attr_double(pn, "num_ops")) {
    if (!std::isfinite(*v) || *v < 0) fail(n, "num_ops " + std::to_string(*v) + " must be a finite number >= 0");
    n.has_num_ops = true;
    n.num_ops = *v;
  } else if (const auto* a = traces::find_attr(pn, "num_ops")) {
    fail(n, "num_ops is " + attr_kind(*a) + ", not a number");
  }
  // Sizes arrive as int64 (uint64 values past 2^63 too): a negative one is a
  // corrupt trace, not a huge tensor.
  auto size_attr = [&](const char* key) -> std::optional<std::uint64_t> {
    const auto v = whole_attr(key);
    if (!v) return std::nullopt;
    if (*v < 0) fail(n, std::string(key) + " " + std::to_string(*v) + " must be between 0 and 2^63-1 bytes");
    return static_cast<std::uint64_t>(*v);
  };
  if (auto v = size_attr("tensor_size")) n.tensor_size = *v;
  if (auto v = whole_attr("is_cpu_op")) n.is_cpu = *v != 0;
  if (auto v = whole_attr("comm_type")) {
    n.has_comm_type = true;
    n.comm_type = *v;
  }
  if (auto v = size_attr("comm_size")) {
    n.comm_size = *v;
  } else if (n.tensor_size) {
    n.comm_size = n.tensor_size;
  } else if (n.type == ChakraProtoMsg::COMM_COLL_NODE || n.type == ChakraProtoMsg::COMM_SEND_NODE ||
             n.type == ChakraProtoMsg::COMM_RECV_NODE) {
    // Older PyTorch converters give neither: the input tensors tell.
    const auto from_tensors = tensor_bytes(pn.inputs().values());
    if (!from_tensors) fail(n, "its input tensors add up to more than 2^64 bytes (num_elem x elem_bytes)");
    n.comm_size = *from_tensors;
    warn("size:" + std::to_string(n.type),
         std::string(traces::node_type_name(n.type)) + " without comm_size (first: node " + std::to_string(n.id) +
             "): sized from its input tensors (" + std::to_string(n.comm_size) + " bytes)");
  }
  if (n.type == ChakraProtoMsg::COMM_COLL_NODE && !n.has_comm_type) {
    // Older PyTorch converters name the collective instead (c10d::allreduce_).
    if (const auto t = collective_from_op_name(n.name)) {
      n.has_comm_type = true;
      n.comm_type = static_cast<std::int64_t>(*t);
      warn("typename", "COMM_COLL_NODE without comm_type (first: node " + std::to_string(n.id) + ", \"" + n.name +
                           "\"): type taken from the name");
    }
  }
  if (auto v = whole_attr("comm_src")) n.comm_src = *v;
  if (auto v = whole_attr("comm_dst")) n.comm_dst = *v;
  // A peer that is given must be an NPU (as written: 2^64-1 in a uint64
  // field must not be shown as -1).
  const bool sends = n.type == ChakraProtoMsg::COMM_SEND_NODE, receives = n.type == ChakraProtoMsg::COMM_RECV_NODE;
  const char* peer_key = sends ? "comm_dst" : receives ? "comm_src" : nullptr;
  const std::optional<std::int64_t>& peer = sends ? n.comm_dst : n.comm_src;
  if (peer_key && peer && (*peer < 0 || *peer >= npus_)) {
    const auto* a = traces::find_attr(pn, peer_key);
    const bool is_unsigned = a->value_case() == ChakraProtoMsg::AttributeProto::kUint64Val ||
                             a->value_case() == ChakraProtoMsg::AttributeProto::kFixed64Val;
    const std::string written = is_unsigned ? std::to_string(static_cast<std::uint64_t>(*peer)) : std::to_string(*peer);
    fail(n, std::string(peer_key) + " " + written + " is not an NPU of this platform (0 to " +
                std::to_string(npus_ - 1) + ")");
  }
  if (auto v = whole_attr("comm_tag")) n.comm_tag = *v;
  if (auto v = whole_attr("comm_priority")) n.priority = *v;
  if (auto v = whole_attr("root")) n.root = *v;
  if (auto v = attr_string(pn, "pg_name")) n.pg_name = *v;
}

void TraceWorkload::add(const ChakraProtoMsg::Node& pn, const traces::OpIo* io) {
  auto node = std::make_unique<Node>();
  Node& n = *node;
  read_fields(pn, n);
  if (n.type == ChakraProtoMsg::METADATA_NODE) define_groups(pn);
  if (n.type == ChakraProtoMsg::COMP_NODE) time_compute(pn, io, n);
  if (n.type == ChakraProtoMsg::STORAGE_NODE || n.type == ChakraProtoMsg::BATCH_NODE ||
      n.type == ChakraProtoMsg::CHECKPOINT_NODE || !ChakraProtoMsg::NodeType_IsValid(n.type)) {
    // Nothing to model them with: run as no-ops, counted in one warning.
    ++unrun_types_[ChakraProtoMsg::NodeType_IsValid(n.type) ? traces::node_type_name(n.type)
                                                            : "type " + std::to_string(n.type)];
  }

  // Dependencies: data and control alike.
  auto depend = [&](std::uint64_t dep, bool control) {
    if (dep == n.id) {  // real PyTorch traces have them
      ++self_deps_;
      warn("self", "a node that depends on itself is not held back by it (first: node " + std::to_string(n.id) + ")");
      return;
    }
    const std::int64_t s = slot(dep);
    if (s < 0) {
      ++missing_deps_;
      warn("missing", "dependencies on nodes absent from the file are ignored (first: node " + std::to_string(n.id) +
                          " on " + std::to_string(dep) + ")");
      return;
    }
    if (done_[static_cast<std::size_t>(s)]) return;
    waiters_[dep].push_back(Waiter{&n, control});
    ++n.deps_left;
  };
  for (auto d : pn.data_deps()) depend(d, false);
  for (auto d : pn.ctrl_deps()) depend(d, true);

  if (window_full_of_running_ && n.type != ChakraProtoMsg::COMP_NODE && n.type != ChakraProtoMsg::METADATA_NODE) {
    // A compute node would queue behind the running ones anyway; this one
    // might have started earlier had the window been larger.
    warn("window-full", "node " + std::to_string(n.id) + " (" + traces::node_type_name(n.type) +
                            ") was read only when one of " + std::to_string(options_.window) +
                            " running operations finished: more than the window were in flight at once, which may "
                            "delay it and nodes like it");
  }
  window_full_of_running_ = false;
  const std::uint64_t id = n.id;
  last_read_id_ = id;
  const bool ready = n.deps_left == 0;
  held_.emplace(id, std::move(node));
  peak_held_ = std::max(peak_held_, held_.size());
  if (ready) ready_.push_back(held_[id].get());
}

void TraceWorkload::read_ahead(bool until_ready) {
  const std::size_t held_before = held_.size();
  while (!eof_) {
    // Running nodes count: a million independent nodes would otherwise all
    // be issued, and held, at once.
    const bool room = held_.size() < options_.window;
    if (!room && !(until_ready && ready_.empty())) break;
    if (!reader_->source->next(reader_->scratch)) {
      eof_ = true;
      reader_.reset();  // close the file (or free the generator) and its buffers
      break;
    }
    add(reader_->scratch, reader_->source->structured_io());
  }
  if (held_.size() > options_.window && held_.size() > held_before) {
    // Nothing within the window could run: a dependency reaches further
    // ahead in the file than the window (the trace truly needs more).
    ++read_past_window_;
    warn("window", "nothing within the window of " + std::to_string(options_.window) +
                       " nodes could run, so more were read (first: " + std::to_string(held_.size()) +
                       " nodes held, up to node " + std::to_string(last_read_id_) +
                       "): a dependency reaches that far ahead in the file, and memory grows with it");
  }
}

void TraceWorkload::start() {
  read_ahead(false);
  issue_ready();
}

bool TraceWorkload::unstick() {
  window_full_of_running_ = false;  // nothing finished: reading on is not a launch-queue delay
  read_ahead(true);
  while (ready_.empty() && eof_ && break_a_cycle()) {
  }
  if (ready_.empty()) return false;
  issue_ready();
  return true;
}

bool TraceWorkload::break_a_cycle() {
  // Nodes that wait, and what each waits on, among nodes that wait too.
  std::map<std::uint64_t, std::vector<std::pair<std::uint64_t, bool>>> waits_on;
  for (const auto& [dep, list] : waiters_) {
    auto d = held_.find(dep);
    if (d == held_.end() || d->second->issued) continue;
    for (const Waiter& w : list) waits_on[w.node->id].emplace_back(dep, w.control);
  }
  for (auto& [id, deps] : waits_on) std::sort(deps.begin(), deps.end());
  // Depth-first search from the lowest id for a cycle.
  std::map<std::uint64_t, int> state;                                          // 1 on the path, 2 done
  std::vector<std::pair<std::uint64_t, std::pair<std::uint64_t, bool>>> path;  // (node, edge taken)
  std::function<bool(std::uint64_t)> dfs = [&](std::uint64_t u) -> bool {
    state[u] = 1;
    for (const auto& edge : waits_on[u]) {
      path.emplace_back(u, edge);
      const int st = state[edge.first];
      if (st == 1) {
        // The cycle is the path from edge.first back to here: drop its first
        // control dependency.
        std::size_t start = 0;
        while (path[start].first != edge.first) ++start;
        for (std::size_t k = start; k < path.size(); ++k) {
          if (!path[k].second.second) continue;
          const std::uint64_t from = path[k].first, to = path[k].second.first;
          auto& list = waiters_[to];
          for (auto it = list.begin(); it != list.end(); ++it) {
            if (it->node->id == from && it->control) {
              Node* n = it->node;
              list.erase(it);
              ++broken_cycles_;
              warn("cycle", "control dependencies that close a cycle are dropped (first: node " + std::to_string(from) +
                                " on " + std::to_string(to) + ")");
              if (--n->deps_left == 0) ready_.push_back(n);
              return true;
            }
          }
        }
        path.pop_back();
        continue;  // a cycle of data dependencies only: a real deadlock
      }
      if (st == 0 && dfs(edge.first)) return true;
      path.pop_back();
    }
    state[u] = 2;
    return false;
  };
  for (const auto& [id, deps] : waits_on) {
    if (state[id] == 0 && dfs(id)) return true;
  }
  return false;
}

void TraceWorkload::issue_ready() {
  // A node that finishes as it is issued (metadata, a zero-byte operation)
  // completes inside issue() and lands here again: the outer loop takes
  // what it made ready, in the same order, so a run of a million such nodes
  // does not nest a million calls deep.
  if (issuing_) return;
  issuing_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{issuing_};
  while (!ready_.empty()) {
    Node* n = ready_.front();
    ready_.pop_front();
    issue(n);
  }
  // Every held node runs: the next one is read only when one finishes, as
  // behind a launch queue that deep (add() says so if that delays it).
  window_full_of_running_ = !eof_ && running_ >= options_.window;
}

void TraceWorkload::time_compute(const ChakraProtoMsg::Node& pn, const traces::OpIo* io, Node& n) {
  // The op's args: held by the source, or read from the node's text (null
  // where the text is not the converter's).
  std::optional<std::vector<traces::OpArg>> parsed_in, parsed_out;
  const std::vector<traces::OpArg>*in = nullptr, *out = nullptr;
  auto read_args = [&] {
    if (io) {
      in = &io->inputs, out = &io->outputs;
      return;
    }
    parsed_in = traces::parse_op_args(pn.inputs().values(), pn.inputs().shapes());
    parsed_out = traces::parse_op_args(pn.outputs().values(), pn.outputs().shapes());
    if (parsed_in) in = &*parsed_in;
    if (parsed_out) out = &*parsed_out;
  };
  const ComputeParams& compute = npu_.params().compute;
  const bool gpu = !n.is_cpu;
  auto recorded = [&] {
    n.use_recorded = true;
    ++(gpu ? timing_.gpu_recorded : timing_.cpu_recorded);
  };
  if (options_.replay) {
    // Recorded time, reported under the op's class where the model knows
    // the op (docs/compute.md: a trace's measured time per class).
    if (gpu && !n.has_num_ops) {
      const auto schema = traces::attr_string(pn, "op_schema");
      const std::string op = traces::op_name(schema.value_or(""), n.name);
      read_args();
      if (in && out) {
        if (const auto w = traces::kernel_work(op, schema.value_or(""), *in, *out))
          n.recorded_class = static_cast<int>(w->cls);
      }
    }
    return recorded();
  }
  std::optional<KernelWork> work;
  if (gpu && !n.has_num_ops && options_.model_operators) {
    // A kernel of the op the last modelled kernel belonged to (cuDNN's
    // backward runs three): that op's time is already on its first kernel.
    const auto rf = traces::attr_int(pn, "rf_id");
    if (rf && last_modelled_op_ == rf) {
      n.use_recorded = false;
      n.work = KernelWork{};
      ++timing_.gpu_part_of_op;
      return;
    }
    last_modelled_op_.reset();
    const auto schema = traces::attr_string(pn, "op_schema");
    const std::string op = traces::op_name(schema.value_or(""), n.name);
    read_args();
    if (in && out) work = traces::kernel_work(op, schema.value_or(""), *in, *out);
    if (!work) {
      ++timing_.unknown_ops[op.empty() ? "(unnamed)" : op];
      return recorded();
    }
    last_modelled_op_ = rf;
  } else if (gpu && !n.has_num_ops) {
    if (traces::find_attr(pn, "op_schema")) ++timing_.gpu_unmodelled;  // a PyTorch op kernel_classes could time
    return recorded();
  } else if (n.has_num_ops) {
    work = KernelWork{};
    work->flops = n.num_ops;
    work->bytes = static_cast<double>(n.tensor_size);
  } else if (!gpu && compute.host == ComputeParams::Host::kFixed) {
    n.recorded = compute.host_op_time;  // the host model's time stands for the record
    ++timing_.cpu_modelled;
    return;
  } else {
    return recorded();
  }
  n.use_recorded = false;
  n.work = *work;
  ++(gpu ? timing_.gpu_modelled : timing_.cpu_modelled);
}

void TraceWorkload::issue(Node* n) {
  try {
    launch(n);
  } catch (const ModelError& e) {
    // The model refuses what the node asks (a time past the simulator's
    // range, a memory access it cannot make): name the node.
    fail(*n, e.what());
  }
}

namespace {
/// A communication node's kind, for the report: its process group's name up
/// to the first '_' (the generated steps name them tp_*, dp_*, ...).
std::string comm_kind(const std::string& pg_name, bool p2p) {
  if (pg_name.empty()) return p2p ? "p2p" : "other";
  std::string kind = pg_name.substr(0, pg_name.find('_'));
  if (kind == "edp" || kind == "embd") return "dp";  // experts' and the tied embedding's gradients
  if (kind == "ppg") return "pp";                    // a pipeline's scatter/gather
  return kind;
}
}  // namespace

void TraceWorkload::track(const Node& n, int delta) {
  const bool comm = n.type == ChakraProtoMsg::COMM_COLL_NODE || n.type == ChakraProtoMsg::COMM_SEND_NODE ||
                    n.type == ChakraProtoMsg::COMM_RECV_NODE;
  const bool gpu = n.type == ChakraProtoMsg::COMP_NODE && !n.is_cpu;
  if (!comm && !gpu) return;
  const Tick now = now_ticks();
  if (gpu_in_flight_ == 0 && comm_in_flight_ > 0 && now > last_tracked_) {
    const Tick span = now - last_tracked_;
    for (const auto& [kind, count] : comm_running_) {
      if (count > 0) exposed_by_kind_[kind] += span * static_cast<Tick>(count) / static_cast<Tick>(comm_in_flight_);
    }
  }
  last_tracked_ = now;
  if (gpu) {
    gpu_in_flight_ += delta;
  } else {
    comm_running_[comm_kind(n.pg_name, n.type != ChakraProtoMsg::COMM_COLL_NODE)] += delta;
    comm_in_flight_ += delta;
  }
}

void TraceWorkload::launch(Node* n) {
  n->issued = true;
  ++running_;
  track(*n, +1);
  switch (n->type) {
    case ChakraProtoMsg::COMP_NODE: {
      ComputeOp op;
      op.label = OpLabel{static_cast<std::int64_t>(n->id), &n->name};
      op.work = n->work;
      op.recorded = n->recorded;
      op.use_recorded = n->use_recorded;
      op.recorded_class = n->recorded_class;
      op.on_cpu = n->is_cpu;
      npu_.start_compute(op, this, n);
      break;
    }
    case ChakraProtoMsg::COMM_COLL_NODE:
      collective_queue_.push_back(n);
      while (!collective_queue_.empty() &&
             (options_.max_collectives_in_flight == 0 || collectives_running_ < options_.max_collectives_in_flight)) {
        Node* c = collective_queue_.front();
        collective_queue_.pop_front();
        start_collective(c);
      }
      break;
    case ChakraProtoMsg::COMM_SEND_NODE: {
      std::int64_t peer = n->comm_dst.value_or(-1);
      if (!n->comm_dst) {
        peer = (npu_.rank() + 1) % npus_;
        warn("nodst", "COMM_SEND_NODE without comm_dst (first: node " + std::to_string(n->id) +
                          "): sent to the next rank, as documented");
      }
      npu_.start_send(static_cast<int>(peer), n->comm_size, n->comm_tag, this, n,
                      OpLabel{static_cast<std::int64_t>(n->id), &n->name});
      break;
    }
    case ChakraProtoMsg::COMM_RECV_NODE: {
      std::int64_t peer = n->comm_src.value_or(-1);
      if (!n->comm_src) {
        peer = (npu_.rank() + npus_ - 1) % npus_;
        warn("nosrc", "COMM_RECV_NODE without comm_src (first: node " + std::to_string(n->id) +
                          "): received from the previous rank, as documented");
      }
      npu_.start_recv(static_cast<int>(peer), n->comm_size, n->comm_tag, this, n,
                      OpLabel{static_cast<std::int64_t>(n->id), &n->name});
      break;
    }
    case ChakraProtoMsg::MEM_LOAD_NODE:
    case ChakraProtoMsg::MEM_STORE_NODE:
      npu_.start_memory(n->type == ChakraProtoMsg::MEM_STORE_NODE, n->tensor_size,
                        "node " + std::to_string(n->id) + " (\"" + n->name + "\", " + traces::node_type_name(n->type) +
                            ", " + std::to_string(n->tensor_size) + " bytes)",
                        this, n, OpLabel{static_cast<std::int64_t>(n->id), &n->name});
      break;
    case ChakraProtoMsg::METADATA_NODE:
    default:  // types counted in unrun_types_: no time
      complete(n);
  }
}

CollectiveSpec TraceWorkload::collective_spec(const Node& n) {
  if (!n.has_comm_type) fail(n, "COMM_COLL_NODE without a comm_type attribute");
  const auto type = collective_from_chakra(n.comm_type);
  if (!type) fail(n, "unknown comm_type " + std::to_string(n.comm_type));
  const Group* group = &options_.groups->world();
  if (!n.pg_name.empty()) {
    group = options_.groups->find(n.pg_name);
    if (group && group->index_of(npu_.rank()) < 0) {
      fail(n, "this NPU (" + std::to_string(npu_.rank()) + ") is not a member of process group \"" +
                  text_excerpt(n.pg_name) + "\"");
    }
    if (!group) {
      group = &options_.groups->world();
      warn("pg:" + n.pg_name, "process group \"" + text_excerpt(n.pg_name) +
                                  "\" is not defined (give --comm-groups); its collectives run over all NPUs");
    }
  }
  if (n.priority < std::numeric_limits<int>::min() || n.priority > std::numeric_limits<int>::max()) {
    fail(n, "comm_priority " + std::to_string(n.priority) + " is outside -2^31 to 2^31-1");  // would wrap
  }
  if (n.root < 0 || n.root >= static_cast<std::int64_t>(group->ranks.size())) {
    fail(n, "root " + std::to_string(n.root) + " is not a member of the " + std::to_string(group->ranks.size()) +
                "-member group \"" + group->name + "\" (give 0 to " + std::to_string(group->ranks.size() - 1) + ")");
  }
  // comm_size is each NPU's input, as Chakra's writers mean it (ASTRA-sim's
  // generators and reader, the PyTorch converter): an all-gather's output,
  // the collective's size here, is the group's inputs together.
  std::uint64_t bytes = n.comm_size;
  if (*type == CollectiveType::kAllGather &&
      __builtin_mul_overflow(n.comm_size, static_cast<std::uint64_t>(group->ranks.size()), &bytes)) {
    fail(n, "an all-gather of comm_size " + std::to_string(n.comm_size) + " bytes from each of " +
                std::to_string(group->ranks.size()) + " NPUs gathers more than 2^64 bytes");
  }
  CollectiveSpec spec;
  spec.type = *type;
  spec.bytes = bytes;
  spec.group = group;
  spec.root = static_cast<int>(n.root);
  spec.dims = &options_.collectives->dims;
  spec.chunks = options_.collectives->chunks;
  spec.priority = static_cast<int>(n.priority);
  spec.dtype = options_.collectives->dtype;
  spec.op = options_.collectives->op;
  spec.data = options_.collectives->data;
  spec.node_id = n.id;
  spec.name = n.name;
  return spec;
}

void TraceWorkload::choose(const Node& n, CollectiveSpec& spec) {
  const Group& group = *spec.group;
  try {  // the default choice weighs the platform's levels, which may not run
    const bool is_world = group.id == 0;
    const CollectiveChoice choice =
        choose_collective(*options_.collectives, *options_.hints, spec.type, spec.bytes, group.ranks, is_world);
    spec.algorithm = choice.algorithm;
    spec.protocol = choice.protocol;
    spec.dims = choice.dims;
    spec.channels = choice.channels;
    if (choice.nccl) {
      spec.nccl_algorithm = static_cast<std::uint8_t>(choice.nccl->candidates[choice.ran].algorithm);
      spec.nccl_protocol = static_cast<std::uint8_t>(choice.nccl->candidates[choice.ran].protocol);
    }
    if (!choice.nccl && n.collective_key != kNoCollectiveKey && options_.probe &&
        options_.collectives->probe_margin > 0 && chosen_by_default(*options_.collectives, spec.type, group.ranks)) {
      spec.algorithm = options_.probe->choose(
          n.collective_key, group,
          [&] {
            return ChoiceProbe::Shape::of(spec.type, spec.bytes, spec.root, is_world, group, *options_.collectives,
                                          *options_.hints);
          },
          [&] {
            return probe_candidates(*options_.collectives, spec.type, spec.bytes, group.ranks, is_world,
                                    *options_.hints);
          },
          spec.algorithm);
      if (spec.algorithm != choice.algorithm) {  // the probe took another: its own protocol and levels
        spec.protocol =
            choose_protocol(*options_.collectives, *options_.hints, spec.type, spec.algorithm, spec.bytes, group.ranks);
        spec.dims = spec.algorithm == AlgorithmKind::kHierarchical
                        ? choose_levels(*options_.collectives, *options_.hints, spec.type, spec.bytes)
                        : &options_.collectives->dims;
      }
    }
  } catch (const std::invalid_argument& e) {
    fail(n, e.what());
  }
}

void TraceWorkload::start_collective(Node* n) {
  CollectiveSpec spec = collective_spec(*n);
  if (options_.custom_collectives) {
    if (const auto it = options_.custom_collectives->find(spec.type); it != options_.custom_collectives->end()) {
      ++collectives_running_;
      start_custom_collective(n, it->second);
      return;
    }
  }
  // Every member numbers the group's collectives alike, as the engine
  // does (its agreement checks they are the same calls); a custom
  // collective's own workload shares the numbering.
  n->collective_key = npu_.next_collective_key(spec.group->id);
  choose(*n, spec);
  ++collectives_running_;
  try {
    npu_.start_collective(spec, this, n);
  } catch (const std::invalid_argument& e) {
    fail(*n, e.what());
  }
}

void TraceWorkload::survey(traces::NodeSource& source, WorkSurvey& out) {
  surveying_ = true;
  struct Done {
    bool& flag;
    ~Done() { flag = false; }
  } done{surveying_};
  ChakraProtoMsg::Node pn;
  while (source.next(pn)) {
    Node n;
    read_fields(pn, n);
    ++out.operations;
    switch (n.type) {
      case ChakraProtoMsg::METADATA_NODE:
        define_groups(pn);  // the run defines them again, alike
        break;
      case ChakraProtoMsg::COMM_COLL_NODE: {
        CollectiveSpec spec = collective_spec(n);
        if (options_.custom_collectives) {
          if (const auto it = options_.custom_collectives->find(spec.type); it != options_.custom_collectives->end()) {
            // The custom trace runs in its place, not the engine: its nodes count.
            WorkloadOptions inner = options_;
            inner.custom_collectives = nullptr;
            const std::string path = traces::rank_file(it->second, npu_.rank());
            try {
              TraceWorkload custom(npu_, path, npus_, inner);
              traces::EtFileSource nodes(path);
              custom.survey(nodes, out);
            } catch (const TraceError& e) {
              fail(n, std::string("its custom collective: ") + e.what());
            }
            break;
          }
        }
        const WorkSurvey::Key key{static_cast<int>(spec.type), spec.bytes, spec.group->id, spec.root};
        auto [it, fresh] = out.collectives.try_emplace(key);
        if (fresh) {        // the choice depends on the key alone: made once for every rank's calls
          choose(n, spec);  // no probe here: probe_work counts its candidates
          it->second.spec = spec;
          it->second.first = describe(n);
        }
        ++it->second.calls;
        break;
      }
      case ChakraProtoMsg::COMM_SEND_NODE:
        ++out.send_sizes[n.comm_size];
        break;
      default:
        break;
    }
  }
}

void TraceWorkload::start_custom_collective(Node* n, const std::string& prefix) {
  WorkloadOptions inner = options_;
  inner.custom_collectives = nullptr;  // its own collectives run as the engine runs them
  const std::string path = traces::rank_file(prefix, npu_.rank());
  try {
    custom_runs_.push_back(std::make_unique<TraceWorkload>(npu_, path, npus_, inner));
  } catch (const TraceError& e) {
    fail(*n, std::string("its custom collective: ") + e.what());
  }
  TraceWorkload& run = *custom_runs_.back();
  warn("custom:" + prefix, std::string(to_string(collective_from_chakra(n->comm_type).value())) +
                               " runs the custom collective " + prefix + " (first: node " + std::to_string(n->id) +
                               "; its sizes are the trace's, not comm_size)");
  run.on_finished_ = [this, n, r = &run] {
    for (const auto& [key, text] : r->warnings_) warn(key, text);
    operation_done(n);
  };
  run.start();
}

void TraceWorkload::operation_done(NpuOperation* op) {
  Node* n = static_cast<Node*>(op);  // every operation this workload starts is a node
  if (n->type == ChakraProtoMsg::COMM_COLL_NODE) {
    if (options_.probe && n->collective_key != kNoCollectiveKey) options_.probe->member_done(n->collective_key);
    --collectives_running_;
    if (!collective_queue_.empty()) {
      Node* c = collective_queue_.front();
      collective_queue_.pop_front();
      start_collective(c);
    }
  }
  complete(n);
}

void TraceWorkload::complete(Node* n) {
  if (n->issued) track(*n, -1);
  --running_;
  ++done_count_;
  const std::uint64_t id = n->id;
  done_[static_cast<std::size_t>(slot(id))] = true;
  auto w = waiters_.find(id);
  if (w != waiters_.end()) {
    for (const Waiter& child : w->second) {
      if (--child.node->deps_left == 0) ready_.push_back(child.node);
    }
    waiters_.erase(w);
  }
  held_.erase(id);  // n is gone from here on
  if (finished() && on_finished_) {
    const auto told = std::move(on_finished_);
    on_finished_ = nullptr;
    told();  // this run stays alive: its owner keeps it
    return;
  }
  read_ahead(false);
  issue_ready();
}

std::vector<std::string> TraceWorkload::describe_stuck() const {
  std::vector<std::string> out;
  std::vector<const Node*> waiting;
  for (const auto& [id, n] : held_) {
    if (!n->issued) waiting.push_back(n.get());
  }
  std::sort(waiting.begin(), waiting.end(), [](const Node* a, const Node* b) { return a->id < b->id; });
  std::size_t shown = 0;
  for (const Node* n : waiting) {
    if (++shown > 3) break;
    std::ostringstream os;
    os << "node " << n->id << " (\"" << n->name << "\", " << traces::node_type_name(n->type) << ") waits for "
       << n->deps_left << " unfinished dependenc" << (n->deps_left == 1 ? "y" : "ies");
    out.push_back(os.str());
  }
  if (waiting.size() > 3) out.push_back(std::to_string(waiting.size() - 3) + " more nodes wait on dependencies");
  if (!eof_) out.push_back("(" + std::to_string(node_count_ - done_count_ - held_.size()) + " nodes not yet read)");
  return out;
}

}  // namespace fabricsim
