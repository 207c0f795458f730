// A simulation run: a built platform, a workload on every NPU, the run loop
// that notices when nothing can progress, and the report.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "platforms/assembly/platform.h"
#include "traces/model/training_job.h"
#include "traces/workload/choice_probe.h"
#include "traces/workload/trace_workload.h"

namespace fabricsim {

/// Exit codes of the fabricsim command.
enum ExitCode {
  kExitOk = 0,
  kExitInternal = 1,
  kExitBadInput = 2,
  kExitStuck = 3,
  kExitDataMismatch = 4,
  kExitSweepIncomplete = 5,  // fabricsim sweep: some points failed or have not run (results.csv says which)
  kExitInterrupted = 130,    // stopped by SIGINT or SIGTERM
};

/// Collectives the report lists one by one, over all NPUs, by default: about
/// 30 MB of JSON (a 256-GPU Megatron step runs two million; listed whole,
/// its report was 700 MB and building it took 4.5 GB).
constexpr std::size_t kListedCollectives = 100000;

struct WorkloadSettings {
  std::string prefix;       // PREFIX.<rank>.et
  std::string comm_groups;  // optional process-group JSON
  bool replay = false;
  bool force = false;  // run work past the bounds (models/npu/work_bounds.h)
  int npus = 0;        // ranks 0..npus-1 run traces, the other NPUs idle; 0: every NPU
  /// Collectives listed one by one per NPU in the report (the rest are in
  /// its per-kind summary); 0: kListedCollectives over all the NPUs.
  std::size_t collectives_listed = 0;
  /// A generated training step (traces/model/) in place of trace files:
  /// each rank's nodes are made as they are read.
  std::shared_ptr<const TrainingJob> job;
};

class Simulation {
 public:
  explicit Simulation(PlatformSpec spec);
  ~Simulation();

  Platform& platform() { return *platform_; }
  GroupTable& groups() { return groups_; }

  /// Opens and indexes every rank's trace; throws InputError (a missing rank
  /// file, a malformed trace, a bad comm-groups file).
  void load_workload(const WorkloadSettings& settings);

  /// What the workload was estimated to take (load_workload reads it all
  /// once and refuses it past the bounds, models/npu/work_bounds.h).
  const WorkBounds::Estimate& estimate() const { return estimate_; }
  const WorkBounds& bounds() const { return bounds_; }
  /// "" or a warning that the run is estimated long.
  const std::string& long_run() const { return long_run_; }

  enum class Outcome { kFinished, kStuck };
  /// Runs to the end. kStuck when work remains that nothing can advance;
  /// stuck_report() then says what each NPU waits for.
  Outcome run();
  const std::vector<std::string>& stuck_report() const { return stuck_; }
  std::vector<std::string> warnings() const;
  /// Data-mode mismatches, one line each.
  std::vector<std::string> data_errors() const;

  Tick end_time() const;
  nlohmann::ordered_json report() const;
  /// The generated training step's report (WorkloadSettings::job): step
  /// time, tokens/s, Megatron's TFLOP/s per GPU, MFU, idle time, exposed
  /// communication by kind, time by kernel class, memory per stage.
  nlohmann::ordered_json step_entry() const;
  /// The console summary: per-NPU figures (their spread for more than 16
  /// NPUs), the `top_links` busiest links, the reduction units.
  void print_summary(std::ostream& os, std::size_t top_links = 5) const;
  /// Shows progress on stderr while run() runs (for terminals).
  void enable_progress();

 private:
  Outcome run_to_end();
  /// Surveys every rank's workload and estimates the run; throws InputError
  /// past the bounds unless forced.
  void estimate_work(std::size_t window);
  std::unique_ptr<Platform> platform_;
  GroupTable groups_;
  WorkloadSettings settings_;
  WorkBounds bounds_;
  WorkBounds::Estimate estimate_;
  std::string long_run_;
  ChoiceProbe probe_;  // before the workloads, which point to it
  std::vector<std::unique_ptr<TraceWorkload>> workloads_;
  void clear_progress();

  std::vector<std::string> stuck_;
  bool ran_ = false;
  bool progress_shown_ = false;
};

}  // namespace fabricsim
