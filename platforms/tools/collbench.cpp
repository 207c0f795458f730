#include "platforms/tools/collbench.h"

#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <system_error>

#include "models/collectives/algorithm_choice.h"
#include "models/collectives/collective_work.h"
#include "platforms/assembly/parameter_catalogue.h"
#include "platforms/assembly/yaml_input.h"
#include "tlm/kernel/calendar.h"
#include "tlm/reduction.h"
#include "tlm/util/errors.h"
#include "tlm/util/simulation_copy.h"

namespace fabricsim {

double busbw_factor(CollectiveType type, int n) {
  const double dn = n;
  switch (type) {
    case CollectiveType::kAllReduce:
      return 2 * (dn - 1) / dn;
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
    case CollectiveType::kAllGather:
    case CollectiveType::kAllToAll:
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
      return (dn - 1) / dn;
    default:
      return 1;
  }
}

namespace {
constexpr int kMaxCollbenchRows = 1000;  // a sweep from 1 byte to 1 PiB at factor 1.035
}  // namespace

std::uint64_t parse_size(const std::string& text) {
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw InputError("\"" + text + "\" is not a size (examples: 8, 64K, 128M, 8G)");
  }
  double mult = 1;
  if (pos < text.size()) {
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(text[pos])));
    if (u == 'K')
      mult = 1024.0;
    else if (u == 'M')
      mult = 1024.0 * 1024;
    else if (u == 'G')
      mult = 1024.0 * 1024 * 1024;
    else if (u == 'T')
      mult = 1024.0 * 1024 * 1024 * 1024;
    else if (u == 'P')
      mult = 1024.0 * 1024 * 1024 * 1024 * 1024;
    else
      throw InputError("\"" + text + "\": unknown size unit (K, M, G, T or P)");
    if (pos + 1 != text.size() &&
        !(pos + 2 == text.size() && std::toupper(static_cast<unsigned char>(text[pos + 1])) == 'B')) {
      throw InputError("\"" + text + "\" is not a size (examples: 8, 64K, 128M, 8G)");
    }
  }
  if (v < 0) throw InputError("\"" + text + "\": a size cannot be negative");
  if (!std::isfinite(v) || v * mult > static_cast<double>(limits::kMaxBytes)) {
    throw InputError("\"" + text + "\": a size must be finite and at most 2^50 bytes (1P)");
  }
  return static_cast<std::uint64_t>(std::llround(v * mult));
}

namespace {

class Bench : public NpuClient {
 public:
  Bench(Platform& p, const Group& world) : platform_(p), world_(world) {}

  void start(const CollectiveSpec& spec) {
    spec_ = spec;
    outstanding_ = static_cast<int>(world_.ranks.size());
    started_ = now_ticks();
    Calendar::instance().schedule<&Bench::start_everywhere>(now_ticks(), this);
  }
  void start_everywhere() {
    for (int r : world_.ranks) platform_.npu(r).start_collective(spec_, this, nullptr);
  }
  void operation_done(NpuOperation*) override {
    if (--outstanding_ == 0) ended_ = now_ticks();
  }
  bool done() const { return outstanding_ == 0; }
  Tick elapsed() const { return ended_ - started_; }

 private:
  Platform& platform_;
  const Group& world_;
  CollectiveSpec spec_;
  int outstanding_ = 0;
  Tick started_ = 0, ended_ = 0;
};

}  // namespace

int collbench_npus(const Platform& platform, const CollbenchOptions& o) {
  if (o.stride < 1 || (o.stride > 1 && o.stride >= platform.npus())) {
    throw InputError("--stride " + std::to_string(o.stride) + ": must be at least 1 and below the platform's " +
                     std::to_string(platform.npus()) + " NPUs");
  }
  const int reachable = (platform.npus() - 1) / o.stride + 1;  // NPUs 0, stride, 2 x stride, ...
  if (o.npus < 0 || o.npus > reachable) {
    throw InputError(
        "--npus " + std::to_string(o.npus) + ": the platform has " + std::to_string(platform.npus()) + " NPUs" +
        (o.stride > 1 ? ", " + std::to_string(reachable) + " of them " + std::to_string(o.stride) + " apart" : ""));
  }
  return o.npus > 0 ? o.npus : reachable;
}

std::vector<std::uint64_t> collbench_sizes(const CollbenchOptions& o, int n) {
  if (!(o.factor > 1) || !std::isfinite(o.factor)) throw InputError("--factor must be a finite number > 1");
  if (o.min_bytes > o.max_bytes) throw InputError("--min-bytes is larger than --max-bytes");
  // Rows grow by the factor (and by at least a byte): bounded, so a factor
  // close to 1 cannot make a sweep without end.
  const double rows_needed =
      std::log(static_cast<double>(o.max_bytes) / std::max<double>(1, static_cast<double>(o.min_bytes))) /
      std::log(o.factor);
  if (rows_needed > kMaxCollbenchRows) {
    throw InputError(
        "--factor " + std::to_string(o.factor) + " makes about " + std::to_string(static_cast<long long>(rows_needed)) +
        " rows from --min-bytes to --max-bytes; at most " + std::to_string(kMaxCollbenchRows) + " are run");
  }
  const unsigned elem = element_bytes(o.dtype);
  std::vector<std::uint64_t> sizes;
  for (double size = static_cast<double>(o.min_bytes); size <= static_cast<double>(o.max_bytes) * (1 + 1e-12);
       size = std::max(size * o.factor, size + 1)) {
    // Whole elements, and whole blocks for the collectives that split by rank.
    std::uint64_t bytes = static_cast<std::uint64_t>(std::llround(size)) / elem * elem;
    const bool blocked = o.type != CollectiveType::kAllReduce && o.type != CollectiveType::kBroadcast &&
                         o.type != CollectiveType::kReduce && o.type != CollectiveType::kBarrier;
    if (blocked) bytes = bytes / (static_cast<std::uint64_t>(n) * elem) * (static_cast<std::uint64_t>(n) * elem);
    if (o.type == CollectiveType::kBarrier) bytes = 0;
    sizes.push_back(bytes);
    if (size >= static_cast<double>(o.max_bytes)) break;
  }
  return sizes;
}

namespace {

/// The collective a row runs: the algorithm asked for, or the default choice
/// (written to `choice` when given).
CollectiveSpec row_spec(const Platform& platform, const CollbenchOptions& o, const Group& world, std::uint64_t bytes,
                        CollectiveChoice* chosen = nullptr) {
  const int n = static_cast<int>(world.ranks.size());
  const auto& config = platform.spec().collectives;
  const unsigned elem = element_bytes(o.dtype);
  CollectiveSpec spec;
  spec.type = o.type;
  spec.bytes = bytes;
  spec.group = &world;
  spec.root = o.root;
  spec.dims = &config.dims;
  CollectiveChoice choice;
  try {  // the default choice weighs the platform's levels, which may not run
    if (o.algorithm) {
      spec.algorithm = *o.algorithm;
      spec.protocol = choose_protocol(config, platform.spec().hints, o.type, spec.algorithm, bytes, world.ranks);
      if (spec.algorithm == AlgorithmKind::kHierarchical) {
        spec.dims = choose_levels(config, platform.spec().hints, o.type, bytes);
      }
    } else {
      choice = choose_collective(config, platform.spec().hints, o.type, bytes, world.ranks, n == platform.npus());
      spec.algorithm = choice.algorithm;
      spec.protocol = choice.protocol;
      spec.dims = choice.dims;
      spec.channels = choice.channels;
    }
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  spec.chunks = o.chunks ? o.chunks : config.chunks;
  spec.dtype = o.dtype;
  spec.op = o.op;
  spec.data = o.data;
  spec.name = std::string(to_string(o.type)) + "_" + std::to_string(bytes);
  if (chosen) *chosen = choice;
  if (o.all_to_all_v) {
    // Pair (i, j) sends between 1/n and all of an even block, in elements.
    const std::uint64_t block = bytes / static_cast<std::uint64_t>(n);
    auto sizes = std::make_shared<std::vector<std::vector<std::uint64_t>>>(n, std::vector<std::uint64_t>(n));
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        const std::uint64_t share = static_cast<std::uint64_t>((i + 2 * j) % n + 1);
        (*sizes)[i][j] = block * share / static_cast<std::uint64_t>(n) / elem * elem;
      }
    }
    spec.sizes = sizes;
  }
  return spec;
}

}  // namespace

Group collbench_group(const Platform& platform, const CollbenchOptions& o) {
  const int n = collbench_npus(platform, o);
  Group world;
  world.id = 0;
  world.name = "world";
  for (int r = 0; r < n; ++r) world.ranks.push_back(r * o.stride);
  if (o.root < 0 || o.root >= n) {
    throw InputError("--root " + std::to_string(o.root) + ": the root is a member of the group, 0 to " +
                     std::to_string(n - 1) +
                     (o.stride > 1 ? " (member k is NPU " + std::to_string(o.stride) + " x k)" : ""));
  }
  return world;
}

CollbenchWork check_collbench_work(Platform& platform, const CollbenchOptions& o) {
  const Group world = collbench_group(platform, o);  // as the sweep runs it: --stride, --root checked
  const int n = static_cast<int>(world.ranks.size());
  const WorkBounds bounds = work_bounds(platform, o.force);
  WorkBounds::Estimate total;
  total.operations = static_cast<double>(n);  // the bench's start and end per row
  for (const std::uint64_t bytes : collbench_sizes(o, n)) {
    const CollectiveSpec spec = row_spec(platform, o, world, bytes);
    const auto& config = platform.spec().collectives;
    try {
      const double data = o.data ? WorkBounds::data_bytes(bytes, static_cast<std::size_t>(n)) : 0;
      total += WorkBounds::collective(collective_work(spec, config, platform.in_switch(), bounds.frames), 1, data);
      if (!o.algorithm) {  // the candidates a row probes, each simulated in a copy
        total += WorkBounds::collective(
            probe_work(spec, config, platform.spec().hints, n == platform.npus(), platform.in_switch(), bounds.frames),
            1);
      }
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
  }
  try {
    const std::string long_run =
        bounds.check(total, "the sweep (" + std::string(to_string(o.type)) + " up to " + std::to_string(o.max_bytes) +
                                " bytes over " + std::to_string(n) + " NPUs)");
    return {bounds, total, long_run};
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
}

namespace {

/// One row: the collective of `bytes` over `world`, on a platform whose
/// memory streams start at their base (so a row does not depend on the
/// rows measured before it in the same simulation).
std::optional<nlohmann::json> probe_row(Platform& platform, const CollbenchOptions& o, const Group& world, Bench& bench,
                                        std::uint64_t bytes);
CollbenchRow row_from_json(const nlohmann::json& j);
[[noreturn]] void rethrow_child_error(const nlohmann::json& error);

nlohmann::json measure_in_one_child(Platform& platform, const CollbenchOptions& o, const Group& world, Bench& bench,
                                    std::uint64_t bytes);
std::string what_ran(const CollbenchRow& row);

/// Under `collectives.library: nccl` with --why: the row as `best` would
/// choose it (fabricsim's fastest by its cost model's estimate alone: where
/// `best` would probe close candidates by simulation this does not), run in
/// a copy of the simulation at the row's start. `same`: best's pick is what
/// NCCL's choice runs, so no copy runs. Empty when neither applies, or the
/// copy could not run.
struct BestInstead {
  std::string name;
  double us = 0;
  bool same = false;
};
BestInstead best_instead(Platform& platform, const CollbenchOptions& o, const Group& world, Bench& bench,
                         std::uint64_t bytes) {
  const auto& spec = platform.spec();
  const bool is_world = static_cast<int>(world.ranks.size()) == platform.npus();
  if (o.algorithm || !o.why || spec.collectives.library != CollectiveLibrary::kNccl || !spec.hints.nccl) return {};
  AlgorithmKind best;
  try {
    best = choose_algorithm(spec.collectives, spec.hints, o.type, bytes, world.ranks, is_world);
    const CollectiveChoice ran = choose_collective(spec.collectives, spec.hints, o.type, bytes, world.ranks, is_world);
    const CommProtocol best_protocol = choose_protocol(spec.collectives, spec.hints, o.type, best, bytes, world.ranks);
    const bool same_levels =
        best != AlgorithmKind::kHierarchical || ran.dims == choose_levels(spec.collectives, spec.hints, o.type, bytes);
    if (ran.algorithm == best && ran.protocol == best_protocol && ran.channels == 0 && same_levels) {
      return {"", 0, true};
    }
  } catch (const std::invalid_argument&) {
    return {};
  }
  CollbenchOptions forced = o;
  forced.algorithm = best;
  try {
    const nlohmann::json result = measure_in_one_child(platform, forced, world, bench, bytes);
    if (result.contains("error")) return {};
    const CollbenchRow row = row_from_json(result.at("row"));
    return {what_ran(row), row.time_us, false};
  } catch (const std::system_error&) {
    return {};
  }
}

CollbenchRow measure_row(Platform& platform, const CollbenchOptions& o, const Group& world, Bench& bench,
                         std::uint64_t bytes, std::vector<std::string>& data_errors) {
  const int n = static_cast<int>(world.ranks.size());
  const BestInstead best = best_instead(platform, o, world, bench, bytes);
  if (!o.algorithm) {
    if (const auto probed = probe_row(platform, o, world, bench, bytes)) {
      CollbenchRow row = row_from_json(probed->at("row"));
      if (platform.spec().rtl.vcd.empty()) {
        for (const auto& e : probed->at("data_errors")) data_errors.push_back(e.get<std::string>());
        return row;
      }
      // The waveform asked for is of the row that runs: the fastest runs
      // again here (the copies wrote none), to the same time.
      CollbenchOptions fastest = o;
      fastest.algorithm = row.algorithm;
      CollbenchRow again = measure_row(platform, fastest, world, bench, bytes, data_errors);
      again.estimates_us = std::move(row.estimates_us);
      again.probed_us = std::move(row.probed_us);
      return again;
    }
  }
  const auto& config = platform.spec().collectives;
  const unsigned elem = element_bytes(o.dtype);
  CollectiveChoice choice;
  const CollectiveSpec spec = row_spec(platform, o, world, bytes, &choice);
  platform.rewind_memory_streams();
  try {
    bench.start(spec);
    sc_core::sc_start();
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  if (auto e = Calendar::instance().take_error()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::invalid_argument& x) {
      throw InputError(x.what());
    }
  }
  if (!bench.done()) {
    // Nothing left to happen, and the collective is not done: say what waits.
    std::string what = "the " + spec.name + " collective can make no progress:";
    for (int r : world.ranks) {
      for (const auto& line : platform.npu(r).describe_unfinished())
        what += "\n  NPU " + std::to_string(r) + ": " + line;
    }
    for (const auto& f : platform.fabrics()) {
      for (const auto& l : f.links) {
        if (l.link->frames_waiting()) what += "\n  " + l.link->describe_waiting();
      }
      for (const auto& u : f.units) {
        for (const auto& line : u->describe_unfinished()) what += "\n  " + line;
      }
      if (f.flow) {
        for (const auto& line : f.flow->describe_unfinished()) what += "\n  " + line;
      }
    }
    throw StuckError(what);
  }
  CollbenchRow row;
  row.size_bytes = bytes;
  row.count = bytes / elem;
  row.algorithm = spec.algorithm;
  row.protocol = spec.protocol;
  if (choice.nccl) {
    row.library = choice.nccl_name();
    row.library_us = choice.nccl->candidates;
    row.library_note = choice.note;
    row.best = best.name;
    row.best_us = best.us;
  }
  if (spec.algorithm == AlgorithmKind::kHierarchical) {
    for (const Dimension& d : *spec.dims) {
      if (d.size > 1) row.levels.push_back(d.algorithm);
    }
  }
  if (!o.algorithm) {
    for (const auto& [a, t] :
         default_estimates(config, o.type, bytes, world.ranks, n == platform.npus(), platform.spec().hints)) {
      row.estimates_us.emplace_back(a, t / 1e6);
    }
  }
  row.time_us = ticks_to_us(bench.elapsed());
  if (best.same) {  // best would run this very row
    row.best = what_ran(row);
    row.best_us = row.time_us;
  }
  std::uint64_t moved = bytes;
  if (o.all_to_all_v) {
    moved = 0;
    for (const auto& r : *spec.sizes) {
      for (auto v : r) moved += v;
    }
    moved /= static_cast<std::uint64_t>(n);  // per rank, like nccl-tests' size
  }
  row.algbw_GBps = row.time_us > 0 ? static_cast<double>(moved) / (row.time_us * 1e3) : 0;
  row.busbw_GBps = row.algbw_GBps * busbw_factor(o.type, n);
  for (int r : world.ranks) {
    for (const auto& err : platform.npu(r).data_errors()) data_errors.push_back(err);
    platform.npu(r).clear_data_errors();  // the next row's are its own
  }
  return row;
}

// ---- rows in processes of their own --------------------------------------------------
// A child forked after elaboration measures one row and writes what it found
// (the row and its data errors, or the error that stopped it) as JSON to an
// unnamed temporary file, which the parent reads when the child has exited.

nlohmann::json row_to_json(const CollbenchRow& r) {
  nlohmann::json j;
  j["size_bytes"] = r.size_bytes;
  j["count"] = r.count;
  j["time_us"] = r.time_us;
  j["algbw_GBps"] = r.algbw_GBps;
  j["busbw_GBps"] = r.busbw_GBps;
  j["algorithm"] = static_cast<int>(r.algorithm);
  j["protocol"] = static_cast<int>(r.protocol);
  auto levels = nlohmann::json::array();
  for (AlgorithmKind a : r.levels) levels.push_back(static_cast<int>(a));
  j["levels"] = std::move(levels);
  auto estimates = nlohmann::json::array();
  for (const auto& [a, t] : r.estimates_us) estimates.push_back({static_cast<int>(a), t});
  j["estimates_us"] = std::move(estimates);
  auto probed = nlohmann::json::array();
  for (const auto& [a, t] : r.probed_us) probed.push_back({static_cast<int>(a), t});
  j["probed_us"] = std::move(probed);
  j["library"] = r.library;
  auto library = nlohmann::json::array();
  for (const auto& c : r.library_us) {
    library.push_back({static_cast<int>(c.algorithm), c.protocol, c.bandwidth, c.latency, c.time_us});
  }
  j["library_us"] = std::move(library);
  j["library_note"] = r.library_note;
  j["best"] = r.best;
  j["best_us"] = r.best_us;
  return j;
}

CollbenchRow row_from_json(const nlohmann::json& j) {
  CollbenchRow r;
  r.size_bytes = j.at("size_bytes").get<std::uint64_t>();
  r.count = j.at("count").get<std::uint64_t>();
  r.time_us = j.at("time_us").get<double>();
  r.algbw_GBps = j.at("algbw_GBps").get<double>();
  r.busbw_GBps = j.at("busbw_GBps").get<double>();
  r.algorithm = static_cast<AlgorithmKind>(j.at("algorithm").get<int>());
  r.protocol = static_cast<CommProtocol>(j.at("protocol").get<int>());
  for (const auto& a : j.at("levels")) r.levels.push_back(static_cast<AlgorithmKind>(a.get<int>()));
  for (const auto& e : j.at("estimates_us")) {
    r.estimates_us.emplace_back(static_cast<AlgorithmKind>(e.at(0).get<int>()), e.at(1).get<double>());
  }
  for (const auto& e : j.at("probed_us")) {
    r.probed_us.emplace_back(static_cast<AlgorithmKind>(e.at(0).get<int>()), e.at(1).get<double>());
  }
  r.library = j.at("library").get<std::string>();
  for (const auto& e : j.at("library_us")) {
    r.library_us.push_back(NcclCandidate{static_cast<NcclAlgorithm>(e.at(0).get<int>()), e.at(1).get<int>(),
                                         e.at(2).get<double>(), e.at(3).get<double>(), e.at(4).get<double>()});
  }
  r.library_note = j.at("library_note").get<std::string>();
  r.best = j.at("best").get<std::string>();
  r.best_us = j.at("best_us").get<double>();
  return r;
}

/// In the child: measures the row, writes the outcome to `out`, and exits
/// without running this process's destructors or flushing its copies of the
/// parent's stdio buffers (they belong to the parent).
/// `probe`: the child is a copy run for the default choice, cut loose from
/// the parent's files (a waveform, the terminal); a row's own process keeps
/// them (its warnings are the row's).
[[noreturn]] void measure_in_child(Platform& platform, const CollbenchOptions& o, const Group& world, Bench& bench,
                                   std::uint64_t bytes, std::FILE* out, pid_t parent, bool probe) {
  int status = 3;
  try {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);          // a parent killed from outside takes its rows with it
    if (::getppid() != parent) ::_exit(status);  // it died before the line above
    if (probe) detach_from_parent_files(::fileno(out));
    Calendar::instance().set_progress_hook(nullptr);
    nlohmann::json result;
    const auto failed = [&](const char* kind, const char* message) {
      result["error"] = {{"kind", kind}, {"message", message}};
    };
    try {
      std::vector<std::string> errors;
      result["row"] = row_to_json(measure_row(platform, o, world, bench, bytes, errors));
      result["data_errors"] = errors;
    } catch (const InputError& e) {
      failed("input", e.what());
    } catch (const std::invalid_argument& e) {
      failed("input", e.what());
    } catch (const ModelError& e) {
      failed("model", e.what());
    } catch (const DataMismatchError& e) {
      failed("data", e.what());
    } catch (const StuckError& e) {
      failed("stuck", e.what());
    } catch (const std::exception& e) {
      failed("internal", e.what());
    }
    const std::string text = result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (std::fwrite(text.data(), 1, text.size(), out) == text.size() && std::fflush(out) == 0) status = 0;
  } catch (...) {
    // Nothing may unwind into the parent's code: the parent reports the status.
  }
  ::_exit(status);
}

[[noreturn]] void rethrow_child_error(const nlohmann::json& error) {
  const std::string kind = error.at("kind").get<std::string>();
  const std::string message = error.at("message").get<std::string>();
  if (kind == "input") throw InputError(message);
  if (kind == "model") throw ModelError(message);
  if (kind == "data") throw DataMismatchError(message);
  if (kind == "stuck") throw StuckError(message);
  throw std::runtime_error(message);
}

struct Child {
  pid_t pid = -1;
  std::size_t index = 0;  // into the sizes
  std::FILE* out = nullptr;
};

/// Kills and reaps the children still running when the sweep ends early
/// (an error in a row, or an exception in the parent).
struct ChildReaper {
  std::vector<Child> running;
  ~ChildReaper() {
    for (const Child& c : running) {
      ::kill(c.pid, SIGKILL);
      int status = 0;
      while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
      }
      std::fclose(c.out);
    }
  }
};

std::vector<CollbenchRow> run_rows_in_children(Platform& platform, const CollbenchOptions& o, const Group& world,
                                               Bench& bench, const std::vector<std::uint64_t>& sizes, unsigned jobs,
                                               std::vector<std::string>& errors,
                                               const std::function<void(const CollbenchRow&)>& on_row) {
  // The largest size starts first (it takes longest; the others fill the
  // remaining processes in order), so rows still appear smallest first.
  std::vector<std::size_t> order;
  order.push_back(sizes.size() - 1);
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) order.push_back(i);

  std::vector<std::optional<nlohmann::json>> results(sizes.size());
  std::vector<CollbenchRow> rows;
  ChildReaper children;
  children.running.reserve(jobs);  // no allocation between a fork and the record of its child
  std::signal(SIGCHLD, SIG_DFL);   // an inherited SIG_IGN would reap the children before waitpid
  const pid_t parent = ::getpid();
  std::size_t launched = 0;
  while (rows.size() < sizes.size()) {
    while (children.running.size() < jobs && launched < order.size()) {
      Child c;
      c.index = order[launched];
      c.out = std::tmpfile();
      if (!c.out) throw std::runtime_error(std::string("collbench: a temporary file: ") + std::strerror(errno));
      std::cout.flush();  // a child would otherwise inherit rows not yet written
      std::cerr.flush();
      std::fflush(nullptr);
      c.pid = ::fork();
      if (c.pid < 0) {
        std::fclose(c.out);
        throw std::runtime_error(std::string("collbench: fork: ") + std::strerror(errno));
      }
      if (c.pid == 0) measure_in_child(platform, o, world, bench, sizes[c.index], c.out, parent, false);
      children.running.push_back(c);
      ++launched;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("collbench: waitpid: ") + std::strerror(errno));
    }
    const auto it =
        std::find_if(children.running.begin(), children.running.end(), [pid](const Child& c) { return c.pid == pid; });
    if (it == children.running.end()) continue;  // not one of ours
    const Child c = *it;
    children.running.erase(it);
    std::string text;
    std::rewind(c.out);
    char buffer[65536];
    for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, c.out)) > 0;) text.append(buffer, got);
    std::fclose(c.out);
    // A process that ended without its row is that row's error, reported in
    // its turn, as it would have been one row at a time.
    const std::string row_name = "the " + std::to_string(sizes[c.index]) + "-byte row's process";
    nlohmann::json result;
    if (WIFSIGNALED(status)) {
      result["error"] = {{"kind", "internal"},
                         {"message", row_name + " ended with signal " + std::to_string(WTERMSIG(status)) + " (" +
                                         strsignal(WTERMSIG(status)) + ")"}};
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty()) {
      result["error"] = {
          {"kind", "internal"},
          {"message", row_name + " exited with status " + std::to_string(WEXITSTATUS(status)) + " without its row"}};
    } else {
      result = nlohmann::json::parse(text);
    }
    results[c.index] = std::move(result);
    // Rows in order of size, each as soon as the rows before it are in.
    while (rows.size() < sizes.size() && results[rows.size()]) {
      const nlohmann::json& done = *results[rows.size()];
      if (done.contains("error")) rethrow_child_error(done.at("error"));
      for (const auto& e : done.at("data_errors")) errors.push_back(e.get<std::string>());
      rows.push_back(row_from_json(done.at("row")));
      if (on_row) on_row(rows.back());
    }
  }
  return rows;
}

/// One row measured in a child forked here, as measure_in_child reports it.
nlohmann::json measure_in_one_child(Platform& platform, const CollbenchOptions& o, const Group& world, Bench& bench,
                                    std::uint64_t bytes) {
  ChildReaper children;  // kills the child if this process is interrupted by an exception
  children.running.reserve(1);
  std::signal(SIGCHLD, SIG_DFL);
  Child c;
  c.out = std::tmpfile();
  if (!c.out) throw std::system_error(errno, std::generic_category(), "a temporary file");
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  c.pid = ::fork();
  if (c.pid < 0) {
    const int error = errno;
    std::fclose(c.out);
    throw std::system_error(error, std::generic_category(), "fork");
  }
  if (c.pid == 0) measure_in_child(platform, o, world, bench, bytes, c.out, parent, true);
  children.running.push_back(c);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("collbench: waitpid: ") + std::strerror(errno));
  }
  children.running.clear();
  std::string text;
  std::rewind(c.out);
  char buffer[65536];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, c.out)) > 0;) text.append(buffer, got);
  std::fclose(c.out);
  // A process that ended without its row is that candidate's error, weighed
  // as the others are (probe_row).
  const std::string name = "the " + std::to_string(bytes) + "-byte " + to_string(*o.algorithm) + " probe's process";
  if (WIFSIGNALED(status)) {
    return {{"error",
             {{"kind", "internal"},
              {"message", name + " ended with signal " + std::to_string(WTERMSIG(status)) + " (" +
                              strsignal(WTERMSIG(status)) + ")"}}}};
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty()) {
    return {{"error",
             {{"kind", "internal"},
              {"message", name + " exited with status " + std::to_string(WEXITSTATUS(status)) + " without its row"}}}};
  }
  return nlohmann::json::parse(text);
}

/// The default choice where the cost model cannot tell its candidates apart
/// (probe_candidates): each candidate runs in a process of its own, a copy
/// of this one at the row's start, and the fastest's outcome is the row's
/// (its row with the estimates and every candidate's time added, and its
/// data errors). nullopt: nothing to probe; the estimate decides.
std::optional<nlohmann::json> probe_row(Platform& platform, const CollbenchOptions& o, const Group& world, Bench& bench,
                                        std::uint64_t bytes) {
  const int n = static_cast<int>(world.ranks.size());
  const auto& config = platform.spec().collectives;
  const bool is_world = n == platform.npus();
  const auto candidates = probe_candidates(config, o.type, bytes, world.ranks, is_world, platform.spec().hints);
  if (candidates.empty()) return std::nullopt;
  std::optional<nlohmann::json> best;
  auto probed = nlohmann::json::array();
  for (const AlgorithmKind a : candidates) {
    CollbenchOptions forced = o;
    forced.algorithm = a;
    nlohmann::json result;
    try {
      result = measure_in_one_child(platform, forced, world, bench, bytes);
    } catch (const std::system_error& e) {
      // No copy to run it in: the candidates measured so far decide, else
      // the estimate.
      std::cerr << "warning: the " << bytes << "-byte row's default choice: simulating " << to_string(a) << ": "
                << e.what() << "; choosing among what ran\n";
      break;
    }
    if (result.contains("error")) {
      // A candidate that fails (one the estimate weighed that does not run
      // here, a model error or a crash in an algorithm the user did not ask
      // for) is passed over; the row is the fastest of the others. Only the
      // estimate's own choice failing other than as not running here is the
      // row's error, as it would have been unprobed.
      if (a == candidates.front() && result["error"].at("kind") != "input") rethrow_child_error(result["error"]);
      continue;
    }
    const double t = result["row"].at("time_us").get<double>();
    probed.push_back({static_cast<int>(a), t});
    if (!best || t < (*best)["row"].at("time_us").get<double>()) best = std::move(result);
  }
  if (!best) return std::nullopt;  // none ran: the estimate's choice reports why
  auto estimates = nlohmann::json::array();
  for (const auto& [a, t] : default_estimates(config, o.type, bytes, world.ranks, is_world, platform.spec().hints)) {
    estimates.push_back({static_cast<int>(a), t / 1e6});
  }
  (*best)["row"]["estimates_us"] = std::move(estimates);
  (*best)["row"]["probed_us"] = std::move(probed);
  return best;
}

}  // namespace

std::vector<CollbenchRow> run_collbench(Platform& platform, const CollbenchOptions& o, std::vector<std::string>& errors,
                                        const std::function<void(const CollbenchRow&)>& on_row) {
  const int n = collbench_npus(platform, o);
  const std::vector<std::uint64_t> sizes = collbench_sizes(o, n);
  const Group world = collbench_group(platform, o);

  Bench bench(platform, world);
  std::vector<CollbenchRow> rows;
  const unsigned jobs = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, o.jobs), sizes.size()));
  if (jobs > 1) {
    rows = run_rows_in_children(platform, o, world, bench, sizes, jobs, errors, on_row);
  } else {
    for (const std::uint64_t bytes : sizes) {
      rows.push_back(measure_row(platform, o, world, bench, bytes, errors));
      if (on_row) on_row(rows.back());
    }
  }
  for (int r = 0; r < platform.npus(); ++r) platform.npu(r).finalize();
  return rows;
}

namespace {
/// Each level's algorithm, lowest first, for a hierarchical collective.
std::vector<std::string> level_names(const CollbenchRow& row) {
  std::vector<std::string> names;
  for (AlgorithmKind a : row.levels) names.push_back(to_string(a));
  return names;
}

/// What ran: a hierarchical collective names each level's algorithm
/// ("hierarchical(in_switch,double_binary_tree)"), a point-to-point one its
/// protocol ("ring/ll128"), a hierarchical one of point-to-point levels both
/// ("hierarchical(ring,ring)/simple").
std::string what_ran(const CollbenchRow& row) {
  std::string text = to_string(row.algorithm);
  if (row.algorithm == AlgorithmKind::kHierarchical) {
    const char* sep = "(";
    for (const std::string& name : level_names(row)) {
      text += sep;
      text += name;
      sep = ",";
    }
    text += ")";
  }
  if (row.protocol != CommProtocol::kPlain) text += "/" + std::string(to_string(row.protocol));
  return text;
}
}  // namespace

namespace {
// "hierarchical(in_switch,double_binary_tree)"; a longer name (levels and a
// protocol) keeps one space before it.
constexpr int kAlgoWidth = 44;
}  // namespace

void print_collbench_header(std::ostream& os, const Platform& platform, const CollbenchOptions& o) {
  os << "# fabricsim collbench: " << to_string(o.type) << (o.all_to_all_v ? " (v)" : "") << " on "
     << platform.spec().name << ", " << collbench_npus(platform, o) << " of " << platform.npus() << " NPUs"
     << (o.stride > 1 ? " (every " + std::to_string(o.stride) + "th from 0)" : std::string()) << ", "
     << to_string(o.dtype) << " " << to_string(o.op) << "\n";
  os << "# busbw = algbw * " << std::setprecision(4) << busbw_factor(o.type, collbench_npus(platform, o))
     << " (nccl-tests' factor); times from the collective's start to its end on the last NPU\n";
  os << "#" << std::setw(14) << "size" << std::setw(14) << "count" << std::setw(8) << "type" << std::setw(kAlgoWidth)
     << "algorithm" << std::setw(14) << "time" << std::setw(10) << "algbw" << std::setw(10) << "busbw\n";
  os << "#" << std::setw(14) << "(B)" << std::setw(14) << "(elements)" << std::setw(8) << "" << std::setw(kAlgoWidth)
     << "" << std::setw(14) << "(us)" << std::setw(10) << "(GB/s)" << std::setw(10) << "(GB/s)\n";
}

void print_collbench_row(std::ostream& os, const CollbenchOptions& o, const CollbenchRow& r) {
  const auto flags = os.flags();
  os << std::fixed;
  os << std::setw(15) << r.size_bytes << std::setw(14) << r.count << std::setw(8) << to_string(o.dtype) << ' '
     << std::setw(kAlgoWidth - 1) << what_ran(r) << std::setw(14) << std::setprecision(2) << r.time_us << std::setw(10)
     << r.algbw_GBps << std::setw(10) << r.busbw_GBps << "\n";
  if (o.why && !r.estimates_us.empty()) {
    os << "#   why: the cost model's estimates (us):";
    const char* sep = " ";
    for (const auto& [a, t] : r.estimates_us) {
      os << sep << to_string(a) << " " << std::setprecision(2) << t;
      sep = ", ";
    }
    os << "\n";
  }
  if (o.why && !r.probed_us.empty()) {
    os << "#   why: too close to tell; simulated (us):";
    const char* sep = " ";
    for (const auto& [a, t] : r.probed_us) {
      os << sep << to_string(a) << " " << std::setprecision(2) << t;
      sep = ", ";
    }
    os << "\n";
  }
  if (o.why && !r.library.empty()) {
    os << "#   why: NCCL runs " << r.library << "; its tuner's times (us):";
    const char* sep = " ";
    for (const auto& c : r.library_us) {
      os << sep << to_string(c.algorithm) << "/"
         << (c.protocol == 0   ? "LL"
             : c.protocol == 1 ? "LL128"
                               : "Simple")
         << " " << std::setprecision(2) << c.time_us;
      sep = ", ";
    }
    os << "\n";
    if (!r.library_note.empty()) os << "#   why: " << r.library_note << "\n";
    if (!r.best.empty()) {
      os << "#   why: the fastest fabricsim offers, " << r.best << ", takes " << std::setprecision(2) << r.best_us
         << " us (" << std::setprecision(1) << (r.best_us > 0 ? (r.time_us / r.best_us - 1) * 100 : 0)
         << "% of headroom)\n";
    }
  }
  os.flags(flags);
  os.flush();  // a row as it is measured, also through a pipe
}

nlohmann::ordered_json collbench_json(const Platform& platform, const CollbenchOptions& o,
                                      const std::vector<CollbenchRow>& rows) {
  nlohmann::ordered_json j;
  j["platform"] = platform.spec().name;
  j["npus"] = collbench_npus(platform, o);
  j["stride"] = o.stride;
  j["op"] = std::string(to_string(o.type)) + (o.all_to_all_v ? "_v" : "");
  j["dtype"] = to_string(o.dtype);
  j["busbw_factor"] = busbw_factor(o.type, collbench_npus(platform, o));
  auto list = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    nlohmann::ordered_json e;
    e["size_bytes"] = r.size_bytes;
    e["count"] = r.count;
    e["algorithm"] = to_string(r.algorithm);
    if (r.algorithm == AlgorithmKind::kHierarchical) e["levels"] = level_names(r);  // lowest first
    if (r.protocol != CommProtocol::kPlain) e["protocol"] = to_string(r.protocol);
    if (!r.estimates_us.empty()) {
      nlohmann::ordered_json est;
      for (const auto& [a, t] : r.estimates_us) est[to_string(a)] = t;
      e["estimates_us"] = std::move(est);
    }
    if (!r.probed_us.empty()) {
      nlohmann::ordered_json probed;
      for (const auto& [a, t] : r.probed_us) probed[to_string(a)] = t;
      e["probed_us"] = std::move(probed);
    }
    if (!r.library.empty()) {
      e["nccl"] = r.library;
      nlohmann::ordered_json tuner;
      for (const auto& c : r.library_us) {
        tuner[std::string(to_string(c.algorithm)) + "/" +
              (c.protocol == 0   ? "LL"
               : c.protocol == 1 ? "LL128"
                                 : "Simple")] = c.time_us;
      }
      e["nccl_tuner_us"] = std::move(tuner);
      if (!r.library_note.empty()) e["nccl_note"] = r.library_note;
      if (!r.best.empty()) {
        e["best"] = r.best;
        e["best_us"] = r.best_us;
      }
    }
    e["time_us"] = r.time_us;
    e["algbw_GBps"] = r.algbw_GBps;
    e["busbw_GBps"] = r.busbw_GBps;
    list.push_back(std::move(e));
  }
  j["rows"] = std::move(list);
  j["parameters"] = resolved_parameters(platform.spec());
  return j;
}

}  // namespace fabricsim
