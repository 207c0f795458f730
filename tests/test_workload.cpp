// The workload layer on real Chakra traces written by other tools, on traces
// our generators write, and on broken ones.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "platforms/run/simulation.h"
#include "support/fabric_harness.h"
#include "support/test_util.h"
#include "traces/generator/et_writer.h"
#include "traces/generator/generators.h"
#include "traces/reader/et_reader.h"

using namespace fabricsim;
namespace fs = std::filesystem;

namespace {

constexpr double kLatency = 500, kGiBps = 50;
const double kBytesPerNs = kGiBps * 1073741824.0 / 1e9;

std::string switch_platform(const std::string& dir, int npus) {
  return testutil::astra_network(dir, "Switch", npus, kGiBps, kLatency);
}

/// Runs a shared trace folder through the command; returns the report.
nlohmann::json run_report(const std::string& prefix, int npus, const std::string& extra, int expect_exit = 0,
                          std::string* err = nullptr) {
  const std::string dir = testutil::scratch_dir("shared");
  const auto r = testutil::run_fabricsim("run --quiet --platform " + switch_platform(dir, npus) + " --workload " +
                                         prefix + " --report " + dir + "/report.json " + extra);
  EXPECT_EQ(r.exit_code, expect_exit) << r.err;
  if (err) *err = r.err;
  if (!fs::exists(dir + "/report.json")) return {};
  return nlohmann::json::parse(testutil::read_text(dir + "/report.json"));
}

// ---- every shared trace --------------------------------------------------------

struct Micro {
  std::string type;
  int npus;
};
void PrintTo(const Micro& m, std::ostream* os) {
  *os << m.type << " on " << m.npus << " NPUs";
}
class AstraMicrobenchmarks : public ::testing::TestWithParam<Micro> {};
TEST_P(AstraMicrobenchmarks, RunEveryCollectiveOfOneMiBAtItsClosedForm) {
  FABRICSIM_NEEDS_SHARED_DATA();
  // On the switch (kLatency per link, kGiBps), one chunk. Ring types take
  // their steps one after another, each a segment of S/n over two links,
  // cut-through and uncontended (each NPU's uplink and the next one's
  // downlink): 2(n-1) steps for all-reduce, n-1 for reduce-scatter, and
  // for all-gather, whose comm_size S is each NPU's input (ASTRA-sim's and
  // Chakra's meaning), n-1 steps of S: (n-1) S/B + (n-1) latency, gathering
  // nS. All-to-all (direct) runs at its bandwidth bound: each NPU sends
  // (n-1) S/n through its one link, to i+1, i+2, ... first, so no receiver
  // gets two senders' first messages at once (when every rank started with
  // rank 0 it took 1.6x the bound on 4 NPUs, 1.8x on 8).
  const auto& m = GetParam();
  const bool ring = m.type != "all_to_all";
  const auto j = run_report(testutil::shared_trace("astra-sim/microbenchmarks/" + m.type + "/" +
                                                   std::to_string(m.npus) + "npus_1MB/" + m.type),
                            m.npus, ring ? "--algorithm ring --chunks 1" : "--chunks 1");
  ASSERT_EQ(j["npus"].size(), static_cast<std::size_t>(m.npus));
  const double S = 1048576, n = m.npus;
  const bool gather = m.type == "all_gather";
  const double step = 2 * kLatency + (gather ? S : S / n) / kBytesPerNs;
  const double steps = m.type == "all_reduce" ? 2 * (n - 1) : n - 1;
  for (const auto& npu : j["npus"]) {
    ASSERT_EQ(npu["collectives"].size(), 1u);
    EXPECT_EQ(npu["collectives"][0]["type"], m.type);
    EXPECT_EQ(npu["collectives"][0]["bytes"], gather ? n * S : S);
    const double finish = npu["finish_ns"].get<double>();
    if (ring) {
      EXPECT_NEAR(finish, steps * step, 1) << "NPU " << npu["id"];
    } else {
      EXPECT_NEAR(finish, 2 * kLatency + (n - 1) * S / n / kBytesPerNs, 1) << "NPU " << npu["id"];
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Types, AstraMicrobenchmarks,
                         ::testing::Values(Micro{"all_reduce", 4}, Micro{"all_reduce", 8}, Micro{"all_gather", 4},
                                           Micro{"all_gather", 8}, Micro{"reduce_scatter", 4},
                                           Micro{"reduce_scatter", 8}, Micro{"all_to_all", 4}, Micro{"all_to_all", 8}),
                         [](const auto& i) { return i.param.type + std::to_string(i.param.npus); });

TEST(SharedTraces, ACustomCollectiveRunsItsTraceInPlaceOfTheAllReduce) {
  FABRICSIM_NEEDS_SHARED_DATA();
  // ASTRA-sim's collective API: a system file names a Chakra trace per rank
  // that runs in place of every all-reduce. The 1 MiB all-reduce then takes
  // the custom ring's time (the closed form below), not the engine's.
  const std::string dir = testutil::scratch_dir("custom-collective");
  testutil::write_text(dir + "/sys.json",
                       "{\"all-reduce-implementation-custom\": [\"" +
                           testutil::shared_trace("astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce") +
                           "\"]}");
  const auto j = run_report(testutil::shared_trace("astra-sim/microbenchmarks/all_reduce/8npus_1MB/all_reduce"), 8,
                            "--system " + dir + "/sys.json");
  const double step = 2 * kLatency + 131072.0 / kBytesPerNs;
  const double expected = 14 * step + 7 * 7000;
  for (const auto& npu : j["npus"]) {
    EXPECT_NEAR(npu["finish_ns"].get<double>(), expected, 1e-3 * expected);
    EXPECT_DOUBLE_EQ(npu["compute_ns"].get<double>(), 49000.0);
    EXPECT_EQ(npu["nodes_done"], 1);  // the all-reduce node; the custom trace's 35 run inside it
  }
}

TEST(SharedTraces, CustomSendRecvRingAllReduceFinishesAtItsClosedForm) {
  FABRICSIM_NEEDS_SHARED_DATA();
  // 14 sends and receives of 128 KiB in a chain, each receive waiting on the
  // previous neighbour's send (two links through the switch), and a 7 us
  // reduction after each of the 7 reduce-scatter receives.
  const auto j =
      run_report(testutil::shared_trace("astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce"), 8, "");
  const double step = 2 * kLatency + 131072.0 / kBytesPerNs;
  const double expected = 14 * step + 7 * 7000;
  for (const auto& npu : j["npus"]) {
    EXPECT_NEAR(npu["finish_ns"].get<double>(), expected, 1e-3 * expected);
    EXPECT_EQ(npu["nodes_done"], 35);
    EXPECT_DOUBLE_EQ(npu["compute_ns"].get<double>(), 49000.0);
  }
}

TEST(SharedTraces, ChakraTextMicroAllReduce) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const auto j = run_report(testutil::shared_trace("chakra-text/micro_allreduce_4npus/allreduce"), 4, "");
  for (const auto& npu : j["npus"]) EXPECT_EQ(npu["collectives"][0]["bytes"], 1048576);
}

TEST(SharedTraces, DataParallelOverlapFollowsTheDependencies) {
  FABRICSIM_NEEDS_SHARED_DATA();
  // Iteration: fwd0 100 us, fwd1 200 us, bwd1 weight-gradient 240 us, then
  // the 4 MiB all-reduce of layer 1 starts while bwd1 input-gradient (160 us)
  // and bwd0 weight-gradient (120 us) compute; layer 0's all-reduce follows
  // bwd0 (one collective at a time), and the next forward waits for it.
  const auto j = run_report(testutil::shared_trace("chakra-text/data_parallel_4npus/dp2"), 4, "");
  for (const auto& npu : j["npus"]) {
    std::map<std::string, std::vector<std::pair<double, double>>> c;
    for (const auto& x : npu["collectives"]) c[x["name"]].emplace_back(x["start_ns"], x["end_ns"]);
    const auto& ar1 = c["COMM_COLL_NODE_layer1_ALLREDUCE"];
    const auto& ar0 = c["COMM_COLL_NODE_layer0_ALLREDUCE"];
    ASSERT_FALSE(ar1.empty());
    ASSERT_FALSE(ar0.empty());
    EXPECT_DOUBLE_EQ(ar1[0].first, 540000.0);  // right after bwd1's weight gradient
    EXPECT_DOUBLE_EQ(ar0[0].first, std::max(820000.0, ar1[0].second));
    EXPECT_LT(ar1[0].second, 820000.0);  // hidden behind the backward compute
    // Compute never waits on the all-reduce of layer 1 within the iteration.
    EXPECT_GT(npu["compute_ns"].get<double>(), 0.0);
    EXPECT_NEAR(npu["exposed_comm_ns"].get<double>() + npu["compute_ns"].get<double>() + npu["idle_ns"].get<double>(),
                npu["finish_ns"].get<double>(), 1e-6);
  }
}

TEST(SharedTraces, StgLlmRunsItsCollectivesInItsProcessGroups) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::shared_trace("stg-llm/dense_dp4");
  const auto j = run_report(dir + "/workload", 4, "--comm-groups " + dir + "/workload.json");
  for (const auto& npu : j["npus"]) {
    EXPECT_EQ(npu["nodes_done"], 78);
    EXPECT_FALSE(npu["collectives"].empty());
    for (const auto& c : npu["collectives"]) EXPECT_EQ(c["group"], "1");
    EXPECT_GT(npu["compute_ns"].get<double>(), 0.0);  // roofline from num_ops and tensor_size
  }
}

TEST(SharedTraces, PyTorchTraceRunsEveryNodeAndReplaysItsDurations) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("pytorch");
  const std::string one = testutil::astra_network(dir, "Ring", 1, 50, 500);
  const auto r = testutil::run_fabricsim("run --quiet --replay --platform " + one + " --workload " +
                                         testutil::shared_trace("pytorch/chakra") + " --report " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  const auto& npu = j["npus"][0];
  EXPECT_EQ(npu["nodes"], 3664);
  EXPECT_EQ(npu["nodes_done"], 3664);
  // 3,643 compute nodes: 292,828 us on the GPU, 50,941 us of CPU ops.
  EXPECT_DOUBLE_EQ(npu["gpu_busy_ns"].get<double>(), 292828e3);
  EXPECT_DOUBLE_EQ(npu["cpu_busy_ns"].get<double>(), 50941e3);
  EXPECT_EQ(npu["collectives"].size(), 21u);
  // Dependencies on nodes not in the file: reported once, with their count.
  EXPECT_NE(r.err.find("1277 dependencies on nodes absent from the file were ignored"), std::string::npos) << r.err;
  // The gzip copy gives the same report.
  const auto rz = testutil::run_fabricsim("run --quiet --replay --platform " + one + " --workload " + dir +
                                          "/gz --report " + dir + "/rz.json");
  EXPECT_EQ(rz.exit_code, 2);  // no such files yet
  fs::copy_file(testutil::shared_trace("pytorch/chakra.0.et.gz"), dir + "/gz.0.et.gz");
  const auto rz2 = testutil::run_fabricsim("run --quiet --replay --platform " + one + " --workload " + dir +
                                           "/gz --report " + dir + "/rz.json");
  ASSERT_EQ(rz2.exit_code, 0) << rz2.err;
  const auto jz = nlohmann::json::parse(testutil::read_text(dir + "/rz.json"));
  EXPECT_EQ(jz["npus"], j["npus"]);
}

struct Generator {
  std::string trace;
  int expect_exit;
  double finish_ns;  // < 0: not checked
};
void PrintTo(const Generator& g, std::ostream* os) {
  *os << g.trace;
}
class ChakraGenerator : public ::testing::TestWithParam<Generator> {};
TEST_P(ChakraGenerator, Runs) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const auto& g = GetParam();
  std::string err;
  const auto j = run_report(testutil::shared_trace("chakra-generator/4npus/" + g.trace), 4, "", g.expect_exit, &err);
  if (g.finish_ns >= 0) {
    for (const auto& npu : j["npus"]) EXPECT_NEAR(npu["finish_ns"].get<double>(), g.finish_ns, 1e-6);
  }
  if (g.trace == "one_comm_recv_node") {
    // A receive no one sends to: stopped, each NPU's receive named.
    EXPECT_NE(err.find("cannot make progress"), std::string::npos) << err;
    EXPECT_NE(err.find("NPU 0: 0 of 1 nodes done"), std::string::npos) << err;
    EXPECT_NE(err.find("recv of 1024 bytes from NPU 3 (tag 0): no matching send has arrived"), std::string::npos)
        << err;
  }
  if (g.trace == "one_comm_send_node") {
    EXPECT_NE(err.find("without comm_dst"), std::string::npos) << err;
    for (const auto& npu : j["npus"]) EXPECT_EQ(npu["unreceived_messages"], 1);
  }
}
INSTANTIATE_TEST_SUITE_P(Traces, ChakraGenerator,
                         ::testing::Values(Generator{"one_comp_node", 0, 5000},
                                           Generator{"two_comp_nodes_dependent", 0, 10000},
                                           // One compute engine per NPU: independent nodes run one after the other.
                                           Generator{"two_comp_nodes_independent", 0, 10000},
                                           // The remote-memory stand-in: 1 us + 1024 B / 50 GB/s.
                                           Generator{"one_remote_mem_load_node", 0, 1020.48},
                                           Generator{"one_remote_mem_store_node", 0, 1020.48},
                                           Generator{"one_metadata_node_all_types", 0, 0},
                                           Generator{"one_comm_send_node", 0, -1},
                                           Generator{"one_comm_recv_node", 3, -1}),
                         [](const auto& i) { return i.param.trace; });

/// Chakra's generator writes one collective of 1 MiB per type on 4 NPUs. On
/// the switch (two links of kLatency per hop, kGiBps, no headers, no
/// overhead), one chunk, each NPU's finish has a closed form:
/// - ring all-reduce (and barrier, which runs as one): 2(n-1) steps of a
///   segment S/n; reduce-scatter and all-gather n-1 such steps (an
///   all-gather's comm_size, 1 MiB, is each NPU's input: S is 4 MiB);
/// - direct all-to-all: its bandwidth bound, (n-1) S/n through each NPU's link;
/// - ring broadcast, a chain from rank 0: position p receives the whole S at
///   p (2L + S/B) and passes it on, its send leaving S/B later (the last
///   position only receives); the root is done when its send has left.
struct GeneratorCollective {
  std::string trace;
  std::string flags;
};
void PrintTo(const GeneratorCollective& g, std::ostream* os) {
  *os << g.trace;
}
class ChakraGeneratorCollective : public ::testing::TestWithParam<GeneratorCollective> {};
TEST_P(ChakraGeneratorCollective, FinishesAtItsClosedForm) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const auto& g = GetParam();
  const auto j = run_report(testutil::shared_trace("chakra-generator/4npus/" + g.trace), 4, "--chunks 1 " + g.flags);
  ASSERT_EQ(j["npus"].size(), 4u);
  const double n = 4, L = kLatency;
  // A message's wire time: its 256 KiB frames, each rounded to the
  // picosecond as a link rounds it.
  const auto wire = [](double bytes) {
    const double frame = 262144, frames = std::ceil(bytes / frame);
    if (frames == 0) return 0.0;
    const double last = bytes - (frames - 1) * frame;
    const auto ns = [](double b) { return std::round(b / kBytesPerNs * 1e3) / 1e3; };
    return (frames - 1) * ns(frame) + ns(last);
  };
  for (const auto& npu : j["npus"]) {
    ASSERT_EQ(npu["collectives"].size(), 1u) << npu["id"];
    const double S = npu["collectives"][0]["bytes"].get<double>();
    const double step = 2 * L + wire(S / n);
    const int p = npu["id"].get<int>();
    double expected = 0;
    if (g.trace == "ALL_REDUCE" || g.trace == "BARRIER") {
      expected = 2 * (n - 1) * step;
    } else if (g.trace == "REDUCE_SCATTER" || g.trace == "ALL_GATHER") {
      expected = (n - 1) * step;
    } else if (g.trace == "ALL_TO_ALL") {
      expected = 2 * L + (n - 1) * wire(S / n);
    } else if (g.trace == "BROADCAST") {
      const double hop = 2 * L + wire(S);
      expected = p == 0 ? wire(S) : p * hop + (p < n - 1 ? wire(S) : 0);
    }
    if (g.trace != "BARRIER") {
      EXPECT_EQ(S, g.trace == "ALL_GATHER" ? 4 * 1048576 : 1048576) << g.trace;
    }
    EXPECT_NEAR(npu["finish_ns"].get<double>(), expected, 1e-3) << g.trace << " on NPU " << p;
  }
}
INSTANTIATE_TEST_SUITE_P(Traces, ChakraGeneratorCollective,
                         ::testing::Values(GeneratorCollective{"ALL_REDUCE", "--algorithm ring"},
                                           GeneratorCollective{"REDUCE_SCATTER", "--algorithm ring"},
                                           GeneratorCollective{"ALL_GATHER", "--algorithm ring"},
                                           GeneratorCollective{"ALL_TO_ALL", "--algorithm direct"},
                                           GeneratorCollective{"BROADCAST", "--algorithm ring"},
                                           GeneratorCollective{"BARRIER", "--algorithm ring"}),
                         [](const auto& i) { return i.param.trace; });

// ---- our generators --------------------------------------------------------------

TEST(Generators, PipelineSendRecvFinishesAtTheClosedForm) {
  const std::string dir = testutil::scratch_dir("pipe");
  const int p = 4, m = 8;
  const double f = 100e3, bytes = 1 << 20;
  traces::write_pipeline(dir + "/pipe", p, m, f / 1e3, static_cast<std::uint64_t>(bytes));
  Simulation sim(load_platform(switch_platform(dir, p)));
  WorkloadSettings ws;
  ws.prefix = dir + "/pipe";
  sim.load_workload(ws);
  ASSERT_EQ(sim.run(), Simulation::Outcome::kFinished);
  // GPipe: the forward wave reaches the last stage after (p-1) hops, the
  // backward wave comes back the same way.
  const double c = 2 * kLatency + bytes / kBytesPerNs;
  const double expected = 2 * ((p - 1) * (f + c) + m * f);
  EXPECT_NEAR(ticks_to_ns(sim.end_time()), expected, 1e-3 * expected);
}

TEST(Generators, TrainingStepRunsItsGroupsAndPipeline) {
  const std::string dir = testutil::scratch_dir("train");
  traces::TrainingShape s;
  s.dp = 2;
  s.tp = 2;
  s.pp = 2;
  s.layers = 4;
  s.hidden = 1024;
  s.seq = 512;
  s.microbatches = 2;
  traces::write_training_step(dir + "/step", s);
  // Its process groups are metadata nodes in the traces: no --comm-groups
  // needed (the JSON beside them, for ASTRA-sim, gives the same groups).
  const auto j = run_report(dir + "/step", 8, "");
  const auto with_file = run_report(dir + "/step", 8, "--comm-groups " + dir + "/step.comm_groups.json");
  EXPECT_EQ(j["sim_time_ns"], with_file["sim_time_ns"]);
  for (const auto& npu : j["npus"]) {
    int tp = 0, dp = 0;
    for (const auto& c : npu["collectives"]) {
      const std::string g = c["group"];
      tp += g.rfind("tp_", 0) == 0;
      dp += g.rfind("dp_", 0) == 0;
    }
    EXPECT_EQ(tp, 2 * 2 * 2 * 2);  // 2 layers per stage, 2 microbatches, forward + backward, 2 each
    EXPECT_EQ(dp, 1);
  }
}

TEST(Generators, DlrmHasTheCaseStudysSizesAndRuns) {
  // The ASTRA-sim + ns-3 case study's model (DlrmShape's defaults) on 4
  // NPUs: per NPU 512 samples x 64 tables x 64 dimensions x 2 bytes through
  // each all-to-all; all-reduces of the MLPs' parameters x 2 bytes:
  //   bottom: 1600 x 1024 + 5 x 1024^2 + 1024 x 64 = 6,946,816 parameters;
  //   top: (65 x 64 / 2 + 64) x 2048 + 10 x 2048^2 + 2048 = 46,336,000.
  const std::string dir = testutil::scratch_dir("dlrm");
  traces::DlrmShape s;
  s.npus = 4;
  traces::write_dlrm(dir + "/dlrm", s);
  traces::EtReader reader(dir + "/dlrm.0.et");
  ChakraProtoMsg::Node n;
  std::map<std::string, std::uint64_t> sizes, ops;
  while (reader.next(n)) {
    for (const auto& a : n.attr()) {
      if (a.name() == "comm_size") sizes[n.name()] = a.uint64_val();
      if (a.name() == "num_ops") ops[n.name()] = a.uint64_val();
    }
  }
  EXPECT_EQ(sizes["iter0_embedding_all_to_all"], 512u * 64 * 64 * 2);
  EXPECT_EQ(sizes["iter0_embedding_gradient_all_to_all"], 512u * 64 * 64 * 2);
  EXPECT_EQ(sizes["iter0_bottom_mlp_all_reduce"], 6'946'816u * 2);
  EXPECT_EQ(sizes["iter0_top_mlp_all_reduce"], 46'336'000u * 2);
  EXPECT_EQ(ops["iter0_bottom_mlp_forward"], std::uint64_t{2} * 512 * 6'946'816);
  EXPECT_EQ(ops["iter0_bottom_mlp_backward"], std::uint64_t{4} * 512 * 6'946'816);
  const auto j = run_report(dir + "/dlrm", 4, "");
  EXPECT_GT(j["sim_time_ns"].get<double>(), 0);
}

// ---- broken traces ---------------------------------------------------------------------

void write_trace(const std::string& prefix, int ranks, const std::function<void(int, traces::EtWriter&)>& fill) {
  for (int r = 0; r < ranks; ++r) {
    traces::EtWriter w(prefix + "." + std::to_string(r) + ".et");
    fill(r, w);
    w.close();
  }
}

TEST(Stuck, ADependencyCycleIsReportedWithExitThree) {
  const std::string dir = testutil::scratch_dir("cycle");
  write_trace(dir + "/cyc", 2, [](int, traces::EtWriter& w) {
    for (int i = 0; i < 2; ++i) {
      ChakraProtoMsg::Node n;
      n.set_id(static_cast<std::uint64_t>(i));
      n.set_name("loop" + std::to_string(i));
      n.set_type(ChakraProtoMsg::COMP_NODE);
      n.set_duration_micros(1);
      n.add_data_deps(static_cast<std::uint64_t>(1 - i));
      w.write(n);
    }
  });
  const auto r = testutil::run_fabricsim("run --platform " + switch_platform(dir, 2) + " --workload " + dir + "/cyc");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("node 0 (\"loop0\", COMP_NODE) waits for 1 unfinished dependency"), std::string::npos) << r.err;
}

TEST(Stuck, ACollectiveOneMemberNeverReachesIsNamed) {
  const std::string dir = testutil::scratch_dir("missing-member");
  write_trace(dir + "/half", 2, [](int r, traces::EtWriter& w) {
    ChakraProtoMsg::Node n;
    n.set_id(7);
    n.set_name(r == 0 ? "all_reduce_grads" : "compute");
    n.set_type(r == 0 ? ChakraProtoMsg::COMM_COLL_NODE : ChakraProtoMsg::COMP_NODE);
    if (r == 0) {
      traces::add_int(n, "comm_type", 0);
      traces::add_int(n, "comm_size", 4096);
    }
    w.write(n);
  });
  const auto r = testutil::run_fabricsim("run --platform " + switch_platform(dir, 2) + " --workload " + dir + "/half");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("all_reduce \"all_reduce_grads\" (node 7"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("waits for NPU 1"), std::string::npos) << r.err;
}

TEST(BrokenTraces, ABadRecordLengthIsNamed) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("badlen");
  fs::copy_file(testutil::shared_trace("astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce.0.et"),
                dir + "/b.0.et");
  fs::copy_file(testutil::shared_trace("astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce.1.et"),
                dir + "/b.1.et");
  {
    std::ofstream out(dir + "/b.1.et", std::ios::binary | std::ios::app);
    const unsigned char huge[] = {0xff, 0xff, 0xff, 0xff, 0x0f};  // a 4 GiB record
    out.write(reinterpret_cast<const char*>(huge), sizeof huge);
  }
  const auto r = testutil::run_fabricsim("run --platform " + switch_platform(dir, 2) + " --workload " + dir + "/b");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("b.1.et: node record 2 (after node id "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bad record length 4294967295 bytes"), std::string::npos) << r.err;
}

TEST(BrokenTraces, NodesOfTypesNotRunAreCountedInOneWarning) {
  // A newer writer's type (77) and a checkpoint run as no-ops, counted; a
  // node with no type at all is a broken record.
  const std::string dir = testutil::scratch_dir("badtype");
  write_trace(dir + "/t", 2, [](int, traces::EtWriter& w) {
    for (int i = 0; i < 3; ++i) {
      ChakraProtoMsg::Node n;
      n.set_id(static_cast<std::uint64_t>(40 + i));
      n.set_name("mystery");
      n.set_type(static_cast<ChakraProtoMsg::NodeType>(i < 2 ? 77 : ChakraProtoMsg::CHECKPOINT_NODE));
      n.set_duration_micros(5);
      w.write(n);
    }
  });
  const auto r = testutil::run_fabricsim("run --platform " + switch_platform(dir, 2) + " --workload " + dir + "/t");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.err.find("t.0.et: 3 nodes of types fabricsim does not run took no time: CHECKPOINT_NODE (1), type 77 (2)"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("npu 0: finish 0.000 ns"), std::string::npos) << r.out;
  write_trace(dir + "/u", 2, [](int, traces::EtWriter& w) {
    ChakraProtoMsg::Node n;
    n.set_id(42);
    n.set_name("untyped");
    w.write(n);
  });
  const auto u = testutil::run_fabricsim("run --platform " + switch_platform(dir, 2) + " --workload " + dir + "/u");
  EXPECT_EQ(u.exit_code, 2);
  EXPECT_NE(u.err.find("u.0.et: node 42 (\"untyped\"): node type 0 is not a node type (1 to 10 are known)"),
            std::string::npos)
      << u.err;
}

/// Per rank: PyTorch's process-group configuration (`config`, as the
/// metadata node's input values, or with `as_attribute` its pg_config
/// attribute) and a 1 MiB all-reduce over group(rank).
void write_group_trace(const std::string& prefix, const std::string& config, std::function<std::string(int)> group,
                       bool as_attribute = false) {
  write_trace(prefix, 4, [&](int r, traces::EtWriter& w) {
    ChakraProtoMsg::Node meta;
    meta.set_id(1);
    meta.set_name("## process_group:init ##");
    meta.set_type(ChakraProtoMsg::METADATA_NODE);
    if (as_attribute) {
      traces::add_string(meta, "pg_config", config);
    } else {
      meta.mutable_inputs()->set_values(config);
    }
    w.write(meta);
    ChakraProtoMsg::Node ar;
    ar.set_id(2);
    ar.set_name("ar");
    ar.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    ar.add_data_deps(1);
    traces::add_int(ar, "comm_type", 0);
    traces::add_int(ar, "comm_size", 1 << 20);
    traces::add_string(ar, "pg_name", group(r));
    w.write(ar);
  });
}

TEST(Workload, ProcessGroupsFromAMetadataNode) {
  // PyTorch's process-group configuration arrives as a metadata node.
  const std::string dir = testutil::scratch_dir("pgmeta");
  write_group_trace(dir + "/pg",
                    R"([[{"pg_name": "7", "pg_desc": "pairs", "ranks": [0, 1]}, {"pg_name": "8", "ranks": [2, 3]}]])",
                    [](int r) { return r < 2 ? "7" : "8"; });
  const auto j = run_report(dir + "/pg", 4, "");
  for (int r = 0; r < 4; ++r) EXPECT_EQ(j["npus"][r]["collectives"][0]["group"], r < 2 ? "7" : "8");
}

TEST(Workload, AProcessGroupConfigurationKeyedByNameIsReadAndOneOfAnotherShapeRefused) {
  // pg_config as an object of groups keyed by their names was skipped
  // without a word (the collectives then found no group "7"); a number is
  // no configuration at all.
  const std::string dir = testutil::scratch_dir("pgobject");
  const auto write = [&](const std::string& prefix, const std::string& config) {
    write_group_trace(
        dir + "/" + prefix, config, [](int r) { return r < 2 ? "7" : "8"; }, true);
  };
  write("keyed", R"({"7": {"pg_name": "7", "ranks": [0, 1]}, "8": {"pg_name": "8", "ranks": [2, 3]}})");
  const auto j = run_report(dir + "/keyed", 4, "");
  for (int r = 0; r < 4; ++r) EXPECT_EQ(j["npus"][r]["collectives"][0]["group"], r < 2 ? "7" : "8");
  // Keyed entries name their group by their key; an entry that defines no
  // group is said, not dropped in silence.
  write("bare", R"({"7": {"ranks": [0, 1]}, "8": {"ranks": [2, 3]}, "9": {"pg_desc": "no ranks"}})");
  auto bare = testutil::run_fabricsim("run --quiet --platform " + switch_platform(dir, 4) + " --workload " + dir +
                                      "/bare --report " + dir + "/bare.json");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  const auto jb = nlohmann::json::parse(testutil::read_text(dir + "/bare.json"));
  for (int r = 0; r < 4; ++r) EXPECT_EQ(jb["npus"][r]["collectives"][0]["group"], r < 2 ? "7" : "8");
  EXPECT_NE(bare.err.find("process-group entries without a name or without \"ranks\" define no group (first: node 1, "
                          "{\"pg_desc\":\"no ranks\"})"),
            std::string::npos)
      << bare.err;
  write("number", "5");
  const auto r =
      testutil::run_fabricsim("run --platform " + switch_platform(dir, 4) + " --workload " + dir + "/number");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("number.0.et: node 1 (\"## process_group:init ##\"): the process-group configuration is 5, "
                       "not a list (or an "
                       "object) of {\"pg_name\", \"ranks\"}"),
            std::string::npos)
      << r.err;
}

TEST(Workload, AnEmptyRanksListIsEveryRank) {
  // PyTorch writes its default group as "ranks": []; a group_size that says
  // otherwise is an inconsistent group, refused.
  const std::string dir = testutil::scratch_dir("pgempty");
  auto write = [&](const std::string& prefix, const char* config) {
    write_group_trace(dir + "/" + prefix, config, [](int) { return "0"; });
  };
  write("all", R"(['[{"pg_name": "0", "pg_desc": "default_pg", "ranks": [], "group_size": 4}]'])");
  const auto j = run_report(dir + "/all", 4, "");
  for (int r = 0; r < 4; ++r) EXPECT_EQ(j["npus"][r]["collectives"][0]["group"], "0");
  write("bad", R"(['[{"pg_name": "0", "ranks": [], "group_size": 2}]'])");
  const auto r = testutil::run_fabricsim("run --platform " + switch_platform(dir, 4) + " --workload " + dir + "/bad");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(
      r.err.find("bad.0.et: node 1: process group \"0\" lists \"ranks\": [] (every rank: 4) but \"group_size\": 2"),
      std::string::npos)
      << r.err;
}

}  // namespace

namespace {

// ---- the trace window ------------------------------------------------------------

TEST(Window, IndependentNodesAreHeldAtMostAWindowAtATimeAndKeepTheirOrder) {
  // Every node could run at once; they once were all issued, and held, at
  // time zero (8 ranks x 10^6 nodes took 3.6 GB). The compute engine runs
  // one node at a time in issue order, so the bound changes no time.
  const std::string dir = testutil::scratch_dir("window");
  traces::write_long_trace(dir + "/ind", 2, 10000, 0, /*independent=*/true);
  const auto j = run_report(dir + "/ind", 2, "--replay");
  ASSERT_EQ(j["npus"].size(), 2u);
  for (const auto& npu : j["npus"]) {
    EXPECT_EQ(npu["peak_nodes_held"].get<std::uint64_t>(), 4096u);
    EXPECT_EQ(npu["finish_ns"].get<double>(), 10000 * 10e3);  // 10 us each, back to back
  }
}

TEST(Window, AWindowFullOfRunningNodesDelaysTheNextOperationAndSaysSo) {
  // 4,096 independent 10 us compute nodes fill the window while they queue
  // for the compute engine; the send after them is read, and starts, only
  // when the first has finished (10 us), not at 0.
  const std::string dir = testutil::scratch_dir("window-full");
  write_trace(dir + "/full", 2, [](int r, traces::EtWriter& w) {
    ChakraProtoMsg::Node n;
    if (r == 0) {
      for (std::uint64_t i = 0; i < 4096; ++i) {
        n.Clear();
        n.set_id(i);
        n.set_name("c");
        n.set_type(ChakraProtoMsg::COMP_NODE);
        n.set_duration_micros(10);
        w.write(n);
      }
    }
    n.Clear();
    n.set_id(4096);
    n.set_name(r == 0 ? "send" : "recv");
    n.set_type(r == 0 ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
    traces::add_uint(n, "comm_size", 1);
    traces::add_int(n, r == 0 ? "comm_dst" : "comm_src", 1 - r);
    w.write(n);
  });
  std::string err;
  const auto j = run_report(dir + "/full", 2, "--replay", 0, &err);
  ASSERT_EQ(j["npus"].size(), 2u);
  const double arrival = j["npus"][1]["finish_ns"].get<double>();
  EXPECT_GT(arrival, 10e3);                       // sent after the first compute node
  EXPECT_LT(arrival, 10e3 + 2 * kLatency + 100);  // and at once then
  EXPECT_NE(err.find("full.0.et: node 4096 (COMM_SEND_NODE) was read only when one of 4096 running operations "
                     "finished"),
            std::string::npos)
      << err;
}

TEST(Window, AMillionNodesThatFinishAtOnceDoNotNestCalls) {
  // Metadata nodes finish as they are issued; each made the next ready
  // inside its own completion, one stack frame deeper per node, until the
  // stack ran out.
  const std::string dir = testutil::scratch_dir("window-chain");
  write_trace(dir + "/chain", 2, [](int, traces::EtWriter& w) {
    ChakraProtoMsg::Node n;
    for (std::uint64_t i = 0; i < 1000000; ++i) {
      n.Clear();
      n.set_id(i);
      n.set_type(ChakraProtoMsg::METADATA_NODE);
      if (i > 0) n.add_ctrl_deps(i - 1);
      w.write(n);
    }
    n.Clear();
    n.set_id(1000000);
    n.set_name("last");
    n.set_type(ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(3);
    n.add_data_deps(999999);
    w.write(n);
  });
  const auto j = run_report(dir + "/chain", 2, "--replay");
  ASSERT_EQ(j["npus"].size(), 2u);
  for (const auto& npu : j["npus"]) {
    EXPECT_EQ(npu["nodes_done"].get<std::uint64_t>(), 1000001u);
    EXPECT_EQ(npu["finish_ns"].get<double>(), 3e3);
  }
}

TEST(Window, ADependencyPastTheWindowIsReadAndReported) {
  // 5,000 nodes that all wait for the last one: nothing within the window
  // can run, so the rank must read on, and say so.
  const std::string dir = testutil::scratch_dir("window-far");
  write_trace(dir + "/far", 2, [](int, traces::EtWriter& w) {
    constexpr std::uint64_t kLast = 5000;
    for (std::uint64_t i = 0; i <= kLast; ++i) {
      ChakraProtoMsg::Node n;
      n.set_id(i);
      n.set_name("c" + std::to_string(i));
      n.set_type(ChakraProtoMsg::COMP_NODE);
      n.set_duration_micros(1);
      if (i != kLast) n.add_data_deps(kLast);
      w.write(n);
    }
  });
  std::string err;
  const auto j = run_report(dir + "/far", 2, "--replay", 0, &err);
  ASSERT_EQ(j["npus"].size(), 2u);
  for (const auto& npu : j["npus"]) {
    EXPECT_EQ(npu["peak_nodes_held"].get<std::uint64_t>(), 5001u);
    EXPECT_EQ(npu["finish_ns"].get<double>(), 5001 * 1e3);
  }
  EXPECT_NE(err.find("far.0.et: nothing within the window of 4096 nodes could run, so more were read (first: "
                     "5001 nodes held, up to node 5000)"),
            std::string::npos)
      << err;
}

}  // namespace
