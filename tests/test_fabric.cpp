// Packet-level contention, checked against closed forms: uncontended
// transfers over several hops, shared links, incast, disjoint paths, credit
// flow control, and a ring all-reduce through a switch.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "platforms/run/simulation.h"
#include "support/fabric_harness.h"
#include "support/test_util.h"
#include "traces/generator/generators.h"

using namespace fabricsim;
using testutil::Flow;
using testutil::run_transfers;

namespace {

constexpr std::uint64_t MiB = 1u << 20;

double ns(Tick t) {
  return ticks_to_ns(t);
}
/// Wire bytes of `bytes` in packets of `mtu` with `header` bytes each.
double wire(double bytes, double mtu, double header) {
  return bytes + std::ceil(bytes / mtu) * header;
}

class FourHops : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(FourHops, OneMessageTakesLatenciesPlusTheBottleneck) {
  // npu0 -100-> sw0 -50-> sw1 -200-> sw2 -100-> npu1 (GB/s); switch hops 50 ns.
  const std::uint64_t bytes = GetParam();
  const auto run = run_transfers(testutil::kFourHops, {Flow{0, 1, bytes}});
  const double expected = 1000 + 3 * 50 + wire(static_cast<double>(bytes), 4096, 64) / 50.0;
  EXPECT_NEAR(ns(run.done[0]), expected, 0.005 * expected) << bytes << " bytes";
}

INSTANTIATE_TEST_SUITE_P(Sizes, FourHops, ::testing::Values(4096u, 10 * MiB, 100 * MiB));

TEST(Fabric, AFlowAloneOnTheDumbbellGetsTheFullLink) {
  const std::uint64_t S = 64 * MiB;
  const auto alone = run_transfers(testutil::kDumbbell, {Flow{0, 2, S}});
  const double expected = 1500 + S / 100.0;
  EXPECT_NEAR(ns(alone.done[0]), expected, 0.005 * expected);
}

TEST(Fabric, TwoFlowsSharingALinkEachGetHalfItsBandwidth) {
  const std::uint64_t S = 64 * MiB;
  const auto shared = testutil::run_transfers(testutil::kDumbbell, {Flow{0, 2, S}, Flow{1, 3, S}});
  const double half_bandwidth_ns = 1500 + 2 * S / 100.0;
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(ns(shared.done[static_cast<std::size_t>(i)]), half_bandwidth_ns, 0.05 * half_bandwidth_ns)
        << "flow " << i;
  }
}

TEST(Fabric, FlowsOnDisjointPathsDoNotSlowEachOther) {
  const std::string yaml = R"(
npus: 8
fabrics:
  - topology: switch
    link: { bandwidth_GBps: 100, latency_ns: 500 }
)";
  const std::uint64_t S = 32 * MiB;
  // Alone, each would take two link latencies plus S / B.
  const double alone_ns = 1000 + static_cast<double>(S) / 100.0;
  const auto together = run_transfers(yaml, {Flow{0, 1, S}, Flow{2, 3, S}, Flow{4, 5, S}, Flow{6, 7, S}});
  for (Tick t : together.done) EXPECT_NEAR(ns(t), alone_ns, 1e-6 * alone_ns);
}

TEST(Fabric, IncastFinishesAtNTimesSOverB) {
  const std::string yaml = R"(
npus: 8
nic: { header_bytes: 0 }
fabrics:
  - topology: switch
    link: { bandwidth_GBps: 100, latency_ns: 500 }
)";
  const std::uint64_t S = 16 * MiB;
  std::vector<Flow> t;
  for (int src = 1; src < 8; ++src) t.push_back(Flow{src, 0, S});
  const auto run = run_transfers(yaml, t);
  Tick last = 0;
  for (Tick d : run.done) last = std::max(last, d);
  const double expected = 7.0 * S / 100.0;
  EXPECT_NEAR(ns(last), expected, 0.02 * expected);
  // Shared fairly, frame by frame: every flow ends within its last frames
  // of the others (the first-come-first-served-per-message failure mode
  // finishes them at S/B, 2S/B, ... 7S/B).
  for (std::size_t i = 0; i < run.done.size(); ++i) {
    EXPECT_NEAR(ns(run.done[i]), expected, 0.05 * expected) << "flow from NPU " << i + 1;
  }
}

TEST(Fabric, AnOutputServesFramesInTheOrderTheirHeadsArriveNotTheOrderTheyWereAnnounced) {
  // NPU 1's link is 5 us long: its frames are announced to the switch when
  // they start on the link, long before they arrive. NPU 0 sends one frame
  // at 1 us over a 100 ns link; it arrives first and must leave first, with
  // nothing in its way. Forwarding in announcement order once reserved the
  // output for NPU 1's first frame and made NPU 0's wait (3,821 ns became
  // 10,343 ns).
  const std::string yaml = R"(
npus: 3
nic: { mtu_bytes: 4096, header_bytes: 0 }
fabrics:
  - topology: netlist
    switches: [ {name: sw} ]
    links:
      - { from: npu0, to: sw, bandwidth_GBps: 100, latency_ns: 100 }
      - { from: npu1, to: sw, bandwidth_GBps: 100, latency_ns: 5000 }
      - { from: sw, to: npu2, bandwidth_GBps: 100, latency_ns: 100 }
)";
  const std::uint64_t big = 4 * MiB, frame = 256 << 10;
  const auto run = run_transfers(yaml, {Flow{1, 2, big, 0}, Flow{0, 2, frame, ns_to_ticks(1000)}});
  EXPECT_NEAR(ns(run.done[1]), 1000 + 100 + frame / 100.0 + 100, 1);  // alone on the output
  EXPECT_NEAR(ns(run.done[0]), 5000 + big / 100.0 + 100, 1);          // so is NPU 1, later
}

TEST(Fabric, CreditsLimitAFlowToBufferOverRoundTrip) {
  // One 10 us link with a 1 MiB buffer: 16 frames of 64 KiB in flight, and a
  // frame's credit comes back two latencies after it was sent.
  const std::string yaml = R"(
npus: 2
nic: { mtu_bytes: 4096, header_bytes: 0, segment_bytes: 65536 }
fabrics:
  - topology: netlist
    links:
      - { from: npu0, to: npu1, bandwidth_GBps: 100, latency_ns: 10000, buffer_bytes: 1048576 }
)";
  const std::uint64_t S = 256 * MiB;
  const auto run = run_transfers(yaml, {Flow{0, 1, S}});
  const double frame_ns = 65536 / 100.0;
  const double window_ns = frame_ns + 2 * 10000;  // a frame's credit loop
  const double batches = static_cast<double>(S) / (16.0 * 65536);
  const double expected = (batches - 1) * window_ns + 16 * frame_ns + 10000;
  EXPECT_NEAR(ns(run.done[0]), expected, 0.01 * expected);
  EXPECT_GT(ns(run.done[0]), 1.9 * (S / 100.0));  // far from line rate: the buffer binds
}

TEST(Fabric, ABufferTooSmallForAPacketIsRejected) {
  const std::string yaml = R"(
npus: 2
nic: { mtu_bytes: 4096, header_bytes: 64 }
fabrics:
  - topology: netlist
    links:
      - { from: npu0, to: npu1, bandwidth_GBps: 100, latency_ns: 100, buffer_bytes: 2048 }
)";
  try {
    run_transfers(yaml, {});
    FAIL() << "accepted a 2048-byte buffer for 4160-byte packets";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("too small for one 4160-byte packet"), std::string::npos) << e.what();
  }
}

TEST(Fabric, ADanglingLinkIsRejectedWithItsLine) {
  const std::string yaml = "npus: 2\nfabrics:\n  - topology: netlist\n    links:\n      - { from: npu0, to: sw9 }\n";
  try {
    run_transfers(yaml, {});
    FAIL() << "accepted a link to an undeclared switch";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("platform.yaml:5:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dangling link: \"sw9\""), std::string::npos) << e.what();
  }
}

TEST(Fabric, AnUnreachableNpuIsRejected) {
  const std::string yaml = R"(
npus: 4
fabrics:
  - topology: netlist
    switches: [ {name: a}, {name: b} ]
    links:
      - { from: npu0, to: a }
      - { from: npu1, to: a }
      - { from: npu2, to: b }
      - { from: npu3, to: b }
)";
  try {
    run_transfers(yaml, {});
    FAIL() << "accepted two disconnected halves";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("NPU 2 is unreachable from NPU 0"), std::string::npos) << e.what();
  }
}

TEST(Fabric, AllToAllOnATorusWithSmallBuffersDoesNotDeadlock) {
  // Every NPU sends to every other at once through 2-frame buffers: without
  // bubble flow control the rings of the torus lock up.
  const std::string yaml = R"(
npus: 16
nic: { mtu_bytes: 4096, header_bytes: 0, segment_bytes: 16384 }
fabrics:
  - topology: torus
    dims: [4, 4]
    link: { bandwidth_GBps: 50, latency_ns: 200, buffer_bytes: 32768 }
)";
  std::vector<Flow> t;
  for (int a = 0; a < 16; ++a) {
    for (int b = 0; b < 16; ++b) {
      if (a != b) t.push_back(Flow{a, b, 256 * 1024});
    }
  }
  const auto run = run_transfers(yaml, t);
  for (std::size_t i = 0; i < t.size(); ++i) ASSERT_NE(run.done[i], kNever) << "transfer " << i << "\n" << run.stuck;
}

// A ring all-reduce through one switch: every step crosses two links, and
// cut-through means no store-and-forward penalty.
class SwitchAllReduce : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(SwitchAllReduce, MatchesTheClosedFormForTwoLinkHops) {
  const std::uint32_t chunks = GetParam();
  const std::string dir = testutil::scratch_dir("switch-ar");
  const int n = 16;
  const double lat = 500, gibps = 50;
  // Small enough that latency is half the time: a store-and-forward switch
  // would add a step's transfer time per step and miss by far.
  const std::uint64_t S = 4 * MiB;
  const std::string net = testutil::astra_network(dir, "Switch", n, gibps, lat);
  traces::write_collective_microbenchmark(dir + "/ar", n, 0, S);
  PlatformSpec spec = load_platform(net);
  spec.collectives.chunks = chunks;
  spec.collectives.algorithm[static_cast<int>(CollectiveType::kAllReduce)] = AlgorithmKind::kRing;
  Simulation sim(std::move(spec));
  WorkloadSettings ws;
  ws.prefix = dir + "/ar";
  sim.load_workload(ws);
  ASSERT_EQ(sim.run(), Simulation::Outcome::kFinished);
  const double bw_term = 2.0 * (n - 1) / n * static_cast<double>(S) / (gibps * 1073741824.0 / 1e9);
  const double textbook = bw_term + 2 * (n - 1) * 2 * lat;
  for (int r = 0; r < n; ++r) {
    const double finish = ns(sim.platform().npu(r).finish_time());
    if (chunks == 1) {
      EXPECT_NEAR(finish, textbook, 0.01 * textbook) << "NPU " << r;
    } else {
      EXPECT_GE(finish, (bw_term + 2 * lat) * (1 - 1e-6)) << "NPU " << r;
      EXPECT_LE(finish, textbook * (1 + 1e-6)) << "NPU " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Chunks, SwitchAllReduce, ::testing::Values(1u, 4u));

}  // namespace
