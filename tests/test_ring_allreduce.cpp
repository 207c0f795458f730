// The first path end to end: a Chakra all-reduce trace on a ring, against the
// textbook ring all-reduce time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "platforms/assembly/loader.h"
#include "platforms/run/simulation.h"
#include "support/test_util.h"
#include "traces/generator/generators.h"

using namespace fabricsim;

namespace {

constexpr double kBandwidthGiBps = 50.0;  // ASTRA-sim's GB/s: 2^30 bytes per second
constexpr double kLatencyNs = 500.0;

struct Case {
  int npus;
  std::uint64_t bytes;
  std::uint32_t chunks;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.npus << " NPUs, " << c.bytes << " bytes, " << c.chunks << " chunks";
}

std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return std::to_string(c.npus) + "npus_" + (c.bytes >= (1u << 30) ? "1GiB" : "1MiB") + "_" + std::to_string(c.chunks) +
         "chunks";
}

class RingAllReduce : public ::testing::TestWithParam<Case> {};

TEST_P(RingAllReduce, EveryNpuFinishesAtTheClosedForm) {
  const Case c = GetParam();
  const std::string dir = testutil::scratch_dir("ring");
  const std::string net = testutil::astra_network(dir, "Ring", c.npus, kBandwidthGiBps, kLatencyNs);
  traces::write_collective_microbenchmark(dir + "/ar", c.npus, 0 /* ALL_REDUCE */, c.bytes);

  PlatformSpec spec = load_platform(net);
  spec.collectives.chunks = c.chunks;
  Simulation sim(std::move(spec));
  WorkloadSettings ws;
  ws.prefix = dir + "/ar";
  sim.load_workload(ws);
  ASSERT_EQ(sim.run(), Simulation::Outcome::kFinished);

  // Each chunk's ring runs 2(n-1) rounds of one message of S/(n c) bytes to
  // the next NPU, all in one direction; a message's time on the wire is its
  // frames' (256 KiB each), each rounded to the picosecond as the link does.
  // With c chunks in flight a round's latency is hidden behind the other
  // chunks' messages when (c-1) m >= L: the link is then never idle and the
  // last message's latency is the only one seen. Otherwise every round
  // waits out its latency and the chunks follow each other m apart.
  const auto n = static_cast<std::uint64_t>(c.npus);
  const double bytes_per_ps = kBandwidthGiBps * 1073741824.0 / 1e12;
  const auto wire = [&](std::uint64_t b) {
    return static_cast<Tick>(std::llround(static_cast<double>(b) / bytes_per_ps));
  };
  const std::uint64_t frame = 256 << 10, message = c.bytes / n / c.chunks;
  const Tick m = message / frame * wire(frame) + (message % frame ? wire(message % frame) : 0);
  const Tick latency = ns_to_ticks(kLatencyNs);
  const std::uint64_t rounds = 2 * (n - 1);
  const Tick expected = std::max(rounds * c.chunks * m + latency, rounds * (m + latency) + (c.chunks - 1) * m);
  for (int r = 0; r < c.npus; ++r) {
    EXPECT_EQ(sim.platform().npu(r).finish_time(), expected)
        << "NPU " << r << ": " << ticks_to_ns(expected) << " ns expected";
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, RingAllReduce,
                         ::testing::Values(Case{4, 1u << 20, 1}, Case{4, 1u << 30, 1}, Case{8, 1u << 20, 1},
                                           Case{8, 1u << 30, 1}, Case{64, 1u << 20, 1}, Case{64, 1u << 30, 1},
                                           Case{1024, 1u << 20, 1}, Case{1024, 1u << 30, 1}, Case{4, 1u << 20, 4},
                                           Case{4, 1u << 30, 4}, Case{8, 1u << 20, 4}, Case{8, 1u << 30, 4},
                                           Case{64, 1u << 20, 4}, Case{64, 1u << 30, 4}, Case{1024, 1u << 20, 4},
                                           Case{1024, 1u << 30, 4}),
                         name_of);

// The ASTRA-sim microbenchmark traces (written by ASTRA-sim's own tools) run
// and match the same closed form.
class AstraSimAllReduce : public ::testing::TestWithParam<int> {};

TEST_P(AstraSimAllReduce, RunsAtTheClosedForm) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const int npus = GetParam();
  const std::string dir = testutil::scratch_dir("astra");
  const std::string net = testutil::astra_network(dir, "Ring", npus, kBandwidthGiBps, kLatencyNs);
  PlatformSpec spec = load_platform(net);
  spec.collectives.chunks = 1;
  Simulation sim(std::move(spec));
  WorkloadSettings ws;
  ws.prefix =
      testutil::shared_trace("astra-sim/microbenchmarks/all_reduce/" + std::to_string(npus) + "npus_1MB/all_reduce");
  sim.load_workload(ws);
  ASSERT_EQ(sim.run(), Simulation::Outcome::kFinished);
  const double n = npus;
  const double textbook =
      2 * (n - 1) / n * 1048576.0 / (kBandwidthGiBps * 1073741824.0 / 1e9) + 2 * (n - 1) * kLatencyNs;
  for (int r = 0; r < npus; ++r) {
    EXPECT_NEAR(ticks_to_ns(sim.platform().npu(r).finish_time()), textbook, 0.01 * textbook) << "NPU " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, AstraSimAllReduce, ::testing::Values(4, 8));

}  // namespace
