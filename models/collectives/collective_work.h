// What a collective costs the simulator, counted from the programs its
// members run rather than from its bytes: a 1 MiB ring all-reduce over
// 8,192 NPUs is 134 million messages, not four frames per NPU, and
// `collectives.chunks` multiplies them. For the run's resource estimate
// (models/npu/work_bounds.h), before anything runs.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/collectives/algorithm_choice.h"
#include "models/collectives/collective_engine.h"

namespace fabricsim {

/// How a platform cuts messages into frames, and what a frame costs to
/// simulate, per fabric (Platform::frame_sizes).
struct FrameModel {
  struct Fabric {
    std::uint64_t frame_bytes = 1 << 20;  // a frame's payload
    double seconds = 0;                   // the wall time one frame costs to simulate
  };
  Fabric fallback;  // where fabric_of gives none (or is not set)
  std::vector<Fabric> fabrics;
  /// The fabric (index into `fabrics`) a message from NPU a to NPU b takes;
  /// -1 or unset: `fallback`.
  std::function<int(int, int)> fabric_of;
  const Fabric& between(int a, int b) const {
    const int f = fabric_of ? fabric_of(a, b) : -1;
    return f >= 0 && static_cast<std::size_t>(f) < fabrics.size() ? fabrics[static_cast<std::size_t>(f)] : fallback;
  }
};

struct CollectiveWork {
  double messages = 0;       // point-to-point messages: every member, chunk and channel
  double frames = 0;         // those messages in frames of at most their fabric's payload, at least one each
  double frame_seconds = 0;  // the wall time those frames cost to simulate (FrameModel)
  /// Messages posted at once at most, every member together: the largest
  /// round of each chunk in flight together (CollectiveConfig::active_chunks
  /// of them where it is set; a direct all-to-all over n NPUs posts
  /// n (n - 1) at once).
  double peak_messages = 0;
  /// Chunk states held while it runs, every member together (a program and
  /// its progress per chunk and channel, all made when the collective starts).
  double chunk_states = 0;
};

/// Counts the programs `spec` runs under `config` (the plan every member's
/// engine makes: plan_of, make_staged_programs). Members and chunks are
/// sampled past kExactMembers and kExactPrograms and scaled, so the count is
/// exact for small groups and an estimate (members run alike) for large ones.
/// Throws std::invalid_argument when the algorithm does not apply.
CollectiveWork collective_work(const CollectiveSpec& spec, const CollectiveConfig& config, InSwitchResolver* in_switch,
                               const FrameModel& frames);
/// The same with one frame size everywhere.
CollectiveWork collective_work(const CollectiveSpec& spec, const CollectiveConfig& config, InSwitchResolver* in_switch,
                               std::uint64_t frame_bytes);

/// The work of the candidates the choice probe simulates before the
/// collective runs (probe_candidates: where the cost model cannot tell them
/// apart), each in a copy of the simulation; nothing where the estimate
/// decides alone.
CollectiveWork probe_work(const CollectiveSpec& spec, const CollectiveConfig& config, const PlatformHints& hints,
                          bool group_is_world, InSwitchResolver* in_switch, const FrameModel& frames);

constexpr int kExactMembers = 16;
constexpr std::size_t kExactPrograms = 8;

}  // namespace fabricsim
