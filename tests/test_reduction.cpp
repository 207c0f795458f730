// Switch reduction units and the in-switch algorithms: closed forms of the
// push all-reduce on one switch (link-bound, ALU-bound, slot-bound), data
// mode for every operation and type under the push, pull (striped) and tree
// plans, the bytes links carry against a ring, and the errors a user meets.
#include <gtest/gtest.h>

#include <map>

#include "models/collectives/algorithm_choice.h"
#include "platforms/assembly/reduction_models.h"
#include "platforms/tools/collbench.h"
#include "support/fabric_harness.h"
#include "support/test_util.h"

using namespace fabricsim;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * 1024;

/// One collective of `bytes` in `chunks` chunks with the in-switch algorithm
/// on the platform in `yaml`; returns the platform for its statistics and
/// the time in ns.
struct Result {
  std::unique_ptr<Platform> platform;
  double ns = 0;
  std::vector<std::string> errors;
};
Result run(const std::string& yaml, CollectiveType type, std::uint64_t bytes, std::uint32_t chunks = 1,
           AlgorithmKind algo = AlgorithmKind::kInSwitch) {
  Result r;
  r.platform = std::make_unique<Platform>(load_platform(testutil::platform_file(yaml)));
  CollbenchOptions o;
  o.type = type;
  o.algorithm = algo;
  o.min_bytes = o.max_bytes = bytes;
  o.chunks = chunks;
  const auto rows = run_collbench(*r.platform, o, r.errors);
  r.ns = rows.at(0).time_us * 1000;
  return r;
}

// A two-level fat tree: 3 leaves of 4 NPUs under 2 spines, a reduction unit
// with `slots` slots in every switch.
std::string fat_tree_of_12(int slots) {
  return "npus: 12\n"
         "nic: {mtu_bytes: 4096, header_bytes: 0, segment_bytes: 16384}\n"
         "fabrics:\n"
         "  - topology: fat_tree\n"
         "    levels: 2\n"
         "    leaf_down: 4\n"
         "    leaf_up: 2\n"
         "    link: {bandwidth_GBps: 50, latency_ns: 300}\n"
         "    switch: {latency_ns: 100, reduction: {slots: " +
         std::to_string(slots) + "}}\n";
}

// One switch, 8 NPUs: 100 GB/s links of 500 ns, a 100 ns switch, 64 KiB
// frames without headers or per-message overhead.
std::string one_switch(const std::string& reduction) {
  return "npus: 8\n"
         "nic: {mtu_bytes: 4096, header_bytes: 0, segment_bytes: 65536, message_overhead_ns: 0}\n"
         "fabrics:\n"
         "  - topology: switch\n"
         "    link: {bandwidth_GBps: 100, latency_ns: 500, buffer_bytes: 1048576}\n"
         "    switch: {latency_ns: 100, reduction: " +
         reduction + "}\n";
}

const double B = 100;                    // GB/s = bytes per ns
const double L = 500, h = 100, u = 200;  // ns
const double F = 64.0 * KiB;             // frame bytes
const double S = 4.0 * MiB;              // all-reduce bytes
const double K = S / F;                  // frames
const double n = 8;

TEST(ClosedForm, PushAllReduceOnOneSwitchIsOneTripUpAndOneDown) {
  // Every frame goes up once, is combined as its tail arrives, and comes
  // down once: the message's serialization plus one frame, two link and two
  // switch latencies, and the unit's.
  const auto r = run(one_switch("{throughput_GBps: 10000, latency_ns: 200, slots: 256}"), CollectiveType::kAllReduce,
                     static_cast<std::uint64_t>(S));
  const double expected = (S + F) / B + 2 * (L + h) + u;
  EXPECT_NEAR(r.ns, expected, 1.0) << "expected " << expected;
}

TEST(ClosedForm, AReductionUnitSlowerThanItsPortsSetsThePace) {
  // 200 GB/s of ALU for 8 ports of 100 GB/s: every byte of every
  // contribution goes through it, one frame after another.
  const double R = 200;
  const auto r = run(one_switch("{throughput_GBps: 200, latency_ns: 200, slots: 256}"), CollectiveType::kAllReduce,
                     static_cast<std::uint64_t>(S));
  const double expected = (L + h) + n * S / R + u + h + F / B + L;
  EXPECT_NEAR(r.ns, expected, 1.0) << "expected " << expected;
}

// 8 contributions per frame through an ALU of 200 GB/s with all its streams
// busy. 16 streams: one pass per frame at the cost of 16 inputs. 3 streams:
// passes of 3, then the partial result and 2 more (3 + 2 + 2 + 1 = 8), four
// passes of 3 inputs. 1 stream: every contribution on its own.
struct StreamCase {
  int streams;
  double inputs_per_frame;
};
class AluStreams : public ::testing::TestWithParam<StreamCase> {};

TEST_P(AluStreams, APassTakesAllItsStreamsTimeWhateverTheGroupUses) {
  const double R = 200;
  const auto r = run(one_switch("{throughput_GBps: 200, streams: " + std::to_string(GetParam().streams) +
                                ", latency_ns: 200, slots: 256}"),
                     CollectiveType::kAllReduce, static_cast<std::uint64_t>(S));
  const double expected = (L + h) + GetParam().inputs_per_frame * S / R + u + h + F / B + L;
  EXPECT_NEAR(r.ns, expected, 1.0) << "expected " << expected;
}
INSTANTIATE_TEST_SUITE_P(ClosedForm, AluStreams,
                         ::testing::Values(StreamCase{16, 16}, StreamCase{3, 12}, StreamCase{1, 8}),
                         [](const auto& info) { return std::to_string(info.param.streams) + "_streams"; });

TEST(ClosedForm, ExhaustedSlotsSerializeTheFramesAsTheModelPredicts) {
  // One slot: frame k+1 waits in the switch until every copy of frame k's
  // result has left, so each frame costs the ALU, the unit's latency, a
  // switch hop and a frame time, one after another.
  const double R = 10000;
  const auto one = run(one_switch("{throughput_GBps: 10000, latency_ns: 200, slots: 1}"), CollectiveType::kAllReduce,
                       static_cast<std::uint64_t>(S));
  const double period = n * F / R + u + h + F / B;
  const double expected = (L + h) + F / B + (K - 1) * period + u + h + F / B + L;
  EXPECT_NEAR(one.ns, expected, 1.0) << "expected " << expected;
  EXPECT_GT(one.ns, 1.4 * ((S + F) / B + 2 * (L + h) + u));  // against the link-bound form above
  const ReductionUnit& unit = *one.platform->fabrics().at(0).units.at(0);
  EXPECT_EQ(unit.stats().peak_slots, 1u);
  EXPECT_GT(unit.stats().frames_waited, 0u);
}

/// The links of the switch: in-switch, S up and S down per NPU; a ring
/// moves 2 (n - 1) / n S each way.
void expect_link_bytes(AlgorithmKind algo, double per_direction) {
  const auto r = run(one_switch("{throughput_GBps: 10000, latency_ns: 200}"), CollectiveType::kAllReduce,
                     static_cast<std::uint64_t>(S), 1, algo);
  for (const auto& l : r.platform->fabrics().at(0).links) {
    EXPECT_NEAR(static_cast<double>(l.link->stats().payload_bytes), per_direction, n)
        << to_string(algo) << ": " << l.from << " -> " << l.to;
  }
}
TEST(Traffic, AnInSwitchAllReduceSendsEachByteUpOnceAndDownOnce) {
  expect_link_bytes(AlgorithmKind::kInSwitch, S);
}
TEST(Traffic, ARingAllReduceSendsTwiceAsMuchLessOneShare) {
  expect_link_bytes(AlgorithmKind::kRing, 2 * (n - 1) / n * S);
}

// ---- data mode ------------------------------------------------------------------

struct PlanCase {
  std::string name;
  std::string yaml;
  std::vector<std::string> types;  // dtype/redop pairs the switches support
};
void PrintTo(const PlanCase& c, std::ostream* os) {
  *os << c.name;
}

class DataMode : public ::testing::TestWithParam<PlanCase> {};

TEST_P(DataMode, EveryOperationAndTypeGivesTheReferenceResult) {
  const PlanCase& c = GetParam();
  const std::string path = testutil::platform_file(c.yaml);
  for (const char* op : {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce"}) {
    for (const auto& t : c.types) {
      const auto space = t.find(' ');
      const std::string dtype = t.substr(0, space), redop = t.substr(space + 1);
      // Sizes that do not divide evenly, two chunks, root 1.
      const auto r = testutil::run_fabricsim("collbench --quiet --data --algo in_switch --platform " + path + " --op " +
                                             op + " --dtype " + dtype + " --redop " + redop +
                                             " -b 100 -e 300000 -f 53 --chunks 2 --root 1");
      EXPECT_EQ(r.exit_code, 0) << c.name << ": " << op << " " << t << "\n" << r.err;
    }
  }
}

const std::vector<std::string> kEveryReduction = {"fp32 sum", "fp32 min",  "fp32 max",  "fp16 sum",
                                                  "fp16 min", "fp16 max",  "bf16 sum",  "bf16 min",
                                                  "bf16 max", "int32 sum", "int32 min", "int32 max"};
const std::vector<std::string> kNvlsReductions = {"fp32 sum", "fp16 sum", "fp16 min",  "fp16 max",  "bf16 sum",
                                                  "bf16 min", "bf16 max", "int32 sum", "int32 min", "int32 max"};

INSTANTIATE_TEST_SUITE_P(Plans, DataMode,
                         ::testing::Values(
                             // One switch, SHARP-style push.
                             PlanCase{"push_one_switch", one_switch("{slots: 4, buffer_bytes: 262144}"),
                                      kEveryReduction},
                             // Four striped switches, NVLS-style pull with small pieces.
                             PlanCase{"pull_striped",
                                      "npus: 6\n"
                                      "nic: {mtu_bytes: 256, header_bytes: 16, segment_bytes: 8192, stripe: true}\n"
                                      "fabrics:\n"
                                      "  - topology: switch\n"
                                      "    lanes: [5, 4, 4, 5]\n"
                                      "    link: {bandwidth_GBps: 25, latency_ns: 200, buffer_bytes: 65536}\n"
                                      "    switch: {latency_ns: 100, reduction: {protocol: pull, ops: nvls, slots: 8, "
                                      "pipeline_bytes: 16384, pipeline_depth: 2}}\n",
                                      kNvlsReductions},
                             // A two-level fat tree: leaf units aggregate, a spine unit is the root.
                             PlanCase{"push_tree", fat_tree_of_12(16), kEveryReduction}),
                         [](const ::testing::TestParamInfo<PlanCase>& i) { return i.param.name; });

TEST(Tree, PartialResultsCrossEachLeafUplinkOnceEachWay) {
  // 3 leaves of 4 NPUs under 2 spines: the group's root is one spine; each
  // leaf sends its partial sum up one link and gets the result down it.
  const auto r = run(fat_tree_of_12(64), CollectiveType::kAllReduce, MiB);
  int carrying = 0;
  for (const auto& l : r.platform->fabrics().at(0).links) {
    const bool uplink = l.from.rfind("leaf", 0) == 0 && l.to.rfind("spine", 0) == 0;
    const bool downlink = l.from.rfind("spine", 0) == 0 && l.to.rfind("leaf", 0) == 0;
    if (!uplink && !downlink) continue;
    const auto bytes = l.link->stats().payload_bytes;
    EXPECT_TRUE(bytes == 0 || bytes == MiB) << l.from << " -> " << l.to << ": " << bytes;
    carrying += bytes == MiB ? 1 : 0;
  }
  EXPECT_EQ(carrying, 6);  // 3 leaves, up and down, to one spine
}

TEST(Striping, EachSwitchCarriesItsShareOfTheLanes) {
  const auto r =
      run("npus: 4\n"
          "nic: {mtu_bytes: 256, header_bytes: 0, segment_bytes: 8192, stripe: true}\n"
          "fabrics:\n"
          "  - topology: switch\n"
          "    lanes: [5, 4, 4, 5]\n"
          "    link: {bandwidth_GBps: 25, latency_ns: 200}\n"
          "    switch: {latency_ns: 100, reduction: {}}\n",
          CollectiveType::kAllReduce, 18 * MiB);
  for (const auto& l : r.platform->fabrics().at(0).links) {
    if (l.from.rfind("npu", 0) != 0) continue;
    const int lanes = l.to == "switch0" || l.to == "switch3" ? 5 : 4;
    EXPECT_NEAR(static_cast<double>(l.link->stats().payload_bytes), lanes * MiB, 4) << l.from << " -> " << l.to;
  }
}

/// Two NPUs on four single-lane switches (links of `gbps`, no latencies),
/// 32 KiB frames, memory behind the NICs with `hbm_latency`, reading ahead
/// 256 KiB per port.
std::string four_lanes(const std::string& gbps, const std::string& hbm_latency, int chunks) {
  return "npus: 2\n"
         "npu: {hbm: {size: 16 GiB, channels: 8, bandwidth: 1000 TB/s, latency: " +
         hbm_latency +
         "}}\n"
         "collectives: {chunks: " +
         std::to_string(chunks) +
         ", protocol: simple}\n"
         "fabrics:\n"
         "  - topology: switch\n"
         "    lanes: [1, 1, 1, 1]\n"
         "    link: {bandwidth: " +
         gbps +
         ", latency: 0, buffer: 1 MiB}\n"
         "    nic: {mtu: 256, segment: 32 KiB, stripe: true, read_ahead: 256 KiB}\n"
         "    switch: {latency: 0}\n";
}

TEST(Striping, AMessageSmallerThanAFramePerPortIsCutIntoAFrameForEachPort) {
  // Two NPUs on four single-lane switches, 10 GB/s links, no latencies, 32
  // KiB frames, memory behind the NICs (256 KiB read ahead a port). A direct
  // all-gather of 32 KiB sends one 16 KiB message each way: interleaved over
  // the 4 links, 4 KiB on each, 409.6 ns. (Sent as one frame, or read ahead
  // whole by the first port to look, it took one link: 1,638.4 ns.)
  const auto r = run(four_lanes("10 GB/s", "0", 1), CollectiveType::kAllGather, 32 * KiB, 1, AlgorithmKind::kDirect);
  ASSERT_TRUE(r.errors.empty()) << r.errors.at(0);
  EXPECT_NEAR(r.ns, 409.6, 0.5);
  for (const auto& l : r.platform->fabrics().at(0).links) {
    if (l.from.rfind("npu", 0) != 0) continue;
    EXPECT_EQ(l.link->stats().payload_bytes, 4 * KiB) << l.from << " -> " << l.to;
  }
}

TEST(Striping, TwoSmallMessagesOnOnePortAreEachSharedByEveryLink) {
  // A direct all-gather of 1 MiB in 2 chunks: each NPU sends two 256 KiB
  // messages, both queued on every port. Each port reads ahead its share of
  // each, so all four 10 GB/s links carry 128 KiB of each: 512 KiB / 40 GB/s
  // = 13.107 us. (When the first port to look read ahead frames of both
  // messages, up to its 256 KiB, one link carried 9 frames: 29.5 us.)
  const auto r = run(four_lanes("10 GB/s", "0", 2), CollectiveType::kAllGather, MiB, 2, AlgorithmKind::kDirect);
  ASSERT_TRUE(r.errors.empty()) << r.errors.at(0);
  EXPECT_NEAR(r.ns, 512.0 * KiB / 40, 1.0);
}

TEST(Striping, ALargeMessageIsReadAheadAsFarAsReadAheadAllowsOnEveryPort) {
  // An 8 MiB direct all-gather: 4 MiB each way over four 25 GB/s links, HBM
  // 2 us away. Reading 256 KiB ahead on each port hides the latency: 4 MiB /
  // 100 GB/s plus one read and one write, 45.94 us. (Held to one frame ahead
  // per port, as a small message's share is, each 32 KiB frame waited out a
  // read: 67.3 us.)
  const auto r = run(four_lanes("25 GB/s", "2 us", 1), CollectiveType::kAllGather, 8 * MiB, 1, AlgorithmKind::kDirect);
  ASSERT_TRUE(r.errors.empty()) << r.errors.at(0);
  EXPECT_NEAR(r.ns, 4.0 * MiB / 100 + 2 * 2000, 5.0);
}

// ---- in-switch in a hierarchy, and the default choice -------------------------------

TEST(Hybrid, InSwitchInsideNodesAndAcrossThemGivesTheReferenceResult) {
  // Two nodes of four: NVLS-style pull on each node's striped switches,
  // SHARP-style push across the nodes' rail switches; all-reduce over all
  // eight hierarchical, in-switch in both dimensions.
  const auto path = testutil::platform_file(
      "npus: 8\n"
      "fabrics:\n"
      "  - name: nvlink\n"
      "    topology: switch\n"
      "    group_size: 4\n"
      "    lanes: [2, 1]\n"
      "    link: {bandwidth_GBps: 25, latency_ns: 200}\n"
      "    nic: {mtu_bytes: 256, header_bytes: 16, segment_bytes: 8192, stripe: true}\n"
      "    switch: {latency_ns: 100, reduction: {protocol: pull, slots: 16, pipeline_bytes: 16384}}\n"
      "  - name: ib\n"
      "    topology: fat_tree\n"
      "    levels: 2\n"
      "    rails: 4\n"
      "    leaf_down: 2\n"
      "    leaf_up: 2\n"
      "    link: {bandwidth_GBps: 50, latency_ns: 600}\n"
      "    switch: {latency_ns: 130, reduction: {protocol: push}}\n");
  for (const char* dtype : {"fp32", "bf16", "int32"}) {
    const auto r = testutil::run_fabricsim("collbench --data --algo hierarchical --platform " + path + " --dtype " +
                                           dtype + " -b 1000 -e 2000000 -f 40 --chunks 2");
    EXPECT_EQ(r.exit_code, 0) << dtype << "\n" << r.err;
    EXPECT_NE(r.out.find("hierarchical"), std::string::npos) << r.out;
  }
}

/// A DGX H100's NVLink as the default choice's cost model sees it
/// (platforms/dgx_h100.yaml): 369 GB/s of payload per GPU, 56-byte headers
/// on 256-byte packets, a 1 us plain overhead and a 0.6 us hop; NCCL's
/// step overheads (testutil::nccl_launch_latencies has the launches).
PlatformHints dgx_like_hints(bool pull) {
  PlatformHints hints;
  hints.shape = "switch";
  hints.in_switch_domains = {{0, 1, 2, 3, 4, 5, 6, 7}};
  hints.in_switch_pull = {pull};
  PlatformHints::FabricCosts f;
  f.npus = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  f.step[0] = 2'600'000;
  f.step[1] = 0;
  f.step[2] = 1'100'000;
  f.bandwidth = 450e9 * 256 / 312;
  f.plain = 1'000'000;
  f.hop = 600'000;
  f.header_share = 56.0 / 312;
  hints.fabric_costs = {f};
  return hints;
}

TEST(DefaultChoice, InSwitchWhereTheGroupHasReductionUnitsAndTheCostModelFindsItFaster) {
  const CollectiveConfig config = testutil::nccl_launch_latencies();
  PlatformHints hints = dgx_like_hints(true);
  const std::vector<int> node = {0, 1, 2, 3, 4, 5, 6, 7}, half = {0, 2, 4, 6}, beyond = {6, 7, 8, 9};
  const auto choice = [&](CollectiveType t, std::uint64_t bytes, const std::vector<int>& ranks) {
    return default_algorithm(config, t, bytes, ranks, ranks.size() == 8, hints);
  };
  for (std::uint64_t bytes : {4 * KiB, 16 * MiB, 1024 * MiB}) {
    EXPECT_EQ(choice(CollectiveType::kAllReduce, bytes, node), AlgorithmKind::kInSwitch) << bytes;
    EXPECT_EQ(choice(CollectiveType::kBroadcast, bytes, half), AlgorithmKind::kInSwitch) << bytes;
    EXPECT_EQ(choice(CollectiveType::kReduce, bytes, node), AlgorithmKind::kInSwitch) << bytes;
  }
  // All-gather: a multicast brings each member all of S (its own part too)
  // in one step; halving-doubling (n - 1)/n S in 3 steps after NCCL's launch:
  // in-switch until S/8 of wire time outweighs the launch and steps.
  EXPECT_EQ(choice(CollectiveType::kAllGather, 1 * MiB, node), AlgorithmKind::kInSwitch);
  EXPECT_NE(choice(CollectiveType::kAllGather, 256 * MiB, node), AlgorithmKind::kInSwitch);
  // Pulled reduce-scatter carries a read request's header per packet.
  EXPECT_EQ(choice(CollectiveType::kReduceScatter, 256 * KiB, node), AlgorithmKind::kInSwitch);
  EXPECT_NE(choice(CollectiveType::kReduceScatter, 256 * MiB, node), AlgorithmKind::kInSwitch);
  // A group that leaves the switches' NPUs does not.
  EXPECT_NE(choice(CollectiveType::kAllReduce, 64 * MiB, beyond), AlgorithmKind::kInSwitch);
  // All-reduce on few members: pulled, (1 + h/(m+h)) S + S/n through a
  // member's busiest direction against a ring's 2(n-1)/n S; pushed, S. On 2
  // and 3 members a pulled one wins only while the ring's launch and steps
  // count (small sizes); a pushed one always (no more bytes than a ring).
  const std::vector<int> two = {0, 4}, three = {0, 1, 2}, four = {0, 1, 2, 3};
  for (const bool pull : {false, true}) {
    hints = dgx_like_hints(pull);
    EXPECT_EQ(choice(CollectiveType::kAllReduce, 64 * KiB, two), AlgorithmKind::kInSwitch) << pull;
    EXPECT_EQ(choice(CollectiveType::kAllReduce, 64 * MiB, two) == AlgorithmKind::kInSwitch, !pull) << pull;
    EXPECT_EQ(choice(CollectiveType::kAllReduce, 64 * MiB, three) == AlgorithmKind::kInSwitch, !pull) << pull;
    EXPECT_EQ(choice(CollectiveType::kAllReduce, 64 * MiB, four), AlgorithmKind::kInSwitch) << pull;
    EXPECT_EQ(choice(CollectiveType::kBroadcast, 64 * MiB, two), AlgorithmKind::kInSwitch) << pull;
  }
  // The crossover on 2 pulled members is where the estimates meet:
  //   2 (plain + hop) + (1.18 + 0.5) S/B = 8.4 + 2 (2.6 + 0.6) + S/B  (us).
  hints = dgx_like_hints(true);
  const double B = hints.fabric_costs[0].bandwidth, extra = 56.0 / 312 + 0.5;
  const double crossover = (8.4 + 2 * 3.2 - 2 * 1.6) * 1e-6 * B / extra;
  EXPECT_EQ(choice(CollectiveType::kAllReduce, static_cast<std::uint64_t>(crossover * 0.98), two),
            AlgorithmKind::kInSwitch);
  EXPECT_NE(choice(CollectiveType::kAllReduce, static_cast<std::uint64_t>(crossover * 1.02), two),
            AlgorithmKind::kInSwitch);
  hints.in_switch_domains.clear();
  EXPECT_NE(choice(CollectiveType::kAllReduce, 64 * MiB, node), AlgorithmKind::kInSwitch);
}

TEST(SystemFile, AnAstraSimSystemFileSelectsInSwitchPerDimension) {
  const std::string dir = testutil::scratch_dir("system-in-switch");
  const std::string platform = testutil::platform_file(one_switch("{}"));
  testutil::write_text(dir + "/system.json", R"({"all-reduce-implementation": ["inSwitch"],
                                                   "all-gather-implementation": ["ring"]})");
  const auto r =
      testutil::run_fabricsim("collbench --platform " + platform + " --system " + dir + "/system.json -b 1M -e 1M");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("in_switch"), std::string::npos) << r.out;
}

// ---- what users get wrong ---------------------------------------------------------

TEST(Errors, APlatformWithoutReductionUnitsRefusesInSwitch) {
  const auto path =
      testutil::platform_file("npus: 4\nfabrics: [{topology: switch, link: {bandwidth_GBps: 50, latency_ns: 500}}]\n");
  const auto r = testutil::run_fabricsim("collbench --platform " + path + " --algo in_switch -b 1M -e 1M");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("in_switch algorithm does not apply to all_reduce"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no reduction units"), std::string::npos) << r.err;
}

TEST(Errors, AnUnsupportedReductionNamesTheSwitchAndWhatItSupports) {
  const auto path = testutil::platform_file(one_switch("{ops: nvls}"));
  const auto r = testutil::run_fabricsim("collbench --platform " + path +
                                         " --algo in_switch --dtype fp32 --redop max -b 1M -e 1M");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("switch_reduction"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("does not support max on fp32"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sum on fp32/fp16/bf16/int32"), std::string::npos) << r.err;
}

TEST(Errors, InSwitchRefusesCollectivesAUnitCannotRun) {
  const auto path = testutil::platform_file(one_switch("{}"));
  const auto r = testutil::run_fabricsim("collbench --platform " + path + " --algo in_switch --op barrier -b 0 -e 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("reduction units run all_reduce, reduce_scatter, all_gather, broadcast and reduce"),
            std::string::npos)
      << r.err;
}

TEST(Errors, BadReductionSettingsNameTheFileAndLine) {
  const struct {
    const char* reduction;
    const char* message;
  } cases[] = {
      {"{slots: 0}", "\"slots\" is 0: it must be from 1 to"},
      {"{streams: 0}", "\"streams\" is 0: it must be from 1 to"},
      {"{protocol: broadcast}", "\"protocol\" is \"broadcast\": it must be one of push, pull"},
      {"{ops: {sum: [fp64]}}", "unknown data type \"fp64\""},
      {"{ops: {avg: [fp32]}}", "unknown reduction \"avg\""},
      {"{throughput: 5}", "\"throughput\" is \"5\": it needs a unit (PB/s, TB/s, GB/s"},
      {"{throughput: 5 GB}", "\"throughput\" is \"5 GB\": it has unit \"GB\", not a unit of a bandwidth"},
      {"{throughput: 5 GB/s, throughput_GBps: 5}",
       "\"throughput\" and \"throughput_GBps\" are the same parameter; give one"},
      {"{through_put: 5 GB/s}",
       "unknown key \"through_put\" in a switch's reduction unit (known: ops, throughput, throughput_GBps,"},
      {"{model: hls}", "\"model\" is \"hls\": it must be one of tlm, rtl"},
      // The RTL has no fp16 datapath, whether or not this build has the RTL.
      {"{model: rtl, ops: {sum: [fp32, fp16]}}", "the rtl reduction unit does not support sum on fp16"},
  };
  for (const auto& c : cases) {
    const auto path = testutil::platform_file(one_switch(c.reduction));
    const auto r = testutil::run_fabricsim("collbench --platform " + path + " -b 1M -e 1M");
    EXPECT_EQ(r.exit_code, 2) << c.reduction;
    EXPECT_NE(r.err.find(path + ":6:"), std::string::npos) << c.reduction << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.reduction << ": " << r.err;
  }
}

TEST(ReductionModels, EachIsReachedByItsNameAndAMissingOneSaysHowToGetIt) {
  // Every model the registry lists is accepted by name on the command line;
  // one this build lacks is refused naming the switch and the way to build it.
  ASSERT_EQ(reduction_model_names(), (std::vector<std::string>{"tlm", "rtl"}));
  const auto path = testutil::platform_file(one_switch("{}"));
  for (const ReductionModel& model : reduction_models()) {
    const auto r = testutil::run_fabricsim("collbench --quiet --algo in_switch --platform " + path +
                                           " --reduction-model " + model.name + " -b 64K -e 64K");
    if (model.unavailable.empty()) {
      EXPECT_EQ(r.exit_code, 0) << model.name << ": " << r.err;
    } else {
      EXPECT_EQ(r.exit_code, 2) << model.name;
      EXPECT_NE(r.err.find("switch \"switch\" asks for the " + std::string(model.name) + " reduction unit"),
                std::string::npos)
          << r.err;
      EXPECT_NE(r.err.find(model.unavailable), std::string::npos) << r.err;
    }
  }
  const auto bad = testutil::run_fabricsim("collbench --platform " + path + " --reduction-model hls -b 64K -e 64K");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--reduction-model hls: use one of tlm, rtl"), std::string::npos) << bad.err;
}

}  // namespace
