// Runs a collective's programs for every member of its group in memory,
// without SystemC or a fabric: the functional half of the collective library
// on its own, for unit tests of the algorithms and for anyone writing a new
// one.
//
// It runs each program by the round rules the engine and the cost model
// follow too (round_cursor.h): a round posts its sends when it starts and
// ends when each of its receives has been matched, by chunk, tag and sender,
// to exactly one message; the next round then starts. Switch reduction units are ideal here (IdealReductionUnits): a
// contribution is combined with the group's others and the result delivered
// once all have arrived, a pull request reads every member's range at once, a
// multicast reaches every member, the sender included.
//
// What it refuses, with std::logic_error naming member, chunk, round and
// transfer: a member that can make no progress (a receive no one sends), a
// message no receive takes, two messages that one receive could take, a
// receive whose size differs from its message's, a transfer outside the
// buffer, a reduction some member never contributed to.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "models/collectives/collective.h"

namespace fabricsim {

/// Switch reduction units as a platform would offer them to one group: the
/// same units and weights for every member (one switch per stripe).
class IdealReductionUnits final : public InSwitchResolver {
 public:
  /// `weights`: each stripe's share of the bytes (a DGX H100: 5, 4, 4, 5).
  IdealReductionUnits(std::vector<std::uint64_t> weights, bool pull, std::uint64_t pipeline_bytes = 1 << 20,
                      std::uint32_t pipeline_depth = 4);
  InSwitchPlan in_switch_plan(const std::vector<int>& ranks, int me) override;

 private:
  InSwitchPlan plan_;
};

struct ExecutionStats {
  std::uint32_t most_rounds = 0;     // the most rounds any member's program ran
  std::uint64_t messages = 0;        // messages matched to a receive
  std::uint64_t bytes_sent = 0;      // by members (pull requests count their range)
  std::uint64_t bytes_received = 0;  // by members
  std::uint64_t unit_messages = 0;   // contributions and pull requests taken by reduction units
};

/// Runs every member's programs to the end. `buffers` holds each member's
/// working buffer (working_bytes() long; element-wise wrapping 32-bit
/// integer sums when reducing): they end as the collective leaves them.
/// Empty buffers: sizes and matching are checked, no data moves.
ExecutionStats execute_programs(const ProgramPlan& plan, std::vector<std::vector<std::uint8_t>>& buffers);

/// The same for programs made another way (a new algorithm, a test's
/// scripted rounds): `programs_of(m)` gives member m's, one per chunk.
using ProgramsOf = std::function<std::vector<std::unique_ptr<Program>>(int member)>;
ExecutionStats execute_programs(const std::vector<int>& ranks, const ProgramsOf& programs_of,
                                std::vector<std::vector<std::uint8_t>>& buffers);

}  // namespace fabricsim
