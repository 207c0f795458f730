// Design-space sweeps: a grid of fabricsim runs from one spec file, each
// point run as its own process (locally in a pool, as a Slurm job array, or
// by any scheduler from printed commands), each writing one JSON with its
// provenance, gathered into one CSV (docs/sweep.md).
//
// A spec (YAML):
//   name: link-bandwidth
//   command: collbench                 # or run
//   args: { op: all_reduce }           # fixed for every point
//   grid:                              # the cartesian product of these axes
//     platform: [../../platforms/ring8.yaml, ../../platforms/torus4x4.yaml]
//     set: { fabrics.0.link.bandwidth: [50 GB/s, 100 GB/s] }
//     algorithm: [ring, direct]
//     bytes: [1M, 64M]
//   zip:                               # axes whose lists go together
//     - set: { fabrics.0.link.latency: [100 ns, 500 ns], fabrics.0.link.buffer: [1 MiB, 4 MiB] }
//   metrics: [rows.0.time_us, rows.0.busbw_GBps]
// Paths in a spec are relative to the spec's folder.
//
// Layout of the output folder DIR:
//   manifest.json        the spec, its hash, fabricsim's version, every point
//   points/ID.json       one per point run: status, exit code, message, the
//                        command line, input hashes, metrics and the
//                        command's own JSON; ID is a hash of the resolved
//                        inputs (command, arguments, input file contents,
//                        fabricsim version and commit)
//   results.csv          one row per point, a column per swept axis and metric
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tlm/util/sha256.h"

namespace fabricsim {

/// `word` as a POSIX shell reads it back (quoted when it is not plain).
std::string shell_quoted(const std::string& word);

/// One point: the value of each swept axis, and the arguments that run it.
struct SweepPoint {
  std::size_t index = 0;
  std::string id;                                         // 16 hex digits
  std::vector<std::pair<std::string, std::string>> axes;  // in the spec's order
  std::vector<std::string> args;                          // after the program name, output flag not included
  std::map<std::string, std::string> inputs;              // file -> sha256
};

struct SweepPlan {
  std::string name;
  std::string spec_file;
  std::string spec_text;
  std::string command;                  // collbench | run
  std::vector<std::string> axis_names;  // the CSV's parameter columns
  std::vector<std::string> metrics;
  std::vector<std::string> generate;  // `fabricsim gen` argument lists to run first
  std::vector<SweepPoint> points;
};

/// Reads a spec and expands it into points. `fabricsim` is the binary's
/// version and commit (part of every point's id). InputError naming the
/// file, the place and what is accepted on a bad spec.
SweepPlan plan_sweep(const std::string& spec_file, const std::string& out_dir, const nlohmann::json& fabricsim);

/// Where the binary that runs points lives (this process's own).
std::string self_executable();

struct SweepOptions {
  std::string out_dir;
  std::string backend = "local";  // local | slurm | print
  unsigned jobs = 0;              // local: processes at once; 0: one per CPU
  bool dry_run = false;
  // slurm
  std::string partition, time_limit, memory;
  unsigned throttle = 0;  // %N: array tasks at once; 0: no limit
  bool wait = false;
  bool retry_failed = false;  // run failed points again, not only missing ones
  std::vector<std::string> sbatch_args;
  bool progress = true;
};

/// Runs `fabricsim sweep`: writes the manifest (refusing a DIR that holds
/// another sweep), then runs the points not yet done. Returns the exit code:
/// kExitOk when every point is ok, kExitSweepIncomplete when some failed or
/// have not run (slurm without --wait, print), kExitInterrupted on a signal.
int run_sweep(const std::string& spec_file, const SweepOptions& options, const nlohmann::json& fabricsim);

/// `fabricsim sweep point DIR INDEX`: runs one point of the manifest in DIR
/// and writes its point file (a failed run is recorded, not an error).
/// `fabricsim` is this binary's version and commit, recorded in the point
/// (with a warning when the manifest was made by another).
int run_sweep_point(const std::string& out_dir, std::size_t index, const nlohmann::json& fabricsim);

/// `fabricsim sweep collect DIR`: gathers the point files into
/// DIR/results.csv; kExitOk when every point is ok, else kExitSweepIncomplete.
int collect_sweep(const std::string& out_dir);

}  // namespace fabricsim
