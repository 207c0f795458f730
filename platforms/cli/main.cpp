// The fabricsim command.
//
//   fabricsim run --platform FILE --workload PREFIX [--report FILE.json] ...
//   fabricsim gen collective --npus N --type all_reduce --bytes S --out PREFIX
//
// Exit codes: 0 done; 2 bad input (platform, trace, flags); 3 the simulation
// could make no progress (the report says what is stuck); 4 a data-mode check
// failed; 1 an internal error.
#include <cstdlib>
#include <memory>
#include <tuple>

#include <unistd.h>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <systemc>

#include "models/collectives/collective.h"
#include "platforms/astra_system.h"
#include "platforms/collbench.h"
#include "tlm/errors.h"
#include "tlm/output_file.h"
#include "tlm/reduction.h"
#include "platforms/loader.h"
#include "platforms/simulation.h"
#include "platforms/timeline.h"
#include "platforms/yaml_input.h"
#include "traces/generator/generators.h"
#include "traces/reader/et_reader.h"

using namespace fabricsim;

namespace {

/// Names and labels come from user files: bytes that are not UTF-8 are
/// written as U+FFFD rather than stopping the report.
std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

/// How the switch reduction units run, for run and collbench.
struct RtlArgs {
  std::string model;  // --reduction-model: tlm, rtl or empty (as the platform says)
  std::string vcd;
  std::string vcd_window;
  std::vector<std::string> plusargs;
};

struct RunArgs {
  std::string platform;
  std::string workload;
  std::string report;
  std::string comm_groups;
  std::string system;
  std::string remote_memory;
  bool replay = false;
  bool force = false;
  bool quiet = false;
  bool data = false;
  std::optional<std::uint32_t> chunks;
  std::vector<std::string> algorithms;  // TYPE=ALGO
  std::string timeline;
  std::string timeline_npus;
  std::string timeline_window;
  bool timeline_links = false;
  RtlArgs rtl;
};

/// --reduction-model, --vcd and --rtl-plusarg: every switch reduction
/// unit's model, where RTL units dump their waveforms, what their RTL reads.
void apply_rtl_options(const RtlArgs& a, PlatformSpec& spec) {
  const std::string& model = a.model;
  const std::string& vcd = a.vcd;
  const std::string& window = a.vcd_window;
  if (!model.empty()) {
    if (model != "tlm" && model != "rtl") throw InputError("--reduction-model " + model + ": use tlm or rtl");
    bool any = false;
    for (auto& f : spec.fabrics) {
      for (auto& n : f.nodes) {
        if (!n.reduction) continue;
        any = true;
        n.reduction->rtl = model == "rtl";
        if (n.reduction->rtl) {  // no fp16 datapath in the RTL
          for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
            n.reduction->unit.supported &= ~reduction_bit(op, DataType::kFp16);
          }
        }
      }
    }
    if (!any) throw InputError("--reduction-model " + model + ": the platform's switches have no reduction units");
  }
  spec.rtl.vcd = vcd;
  if (!window.empty()) {
    if (vcd.empty()) throw InputError("--vcd-window needs --vcd FILE");
    std::tie(spec.rtl.vcd_from, spec.rtl.vcd_to) = Timeline::parse_window(window, "--vcd-window");
  }
  for (const auto& p : a.plusargs) {
    if (p.size() < 2 || p[0] != '+') throw InputError("--rtl-plusarg " + p + ": give +NAME or +NAME=VALUE");
  }
  if (!a.plusargs.empty()) {
    bool rtl = false;
    for (const auto& f : spec.fabrics) {
      for (const auto& n : f.nodes) rtl |= n.reduction && n.reduction->rtl;
    }
    if (!rtl) throw InputError("--rtl-plusarg: no reduction unit runs the RTL (use --reduction-model rtl)");
  }
  spec.rtl.plusargs = a.plusargs;
}

void add_rtl_options(CLI::App* cmd, RtlArgs& a) {
  cmd->add_option("--reduction-model", a.model,
                  "Every switch reduction unit as the TLM model (tlm) or the Verilated RTL (rtl)");
  cmd->add_option("--vcd", a.vcd, "RTL reduction units: dump a waveform (one file per unit)");
  cmd->add_option("--vcd-window", a.vcd_window, "The waveform's time window, START:END (default 0:100us)");
  cmd->add_option("--rtl-plusarg", a.plusargs,
                  "RTL reduction units: a plusarg for the RTL's $value$plusargs, +NAME or +NAME=VALUE (repeatable; "
                  "+fault_lane=N flips a bit of lane N, to see the result check fire)");
}

void apply_overrides(const RunArgs& a, PlatformSpec& spec) {
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

int run(const RunArgs& a) {
  PlatformSpec spec = load_platform(a.platform);
  std::vector<std::string> notes;
  if (!a.system.empty()) apply_astra_system(a.system, spec, notes);
  if (!a.remote_memory.empty()) apply_astra_remote_memory(a.remote_memory, spec, notes);
  apply_overrides(a, spec);
  apply_rtl_options(a.rtl, spec);
  for (const auto& n : notes) std::cerr << "note: " << n << "\n";
  // Never destroyed: the process ends right after, and SystemC unregisters
  // ports one by one in quadratic time (seconds at 100,000 sockets). Kept
  // in a static, so a leak checker sees it as still in use.
  static Simulation* kept_until_exit = nullptr;
  kept_until_exit = new Simulation(std::move(spec));
  Simulation& sim = *kept_until_exit;
  WorkloadSettings ws;
  ws.prefix = a.workload;
  ws.comm_groups = a.comm_groups;
  ws.replay = a.replay;
  ws.force = a.force;
  sim.load_workload(ws);
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
  if (!a.quiet) sim.print_summary(std::cout);
  if (!a.report.empty()) write_output_file(a.report, json_text(sim.report()), "report");
  if (outcome == Simulation::Outcome::kStuck) {
    std::cerr << "error: the simulation cannot make progress at " << ticks_to_ns(now_ticks())
              << " ns; work remains:\n";
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
  std::string system;
  std::string op = "all_reduce";
  std::string algo;
  std::string min_bytes = "8";
  std::string max_bytes = "128M";
  double factor = 2;
  std::string json;
  std::optional<std::uint32_t> chunks;
  int root = 0;
  bool data = false;
  bool force = false;
  std::string dtype = "fp32";
  std::string redop = "sum";
  int npus = 0;
  bool quiet = false;
  RtlArgs rtl;
};

int collbench(const CollbenchArgs& a) {
  PlatformSpec spec = load_platform(a.platform);
  std::vector<std::string> notes;
  if (!a.system.empty()) apply_astra_system(a.system, spec, notes);
  apply_rtl_options(a.rtl, spec);
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
      throw InputError("--algo " + a.algo +
                       ": unknown algorithm (ring, direct, halving_doubling, double_binary_tree, hierarchical, in_switch)");
    }
    o.algorithm = *algo;
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
  o.data = a.data;
  o.force = a.force;
  if (!parse_data_type(a.dtype, o.dtype)) throw InputError("--dtype " + a.dtype + ": use fp32, fp16, bf16 or int32");
  if (!parse_reduce_op(a.redop, o.op)) throw InputError("--redop " + a.redop + ": use sum, min or max");
  static Platform* kept_until_exit = nullptr;  // never destroyed: see run()
  kept_until_exit = new Platform(std::move(spec));
  Platform& platform = *kept_until_exit;
  for (const auto& note : platform.notes()) std::cerr << "note: " << note << "\n";
  std::vector<std::string> errors;
  const std::string long_run = check_collbench_work(platform, o);
  if (!long_run.empty()) std::cerr << "warning: " << long_run << "\n";
  const auto rows = run_collbench(platform, o, errors);
  if (!a.quiet) print_collbench(std::cout, platform, o, rows);
  if (!a.json.empty()) write_output_file(a.json, json_text(collbench_json(platform, o, rows)), "collbench JSON");
  if (!errors.empty()) {
    std::cerr << "error: " << errors.size() << " result(s) differ from the reference:\n";
    for (std::size_t i = 0; i < errors.size() && i < 20; ++i) std::cerr << "  " << errors[i] << "\n";
    return kExitDataMismatch;
  }
  return kExitOk;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  // sc_stop() on an error would print an info line of its own.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  CLI::App app{"fabricsim: a SystemC/TLM-2.0 simulator of ML training machines"};
  app.require_subcommand(1);

  RunArgs run_args;
  CLI::App* run_cmd = app.add_subcommand("run", "Run Chakra traces on a platform");
  run_cmd->add_option("--platform", run_args.platform, "Platform file (fabricsim YAML or ASTRA-sim network .yml)")
      ->required();
  run_cmd->add_option("--workload", run_args.workload, "Trace prefix: PREFIX.<rank>.et per NPU")->required();
  run_cmd->add_option("--report", run_args.report, "Write a JSON report here");
  run_cmd->add_option("--comm-groups", run_args.comm_groups, "Process groups, ASTRA-sim JSON {\"pg\": [ranks]}");
  run_cmd->add_option("--system", run_args.system, "ASTRA-sim system configuration (JSON)");
  run_cmd->add_option("--remote-memory", run_args.remote_memory, "ASTRA-sim remote-memory configuration (JSON)");
  run_cmd->add_flag("--replay", run_args.replay, "Use recorded durations for compute nodes");
  const char* force_help = "Run work estimated past 2 hours of wall time, or --data past this machine's memory";
  run_cmd->add_flag("--force", run_args.force, force_help);
  run_cmd->add_flag("--data", run_args.data, "Carry real bytes and check every collective's result");
  run_cmd->add_option("--chunks", run_args.chunks, "Split each collective into this many pipelined chunks")
      ->check(CLI::Range(std::uint64_t{1}, limits::kMaxChunks));
  run_cmd->add_option("--algorithm", run_args.algorithms,
                      "Collective algorithm, ALGO or TYPE=ALGO (ring, direct, halving_doubling, "
                      "double_binary_tree, hierarchical, in_switch)");
  run_cmd->add_flag("-q,--quiet", run_args.quiet, "Print nothing but warnings and errors (no progress line)");
  run_cmd->add_option("--timeline", run_args.timeline,
                      "Write a Chrome/Perfetto trace-event timeline (open it in ui.perfetto.dev)");
  run_cmd->add_option("--timeline-npus", run_args.timeline_npus, "Record only these NPUs: 0-15, 0,4,8 (default: all)");
  run_cmd->add_option("--timeline-window", run_args.timeline_window,
                      "Record only what overlaps START:END (units ns, us, ms, s; either end may be left out)");
  run_cmd->add_flag("--timeline-links", run_args.timeline_links,
                    "Add link utilization and buffer counters (links of the recorded NPUs, or all)");
  add_rtl_options(run_cmd, run_args.rtl);

  CollbenchArgs cb;
  CLI::App* cb_cmd = app.add_subcommand("collbench", "Sweep one collective over sizes, as nccl-tests does");
  cb_cmd->add_option("--platform", cb.platform, "Platform file")->required();
  cb_cmd->add_option("--system", cb.system, "ASTRA-sim system configuration (JSON)");
  cb_cmd->add_option("--op", cb.op,
                     "all_reduce, reduce_scatter, all_gather, all_to_all, all_to_all_v, broadcast, reduce, "
                     "gather, scatter, barrier");
  cb_cmd->add_option("--algo", cb.algo, "Algorithm (default: chosen by platform and size)");
  cb_cmd->add_option("-b,--min-bytes", cb.min_bytes, "Smallest size (K, M, G, T, P: 1024-based)");
  cb_cmd->add_option("-e,--max-bytes", cb.max_bytes, "Largest size");
  cb_cmd->add_option("-f,--factor", cb.factor, "Size multiplier between rows (> 1)");
  cb_cmd->add_option("--json", cb.json, "Write the rows as JSON");
  cb_cmd->add_option("--chunks", cb.chunks, "Pipelined chunks per collective")
      ->check(CLI::Range(std::uint64_t{1}, limits::kMaxChunks));
  cb_cmd->add_option("--root", cb.root, "Root NPU of rooted collectives");
  cb_cmd->add_flag("--data", cb.data, "Carry real bytes and check every result");
  cb_cmd->add_flag("--force", cb.force, force_help);
  cb_cmd->add_option("--dtype", cb.dtype, "fp32, fp16, bf16, int32");
  cb_cmd->add_option("--redop", cb.redop, "sum, min, max");
  add_rtl_options(cb_cmd, cb.rtl);
  cb_cmd->add_option("--npus", cb.npus,
                     "Run over the first N NPUs only, the others idle (as CUDA_VISIBLE_DEVICES does)")
      ->check(CLI::PositiveNumber);
  cb_cmd->add_flag("-q,--quiet", cb.quiet, "Print nothing but errors");

  // Bounds on generator flags: beyond them a trace would not be simulated
  // on one machine, and a negative number would otherwise wrap to 2^64.
  const CLI::Range kNpuRange(1, limits::kMaxNpus);
  const CLI::Range kByteRange(std::uint64_t{0}, limits::kMaxBytes);
  const CLI::Range kMicrosRange(0.0, 1e9);  // up to 1,000 s
  constexpr std::uint64_t kMaxGeneratedNodes = 100000000;  // per NPU: about 4 GB of trace each
  CLI::App* gen_cmd = app.add_subcommand("gen", "Write Chakra traces");
  gen_cmd->require_subcommand(1);
  CLI::App* gen_coll = gen_cmd->add_subcommand("collective", "A collective microbenchmark, one trace per NPU");
  int gen_npus = 0;
  std::string gen_type = "all_reduce";
  std::uint64_t gen_bytes = 1 << 20;
  std::string gen_out;
  int gen_iterations = 1;
  gen_coll->add_option("--npus", gen_npus, "Number of NPUs")->required()->check(kNpuRange);
  gen_coll->add_option("--type", gen_type, "Collective type (all_reduce, all_gather, ...)");
  gen_coll->add_option("--bytes", gen_bytes, "Collective size in bytes")->required()->check(kByteRange);
  gen_coll->add_option("--iterations", gen_iterations, "Back-to-back repetitions")->check(CLI::Range(1, 1000000));
  gen_coll->add_option("--out", gen_out, "Output prefix: PREFIX.<rank>.et")->required();

  CLI::App* gen_pipe = gen_cmd->add_subcommand("pipeline", "A GPipe pipeline: stages pass activations and gradients");
  int pipe_stages = 4, pipe_mb = 8;
  double pipe_us = 100;
  std::uint64_t pipe_bytes = 1 << 20;
  std::string pipe_out;
  gen_pipe->add_option("--stages", pipe_stages, "Pipeline stages (one NPU each)")->check(kNpuRange);
  gen_pipe->add_option("--microbatches", pipe_mb, "Microbatches per step")->check(CLI::Range(1, 1000000));
  gen_pipe->add_option("--compute-us", pipe_us, "Compute per microbatch and stage, each way (us)")->check(kMicrosRange);
  gen_pipe->add_option("--bytes", pipe_bytes, "Activation (and gradient) bytes passed between stages")->check(kByteRange);
  gen_pipe->add_option("--out", pipe_out, "Output prefix")->required();

  CLI::App* gen_train = gen_cmd->add_subcommand("training", "A transformer training step with DP, TP and PP");
  traces::TrainingShape shape;
  std::string train_out;
  gen_train->add_option("--dp", shape.dp, "Data-parallel degree")->check(kNpuRange);
  gen_train->add_option("--tp", shape.tp, "Tensor-parallel degree")->check(kNpuRange);
  gen_train->add_option("--pp", shape.pp, "Pipeline-parallel degree")->check(kNpuRange);
  gen_train->add_option("--layers", shape.layers, "Transformer layers")->check(CLI::Range(1, 100000));
  gen_train->add_option("--hidden", shape.hidden, "Hidden size")->check(CLI::Range(1, 1 << 20));
  gen_train->add_option("--seq", shape.seq, "Sequence length")->check(CLI::Range(1, 1 << 24));
  gen_train->add_option("--batch", shape.batch, "Micro-batch size (sequences)")->check(CLI::Range(1, 1 << 16));
  gen_train->add_option("--microbatches", shape.microbatches, "Microbatches per step")->check(CLI::Range(1, 100000));
  gen_train->add_option("--iterations", shape.iterations, "Training steps")->check(CLI::Range(1, 100000));
  gen_train->add_option("--out", train_out, "Output prefix (also writes PREFIX.comm_groups.json)")->required();

  CLI::App* gen_off = gen_cmd->add_subcommand("offload", "Training steps that offload optimizer state to remote memory");
  int off_npus = 8, off_steps = 3;
  double off_us = 1000;
  std::uint64_t off_grad = 256ull << 20, off_state = 1ull << 30;
  std::string off_out;
  gen_off->add_option("--npus", off_npus, "Number of NPUs")->check(kNpuRange);
  gen_off->add_option("--steps", off_steps, "Training steps")->check(CLI::Range(1, 1000000));
  gen_off->add_option("--compute-us", off_us, "Forward compute per step (us); backward takes twice as long")
      ->check(kMicrosRange);
  gen_off->add_option("--gradient-bytes", off_grad, "Bytes of the gradient all-reduce")->check(kByteRange);
  gen_off->add_option("--state-bytes", off_state, "Optimizer state loaded and stored per step")->check(kByteRange);
  gen_off->add_option("--out", off_out, "Output prefix")->required();

  CLI::App* gen_long = gen_cmd->add_subcommand("long", "A long trace for benchmarks");
  int long_npus = 8;
  std::uint64_t long_nodes = 1000, long_every = 100;
  std::string long_out;
  gen_long->add_option("--npus", long_npus, "Number of NPUs")->check(kNpuRange);
  gen_long->add_option("--nodes", long_nodes, "Nodes per NPU")->check(CLI::Range(std::uint64_t{1}, kMaxGeneratedNodes));
  gen_long->add_option("--collective-every", long_every, "An all-reduce every N nodes (0: none)")
      ->check(CLI::Range(std::uint64_t{0}, kMaxGeneratedNodes));
  bool long_independent = false;
  gen_long->add_flag("--independent", long_independent, "No dependencies between nodes (the trace window's worst case)");
  gen_long->add_option("--out", long_out, "Output prefix")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  }

  try {
    if (run_cmd->parsed()) return run(run_args);
    if (cb_cmd->parsed()) return collbench(cb);
    if (gen_coll->parsed()) {
      const auto type = collective_from_name(gen_type);
      if (!type) throw InputError("--type " + gen_type + ": unknown collective type");
      traces::write_collective_microbenchmark(gen_out, gen_npus, static_cast<int>(*type), gen_bytes, gen_iterations);
      return kExitOk;
    }
    if (gen_pipe->parsed()) {
      traces::write_pipeline(pipe_out, pipe_stages, pipe_mb, pipe_us, pipe_bytes);
      return kExitOk;
    }
    if (gen_train->parsed()) {
      if (static_cast<std::int64_t>(shape.dp) * shape.tp * shape.pp > limits::kMaxNpus) {
        throw InputError("--dp x --tp x --pp is more than " + std::to_string(limits::kMaxNpus) + " NPUs");
      }
      traces::write_training_step(train_out, shape);
      std::cout << "run it with --comm-groups " << train_out << ".comm_groups.json on a platform of "
                << shape.dp * shape.tp * shape.pp << " NPUs\n";
      return kExitOk;
    }
    if (gen_off->parsed()) {
      traces::write_offload(off_out, off_npus, off_steps, off_us, off_grad, off_state);
      return kExitOk;
    }
    if (gen_long->parsed()) {
      if (long_nodes * static_cast<std::uint64_t>(long_npus) > kMaxGeneratedNodes) {
        throw InputError("--nodes x --npus is more than " + std::to_string(kMaxGeneratedNodes) +
                         " nodes (about 4 GB of traces)");
      }
      traces::write_long_trace(long_out, long_npus, long_nodes, long_every, long_independent);
      return kExitOk;
    }
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const traces::TraceError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const ModelError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
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
  return kExitInternal;
}

// Our own main: SystemC's prints a copyright banner on stdout before sc_main,
// which would mix with the results.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
