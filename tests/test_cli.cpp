// The fabricsim command as a user meets it: results, reports, and one clear
// message with exit code 2 for bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/test_util.h"
#include "traces/generator/et_writer.h"

using namespace fabricsim;
namespace fs = std::filesystem;

namespace {

std::string astra_all_reduce(int n) {
  return testutil::shared_trace("astra-sim/microbenchmarks/all_reduce/" + std::to_string(n) + "npus_1MB/all_reduce");
}

TEST(Cli, RunPrintsAnNpuLineEachAndWritesTheReport) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("cli-run");
  const std::string net = testutil::astra_network(dir, "Ring", 4, 50, 500);
  const auto r = testutil::run_fabricsim("run --platform " + net + " --workload " + astra_all_reduce(4) +
                                         " --chunks 1 --report " + dir + "/report.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int i = 0; i < 4; ++i)
    EXPECT_NE(r.out.find("npu " + std::to_string(i) + ": finish 32296.8"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(testutil::read_text(dir + "/report.json"));
  EXPECT_NEAR(j["sim_time_ns"].get<double>(), 32296.875, 0.01);
  ASSERT_EQ(j["npus"].size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(j["npus"][i]["id"].get<int>(), i);
    EXPECT_NEAR(j["npus"][i]["finish_ns"].get<double>(), 32296.875, 0.01);
  }
}

TEST(Cli, TheConsoleShowsExposedMemoryTimeAndEachBusyMemorysShareOfItsBandwidth) {
  // The shipped offload example: optimizer state to a memory pool and back.
  const std::string dir = testutil::scratch_dir("cli-memory");
  const std::string src = FABRICSIM_SOURCE_DIR;
  const auto r = testutil::run_fabricsim("run --platform " + src + "/platforms/pool8.yaml --workload " + src +
                                         "/traces/samples/offload_8npus/offload --report " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  char expected[128];
  std::snprintf(expected, sizeof expected, "exposed memory %.3f ns", j["npus"][0]["exposed_memory_ns"].get<double>());
  EXPECT_NE(r.out.find(expected), std::string::npos) << expected << " in:\n" << r.out;
  bool pool_seen = false;
  for (const auto& m : j["memories"]) {
    if (m["name"] != "pool") continue;
    pool_seen = true;
    std::snprintf(expected, sizeof expected, "  pool: %llu bytes read, %llu written, ",
                  static_cast<unsigned long long>(m["bytes_read"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(m["bytes_written"].get<std::uint64_t>()));
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << " in:\n" << r.out;
    std::snprintf(expected, sizeof expected, "%.1f%% of its bandwidth", 100 * m["utilization"].get<double>());
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << " in:\n" << r.out;
  }
  EXPECT_TRUE(pool_seen) << "the report names no memory \"pool\"";
  EXPECT_NE(r.out.find("busiest memories"), std::string::npos);
}

TEST(Cli, TheSameRunGivesAByteIdenticalReport) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("cli-same");
  const std::string net = testutil::astra_network(dir, "Ring", 8, 50, 500);
  for (const char* name : {"a.json", "b.json"}) {
    const auto r = testutil::run_fabricsim("run --quiet --platform " + net + " --workload " + astra_all_reduce(8) +
                                           " --report " + dir + "/" + name);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // Byte for byte, but for the command line each records (its --report path).
  auto a = nlohmann::ordered_json::parse(testutil::read_text(dir + "/a.json"));
  auto b = nlohmann::ordered_json::parse(testutil::read_text(dir + "/b.json"));
  EXPECT_NE(a["fabricsim"]["command"], b["fabricsim"]["command"]);
  a.erase("fabricsim");
  b.erase("fabricsim");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a.dump(1), b.dump(1));
}

TEST(Cli, UnknownPlatformKeyIsNamedWithFileAndLine) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("cli-key");
  testutil::write_text(dir + "/p.yaml",
                       "npus: 4\nfabrics:\n  - topology: ring\n    link: { bandwidth_GBps: 50, latnecy_ns: 500 }\n");
  const auto r = testutil::run_fabricsim("run --platform " + dir + "/p.yaml --workload " + astra_all_reduce(4));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir + "/p.yaml:4:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown key \"latnecy_ns\""), std::string::npos) << r.err;
}

TEST(Cli, MissingPlatformFieldIsNamed) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("cli-missing");
  testutil::write_text(dir + "/p.yaml", "npus: 4\n");
  const auto r = testutil::run_fabricsim("run --platform " + dir + "/p.yaml --workload " + astra_all_reduce(4));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("p.yaml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing \"fabrics\""), std::string::npos) << r.err;
}

TEST(Cli, AstraNetworkWithUnequalListsIsRejected) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("cli-astra");
  testutil::write_text(dir + "/n.yml",
                       "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50, 50 ]\nlatency: [ 500 ]\n");
  const auto r = testutil::run_fabricsim("run --platform " + dir + "/n.yml --workload " + astra_all_reduce(4));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("n.yml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("one entry per dimension"), std::string::npos) << r.err;
}

TEST(Cli, TruncatedTraceNamesTheFileAndTheRecord) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("cli-trunc");
  const std::string net = testutil::astra_network(dir, "Ring", 4, 50, 500);
  for (int r = 0; r < 4; ++r) {
    fs::copy_file(astra_all_reduce(4) + "." + std::to_string(r) + ".et", dir + "/t." + std::to_string(r) + ".et");
  }
  fs::resize_file(dir + "/t.2.et", fs::file_size(dir + "/t.2.et") - 5);
  const auto r = testutil::run_fabricsim("run --platform " + net + " --workload " + dir + "/t");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir + "/t.2.et: node record 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
}

TEST(Cli, MissingRankFileIsNamed) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("cli-rank");
  const std::string net = testutil::astra_network(dir, "Ring", 8, 50, 500);
  // A 4-rank workload on an 8-NPU platform: rank 4 has no file.
  const auto r = testutil::run_fabricsim("run --platform " + net + " --workload " + astra_all_reduce(4));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("all_reduce.4.et: cannot open the trace"), std::string::npos) << r.err;
}

TEST(Cli, UnknownFlagExitsWithTwo) {
  const auto r = testutil::run_fabricsim("run --platform x.yaml --workload y --chunkz 4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--chunkz"), std::string::npos) << r.err;
}

TEST(Cli, GeneratorsMakeTheOutputFolderAndNameAnUnwritableOne) {
  const std::string dir = testutil::scratch_dir("cli-gen-out");
  const auto made = testutil::run_fabricsim("gen collective --npus 2 --bytes 1024 --out " + dir + "/new/folder/ar");
  EXPECT_EQ(made.exit_code, 0) << made.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/new/folder/ar.1.et"));
  // A file where a folder should be.
  testutil::run_fabricsim("gen collective --npus 2 --bytes 1024 --out " + dir + "/plain");
  const auto bad = testutil::run_fabricsim("gen collective --npus 2 --bytes 1024 --out " + dir + "/plain.0.et/x");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("plain.0.et/x.0.et: cannot write the trace"), std::string::npos) << bad.err;
}

}  // namespace

namespace {

// ---- real PyTorch steps on another machine: the compute model times them --

TEST(Cli, Gpt2StepIsTimedByTheComputeModelOnAnH100) {
  FABRICSIM_NEEDS_SHARED_DATA();
  // gpt2.0.et's GPU kernels sum to 40,201 us (Kineto, as recorded); every
  // GPU node is timed from its op and shapes, none falls back.
  const std::string dir = testutil::scratch_dir("cli-gpt2");
  const auto r = testutil::run_fabricsim("run --platform " + std::string(FABRICSIM_SOURCE_DIR) +
                                         "/platforms/dgx_h100.yaml --npus 1 --workload " +
                                         testutil::shared_trace("pytorch-h100/gpt2") + " --report " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("compute nodes: GPU 236 timed by the compute model (and 75 later kernels of their ops), 0 "
                       "recorded durations"),
            std::string::npos)
      << r.out;
  const auto j = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  const auto& npu = j["npus"][0];
  EXPECT_EQ(npu["compute_nodes"]["gpu_modelled"].get<int>(), 236);
  EXPECT_EQ(npu["compute_nodes"]["gpu_recorded"].get<int>(), 0);
  const double busy_us = npu["gpu_busy_ns"].get<double>() / 1000;
  EXPECT_NEAR(busy_us, 40201, 0.15 * 40201);
  // Replayed, the recorded durations come back exactly.
  const auto replay = testutil::run_fabricsim(
      "run --platform " + std::string(FABRICSIM_SOURCE_DIR) + "/platforms/dgx_h100.yaml --npus 1 --replay --workload " +
      testutil::shared_trace("pytorch-h100/gpt2") + " --report " + dir + "/replay.json");
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const auto k = nlohmann::json::parse(testutil::read_text(dir + "/replay.json"));
  EXPECT_DOUBLE_EQ(k["npus"][0]["gpu_busy_ns"].get<double>(), 40201e3);
}

TEST(Cli, Gpt2DdpRunsWithPyTorchsAllRanksGroup) {
  FABRICSIM_NEEDS_SHARED_DATA();
  // Its process group is written "ranks": [], meaning every rank.
  const auto r = testutil::run_fabricsim("run --quiet --platform " + std::string(FABRICSIM_SOURCE_DIR) +
                                         "/platforms/dgx_h100.yaml --npus 1 --workload " +
                                         testutil::shared_trace("pytorch-h100/gpt2ddp"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(Cli, UnknownGpuOpsKeepTheirRecordedTimeWithOneCountingWarning) {
  const std::string dir = testutil::scratch_dir("cli-unknown-op");
  {
    traces::EtWriter w(dir + "/t.0.et");
    for (int i = 0; i < 3; ++i) {
      ChakraProtoMsg::Node n;
      n.set_id(static_cast<std::uint64_t>(i));
      n.set_name("some_kernel");
      n.set_type(ChakraProtoMsg::COMP_NODE);
      n.set_duration_micros(7);
      traces::add_bool(n, "is_cpu_op", false);
      traces::add_string(n, "op_schema",
                         i < 2 ? "aten::frobnicate(Tensor self) -> Tensor" : "aten::zap(Tensor a) -> Tensor");
      w.write(n);
    }
    w.close();
  }
  const auto r =
      testutil::run_fabricsim("run --platform " + std::string(FABRICSIM_SOURCE_DIR) +
                              "/platforms/dgx_h100.yaml --npus 1 --workload " + dir + "/t --report " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("3 GPU nodes of 2 ops the compute model does not know kept their recorded durations: "
                       "aten::frobnicate (2), aten::zap (1)"),
            std::string::npos)
      << r.err;
  const auto j = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  EXPECT_DOUBLE_EQ(j["npus"][0]["gpu_busy_ns"].get<double>(), 21e3);
}

}  // namespace

namespace {

TEST(Cli, GenTakesSizesAsCollbenchDoes) {
  const std::string dir = testutil::scratch_dir("cli-gen-size");
  const auto g = testutil::run_fabricsim("gen collective --npus 4 --bytes 1M --out " + dir + "/c");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const std::string net = testutil::astra_network(dir, "Ring", 4, 50, 500);
  const auto r = testutil::run_fabricsim("run --quiet --platform " + net + " --workload " + dir + "/c --report " + dir +
                                         "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  EXPECT_EQ(j["npus"][0]["collectives"][0]["bytes"], 1048576);
  const auto bad = testutil::run_fabricsim("gen collective --npus 4 --bytes 1Q --out " + dir + "/d");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--bytes: \"1Q\": unknown size unit (K, M, G, T or P)"), std::string::npos) << bad.err;
}

}  // namespace

namespace {

TEST(Cli, VersionAndEveryJsonOutputSayWhatMadeThem) {
  const auto v = testutil::run_fabricsim("--version");
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_EQ(v.out.rfind("fabricsim 0.1.0 (commit ", 0), 0u) << v.out;
  const std::string dir = testutil::scratch_dir("cli-provenance");
  const std::string args = "collbench --quiet --platform " + std::string(FABRICSIM_SOURCE_DIR) +
                           "/platforms/ring8.yaml -b 1K -e 1K --json " + dir + "/c.json";
  const auto r = testutil::run_fabricsim(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(testutil::read_text(dir + "/c.json"));
  EXPECT_EQ(j["fabricsim"]["version"], "0.1.0");
  EXPECT_EQ(j["fabricsim"]["command"], "fabricsim " + args);
  EXPECT_FALSE(j["fabricsim"]["commit"].get<std::string>().empty());
}

}  // namespace
