// The fabricsim command.
//
//   fabricsim run --platform FILE --workload PREFIX [--report FILE.json] ...
//   fabricsim gen collective --npus N --type all_reduce --bytes S --out PREFIX
//
// Exit codes: 0 done; 2 bad input (platform, trace, flags); 3 the simulation
// could make no progress (the report says what is stuck); 4 a data-mode check
// failed; 1 an internal error.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <systemc>
#include <tuple>

#include "build_commit.h"  // FABRICSIM_COMMIT, read at build time
#include "models/collectives/collective.h"
#include "platforms/assembly/loader.h"
#include "platforms/assembly/parameter_catalogue.h"
#include "platforms/assembly/reduction_models.h"
#include "platforms/assembly/yaml_input.h"
#include "platforms/importers/astra_system.h"
#include "platforms/run/perfetto_timeline.h"
#include "platforms/run/simulation.h"
#include "platforms/run/training_loader.h"
#include "platforms/tools/calibrate.h"
#include "platforms/tools/collbench.h"
#include "platforms/tools/sweep.h"
#include "tlm/kernel/calendar.h"
#include "tlm/reduction.h"
#include "tlm/util/errors.h"
#include "tlm/util/input_file.h"
#include "tlm/util/interrupt_cleanup.h"
#include "tlm/util/output_file.h"
#include "tlm/util/simulation_copy.h"
#include "traces/generator/et_writer.h"
#include "traces/generator/generators.h"
#include "traces/reader/et_reader.h"

using namespace fabricsim;

namespace {

/// A file or prefix option: an empty value would write beside nothing the
/// user named (".0.et", or no report at all, silently).
const CLI::Validator kPath([](std::string& text) -> std::string { return text.empty() ? "an empty path" : ""; }, "PATH",
                           "path");

const char* const kForceHelp = "Run work estimated past 2 hours of wall time, or past the memory this process may use";

/// Names and labels come from user files: bytes that are not UTF-8 are
/// written as U+FFFD rather than stopping the report.
/// The command line, for the provenance every JSON output carries.
std::string g_command;

/// What made an output: fabricsim's version and commit, the command, and
/// every input file read whole with its SHA-256.
nlohmann::ordered_json provenance() {
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (const InputRecord& r : inputs_read()) {
    inputs.push_back({{"path", r.path}, {"role", r.what}, {"sha256", r.sha256}, {"bytes", r.bytes}});
  }
  return {{"version", FABRICSIM_VERSION}, {"commit", FABRICSIM_COMMIT}, {"command", g_command}, {"inputs", inputs}};
}

/// The --set flags as overrides of the platform file (`system.KEY=VALUE`
/// ones are the system file's: system_overrides_of).
std::vector<YamlOverride> overrides_of(const std::vector<std::string>& sets) {
  std::vector<YamlOverride> out;
  for (const auto& s : sets) {
    if (s.rfind("system.", 0) == 0) continue;
    YamlOverride o = parse_override(s);
    if (!is_job_override(o)) out.push_back(o);
  }
  return out;
}
/// The training job's overrides (model.KEY, training.KEY); with no --model
/// they are refused, not ignored.
std::vector<YamlOverride> job_overrides_of(const std::vector<std::string>& sets, const std::string& model) {
  std::vector<YamlOverride> out;
  for (const auto& s : sets) {
    if (s.rfind("system.", 0) == 0) continue;
    YamlOverride o = parse_override(s);
    if (!is_job_override(o)) continue;
    if (model.empty()) throw InputError("--set " + s + ": sets a key of the training job, and no --model is given");
    out.push_back(o);
  }
  return out;
}
std::vector<YamlOverride> system_overrides_of(const std::vector<std::string>& sets, const std::string& system) {
  std::vector<YamlOverride> out;
  for (const auto& s : sets) {
    if (s.rfind("system.", 0) != 0) continue;
    YamlOverride o = parse_override(s.substr(7));
    o.scope = "system.";
    if (system.empty())
      throw InputError("--set " + s + ": sets a key of the ASTRA-sim system file, and no --system is given");
    out.push_back(o);
  }
  return out;
}

/// Adds --set to a command that reads a platform file.
void add_set_option(CLI::App* cmd, std::vector<std::string>& sets) {
  cmd->add_option("--set", sets,
                  "PATH=VALUE: set a platform-file value, checked as the file's would be (repeatable; PATH is keys "
                  "from the top with list entries by index, e.g. fabrics.0.link.bandwidth=\"200 GB/s\"; "
                  "system.KEY=VALUE sets a key of the --system file; docs/platforms.md)")
      ->take_all()
      ->allow_extra_args(false);
  // An alias, not a flag of its own: the value is checked where the key is declared.
  cmd->add_option_function<std::string>(
         "--fabric-model", [&sets](const std::string& model) { sets.push_back("fabrics.*.transport.model=" + model); },
         "packet or flow: run every fabric as packets or as flows, the same as --set "
         "fabrics.*.transport.model=MODEL (docs/flow-model.md)")
      ->check(CLI::IsMember({"packet", "flow"}));
}

std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

/// How the models run, for run and collbench: the switch reduction units
/// (TLM or RTL, the RTL's waveform and plusargs) and the protocol checkers.
struct ModelArgs {
  bool check_protocol = false;  // --check-protocol
  std::string model;            // --reduction-model: tlm, rtl or empty (as the platform says)
  std::string vcd;
  std::string vcd_window;
  std::vector<std::string> plusargs;
};

struct RunArgs {
  std::string platform;
  std::vector<std::string> sets;  // --set PATH=VALUE
  std::string workload;
  std::string model;  // --model: a generated training step in place of --workload
  std::string report;
  std::string comm_groups;
  std::string system;
  std::string remote_memory;
  bool replay = false;
  bool force = false;
  bool estimate = false;  // print the resource estimate and stop
  bool quiet = false;
  bool data = false;
  int npus = 0;
  std::optional<std::uint32_t> chunks;
  std::vector<std::string> algorithms;  // TYPE=ALGO
  std::string levels;                   // hierarchical: ALGO,ALGO,... per level
  std::string scheduler;                // hierarchical: baseline or themis
  std::string timeline;
  std::string timeline_npus;
  std::string timeline_window;
  bool timeline_links = false;
  std::size_t report_collectives = 0;  // per NPU; 0: the default share
  ModelArgs models;
};

/// --reduction-model, --vcd and --rtl-plusarg: every switch reduction
/// unit's model, where RTL units dump their waveforms, what their RTL reads.
void apply_model_options(const ModelArgs& a, PlatformSpec& spec) {
  spec.protocol_checks = a.check_protocol;
  const std::string& model = a.model;
  const std::string& vcd = a.vcd;
  const std::string& window = a.vcd_window;
  if (!model.empty()) {
    ReductionSpec probe;
    if (!set_reduction_model(probe, model)) {
      std::string known;
      for (const auto& name : reduction_model_names()) known += (known.empty() ? "" : ", ") + name;
      throw InputError("--reduction-model " + model + ": use one of " + known);
    }
    bool any = false;
    for (auto& f : spec.fabrics) {
      for (auto& n : f.nodes) {
        if (!n.reduction) continue;
        any = true;
        set_reduction_model(*n.reduction, model);
      }
    }
    if (!any) throw InputError("--reduction-model " + model + ": the platform's switches have no reduction units");
  }
  spec.rtl.vcd = vcd;
  if (!window.empty()) {
    if (vcd.empty()) throw InputError("--vcd-window needs --vcd FILE");
    std::tie(spec.rtl.vcd_from, spec.rtl.vcd_to) = Timeline::parse_window(window, "--vcd-window");
  }
  if (!vcd.empty()) {
    bool rtl = false;
    for (const auto& f : spec.fabrics) {
      for (const auto& n : f.nodes) rtl |= n.reduction && std::string(reduction_model(*n.reduction).name) == "rtl";
    }
    if (!rtl)
      throw InputError(
          "--vcd " + vcd +
          ": no reduction unit runs the RTL, so there is no waveform to write (use --reduction-model rtl)");
    check_direct_output_path(vcd, "waveform (--vcd)");
  }
  for (const auto& p : a.plusargs) {
    if (p.size() < 2 || p[0] != '+') throw InputError("--rtl-plusarg " + p + ": give +NAME or +NAME=VALUE");
  }
  if (!a.plusargs.empty()) {
    bool rtl = false;
    for (const auto& f : spec.fabrics) {
      for (const auto& n : f.nodes) rtl |= n.reduction && std::string(reduction_model(*n.reduction).name) == "rtl";
    }
    if (!rtl) throw InputError("--rtl-plusarg: no reduction unit runs the RTL (use --reduction-model rtl)");
  }
  spec.rtl.plusargs = a.plusargs;
}

void add_model_options(CLI::App* cmd, ModelArgs& a) {
  cmd->add_flag("--check-protocol", a.check_protocol,
                "A protocol checker on every socket binding (fabric messages and frames, memories' base protocol): "
                "a breach stops the run naming the checker, the rule and the payload (docs/architecture.md)");
  cmd->add_option("--reduction-model", a.model,
                  "Every switch reduction unit as the TLM model (tlm) or the Verilated RTL (rtl)");
  cmd->add_option("--vcd", a.vcd, "RTL reduction units: dump a waveform (one file per unit)")->check(kPath);
  cmd->add_option("--vcd-window", a.vcd_window, "The waveform's time window, START:END (default 0:100us)");
  cmd->add_option("--rtl-plusarg", a.plusargs,
                  "RTL reduction units: a plusarg for the RTL's $value$plusargs, +NAME or +NAME=VALUE (repeatable; "
                  "+fault_lane=N flips a bit of lane N, to see the result check fire)");
}

/// --levels: the algorithm each level (dimension) of a hierarchical
/// collective runs, lowest first.
void apply_levels(const std::string& list, PlatformSpec& spec) {
  if (list.empty()) return;
  auto& dims = spec.collectives.dims;
  std::vector<std::string> names;
  std::string::size_type start = 0;
  for (;;) {
    const auto comma = list.find(',', start);
    names.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (names.size() != dims.size()) {
    throw InputError("--levels " + list + ": names " + std::to_string(names.size()) +
                     " algorithm(s), but the platform has " + std::to_string(dims.size()) +
                     " level(s) of more than one NPU (one per fabric, lowest first)");
  }
  for (std::size_t d = 0; d < names.size(); ++d) {
    const auto algo = algorithm_from_name(names[d]);
    if (!algo || !runs_a_level(*algo) || (*algo == AlgorithmKind::kDoubleBinaryTree && d + 1 != names.size())) {
      throw InputError("--levels " + list + ": \"" + names[d] + "\" for level " + std::to_string(d) +
                       " (a level runs ring, direct, halving_doubling, in_switch, or double_binary_tree as the last)");
    }
    dims[d].algorithm = *algo;
    dims[d].named = true;
  }
}

/// --scheduler: the order a hierarchical all-reduce's chunks take the levels.
void apply_scheduler(const std::string& name, PlatformSpec& spec) {
  if (name.empty()) return;
  if (name == "baseline")
    spec.collectives.dimension_order = LevelOrder::kBaseline;
  else if (name == "themis")
    spec.collectives.dimension_order = LevelOrder::kThemis;
  else
    throw InputError("--scheduler " + name + ": use baseline (levels in ascending order) or themis");
}

void apply_overrides(const RunArgs& a, PlatformSpec& spec) {
  apply_levels(a.levels, spec);
  apply_scheduler(a.scheduler, spec);
  if (a.chunks) {
    if (*a.chunks == 0) throw InputError("--chunks must be >= 1");
    spec.collectives.chunks = *a.chunks;
  }
  for (const std::string& kv : a.algorithms) {
    const auto eq = kv.find('=');
    std::optional<AlgorithmKind> algo = algorithm_from_name(eq == std::string::npos ? kv : kv.substr(eq + 1));
    if (!algo) throw InputError("--algorithm " + kv + ": unknown algorithm");
    if (eq == std::string::npos) {
      for (auto& x : spec.collectives.algorithm) x = *algo;
    } else {
      const auto type = collective_from_name(kv.substr(0, eq));
      if (!type) throw InputError("--algorithm " + kv + ": unknown collective type");
      spec.collectives.algorithm[static_cast<int>(*type)] = *algo;
    }
  }
  spec.collectives.data = a.data;
}

/// Two outputs of one run naming one file: the later would replace the
/// earlier after the whole run.
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  namespace fs = std::filesystem;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      if (outputs[i].second.empty() || outputs[j].second.empty()) continue;
      // Absolute first: weakly_canonical leaves a path that does not exist
      // yet relative ("x.json") but makes "./x.json" absolute.
      std::error_code ec1, ec2;
      const fs::path x = fs::weakly_canonical(fs::absolute(outputs[i].second), ec1).lexically_normal();
      const fs::path y = fs::weakly_canonical(fs::absolute(outputs[j].second), ec2).lexically_normal();
      if (ec1 || ec2 ? outputs[i].second == outputs[j].second : x == y) {
        throw InputError(outputs[i].first + " and " + outputs[j].first + " both name " + outputs[j].second +
                         ": each is written whole, so one would replace the other; give two paths");
      }
    }
  }
}

int run(const RunArgs& a) {
  check_distinct_outputs({{"--report", a.report}, {"--timeline", a.timeline}, {"--vcd", a.models.vcd}});
  PlatformSpec spec = load_platform(a.platform, overrides_of(a.sets));
  std::vector<std::string> notes;
  const auto system_sets = system_overrides_of(a.sets, a.system);
  if (!a.system.empty()) apply_astra_system(a.system, spec, notes, system_sets);
  if (!a.remote_memory.empty()) apply_astra_remote_memory(a.remote_memory, spec, notes);
  apply_overrides(a, spec);
  apply_model_options(a.models, spec);
  for (const auto& n : notes) std::cerr << "note: " << n << "\n";
  std::shared_ptr<const TrainingJob> job;
  if (!a.model.empty()) {
    const int gpus = a.npus ? a.npus : spec.npus;
    job = load_training_job(a.model, job_overrides_of(a.sets, a.model), gpus);
    const std::string memory = check_job_memory(*job, spec);
    if (!a.quiet) std::cerr << "model: " << job->describe() << "\n" << memory;
  } else {
    job_overrides_of(a.sets, "");
  }
  // Never destroyed: the process ends right after, and SystemC unregisters
  // ports one by one in quadratic time (seconds at 100,000 sockets). Kept
  // in a static, so a leak checker sees it as still in use.
  static Simulation* kept_until_exit = nullptr;
  kept_until_exit = new Simulation(std::move(spec));
  Simulation& sim = *kept_until_exit;
  WorkloadSettings ws;
  ws.job = job;
  ws.prefix = a.workload;
  ws.comm_groups = a.comm_groups;
  ws.replay = a.replay;
  ws.force = a.force;
  ws.npus = a.npus;
  ws.collectives_listed = a.report_collectives;
  sim.load_workload(ws);  // refuses work past the bounds, before the run
  if (!a.quiet || a.estimate) std::cerr << "estimate: " << sim.bounds().describe(sim.estimate()) << "\n";
  if (!sim.long_run().empty()) std::cerr << "warning: " << sim.long_run() << "\n";
  if (a.estimate) {
    for (const auto& w : sim.warnings()) std::cerr << "warning: " << w << "\n";
    return kExitOk;
  }
  std::unique_ptr<Timeline> timeline;
  if (!a.timeline.empty()) {
    Timeline::Options to;
    to.path = a.timeline;
    if (!a.timeline_npus.empty()) to.npus = Timeline::parse_npus(a.timeline_npus, sim.platform().npus());
    if (!a.timeline_window.empty()) std::tie(to.from, to.to) = Timeline::parse_window(a.timeline_window);
    to.links = a.timeline_links;
    timeline = std::make_unique<Timeline>(to, sim.platform());
    sim.platform().attach_timeline(timeline.get(), !a.timeline_links ? Platform::TimelineLinks::kNone
                                                   : to.npus.empty() ? Platform::TimelineLinks::kAll
                                                                     : Platform::TimelineLinks::kTouchingRecordedNpus);
  } else if (!a.timeline_npus.empty() || !a.timeline_window.empty() || a.timeline_links) {
    throw InputError("--timeline-npus, --timeline-window and --timeline-links need --timeline FILE");
  }
  if (!a.quiet && isatty(STDERR_FILENO)) sim.enable_progress();
  const auto outcome = sim.run();
  if (timeline) {
    timeline->finish();
    if (!a.quiet) std::cerr << "timeline: " << timeline->events() << " events in " << a.timeline << "\n";
  }
  for (const auto& w : sim.warnings()) std::cerr << "warning: " << w << "\n";
  if (a.models.check_protocol && !a.quiet) {
    const auto checks = sim.platform().protocol_checks();
    std::cerr << "protocol checks: " << checks.checkers << " checkers saw " << checks.transactions << " transactions, "
              << checks.violations << " breaches\n";
  }
  if (!a.quiet) sim.print_summary(std::cout);
  if (!a.report.empty()) {
    auto report = sim.report();
    report["fabricsim"] = provenance();
    write_output_file(a.report, json_text(report), "report");
    std::uint64_t run = 0, listed = 0;
    for (int r = 0; r < sim.platform().npus(); ++r) {
      run += sim.platform().npu(r).collectives_run();
      listed += sim.platform().npu(r).collectives().size();
    }
    if (listed < run && !a.quiet) {
      std::cout << "report: " << listed << " of " << run
                << " collectives listed one by one (the first of each NPU's; --report-collectives N), every one "
                   "counted in its NPU's collective_summary\n";
    }
  }
  if (outcome == Simulation::Outcome::kStuck) {
    std::cerr << "error: the simulation cannot make progress at " << ticks_to_ns(now_ticks()) << " ns; work remains:\n";
    for (const auto& line : sim.stuck_report()) std::cerr << "  " << line << "\n";
    return kExitStuck;
  }
  const auto errors = sim.data_errors();
  if (!errors.empty()) {
    std::cerr << "error: " << errors.size() << " collective result(s) differ from the reference:\n";
    for (const auto& e : errors) std::cerr << "  " << e << "\n";
    return kExitDataMismatch;
  }
  return kExitOk;
}

struct CollbenchArgs {
  std::string platform;
  std::vector<std::string> sets;
  std::string system;
  std::string op = "all_reduce";
  std::string algo;
  std::string min_bytes = "8";
  std::string max_bytes = "128M";
  double factor = 2;
  std::string json;
  std::optional<std::uint32_t> chunks;
  std::string levels;
  std::string scheduler;
  int root = 0;
  bool data = false;
  bool force = false;
  std::string dtype = "fp32";
  std::string redop = "sum";
  int npus = 0;
  int stride = 1;
  bool quiet = false;
  bool why = false;
  int jobs = 0;  // 0: one per CPU
  ModelArgs models;
};

int collbench(const CollbenchArgs& a) {
  if (!a.models.vcd.empty() && a.jobs > 1) {
    throw InputError("--jobs " + std::to_string(a.jobs) +
                     " with --vcd: every row would write the same waveform files; "
                     "leave --jobs out or give --jobs 1");
  }
  PlatformSpec spec = load_platform(a.platform, overrides_of(a.sets));
  std::vector<std::string> notes;
  const auto system_sets = system_overrides_of(a.sets, a.system);
  if (!a.system.empty()) apply_astra_system(a.system, spec, notes, system_sets);
  apply_model_options(a.models, spec);
  apply_levels(a.levels, spec);
  apply_scheduler(a.scheduler, spec);
  for (const auto& n : notes) std::cerr << "note: " << n << "\n";
  CollbenchOptions o;
  const std::string op = a.op;
  if (op == "all_to_all_v" || op == "alltoallv") {
    o.type = CollectiveType::kAllToAll;
    o.all_to_all_v = true;
  } else {
    const auto type = collective_from_name(op);
    if (!type) throw InputError("--op " + op + ": unknown collective");
    o.type = *type;
  }
  if (!a.algo.empty()) {
    const auto algo = algorithm_from_name(a.algo);
    if (!algo) {
      throw InputError(
          "--algo " + a.algo +
          ": unknown algorithm (ring, direct, halving_doubling, double_binary_tree, hierarchical, in_switch, pat)");
    }
    o.algorithm = *algo;
  }
  // Levels are a hierarchical collective's: named, they ask for one (the
  // default choice could otherwise run another algorithm and leave them
  // unused, a row that says "hierarchical" nowhere).
  if (!a.levels.empty()) {
    if (!o.algorithm) {
      o.algorithm = AlgorithmKind::kHierarchical;
    } else if (*o.algorithm != AlgorithmKind::kHierarchical) {
      throw InputError("--levels " + a.levels + ": names the levels of a hierarchical collective, but --algo is " +
                       a.algo + " (leave --algo out, or give --algo hierarchical)");
    }
  }
  o.min_bytes = parse_size(a.min_bytes);
  o.max_bytes = parse_size(a.max_bytes);
  o.factor = a.factor;
  if (a.chunks) {
    if (*a.chunks == 0) throw InputError("--chunks must be >= 1");
    o.chunks = *a.chunks;
  }
  o.root = a.root;
  o.npus = a.npus;
  o.stride = a.stride;
  o.data = a.data;
  o.force = a.force;
  o.why = a.why;
  o.jobs = a.jobs > 0 ? static_cast<unsigned>(a.jobs) : a.models.vcd.empty() ? cpus_available() : 1u;
  if (!parse_data_type(a.dtype, o.dtype)) throw InputError("--dtype " + a.dtype + ": use fp32, fp16, bf16 or int32");
  if (!parse_reduce_op(a.redop, o.op)) throw InputError("--redop " + a.redop + ": use sum, min or max");
  static Platform* kept_until_exit = nullptr;  // never destroyed: see run()
  kept_until_exit = new Platform(std::move(spec));
  Platform& platform = *kept_until_exit;
  for (const auto& note : platform.notes()) std::cerr << "note: " << note << "\n";
  std::vector<std::string> errors;
  const CollbenchWork work = check_collbench_work(platform, o);
  if (!a.quiet) std::cerr << "estimate: " << work.bounds.describe(work.estimate) << "\n";
  if (!work.long_run.empty()) std::cerr << "warning: " << work.long_run << "\n";
  bool header = false;
  // On a terminal, a progress line on stderr while a row is measured (long
  // rows take minutes), cleared before the row is printed.
  const bool progress = !a.quiet && ::isatty(2) && ::isatty(1);
  std::size_t rows_done = 0;
  bool progress_shown = false;
  struct RemoveHook {  // the hook refers to locals: gone when they are, on every path
    ~RemoveHook() { Calendar::instance().set_progress_hook(nullptr); }
  } remove_hook;
  if (progress) {
    const std::size_t total = collbench_sizes(o, collbench_npus(platform, o)).size();
    const auto started = std::chrono::steady_clock::now();
    auto last = started;
    Calendar::instance().set_progress_hook([&, total, started, last]() mutable {
      const auto now = std::chrono::steady_clock::now();
      if (now - last < std::chrono::milliseconds(500)) return;
      last = now;
      std::fprintf(stderr, "\r  measuring row %zu of %zu: %llu events, %.1f s so far\033[K", rows_done + 1, total,
                   static_cast<unsigned long long>(Calendar::instance().events_run()),
                   std::chrono::duration<double>(now - started).count());
      std::fflush(stderr);
      progress_shown = true;
    });
  }
  const auto rows = run_collbench(platform, o, errors, [&](const CollbenchRow& row) {
    ++rows_done;
    if (progress_shown) {
      std::fprintf(stderr, "\r\033[K");
      std::fflush(stderr);
      progress_shown = false;
    }
    if (a.quiet) return;
    if (!header) print_collbench_header(std::cout, platform, o);
    header = true;
    print_collbench_row(std::cout, o, row);
  });
  if (!a.json.empty()) {
    auto j = collbench_json(platform, o, rows);
    j["estimate"] = work.bounds.json(work.estimate);
    j["fabricsim"] = provenance();
    write_output_file(a.json, json_text(j), "collbench JSON");
  }
  if (!errors.empty()) {
    std::cerr << "error: " << errors.size() << " result(s) differ from the reference:\n";
    for (std::size_t i = 0; i < errors.size() && i < 20; ++i) std::cerr << "  " << errors[i] << "\n";
    return kExitDataMismatch;
  }
  return kExitOk;
}

/// Adds `run` and its options.
CLI::App* add_run_command(CLI::App& app, RunArgs& a) {
  CLI::App* cmd = app.add_subcommand("run", "Run Chakra traces on a platform");
  cmd->add_option("--platform", a.platform, "Platform file (fabricsim YAML or ASTRA-sim network .yml)")
      ->required()
      ->check(kPath);
  add_set_option(cmd, a.sets);
  auto* workload = cmd->add_option("--workload", a.workload, "Trace prefix: PREFIX.<rank>.et per NPU")->check(kPath);
  auto* model = cmd->add_option("--model", a.model,
                                "A training step generated in place of traces: a preset (fabricsim gen model "
                                "--list), a model file (.yaml) or a Hugging Face config.json; --set training.KEY=VALUE "
                                "lays it out (docs/workload.md)")
                    ->check(kPath);
  workload->excludes(model);
  model->excludes(workload);
  cmd->callback([&a] {
    if (a.workload.empty() && a.model.empty()) throw CLI::RequiredError("--workload or --model");
  });
  cmd->add_option("--report", a.report, "Write a JSON report here")->check(kPath);
  cmd->add_option("--report-collectives", a.report_collectives,
                  "List at most N collectives per NPU in the report, the first to end (default: 100,000 shared "
                  "among the NPUs); every collective is counted in each NPU's collective_summary")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 40));
  cmd->add_option("--comm-groups", a.comm_groups, "Process groups, ASTRA-sim JSON {\"pg\": [ranks]}")->check(kPath);
  cmd->add_option("--system", a.system, "ASTRA-sim system configuration (JSON)")->check(kPath);
  cmd->add_option("--remote-memory", a.remote_memory, "ASTRA-sim remote-memory configuration (JSON)")->check(kPath);
  cmd->add_flag("--replay", a.replay, "Use recorded durations for compute nodes");
  cmd->add_option(
         "--npus", a.npus,
         "Run the trace's ranks on the first N NPUs only, the others idle (a 1-rank trace on one GPU of a node)")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_flag("--force", a.force, kForceHelp);
  cmd->add_flag("--estimate", a.estimate,
                "Read the workload, print its estimated messages, wall time and memory, and stop (a dry run)");
  cmd->add_flag("--data", a.data, "Carry real bytes and check every collective's result");
  cmd->add_option("--chunks", a.chunks, "Split each collective into this many pipelined chunks")
      ->check(CLI::Range(std::uint64_t{1}, limits::kMaxChunks));
  cmd->add_option("--algorithm", a.algorithms,
                  "Collective algorithm, ALGO or TYPE=ALGO (ring, direct, halving_doubling, "
                  "double_binary_tree, hierarchical, in_switch, pat)");
  cmd->add_option("--levels", a.levels,
                  "Hierarchical collectives: the algorithm of each level, lowest first, comma-separated "
                  "(ring, direct, halving_doubling, in_switch; double_binary_tree as the last), e.g. "
                  "in_switch,double_binary_tree for NCCL's NVLS-tree. They apply to the collectives that run "
                  "hierarchical (--algorithm hierarchical, or where the default choice takes it; the report "
                  "names what ran)");
  cmd->add_option("--scheduler", a.scheduler,
                  "Hierarchical all-reduce: each chunk takes the levels in ascending order (baseline) or in Themis's "
                  "load-balancing order (themis)");
  cmd->add_flag("-q,--quiet", a.quiet, "Print nothing but warnings and errors (no progress line)");
  cmd->add_option("--timeline", a.timeline, "Write a Chrome/Perfetto trace-event timeline (open it in ui.perfetto.dev)")
      ->check(kPath);
  cmd->add_option("--timeline-npus", a.timeline_npus, "Record only these NPUs: 0-15, 0,4,8 (default: all)");
  cmd->add_option("--timeline-window", a.timeline_window,
                  "Record only what overlaps START:END (units ns, us, ms, s; either end may be left out)");
  cmd->add_flag("--timeline-links", a.timeline_links,
                "Add link utilization and buffer counters (links of the recorded NPUs, or all)");
  add_model_options(cmd, a.models);
  return cmd;
}

/// Adds `collbench` and its options.
CLI::App* add_collbench_command(CLI::App& app, CollbenchArgs& a) {
  CLI::App* cmd = app.add_subcommand("collbench", "Sweep one collective over sizes, as nccl-tests does");
  cmd->add_option("--platform", a.platform, "Platform file")->required()->check(kPath);
  add_set_option(cmd, a.sets);
  cmd->add_option("--system", a.system, "ASTRA-sim system configuration (JSON)")->check(kPath);
  cmd->add_option("--op", a.op,
                  "all_reduce, reduce_scatter, all_gather, all_to_all, all_to_all_v, broadcast, reduce, "
                  "gather, scatter, barrier");
  cmd->add_option("--algo", a.algo, "Algorithm (default: chosen by platform and size)");
  cmd->add_option("-b,--min-bytes", a.min_bytes, "Smallest size (K, M, G, T, P: 1024-based)");
  cmd->add_option("-e,--max-bytes", a.max_bytes, "Largest size");
  cmd->add_option("-f,--factor", a.factor, "Size multiplier between rows (> 1)");
  cmd->add_option("--json", a.json, "Write the rows as JSON")->check(kPath);
  cmd->add_option("--chunks", a.chunks, "Pipelined chunks per collective")
      ->check(CLI::Range(std::uint64_t{1}, limits::kMaxChunks));
  cmd->add_option("--levels", a.levels,
                  "Hierarchical collectives: the algorithm of each level, lowest first, comma-separated "
                  "(ring, direct, halving_doubling, in_switch; double_binary_tree as the last), e.g. "
                  "in_switch,double_binary_tree for NCCL's NVLS-tree");
  cmd->add_option("--scheduler", a.scheduler,
                  "Hierarchical all-reduce: each chunk takes the levels in ascending order (baseline) or in Themis's "
                  "load-balancing order (themis)");
  cmd->add_option("--root", a.root,
                  "Root of rooted collectives: its place in the group (with --stride S, member k is NPU S x k)");
  cmd->add_flag("--data", a.data, "Carry real bytes and check every result");
  cmd->add_flag("--force", a.force, kForceHelp);
  cmd->add_option("--dtype", a.dtype, "fp32, fp16, bf16, int32");
  cmd->add_option("--redop", a.redop, "sum, min, max");
  add_model_options(cmd, a.models);
  cmd->add_option("--npus", a.npus, "Run over the first N NPUs only, the others idle (as CUDA_VISIBLE_DEVICES does)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--stride", a.stride,
                  "Run over NPUs 0, S, 2S, ... only (with --npus, the first N of them): --stride 8 on 8-GPU nodes "
                  "takes one GPU per node, a rail")
      ->check(CLI::PositiveNumber);
  cmd->add_option("-j,--jobs", a.jobs,
                  "Rows measured at once, each in a process of its own (default: one per CPU); every row is a fresh "
                  "simulation either way, so the rows are the same")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("-q,--quiet", a.quiet, "Print nothing but errors");
  cmd->add_flag("--why", a.why,
                "Under each row chosen by default, the cost model's estimate of every algorithm it weighed, and "
                "where they were too close to tell (collectives.probe_margin) each candidate's simulated time "
                "(the JSON has them as estimates_us and probed_us)");
  return cmd;
}

// Bounds on generator flags: beyond them a trace would not be simulated on
// one machine, and a negative number would otherwise wrap to 2^64.
const CLI::Range kNpuRange(1, limits::kMaxNpus);
const CLI::Range kByteRange(std::uint64_t{0}, limits::kMaxBytes);
/// A size as collbench takes it (8, 64K, 128M, 8G), as a byte count.
const CLI::Validator kSize(
    [](std::string& text) -> std::string {
      try {
        text = std::to_string(parse_size(text));
        return "";
      } catch (const InputError& e) {
        return e.what();
      }
    },
    "SIZE", "size");
/// Microseconds, finite, up to 1,000 s (CLI::Range lets "nan" through).
const CLI::Validator kMicrosRange(
    [](std::string& text) -> std::string {
      std::size_t used = 0;
      double v = 0;
      try {
        v = std::stod(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != text.size() || !std::isfinite(v) || v < 0 || v > 1e9) {
        return "Value " + text + " not a number of microseconds in [0, 1e9]";
      }
      return "";
    },
    "US", "microseconds");
constexpr std::uint64_t kMaxGeneratedNodes = 100000000;  // per NPU: about 4 GB of trace each

/// `gen`: one trace generator per subcommand, each with its own flags and
/// its own function that writes the traces.
class GenCommands {
 public:
  // CLI11 holds references to the members and the generators capture this.
  GenCommands(const GenCommands&) = delete;
  GenCommands& operator=(const GenCommands&) = delete;
  explicit GenCommands(CLI::App& app) {
    CLI::App* gen = app.add_subcommand("gen", "Write Chakra traces");
    gen->require_subcommand(1);
    add_collective(*gen);
    add_pipeline(*gen);
    add_training(*gen);
    add_model(*gen);
    add_dlrm(*gen);
    add_offload(*gen);
    add_long(*gen);
  }
  /// Runs the generator the command line named; false if none. Its output
  /// is counted first (gen model estimates its own): past --limit (64 GiB)
  /// without --force, or past the free space where it goes, it is refused
  /// before a file is written.
  bool run() const {
    for (const auto& [cmd, write] : generators_) {
      if (cmd->parsed()) {
        if (cmd->get_name() != "model") check_output(*cmd, write);
        write();
        return true;
      }
    }
    return false;
  }

 private:
  void add(CLI::App* cmd, std::function<void()> write) {
    cmd->add_option("--limit", bounds_.limit,
                    "Refuse traces estimated past this size (K, M, G, T: 1024-based; default 64G)");
    cmd->add_flag("--force", bounds_.force, "Write traces estimated past --limit");
    generators_.emplace_back(cmd, std::move(write));
  }

  /// --limit in bytes (kMaxTraceBytes when not given).
  double trace_limit() const {
    if (bounds_.limit.empty()) return kMaxTraceBytes;
    try {
      return static_cast<double>(parse_size(bounds_.limit));
    } catch (const std::exception& e) {
      throw InputError("--limit " + bounds_.limit + ": " + e.what());
    }
  }

  static std::string size_text(double bytes) {
    char buf[64];
    if (bytes < 1073741824.0) {
      std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
    } else {
      std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / 1073741824.0);
    }
    return buf;
  }

  void check_output(const CLI::App& cmd, const std::function<void()>& write) const {
    const double limit = trace_limit();
    const std::string out = cmd.get_option("--out")->as<std::string>();
    const double free = free_space_for(out);
    const double bound = std::min(bounds_.force ? free : limit, free);
    const std::string what = "gen " + cmd.get_name() + " --out " + out;
    traces::EtWriter::Count count(bound);
    std::streambuf* const shown = std::cout.rdbuf(nullptr);  // the counting pass prints nothing
    try {
      write();
    } catch (const traces::EtWriter::Count::PastLimit&) {
      std::cout.rdbuf(shown);
      if (bound == free) {
        throw InputError(what + ": the traces would take more than the " + size_text(free) + " free where they go");
      }
      throw InputError(what + ": the traces would take more than " + size_text(limit) +
                       " (give --force or a larger --limit to write them anyway)");
    } catch (...) {
      std::cout.rdbuf(shown);
      throw;
    }
    std::cout.rdbuf(shown);
  }

  struct {
    std::string limit;
    bool force = false;
  } bounds_;

  void add_collective(CLI::App& gen) {
    CLI::App* cmd = gen.add_subcommand("collective", "A collective microbenchmark, one trace per NPU");
    cmd->add_option("--npus", coll_.npus, "Number of NPUs")->required()->check(kNpuRange);
    cmd->add_option("--type", coll_.type, "Collective type (all_reduce, all_gather, ...)");
    cmd->add_option("--bytes", coll_.bytes,
                    "Collective size in bytes, as nccl-tests and collbench count it (all-gather: the gathered "
                    "output; the trace records each NPU's input)")
        ->required()
        ->transform(kSize)
        ->check(kByteRange);
    cmd->add_option("--iterations", coll_.iterations, "Back-to-back repetitions")->check(CLI::Range(1, 1000000));
    cmd->add_option("--out", coll_.out, "Output prefix: PREFIX.<rank>.et")->required()->check(kPath);
    add(cmd, [this] {
      const auto type = collective_from_name(coll_.type);
      if (!type) throw InputError("--type " + coll_.type + ": unknown collective type");
      traces::write_collective_microbenchmark(coll_.out, coll_.npus, static_cast<int>(*type), coll_.bytes,
                                              coll_.iterations);
    });
  }
  void add_pipeline(CLI::App& gen) {
    CLI::App* cmd = gen.add_subcommand("pipeline", "A GPipe pipeline: stages pass activations and gradients");
    cmd->add_option("--stages", pipe_.stages, "Pipeline stages (one NPU each)")->check(kNpuRange);
    cmd->add_option("--microbatches", pipe_.microbatches, "Microbatches per step")->check(CLI::Range(1, 1000000));
    cmd->add_option("--compute-us", pipe_.us, "Compute per microbatch and stage, each way (us)")->check(kMicrosRange);
    cmd->add_option("--bytes", pipe_.bytes, "Activation (and gradient) bytes passed between stages (8, 64K, 1M...)")
        ->transform(kSize)
        ->check(kByteRange);
    cmd->add_option("--out", pipe_.out, "Output prefix")->required()->check(kPath);
    add(cmd, [this] { traces::write_pipeline(pipe_.out, pipe_.stages, pipe_.microbatches, pipe_.us, pipe_.bytes); });
  }
  void add_model(CLI::App& gen) {
    CLI::App* cmd = gen.add_subcommand(
        "model", "A model's training step (the traces `run --model` makes in process; docs/workload.md)");
    cmd->add_option("--model", model_.model, "A preset, a model file (.yaml) or a Hugging Face config.json")
        ->check(kPath);
    cmd->add_option("--npus", model_.npus, "GPUs the job runs on")->check(kNpuRange);
    cmd->add_option("--set", model_.sets,
                    "model.KEY=VALUE or training.KEY=VALUE (repeatable; fabricsim params training)")
        ->take_all()
        ->allow_extra_args(false);
    cmd->add_flag("--list", model_.list, "List the presets and exit");
    cmd->add_option("--out", model_.out, "Output prefix: PREFIX.<rank>.et")->check(kPath);
    add(cmd, [this] {
      if (model_.list) {
        for (const auto& name : model_presets()) std::cout << name << "\n";
        return;
      }
      if (model_.model.empty() || model_.out.empty() || model_.npus == 0) {
        throw InputError("gen model needs --model, --npus and --out (or --list)");
      }
      std::vector<YamlOverride> sets;
      for (const auto& text : model_.sets) {
        YamlOverride o = parse_override(text);
        if (!is_job_override(o)) throw InputError("--set " + text + ": gen model takes model.KEY or training.KEY");
        sets.push_back(o);
      }
      const auto job = load_training_job(model_.model, sets, model_.npus);
      write_job_traces(*job, model_.out, trace_limit(), bounds_.force, std::cout);
    });
  }
  void add_training(CLI::App& gen) {
    CLI::App* cmd = gen.add_subcommand("training", "A transformer training step with DP, TP and PP");
    traces::TrainingShape& s = train_.shape;
    cmd->add_option("--dp", s.dp, "Data-parallel degree")->check(kNpuRange);
    cmd->add_option("--tp", s.tp, "Tensor-parallel degree")->check(kNpuRange);
    cmd->add_option("--pp", s.pp, "Pipeline-parallel degree")->check(kNpuRange);
    cmd->add_option("--layers", s.layers, "Transformer layers")->check(CLI::Range(1, 100000));
    cmd->add_option("--hidden", s.hidden, "Hidden size")->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--seq", s.seq, "Sequence length")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--batch", s.batch, "Micro-batch size (sequences)")->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--microbatches", s.microbatches, "Microbatches per step")->check(CLI::Range(1, 100000));
    cmd->add_option("--iterations", s.iterations, "Training steps")->check(CLI::Range(1, 100000));
    cmd->add_option("--out", train_.out, "Output prefix (also writes PREFIX.comm_groups.json)")
        ->required()
        ->check(kPath);
    add(cmd, [this] {
      const traces::TrainingShape& shape = train_.shape;
      if (static_cast<std::int64_t>(shape.dp) * shape.tp * shape.pp > limits::kMaxNpus) {
        throw InputError("--dp x --tp x --pp is more than " + std::to_string(limits::kMaxNpus) + " NPUs");
      }
      traces::write_training_step(train_.out, shape);
      std::cout << "run it with --comm-groups " << train_.out << ".comm_groups.json on a platform of "
                << shape.dp * shape.tp * shape.pp << " NPUs\n";
    });
  }
  void add_dlrm(CLI::App& gen) {
    CLI::App* cmd = gen.add_subcommand(
        "dlrm",
        "A DLRM training iteration (data-parallel MLPs, model-parallel embeddings; the ASTRA-sim + ns-3 case "
        "study's model by default)");
    traces::DlrmShape& s = dlrm_.shape;
    cmd->add_option("--npus", s.npus, "Number of NPUs")->check(kNpuRange);
    cmd->add_option("--batch", s.batch, "Samples per NPU")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--dense-features", s.dense_features, "Inputs of the bottom MLP")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--sparse-features", s.sparse_features, "Embedding tables")->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--embedding-dim", s.embedding_dim, "Embedding dimension")->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--pooling", s.pooling, "Rows looked up per table and sample")->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--bottom-layers", s.bottom_layers, "Hidden layers of the bottom MLP")->check(CLI::Range(0, 10000));
    cmd->add_option("--bottom-width", s.bottom_width, "Width of the bottom MLP")->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--top-layers", s.top_layers, "Hidden layers of the top MLP")->check(CLI::Range(0, 10000));
    cmd->add_option("--top-width", s.top_width, "Width of the top MLP")->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--element-bytes", s.element_bytes, "Bytes per element")->check(CLI::Range(1, 16));
    cmd->add_option("--iterations", s.iterations, "Training iterations")->check(CLI::Range(1, 100000));
    cmd->add_option("--out", dlrm_.out, "Output prefix")->required()->check(kPath);
    add(cmd, [this] { traces::write_dlrm(dlrm_.out, dlrm_.shape); });
  }
  void add_offload(CLI::App& gen) {
    CLI::App* cmd = gen.add_subcommand("offload", "Training steps that offload optimizer state to remote memory");
    cmd->add_option("--npus", off_.npus, "Number of NPUs")->check(kNpuRange);
    cmd->add_option("--steps", off_.steps, "Training steps")->check(CLI::Range(1, 1000000));
    cmd->add_option("--compute-us", off_.us, "Forward compute per step (us); backward takes twice as long")
        ->check(kMicrosRange);
    cmd->add_option("--gradient-bytes", off_.gradient, "Bytes of the gradient all-reduce")->check(kByteRange);
    cmd->add_option("--state-bytes", off_.state, "Optimizer state loaded and stored per step")->check(kByteRange);
    cmd->add_option("--out", off_.out, "Output prefix")->required()->check(kPath);
    add(cmd, [this] { traces::write_offload(off_.out, off_.npus, off_.steps, off_.us, off_.gradient, off_.state); });
  }
  void add_long(CLI::App& gen) {
    CLI::App* cmd = gen.add_subcommand("long", "A long trace for benchmarks");
    cmd->add_option("--npus", long_.npus, "Number of NPUs")->check(kNpuRange);
    cmd->add_option("--nodes", long_.nodes, "Nodes per NPU")->check(CLI::Range(std::uint64_t{1}, kMaxGeneratedNodes));
    cmd->add_option("--collective-every", long_.every, "An all-reduce every N nodes (0: none)")
        ->check(CLI::Range(std::uint64_t{0}, kMaxGeneratedNodes));
    cmd->add_option("--collective-bytes", long_.collective_bytes, "Each all-reduce's size in bytes (default 1M)")
        ->transform(kSize)
        ->check(kByteRange);
    cmd->add_flag("--independent", long_.independent, "No dependencies between nodes (the trace window's worst case)");
    cmd->add_option("--out", long_.out, "Output prefix")->required()->check(kPath);
    add(cmd, [this] {
      if (long_.nodes * static_cast<std::uint64_t>(long_.npus) > kMaxGeneratedNodes) {
        throw InputError("--nodes x --npus is more than " + std::to_string(kMaxGeneratedNodes) +
                         " nodes (about 4 GB of traces)");
      }
      traces::write_long_trace(long_.out, long_.npus, long_.nodes, long_.every, long_.independent,
                               long_.collective_bytes);
    });
  }

  struct {
    int npus = 0;
    std::string type = "all_reduce";
    std::uint64_t bytes = 1 << 20;
    int iterations = 1;
    std::string out;
  } coll_;
  struct {
    int stages = 4, microbatches = 8;
    double us = 100;
    std::uint64_t bytes = 1 << 20;
    std::string out;
  } pipe_;
  struct {
    traces::TrainingShape shape;
    std::string out;
  } train_;
  struct {
    std::string model, out;
    int npus = 0;
    std::vector<std::string> sets;
    bool list = false;
  } model_;
  struct {
    traces::DlrmShape shape;
    std::string out;
  } dlrm_;
  struct {
    int npus = 8, steps = 3;
    double us = 1000;
    std::uint64_t gradient = 256ull << 20, state = 1ull << 30;
    std::string out;
  } off_;
  struct {
    int npus = 8;
    std::uint64_t nodes = 1000, every = 100, collective_bytes = 1 << 20;
    bool independent = false;
    std::string out;
  } long_;
  std::vector<std::pair<CLI::App*, std::function<void()>>> generators_;
};

struct ParamsArgs {
  std::string type;
  std::string platform;
  std::vector<std::string> sets;
  bool json = false;
};

/// `fabricsim params [TYPE]`: each component's parameters (name, unit,
/// default, range, description); with --platform, the values a platform
/// file resolves to.
int params(const ParamsArgs& a) {
  if (!a.sets.empty() && a.platform.empty()) {
    throw InputError("--set " + a.sets.front() + ": --set changes a platform file's values; give it with --platform");
  }
  if (!a.platform.empty()) {
    if (!a.type.empty()) throw InputError("params: give a TYPE or --platform, not both");
    system_overrides_of(a.sets, "");  // params reads no system file: a system.KEY is refused, not ignored
    std::cout << json_text(resolved_parameters(load_platform(a.platform, overrides_of(a.sets))));
    return kExitOk;
  }
  std::vector<ParamSection> sections = parameter_catalogue();
  for (ParamSection& s : workload_parameter_catalogue()) sections.push_back(std::move(s));
  if (!a.type.empty()) {
    std::string known;
    std::vector<ParamSection> chosen;
    for (auto& s : sections) {
      known += (known.empty() ? "" : ", ") + s.type;
      if (s.type == a.type) chosen.push_back(std::move(s));
    }
    if (chosen.empty()) throw InputError("params: unknown component type \"" + a.type + "\" (known: " + known + ")");
    sections = std::move(chosen);
  }
  if (a.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const auto& s : sections) {
      nlohmann::ordered_json sj;
      sj["type"] = s.type;
      sj["description"] = s.description;
      sj["written_at"] = s.written_at;
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (const auto& r : s.rows) {
        rows.push_back({{"name", r.name},
                        {"unit", r.unit},
                        {"default", r.default_value},
                        {"range", r.range},
                        {"legacy_key", r.legacy_key},
                        {"description", r.description}});
      }
      sj["parameters"] = std::move(rows);
      j.push_back(std::move(sj));
    }
    std::cout << json_text(j);
    return kExitOk;
  }
  for (const auto& s : sections) {
    std::cout << s.type << ": " << s.description << "\n  written at:";
    for (const auto& w : s.written_at) std::cout << " " << w;
    std::cout << "\n";
    std::size_t name_w = 4, unit_w = 4, default_w = 7;
    for (const auto& r : s.rows) {
      name_w = std::max(name_w, r.name.size());
      unit_w = std::max(unit_w, r.unit.size());
      default_w = std::max(default_w, r.default_value.size());
    }
    auto pad = [](const std::string& t, std::size_t w) { return t + std::string(w - t.size() + 2, ' '); };
    std::cout << "  " << pad("name", name_w) << pad("unit", unit_w) << pad("default", default_w) << "description\n";
    for (const auto& r : s.rows) {
      std::cout << "  " << pad(r.name, name_w) << pad(r.unit, unit_w) << pad(r.default_value, default_w)
                << r.description;
      if (!r.range.empty()) std::cout << "; " << r.range;
      if (!r.legacy_key.empty()) std::cout << "; also " << r.legacy_key;
      std::cout << "\n";
    }
    std::cout << "\n";
  }
  return kExitOk;
}

CLI::App* add_params_command(CLI::App& app, ParamsArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "params", "List each component's parameters: name, unit, default, range, description (docs/platforms.md)");
  cmd->add_option("type", a.type,
                  "Only this component type (npu, memory, collectives, nic, link, switch, reduction_unit)");
  cmd->add_option("--platform", a.platform, "Print the values this platform file resolves to, as JSON")->check(kPath);
  add_set_option(cmd, a.sets);
  cmd->add_flag("--json", a.json, "As JSON");
  return cmd;
}

struct CalibrateArgs {
  std::vector<std::string> csv;
  std::string platform;
  std::optional<std::uint32_t> compute_units;
  std::string out;
};

int calibrate_command(const CalibrateArgs& a, const std::string& command) {
  const PlatformSpec spec = load_platform(a.platform);
  CalibrateOptions o;
  o.csv = a.csv;
  o.peak_flops = spec.npu.peak_flops;
  o.memory_bandwidth = spec.npu.memory_bandwidth.bytes_per_ps() * 1e12;
  o.base = spec.npu.compute;
  if (a.compute_units) o.base.compute_units = *a.compute_units;
  std::vector<MeasuredKernel> rows;
  for (const auto& f : a.csv) {
    auto more = read_kernel_csv(f);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  const Calibration c = calibrate(o, rows);
  print_calibration(std::cout, c);
  const std::string text = compute_file_text(c, o, command);
  if (a.out.empty()) {
    std::cout << "\n" << text;
  } else {
    write_output_file(a.out, text, "compute model");
    std::cout << "wrote " << a.out << " (name it in the platform: npu.compute: FILE)\n";
  }
  return kExitOk;
}

CLI::App* add_calibrate_command(CLI::App& app, CalibrateArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Fit the kernel_classes compute model to measured kernels (CSV as h100-ops.csv; docs/compute.md)");
  cmd->add_option("--csv", a.csv, "Measured kernels: op_class, op, shape, flops, bytes, measured_us (repeatable)")
      ->required()
      ->check(kPath);
  cmd->add_option("--platform", a.platform, "The platform whose NPU was measured (its peak_flops, memory_bandwidth)")
      ->required()
      ->check(kPath);
  cmd->add_option("--compute-units", a.compute_units, "Units GEMM tiles run over (SMs), if not the platform's")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--out", a.out, "Write the compute file here (else print it)")->check(kPath);
  return cmd;
}

/// The exit code for what a command threw, with its message on stderr
/// (README.md: 2 bad input, 3 no progress, 4 wrong data, 1 our fault).
int exit_code_for(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
  } catch (const traces::TraceError& e) {
    std::cerr << "error: " << e.what() << "\n";
  } catch (const std::invalid_argument& e) {
    std::cerr << "error: " << e.what() << "\n";
  } catch (const ModelError& e) {
    std::cerr << "error: " << e.what() << "\n";
  } catch (const DataMismatchError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitDataMismatch;
  } catch (const StuckError& e) {
    std::cerr << "stuck: " << e.what() << "\n";
    return kExitStuck;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return kExitBadInput;
}

struct SweepArgs {
  std::string spec;
  SweepOptions options;
  std::string collect_dir;
  std::string point_dir;
  std::size_t point_index = 0;
  bool quiet = false;
};

/// Adds `sweep` (run a spec), `sweep collect DIR` and `sweep point DIR I`.
struct SweepCommands {
  CLI::App* sweep;
  CLI::App* collect;
  CLI::App* point;
  SweepCommands(CLI::App& app, SweepArgs& a) {
    sweep =
        app.add_subcommand("sweep", "Run a grid of points from a spec (docs/sweep.md): fabricsim sweep SPEC --out DIR");
    sweep->add_option("spec", a.spec, "The sweep spec (YAML)");
    sweep->add_option("--out", a.options.out_dir, "Folder for the manifest, one JSON per point and results.csv")
        ->check(kPath);
    sweep
        ->add_option("--backend", a.options.backend,
                     "local (a process pool), slurm (a job array) or print (the commands)")
        ->check(CLI::IsMember({"local", "slurm", "print"}));
    sweep->add_option("-j,--jobs", a.options.jobs, "local: points at once (default: one per CPU)")
        ->check(CLI::Range(1u, 1024u));
    sweep->add_flag("--dry-run", a.options.dry_run, "List the points and run nothing");
    sweep->add_flag("--retry-failed", a.options.retry_failed, "Run the failed points again, not only missing ones");
    sweep->add_option("--partition", a.options.partition, "slurm: the partition");
    sweep->add_option("--time", a.options.time_limit, "slurm: each point's time limit (sbatch --time)");
    sweep->add_option("--mem", a.options.memory, "slurm: each point's memory (sbatch --mem)");
    sweep->add_option("--throttle", a.options.throttle, "slurm: array tasks at once (%N)");
    sweep->add_flag("--wait", a.options.wait, "slurm: wait for the jobs, then collect");
    sweep->add_option("--sbatch-arg", a.options.sbatch_args, "slurm: one more argument for sbatch (repeatable)")
        ->allow_extra_args(false);
    sweep->add_flag("-q,--quiet", a.quiet, "No progress");
    collect = sweep->add_subcommand("collect", "Gather DIR's point files into DIR/results.csv");
    collect->add_option("dir", a.collect_dir, "The sweep's folder")->required();
    point =
        sweep->add_subcommand("point", "Run point INDEX of the sweep in DIR (what the slurm and print backends run)");
    point->add_option("dir", a.point_dir, "The sweep's folder")->required();
    point->add_option("index", a.point_index, "The point's index")->required();
  }
  int run(SweepArgs& a) const {
    if (collect->parsed()) return collect_sweep(a.collect_dir);
    // The executable's own hash too: a point's id must change with the
    // program that computes it, even between two builds of one dirty tree.
    std::string executable_sha256;
    try {
      executable_sha256 = input_file_sha256("/proc/self/exe", "fabricsim's own executable");
    } catch (const InputError& e) {  // not the user's input: an unreadable installation
      throw std::runtime_error(std::string(e.what()) + " (a sweep names the build of each point by its hash)");
    }
    const nlohmann::json fabricsim = {
        {"version", FABRICSIM_VERSION}, {"commit", FABRICSIM_COMMIT}, {"executable_sha256", executable_sha256}};
    if (point->parsed()) return run_sweep_point(a.point_dir, a.point_index, fabricsim);
    if (a.spec.empty()) throw InputError("fabricsim sweep: name a spec (fabricsim sweep SPEC.yaml --out DIR)");
    if (a.options.out_dir.empty() && !a.options.dry_run) throw InputError("fabricsim sweep: --out DIR is needed");
    a.options.progress = !a.quiet;
    return run_sweep(a.spec, a.options, fabricsim);
  }
};

}  // namespace

int sc_main(int argc, char* argv[]) {
  // sc_stop() on an error would print an info line of its own.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  CLI::App app{"fabricsim: a SystemC/TLM-2.0 simulator of ML training machines"};
  app.set_version_flag("--version",
                       std::string("fabricsim ") + FABRICSIM_VERSION + " (commit " + FABRICSIM_COMMIT + ")");
  g_command = "fabricsim";
  for (int i = 1; i < argc; ++i) g_command += " " + shell_quoted(argv[i]);
  app.require_subcommand(1);
  RunArgs run_args;
  CLI::App* run_cmd = add_run_command(app, run_args);
  CollbenchArgs collbench_args;
  CLI::App* collbench_cmd = add_collbench_command(app, collbench_args);
  ParamsArgs params_args;
  CLI::App* params_cmd = add_params_command(app, params_args);
  CalibrateArgs calibrate_args;
  CLI::App* calibrate_cmd = add_calibrate_command(app, calibrate_args);
  GenCommands gen(app);  // not const: parsing writes its options
  SweepArgs sweep_args;
  const SweepCommands sweep(app, sweep_args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  }
  try {
    if (run_cmd->parsed()) return run(run_args);
    if (collbench_cmd->parsed()) return collbench(collbench_args);
    if (params_cmd->parsed()) return params(params_args);
    if (calibrate_cmd->parsed()) return calibrate_command(calibrate_args, g_command);
    if (gen.run()) return kExitOk;
    if (sweep.sweep->parsed()) return sweep.run(sweep_args);
  } catch (...) {
    return exit_code_for(std::current_exception());
  }
  return kExitInternal;
}

// Our own main: SystemC's prints a copyright banner on stdout before sc_main,
// which would mix with the results.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  // An interrupted command removes its outputs' temporaries and stops its
  // children (tlm/util/interrupt_cleanup.h).
  fabricsim::interrupt_cleanup::install();
  return sc_core::sc_elab_and_sim(argc, argv);
}
