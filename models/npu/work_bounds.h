// Bounds on work that would not finish, checked before it starts. A
// collective (or a sweep of them) is estimated in frames to simulate and, in
// data mode, in bytes of buffers to hold: past kWarnSeconds of estimated wall
// time the run says so with the estimate; past kMaxSeconds, or with data past
// this machine's memory, it is refused (exit 2) unless forced (--force).
// A 1 PiB all-reduce would otherwise run for days, or die of bad_alloc.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "models/collectives/collective.h"

namespace fabricsim {

struct WorkBounds {
  /// Frames simulated per second of wall time, for the estimate: measured on
  /// the project's machine (docs/performance.md: 8.4 million one-frame
  /// messages in 3.0 s on 1,024 NPUs; about a third of that at 2,048).
  static constexpr double kFramesPerSecond = 2e6;
  static constexpr double kWarnSeconds = 600;  // say so past 10 minutes
  static constexpr double kMaxSeconds = 7200;  // refuse past 2 hours (our runs take seconds to minutes)

  std::uint64_t frame_bytes = 256 << 10;               // the platform's smallest segment (frame payload)
  std::uint64_t memory_bytes = 0;                      // the memory this process may use, for data mode; 0: not checked
  std::string memory_limit = "this machine's memory";  // what sets memory_bytes, for the message
  bool force = false;

  struct Estimate {
    double frames = 0;      // frames injected into the fabric
    double data_bytes = 0;  // data mode: buffers held at once
    Estimate& operator+=(const Estimate& o) {
      frames += o.frames;
      data_bytes = std::max(data_bytes, o.data_bytes);  // one collective at a time
      return *this;
    }
  };

  /// One collective of `bytes` among `members` (ring-like algorithms: an
  /// all-reduce injects 2 (n - 1) x bytes over all members, the others
  /// (n - 1) x bytes; data mode holds about 3 x bytes per member).
  Estimate collective(CollectiveType type, std::uint64_t bytes, std::size_t members, bool data) const;
  /// A point-to-point message.
  Estimate message(std::uint64_t bytes) const;

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
