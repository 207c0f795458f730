// How collectives run on every NPU (a platform's or a system file's
// settings), without SystemC: the platform description holds it
// (platforms/assembly/platform_spec.h); the engine runs by it
// (collective_engine.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/collectives/collective.h"
#include "tlm/data_type.h"
#include "tlm/kernel/parameters.h"
#include "tlm/kernel/units.h"

namespace fabricsim {

enum class SchedulingPolicy : std::uint8_t { kFifo, kLifo, kPriority };
enum class LevelOrder : std::uint8_t { kBaseline, kThemis };
/// Which of NCCL's protocols the point-to-point algorithms use: `auto`
/// picks per collective by cost (algorithm_choice.h).
enum class ProtocolChoice : std::uint8_t { kAuto, kSimple, kLL, kLL128 };
/// Whose choice the default is: the fastest fabricsim offers (best), or
/// what the library the job runs would pick (nccl: NCCL's tuner,
/// nccl_tuner.h), so that a prediction is of the job users run.
enum class CollectiveLibrary : std::uint8_t { kBest, kNccl };
const char* to_string(SchedulingPolicy p);

/// How collectives run on every NPU (platform or system-file settings).
struct CollectiveConfig {
  /// Per collective type; unset: the default choice (algorithm_choice.h).
  std::optional<AlgorithmKind> algorithm[10];
  std::uint32_t chunks = 4;         // splits of each collective, pipelined
  std::uint32_t channels = 1;       // NCCL's channels: rings side by side (effective_channels)
  std::uint32_t active_chunks = 0;  // chunks in flight per NPU, all collectives together; 0 = no limit
  /// Staged programs (hierarchical): chunks of one collective in one stage at
  /// once on an NPU; 0 = no limit (every chunk runs every stage together).
  std::uint32_t chunks_per_stage = 2;
  /// Staged programs: a collective is cut into at least bytes / pipeline_chunk
  /// chunks so that its stages overlap; 0 = `chunks` only.
  std::uint64_t pipeline_chunk = 32u << 20;
  SchedulingPolicy policy = SchedulingPolicy::kFifo;
  /// Hierarchical all-reduce: every chunk takes the dimensions in ascending
  /// order (baseline), or in the order Themis's greedy balances their load.
  LevelOrder dimension_order = LevelOrder::kBaseline;
  /// Hierarchical all-reduce: each level on the part the level below left,
  /// or on the whole chunk (ASTRA-sim's baseline).
  LevelData level_data = LevelData::kPart;
  /// Direct algorithms: peers per round; 0 = all at once.
  std::uint32_t direct_window = 0;
  DataType dtype = DataType::kFp32;
  ReduceOp op = ReduceOp::kSum;
  bool data = false;                                // carry and check real bytes
  Bandwidth local_reduce = Bandwidth::unlimited();  // time to combine received bytes locally
  ProtocolChoice protocol = ProtocolChoice::kAuto;
  CollectiveLibrary library = CollectiveLibrary::kBest;
  /// The default choice: algorithms the cost model estimates within this
  /// fraction of its fastest are simulated before one is taken (what the
  /// estimate does not see, such as head-of-line blocking, then decides);
  /// 0: the estimate alone decides.
  double probe_margin = 0.1;
  /// Per collective of a point-to-point algorithm (ring, tree, direct,
  /// halving-doubling), by its protocol: the kernel's start and setup before
  /// its first step (NCCL's base latency). In-switch collectives have none.
  Tick launch_simple = 0;
  Tick launch_ll = 0;
  Tick launch_ll128 = 0;
  Tick launch(CommProtocol p) const { return per_protocol(p, Tick{0}, launch_simple, launch_ll, launch_ll128); }
  std::vector<Dimension> dims;  // the platform's dimensions, for hierarchical
  /// A collective type's own levels where they run other algorithms than
  /// all-reduce's (an ASTRA-sim system file's per-type lists); empty: dims.
  std::vector<Dimension> dims_by_type[10];
  /// ASTRA-sim's rule for a group smaller than the platform: a ring over its
  /// NPUs, whatever the system file names (CommunicatorGroup::
  /// get_collective_plan). Set by system files only.
  bool subgroups_ring = false;
  const std::vector<Dimension>& levels_for(CollectiveType t) const {
    const auto& own = dims_by_type[static_cast<int>(t)];
    return own.empty() ? dims : own;
  }
  /// The parameters a platform file sets (algorithms are read apart).
  static const ParamTable<CollectiveConfig>& table();
};

}  // namespace fabricsim
