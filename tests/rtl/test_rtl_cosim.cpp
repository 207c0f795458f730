// The Verilated reduction unit inside fabricsim (--reduction-model rtl): the
// same reduced data as the TLM model, bit for bit, on the DGX H100 in-switch
// all-reduce and on a training step; timing within the derived tolerance;
// a waveform bounded to its window; and what it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/test_util.h"

using namespace fabricsim;
namespace fs = std::filesystem;

namespace {

const std::string kDgx = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/dgx_h100.yaml";

// The tolerance (docs/rtl.md): with the platform's TLM ALU set to the RTL's
// datapath (8 streams x 64 bytes x 1.6 GHz = 819.2 GB/s), one slot's result
// may differ by its pipeline stages, two cycles of clock grid, and at most one
// pass of its beats (the TLM pass starts on the first contribution, the RTL
// needs a beat of every one); back-to-back slots carry a lag over rather
// than add it, so a collective's end differs by one slot's worth at most.
// DGX H100: 32 KiB frames, 64-byte beats, 8 + 1 stages, 1.6 GHz.
const double kBeats = 32768.0 / (FABRICSIM_RTL_W / 8), kStages = FABRICSIM_RTL_K + FABRICSIM_RTL_OUT_STAGES;
const double kPeriodNs = 1000.0 / 1600;
const double kToleranceNs = (kBeats + kStages + 2) * kPeriodNs;

TEST(Cosim, ReducedDataIsBitIdenticalToTheTlmModelForEveryOperationAndType) {
  // Every slot's RTL result is checked against the reference arithmetic by the
  // transactor, and every collective's result against the expected values.
  for (const char* t : {"fp32 sum", "bf16 sum", "bf16 min", "bf16 max", "int32 sum", "int32 min", "int32 max"}) {
    const std::string s(t);
    const std::string dtype = s.substr(0, s.find(' ')), redop = s.substr(s.find(' ') + 1);
    for (const char* op : {"all_reduce", "reduce_scatter", "reduce"}) {
      const auto r = testutil::run_fabricsim(
          "collbench --quiet --data --reduction-model rtl --algo in_switch --platform " + kDgx + " --op " + op +
          " --dtype " + dtype + " --redop " + redop + " -b 3000 -e 3000000 -f 31 --chunks 2");
      EXPECT_EQ(r.exit_code, 0) << op << " " << t << "\n" << r.err;
    }
  }
}

TEST(Cosim, TimingAgreesWithTheTlmModelWithinTheDerivedTolerance) {
  const std::string dir = testutil::scratch_dir("rtl-timing");
  nlohmann::json rows[2];
  int i = 0;
  for (const char* model : {"tlm", "rtl"}) {
    const auto r =
        testutil::run_fabricsim("collbench --quiet --algo in_switch --platform " + kDgx + " --reduction-model " +
                                model + " -b 4K -e 64M -f 8 --json " + dir + "/" + model + ".json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    rows[i++] = nlohmann::json::parse(testutil::read_text(dir + "/" + model + ".json"))["rows"];
  }
  ASSERT_EQ(rows[0].size(), rows[1].size());
  for (std::size_t k = 0; k < rows[0].size(); ++k) {
    const double tlm = rows[0][k]["time_us"].get<double>() * 1000, rtl = rows[1][k]["time_us"].get<double>() * 1000;
    EXPECT_LE(std::fabs(rtl - tlm), kToleranceNs)
        << rows[0][k]["size_bytes"] << " bytes: TLM " << tlm << " ns, RTL " << rtl << " ns";
  }
}

TEST(Cosim, ATrainingStepGivesTheSameResultsAndNearlyTheSameTimes) {
  // Tensor parallel over the 8 GPUs: every all-reduce has the units to
  // itself, so each may differ by the tolerance, and the step by their sum.
  // (Collectives that share a unit are served in a different order by the
  // two models: docs/rtl.md.)
  const std::string dir = testutil::scratch_dir("rtl-training");
  ASSERT_EQ(testutil::run_fabricsim("gen training --dp 1 --tp 8 --pp 1 --layers 2 --microbatches 2 --hidden 1024 "
                                    "--seq 512 --batch 1 --out " +
                                    dir + "/t")
                .exit_code,
            0);
  nlohmann::json report[2];
  int i = 0;
  for (const char* model : {"tlm", "rtl"}) {
    const auto r = testutil::run_fabricsim("run --quiet --data --platform " + kDgx + " --workload " + dir +
                                           "/t --comm-groups " + dir +
                                           "/t.comm_groups.json --algorithm "
                                           "all_reduce=in_switch --reduction-model " +
                                           model + " --report " + dir + "/" + model + ".json");
    ASSERT_EQ(r.exit_code, 0) << model << ": " << r.err;
    report[i++] = nlohmann::json::parse(testutil::read_text(dir + "/" + model + ".json"));
  }
  const auto& tlm_npus = report[0]["npus"];
  const auto& rtl_npus = report[1]["npus"];
  ASSERT_EQ(tlm_npus.size(), rtl_npus.size());
  std::size_t collectives = 0;
  for (std::size_t n = 0; n < tlm_npus.size(); ++n) {
    const auto& a = tlm_npus[n]["collectives"];
    const auto& b = rtl_npus[n]["collectives"];
    ASSERT_EQ(a.size(), b.size());
    collectives = std::max<std::size_t>(collectives, a.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      const double tlm = a[k]["end_ns"].get<double>() - a[k]["start_ns"].get<double>();
      const double rtl = b[k]["end_ns"].get<double>() - b[k]["start_ns"].get<double>();
      EXPECT_LE(std::fabs(rtl - tlm), kToleranceNs)
          << "NPU " << n << ", " << a[k]["name"] << ": TLM " << tlm << " ns, RTL " << rtl << " ns";
    }
  }
  ASSERT_GT(collectives, 8u);
  const double tlm = report[0]["sim_time_ns"], rtl = report[1]["sim_time_ns"];
  EXPECT_LE(std::fabs(rtl - tlm), static_cast<double>(collectives) * kToleranceNs)
      << "TLM " << tlm << " ns, RTL " << rtl << " ns";
  EXPECT_GT(report[1]["reduction_units"][0]["operations"].get<double>(), 0);
}

TEST(Cosim, TheWaveformKeepsToItsWindow) {
  const std::string dir = testutil::scratch_dir("rtl-vcd");
  const auto r =
      testutil::run_fabricsim("collbench --quiet --algo in_switch --platform " + kDgx +
                              " --reduction-model rtl -b 1M -e 1M --vcd " + dir + "/unit.vcd --vcd-window 2us:4us");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".vcd") continue;
    ++files;
    std::ifstream in(e.path());
    std::string line;
    bool header = false;
    long long first = -1, last = -1;
    while (std::getline(in, line)) {
      header |= line.rfind("$enddefinitions", 0) == 0;
      if (!line.empty() && line[0] == '#') {
        const long long t = std::stoll(line.substr(1));
        if (first < 0) first = t;
        last = t;
      }
    }
    EXPECT_TRUE(header) << e.path();
    EXPECT_GE(first, 2000000) << e.path();  // ps
    EXPECT_LE(last, 4000000) << e.path();
  }
  EXPECT_EQ(files, 4);  // one per NVSwitch's unit
}

TEST(Cosim, WhatTheRtlCannotDoIsRefused) {
  const auto fp16 = testutil::run_fabricsim("collbench --platform " + kDgx +
                                            " --reduction-model rtl --algo in_switch --dtype fp16 -b 1M -e 1M");
  EXPECT_EQ(fp16.exit_code, 2);
  EXPECT_NE(fp16.err.find("does not support sum on fp16"), std::string::npos) << fp16.err;
  const auto window =
      testutil::run_fabricsim("collbench --platform " + kDgx + " --reduction-model rtl --vcd-window 0:1us");
  EXPECT_EQ(window.exit_code, 2);
  EXPECT_NE(window.err.find("--vcd-window needs --vcd FILE"), std::string::npos) << window.err;
  const auto none = testutil::run_fabricsim("collbench --platform " + std::string(FABRICSIM_SOURCE_DIR) +
                                            "/platforms/ring8.yaml --reduction-model rtl");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("the platform's switches have no reduction units"), std::string::npos) << none.err;
}

TEST(Cosim, AWrongRtlResultStopsWithExit4NamingBeatLaneAndBothValues) {
  // +fault_lane=3 makes the RTL flip the lowest bit of lane 3 of every
  // output beat (reduction_unit.sv): the transactor's check must catch it,
  // name the first wrong element, and not corrupt memory on the way out
  // (it once aborted with "double free or corruption").
  const auto r =
      testutil::run_fabricsim("collbench --quiet --data --reduction-model rtl --algo in_switch --platform " + kDgx +
                              " --op all_reduce --dtype int32 -b 4096 -e 4096 "
                              "--rtl-plusarg +fault_lane=3");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("the RTL result differs from the reference model for "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(sum on int32 of 8 contributions)"), std::string::npos) << r.err;
  const std::string head = "beat 0, lane 3 (element 3): RTL ";
  const auto at = r.err.find(head);
  ASSERT_NE(at, std::string::npos) << r.err;
  long long rtl = 0, reference = 0;
  ASSERT_EQ(std::sscanf(r.err.c_str() + at + head.size(), "%lld, reference %lld", &rtl, &reference), 2) << r.err;
  EXPECT_EQ(rtl, reference ^ 1) << r.err;  // exactly the flipped bit

  const auto tlm = testutil::run_fabricsim("collbench --platform " + kDgx + " --rtl-plusarg +fault_lane=3");
  EXPECT_EQ(tlm.exit_code, 2);
  EXPECT_NE(tlm.err.find("--rtl-plusarg: no reduction unit runs the RTL"), std::string::npos) << tlm.err;
  const auto bare =
      testutil::run_fabricsim("collbench --platform " + kDgx + " --reduction-model rtl --rtl-plusarg fault_lane=3");
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("--rtl-plusarg fault_lane=3: give +NAME or +NAME=VALUE"), std::string::npos) << bare.err;
}

}  // namespace
