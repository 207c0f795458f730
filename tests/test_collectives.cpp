// The collective engine: every type with every algorithm on every platform
// generator in data mode, uncontended closed forms, scheduling between
// concurrent collectives, and ASTRA-sim system files.
#include <gtest/gtest.h>
#include <sched.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "models/collectives/algorithm_choice.h"
#include "models/collectives/collective_work.h"
#include "models/collectives/program_executor.h"
#include "platforms/importers/astra_system.h"
#include "platforms/run/simulation.h"
#include "platforms/tools/collbench.h"
#include "support/fabric_harness.h"
#include "support/test_util.h"
#include "traces/generator/et_writer.h"
#include "traces/workload/choice_probe.h"

using namespace fabricsim;

namespace {

constexpr std::uint64_t MiB = 1u << 20;

// ---- data mode over the whole matrix ------------------------------------------

struct PlatformCase {
  std::string name;
  std::string file;  // file name in the scratch folder
  std::string text;
};
void PrintTo(const PlatformCase& c, std::ostream* os) {
  *os << c.name;
}

const std::vector<std::string> kOps = {"all_reduce", "reduce_scatter", "reduce_scatter_block",
                                       "all_gather", "all_to_all",     "all_to_all_v",
                                       "broadcast",  "reduce",         "gather",
                                       "scatter",    "barrier"};
const std::vector<std::string> kAlgorithms = {"ring", "direct", "halving_doubling", "double_binary_tree",
                                              "hierarchical"};

bool applies(const std::string& op, const std::string& algo) {
  if (algo == "direct") return true;
  if (algo == "hierarchical") {  // all-to-all: each platform here runs ring or direct (all peers) per level
    return op == "all_reduce" || op == "reduce_scatter" || op == "reduce_scatter_block" || op == "all_gather" ||
           op == "all_to_all";
  }
  if (algo == "double_binary_tree") return op == "all_reduce" || op == "barrier";
  static const std::set<std::string> ring_like = {
      "all_reduce", "reduce_scatter", "reduce_scatter_block", "all_gather", "broadcast", "reduce", "barrier"};
  if (algo == "ring" && op == "all_to_all") return true;  // relayed a block a hop at a time
  return ring_like.count(op) > 0;                         // ring, halving_doubling
}

class DataMode : public ::testing::TestWithParam<PlatformCase> {};

TEST_P(DataMode, EveryTypeWithEveryAlgorithmGivesTheReferenceResult) {
  const PlatformCase& c = GetParam();
  const std::string dir = testutil::scratch_dir("data-" + c.name);
  const std::string path = dir + "/" + c.file;
  testutil::write_text(path, c.text);
  const std::vector<std::string> dtypes = {"fp32", "bf16", "int32", "fp16"};
  std::size_t k = 0;
  for (const auto& op : kOps) {
    for (const auto& algo : kAlgorithms) {
      // Sizes that are not multiples of the NPU count, two chunks, root 1,
      // and a different element type each time.
      const std::string dtype = dtypes[k++ % dtypes.size()];
      const auto r =
          testutil::run_fabricsim("collbench --quiet --data --platform " + path + " --op " + op + " --algo " + algo +
                                  " --dtype " + dtype + " -b 96 -e 3000 -f 5 --chunks 2 --root 1");
      if (applies(op, algo)) {
        EXPECT_EQ(r.exit_code, 0) << op << " with " << algo << " (" << dtype << "):\n" << r.err;
      } else {
        EXPECT_EQ(r.exit_code, 2) << op << " with " << algo << " should be refused";
        EXPECT_NE(r.err.find("does not apply to"), std::string::npos) << r.err;
      }
    }
  }
}

const char* kLink = "link: {bandwidth_GBps: 50, latency_ns: 500}";
PlatformCase yaml_case(const std::string& name, int npus, const std::string& fabrics) {
  return PlatformCase{name, name + ".yaml", "npus: " + std::to_string(npus) + "\nfabrics:\n" + fabrics};
}

INSTANTIATE_TEST_SUITE_P(
    Generators, DataMode,
    ::testing::Values(
        yaml_case("ring6", 6, std::string("  - {topology: ring, ") + kLink + "}\n"),
        yaml_case("unidirectional_ring5", 5, std::string("  - {topology: unidirectional_ring, ") + kLink + "}\n"),
        yaml_case("fully_connected6", 6, std::string("  - {topology: fully_connected, ") + kLink + "}\n"),
        yaml_case("switch8", 8, std::string("  - {topology: switch, ") + kLink + "}\n"),
        yaml_case("switch12", 12, std::string("  - {topology: switch, ") + kLink + "}\n"),
        yaml_case("torus4x3", 12, std::string("  - {topology: torus, dims: [4, 3], ") + kLink + "}\n"),
        yaml_case("mesh3x4", 12, std::string("  - {topology: mesh, dims: [3, 4], ") + kLink + "}\n"),
        yaml_case("fat_tree16", 16,
                  std::string("  - {topology: fat_tree, levels: 2, leaf_down: 4, leaf_up: 2, ") + kLink + "}\n"),
        yaml_case(
            "fat_tree3_24", 24,
            std::string("  - {topology: fat_tree, levels: 3, leaf_down: 3, leaf_up: 2, pod_leaves: 2, agg_up: 2, ") +
                kLink + "}\n"),
        yaml_case("hierarchy12", 12,
                  "  - {name: node, topology: switch, group_size: 4, link: {bandwidth_GBps: 200, latency_ns: 200}}\n"
                  "  - {name: net, topology: ring, group_size: 3, group_stride: 4, link: {bandwidth_GBps: 50, "
                  "latency_ns: 1000}}\n"),
        // Direct three peers per round; a hierarchical all-reduce that
        // all-reduces the whole chunk in each dimension.
        PlatformCase{"switch8_window3_whole_levels", "w.yaml",
                     std::string("npus: 8\ncollectives: {direct_window: 3, level_data: whole}\nfabrics:\n"
                                 "  - {name: node, topology: switch, group_size: 4, ") +
                         kLink +
                         "}\n"
                         "  - {name: net, topology: ring, group_size: 2, group_stride: 4, " +
                         kLink + "}\n"},
        // Three nodes of 4 on rails, every collective in 4 channels: the
        // rings enter each node at a different NPU (the odd nodes in
        // reverse), and the third node's ring closes across rails.
        PlatformCase{"rails12_channels4", "rails.yaml",
                     "npus: 12\ncollectives: {channels: 4}\nfabrics:\n"
                     "  - {name: node, topology: switch, group_size: 4, link: {bandwidth_GBps: 200, latency_ns: 200}}\n"
                     "  - {name: rails, topology: switch, group_size: 3, group_stride: 4, link: {bandwidth_GBps: 50, "
                     "latency_ns: 1000}}\n"},
        PlatformCase{
            "astra_ring_switch", "net.yml",
            "topology: [ Ring, Switch ]\nnpus_count: [ 3, 4 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 1000 ]\n"}),
    [](const ::testing::TestParamInfo<PlatformCase>& i) { return i.param.name; });

// ---- closed forms ------------------------------------------------------------------

/// One all-reduce of `bytes`, unchunked, on the platform in `yaml`; the
/// time until the last NPU finishes, in ns.
double all_reduce_ns(const std::string& yaml, AlgorithmKind algo, std::uint64_t bytes) {
  Platform platform(load_platform(testutil::platform_file(yaml)));
  CollbenchOptions o;
  o.algorithm = algo;
  o.min_bytes = o.max_bytes = bytes;
  o.chunks = 1;
  std::vector<std::string> errors;
  const auto rows = run_collbench(platform, o, errors);
  return rows.at(0).time_us * 1000;
}

TEST(ClosedForm, DirectOnFullyConnected) {
  const int n = 8;
  const double B = 100, L = 500, S = 8.0 * MiB;
  const double t =
      all_reduce_ns("npus: 8\nfabrics: [{topology: fully_connected, link: {bandwidth_GBps: 100, latency_ns: 500}}]\n",
                    AlgorithmKind::kDirect, 8 * MiB);
  const double expected = 2 * (S / n / B + L);
  EXPECT_NEAR(t, expected, 0.01 * expected);
}

TEST(ClosedForm, HalvingDoublingOnSwitch) {
  const int n = 16;
  const double B = 100, L = 500, S = 16.0 * MiB;
  const double t =
      all_reduce_ns("npus: 16\nfabrics: [{topology: switch, link: {bandwidth_GBps: 100, latency_ns: 500}}]\n",
                    AlgorithmKind::kHalvingDoubling, 16 * MiB);
  const double expected = 2.0 * (n - 1) / n * S / B + 2 * std::log2(n) * 2 * L;
  EXPECT_NEAR(t, expected, 0.01 * expected);
}

TEST(ClosedForm, DoubleBinaryTreeOnFullyConnected) {
  // Each tree carries half the data up its 3 levels and back down; the two
  // trees never share a link direction.
  const double B = 100, L = 500, S = 8.0 * MiB;
  const double t =
      all_reduce_ns("npus: 8\nfabrics: [{topology: fully_connected, link: {bandwidth_GBps: 100, latency_ns: 500}}]\n",
                    AlgorithmKind::kDoubleBinaryTree, 8 * MiB);
  const double depth = 3;
  const double expected = 2 * depth * (S / 2 / B + L);
  EXPECT_NEAR(t, expected, 0.01 * expected);
}

TEST(ClosedForm, HierarchicalOnA2DTorus) {
  const double X = 4, Y = 4, B = 100, L = 500, S = 16.0 * MiB;
  const double t = all_reduce_ns(
      "npus: 16\nfabrics: [{topology: torus, dims: [4, 4], link: {bandwidth_GBps: 100, latency_ns: 500}}]\n",
      AlgorithmKind::kHierarchical, 16 * MiB);
  const double expected = 2 * ((X - 1) * (S / X / B + L) + (Y - 1) * (S / (X * Y) / B + L));
  EXPECT_NEAR(t, expected, 0.01 * expected);
}

TEST(ClosedForm, HierarchicalOnATwoLevelHierarchy) {
  // Nodes of 4 NPUs on a switch (200 GB/s, 200 ns per link, two links a
  // hop), nodes joined by rings of 4 (50 GB/s, 1000 ns).
  const double S = 16.0 * MiB;
  const double t = all_reduce_ns(
      "npus: 16\nfabrics:\n"
      "  - {name: node, topology: switch, group_size: 4, link: {bandwidth_GBps: 200, latency_ns: 200}}\n"
      "  - {name: net, topology: ring, group_size: 4, group_stride: 4, link: {bandwidth_GBps: 50, latency_ns: 1000}}\n",
      AlgorithmKind::kHierarchical, 16 * MiB);
  const double expected = 2 * (3 * (S / 4 / 200 + 2 * 200) + 3 * (S / 16 / 50 + 1000));
  EXPECT_NEAR(t, expected, 0.01 * expected);
}

TEST(ClosedForm, PipelinedHierarchicalTakesItsSlowestLevelPlusFillAndDrain) {
  // The two-level hierarchy above with a slower network (25 GB/s): cut into
  // 4 MiB chunks, two per level's phase at a time, the levels overlap, so a
  // 256 MiB all-reduce takes the network's own time (its reduce-scatter and
  // all-gather share each ring link: 6 rounds of S/16) plus filling and
  // draining the pipeline: the first chunk's reduce-scatter in its node and
  // the last one's all-gather. Back to back it would take the sum of the
  // levels, half as long again.
  const double S = 256.0 * MiB, s = 4.0 * MiB;
  const double t = all_reduce_ns(
      "npus: 16\ncollectives: {pipeline_chunk: 4 MiB, chunks_per_stage: 2}\nfabrics:\n"
      "  - {name: node, topology: switch, group_size: 4, link: {bandwidth_GBps: 200, latency_ns: 200}}\n"
      "  - {name: net, topology: ring, group_size: 4, group_stride: 4, link: {bandwidth_GBps: 25, latency_ns: 1000}}\n",
      AlgorithmKind::kHierarchical, 256 * MiB);
  const double network = 6 * (S / 16 / 25);
  const double fill_and_drain = 2 * 3 * (s / 4 / 200 + 2 * 200);
  const double expected = network + fill_and_drain;
  EXPECT_NEAR(t, expected, 0.02 * expected);
  const double back_to_back = network + 6 * (S / 4 / 200);
  EXPECT_LT(t, 0.75 * back_to_back);
}

// ---- NCCL's protocols and launch latency ---------------------------------------

struct ProtocolCase {
  std::string name;
  double launch_ns, overhead_ns, wire_per_byte;  // what the platform below gives the protocol
};
class ProtocolClosedForm : public ::testing::TestWithParam<ProtocolCase> {};

TEST_P(ProtocolClosedForm, DirectAllReduceTakesLaunchPlusTwoStepsOfOverheadAndFlaggedBytes) {
  // Direct all-reduce on 8 fully connected NPUs: a reduce-scatter step and an
  // all-gather step, each S/n per peer link. Under a protocol each step waits
  // that protocol's overhead and carries its flags (LL: 8 bytes a 4-byte word,
  // LL128: 128 a 120-byte line), after the collective's launch latency.
  const ProtocolCase& c = GetParam();
  const int n = 8;
  const double B = 100, L = 500, S = 7.5 * MiB;  // S/n = 983,040 B: a whole number of 120-byte lines
  const double t =
      all_reduce_ns("npus: 8\ncollectives: {protocol: " + c.name +
                        ", launch_simple: 10 us, launch_ll: 3 us, launch_ll128: 5 us}\n"
                        "nic: {header: 0, message_overhead: 7 us, step_overhead_simple: 1 us, step_overhead_ll: 2 us, "
                        "step_overhead_ll128: 4 us}\n"
                        "fabrics: [{topology: fully_connected, link: {bandwidth_GBps: 100, latency_ns: 500}}]\n",
                    AlgorithmKind::kDirect, static_cast<std::uint64_t>(S));
  const double expected = c.launch_ns + 2 * (S / n * c.wire_per_byte / B + L + c.overhead_ns);
  EXPECT_NEAR(t, expected, 0.002 * expected);
}

INSTANTIATE_TEST_SUITE_P(Protocols, ProtocolClosedForm,
                         ::testing::Values(ProtocolCase{"simple", 10000, 1000, 1.0},
                                           ProtocolCase{"ll", 3000, 2000, 2.0},
                                           ProtocolCase{"ll128", 5000, 4000, 128.0 / 120.0}),
                         [](const ::testing::TestParamInfo<ProtocolCase>& i) { return i.param.name; });

/// NCCL's ring per-hop latencies on NVLink (tuning.cc) of Simple, LL,
/// LL128, at 369 GB/s of goodput per GPU.
PlatformHints nvlink_costs(int npus) {
  PlatformHints h;
  PlatformHints::FabricCosts f;
  for (int r = 0; r < npus; ++r) f.npus.push_back(r);
  f.step[0] = 3'400'000;
  f.step[1] = 600'000;
  f.step[2] = 1'900'000;
  f.bandwidth = 369e9;
  h.fabric_costs.push_back(f);
  return h;
}

TEST(ProtocolChoice, AutoTakesLLThenLL128ThenSimpleAtTheCostModelsCrossovers) {
  // Ring all-reduce on 8 GPUs, W = 2(n-1)/n S bytes per GPU at B:
  //   LL     6.6 + 14 x 0.6 + 2 W/B
  //   LL128  14 + 14 x 1.9 + (128/120) W/B
  //   Simple 8.4 + 14 x 3.4 + W/B   (us)
  // LL = LL128 at W/B = 25.6 / (14/15) us; LL128 = Simple at W/B = 15.4 x 15 us.
  const CollectiveConfig config = testutil::nccl_launch_latencies();
  const PlatformHints hints = nvlink_costs(8);
  const std::vector<int> ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  const double B = 369e9, per_byte = 2.0 * 7 / 8 / B;
  const auto size_at = [&](double us) { return static_cast<std::uint64_t>(us * 1e-6 / per_byte); };
  const std::uint64_t ll_to_ll128 = size_at(25.6 * 15 / 14), ll128_to_simple = size_at(15.4 * 15);
  const auto pick = [&](std::uint64_t bytes) {
    return choose_protocol(config, hints, CollectiveType::kAllReduce, AlgorithmKind::kRing, bytes, ranks);
  };
  EXPECT_EQ(pick(128), CommProtocol::kLL);
  EXPECT_EQ(pick(ll_to_ll128 * 99 / 100), CommProtocol::kLL);
  EXPECT_EQ(pick(ll_to_ll128 * 101 / 100), CommProtocol::kLL128);
  EXPECT_EQ(pick(ll128_to_simple * 99 / 100), CommProtocol::kLL128);
  EXPECT_EQ(pick(ll128_to_simple * 101 / 100), CommProtocol::kSimple);
  EXPECT_EQ(pick(1ull << 30), CommProtocol::kSimple);
}

TEST(ProtocolChoice, InSwitchStepsArePlainPointToPointLevelsAreNotAndAForcedProtocolIsKept) {
  CollectiveConfig config = testutil::nccl_launch_latencies();
  PlatformHints hints = nvlink_costs(8);
  const std::vector<int> ranks = {0, 1, 2, 3};
  // In-switch steps, alone or as a level, have no NCCL protocol here.
  config.dims = {{2, 1, AlgorithmKind::kInSwitch}, {2, 2, AlgorithmKind::kRing}};
  for (AlgorithmKind a : {AlgorithmKind::kInSwitch, AlgorithmKind::kHierarchical}) {
    EXPECT_EQ(choose_protocol(config, hints, CollectiveType::kAllReduce, a, 128, ranks), CommProtocol::kPlain);
  }
  // Nor do levels the level choice could give to reduction units.
  config.dims[0].algorithm = AlgorithmKind::kRing;
  hints.in_switch_domains = {{0, 1}};
  EXPECT_EQ(choose_protocol(config, hints, CollectiveType::kAllReduce, AlgorithmKind::kHierarchical, 128, ranks),
            CommProtocol::kPlain);
  // Ring levels pay what a ring run flat pays: LL at 128 bytes.
  hints.in_switch_domains.clear();
  EXPECT_EQ(choose_protocol(config, hints, CollectiveType::kAllReduce, AlgorithmKind::kHierarchical, 128, ranks),
            CommProtocol::kLL);
  config.protocol = ProtocolChoice::kLL128;
  for (AlgorithmKind a : {AlgorithmKind::kRing, AlgorithmKind::kHierarchical}) {
    EXPECT_EQ(choose_protocol(config, hints, CollectiveType::kAllReduce, a, 1ull << 30, ranks), CommProtocol::kLL128);
  }
  // No costs known (an ASTRA-sim network): steps stay plain.
  config.protocol = ProtocolChoice::kAuto;
  EXPECT_EQ(choose_protocol(config, PlatformHints{}, CollectiveType::kAllReduce, AlgorithmKind::kRing, 128, ranks),
            CommProtocol::kPlain);
}

TEST(ProtocolChoice, AGroupAcrossFabricsIsCostedOnTheSlowestOfThem) {
  // NVLink inside each node of 2, a network across them whose Simple hop is
  // 14 us: a group within a node takes NVLink's costs, one across the nodes
  // the network's, under which LL wins up to a larger size.
  CollectiveConfig config = testutil::nccl_launch_latencies();
  PlatformHints hints;
  for (int node = 0; node < 2; ++node) {
    PlatformHints::FabricCosts f = nvlink_costs(2).fabric_costs[0];
    f.npus = {2 * node, 2 * node + 1};
    hints.fabric_costs.push_back(f);
  }
  PlatformHints::FabricCosts net;
  net.npus = {0, 1, 2, 3};
  net.step[0] = 14'000'000;
  net.step[1] = 2'700'000;
  net.step[2] = 4'000'000;
  net.bandwidth = 48.5e9;
  hints.fabric_costs.push_back(net);
  const CollectiveConfig& c = config;
  const auto estimate = [&](const PlatformHints::FabricCosts& f, CommProtocol p, std::uint64_t bytes, int n) {
    return protocol_estimate(c, f, p, CollectiveType::kAllReduce, AlgorithmKind::kRing, bytes, n);
  };
  // At 1 MiB on 4 GPUs across the nodes LL128 is the cheapest on the network...
  const std::uint64_t bytes = 1 << 20;
  EXPECT_LT(estimate(net, CommProtocol::kLL128, bytes, 4), estimate(net, CommProtocol::kLL, bytes, 4));
  EXPECT_LT(estimate(net, CommProtocol::kLL128, bytes, 4), estimate(net, CommProtocol::kSimple, bytes, 4));
  EXPECT_EQ(choose_protocol(config, hints, CollectiveType::kAllReduce, AlgorithmKind::kRing, bytes, {0, 1, 2, 3}),
            CommProtocol::kLL128);
  // ...while 2 GPUs of one node take NVLink's costs, where LL is.
  EXPECT_LT(estimate(hints.fabric_costs[0], CommProtocol::kLL, bytes, 2),
            estimate(hints.fabric_costs[0], CommProtocol::kLL128, bytes, 2));
  EXPECT_EQ(choose_protocol(config, hints, CollectiveType::kAllReduce, AlgorithmKind::kRing, bytes, {2, 3}),
            CommProtocol::kLL);
}

/// NPUs on a bidirectional ring of 100 GB/s, 500 ns links, 1 us per
/// message and no headers: the cost model's closed forms below.
std::string cost_model_ring(int npus, int chunks) {
  return testutil::platform_file(
      "npus: " + std::to_string(npus) + "\nnic: {header: 0, message_overhead: 1 us}\ncollectives: {chunks: " +
      std::to_string(chunks) + "}\nfabrics: [{topology: ring, link: {bandwidth: 100 GB/s, latency: 500 ns}}]\n");
}
ProgramPlan cost_model_plan(CollectiveType type, AlgorithmKind algorithm, const std::vector<int>& ranks,
                            std::uint64_t bytes, std::uint32_t chunks) {
  ProgramPlan plan;
  plan.type = type;
  plan.algorithm = algorithm;
  plan.ranks = &ranks;
  plan.bytes = bytes;
  plan.chunks = chunks;
  return plan;
}

TEST(CostModel, ARingAllReduceOnARingIsLaunchStepsAndTheBusiestLink) {
  // 8 NPUs on a bidirectional ring of 100 GB/s, 500 ns links, 1 us per
  // message, 4 chunks. A ring all-reduce sends each step to the next NPU:
  // 14 steps of 1 us + one link (half the 1 us hop), and each link carries
  // 2(n-1)/n S, which bounds the transfer (the first chunk's steps, shared
  // frame by frame with the other three, take 14 x (4 x 31 + 1)/32 x S/32,
  // less). A direct all-reduce sends to every NPU over up to 4 links, so
  // its busiest link carries more and it loses at large sizes.
  Platform platform(load_platform(cost_model_ring(8, 4)));
  const PlatformHints& hints = platform.spec().hints;
  ASSERT_NE(hints.cost_model, nullptr);
  const std::vector<int> ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  const double S = 256.0 * MiB;
  ProgramPlan plan = cost_model_plan(CollectiveType::kAllReduce, AlgorithmKind::kRing, ranks, 256 * MiB, 4);
  const Estimate ring = hints.cost_model->estimate(platform.spec().collectives, plan, CommProtocol::kSimple);
  EXPECT_NEAR(ring.latency, 14 * (1e6 + 0.5e6), 1.0);
  EXPECT_NEAR(ring.transfer, 2.0 * 7 / 8 * S / 100e9 * 1e12, 1.0);
  plan.algorithm = AlgorithmKind::kDirect;
  const Estimate direct = hints.cost_model->estimate(platform.spec().collectives, plan, CommProtocol::kSimple);
  EXPECT_GT(direct.transfer, 1.2 * ring.transfer);
  EXPECT_LT(direct.latency, ring.latency);
  const auto chosen =
      default_algorithm(platform.spec().collectives, CollectiveType::kAllReduce, 256 * MiB, ranks, true, hints);
  EXPECT_EQ(chosen, AlgorithmKind::kRing);
  EXPECT_EQ(default_algorithm(platform.spec().collectives, CollectiveType::kAllReduce, 1024, ranks, true, hints),
            AlgorithmKind::kDirect);
}

TEST(CostModel, ARoundEndsWithTheLastOfItsMessagesIn) {
  // A direct all-to-all on 4 NPUs of a bidirectional ring (100 GB/s, 500 ns
  // links, 1 us per message): one round in which each NPU hears from both
  // neighbours (one hop) and the NPU across (two hops), so the round, and
  // the estimate's latency, ends with the two-hop message: 1 us + 2 x 0.5 us.
  Platform platform(load_platform(cost_model_ring(4, 1)));
  const PlatformHints& hints = platform.spec().hints;
  ASSERT_NE(hints.cost_model, nullptr);
  const std::vector<int> ranks = {0, 1, 2, 3};
  const ProgramPlan plan = cost_model_plan(CollectiveType::kAllToAll, AlgorithmKind::kDirect, ranks, 4 * MiB, 1);
  const Estimate e = hints.cost_model->estimate(platform.spec().collectives, plan, CommProtocol::kSimple);
  EXPECT_NEAR(e.latency, 1e6 + 2 * 0.5e6, 1.0);
}

/// The first row of `fabricsim collbench --quiet ARGS`, through its JSON
/// (DIR/rows.json). A run that fails is a test failure, and gives no row.
nlohmann::json collbench_row(const std::string& dir, const std::string& args) {
  const auto r = testutil::run_fabricsim("collbench --quiet " + args + " --json " + dir + "/rows.json");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  if (r.exit_code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(testutil::read_text(dir + "/rows.json"))["rows"][0];
}

TEST(ShippedPlatforms, DgxA100RingRunsAtItsNvlinkBound) {
  // platforms/dgx_a100.yaml: 12 NVLinks of 25 GB/s per GPU, 128-byte
  // packets (an SM's store) with 32 bytes of overhead (NCCL's 20 of 25 GB/s
  // per NVLink 3 link): a 1 GiB ring all-reduce's busbw is 300 x 128/160 =
  // 240 GB/s, less its 14 steps' overheads and the launch (0.2%). A wrong
  // lane count or link rate moves it by a sixth or more.
  const std::string dir = testutil::scratch_dir("dgx-a100");
  const auto row = collbench_row(
      dir, "--platform " + std::string(FABRICSIM_SOURCE_DIR) + "/platforms/dgx_a100.yaml --algo ring -b 1G -e 1G");
  const double bound = 300.0 * 128 / 160;
  EXPECT_NEAR(row["busbw_GBps"].get<double>(), bound, 0.01 * bound);
  EXPECT_EQ(row["protocol"], "simple");
}

TEST(ShippedPlatforms, DgxH100RingPaysNcclsStepCostsOnceAt16MiB) {
  // NCCL's additive model of a 16 MiB ring all-reduce on 8 H100s under
  // LL128: launch 14 us + 14 steps x 1.9 us (the hop, tuning.cc) + 14 x
  // 2 MiB x 128/120 at 450 x 128/155 GB/s = 124.7 us. The platform runs the
  // collective as one chunk, so nothing hides those costs; in 4 chunks it
  // took 109.4 us (-13%).
  const std::string dir = testutil::scratch_dir("dgx-h100-16m");
  const auto row = collbench_row(
      dir, "--platform " + std::string(FABRICSIM_SOURCE_DIR) + "/platforms/dgx_h100.yaml --algo ring -b 16M -e 16M");
  const double step = 2.0 * MiB * 128 / 120 / (450e9 * 128 / 155) * 1e6;
  const double additive = 14 + 14 * 1.9 + 14 * step;
  EXPECT_NEAR(row["time_us"].get<double>(), additive, 0.025 * additive);
  EXPECT_EQ(row["protocol"], "ll128");
}

TEST(ShippedPlatforms, DgxH100NvlsKeepsItsPipelineDepthWhateverTheChunks) {
  // A pulled (NVLS) all-reduce keeps pipeline_depth (4) pieces of 512 KiB in
  // flight per collective, however many chunks it is cut into: 64 chunks
  // run 4 at a time, one piece each, and take the time of one chunk with 4
  // pieces (958.7 us for 256 MiB). When every chunk kept a piece in
  // flight, the 64 pieces filled the units' 256 slots with reads waiting
  // on each other, reads and multicasts took turns, and 64 chunks took
  // 1,425.3 us (16 chunks: 1,060.8).
  const std::string dir = testutil::scratch_dir("dgx-h100-nvls-chunks");
  const auto time_us = [&](int chunks) {
    return collbench_row(dir, "--platform " + std::string(FABRICSIM_SOURCE_DIR) +
                                  "/platforms/dgx_h100.yaml --algo in_switch --chunks " + std::to_string(chunks) +
                                  " -b 256M -e 256M")["time_us"]
        .get<double>();
  };
  const double one = time_us(1);
  EXPECT_NEAR(time_us(16), one, 0.01 * one);
  EXPECT_NEAR(time_us(64), one, 0.01 * one);
}

TEST(ShippedPlatforms, DgxH100NvlsMulticastsAPieceWhileItReadsTheNext) {
  // A 16 MiB NVLS all-reduce on 8 H100s: each GPU's 2 MiB share in one
  // piece is read (the answers, S x 312/256 up each GPU's 450 GB/s: R =
  // 45.4 us) and then multicast. In the shipped 512 KiB pieces (4 per GPU)
  // a piece's multicast overlaps the next pieces' reads, which saves up to
  // 3/4 R (34 us); at least half of that (17 us) must show (24.8 us does).
  // When a GPU's pieces took turns frame by frame they were all read
  // together and all multicast together, and any piece size gave the same
  // 84.0 us.
  const std::string dir = testutil::scratch_dir("dgx-h100-nvls-pieces");
  const auto time_us = [&](const std::string& piece) {
    return collbench_row(dir, "--platform " + std::string(FABRICSIM_SOURCE_DIR) +
                                  "/platforms/dgx_h100.yaml --algo in_switch -b 16M -e 16M"
                                  " --set 'fabrics.0.switch.reduction.pipeline=" +
                                  piece + "'")["time_us"]
        .get<double>();
  };
  const double reads_us = 16.0 * MiB * 312 / 256 / 450e9 * 1e6;
  EXPECT_GT(time_us("2 MiB") - time_us("512 KiB"), 0.5 * 0.75 * reads_us);
}

TEST(ShippedPlatforms, NvlsTreeKeepsTheNvlsLevelsPipelineDepthOnTwoNodes) {
  // NCCL's NVLS-tree on 2 DGX H100 nodes, 64 MiB: 16 chunks of 4 MiB whose
  // NVLS reduce-scatters pull 512 KiB each. The level lets 4 of them in at
  // once (its pipeline_depth), not the 8 chunks_per_stage lets into a
  // stage: no read waits for a unit's slot (317.5 us). With 8, the first
  // unit's 256 slots filled, 116 reads waited and the collective took
  // 351.8 us.
  const std::string dir = testutil::scratch_dir("nvls-tree-depth");
  const std::string prefix = dir + "/ar";
  const auto gen =
      testutil::run_fabricsim("gen collective --npus 16 --type all_reduce --bytes 67108864 --out " + prefix);
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const auto r = testutil::run_fabricsim("run --quiet --platform " + std::string(FABRICSIM_SOURCE_DIR) +
                                         "/platforms/dgx_h100_2node.yaml --workload " + prefix +
                                         " --levels in_switch,double_binary_tree --report " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  int nvlink_units = 0;
  for (const auto& u : report["reduction_units"]) {
    if (u["fabric"].get<std::string>().rfind("nvlink", 0) != 0) continue;  // nvlink0, nvlink1: one per node
    ++nvlink_units;
    EXPECT_EQ(u["frames_waited"].get<int>(), 0) << u["name"];
    EXPECT_LT(u["peak_slots"].get<int>(), u["slots"].get<int>()) << u["name"];
  }
  EXPECT_EQ(nvlink_units, 8);  // 4 NVSwitches per node
}

TEST(ClosedForm, RingChannelsCrossBetweenNodesOnTheirOwnRailsAndShareARail) {
  // Two nodes of 4 NPUs (400 GB/s each) joined by 4 rails (25 GB/s): rail r
  // joins the nodes' NPUs r. One ring in group order crosses rails between
  // the nodes (relayed over the node's switch) and moves every S/8 segment
  // of its 14 steps at 25 GB/s. In 4 channels each ring enters each node at
  // a different NPU, the second node in reverse, so both of its crossings
  // stay on rails and each rail carries one channel's S/4: 14 steps of S/32.
  // In 8 channels two share each rail, each at half its rate: the same time.
  const std::string dir = testutil::scratch_dir("ring-channels");
  const double S = 64.0 * MiB;
  const auto ring_us = [&](int channels) {
    const std::string file = dir + "/c" + std::to_string(channels) + ".yaml";
    testutil::write_text(file, "npus: 8\ncollectives: {chunks: 1, channels: " + std::to_string(channels) +
                                   "}\nfabrics:\n"
                                   "  - {name: node, topology: switch, group_size: 4, link: {bandwidth_GBps: 400, "
                                   "latency_ns: 100}}\n"
                                   "  - {name: rails, topology: switch, group_size: 2, group_stride: 4, link: "
                                   "{bandwidth_GBps: 25, latency_ns: 1000}}\n");
    return collbench_row(dir, "--platform " + file + " --algo ring -b 64M -e 64M")["time_us"].get<double>();
  };
  const double one = 14 * (S / 8 / 25e3), rails = 14 * (S / 32 / 25e3);  // us
  EXPECT_NEAR(ring_us(1), one, 0.01 * one);
  EXPECT_NEAR(ring_us(4), rails, 0.01 * rails);
  EXPECT_NEAR(ring_us(8), rails, 0.01 * rails);
}

TEST(ClosedForm, ASubgroupsRingChannelsCrossOnTheirOwnRailsToo) {
  // Four nodes of 4 NPUs on 4 rails, and a data-parallel group of a
  // tensor-parallel-2 job: every second NPU, 2 in each node. One ring in
  // group order crosses from place 2 of a node to place 0 of the next (off
  // its rail, relayed): 14 steps of S/8 at 25 GB/s. In 2 channels each
  // crosses between the nodes' NPUs of one place, rails 0 and 2 each
  // carrying S/2: 14 steps of S/16; 4 channels share those two rails and
  // take as long. When channels were kept for whole platforms only, such a
  // group ran one ring and every Megatron data-parallel all-reduce crossed
  // the nodes on one NIC (3.6B on Selene: 21% under the published rate).
  const std::string dir = testutil::scratch_dir("subgroup-ring-channels");
  const double S = 64.0 * MiB;
  const auto ring_us = [&](int channels) {
    const std::string file = dir + "/c" + std::to_string(channels) + ".yaml";
    testutil::write_text(file, "npus: 16\ncollectives: {chunks: 1, channels: " + std::to_string(channels) +
                                   "}\nfabrics:\n"
                                   "  - {name: node, topology: switch, group_size: 4, link: {bandwidth_GBps: 400, "
                                   "latency_ns: 100}}\n"
                                   "  - {name: rails, topology: switch, group_size: 4, group_stride: 4, link: "
                                   "{bandwidth_GBps: 25, latency_ns: 1000}}\n");
    return collbench_row(dir, "--platform " + file + " --algo ring --npus 8 --stride 2 -b 64M -e 64M")["time_us"]
        .get<double>();
  };
  const double one = 14 * (S / 8 / 25e3), rails = 14 * (S / 16 / 25e3);  // us
  EXPECT_NEAR(ring_us(1), one, 0.01 * one);
  EXPECT_NEAR(ring_us(2), rails, 0.01 * rails);
  EXPECT_NEAR(ring_us(4), rails, 0.01 * rails);
}

TEST(ClosedForm, ABinomialTreeSendsItsRoundsOneAfterAnother) {
  // Halving-doubling's broadcast and reduce are binomial trees: on 8 NPUs of
  // a switch, 3 rounds of the whole S, each at the link's rate and two
  // links' latency. A sender's round has no receive: it ends when its data
  // has left, so the root's three sends go one after another. Ending at once,
  // they shared its link and the broadcast took 490.6 us, not 254.7.
  const std::string dir = testutil::scratch_dir("binomial");
  const std::string file = dir + "/sw8.yaml";
  testutil::write_text(file,
                       "npus: 8\ncollectives: {chunks: 1}\n"
                       "fabrics: [{topology: switch, link: {bandwidth_GBps: 100, latency_ns: 500}}]\n");
  const double S = 8.0 * MiB, expected = 3 * (S / 100e3 + 2 * 0.5);  // us
  for (const std::string op : {"broadcast", "reduce"}) {
    const double us =
        collbench_row(dir, "--platform " + file + " --op " + op + " --algo halving_doubling -b 8M -e 8M")["time_us"];
    EXPECT_NEAR(us, expected, 0.005 * expected) << op;
  }
}

TEST(ClosedForm, AChunkedRingBroadcastPipelinesAlongTheChain) {
  // A ring broadcast is a chain: on 8 NPUs of a switch (100 GB/s, 500 ns)
  // in K = 8 chunks of S/K, each NPU forwards a chunk once it is in, and a
  // collective's chunks to one peer leave its NIC in order (one queue, as a
  // channel's slices do), so chunk j reaches NPU i at (i + j) chunk times
  // plus i hops of two links' latency: the last, at hop 7 and chunk 7, at
  // (K + n - 2) x S/(K B) + 7 us. Taking turns frame by frame, the chunks
  // all left the root at the end, the chain did not pipeline and the
  // broadcast took 3,310 us.
  const std::string dir = testutil::scratch_dir("ring-broadcast");
  const std::string file = dir + "/sw8.yaml";
  testutil::write_text(file,
                       "npus: 8\ncollectives: {chunks: 8}\n"
                       "fabrics: [{topology: switch, link: {bandwidth_GBps: 100, latency_ns: 500}}]\n");
  const double chunk = 64.0 * MiB / 8 / 100e3, expected = (8 + 8 - 2) * chunk + 7 * 2 * 0.5;  // us
  const double us = collbench_row(dir, "--platform " + file + " --op broadcast --algo ring -b 64M -e 64M")["time_us"];
  EXPECT_NEAR(us, expected, 0.005 * expected);
  // The cost model follows the first chunk along the chain and the others
  // behind it, so the default choice takes the ring (direct: 4,699 us,
  // halving-doubling 2,014 us).
  const auto chosen = collbench_row(dir, "--platform " + file + " --op broadcast --why -b 64M -e 64M");
  EXPECT_EQ(chosen["algorithm"], "ring");
  ASSERT_TRUE(chosen.contains("estimates_us")) << chosen.dump();
  EXPECT_NEAR(chosen["estimates_us"]["ring"].get<double>(), expected, 0.01 * expected);
}

TEST(DefaultChoice, AlgorithmsTooCloseToTellAreSimulatedAndTheFastestRuns) {
  // torus4x4, 256 MiB all-reduce: the cost model puts direct (4,095 us) and
  // a phase per dimension (4,225 us) within 10%, and cannot see the
  // head-of-line blocking that slows direct by 18% in the simulation
  // (docs/collectives.md). Within collectives.probe_margin both are
  // simulated from the row's start and the faster runs, with its own time;
  // at a margin of 0 the estimate's choice runs.
  const std::string dir = testutil::scratch_dir("probe-collbench");
  const std::string base =
      "--platform " + std::string(FABRICSIM_SOURCE_DIR) + "/platforms/torus4x4.yaml" + " -b 256M -e 256M";
  const double direct = collbench_row(dir, base + " --algo direct")["time_us"];
  const double phases = collbench_row(dir, base + " --algo hierarchical")["time_us"];
  ASSERT_GT(direct, 1.1 * phases);  // what makes this a test of the probe
  const auto probed = collbench_row(dir, base + " --why");
  EXPECT_EQ(probed["algorithm"], "hierarchical");
  EXPECT_DOUBLE_EQ(probed["time_us"].get<double>(), phases);
  ASSERT_TRUE(probed.contains("probed_us")) << probed.dump();
  EXPECT_DOUBLE_EQ(probed["probed_us"]["direct"].get<double>(), direct);
  EXPECT_DOUBLE_EQ(probed["probed_us"]["hierarchical"].get<double>(), phases);
  EXPECT_EQ(probed["probed_us"].size(), 2u);  // ring, 26% off the best estimate, is not simulated
  const auto estimated = collbench_row(dir, base + " --set collectives.probe_margin=0");
  EXPECT_EQ(estimated["algorithm"], "direct");
  EXPECT_DOUBLE_EQ(estimated["time_us"].get<double>(), direct);
  EXPECT_FALSE(estimated.contains("probed_us"));
}

TEST(DefaultChoice, ATraceProbesACollectiveOnceForEveryMemberAndEveryRepeatAndWritesItsFilesOnce) {
  // The same all-reduce twice in a trace on torus4x4: the first member to
  // reach it forks a copy of the simulation per candidate; every member
  // then runs the faster (a phase per dimension), and the repeat takes the
  // same without simulating again. The children write nothing: the
  // timeline has each collective once per NPU.
  const std::string dir = testutil::scratch_dir("probe-trace");
  const std::string platform = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/torus4x4.yaml";
  const auto gen = testutil::run_fabricsim(
      "gen collective --npus 16 --type all_reduce --bytes 256M --iterations 2 --out " + dir + "/ar");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const double phases =
      collbench_row(dir, "--platform " + platform + " -b 256M -e 256M --algo hierarchical")["time_us"];
  const double direct = collbench_row(dir, "--platform " + platform + " -b 256M -e 256M --algo direct")["time_us"];
  const auto run = [&](const std::string& extra, const std::string& name) {
    const auto r =
        testutil::run_fabricsim("run --platform " + platform + " --workload " + dir + "/ar --report " + dir + "/" +
                                name + ".json --timeline " + dir + "/" + name + "-timeline.json" + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(testutil::read_text(dir + "/" + name + ".json"));
  };
  const auto probed = run("", "probed");
  const auto estimated = run(" --set collectives.probe_margin=0", "estimated");
  EXPECT_NEAR(probed["sim_time_ns"].get<double>(), 2 * phases * 1e3, 0.002 * 2 * phases * 1e3);
  EXPECT_GT(estimated["sim_time_ns"].get<double>(), 1.1 * probed["sim_time_ns"].get<double>());
  ASSERT_TRUE(probed.contains("default_choice_probes")) << probed.dump();
  const auto& probes = probed["default_choice_probes"];
  EXPECT_EQ(probes["simulations"], 2);
  ASSERT_EQ(probes["collectives"].size(), 1u) << probes.dump();
  const auto& decision = probes["collectives"][0];
  EXPECT_EQ(decision["chosen"], "hierarchical");
  EXPECT_EQ(decision["bytes"], 256 * MiB);
  // Each candidate timed from the first member's start to the last one's
  // end, as collbench times it alone; direct's first members to finish
  // start the repeat while the others end, and slow them by 1.7%.
  EXPECT_NEAR(decision["simulated_ns"]["hierarchical"].get<double>(), phases * 1e3, 0.002 * phases * 1e3);
  EXPECT_NEAR(decision["simulated_ns"]["direct"].get<double>(), direct * 1.017e3, 0.002 * direct * 1e3);
  EXPECT_FALSE(estimated.contains("default_choice_probes"));
  const auto timeline = nlohmann::json::parse(testutil::read_text(dir + "/probed-timeline.json"));
  std::map<std::string, int> collectives;
  for (const auto& e : timeline["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (name.rfind("all_reduce ", 0) == 0) ++collectives[name];
  }
  EXPECT_EQ(collectives,
            (std::map<std::string, int>{{"all_reduce ALL_REDUCE_0", 16}, {"all_reduce ALL_REDUCE_1", 16}}));
}

TEST(DefaultChoice, ATracesCandidatesRunSideBySideEachWithItsOwnTime) {
  // A 4 MiB all-reduce on torus4x4 with every algorithm within the margin
  // (10: 1,000%): five candidates, run as many at once as the process has
  // CPUs, then the next ones. Each candidate's time is its own (a
  // collective alone from the start: collbench's row for that algorithm),
  // and the decision is the same with one CPU (taskset: one after another)
  // as with all this process may use (on one CPU both runs are one after
  // another).
  const std::string dir = testutil::scratch_dir("probe-side-by-side");
  const std::string platform = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/torus4x4.yaml";
  const auto gen = testutil::run_fabricsim(
      "gen collective --npus 16 --type all_reduce --bytes 4M --iterations 1 --out " + dir + "/ar");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const auto run = [&](const std::string& launcher, const std::string& name) {
    const auto r = testutil::run_fabricsim("run --platform " + platform + " --workload " + dir + "/ar --report " + dir +
                                               "/" + name + ".json --set collectives.probe_margin=10",
                                           launcher);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto report = nlohmann::json::parse(testutil::read_text(dir + "/" + name + ".json"));
    EXPECT_TRUE(report.contains("default_choice_probes")) << report.dump();
    return report.value("default_choice_probes", nlohmann::json::object());
  };
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int first_cpu = 0;
  while (!CPU_ISSET(first_cpu, &allowed)) ++first_cpu;
  const auto side_by_side = run("", "free");
  const auto one_cpu = run("taskset -c " + std::to_string(first_cpu), "one-cpu");
  EXPECT_EQ(side_by_side, one_cpu);
  EXPECT_EQ(side_by_side["simulations"], 5);
  ASSERT_EQ(side_by_side["collectives"].size(), 1u) << side_by_side.dump();
  const auto& simulated = side_by_side["collectives"][0]["simulated_ns"];
  ASSERT_EQ(simulated.size(), 5u) << simulated.dump();
  std::string fastest;
  double best = 0;
  for (const char* algorithm : {"ring", "direct", "halving_doubling", "double_binary_tree", "hierarchical"}) {
    const double alone = collbench_row(dir, "--platform " + platform + " -b 4M -e 4M --algo " + algorithm)["time_us"];
    ASSERT_TRUE(simulated.contains(algorithm)) << simulated.dump();
    EXPECT_NEAR(simulated[algorithm].get<double>(), alone * 1e3, 0.002 * alone * 1e3) << algorithm;
    if (fastest.empty() || alone < best) {
      fastest = algorithm;
      best = alone;
    }
  }
  EXPECT_EQ(side_by_side["collectives"][0]["chosen"], fastest);
}

TEST(DefaultChoice, AProbeOfATraceLongerThanItsWindowReadsOnInItsOwnCopy) {
  // 9,000 independent nodes per NPU on torus4x4, a 256 MiB all-reduce among
  // them at node 2,999: while it runs, the compute nodes around it finish
  // and the workload reads on past its 4,096-node window. Each probe's copy
  // reads the trace on from where the parent was, at its own offset (cut
  // off at /dev/null, every candidate's copy ended without a time and the
  // estimate's direct ran, 18% slower), and the parent reads on from where
  // it was, as if nothing had forked.
  const std::string dir = testutil::scratch_dir("probe-long-trace");
  const std::string platform = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/torus4x4.yaml";
  const auto gen = testutil::run_fabricsim(
      "gen long --npus 16 --nodes 9000 --collective-every 3000 --collective-bytes "
      "256M --independent --out " +
      dir + "/long");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const double phases =
      collbench_row(dir, "--platform " + platform + " -b 256M -e 256M --algo hierarchical")["time_us"];
  const auto run = testutil::run_fabricsim("run --platform " + platform + " --workload " + dir + "/long --report " +
                                           dir + "/r.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto report = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  ASSERT_TRUE(report.contains("default_choice_probes")) << report.dump();
  const auto& probes = report["default_choice_probes"]["collectives"];
  ASSERT_EQ(probes.size(), 1u) << probes.dump();  // the two later all-reduces take its decision
  EXPECT_EQ(probes[0]["chosen"], "hierarchical");
  ASSERT_TRUE(probes[0]["simulated_ns"]["direct"].is_number()) << probes.dump();
  ASSERT_TRUE(probes[0]["simulated_ns"]["hierarchical"].is_number()) << probes.dump();
  EXPECT_NEAR(probes[0]["simulated_ns"]["hierarchical"].get<double>(), phases * 1e3, 0.002 * phases * 1e3);
  // Every node ran, in the parent, once: the compute node the copies read
  // past the window is counted once per NPU.
  for (const auto& npu : report["npus"]) EXPECT_EQ(npu["nodes_done"], 9000) << npu.dump();
}

TEST(DefaultChoice, AProbedDecisionIsSharedOnlyByGroupsOfTheSameShape) {
  // Nodes of 4 NPUs whose switches reduce (pull): the same collective on
  // {0..3} and {4..7} is one question, on {2..5} (across two nodes, no
  // reduction units) another, which {6..9} shares; a group across nodes
  // and one inside a node differ by their nodes alone where no switch
  // reduces, two nodes by their reduction units alone where one has them.
  // Shared, a decision for in_switch inside a node reached a group across
  // two, where in_switch does not run.
  CollectiveConfig config;
  config.dims = {Dimension{4, 1}, Dimension{4, 4}};
  PlatformHints reducing;
  reducing.in_switch_domains = {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}};
  reducing.in_switch_pull = {true, true, true, true};
  const PlatformHints plain;
  const auto shape = [&](std::vector<int> ranks, const PlatformHints& hints, int root = 0) {
    Group g;
    g.ranks = std::move(ranks);
    return ChoiceProbe::Shape::of(CollectiveType::kAllReduce, 64 * MiB, root, false, g, config, hints);
  };
  const auto same = [](const ChoiceProbe::Shape& a, const ChoiceProbe::Shape& b) { return !(a < b) && !(b < a); };
  EXPECT_TRUE(same(shape({0, 1, 2, 3}, reducing), shape({4, 5, 6, 7}, reducing)));
  EXPECT_FALSE(same(shape({0, 1, 2, 3}, reducing), shape({2, 3, 4, 5}, reducing)));
  EXPECT_TRUE(same(shape({2, 3, 4, 5}, reducing), shape({6, 7, 8, 9}, reducing)));
  EXPECT_FALSE(same(shape({0, 1, 2, 3}, plain), shape({2, 3, 4, 5}, plain)));
  EXPECT_TRUE(same(shape({0, 1, 2, 3}, plain), shape({8, 9, 10, 11}, plain)));
  EXPECT_FALSE(same(shape({0, 1, 2, 3}, plain), shape({0, 1, 2, 3}, plain, 1)));
  PlatformHints first_node_reduces;  // alike but for the reduction units
  first_node_reduces.in_switch_domains = {{0, 1, 2, 3}};
  first_node_reduces.in_switch_pull = {true};
  EXPECT_FALSE(same(shape({0, 1, 2, 3}, first_node_reduces), shape({4, 5, 6, 7}, first_node_reduces)));
}

TEST(DefaultChoice, AnAlgorithmThePlatformNamesIsNotProbedAway) {
  // torus4x4 at 256 MiB probes direct against a phase per dimension and
  // runs the latter (above); a platform (or --set) that names direct for
  // all-reduces gets direct, unprobed.
  const std::string dir = testutil::scratch_dir("probe-named");
  const std::string base =
      "--platform " + std::string(FABRICSIM_SOURCE_DIR) + "/platforms/torus4x4.yaml -b 256M -e 256M";
  const double direct = collbench_row(dir, base + " --algo direct")["time_us"];
  const auto named = collbench_row(dir, base + " --set collectives.algorithms.all_reduce=direct");
  EXPECT_EQ(named["algorithm"], "direct");
  EXPECT_DOUBLE_EQ(named["time_us"].get<double>(), direct);
  EXPECT_FALSE(named.contains("probed_us")) << named.dump();
}

TEST(DefaultChoice, TheHierarchicalEstimateTakesTheLevelsInTurnInOneChunkAndPipelinedInMany) {
  // Two levels (4 NPUs at 200 GB/s in a node, rings of 4 at 25 GB/s across)
  // cut into 4 MiB chunks: at 4 MiB one chunk takes the levels one after
  // another; at 64 MiB sixteen overlap, the network's time plus one chunk's
  // node levels. The estimate the default choice weighs is within 5% of the
  // simulation at both; taking the slowest level alone it was 30% low at
  // 4 MiB.
  const std::string dir = testutil::scratch_dir("hierarchical-estimate");
  const std::string file = dir + "/p.yaml";
  testutil::write_text(
      file,
      "npus: 16\ncollectives: {chunks: 1, pipeline_chunk: 4 MiB, chunks_per_stage: 2}\nfabrics:\n"
      "  - {name: node, topology: switch, group_size: 4, link: {bandwidth_GBps: 200, latency_ns: 200}}\n"
      "  - {name: net, topology: ring, group_size: 4, group_stride: 4, link: {bandwidth_GBps: 25, "
      "latency_ns: 1000}}\n");
  for (const std::string size : {"4M", "64M"}) {
    const auto chosen = collbench_row(dir, "--platform " + file + " --why -b " + size + " -e " + size);
    ASSERT_TRUE(chosen.contains("estimates_us")) << chosen.dump();
    const double estimate = chosen["estimates_us"]["hierarchical"].get<double>();
    const double simulated =
        collbench_row(dir, "--platform " + file + " --algo hierarchical -b " + size + " -e " + size)["time_us"];
    EXPECT_NEAR(estimate, simulated, 0.05 * simulated) << size;
  }
}

TEST(DefaultChoice, ASharpTopLevelAllReducesOnceAndALowerSharpLevelSendsEachPartUpAgain) {
  // Nodes of 4 NPUs (200 GB/s) whose switches reduce by push (SHARP), and
  // 2 members at 25 GB/s across them, 256 MiB in 4 MiB chunks. At the top,
  // the level all-reduces each member's S/4 at once (NCCL's CollNet over
  // SHARP): S/4 up each link at 25 GB/s = 2,684 us bounds the pipelined
  // collective. With a fast level of 2 above it (200 GB/s), the slow level
  // runs a reduce-scatter and then an all-gather, which sends each
  // member's S/8 part up again: 1.5 x S/4 = 4,026 us. The estimate the
  // default choice weighs carries the same bytes in both. (A top SHARP
  // level ran as reduce-scatter and all-gather too, and was estimated as
  // one all-reduce: a third low.)
  const std::string dir = testutil::scratch_dir("pushed-level-estimate");
  const std::string node =
      "  - {name: node, topology: switch, group_size: 4, algorithm: in_switch, link: {bandwidth_GBps: 200, "
      "latency_ns: 200}, switch: {reduction: {protocol: push}}}\n"
      "  - {name: slow, topology: switch, group_size: 2, group_stride: 4, algorithm: in_switch, link: "
      "{bandwidth_GBps: 25, latency_ns: 1000}, switch: {reduction: {protocol: push}}}\n";
  const std::string fast_top =
      "  - {name: top, topology: switch, group_size: 2, group_stride: 8, algorithm: in_switch, link: "
      "{bandwidth_GBps: 200, latency_ns: 1000}, switch: {reduction: {protocol: push}}}\n";
  const double wire_us = 64 * MiB / 25e9 * 1e6;  // S/4 at 25 GB/s
  for (const bool slow_on_top : {true, false}) {
    const std::string file = dir + (slow_on_top ? "/top.yaml" : "/middle.yaml");
    testutil::write_text(
        file, std::string("npus: ") + (slow_on_top ? "8" : "16") +
                  "\ncollectives: {chunks: 1, pipeline_chunk: 4 MiB, chunks_per_stage: 2}\nfabrics:\n" + node +
                  (slow_on_top ? "" : fast_top));
    const double bound_us = (slow_on_top ? 1.0 : 1.5) * wire_us;
    const auto chosen = collbench_row(dir, "--platform " + file + " --why -b 256M -e 256M");
    ASSERT_TRUE(chosen.contains("estimates_us")) << chosen.dump();
    EXPECT_EQ(chosen["algorithm"], "hierarchical");
    EXPECT_NEAR(chosen["time_us"].get<double>(), bound_us, 0.03 * bound_us) << file;
    EXPECT_NEAR(chosen["estimates_us"]["hierarchical"].get<double>(), chosen["time_us"].get<double>(),
                0.03 * chosen["time_us"].get<double>())
        << file;
  }
}

TEST(DefaultChoice, APulledTopLevelOverPartsOneElementApartFinishesWithTheRightSums) {
  // A ring of 2 below a pulled (NVLS) top of 2, 1,025 fp32 elements, 1 KiB
  // pieces (256 elements): the ring leaves one NPU 513 elements and the
  // other 512, which the top level's pieces cut into 3 and 2. A top
  // all-reduce takes a round per piece, so the ring's all-gather coming
  // back down had round numbers one apart on the two NPUs and the
  // collective stuck; a pulled top runs a reduce-scatter and an all-gather,
  // whose rounds do not depend on the part.
  const std::string dir = testutil::scratch_dir("pulled-top");
  const std::string file = dir + "/p.yaml";
  testutil::write_text(
      file,
      "npus: 4\ncollectives: {chunks: 1}\nfabrics:\n"
      "  - {name: low, topology: switch, group_size: 2, algorithm: ring, link: {bandwidth_GBps: 200, "
      "latency_ns: 200}}\n"
      "  - {name: top, topology: switch, group_size: 2, group_stride: 2, algorithm: in_switch, link: "
      "{bandwidth_GBps: 50, latency_ns: 500}, switch: {reduction: {protocol: pull, pipeline: 1 KiB}}}\n");
  const auto row = collbench_row(dir, "--platform " + file + " --algo hierarchical --data -b 4100 -e 4100");
  EXPECT_EQ(row.value("size_bytes", 0), 4100);
}

TEST(ClosedForm, WindowedDirectTakesARoundPerWindowOfPeers) {
  // A link per pair: a round to w peers takes one block's time and one
  // latency whatever w, so a window of w makes (n-1)/w rounds, rounded up
  // (twice for all-reduce: reduce-scatter, then all-gather). ASTRA-sim's
  // directN, 8 NPUs at 50 GiB/s and 500 ns, 8 MiB in one chunk.
  const std::string dir = testutil::scratch_dir("direct-window");
  const std::string net = testutil::astra_network(dir, "FullyConnected", 8, 50, 500);
  const double block = 1.0 * MiB / (50 * 1073741824.0) + 500e-9;
  for (const int w : {0, 2, 3, 7, 9}) {
    const std::string name = w == 0 ? "direct" : "direct" + std::to_string(w);
    testutil::write_text(dir + "/s.json", "{\"all-to-all-implementation\": [\"" + name +
                                              "\"], \"all-reduce-implementation\": [\"" + name +
                                              "\"], \"preferred-dataset-splits\": 1}");
    const int rounds = w == 0 ? 1 : (7 + std::min(w, 7) - 1) / std::min(w, 7);
    for (const std::string op : {"all_to_all", "all_reduce"}) {
      const double us = collbench_row(
          dir, "--platform " + net + " --system " + dir + "/s.json --op " + op + " -b 8M -e 8M")["time_us"];
      const double want = (op == "all_reduce" ? 2 : 1) * rounds * block * 1e6;
      EXPECT_NEAR(us, want, 1e-3 * want) << name << " " << op;
    }
  }
}

TEST(DefaultChoice, AReduceScatterOrAllGatherOverSeveralDimensionsTakesAPhasePerDimension) {
  // [Switch 8, Switch 4] at 400 and 25 GiB/s: flat, every ring step waits on
  // the slow dimension; a phase per dimension moves 1/8 of the data across
  // it. The default takes the phases, and they are faster by far.
  const std::string dir = testutil::scratch_dir("default-phases");
  testutil::write_text(dir + "/n.yml",
                       "topology: [ Switch, Switch ]\nnpus_count: [ 8, 4 ]\nbandwidth: [ 400, 25 ]\n"
                       "latency: [ 500, 1000 ]\n");
  for (const std::string op : {"all_gather", "reduce_scatter"}) {
    const auto row = [&](const std::string& algo) {
      return collbench_row(dir, "--platform " + dir + "/n.yml --op " + op + algo + " -b 64M -e 64M");
    };
    const auto chosen = row(""), ring = row(" --algo ring");
    EXPECT_EQ(chosen["algorithm"], "hierarchical") << op;
    EXPECT_LT(chosen["time_us"].get<double>(), ring["time_us"].get<double>() / 4) << op;
  }
}

// ---- scheduling between concurrent collectives ---------------------------------------

/// Runs two independent 4 MiB collectives of `type` (trace nodes "first"
/// and "second", the second with comm_priority 5) on the `npus` NPUs of the
/// platform `platform_text`; returns each one's end time on NPU `observed`.
std::map<std::string, double> two_collectives_ending(int npus, CollectiveType type, const std::string& platform_text,
                                                     int observed) {
  const std::string dir = testutil::scratch_dir("two-collectives");
  for (int r = 0; r < npus; ++r) {
    traces::EtWriter w(dir + "/two." + std::to_string(r) + ".et");
    for (int i = 0; i < 2; ++i) {
      ChakraProtoMsg::Node n;
      n.set_id(static_cast<std::uint64_t>(i));
      n.set_name(i == 0 ? "first" : "second");
      n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
      traces::add_int(n, "comm_type", static_cast<std::int64_t>(type));
      traces::add_int(n, "comm_size", 4 * MiB);
      traces::add_int(n, "comm_priority", i == 0 ? 0 : 5);
      w.write(n);
    }
    w.close();
  }
  Simulation sim(load_platform(testutil::platform_file(platform_text)));
  WorkloadSettings ws;
  ws.prefix = dir + "/two";
  sim.load_workload(ws);
  EXPECT_EQ(sim.run(), Simulation::Outcome::kFinished);
  std::map<std::string, double> end;
  for (const auto& c : sim.platform().npu(observed).collectives()) end[c.name] = ticks_to_ns(c.end);
  EXPECT_EQ(end.size(), 2u);
  return end;
}

/// Two independent all-reduces on a ring of 4 NPUs, one chunk in flight at a
/// time, ordered by `policy`; returns the end times of the first and second.
std::pair<double, double> two_collectives(const std::string& policy) {
  auto end = two_collectives_ending(
      4, CollectiveType::kAllReduce,
      "npus: 4\nnpu: {max_collectives_in_flight: 2}\ncollectives: {chunks: 4, active_chunks: 1, scheduling: " + policy +
          "}\nfabrics: [{topology: ring, link: {bandwidth_GBps: 100, latency_ns: 500}}]\n",
      0);
  return {end["first"], end["second"]};
}

TEST(Scheduling, FifoFinishesTheFirstCollectiveFirst) {
  const auto [first, second] = two_collectives("fifo");
  EXPECT_LT(first, second);
  EXPECT_LT(first, 0.55 * second);  // the second waited for all four chunks of the first
}

TEST(Scheduling, LifoFinishesTheLatestCollectiveFirst) {
  const auto [first, second] = two_collectives("lifo");
  EXPECT_LT(second, 0.7 * first);  // one chunk of the first had started: 5 of 8
}

TEST(Scheduling, PriorityFinishesTheHigherCommPriorityFirst) {
  const auto [first, second] = two_collectives("priority");
  EXPECT_LT(second, 0.7 * first);  // one chunk of the first had started: 5 of 8
}

TEST(Scheduling, TwoCollectivesToOnePeerTakeTurnsNotOneBehindTheOther) {
  // Two independent broadcasts of 4 MiB from NPU 0 to NPU 1 (the world
  // group's first two collectives, sequence numbers 0 and 1), both in
  // flight: NPU 0 posts both messages to one peer at once. A collective's
  // own chunks queue behind each other at the NIC, different collectives
  // take turns frame by frame, so both end near twice one alone (79.6 and
  // 84.9 us). When the two shared a queue (its number's lowest bit forced to
  // 1), the first went alone at full speed and ended at half the second's
  // time (42.9 and 84.9 us).
  auto end = two_collectives_ending(
      2, CollectiveType::kBroadcast,
      "npus: 2\nnpu: {max_collectives_in_flight: 2}\ncollectives: {chunks: 1, algorithms: {broadcast: ring}}\n"
      "fabrics: [{topology: switch, link: {bandwidth_GBps: 100, latency_ns: 500}}]\n",
      1);
  EXPECT_GT(end["first"], 0.9 * end["second"]);
}

// ---- ASTRA-sim system files ------------------------------------------------------------

/// The InputError the system file `text` (written to DIR/s.json) gives on
/// the network file DIR/n.yml; empty when the file is accepted.
std::string system_refusal(const std::string& dir, const std::string& text) {
  testutil::write_text(dir + "/s.json", text);
  PlatformSpec spec = load_platform(dir + "/n.yml");
  std::vector<std::string> notes;
  try {
    apply_astra_system(dir + "/s.json", spec, notes);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(AstraSystem, SettingsMapOntoThePlatformAndUnknownKeysAreReported) {
  const std::string dir = testutil::scratch_dir("system");
  testutil::write_text(
      dir + "/n.yml",
      "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 1000 ]\n");
  testutil::write_text(dir + "/s.json", R"({
    "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 2,
    "preferred-dataset-splits": 8, "all-reduce-implementation": ["ring", "direct"],
    "all-to-all-implementation": ["oneDirect"], "local-mem-bw": 1600, "peak-perf": 900,
    "roofline-enabled": 1, "boost-mode": 1, "collective-optimization": "baseline", "frobnicate": 3})");
  PlatformSpec spec = load_platform(dir + "/n.yml");
  std::vector<std::string> notes;
  apply_astra_system(dir + "/s.json", spec, notes);
  EXPECT_EQ(spec.collectives.policy, SchedulingPolicy::kLifo);
  EXPECT_EQ(spec.collectives.chunks, 8u);
  // Two chunks per dimension: two in each level's stage, four on the NPU.
  EXPECT_EQ(spec.collectives.chunks_per_stage, 2u);
  EXPECT_EQ(spec.collectives.active_chunks, 4u);
  EXPECT_EQ(spec.collectives.pipeline_chunk, 0u);  // exactly preferred-dataset-splits chunks
  EXPECT_EQ(spec.fabrics[0].nic.message_overhead, ns_to_ticks(10));
  EXPECT_EQ(spec.collectives.algorithm[0], AlgorithmKind::kHierarchical);
  ASSERT_EQ(spec.collectives.dims.size(), 2u);
  EXPECT_EQ(spec.collectives.dims[0].algorithm, AlgorithmKind::kRing);
  EXPECT_EQ(spec.collectives.dims[1].algorithm, AlgorithmKind::kDirect);
  EXPECT_EQ(spec.collectives.algorithm[static_cast<int>(CollectiveType::kAllToAll)], AlgorithmKind::kDirect);
  EXPECT_DOUBLE_EQ(spec.npu.peak_flops, 900e12);
  EXPECT_TRUE(spec.roofline);
  // local-mem-bw: the memory's bandwidth; a reduction moves 3x its bytes.
  EXPECT_DOUBLE_EQ(spec.npu.memory_bandwidth.GBps_value(), 1600);
  EXPECT_NEAR(spec.collectives.local_reduce.GBps_value(), 1600.0 / 3, 1e-9);
  std::string all;
  for (const auto& n : notes) all += n + "\n";
  EXPECT_NE(all.find("\"frobnicate\" is not an ASTRA-sim system key fabricsim knows; ignored, as ASTRA-sim ignores it"),
            std::string::npos)
      << all;
  EXPECT_EQ(notes.size(), 1u) << all;  // boost-mode and collective-optimization: modeled, no note
  EXPECT_EQ(spec.collectives.level_data, LevelData::kWhole);  // baseline: every level all-reduces the whole chunk
  EXPECT_EQ(spec.collectives.direct_window, 0u);

  // EXPLICIT: by each node's comm_priority (Scheduling.PriorityFinishes...);
  // directN: N peers at once; localBWAware: each level on the part left.
  testutil::write_text(dir + "/explicit.json", R"({"scheduling-policy": "EXPLICIT",
      "all-to-all-implementation": ["oneDirect6"], "collective-optimization": "localBWAware"})");
  PlatformSpec other = load_platform(dir + "/n.yml");
  apply_astra_system(dir + "/explicit.json", other, notes);
  // ASTRA-sim's default for a key left out: one chunk per dimension.
  EXPECT_EQ(other.collectives.chunks_per_stage, 1u);
  EXPECT_EQ(other.collectives.active_chunks, 2u);
  EXPECT_EQ(other.collectives.policy, SchedulingPolicy::kPriority);
  // A group smaller than the platform runs a ring, whatever the file names
  // (ASTRA-sim's CommunicatorGroup); the whole platform runs the file's
  // phases; gather keeps direct, the only algorithm it has.
  const std::vector<int> half = {0, 1, 2, 3}, eight = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(choose_algorithm(spec.collectives, PlatformHints{}, CollectiveType::kAllReduce, MiB, half, false),
            AlgorithmKind::kRing);
  EXPECT_EQ(choose_algorithm(spec.collectives, PlatformHints{}, CollectiveType::kAllReduce, MiB, eight, true),
            AlgorithmKind::kHierarchical);
  EXPECT_EQ(choose_algorithm(spec.collectives, PlatformHints{}, CollectiveType::kGather, MiB, half, false),
            AlgorithmKind::kDirect);
  EXPECT_EQ(other.collectives.direct_window, 6u);
  EXPECT_EQ(other.collectives.level_data, LevelData::kPart);
}

TEST(AstraSystem, BaselineAllReducesTheWholeChunkInEveryDimensionAndLocalBWAwareShrinksIt) {
  // ASTRA-sim's generate_collective: under "baseline" every dimension runs
  // an all-reduce of the whole chunk; under "localBWAware" the first
  // reduce-scatters, the last all-reduces the quarter left, and the first
  // all-gathers back. [Ring 4, Switch 2] at 50 and 25 GiB/s, 500 and 1000 ns
  // per link, 16 MiB in one chunk: the ring's six steps of S/4 are common;
  // the switch's two steps (two links each) carry S/2 or S/8.
  const std::string dir = testutil::scratch_dir("system-levels");
  testutil::write_text(
      dir + "/n.yml",
      "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 1000 ]\n");
  const auto time_us = [&](const std::string& optimization) {
    testutil::write_text(dir + "/s.json",
                         R"({"all-reduce-implementation": ["ring", "ring"], "preferred-dataset-splits": 1,
        "collective-optimization": ")" +
                             optimization + "\"}");
    return collbench_row(dir, "--platform " + dir + "/n.yml --system " + dir + "/s.json -b 16M -e 16M")["time_us"]
        .get<double>();
  };
  const double S = 16.0 * MiB, GiB = 1073741824.0;
  const double ring = 6 * (S / 4 / (50 * GiB) + 500e-9);
  const double whole = (ring + 2 * (S / 2 / (25 * GiB) + 2000e-9)) * 1e6;
  const double part = (ring + 2 * (S / 8 / (25 * GiB) + 2000e-9)) * 1e6;
  EXPECT_NEAR(time_us("baseline"), whole, 1e-3 * whole);
  EXPECT_NEAR(time_us("localBWAware"), part, 1e-3 * part);
}

TEST(Themis, BeatsTheBaselineOnAnAsymmetricThreeDimensionalNetwork) {
  // [Ring 4, Switch 2, Switch 2] at 50, 200 and 100 GiB/s per link, a 64 MiB
  // all-reduce in 16 chunks. Baseline: every chunk reduce-scatters over the
  // slow ring first, so the ring's two passes of 3/4 of the data bound it:
  // 2 x 48 MiB / 50 GiB/s = 1875 us. The bandwidth-balanced bound spreads
  // the 2 x 15/16 x 64 MiB each NPU sends over all its links (the ring's
  // one direction a reduce-scatter uses, 50 + 200 + 100 GiB/s): 336 us.
  // Themis must gain at least 2x over the baseline and cannot pass the bound.
  const std::string dir = testutil::scratch_dir("themis");
  testutil::write_text(dir + "/n.yml",
                       "topology: [ Ring, Switch, Switch ]\nnpus_count: [ 4, 2, 2 ]\n"
                       "bandwidth: [ 50, 200, 100 ]\nlatency: [ 500, 500, 500 ]\n");
  // Themis balances the levels' loads as each reduce-scatter shrinks the
  // data for the next: localBWAware, in both.
  testutil::write_text(dir + "/base.json", R"({"all-reduce-implementation": ["ring", "ring", "ring"],
      "preferred-dataset-splits": 16, "collective-optimization": "localBWAware"})");
  testutil::write_text(dir + "/themis.json", R"({"all-reduce-implementation": ["ring", "ring", "ring"],
      "preferred-dataset-splits": 16, "collective-optimization": "localBWAware", "inter-dimension-scheduling": "themis"})");
  const auto time_us = [&](const std::string& system) {
    return collbench_row(dir,
                         "--platform " + dir + "/n.yml --system " + dir + "/" + system + " -b 64M -e 64M")["time_us"]
        .get<double>();
  };
  const double S = 64.0 * 1048576, GiB = 1073741824.0;
  const double baseline_bound = 2 * S * 3 / 4 / (50 * GiB) * 1e6;
  const double balanced_bound = 2 * S * 15 / 16 / (350 * GiB) * 1e6;
  const double baseline = time_us("base.json"), themis = time_us("themis.json");
  EXPECT_NEAR(baseline, baseline_bound, 0.01 * baseline_bound);
  EXPECT_LT(themis, baseline / 2);
  EXPECT_GT(themis, balanced_bound);
}

TEST(AstraSystem, ReduceScatterAndAllGatherRunAPhasePerDimension) {
  // ASTRA-sim's generate_collective: reduce-scatter dimension by dimension
  // from the lowest, all-gather from the highest. [Ring 4, Switch 2] at 50
  // and 25 GiB/s, 500 and 1000 ns per link, 16 MiB in one chunk: the ring's
  // three steps carry S/4, the switch's one step (two links) S/8.
  const std::string dir = testutil::scratch_dir("system-rs-ag");
  testutil::write_text(
      dir + "/n.yml",
      "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 1000 ]\n");
  testutil::write_text(dir + "/s.json", R"({"reduce-scatter-implementation": ["ring", "direct"],
      "all-gather-implementation": ["ring", "direct"], "preferred-dataset-splits": 1})");
  const double S = 16.0 * MiB, GiB = 1073741824.0;
  const double ring = 3 * (S / 4 / (50 * GiB) + 500e-9), cross = S / 8 / (25 * GiB) + 2000e-9;
  for (const auto& [op, want_s] :
       std::vector<std::pair<std::string, double>>{{"reduce_scatter", ring + cross}, {"all_gather", cross + ring}}) {
    const auto row =
        collbench_row(dir, "--platform " + dir + "/n.yml --system " + dir + "/s.json --op " + op + " -b 16M -e 16M");
    EXPECT_NEAR(row["time_us"].get<double>(), want_s * 1e6, 1e-3 * want_s * 1e6) << op;
    EXPECT_EQ(row["algorithm"], "hierarchical") << op;
  }
  // A level of them runs ring or direct.
  const std::string error = system_refusal(dir, R"({"reduce-scatter-implementation": ["ring", "halvingDoubling"]})");
  EXPECT_NE(error.find("dimension 1 runs halving_doubling; reduce_scatter phases per dimension are modeled with ring "
                       "and direct only"),
            std::string::npos)
      << "halvingDoubling as a reduce-scatter level gave: " << error;
}

/// On the network dir/n.yml with the system file dir/<system>.json: an
/// all-to-all of 16 MiB per NPU takes `want_us` (0.1%) and runs phases per
/// dimension; in data mode with `data_sizes` every byte lands right.
void expect_phased_all_to_all(const std::string& dir, const std::string& system, double want_us,
                              const std::string& data_sizes) {
  const std::string files = "--platform " + dir + "/n.yml --system " + dir + "/" + system + ".json --op all_to_all ";
  const auto row = collbench_row(dir, files + "-b 16M -e 16M");
  EXPECT_NEAR(row["time_us"].get<double>(), want_us, 1e-3 * want_us) << system;
  EXPECT_EQ(row["algorithm"], "hierarchical") << system;
  const auto data = testutil::run_fabricsim("collbench --quiet --data " + files + data_sizes);
  EXPECT_EQ(data.exit_code, 0) << system << ": " << data.err;
}

/// Runs an all-to-all in data mode on a network and a system file written
/// to `dir` as name.yml and name.json: every byte must land where it belongs.
void expect_all_to_all_data(const std::string& dir, const std::string& name, const std::string& network,
                            const std::string& system, const std::string& sizes) {
  testutil::write_text(dir + "/" + name + ".yml", network);
  testutil::write_text(dir + "/" + name + ".json", system);
  const auto r = testutil::run_fabricsim("collbench --quiet --data --platform " + dir + "/" + name + ".yml --system " +
                                         dir + "/" + name + ".json --op all_to_all " + sizes);
  EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
}

TEST(AstraSystem, AllToAllRunsAPhasePerDimensionWithDirect) {
  // [Switch 4, Switch 2] at 50 and 25 GiB/s, 500 and 1000 ns, 16 MiB per
  // NPU in one chunk: dimension 0 sends 3 segments of 2 blocks (3/4 of S)
  // through an NPU's link, dimension 1 one segment of 4 blocks (S/2), each
  // crossing two links.
  const std::string dir = testutil::scratch_dir("system-a2a");
  testutil::write_text(
      dir + "/n.yml",
      "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 1000 ]\n");
  testutil::write_text(dir + "/s.json",
                       R"({"all-to-all-implementation": ["direct", "direct"], "preferred-dataset-splits": 1})");
  const double S = 16.0 * MiB, GiB = 1073741824.0;
  const double want = (3 * S / 4 / (50 * GiB) + S / 2 / (25 * GiB) + 2 * 500e-9 + 2 * 1000e-9) * 1e6;
  // Every byte lands where it belongs, with sizes not a multiple of the
  // NPUs, in two chunks; and on three dimensions in one.
  expect_phased_all_to_all(dir, "s", want, "-b 100 -e 3000 -f 5 --chunks 2");
  expect_all_to_all_data(
      dir, "s3",
      "topology: [ Switch, Switch, Ring ]\nnpus_count: [ 2, 3, 2 ]\n"
      "bandwidth: [ 50, 25, 10 ]\nlatency: [ 500, 1000, 800 ]\n",
      R"({"all-to-all-implementation": ["direct", "direct", "direct"], "preferred-dataset-splits": 1})",
      "-b 100 -e 30000 -f 5");
  // With a window of two peers: dimension 0 takes two rounds (peers 1 and
  // 3 away, then 2), each paying its hops' latency; dimension 1 sends to its
  // one peer. In place the window takes peers in pairs; ASTRA-sim's order
  // (1 and 2, then 3) takes as long here.
  testutil::write_text(dir + "/w.json",
                       R"({"all-to-all-implementation": ["direct2", "direct2"], "preferred-dataset-splits": 1})");
  expect_phased_all_to_all(dir, "w", want + 2 * 500e-9 * 1e6, "-b 100 -e 3000 -f 5 --chunks 2");
  // Its middle dimension cannot take chunks that split blocks.
  const auto split = testutil::run_fabricsim("collbench --quiet --platform " + dir + "/s3.yml --system " + dir +
                                             "/s3.json --op all_to_all -b 1M -e 1M --chunks 2");
  EXPECT_EQ(split.exit_code, 2);
  EXPECT_NE(split.err.find("its all-to-all phase in dimension 1 (neither the lowest nor the highest)"),
            std::string::npos)
      << split.err;
}

TEST(AstraSystem, AllToAllRunsARingRelayPerDimension) {
  // ASTRA-sim's usual ["ring", "ring"]: each dimension relays n(n-1)/2
  // blocks of S/n a hop at a time, one in flight. [Ring 4, Switch 2] at 50
  // and 25 GiB/s, 500 and 1000 ns, 16 MiB per NPU in one chunk: 6 steps of
  // S/4 over one ring link, then one of S/2 through the switch (two links).
  const std::string dir = testutil::scratch_dir("system-a2a-ring");
  testutil::write_text(
      dir + "/n.yml",
      "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 1000 ]\n");
  testutil::write_text(dir + "/s.json",
                       R"({"all-to-all-implementation": ["ring", "ring"], "preferred-dataset-splits": 1})");
  const double S = 16.0 * MiB, GiB = 1073741824.0;
  const double want = (6 * (S / 4 / (50 * GiB) + 500e-9) + S / 2 / (25 * GiB) + 2 * 1000e-9) * 1e6;
  // Every byte lands where it belongs: sizes not a multiple of the NPUs, in
  // three chunks; and on three dimensions mixing ring and direct.
  expect_phased_all_to_all(dir, "s", want, "-b 100 -e 3000 -f 5 --chunks 3");
  expect_all_to_all_data(dir, "s3",
                         "topology: [ Ring, Switch, Ring ]\nnpus_count: [ 3, 2, 4 ]\n"
                         "bandwidth: [ 50, 25, 10 ]\nlatency: [ 500, 1000, 800 ]\n",
                         R"({"all-to-all-implementation": ["ring", "direct", "ring"], "preferred-dataset-splits": 1})",
                         "-b 96 -e 30000 -f 5");
  // What a phase per dimension cannot run is refused, naming the key: an
  // odd direct window (in place, peers go in pairs) and other algorithms.
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {R"({"all-to-all-implementation": ["direct1", "ring"]})",
            "\"all-to-all-implementation\": dimension 0 runs direct with a window of 1 peers; an all_to_all phase per "
            "dimension works in place and takes its peers in pairs, so its window must be even (or reach all 3 peers)"},
           {R"({"all-to-all-implementation": ["ring", "halvingDoubling"]})",
            "\"all-to-all-implementation\": dimension 1 runs halving_doubling; all_to_all phases per dimension are "
            "modeled with ring and direct only"}}) {
    const std::string error = system_refusal(dir, text);
    EXPECT_NE(error.find(want), std::string::npos) << text << " gave: " << error;
  }
}

TEST(AstraSystem, KeysThatWouldChangeTimeAndAreNotModeledAreRefused) {
  const std::string dir = testutil::scratch_dir("system-refused");
  testutil::write_text(
      dir + "/n.yml",
      "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 1000 ]\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"scheduling-policy": "RANDOM"})", "\"scheduling-policy\": must be \"LIFO\", \"FIFO\" or \"EXPLICIT\""},
      {R"({"all-reduce-implementation": ["direct", "direct"], "all-to-all-implementation": ["direct4"]})",
       "\"all-to-all-implementation\": gives direct 4 peers at once where \"all-reduce-implementation\" gives all: "
       "fabricsim models one window for every direct collective"},
      {R"({"all-to-all-implementation": ["direct0"]})", "\"all-to-all-implementation\": unknown algorithm \"direct0\""},
      {R"({"intra-dimension-scheduling": "SCF"})", "\"intra-dimension-scheduling\": SCF is not modeled"},
      {R"({"inter-dimension-scheduling": "offlineGreedy"})",
       "\"inter-dimension-scheduling\": offlineGreedy is not modeled"},
      {R"({"L": 5})", "\"L\": only its default, 0, is modeled"},
      {R"({"all-reduce-implementation-custom": ["x", "y"]})", "must list one Chakra trace prefix"},
  };
  for (const auto& [json, message] : cases) {
    const std::string error = system_refusal(dir, json);
    EXPECT_NE(error.find(message), std::string::npos) << json << (error.empty() ? " was accepted" : " gave: " + error);
  }
}

TEST(AstraSystem, AnUnknownAlgorithmNameIsRefused) {
  const std::string dir = testutil::scratch_dir("system-bad");
  testutil::write_text(dir + "/n.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  const std::string error = system_refusal(dir, R"({"all-reduce-implementation": ["ringg"]})");
  EXPECT_NE(error.find("s.json: \"all-reduce-implementation\": unknown algorithm \"ringg\""), std::string::npos)
      << (error.empty() ? "accepted an unknown algorithm" : error);
}

TEST(Cli, AnAlgorithmThatDoesNotApplyExitsWithTwo) {
  const std::string dir = testutil::scratch_dir("cli-algo");
  const std::string net = testutil::astra_network(dir, "Ring", 4, 50, 500);
  const auto r = testutil::run_fabricsim("collbench --platform " + net + " --op gather --algo ring -b 1K -e 1K");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the ring algorithm does not apply to gather"), std::string::npos) << r.err;
  const auto v = testutil::run_fabricsim("collbench --platform " + net + " --op all_to_all_v --algo ring -b 1K -e 1K");
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_NE(v.err.find("the ring algorithm does not apply to all_to_all: all-to-all-v has no ring form"),
            std::string::npos)
      << v.err;
}

TEST(Collbench, PrintsTheNcclTestsColumnsAndWritesJson) {
  const std::string dir = testutil::scratch_dir("collbench");
  const std::string net = testutil::astra_network(dir, "Ring", 8, 50, 500);
  const auto r = testutil::run_fabricsim("collbench --platform " + net +
                                         " --op all_reduce --algo ring -b 8 -e 8G -f 2 --json " + dir + "/rows.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("algbw"), std::string::npos);
  EXPECT_NE(r.out.find("busbw"), std::string::npos);
  const auto j = nlohmann::json::parse(testutil::read_text(dir + "/rows.json"));
  ASSERT_EQ(j["rows"].size(), 31u);  // 8 B .. 8 GiB
  const auto& last = j["rows"].back();
  EXPECT_EQ(last["size_bytes"].get<std::uint64_t>(), 8ull << 30);
  // A large ring all-reduce reaches the link bandwidth in busbw.
  EXPECT_NEAR(last["busbw_GBps"].get<double>(), 50 * 1.073741824, 0.01 * 50 * 1.073741824);
  EXPECT_NEAR(last["algbw_GBps"].get<double>() * 2 * 7 / 8, last["busbw_GBps"].get<double>(), 1e-6);
}

/// A platform whose NICs stream frames of 1,000 bytes through an HBM of four
/// 256-byte-interleaved channels: where a frame falls on the channels
/// changes its time, so a row measured where the last one left the NIC's
/// stream would differ from one measured alone.
std::string channel_sensitive_platform(const std::string& dir) {
  testutil::write_text(dir + "/p.yaml",
                       "npus: 4\nnpu:\n  hbm: { size: 1 GiB, channels: 4, bandwidth: 40 GB/s, latency: 100 ns, "
                       "interleave: 256 }\nnic:\n  mtu: 1000\nfabrics:\n  - topology: switch\n"
                       "    link: { bandwidth: 100 GB/s, latency: 500 ns }\n");
  return dir + "/p.yaml";
}

TEST(Collbench, ARowDoesNotDependOnTheRowsBeforeIt) {
  // Sizes 1,000,004 four times (the factor adds a byte, whole elements take
  // it back), then 1,000,008: each row starts on fresh buffers, as
  // nccl-tests' do. Streams left where the last row ended gave 77.2960,
  // 77.2896, 77.2879 and 77.2980 us.
  const std::string dir = testutil::scratch_dir("collbench-fresh-rows");
  const auto r =
      testutil::run_fabricsim("collbench --quiet -j 1 --platform " + channel_sensitive_platform(dir) +
                              " --algo ring -b 1000004 -e 1000008 -f 1.00000001 --json " + dir + "/rows.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = nlohmann::json::parse(testutil::read_text(dir + "/rows.json"))["rows"];
  ASSERT_EQ(rows.size(), 5u);
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(rows[i]["size_bytes"], rows[0]["size_bytes"]);
    EXPECT_EQ(rows[i]["time_us"].get<double>(), rows[0]["time_us"].get<double>()) << "row " << i;
  }
}

TEST(Collbench, RowsMeasuredInParallelProcessesAreTheRowsMeasuredOneByOne) {
  // The default choice, its estimates and every time, to the last bit.
  const std::string dir = testutil::scratch_dir("collbench-jobs");
  const std::string platform = channel_sensitive_platform(dir);
  const auto rows = [&](const std::string& jobs) {
    const auto r = testutil::run_fabricsim("collbench --quiet --why -j " + jobs + " --platform " + platform +
                                           " -b 1K -e 4M -f 4 --json " + dir + "/rows" + jobs + ".json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(testutil::read_text(dir + "/rows" + jobs + ".json"))["rows"];
  };
  const auto one = rows("1"), three = rows("3");
  ASSERT_EQ(one.size(), 7u);
  EXPECT_EQ(three, one);
  EXPECT_TRUE(one[0].contains("estimates_us"));
}

TEST(Collbench, RowsFromParallelProcessesArePrintedOnceEachInOrder) {
  // Through a pipe stdout is buffered: a row not yet written when the next
  // process is forked would be written again by that process.
  const std::string dir = testutil::scratch_dir("collbench-jobs-print");
  const auto r =
      testutil::run_fabricsim("collbench -j 3 --platform " + channel_sensitive_platform(dir) + " -b 1K -e 4M -f 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<std::uint64_t> sizes;
  int headers = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# fabricsim collbench", 0) == 0) ++headers;
    if (!line.empty() && line[0] != '#') sizes.push_back(std::stoull(line));
  }
  EXPECT_EQ(headers, 1) << r.out;
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{1024, 4096, 16384, 65536, 262144, 1048576, 4194304})) << r.out;
}

TEST(Collbench, AnErrorInARowsProcessIsReportedAsItsOwn) {
  // Every row runs in a child; the first one's bad input comes back as exit
  // code 2 and its message, once.
  const std::string dir = testutil::scratch_dir("collbench-jobs-error");
  const auto r = testutil::run_fabricsim("collbench -j 2 --platform " + channel_sensitive_platform(dir) +
                                         " --algo in_switch -b 1K -e 4K");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the in_switch algorithm does not apply to all_reduce"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("error:"), r.err.rfind("error:")) << r.err;
}

TEST(Collbench, JobsWithAWaveformAreRefused) {
  const std::string dir = testutil::scratch_dir("collbench-jobs-vcd");
  const auto r = testutil::run_fabricsim("collbench -j 2 --vcd " + dir + "/w.vcd --platform " +
                                         channel_sensitive_platform(dir) + " -b 1K -e 4K");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--jobs 2 with --vcd"), std::string::npos) << r.err;
}

// The resource estimate counts a collective's messages from the programs its
// members run: for groups of up to 16 it must equal what the in-memory
// executor matches when it runs them all; past 16 members are sampled, and
// symmetric algorithms must still come out exact.
struct WorkCase {
  CollectiveSpec spec;
  Group group;
  CollectiveConfig config;
};

WorkCase work_case(CollectiveType type, AlgorithmKind algorithm, int n, std::uint32_t chunks,
                   std::uint64_t bytes_per_member) {
  WorkCase c;
  c.group.name = "g";
  for (int r = 0; r < n; ++r) c.group.ranks.push_back(r);
  c.spec.type = type;
  c.spec.algorithm = algorithm;
  c.spec.bytes = bytes_per_member * static_cast<std::uint64_t>(n);
  c.spec.chunks = chunks;
  c.spec.dims = &c.config.dims;
  return c;
}

std::uint64_t executed_messages(WorkCase& c, InSwitchResolver* units = nullptr) {
  c.spec.group = &c.group;
  std::vector<std::vector<std::uint8_t>> no_buffers;  // sizes and matching only
  const ExecutionStats stats = execute_programs(plan_of(c.spec, c.config, units), no_buffers);
  return stats.messages + stats.unit_messages;
}

TEST(CollectiveWork, CountsTheMessagesTheExecutorMatchesForEveryAlgorithmTypeAndSmallGroup) {
  const AlgorithmKind algorithms[] = {AlgorithmKind::kRing, AlgorithmKind::kDirect, AlgorithmKind::kHalvingDoubling,
                                      AlgorithmKind::kDoubleBinaryTree, AlgorithmKind::kPat};
  const CollectiveType types[] = {
      CollectiveType::kAllReduce, CollectiveType::kReduceScatter, CollectiveType::kAllGather, CollectiveType::kAllToAll,
      CollectiveType::kBroadcast, CollectiveType::kReduce,        CollectiveType::kGather,    CollectiveType::kScatter};
  int compared = 0;
  for (const AlgorithmKind a : algorithms) {
    for (const CollectiveType t : types) {
      for (const int n : {2, 3, 5, 8, 16, 17}) {
        for (const std::uint32_t chunks : {1u, 3u}) {
          WorkCase c = work_case(t, a, n, chunks, 4096);
          c.spec.root = n / 2;
          std::uint64_t executed = 0;
          try {
            executed = executed_messages(c);
          } catch (const std::invalid_argument&) {
            continue;  // the algorithm does not run this type
          }
          const CollectiveWork w = collective_work(c.spec, c.config, nullptr, 1 << 20);
          if (n <= kExactMembers + 1) {
            EXPECT_DOUBLE_EQ(w.messages, static_cast<double>(executed))
                << to_string(a) << " " << to_string(t) << " n=" << n << " chunks=" << chunks;
          }
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 200);
}

TEST(CollectiveWork, ARingAllReduceIsTwoNMinusOneMessagesPerMemberPerChunkInFramesOfItsSegments) {
  // 8 members, 4 chunks, 64 KiB segments, 32 KiB frames: 8 x 14 x 4 = 448
  // messages of two frames each; each chunk has one send per round in
  // flight per member.
  WorkCase c = work_case(CollectiveType::kAllReduce, AlgorithmKind::kRing, 8, 4, 4 * 64 * 1024);
  c.spec.group = &c.group;
  CollectiveWork w = collective_work(c.spec, c.config, nullptr, 32 * 1024);
  EXPECT_DOUBLE_EQ(w.messages, 448);
  EXPECT_DOUBLE_EQ(w.frames, 896);
  EXPECT_DOUBLE_EQ(w.peak_messages, 8 * 4);
  EXPECT_DOUBLE_EQ(w.chunk_states, 8 * 4);
  c.config.active_chunks = 1;  // one chunk in flight per member
  w = collective_work(c.spec, c.config, nullptr, 32 * 1024);
  EXPECT_DOUBLE_EQ(w.peak_messages, 8);
  // 64 chunks: 8 of them counted, scaled to the 64 (8 x 14 x 64 messages).
  WorkCase many = work_case(CollectiveType::kAllReduce, AlgorithmKind::kRing, 8, 64, 4 * 64 * 1024);
  many.spec.group = &many.group;
  EXPECT_DOUBLE_EQ(collective_work(many.spec, many.config, nullptr, 32 * 1024).messages, 8.0 * 14 * 64);
  // 1,024 members, sampled: still 1,024 x 2 x 1,023 messages.
  WorkCase big = work_case(CollectiveType::kAllReduce, AlgorithmKind::kRing, 1024, 1, 4096);
  big.spec.group = &big.group;
  EXPECT_DOUBLE_EQ(collective_work(big.spec, big.config, nullptr, 1 << 20).messages, 1024.0 * 2 * 1023);
}

TEST(CollectiveWork, ADirectAllToAllPostsEveryPairAtOnceUnlessWindowed) {
  // n (n - 1) messages, all in flight together: what made 4,096 NPUs die
  // of bad_alloc; a window of 2 peers per round bounds it to 2 n.
  WorkCase c = work_case(CollectiveType::kAllToAll, AlgorithmKind::kDirect, 100, 1, 4096);
  c.spec.group = &c.group;
  CollectiveWork w = collective_work(c.spec, c.config, nullptr, 1 << 20);
  EXPECT_DOUBLE_EQ(w.messages, 9900);
  EXPECT_DOUBLE_EQ(w.peak_messages, 9900);
  c.config.direct_window = 2;
  w = collective_work(c.spec, c.config, nullptr, 1 << 20);
  EXPECT_DOUBLE_EQ(w.messages, 9900);
  EXPECT_DOUBLE_EQ(w.peak_messages, 200);
}

TEST(CollectiveWork, InSwitchSendsCountTheFramesTheUnitsMoveAgain) {
  // A push all-reduce over 8 members at one unit: each member's
  // contribution (1 frame here) comes back as its share of the result, so
  // the frames are what the executor sees: 8 contributions the unit takes
  // and 8 results the members receive.
  IdealReductionUnits units({1}, /*pull=*/false);
  WorkCase c = work_case(CollectiveType::kAllReduce, AlgorithmKind::kInSwitch, 8, 1, 1024);
  c.spec.group = &c.group;
  const CollectiveWork w = collective_work(c.spec, c.config, &units, 1 << 20);
  EXPECT_DOUBLE_EQ(w.messages, 8);
  EXPECT_DOUBLE_EQ(w.frames, static_cast<double>(executed_messages(c, &units)));
}

}  // namespace
