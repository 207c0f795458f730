// The flow-level fabric model on built platforms (transport.model: flow),
// against closed forms: latency plus the bottleneck, max-min sharing on a
// bottleneck (two and three flows), a flow limited elsewhere, incast,
// striping, the NIC's injection cap; and the packet model's answers where
// the two must agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "support/fabric_harness.h"
#include "support/test_util.h"

using namespace fabricsim;
using testutil::Flow;
using testutil::run_transfers;

namespace {

constexpr std::uint64_t MiB = 1u << 20;

double ns(Tick t) {
  return ticks_to_ns(t);
}
/// Flows are exact to the picosecond but for rounding each rate change.
constexpr double kExact = 0.01;  // ns

std::string as_flows(const std::string& yaml) {
  std::string out = yaml;
  const std::string key = "  - topology:";
  out.replace(out.find(key), key.size(), "  - transport: { model: flow }\n    topology:");
  return out;
}

class FlowFourHops : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(FlowFourHops, OneMessageTakesItsPathsLatenciesPlusItsWireBytesAtTheBottleneck) {
  // npu0 -100-> sw0 -50-> sw1 -200-> sw2 -100-> npu1 (GB/s); switch hops 50 ns.
  const std::uint64_t bytes = GetParam();
  const auto run = run_transfers(as_flows(testutil::kFourHops), {Flow{0, 1, bytes}});
  const double packets = std::ceil(static_cast<double>(bytes) / 4096);
  const double expected = 1000 + 3 * 50 + (static_cast<double>(bytes) + 64 * packets) / 50.0;
  EXPECT_NEAR(ns(run.done[0]), expected, kExact) << bytes << " bytes";
}

INSTANTIATE_TEST_SUITE_P(Sizes, FlowFourHops, ::testing::Values(4096u, 10 * MiB + 5));

TEST(FlowFabric, TwoFlowsOnABottleneckEachGetHalfAndTheLaterOneAllOnceAlone) {
  // Both start at 0; the second is twice as long: half each until the first
  // ends at 2S/B, then the second alone moves its last S at the full rate.
  const std::uint64_t S = 16 * MiB;
  const auto run = run_transfers(as_flows(testutil::kDumbbell), {Flow{0, 2, S}, Flow{1, 3, 2 * S}});
  EXPECT_NEAR(ns(run.done[0]), 1500 + 2.0 * S / 100, kExact);
  EXPECT_NEAR(ns(run.done[1]), 1500 + 3.0 * S / 100, kExact);
}

TEST(FlowFabric, ThreeFlowsOnABottleneckShareItInThirdsThenHalves) {
  // A netlist switch joining four NPUs; three send to NPU 3 (the bottleneck
  // is its link): S, 2S, 3S bytes. Thirds until 3S/B, halves until
  // 3S/B + 2S/B, then the last alone: S/B more.
  const std::string yaml = as_flows(R"(
npus: 4
nic: { header_bytes: 0 }
fabrics:
  - topology: switch
    link: { bandwidth_GBps: 100, latency_ns: 500 }
)");
  const std::uint64_t S = 8 * MiB;
  const auto run = run_transfers(yaml, {Flow{0, 3, S}, Flow{1, 3, 2 * S}, Flow{2, 3, 3 * S}});
  EXPECT_NEAR(ns(run.done[0]), 1000 + 3.0 * S / 100, kExact);
  EXPECT_NEAR(ns(run.done[1]), 1000 + 5.0 * S / 100, kExact);
  EXPECT_NEAR(ns(run.done[2]), 1000 + 6.0 * S / 100, kExact);
}

TEST(FlowFabric, AFlowLimitedElsewhereLeavesTheRestOfTheBottleneckToTheOther) {
  // npu0's own link is 25 GB/s: it takes 25 of the shared 100, npu1 the 75 left.
  const std::string yaml = as_flows(R"(
npus: 4
nic: { mtu_bytes: 4096, header_bytes: 0 }
fabrics:
  - topology: netlist
    switches: [ {name: left}, {name: right} ]
    links:
      - { from: npu0, to: left, bandwidth_GBps: 25, latency_ns: 500 }
      - { from: npu1, to: left, bandwidth_GBps: 100, latency_ns: 500 }
      - { from: left, to: right, bandwidth_GBps: 100, latency_ns: 500 }
      - { from: right, to: npu2, bandwidth_GBps: 100, latency_ns: 500 }
      - { from: right, to: npu3, bandwidth_GBps: 100, latency_ns: 500 }
)");
  const std::uint64_t S = 12 * MiB;
  const auto run = run_transfers(yaml, {Flow{0, 2, S}, Flow{1, 3, 3 * S}});
  EXPECT_NEAR(ns(run.done[0]), 1500 + S / 25.0, kExact);
  EXPECT_NEAR(ns(run.done[1]), 1500 + 3.0 * S / 75, kExact);
}

TEST(FlowFabric, IncastOfSevenEndsAtSevenTimesSOverBForEveryFlow) {
  const std::string yaml = as_flows(R"(
npus: 8
nic: { header_bytes: 0 }
fabrics:
  - topology: switch
    link: { bandwidth_GBps: 100, latency_ns: 500 }
)");
  const std::uint64_t S = 4 * MiB;
  std::vector<Flow> t;
  for (int src = 1; src < 8; ++src) t.push_back(Flow{src, 0, S});
  const auto run = run_transfers(yaml, t);
  for (std::size_t i = 0; i < run.done.size(); ++i) {
    EXPECT_NEAR(ns(run.done[i]), 1000 + 7.0 * S / 100, kExact) << "flow from NPU " << i + 1;
  }
}

TEST(FlowFabric, AStripingNicSplitsAMessageOverItsPortsByTheirRates) {
  // Two switches, two lanes to the first and one to the second: two thirds
  // of the bytes go the first way, and both parts end together at S / 3B.
  const std::string yaml = as_flows(R"(
npus: 2
nic: { header_bytes: 0, stripe: true }
fabrics:
  - topology: switch
    lanes: [2, 1]
    link: { bandwidth_GBps: 50, latency_ns: 500 }
)");
  const std::uint64_t S = 15 * MiB;
  const auto run = run_transfers(yaml, {Flow{0, 1, S}});
  EXPECT_NEAR(ns(run.done[0]), 1000 + S / 150.0, kExact);
}

TEST(FlowFabric, TheInjectionCapIsSharedByEveryMessageOfTheNic) {
  // 40 GB/s of injection under 100 GB/s links: two messages to two peers
  // take 20 each.
  const std::string yaml = as_flows(R"(
npus: 3
nic: { header_bytes: 0, injection_bandwidth_GBps: 40 }
fabrics:
  - topology: switch
    link: { bandwidth_GBps: 100, latency_ns: 500 }
)");
  const std::uint64_t S = 4 * MiB;
  const auto run = run_transfers(yaml, {Flow{0, 1, S}, Flow{0, 2, S}});
  EXPECT_NEAR(ns(run.done[0]), 1000 + S / 20.0, kExact);
  EXPECT_NEAR(ns(run.done[1]), 1000 + S / 20.0, kExact);
}

TEST(FlowFabric, WithAnHbmAMessageWaitsForItsFirstFrameReadAndItsLastWritten) {
  // The NICs' DMA as a fixed cost at each end: HBM latency (100 ns), and
  // what of a 256 KiB frame's read at 50 GB/s the 100 GB/s port cannot hide
  // (it waits for the bytes: 256 KiB / 50 - 256 KiB / 100), before the bytes
  // leave and after they arrive.
  const std::string yaml = as_flows(R"(
npus: 2
npu:
  hbm: { size: 1 GiB, channels: 4, bandwidth: 50 GB/s, latency: 100 ns }
nic: { header_bytes: 0, segment_bytes: 262144 }
fabrics:
  - topology: switch
    link: { bandwidth_GBps: 100, latency_ns: 500 }
)");
  const std::uint64_t S = 4 * MiB;
  const auto run = run_transfers(yaml, {Flow{0, 1, S}});
  EXPECT_NEAR(ns(run.done[0]), 1000 + S / 100.0 + 2 * (100 + 262144 / 50.0 - 262144 / 100.0), kExact);
}

TEST(FlowFabric, FlowsOnARingGoTheWayDimensionOrderRoutesThem) {
  // A bidirectional ring of 8: NPU 0 to NPU 2 crosses two links and NPU 1's
  // forwarding; NPU 1 to NPU 2 shares the second link, so both get half.
  const std::string yaml = as_flows(R"(
npus: 8
nic: { header_bytes: 0, forward_latency_ns: 100 }
fabrics:
  - topology: ring
    link: { bandwidth_GBps: 100, latency_ns: 500 }
)");
  const std::uint64_t S = 4 * MiB;
  const auto run = run_transfers(yaml, {Flow{0, 2, S}, Flow{1, 2, S}});
  EXPECT_NEAR(ns(run.done[0]), 1100 + 2.0 * S / 100, kExact);
  EXPECT_NEAR(ns(run.done[1]), 500 + 2.0 * S / 100, kExact);
}

TEST(FlowFabric, AgreesWithThePacketModelOnARingAllReduceAndCarriesItsData) {
  // No congestion: each step of a ring all-reduce has its own links. The
  // packet model pipelines 256 KiB frames; flows move bytes: within 1%. In
  // data mode the same message objects arrive, so every result checks.
  const std::string dir = testutil::scratch_dir("flow_vs_packet");
  const std::string args = "collbench --quiet --platform " + std::string(FABRICSIM_SOURCE_DIR) +
                           "/platforms/ring8.yaml --op all_reduce --algo ring -b 64M -e 64M --json " + dir;
  const auto time_of = [&](const std::string& model, const std::string& extra) {
    const auto r = testutil::run_fabricsim(args + "/" + model + ".json --fabric-model " + model + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(testutil::read_text(dir + "/" + model + ".json"));
    return j["rows"][0]["time_us"].get<double>();
  };
  const double packet = time_of("packet", "");
  const double flow = time_of("flow", " --data");
  EXPECT_NEAR(flow, packet, 0.01 * packet);
}

TEST(FlowFabric, TheModelIsAFabricKeyAndFabricModelSetsItOnEveryFabric) {
  const std::string ring = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/ring8.yaml";
  auto r = testutil::run_fabricsim("collbench --platform " + ring + " --fabric-model fluid -b 1K -e 1K");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("fluid"), std::string::npos) << r.err;
  r = testutil::run_fabricsim("collbench --platform " + ring + " --set fabrics.*.transport.model=fluid -b 1K -e 1K");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("packet, flow"), std::string::npos) << r.err;
  r = testutil::run_fabricsim("collbench --platform " + ring + " --set npu.*.x=1 -b 1K -e 1K");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("\"*\" stands for every entry of a list, and \"npu\" is not a list"), std::string::npos)
      << r.err;
}

}  // namespace
