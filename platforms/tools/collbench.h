// The collective sweep users know from nccl-tests: one collective over every
// NPU per size, from min to max bytes, timed from its start to the moment the
// last NPU finishes it; algbw = size / time and busbw = algbw times
// nccl-tests' factor for the collective.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "platforms/assembly/platform.h"

namespace fabricsim {

struct CollbenchOptions {
  CollectiveType type = CollectiveType::kAllReduce;
  bool all_to_all_v = false;               // all-to-all with unequal sizes per pair
  std::optional<AlgorithmKind> algorithm;  // unset: the default choice
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 128u << 20;
  double factor = 2;
  std::uint32_t chunks = 0;  // 0: the platform's
  int root = 0;
  int npus = 0;       // N NPUs take part; 0: all (with a stride: all it reaches)
  int stride = 1;     // NPUs 0, stride, 2 x stride, ... take part (one per node: a rail)
  bool data = false;  // check every result
  DataType dtype = DataType::kFp32;
  ReduceOp op = ReduceOp::kSum;
  bool force = false;  // run past the work bounds (models/npu/work_bounds.h)
  bool why = false;    // print the cost model's estimates behind the default choice
  /// Rows measured at once, each in a process forked after elaboration;
  /// 1: one after the other in this process. Every row starts on the same
  /// buffers either way, so the rows are the same.
  unsigned jobs = 1;
};

/// The sizes a sweep runs, in order (whole elements; whole blocks where the
/// collective splits by rank). Throws InputError for a sweep without end.
std::vector<std::uint64_t> collbench_sizes(const CollbenchOptions& options, int npus);
/// The group a sweep runs over: its NPUs, --stride apart; throws InputError
/// for a --root outside it.
Group collbench_group(const Platform& platform, const CollbenchOptions& options);
/// The sweep's estimated cost (models/npu/work_bounds.h): every row's
/// collective counted from its programs. Throws InputError past the bounds
/// unless options.force.
struct CollbenchWork {
  WorkBounds bounds;
  WorkBounds::Estimate estimate;
  std::string long_run;  // "" or a warning that the sweep is estimated long
};
CollbenchWork check_collbench_work(Platform& platform, const CollbenchOptions& options);

/// The NPUs a sweep runs over.
int collbench_npus(const Platform& platform, const CollbenchOptions& options);

struct CollbenchRow {
  std::uint64_t size_bytes = 0;
  std::uint64_t count = 0;  // elements
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  AlgorithmKind algorithm = AlgorithmKind::kRing;
  CommProtocol protocol = CommProtocol::kPlain;  // NCCL's protocol of its steps, where it has one
  std::vector<AlgorithmKind> levels;             // hierarchical: each level's algorithm, lowest first
  /// The default choice: the cost model's estimate of each algorithm it
  /// weighed, us (empty when an algorithm was named or no cost model ran).
  std::vector<std::pair<AlgorithmKind, double>> estimates_us;
  /// The default choice, where the estimates were too close to tell
  /// (collectives.probe_margin): each candidate's simulated time, us, in the
  /// order simulated; the row is the fastest's. Empty: nothing was probed.
  std::vector<std::pair<AlgorithmKind, double>> probed_us;
  /// Under `collectives.library: nccl`, chosen by default: what NCCL runs
  /// ("NVLS/Simple x16"), every (algorithm, protocol) its tuner weighed with
  /// its modelled time, and why NCCL's own pick did not run, if it did not.
  std::string library;
  std::vector<NcclCandidate> library_us;
  std::string library_note;
  /// With --why under `library: nccl`: the fastest fabricsim offers (the
  /// `best` choice), simulated in a copy, and its time: what a better
  /// library could gain on this row.
  std::string best;
  double best_us = 0;
};

/// nccl-tests' bus-bandwidth factor for n ranks.
double busbw_factor(CollectiveType type, int n);
/// "8", "64K", "128M", "8G" (1024-based, as nccl-tests reads them).
std::uint64_t parse_size(const std::string& text);

/// Runs the sweep on a built platform. Data-mode mismatches are returned in
/// `errors`. Throws InputError for an algorithm that does not apply.
/// `on_row`, if given, hears of each row as soon as it is measured.
std::vector<CollbenchRow> run_collbench(Platform& platform, const CollbenchOptions& options,
                                        std::vector<std::string>& errors,
                                        const std::function<void(const CollbenchRow&)>& on_row = {});

/// The table: its header, then one line per row.
void print_collbench_header(std::ostream& os, const Platform& platform, const CollbenchOptions& options);
void print_collbench_row(std::ostream& os, const CollbenchOptions& options, const CollbenchRow& row);
nlohmann::ordered_json collbench_json(const Platform& platform, const CollbenchOptions& options,
                                      const std::vector<CollbenchRow>& rows);

}  // namespace fabricsim
