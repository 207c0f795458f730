// NICs shared by several GPUs (a fabric's gpus_per_nic): each GPU has its
// function of the NIC (queues, DMA, overheads) and the functions share the
// NIC's one port into the fabric and, through a PCIe switch, its one PCIe
// port. Closed forms: one GPU alone at the NIC's bound, two GPUs through one
// NIC at half each, GPUs of different NICs each at the full bound.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "platforms/assembly/loader.h"
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

/// `npus` NPUs on one switch, two per NIC (NPUs 0 and 1 share one, 2 and 3
/// the next), 50 GB/s links of 500 ns and a 100 ns switch; `extra` is added
/// to the fabric (a pcie section).
std::string shared(const std::string& extra = "", const std::string& npu = "", int npus = 4) {
  return "npus: " + std::to_string(npus) + "\n" + npu + R"(nic: { mtu: 4 KiB, header: 0 }
fabrics:
  - topology: switch
    gpus_per_nic: 2
    link: { bandwidth: 50 GB/s, latency: 500 ns, buffer: 4 MiB }
    switch: { latency: 100 ns }
)" + extra;
}

/// The path's latency: two links and the switch (the NIC's own hop has none).
constexpr double kPath = 2 * 500 + 100;

TEST(SharedNic, OneGpuAloneRunsAtTheNicsBound) {
  // 1 MiB: the bytes at the port's rate and the path, to 0.2%, so that a
  // wire between the GPU's function and the NIC's port (0.5 us) would show.
  const std::uint64_t S = 1 * MiB;
  const auto run = run_transfers(shared(), {Flow{0, 2, S}});
  ASSERT_NE(run.done[0], kNever);
  const double closed = S / 50.0 + kPath;
  EXPECT_NEAR(ns(run.done[0]), closed, 0.002 * closed);
}

TEST(SharedNic, TwoGpusThroughOneNicShareItsPort) {
  // NPUs 0 and 1 send through their NIC's one port at once: each at half
  // of it, both done at 2S / B. The receivers are on the other NIC, whose
  // port takes both as well.
  const std::uint64_t S = 64 * MiB;
  const auto run = run_transfers(shared(), {Flow{0, 2, S}, Flow{1, 3, S}});
  const double both = 2.0 * S / 50.0 + kPath;
  for (Tick d : run.done) {
    ASSERT_NE(d, kNever);
    EXPECT_NEAR(ns(d), both, 0.01 * both);
  }
  // Only one port per NIC: the link from NIC 0's port into the switch
  // carried both transfers.
  std::uint64_t into_switch = 0;
  for (const auto& l : run.platform->fabrics()[0].links) {
    if (l.to == "switch" && l.from.rfind("nic", 0) == 0)
      into_switch = std::max(into_switch, l.link->stats().payload_bytes);
  }
  EXPECT_EQ(into_switch, 2 * S);
}

TEST(SharedNic, GpusOfDifferentNicsEachRunAtTheirOwnBound) {
  // NPU 0 (NIC 0) to NPU 2 and NPU 3 (NIC 1) to NPU 1: each NIC's port
  // carries one transfer each way, so both finish at S / B.
  const std::uint64_t S = 64 * MiB;
  const auto run = run_transfers(shared(), {Flow{0, 2, S}, Flow{3, 1, S}});
  const double alone = S / 50.0 + kPath;
  for (Tick d : run.done) {
    ASSERT_NE(d, kNever);
    EXPECT_NEAR(ns(d), alone, 0.002 * alone);
  }
}

TEST(SharedNic, OneGpuOfAPcieSharedNicReadsAtItsPciePortsRate) {
  // Behind a PCIe Gen3 x4 switch (the NIC's port carries 3.94 x 256/280 =
  // 3.6 GB/s of data, far below the 50 GB/s link), with GPUDirect RDMA: one
  // GPU alone reads at the PCIe port's rate.
  const std::string pcie =
      "    pcie: { generation: 3, lanes: 4, max_payload: 256, tlp_overhead: 24, latency: 100 ns, "
      "devices_per_switch: 2 }\n";
  const std::string hbm = "npu: { hbm: { size: 16 GiB, channels: 16, bandwidth: 1000 GB/s, latency: 100 ns } }\n";
  const double pcie_rate = 4 * 8e9 * 128 / 130 / 8 * 256 / 280 / 1e9;  // GB/s: 4 lanes of 8 GT/s, 128b/130b
  const std::uint64_t S = 16 * MiB;
  const auto alone = run_transfers(shared(pcie, hbm), {Flow{0, 2, S}});
  ASSERT_NE(alone.done[0], kNever);
  const double one = S / pcie_rate;
  EXPECT_NEAR(ns(alone.done[0]), one, 0.02 * one);
}

TEST(SharedNic, TwoGpusOfAPcieSharedNicTakeItsPciePortInTurn) {
  // NPUs 0 and 1 (NIC 0) send to NPUs 2 (NIC 1) and 4 (NIC 2): only the
  // senders share a PCIe port, and they take turns on it, half each (before
  // the NIC shared its port, each GPU had its own and both ran at the full
  // rate).
  const std::string pcie =
      "    pcie: { generation: 3, lanes: 4, max_payload: 256, tlp_overhead: 24, latency: 100 ns, "
      "devices_per_switch: 2 }\n";
  const std::string hbm = "npu: { hbm: { size: 16 GiB, channels: 16, bandwidth: 1000 GB/s, latency: 100 ns } }\n";
  const double pcie_rate = 4 * 8e9 * 128 / 130 / 8 * 256 / 280 / 1e9;
  const std::uint64_t S = 16 * MiB;
  const auto both = run_transfers(shared(pcie, hbm, 6), {Flow{0, 2, S}, Flow{1, 4, S}});
  const double two = 2.0 * S / pcie_rate;
  for (Tick d : both.done) {
    ASSERT_NE(d, kNever);
    EXPECT_NEAR(ns(d), two, 0.02 * two);
  }
}

TEST(SharedNic, APortAndItsFunctionsAreOneChipOnEthernet) {
  // TCP with DCTCP: the switch marks and drops toward the NIC's port as
  // toward any NIC; the port marks nothing toward the switch, and between
  // the port and its functions nothing is marked or dropped.
  const std::string tcp = "    transport: { kind: tcp, congestion_control: dctcp }\n";
  const auto run = run_transfers(shared(tcp), {Flow{0, 2, 1 * MiB}});
  ASSERT_NE(run.done[0], kNever);
  int to_function = 0, to_switch = 0, from_switch = 0;
  for (const auto& l : run.platform->fabrics()[0].links) {
    const bool port_from = l.from.rfind("nic", 0) == 0, port_to = l.to.rfind("nic", 0) == 0;
    if (port_from && l.to.rfind("npu", 0) == 0) {
      ++to_function;
      EXPECT_FALSE(l.link->marks_ecn()) << l.from << " -> " << l.to;
      EXPECT_FALSE(l.link->is_lossy()) << l.from << " -> " << l.to;
    } else if (l.from.rfind("npu", 0) == 0 && port_to) {
      EXPECT_FALSE(l.link->marks_ecn()) << l.from << " -> " << l.to;
      EXPECT_FALSE(l.link->is_lossy()) << l.from << " -> " << l.to;
    } else if (port_from && l.to == "switch") {
      ++to_switch;
      EXPECT_FALSE(l.link->marks_ecn()) << l.from << " -> " << l.to;
      EXPECT_TRUE(l.link->is_lossy()) << l.from << " -> " << l.to;
    } else if (l.from == "switch" && port_to) {
      ++from_switch;
      EXPECT_TRUE(l.link->marks_ecn()) << l.from << " -> " << l.to;
    }
  }
  EXPECT_EQ(to_function, 4);
  EXPECT_EQ(to_switch, 2);
  EXPECT_EQ(from_switch, 2);
}

TEST(SharedNic, TheCostModelSeesThePortSharedByItsFunctions) {
  // The default choice's estimate: each NPU's share of its NIC's 50 GB/s
  // port, and a hop of the port's links and the switch (not the 0 ns wire
  // from a function to its port, nor the port counted as a switch).
  const std::string path = testutil::scratch_dir("shared-nic-costs") + "/p.yaml";
  testutil::write_text(path, shared());
  const PlatformSpec spec = load_platform(path);
  ASSERT_EQ(spec.hints.fabric_costs.size(), 1u);
  const auto& c = spec.hints.fabric_costs[0];
  EXPECT_NEAR(c.bandwidth, 25e9, 1e3);
  EXPECT_NEAR(ticks_to_ns(c.hop), kPath, 1e-6);
  EXPECT_EQ(c.npus, (std::vector<int>{0, 1, 2, 3}));
}

TEST(SharedNic, NcclSeesOneNicPerTwoGpus) {
  const std::string dir = testutil::scratch_dir("shared-nic-nccl");
  const std::string tuning = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/libraries/nccl-2.21.5.yaml";
  testutil::write_text(dir + "/p.yaml",
                       "npus: 16\nnpu: { hbm: h100 }\ncollectives: { library: nccl, nccl: { tuning: " + tuning +
                           ", compute_capability: 90 } }\n"
                           "fabrics:\n"
                           "  - topology: switch\n    group_size: 8\n    lanes: [18]\n"
                           "    link: { bandwidth: 25 GB/s }\n"
                           "  - topology: switch\n    gpus_per_nic: 2\n"
                           "    link: { bandwidth: 400 Gb/s }\n"
                           "    pcie: { generation: 5, lanes: 16, devices_per_switch: 2 }\n");
  const PlatformSpec spec = load_platform(dir + "/p.yaml");
  ASSERT_TRUE(spec.hints.nccl);
  EXPECT_EQ(spec.hints.nccl->machine().nics_per_node, 4);
  EXPECT_TRUE(spec.hints.nccl->machine().nic_beside_gpu);
  // NCCL's search with 4 NICs for 8 H100s: one channel of 48 GB/s per NIC,
  // 4 x 48 = 192 < 370.8, nothing better below, then split: 8 x 24
  // (NVIDIA/nccl issue 1357, 4 NICs: 16 kernel channels).
  const auto& c = spec.hints.nccl->comm(16, 2);
  EXPECT_EQ(c.ring.channels, 8);
  EXPECT_DOUBLE_EQ(c.ring.bw_inter, 24);
  EXPECT_EQ(c.coll_channels, 16);
}

TEST(SharedNic, ASharedNicNeedsItsGpusOnOnePcieSwitch) {
  const std::string dir = testutil::scratch_dir("shared-nic-bad");
  ASSERT_EQ(
      testutil::run_fabricsim("gen collective --npus 4 --type all_reduce --bytes 1M --out " + dir + "/ar").exit_code,
      0);
  struct Case {
    std::string fabric, what;
  };
  const std::vector<Case> cases = {
      {"    gpus_per_nic: 3\n", "gpus_per_nic 3 does not divide the fabric's group of 4 NPUs"},
      {"    gpus_per_nic: 2\n    pcie: { devices_per_switch: 1 }\n",
       "pcie devices_per_switch 1 with gpus_per_nic 2: a shared NIC sits on the PCIe switch of the GPUs it serves"},
      {"    gpus_per_nic: 2\n    switch: { reduction: { throughput: 1000 GB/s } }\n",
       "in-network reduction of NICs shared by several GPUs"},
      {"    gpus_per_nic: 2\n    lanes: [1, 1]\n", "NICs with several ports shared by several GPUs are not modelled"},
      {"    gpus_per_nic: 2\n    group_size: 2\n    group_stride: 2\n", "give group_stride 1"},
  };
  for (const auto& c : cases) {
    testutil::write_text(dir + "/p.yaml", "npus: 4\nnpu: { hbm: h100 }\nfabrics:\n  - topology: switch\n" + c.fabric);
    const auto r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/ar");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(dir + "/p.yaml:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.what), std::string::npos) << r.err;
  }
}

}  // namespace
