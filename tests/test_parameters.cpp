// Parameters that change timing and that no other test set, each against its
// closed form: the NIC's per-message overhead, injection bandwidth and
// forwarding latency, how its port shares itself between messages, the CPU's
// GFLOP/s, and the local-reduction bandwidth of ASTRA-sim system files. Each is also run at its neutral value, so the
// test fails if the parameter is ignored as well as if it is misapplied.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "support/fabric_harness.h"
#include "support/test_util.h"
#include "traces/generator/et_writer.h"

using namespace fabricsim;
using testutil::Flow;
using testutil::run_transfers;

namespace {

constexpr std::uint64_t MiB = 1u << 20;
double ns(Tick t) {
  return ticks_to_ns(t);
}

// One platform per process (SystemC elaborates once): each case is its own
// test, and each is checked against the closed form, the neutral value too.

struct NicCase {
  std::string name;
  std::string nic;  // extra NIC settings
  int dst;
  double expected_ns;
};
void PrintTo(const NicCase& c, std::ostream* os) {
  *os << "nic {" << c.nic << " } to NPU " << c.dst;
}

class NicParameters : public ::testing::TestWithParam<NicCase> {};

constexpr std::uint64_t kBytes = 4 * MiB;

TEST_P(NicParameters, ATransferTakesItsClosedForm) {
  const NicCase& c = GetParam();
  const std::string topology = c.dst == 1 && c.nic.find("forward") == std::string::npos ? "switch" : "ring";
  const std::string yaml =
      "npus: " + std::string(topology == "ring" ? "4" : "2") + "\nnic: { mtu_bytes: 4096, header_bytes: 0" + c.nic +
      " }\nfabrics:\n  - topology: " + topology + "\n    link: { bandwidth_GBps: 100, latency_ns: 500 }\n";
  const auto run = run_transfers(yaml, {Flow{0, c.dst, kBytes}});
  EXPECT_NEAR(ns(run.done[0]), c.expected_ns, 1) << yaml;
}

// Two links of 500 ns at 100 GB/s (through a switch, or through the NIC of
// the NPU in between on a 4-NPU ring), cut-through: 2 x 500 + S / 100.
const double kTwoLinks = 2 * 500 + kBytes / 100.0;

INSTANTIATE_TEST_SUITE_P(Cases, NicParameters,
                         ::testing::Values(
                             // A message's first frame leaves its overhead after it is posted.
                             NicCase{"NoOverhead", "", 1, kTwoLinks},
                             NicCase{"MessageOverhead700ns", ", message_overhead_ns: 700", 1, kTwoLinks + 700},
                             // Injection below the link rate is the bottleneck; above it, nothing.
                             NicCase{"Injection25GBps", ", injection_bandwidth_GBps: 25", 1, 2 * 500 + kBytes / 25.0},
                             NicCase{"Injection400GBps", ", injection_bandwidth_GBps: 400", 1, kTwoLinks},
                             // Forwarding latency is paid at each NIC a frame passes through:
                             // 0 -> 2 on a ring crosses NPU 1's; 0 -> 1 crosses none (one link).
                             NicCase{"ThroughANicNoForwardLatency", ", forward_latency_ns: 0", 2, kTwoLinks},
                             NicCase{"ThroughANicForwardLatency300ns", ", forward_latency_ns: 300", 2, kTwoLinks + 300},
                             NicCase{"NextNpuForwardLatency300ns", ", forward_latency_ns: 300", 1,
                                     500 + kBytes / 100.0}),
                         [](const ::testing::TestParamInfo<NicCase>& info) { return info.param.name; });

TEST(NicFrames, TwoMessagesFromOnePortTakeTurnsFrameByFrame) {
  // NPU 0 sends 4 MiB to NPU 1 and 4 MiB to NPU 2 at the same time: 16
  // frames of 256 KiB each. The first message's first frame is on its way
  // before the second message is posted; from then on the port alternates:
  // A A B A B ... A B B. The first message ends after 30 frame times, the
  // second after 32 (were the port to send one message whole and then the
  // other, they would end after 16 and 32).
  const std::string yaml =
      "npus: 3\nnic: { mtu_bytes: 4096, header_bytes: 0, segment_bytes: 262144 }\nfabrics:\n"
      "  - topology: switch\n    link: { bandwidth_GBps: 100, latency_ns: 500 }\n";
  const std::uint64_t S = 4 * MiB;
  const double frame_ns = 262144 / 100.0;
  const auto run = run_transfers(yaml, {Flow{0, 1, S}, Flow{0, 2, S}});
  EXPECT_NEAR(ns(run.done[0]), 2 * 500 + 30 * frame_ns, 1);
  EXPECT_NEAR(ns(run.done[1]), 2 * 500 + 32 * frame_ns, 1);
}

/// One COMP node per rank: `cpu` marks it a CPU operator.
void write_compute(const std::string& prefix, double ops, bool cpu) {
  for (int r = 0; r < 2; ++r) {
    traces::EtWriter w(prefix + "." + std::to_string(r) + ".et");
    ChakraProtoMsg::Node n;
    n.set_id(1);
    n.set_name("op");
    n.set_type(ChakraProtoMsg::COMP_NODE);
    auto* a = n.add_attr();
    a->set_name("num_ops");
    a->set_double_val(ops);
    if (cpu) traces::add_int(n, "is_cpu_op", 1);
    w.write(n);
    w.close();
  }
}

double finish_ns(const std::string& dir, const std::string& npu, const std::string& prefix) {
  testutil::write_text(dir + "/p.yaml", "npus: 2\nnpu: { " + npu + " }\nfabrics: [ { topology: ring } ]\n");
  const auto r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + prefix +
                                         " --report " + dir + "/r.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(testutil::read_text(dir + "/r.json"))["npus"][0]["finish_ns"].get<double>();
}

TEST(NpuParameters, CpuOperatorsRunAtCpuGflopsAndOthersAtPeakTflops) {
  const std::string dir = testutil::scratch_dir("cpu-gflops");
  write_compute(dir + "/cpu", 3e9, true);
  write_compute(dir + "/gpu", 3e9, false);
  // 3e9 ops at 6 GFLOP/s: 0.5 s; at 2 GFLOP/s: 1.5 s. The GPU's rate does not apply.
  EXPECT_DOUBLE_EQ(finish_ns(dir, "cpu_gflops: 6, peak_tflops: 1", dir + "/cpu"), 0.5e9);
  EXPECT_DOUBLE_EQ(finish_ns(dir, "cpu_gflops: 2, peak_tflops: 1", dir + "/cpu"), 1.5e9);
  // 3e9 ops at 1 TFLOP/s: 3 ms; the CPU's rate does not apply.
  EXPECT_DOUBLE_EQ(finish_ns(dir, "cpu_gflops: 2, peak_tflops: 1", dir + "/gpu"), 3e6);
}

TEST(CollectiveParameters, LocalReductionBandwidthAddsTheTimeToCombineEachReceivedSegment) {
  // A ring all-reduce of S over 2 NPUs reduces one received segment of S/2
  // on each NPU: three passes through a local memory of R GB/s (two reads
  // and a write, as ASTRA-sim counts) add 3 (S/2)/R to the run, once.
  const std::string dir = testutil::scratch_dir("local-reduce");
  testutil::write_text(dir + "/p.yaml",
                       "npus: 2\nnic: { header_bytes: 0 }\nfabrics:\n  - topology: switch\n"
                       "    link: { bandwidth_GBps: 100, latency_ns: 500 }\n");
  testutil::write_text(dir + "/none.json", "{}\n");
  testutil::write_text(dir + "/slow.json", "{\"local-mem-bw\": 20}\n");
  const std::uint64_t S = 8 * MiB;
  const auto time_us = [&](const std::string& system) {
    const auto r =
        testutil::run_fabricsim("collbench --quiet --platform " + dir + "/p.yaml --system " + dir + "/" + system +
                                " --op all_reduce --algo ring --chunks 1 -b 8M -e 8M --json " + dir + "/rows.json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(testutil::read_text(dir + "/rows.json"))["rows"][0]["time_us"].get<double>();
  };
  const double plain = time_us("none.json"), slow = time_us("slow.json");
  EXPECT_NEAR((slow - plain) * 1e3, 3.0 * (S / 2) / 20.0, 1);  // ns
}

}  // namespace
