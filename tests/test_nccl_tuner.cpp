// The nccl personality (models/collectives/nccl_tuner.h, collectives.library:
// nccl): NCCL's graph search, its tables and its choice on every shipped
// NCCL platform, against NCCL 2.21.5's rules worked by hand (src/graph/
// tuning.cc, search.cc; the arithmetic is in each test) and, where NCCL's
// logs or published runs show them, what NCCL did (channel counts, the size
// where NVLS takes over); and how fabricsim runs what NCCL picks.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "platforms/assembly/collective_library.h"
#include "platforms/assembly/loader.h"
#include "platforms/assembly/platform.h"
#include "support/test_util.h"

using namespace fabricsim;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
const std::string kPlatforms = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/";

/// The shipped platform's NCCL, with `sets` applied (--set PATH=VALUE).
std::shared_ptr<const NcclTuner> nccl_of(const std::string& platform, const std::vector<std::string>& sets = {}) {
  std::vector<YamlOverride> overrides;
  for (const auto& s : sets) overrides.push_back(parse_override(s));
  const PlatformSpec spec = load_platform(kPlatforms + platform, overrides);
  EXPECT_EQ(spec.collectives.library, CollectiveLibrary::kNccl) << platform;
  return spec.hints.nccl;
}

const NcclCandidate& candidate(const NcclDecision& d, NcclAlgorithm a, int protocol) {
  for (const auto& c : d.candidates) {
    if (c.algorithm == a && c.protocol == protocol) return c;
  }
  throw std::runtime_error(std::string("no candidate ") + to_string(a) + "/" + std::to_string(protocol));
}

constexpr int LL = 0, LL128 = 1, Simple = 2;

TEST(NcclSearch, OneDgxH100RunsTwelveRingChannelsOf30GBpsAndTwentyFourKernelChannels) {
  // NVLink per GPU as NCCL counts it: 18 x 20.6 = 370.8 GB/s (topo.h
  // SM90_NVLINK_BW). The ring search starts at 60 GB/s, the first SM90
  // speed that fits: 6 channels, 360; lower speeds give no more, then
  // ncclTopoDupChannels (60 >= 50) makes 12 x 30. A tree over 8 GPUs may use
  // 8/7 of the links: 12 x 30 = 360 <= 423.8, 12 x 40 would not fit. NVLS:
  // one channel per GPU, each carrying 9 x bw (8 others and itself twice):
  // 40 (9 x 50 > 370.8), its inter-node side up to 2 x 40, 60 the highest
  // speed there. Kernels: 2 x 12 = 24 channels, as NCCL's logs on one H100
  // node show (NVIDIA/nccl issue 1259: "Channel 23/24"); NVLS 16.
  const auto nccl = nccl_of("dgx_h100.yaml");
  ASSERT_TRUE(nccl);
  EXPECT_EQ(nccl->machine().gpus_per_node, 8);
  EXPECT_EQ(nccl->machine().nvlinks_per_gpu, 18);
  EXPECT_DOUBLE_EQ(nccl->nvlink_bw(), 20.6);
  const auto& c = nccl->comm(8, 1);
  EXPECT_EQ(c.ring.channels, 12);
  EXPECT_DOUBLE_EQ(c.ring.bw_intra, 30);
  EXPECT_EQ(c.tree.channels, 12);
  EXPECT_DOUBLE_EQ(c.tree.bw_intra, 30);
  EXPECT_TRUE(c.nvls_support);
  EXPECT_EQ(c.nvls.channels, 8);
  EXPECT_DOUBLE_EQ(c.nvls.bw_intra, 40);
  EXPECT_DOUBLE_EQ(c.nvls.bw_inter, 60);
  EXPECT_EQ(c.coll_channels, 24);
  EXPECT_EQ(c.nvls_channels, 16);
}

TEST(NcclSearch, AcrossH100NodesEachNicCarriesOneChannelOf48GBpsAndKernelsRunSixteen) {
  // Across nodes a channel leaves by a NIC: the path GPU -> PCIe Gen5 x16
  // (16 x 240 / 80 = 48 GB/s, topo.cc) -> ConnectX-7 (400 Gb/s / 8 = 50)
  // allows 48, one channel per NIC: 8 x 48 = 384 >= 370.8, done; no
  // duplication (SM90, 48 < 50, 8 > 4). Kernels 2 x 8 = 16, as NCCL's logs on
  // 3 DGX H100s show (NVIDIA/nccl issue 1453: "Channel 00/16"; DeepEP issue
  // 106: "16 coll channels ... 16 nvls channels").
  const auto nccl = nccl_of("dgx_h100_2node.yaml");
  ASSERT_TRUE(nccl);
  EXPECT_EQ(nccl->machine().nics_per_node, 8);
  EXPECT_DOUBLE_EQ(nccl->machine().pci_bw, 48);
  EXPECT_DOUBLE_EQ(nccl->machine().nic_bw, 50);
  const auto& c = nccl->comm(16, 2);
  EXPECT_EQ(c.ring.channels, 8);
  EXPECT_DOUBLE_EQ(c.ring.bw_inter, 48);
  EXPECT_EQ(c.coll_channels, 16);
  EXPECT_TRUE(c.nvls_support);
  EXPECT_DOUBLE_EQ(c.nvls.bw_intra, 40);
  EXPECT_DOUBLE_EQ(c.nvls.bw_inter, 48);
  EXPECT_FALSE(c.collnet_support) << "CollNet needs NCCL_COLLNET_ENABLE";
}

TEST(NcclSearch, OneDgxA100RunsTwelveChannelsOf20GBpsAndNoNvls) {
  // 12 NVLinks x 20 GB/s (SM80_NVLINK_BW) = 240; the search's first speed,
  // 40, gives 6 channels = 240, all the links: done; duplicated (40 >= 25)
  // to 12 x 20, 24 kernel channels (nccl-tests issue 100, an HGX A100:
  // "Channel 23/24"). No NVLS before Hopper.
  const auto nccl = nccl_of("dgx_a100.yaml");
  ASSERT_TRUE(nccl);
  const auto& c = nccl->comm(8, 1);
  EXPECT_EQ(c.ring.channels, 12);
  EXPECT_DOUBLE_EQ(c.ring.bw_intra, 20);
  EXPECT_EQ(c.coll_channels, 24);
  EXPECT_FALSE(c.nvls_support);
}

TEST(NcclTables, OneDgxH100AsNcclModelsIt) {
  // 2.21.5, 8 ranks on one node, all-reduce (14 steps), Hopper row:
  //   Ring LL     min(141, 360 x .5) x 8/14 = 80.57 GB/s, 6.6 + 14 x 0.6 = 15.0 us
  //   Ring LL128  min(360 x .92, 12 x 36.7) x 8/14 = 189.26, 14 + 14 x 1.9 = 40.6
  //   Ring Simple 360 x 8/14 = 205.71, 8.4 + 14 x 3.4 = 56.0
  //   Tree Simple min(360 x .92, 12 x 38.7) x .5 = 165.6, 0 + 2 x 7 x 28 = 392
  //   NVLS        8 x min(40, 60) x 5/6 = 266.67, 25
  const auto nccl = nccl_of("dgx_h100.yaml");
  const auto d = nccl->decide(CollectiveType::kAllReduce, 64 * KiB * KiB * KiB, 8, 1);  // 64 GiB: no tree correction
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kRing, LL).bandwidth, 80.571, 0.001);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kRing, LL).latency, 15.0, 1e-9);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kRing, LL128).bandwidth, 189.257, 0.001);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kRing, LL128).latency, 40.6, 1e-9);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kRing, Simple).bandwidth, 205.714, 0.001);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kRing, Simple).latency, 56.0, 1e-9);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kTree, Simple).bandwidth, 165.6, 0.001);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kTree, Simple).latency, 392.0, 1e-9);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kNvls, Simple).bandwidth, 266.667, 0.001);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kNvls, Simple).latency, 25.0, 1e-9);
  for (const auto& c : d.candidates) {
    EXPECT_NE(c.algorithm, NcclAlgorithm::kNvlsTree) << "NVLS-tree is off on one node";
    EXPECT_FALSE(c.algorithm == NcclAlgorithm::kNvls && c.protocol != Simple) << "NVLS runs Simple only";
  }
}

TEST(NcclTables, ARingWithFewLinksRunsLLAtHalfItsBus) {
  // One NVLink to each of the 4 NVSwitches: 4 x 20.6 = 82.4 GB/s. The
  // search takes 2 x 40 = 80 (60 and 50 fit one channel only), split to
  // 4 x 20. Ring LL: min(141, 80 x .5) x 8/14 = 22.86 GB/s, the LL cap
  // (141) not binding here as it does with 18 links.
  const auto nccl = nccl_of("dgx_h100.yaml", {"fabrics.0.lanes=[1, 1, 1, 1]"});
  EXPECT_EQ(nccl->machine().nvlinks_per_gpu, 4);
  const auto& c = nccl->comm(8, 1);
  EXPECT_EQ(c.ring.channels, 4);
  EXPECT_DOUBLE_EQ(c.ring.bw_intra, 20);
  const auto d = nccl->decide(CollectiveType::kAllReduce, 64 * GiB, 8, 1);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kRing, LL).bandwidth, 22.857, 0.001);
}

TEST(NcclTables, OneDgxA100AsNcclModelsIt) {
  // Ampere row, ring and tree 12 x 20 = 240:
  //   Ring LL min(87.7, 120) x 8/14 = 50.11; LL128 min(220.8, 240) x 8/14 =
  //   126.17; Simple 137.14; Tree LL min(220.8 / 3.8, 87.7) x .5 = 29.05;
  //   Tree LL128 min(220.8 x 7/9, 240) x .5 = 85.87; Tree Simple 110.4.
  const auto nccl = nccl_of("dgx_a100.yaml");
  const auto d = nccl->decide(CollectiveType::kAllReduce, 64 * GiB, 8, 1);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kRing, LL).bandwidth, 50.114, 0.001);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kRing, LL128).bandwidth, 126.171, 0.001);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kRing, Simple).bandwidth, 137.143, 0.001);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kTree, LL).bandwidth, 29.053, 0.001);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kTree, LL128).bandwidth, 85.867, 0.001);
  EXPECT_NEAR(candidate(d, NcclAlgorithm::kTree, Simple).bandwidth, 110.4, 0.001);
}

/// NCCL's pick for an all-reduce of `bytes` on `platform` over `ranks` on `nodes`.
std::pair<NcclAlgorithm, int> pick(const std::string& platform, std::uint64_t bytes, int ranks, int nodes,
                                   const std::vector<std::string>& sets = {},
                                   CollectiveType type = CollectiveType::kAllReduce) {
  const auto d = nccl_of(platform, sets)->decide(type, bytes, ranks, nodes);
  return {d.algorithm, d.protocol};
}

using P = std::pair<NcclAlgorithm, int>;

TEST(NcclChoice, OneDgxH100RingsLLUpToAMegabyteThenNvls) {
  // Ring LL (15 + x / 80.57) against NVLS (25 + x / 266.67) cross at
  // x = 10 / (1/80.57 - 1/266.67) = 1,155 kB: NVLS from 2 MiB, as NCCL's
  // tuner picks it on 8 H100s (nccl-tests issue 309).
  EXPECT_EQ(pick("dgx_h100.yaml", 1 * KiB, 8, 1), P(NcclAlgorithm::kRing, LL));
  EXPECT_EQ(pick("dgx_h100.yaml", 1 * MiB, 8, 1), P(NcclAlgorithm::kRing, LL));
  EXPECT_EQ(pick("dgx_h100.yaml", 2 * MiB, 8, 1), P(NcclAlgorithm::kNvls, Simple));
  EXPECT_EQ(pick("dgx_h100.yaml", 4 * GiB, 8, 1), P(NcclAlgorithm::kNvls, Simple));
  // On 2 GPUs NCCL 2.21 has no NVLS (ncclNvlsInit: gpuCount <= 2).
  EXPECT_EQ(pick("dgx_h100.yaml", 4 * GiB, 2, 1).first, NcclAlgorithm::kRing);
  for (const auto& c : nccl_of("dgx_h100.yaml")->decide(CollectiveType::kAllReduce, 4 * GiB, 2, 1).candidates) {
    EXPECT_NE(c.algorithm, NcclAlgorithm::kNvls) << "NVLS weighed on 2 GPUs";
  }
  EXPECT_FALSE(nccl_of("dgx_h100.yaml")->comm(2, 1).nvls_support);
  // Without NVLS: LL128 (40.6 + x / 189.26) beats Simple (56 + x / 205.71)
  // until x = 15.4 / (1/189.26 - 1/205.71) = 36.3 MB.
  EXPECT_EQ(pick("dgx_h100.yaml", 16 * MiB, 8, 1, {"collectives.nccl.nvls_enable=off"}),
            P(NcclAlgorithm::kRing, LL128));
  EXPECT_EQ(pick("dgx_h100.yaml", 64 * MiB, 8, 1, {"collectives.nccl.nvls_enable=off"}),
            P(NcclAlgorithm::kRing, Simple));
  // NCCL_PROTO without LL128.
  EXPECT_EQ(pick("dgx_h100.yaml", 16 * MiB, 8, 1, {"collectives.nccl.nvls_enable=off", "collectives.nccl.ll128=off"}),
            P(NcclAlgorithm::kRing, Simple));
}

TEST(NcclChoice, OneDgxA100RingsLLThenLL128ThenSimple) {
  // Ring LL (15 + x / 50.11), LL128 (40.6 + x / 126.17), Simple (56 + x /
  // 137.14): LL to 25.6 / (1/50.11 - 1/126.17) = 2,128 kB, LL128 to 15.4 /
  // (1/126.17 - 1/137.14) = 24.3 MB, Simple beyond. The tree never wins
  // (its LL128 at 2 MiB: 31.5 + 2,097 / (85.87 x 0.6) = 72.2 us, the ring's 57.2).
  EXPECT_EQ(pick("dgx_a100.yaml", 1 * MiB, 8, 1), P(NcclAlgorithm::kRing, LL));
  EXPECT_EQ(pick("dgx_a100.yaml", 4 * MiB, 8, 1), P(NcclAlgorithm::kRing, LL128));
  EXPECT_EQ(pick("dgx_a100.yaml", 16 * MiB, 8, 1), P(NcclAlgorithm::kRing, LL128));
  EXPECT_EQ(pick("dgx_a100.yaml", 32 * MiB, 8, 1), P(NcclAlgorithm::kRing, Simple));
}

TEST(NcclChoice, TwoH100NodesTreeSmallAndNvlsTreeLarge) {
  // 16 ranks on 2 nodes. Tree LL: 6.8 + 2 x (7 x 0.6 + 1 x 5.0) = 25.2 us
  // against the ring's 6.6 + (30 - 4) x 1.0 + 4 x 2.7 = 43.4: a tree for
  // small sizes. Large: NVLS-tree 8 x min(40, 48) x 5/6 = 266.67 GB/s
  // against the ring's 8 x 48 x 16/30 = 204.8.
  EXPECT_EQ(pick("dgx_h100_2node.yaml", 1 * KiB, 16, 2), P(NcclAlgorithm::kTree, LL));
  EXPECT_EQ(pick("dgx_h100_2node.yaml", 4 * GiB, 16, 2), P(NcclAlgorithm::kNvlsTree, Simple));
  // With CollNet (SHARP) enabled NVLS runs across the nodes: the same
  // bandwidth as NVLS-tree and less latency (25 + 18 against 25 + 2 x 14).
  EXPECT_EQ(pick("dgx_h100_2node.yaml", 4 * GiB, 16, 2, {"collectives.nccl.collnet_enable=true"}),
            P(NcclAlgorithm::kNvls, Simple));
}

TEST(NcclChoice, FourOrMoreH100NodesRingAtLargeSizes) {
  // Beyond 2 nodes NVLS-tree's network side halves (bwInter / 2):
  // 8 x min(40, 24) x 5/6 = 160 GB/s, below the ring's 384 x 32/62 = 198.2
  // (4 nodes) and 384 x 128/254 = 193.5 (16 nodes).
  EXPECT_EQ(pick("dgx_h100_4node.yaml", 4 * GiB, 32, 4), P(NcclAlgorithm::kRing, Simple));
  EXPECT_EQ(pick("dgx_h100_4node_roce.yaml", 4 * GiB, 32, 4), P(NcclAlgorithm::kRing, Simple));
  EXPECT_EQ(pick("dgx_h100_16node.yaml", 4 * GiB, 128, 16), P(NcclAlgorithm::kRing, Simple));
  // At 64 MiB on 4 nodes NVLS-tree's latency (25 + 2 x 2 x 14 = 81 us)
  // against the ring's ((62 - 8) x 3.4 + 8 x 14 + 8.4) x 1.4 = 425.6 wins.
  EXPECT_EQ(pick("dgx_h100_4node.yaml", 64 * MiB, 32, 4), P(NcclAlgorithm::kNvlsTree, Simple));
}

TEST(NcclChoice, ServersWithSharedNicsAndPcieGpus) {
  // HGX A100, 4 HDR NICs for 8 GPUs, 2 nodes: the ring search gets 4
  // channels of 24 GB/s (PCIe Gen4 x16 = 24 below the NIC's 25; one per
  // NIC; 12 GB/s would give 8 x 12, no more), not split (24 < 25): Ring
  // Simple 96 x 16/30 = 51.2 GB/s against the tree's min(0.92 x 96,
  // 4 x 23.6) x .5 = 44.2. Small: the tree with LL, 6.8 + 2 x (7 x 0.6 +
  // 1 x 5) = 25.2 us against the ring's 43.4.
  EXPECT_EQ(nccl_of("hgx_a100_4nic_2node.yaml")->comm(16, 2).ring.channels, 4);
  EXPECT_EQ(pick("hgx_a100_4nic_2node.yaml", 1 * KiB, 16, 2), P(NcclAlgorithm::kTree, LL));
  EXPECT_EQ(pick("hgx_a100_4nic_2node.yaml", 1 * GiB, 16, 2), P(NcclAlgorithm::kRing, Simple));
  // PCIe GPUs: NCCL sees them joined by PCIe (48 GB/s each), so no LL128
  // (NCCL enables it on NVLink only) and rings of 2 x 24 across nodes.
  const auto pcie = nccl_of("pcie_h100nvl_2node.yaml");
  EXPECT_EQ(pcie->machine().gpus_per_node, 8);
  EXPECT_EQ(pcie->machine().nics_per_node, 4);
  const auto d = pcie->decide(CollectiveType::kAllReduce, 1 * GiB, 16, 2);
  for (const auto& c : d.candidates) EXPECT_NE(c.protocol, LL128) << "LL128 on PCIe";
  EXPECT_EQ(d.algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(pcie->comm(16, 2).ring.channels, 2);
}

TEST(NcclChoice, AllGatherAndReduceScatterRunRingsBroadcastRingOnly) {
  // NCCL 2.21.5 weighs NVLS for all-gather and reduce-scatter on one node
  // but converts its bandwidth by 5/6 as for all-reduce (266.7 GB/s), while
  // a ring's, over the gathered size, is 360 x 8/7 = 411.4: the ring at
  // every size (LL below 4.6 MB, where NVLS's 25 us never pays).
  for (std::uint64_t bytes : {1 * MiB, 4 * MiB, 1 * GiB}) {
    EXPECT_EQ(pick("dgx_h100.yaml", bytes, 8, 1, {}, CollectiveType::kAllGather).first, NcclAlgorithm::kRing) << bytes;
    EXPECT_EQ(pick("dgx_h100.yaml", bytes, 8, 1, {}, CollectiveType::kReduceScatter).first, NcclAlgorithm::kRing)
        << bytes;
  }
  const auto ag = nccl_of("dgx_h100.yaml")->decide(CollectiveType::kAllGather, 1 * GiB, 8, 1);
  EXPECT_NEAR(candidate(ag, NcclAlgorithm::kNvls, Simple).bandwidth, 266.667, 0.001);
  EXPECT_NEAR(candidate(ag, NcclAlgorithm::kRing, Simple).bandwidth, 411.429, 0.001);
  // Across nodes NCCL 2.21 has no NVLS all-gather: the ring.
  EXPECT_EQ(pick("dgx_h100_2node.yaml", 1 * GiB, 16, 2, {}, CollectiveType::kAllGather).first, NcclAlgorithm::kRing);
  EXPECT_EQ(pick("dgx_h100.yaml", 1 * GiB, 8, 1, {}, CollectiveType::kBroadcast).first, NcclAlgorithm::kRing);
  EXPECT_TRUE(nccl_of("dgx_h100.yaml")->decide(CollectiveType::kAllToAll, 1 * MiB, 8, 1).candidates.empty())
      << "NCCL runs all-to-all as point-to-point sends, untuned";
}

TEST(NcclChannels, SmallCollectivesRunFewerChannelsAsNcclDrops) {
  // getChannnelThreadInfo: a ring drops channels while bytes < channels x
  // threads x threshold. Ring Simple (512 threads, 64 B each): 256 KiB
  // keeps 8 of 24; 64 KiB, 2. Ring LL (threshold 8 x 8 ranks = 64): 1 MiB
  // keeps all 24. NVLS runs its own 16. NCCL_MAX_NCHANNELS caps them.
  const auto nccl = nccl_of(
      "dgx_h100.yaml", {"collectives.nccl.nvls_enable=off", "collectives.nccl.ll=false", "collectives.nccl.ll128=off"});
  EXPECT_EQ(nccl->decide(CollectiveType::kAllReduce, 256 * KiB, 8, 1).channels, 8);
  EXPECT_EQ(nccl->decide(CollectiveType::kAllReduce, 64 * KiB, 8, 1).channels, 2);
  EXPECT_EQ(nccl_of("dgx_h100.yaml")->decide(CollectiveType::kAllReduce, 1 * MiB, 8, 1).channels, 24);
  const NcclDecision big = nccl_of("dgx_h100.yaml")->decide(CollectiveType::kAllReduce, 1 * GiB, 8, 1);
  EXPECT_EQ(big.channels, 16);
  // Each candidate carries its own kernel's channels: the ring at 1 GiB would run all 24.
  for (const NcclCandidate& c : big.candidates) {
    if (c.algorithm == NcclAlgorithm::kRing && c.protocol == 2) {
      EXPECT_EQ(c.channels, 24);
    }
    if (c.algorithm == NcclAlgorithm::kNvls) {
      EXPECT_EQ(c.channels, 16);
    }
  }
  // NCCL_MIN_NCHANNELS above MAXCHANNELS (32) is bounded by it.
  EXPECT_EQ(nccl_of("dgx_h100.yaml", {"collectives.nccl.min_channels=64"})->comm(8, 1).coll_channels, 32);
  EXPECT_EQ(nccl_of("dgx_h100_2node.yaml", {"collectives.nccl.max_channels=4"})->comm(16, 2).coll_channels, 4);
}

TEST(NcclChoice, NcclAlgoExcludesWhatItDoesNotName) {
  // NCCL_ALGO=Ring on two nodes: the ring at every size.
  const std::vector<std::string> ring_only = {"collectives.nccl.tree=false", "collectives.nccl.nvls=false",
                                              "collectives.nccl.nvls_tree=false"};
  EXPECT_EQ(pick("dgx_h100_2node.yaml", 1 * KiB, 16, 2, ring_only).first, NcclAlgorithm::kRing);
  EXPECT_EQ(pick("dgx_h100_2node.yaml", 4 * GiB, 16, 2, ring_only).first, NcclAlgorithm::kRing);
}

TEST(NcclRun, WhatNcclPicksRunsAndAGroupFabricsimCannotRunItOnTakesNcclsNext) {
  // Over the platform, NVLS-tree runs as hierarchical(in_switch,
  // double_binary_tree). A group of 4 GPUs on each node is not the whole
  // platform, which fabricsim's levels need: NCCL's next candidate by its
  // own time runs, and the choice says why.
  Platform platform(load_platform(kPlatforms + "dgx_h100_2node.yaml"));
  const auto& spec = platform.spec();
  std::vector<int> world(16);
  for (int r = 0; r < 16; ++r) world[static_cast<std::size_t>(r)] = r;
  const CollectiveChoice all =
      choose_collective(spec.collectives, spec.hints, CollectiveType::kAllReduce, 4 * GiB, world, true);
  ASSERT_TRUE(all.nccl);
  EXPECT_EQ(all.nccl->algorithm, NcclAlgorithm::kNvlsTree);
  EXPECT_EQ(all.algorithm, AlgorithmKind::kHierarchical);
  ASSERT_NE(all.dims, nullptr);
  EXPECT_EQ(all.dims->front().algorithm, AlgorithmKind::kInSwitch);
  EXPECT_EQ(all.dims->back().algorithm, AlgorithmKind::kDoubleBinaryTree);
  EXPECT_EQ(all.protocol, CommProtocol::kPlain);
  EXPECT_TRUE(all.note.empty());
  EXPECT_EQ(all.nccl_name(), "NVLSTree/Simple x16");

  // The group's 4 GPUs of a node see the 4 NICs beside them: rings 4 x 48,
  // split to 8 x 24 (algorithm bandwidth 192 x 8/14 = 109.7 GB/s); NVLS-tree
  // 4 heads x min(60, 48) x 5/6 = 160: NCCL picks NVLS-tree.
  const std::vector<int> half = {0, 1, 2, 3, 8, 9, 10, 11};
  const CollectiveChoice part =
      choose_collective(spec.collectives, spec.hints, CollectiveType::kAllReduce, 4 * GiB, half, false);
  ASSERT_TRUE(part.nccl);
  EXPECT_EQ(part.nccl->algorithm, NcclAlgorithm::kNvlsTree);
  EXPECT_EQ(part.nccl->candidates[part.ran].algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(part.algorithm, AlgorithmKind::kRing);
  EXPECT_EQ(part.protocol, CommProtocol::kSimple);
  EXPECT_NE(part.note.find("whole platform"), std::string::npos) << part.note;
  // The ring that runs takes its own channels, not the NVLS-tree pick's.
  const NcclCandidate& ran = part.nccl->candidates[part.ran];
  EXPECT_EQ(part.channels, static_cast<std::uint32_t>(ran.channels));
  EXPECT_EQ(part.nccl_name(), "Ring/Simple x" + std::to_string(ran.channels));

  // A named algorithm runs as named, NCCL or not.
  CollectiveConfig named = spec.collectives;
  named.algorithm[static_cast<int>(CollectiveType::kAllReduce)] = AlgorithmKind::kDirect;
  const CollectiveChoice direct =
      choose_collective(named, spec.hints, CollectiveType::kAllReduce, 4 * GiB, world, true);
  EXPECT_FALSE(direct.nccl);
  EXPECT_EQ(direct.algorithm, AlgorithmKind::kDirect);
}

TEST(NcclRun, CollbenchAndTheReportSayWhatNcclRan) {
  const std::string dir = testutil::scratch_dir("nccl-report");
  const auto r = testutil::run_fabricsim("collbench --quiet --platform " + kPlatforms +
                                         "dgx_h100.yaml -b 1M -e 4M -f 4 --json " + dir + "/c.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = nlohmann::json::parse(testutil::read_text(dir + "/c.json"))["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["nccl"], "Ring/LL x24");
  EXPECT_EQ(rows[0]["algorithm"], "ring");
  EXPECT_EQ(rows[0]["protocol"], "ll");
  EXPECT_EQ(rows[1]["nccl"], "NVLS/Simple x16");
  EXPECT_EQ(rows[1]["algorithm"], "in_switch");
  EXPECT_NEAR(rows[1]["nccl_tuner_us"]["NVLS/Simple"].get<double>(), 25 + 4194.304 / 266.667, 0.01);
  // library: best takes what fabricsim finds fastest: in-switch already at 1 MiB.
  const auto b =
      testutil::run_fabricsim("collbench --quiet --platform " + kPlatforms +
                              "dgx_h100.yaml -b 1M -e 1M --set collectives.library=best --json " + dir + "/b.json");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto best = nlohmann::json::parse(testutil::read_text(dir + "/b.json"))["rows"][0];
  EXPECT_EQ(best["algorithm"], "in_switch");
  EXPECT_FALSE(best.contains("nccl"));

  // --why: what best would run instead and its time; at 4 MiB NCCL's NVLS
  // is best's in-switch, so nothing runs twice and there is no headroom.
  const auto w = testutil::run_fabricsim("collbench --quiet --why --platform " + kPlatforms +
                                         "dgx_h100.yaml -b 1M -e 4M -f 4 --json " + dir + "/w.json");
  ASSERT_EQ(w.exit_code, 0) << w.err;
  const auto why = nlohmann::json::parse(testutil::read_text(dir + "/w.json"))["rows"];
  EXPECT_EQ(why[0]["best"], "in_switch");
  EXPECT_NEAR(why[0]["best_us"].get<double>(), best["time_us"].get<double>(), 1e-6);
  EXPECT_LT(why[0]["best_us"].get<double>(), why[0]["time_us"].get<double>());
  EXPECT_EQ(why[1]["best"], "in_switch");
  EXPECT_EQ(why[1]["best_us"], why[1]["time_us"]);
}

}  // namespace

namespace {
/// The InputError's message loading the shipped DGX H100 with `sets`, or "".
std::string load_error(const std::vector<std::string>& sets) {
  std::vector<YamlOverride> overrides;
  for (const auto& s : sets) overrides.push_back(parse_override(s));
  try {
    load_platform(kPlatforms + "dgx_h100.yaml", overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// The InputError's message reading the shipped library file with `from`
/// replaced by `to`, or "".
std::string library_error(const std::string& from, const std::string& to) {
  std::string text = testutil::read_text(kPlatforms + "libraries/nccl-2.21.5.yaml");
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  const std::string path = testutil::scratch_dir("nccl-library") + "/lib.yaml";
  testutil::write_text(path, text);
  try {
    read_nccl_tuning(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(NcclChoice, CollNetAloneWhereItCannotRunFallsBackToRingAndTree) {
  // NCCL_ALGO=CollNetDirect on one node (no CollNet): NCCL ignores it and
  // weighs ring and tree (tuning.cc, "If user has hard set NCCL_ALGO=COLLNET").
  const auto nccl = nccl_of(
      "dgx_h100.yaml", {"collectives.nccl.ring=false", "collectives.nccl.tree=false", "collectives.nccl.nvls=false",
                        "collectives.nccl.nvls_tree=false", "collectives.nccl.collnet_direct=true"});
  const NcclDecision d = nccl->decide(CollectiveType::kAllReduce, 1 * MiB, 8, 1);
  ASSERT_FALSE(d.candidates.empty());
  bool ring = false;
  for (const auto& c : d.candidates) {
    EXPECT_TRUE(c.algorithm == NcclAlgorithm::kRing || c.algorithm == NcclAlgorithm::kTree) << to_string(c.algorithm);
    ring = ring || c.algorithm == NcclAlgorithm::kRing;
  }
  EXPECT_TRUE(ring);
}

TEST(NcclSettingsInput, SettingsThatLeaveNcclNothingToRunAreRefused) {
  EXPECT_NE(load_error({"collectives.nccl.ll=false", "collectives.nccl.ll128=off", "collectives.nccl.simple=false"})
                .find("enables no protocol"),
            std::string::npos);
  EXPECT_NE(load_error({"collectives.nccl.ring=false", "collectives.nccl.tree=false", "collectives.nccl.nvls=false",
                        "collectives.nccl.nvls_tree=false", "collectives.nccl.collnet_direct=false",
                        "collectives.nccl.collnet_chain=false", "collectives.nccl.pat=false"})
                .find("enables no algorithm"),
            std::string::npos);
  EXPECT_EQ(load_error({"collectives.nccl.ll=false", "collectives.nccl.ll128=off"}), "");
}

TEST(NcclSettingsInput, ALibraryFileMissingARowOrItsVersionIsRefused) {
  EXPECT_EQ(library_error("version: 2.21.5", "version: 2.21.5"), "");
  EXPECT_NE(library_error("version: 2.21.5", "version: \"\"").find("which version"), std::string::npos);
  const std::string missing = library_error("  collnet_chain: [0, 0, 0]\n", "");
  EXPECT_NE(missing.find("base_latency has no row for collnet_chain"), std::string::npos) << missing;
}

TEST(NcclSettingsInput, AnNvlinkFasterThanOneLinkNeedsItsCount) {
  // One netlist link of 450 GB/s per GPU: NCCL's search counts NVLinks (18
  // on an H100), so a lone lane would read as one 20.6 GB/s link.
  const std::string dir = testutil::scratch_dir("nccl-nvlinks");
  const std::string tuning = kPlatforms + "libraries/nccl-2.21.5.yaml";
  const auto platform = [&](const std::string& extra) {
    testutil::write_text(dir + "/p.yaml",
                         "npus: 8\nnpu: { hbm: h100 }\ncollectives: { library: nccl, nccl: { tuning: " + tuning +
                             ", compute_capability: 90" + extra +
                             " } }\nfabrics:\n  - topology: switch\n    link: { bandwidth: 450 GB/s }\n");
    return dir + "/p.yaml";
  };
  try {
    load_platform(platform(""));
    ADD_FAILURE() << "a 450 GB/s lane taken as one NVLink";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("carries 450 GB/s per lane, more than one NVLink"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(dir + "/p.yaml:"), std::string::npos) << e.what();
  }
  const PlatformSpec spec = load_platform(platform(", nvlinks: 18"));
  EXPECT_EQ(spec.hints.nccl->machine().nvlinks_per_gpu, 18);
  EXPECT_EQ(spec.hints.nccl->comm(8, 1).ring.channels, 12);  // as the DGX H100 with its 18 lanes
}
