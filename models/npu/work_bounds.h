// Bounds on work that would not finish, checked before it starts. A run
// (every collective, send and operation of its workload, or a collbench
// sweep) is estimated in messages, frames and operations to simulate, and in
// the memory they hold: the platform, the messages in flight, the workloads'
// windows of nodes and, in data mode, the buffers. The estimate is printed
// before the run (`--estimate` prints it and stops); past kWarnSeconds of
// estimated wall time the run says so; past kMaxSeconds, or past the memory
// the process may use, it is refused (exit 2) unless forced (--force). A
// 1 PiB all-reduce would otherwise run for days, an all-to-all over 4,096
// NPUs die of bad_alloc.
#pragma once

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "models/collectives/collective_work.h"

namespace fabricsim {

struct WorkBounds {
  // The costs of simulating on the project's machine (docs/performance.md,
  // "The resource estimate"), calibrated on single-algorithm collbench runs
  // of ring8, torus4x4, dlrm_flat100g (TCP), dgx_h100 and dgx_h100_16node:
  // a message's engine rounds, NIC overhead and matching, and with HBM its
  // DMA and the memory model's sharing; a frame's links and switches, its
  // DMA through HBM, and a TCP transport's acknowledgements. Per-unit costs
  // grow once the platform's state is well past the 32 MiB last-level cache
  // (kCacheBytes, calibrated on Selene's sweep).
  static constexpr double kSecondsPerMessage = 0.3e-6;
  static constexpr double kSecondsPerMessageDma = 4.5e-6;
  static constexpr double kSecondsPerFrame = 0.3e-6;
  static constexpr double kSecondsPerFrameDma = 0.9e-6;
  static constexpr double kSecondsPerFrameAcked = 0.9e-6;
  static constexpr double kSecondsPerOperation = 1.0e-6;
  static constexpr double kStartSeconds = 0.01;  // loading, elaborating, reporting a small platform
  /// Building a platform, per byte it takes: 1 to 5.5 s per GB measured
  /// (docs/performance.md, "Building a platform": fully connected fabrics,
  /// Selene, dgx_h100_16node).
  static constexpr double kBuildSecondsPerByte = 3e-9;
  static constexpr double kCacheBytes = 512e6;              // per-unit costs x (1 + platform bytes / this)
  static constexpr double kBaseBytes = 16.0 * (1 << 20);    // the process before any platform (libraries, SystemC)
  static constexpr double kBytesPerMessageInFlight = 1024;  // a message, its frames' state, its queue entries
  static constexpr double kBytesPerHeldNode = 512;          // a trace node in a workload's window
  static constexpr double kBytesPerChunkState = 2048;       // a collective chunk's program and progress
  static constexpr double kWarnSeconds = 600;               // say so past 10 minutes
  static constexpr double kMaxSeconds = 7200;               // refuse past 2 hours (our runs take seconds to minutes)

  // On this platform (work_bounds(Platform)): frames per fabric, and for
  // sends (whose route the estimate does not follow) the smallest frame.
  FrameModel frames;
  std::uint64_t frame_bytes = 256 << 10;
  double seconds_per_frame = kSecondsPerFrame;
  double seconds_per_message = kSecondsPerMessage;
  double platform_bytes = 0;                           // the built platform (Platform::build_memory_estimate)
  std::uint64_t memory_bytes = 0;                      // the memory this process may use; 0: not checked
  std::string memory_limit = "this machine's memory";  // what sets memory_bytes, for the message
  bool force = false;

  struct Estimate {
    double messages = 0;       // point-to-point messages: the collectives' and the workload's own
    double frames = 0;         // the frames they are cut into
    double frame_seconds = 0;  // what those frames cost to simulate
    double operations = 0;     // workload nodes read and run (compute, memory, communication)
    double peak_messages = 0;  // messages in flight at once (the largest collective's)
    double chunk_states = 0;   // collective chunks held at once (the largest collective's)
    double held_nodes = 0;     // workload nodes held at once (every rank's window)
    double data_bytes = 0;     // data mode: buffers held at once
    Estimate& operator+=(const Estimate& o) {
      messages += o.messages;
      frames += o.frames;
      frame_seconds += o.frame_seconds;
      operations += o.operations;
      peak_messages = std::max(peak_messages, o.peak_messages);  // one collective's at a time
      chunk_states = std::max(chunk_states, o.chunk_states);
      held_nodes += o.held_nodes;
      data_bytes = std::max(data_bytes, o.data_bytes);
      return *this;
    }
  };

  /// Estimated wall time in seconds and peak memory in bytes.
  double seconds(const Estimate& e) const;
  double memory(const Estimate& e) const;

  /// Data mode's buffers for one collective of `bytes` among `members`:
  /// about 3 x bytes per member (input, result, reference).
  static double data_bytes(std::uint64_t bytes, std::size_t members) {
    return 3 * static_cast<double>(bytes) * static_cast<double>(members);
  }
  /// `runs` runs of a collective whose programs count `w`
  /// (collective_work); `data_bytes` its buffers in data mode.
  static Estimate collective(const CollectiveWork& w, double runs, double data_bytes = 0) {
    Estimate e;
    e.messages = w.messages * runs;
    e.frames = w.frames * runs;
    e.frame_seconds = w.frame_seconds * runs;
    e.peak_messages = w.peak_messages;
    e.chunk_states = w.chunk_states;
    e.data_bytes = data_bytes;
    return e;
  }
  /// A point-to-point message of `bytes`.
  Estimate message(std::uint64_t bytes) const;

  /// The estimate for reports: its counts, frame size, wall seconds and
  /// memory bytes (scripts/check-estimates.py holds them against measured runs).
  nlohmann::ordered_json json(const Estimate& e) const;
  /// The estimate in a line: "3.1e+06 messages (4.2e+06 frames), 2e+05
  /// operations: about 5 s of wall time and 310 MiB of memory".
  std::string describe(const Estimate& e) const;
  /// "" when the work is modest; a warning with the estimate when it is
  /// long; throws std::invalid_argument, naming `what`, the estimate and the
  /// limit, past the limits unless `force`.
  std::string check(const Estimate& e, const std::string& what) const;

  /// `bytes` as the bounds' messages write them: "1.5 GiB".
  static std::string gib_text(double bytes);

  /// This machine's physical memory in bytes (0 if unknown).
  static std::uint64_t physical_memory();

  /// The memory this process may use: the least of the machine's, its
  /// address-space and data limits (ulimit -v, -d), its cgroup's limit and
  /// its ancestors' (v2 memory.max, v1 memory.limit_in_bytes: containers,
  /// systemd slices, Slurm's task/cgroup) and Slurm's allocation (SLURM_MEM_PER_NODE, or
  /// SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE); bytes 0 when none is known.
  struct MemoryLimit {
    std::uint64_t bytes = 0;
    std::string what;  // "this machine's memory", "the address-space limit (ulimit -v)", ...
  };
  static MemoryLimit usable_memory();
};

}  // namespace fabricsim
