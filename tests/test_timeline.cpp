// The timeline (--timeline): valid trace-event JSON whose slices agree with
// the report, the same report with and without it, subsets and windows,
// bad options, and a file that is whole or absent. Plus the console summary
// and the progress line's silence off a terminal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "support/test_util.h"

using namespace fabricsim;
namespace fs = std::filesystem;

namespace {

/// A training step (compute, TP all-reduces of 4 GPUs in-switch, PP send/recv) on a DGX
/// H100 model, generated once per test in its scratch folder.
struct Workload {
  std::string dir, prefix, platform, groups;
};
Workload training(const std::string& name) {
  Workload w;
  w.dir = testutil::scratch_dir(name);
  w.prefix = w.dir + "/train";
  w.platform = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/dgx_h100.yaml";
  w.groups = w.prefix + ".comm_groups.json";
  const auto g =
      testutil::run_fabricsim("gen training --dp 1 --tp 4 --pp 2 --layers 2 --microbatches 2 --out " + w.prefix);
  EXPECT_EQ(g.exit_code, 0) << g.err;
  return w;
}
std::string run_args(const Workload& w) {
  // The all-reduces in the NVSwitches' units, so that the timeline has
  // their tracks (NCCL would run these small ones as rings).
  return "run --quiet --platform " + w.platform + " --workload " + w.prefix + " --comm-groups " + w.groups +
         " --algorithm all_reduce=in_switch";
}

double ns_of(const nlohmann::json& e, const char* key) {
  return e[key].get<double>() * 1000.0;
}  // us -> ns

TEST(Timeline, SlicesAgreeWithTheReport) {
  const Workload w = training("timeline-report");
  const auto r = testutil::run_fabricsim(run_args(w) + " --report " + w.dir + "/report.json --timeline " + w.dir +
                                         "/timeline.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(testutil::read_text(w.dir + "/report.json"));
  const auto timeline = nlohmann::json::parse(testutil::read_text(w.dir + "/timeline.json"));
  ASSERT_TRUE(timeline.contains("traceEvents"));
  const auto& events = timeline["traceEvents"];

  std::map<int, double> gpu, cpu;
  std::map<int, std::vector<std::pair<double, double>>> compute;  // for the union
  std::map<int, std::map<int, std::string>> thread_names;
  std::set<std::tuple<int, std::int64_t, long long, long long>> collectives;  // npu, node, start, end (ps)
  for (const auto& e : events) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid")) << e.dump();
    const std::string ph = e["ph"];
    const int pid = e["pid"];
    if (ph == "M" && e["name"] == "thread_name") thread_names[pid][e["tid"].get<int>()] = e["args"]["name"];
    if (ph != "X") continue;
    ASSERT_TRUE(e.contains("ts") && e.contains("dur") && e.contains("tid") && e.contains("name")) << e.dump();
    const int tid = e["tid"];
    const double start = ns_of(e, "ts"), dur = ns_of(e, "dur");
    EXPECT_GE(dur, 0) << e.dump();
    if (tid >= 10 && tid < 20) gpu[pid] += dur;
    if (tid >= 20 && tid < 30) cpu[pid] += dur;
    if (tid >= 10 && tid < 30) compute[pid].emplace_back(start, start + dur);
    if (tid >= 1000 && tid % 100 == 0) {
      ASSERT_TRUE(e["args"].contains("node")) << e.dump();
      collectives.emplace(pid, e["args"]["node"].get<std::int64_t>(), std::llround(start * 1000),
                          std::llround((start + dur) * 1000));
    }
  }
  for (const auto& npu : report["npus"]) {
    const int id = npu["id"];
    // The sum of an NPU's compute slices is its compute resources' busy time.
    EXPECT_NEAR(gpu[id], npu["gpu_busy_ns"].get<double>(), 0.01) << "NPU " << id;
    EXPECT_NEAR(cpu[id], npu["cpu_busy_ns"].get<double>(), 0.01) << "NPU " << id;
    // Their union is its compute time.
    auto& v = compute[id];
    std::sort(v.begin(), v.end());
    double total = 0, reach = -1;
    for (const auto& [a, b] : v) {
      if (b > reach) total += b - std::max(a, reach);
      reach = std::max(reach, b);
    }
    EXPECT_NEAR(total, npu["compute_ns"].get<double>(), 0.01) << "NPU " << id;
    EXPECT_GT(npu["compute_ns"].get<double>(), 0);
    // Every collective of the report has its slice, with the same start and end.
    ASSERT_FALSE(npu["collectives"].empty());
    for (const auto& c : npu["collectives"]) {
      const auto key =
          std::make_tuple(id, c["node_id"].get<std::int64_t>(), std::llround(c["start_ns"].get<double>() * 1000),
                          std::llround(c["end_ns"].get<double>() * 1000));
      EXPECT_TRUE(collectives.count(key)) << "NPU " << id << ": " << c.dump();
    }
    EXPECT_EQ(thread_names[id][10], "GPU compute") << "NPU " << id;
    EXPECT_EQ(thread_names[id][1000], "collectives") << "NPU " << id;
  }
}

TEST(Timeline, TheReportIsTheSameWithAndWithoutIt) {
  const Workload w = training("timeline-same");
  const auto a = testutil::run_fabricsim(run_args(w) + " --report " + w.dir + "/a.json");
  const auto b = testutil::run_fabricsim(run_args(w) + " --report " + w.dir + "/b.json --timeline " + w.dir +
                                         "/t.json --timeline-links");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto ja = nlohmann::ordered_json::parse(testutil::read_text(w.dir + "/a.json"));
  auto jb = nlohmann::ordered_json::parse(testutil::read_text(w.dir + "/b.json"));
  ja.erase("fabricsim");  // the command lines differ
  jb.erase("fabricsim");
  EXPECT_EQ(ja.dump(1), jb.dump(1));
}

TEST(Timeline, ASubsetAndAWindowBoundWhatIsWritten) {
  const Workload w = training("timeline-subset");
  const auto r =
      testutil::run_fabricsim(run_args(w) + " --timeline " + w.dir +
                              "/t.json --timeline-npus 1,4-5 --timeline-window 100us:600us --timeline-links");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto t = nlohmann::json::parse(testutil::read_text(w.dir + "/t.json"));
  std::set<int> npus;
  bool links = false, units = false;
  for (const auto& e : t["traceEvents"]) {
    const int pid = e["pid"];
    if (pid < 1000000) npus.insert(pid);
    links |= pid == 1000001 && e["ph"] == "C";
    units |= pid == 1000000 && e["ph"] == "C";
    if (e["ph"] == "X") {
      EXPECT_GE(e["ts"].get<double>(), 100.0 - 1e-6) << e.dump();
      EXPECT_LE(e["ts"].get<double>() + e["dur"].get<double>(), 600.0 + 1e-6) << e.dump();
    }
  }
  EXPECT_EQ(npus, (std::set<int>{1, 4, 5}));
  EXPECT_TRUE(links);
  EXPECT_TRUE(units);
}

TEST(Timeline, BadOptionsAreNamed) {
  const Workload w = training("timeline-bad");
  const struct {
    std::string args, message;
  } cases[] = {
      {"--timeline " + w.dir + "/t.json --timeline-npus 0-99", "outside the platform's NPUs 0-7"},
      {"--timeline " + w.dir + "/t.json --timeline-npus a", "\"a\" is not an NPU or a range"},
      {"--timeline " + w.dir + "/t.json --timeline-window 5ms:1ms", "the end must come after the start"},
      {"--timeline " + w.dir + "/t.json --timeline-window 1h:2h", "unknown time unit \"h\""},
      {"--timeline " + w.dir + "/t.json --timeline-window nan:", "\"nan\" is not a finite time"},
      {"--timeline " + w.dir + "/t.json --timeline-window 0:inf", "\"inf\" is not a finite time"},
      {"--timeline " + w.dir + "/t.json --timeline-npus 5-2", "5-2 runs backwards; give the lower NPU first (2-5)"},
      {"--timeline-npus 0-3", "need --timeline FILE"},
      {"--timeline " + w.dir + "/no/such/folder/t.json", "cannot write the timeline"},
  };
  for (const auto& c : cases) {
    const auto r = testutil::run_fabricsim(run_args(w) + " " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(w.dir + "/t.json"));
  EXPECT_FALSE(fs::exists(w.dir + "/t.json.tmp"));
}

TEST(Timeline, AStuckRunStillWritesAWholeTimelineAndNoTemporaryFile) {
  // Every NPU waits for a message nobody sends.
  const std::string dir = testutil::scratch_dir("timeline-stuck");
  const auto g = testutil::run_fabricsim("gen pipeline --stages 2 --microbatches 1 --out " + dir + "/p");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  fs::remove(dir + "/p.0.et");
  fs::copy_file(dir + "/p.1.et", dir + "/p.0.et");  // both ranks now only receive
  const std::string net = testutil::astra_network(dir, "Ring", 2, 50, 500);
  const auto r = testutil::run_fabricsim("run --quiet --platform " + net + " --workload " + dir + "/p --timeline " +
                                         dir + "/t.json");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  nlohmann::json trace;
  EXPECT_NO_THROW(trace = nlohmann::json::parse(testutil::read_text(dir + "/t.json")));
  EXPECT_FALSE(trace.is_null());
  EXPECT_FALSE(fs::exists(dir + "/t.json.tmp"));
}

/// An 8-to-1 gather of 8 MiB on one switch over `transport`, run with
/// --timeline-links: per link, the report's congestion counters and the
/// timeline's "congestion" counter track summed back from its steps.
struct Congestion {
  double marks = 0, drops = 0, paused_ns = 0, peak_queue = 0;
};
void expect_congestion_counters_match_the_report(const std::string& name, const std::string& transport) {
  const std::string dir = testutil::scratch_dir(name);
  ASSERT_EQ(testutil::run_fabricsim("gen collective --npus 8 --type gather --bytes 8M --out " + dir + "/g").exit_code,
            0);
  testutil::write_text(dir + "/p.yaml", R"(npus: 8
nic: { mtu: 4 KiB, header: 64 }
collectives: { algorithms: { gather: direct } }
fabrics:
  - topology: switch
    link: { bandwidth: 50 GB/s, latency: 1 us, buffer: 512 KiB }
    transport: )" + transport + "\n");
  const auto r =
      testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/g --report " + dir +
                              "/r.json --timeline " + dir + "/t.json --timeline-links");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  const auto events = nlohmann::json::parse(testutil::read_text(dir + "/t.json"))["traceEvents"];
  double step_us = 0;  // the counters' step, from the links' process name
  std::map<std::string, std::vector<std::pair<double, nlohmann::json>>> tracks;
  for (const auto& e : events) {
    if (e["ph"] == "M" && e["pid"] == 1000001 && e["name"] == "process_name") {
      const std::string n = e["args"]["name"];
      step_us = std::stod(n.substr(n.find("per ") + 4));
    }
    const std::string n = e.value("name", "");
    const std::string suffix = " congestion";
    if (e["ph"] == "C" && n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
      tracks[n.substr(0, n.size() - suffix.size())].emplace_back(e["ts"].get<double>(), e["args"]);
    }
  }
  ASSERT_GT(step_us, 0);
  std::map<std::string, Congestion> timeline;
  for (auto& [link, steps] : tracks) {
    // A counter holds its value until the next: per-step counts times steps.
    Congestion& c = timeline[link];
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const auto& a = steps[i].second;
      c.peak_queue = std::max(c.peak_queue, a["queue_bytes"].get<double>());
      if (i + 1 == steps.size()) continue;
      const double buckets = std::round((steps[i + 1].first - steps[i].first) / step_us);
      c.marks += a["ecn_marks"].get<double>() * buckets;
      c.drops += a["drops"].get<double>() * buckets;
      c.paused_ns += a["paused"].get<double>() * buckets * step_us * 1000.0;
    }
    EXPECT_EQ(steps.back().second["ecn_marks"], 0) << link << ": the track must end at zero";
  }
  Congestion any;
  for (const auto& l : report["links"]) {
    const std::string link = l["name"];
    const Congestion& c = timeline[link];
    EXPECT_EQ(c.marks, l["ecn_marks"].get<double>()) << link;
    EXPECT_EQ(c.drops, l.value("drops", 0.0)) << link;
    EXPECT_NEAR(c.paused_ns, l["paused_ns"].get<double>(), 1e-3 * l["paused_ns"].get<double>() + 1) << link;
    EXPECT_NEAR(c.peak_queue, l["peak_queue_bytes"].get<double>(), 1) << link;
    any.marks += c.marks;
    any.drops += c.drops;
    any.paused_ns += c.paused_ns;
  }
  if (transport.find("tcp") != std::string::npos) {
    EXPECT_GT(any.drops, 0) << "the incast must overflow the shared buffer";
  } else {
    EXPECT_GT(any.marks, 0) << "the incast's queue must pass kmin";
    EXPECT_GT(any.paused_ns, 0) << "DCQCN reacts too late to keep PFC from pausing the senders";
  }
}

TEST(Timeline, MarksAndPausesOfALosslessIncastAddUpToTheReport) {
  expect_congestion_counters_match_the_report("timeline-roce", "{ kind: roce, pfc_xoff: 64 kB }");
}

TEST(Timeline, DropsOfALossyIncastAddUpToTheReport) {
  expect_congestion_counters_match_the_report("timeline-tcp", "{ kind: tcp, switch_buffer: 256 KiB }");
}

TEST(Summary, StatesUnitsDefinesItsFiguresAndListsTheHottestLinks) {
  const Workload w = training("summary");
  const auto r = testutil::run_fabricsim("run --platform " + w.platform + " --workload " + w.prefix +
                                         " --comm-groups " + w.groups + " --algorithm all_reduce=in_switch");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"per NPU, in ns: finish = when its last operation ended", "exposed communication = ",
                           "hottest links (busy = share of the simulated time spent sending", "GB/s average",
                           "reduction unit nvlink_switch0_reduction:", "npu 7: finish "}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
  // Not on a terminal: no progress line.
  EXPECT_EQ(r.err.find("simulated"), std::string::npos) << r.err;
}

/// Runs a plot script with Debian's python3 (which has matplotlib).
int plot(const std::string& script, const std::string& args) {
  const std::string cmd =
      "/usr/bin/python3 " + std::string(FABRICSIM_SOURCE_DIR) + "/scripts/" + script + " " + args + " > /dev/null";
  return std::system(cmd.c_str());
}

TEST(Plots, EachScriptTurnsItsInputIntoAPicture) {
  const std::string dir = testutil::scratch_dir("plots");
  const std::string torus = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/torus4x4.yaml";
  ASSERT_EQ(testutil::run_fabricsim("gen collective --npus 16 --type all_to_all --bytes 1048576 --out " + dir + "/a")
                .exit_code,
            0);
  ASSERT_EQ(testutil::run_fabricsim("run --quiet --platform " + torus + " --workload " + dir + "/a --report " + dir +
                                    "/r.json")
                .exit_code,
            0);
  ASSERT_EQ(
      testutil::run_fabricsim("collbench --quiet --platform " + torus + " -b 1K -e 1M -f 32 --json " + dir + "/c.json")
          .exit_code,
      0);
  EXPECT_EQ(plot("plot-link-heatmap.py", dir + "/r.json --out " + dir + "/links.png"), 0);
  EXPECT_EQ(plot("plot-breakdown.py", dir + "/r.json --out " + dir + "/breakdown.png"), 0);
  EXPECT_EQ(plot("plot-busbw.py", dir + "/c.json --out " + dir + "/busbw.png"), 0);
  // Switches and fat trees are laid out in layers (they were once refused).
  testutil::write_text(dir + "/switch.yaml", "npus: 4\nfabrics:\n  - topology: switch\n");
  ASSERT_EQ(
      testutil::run_fabricsim("gen collective --npus 4 --type all_reduce --bytes 1M --out " + dir + "/s").exit_code, 0);
  ASSERT_EQ(testutil::run_fabricsim("run --quiet --platform " + dir + "/switch.yaml --workload " + dir +
                                    "/s --report " + dir + "/s.json")
                .exit_code,
            0);
  EXPECT_EQ(plot("plot-link-heatmap.py", dir + "/s.json --out " + dir + "/switch.png"), 0);
  // A sweep's results.csv: a metric against an axis, a line per another.
  testutil::write_text(dir + "/results.csv",
                       "id,status,set.x,algorithm,time\na,ok,1 GB/s,ring,5\nb,ok,2 GB/s,ring,3\nc,ok,1 GB/s,direct,4\n"
                       "d,failed,2 GB/s,direct,\n");
  EXPECT_EQ(
      plot("plot-sweep.py", dir + "/results.csv --x set.x --y time --lines algorithm --out " + dir + "/sweep.png"), 0);
  for (const char* png : {"links.png", "breakdown.png", "busbw.png", "switch.png", "sweep.png"}) {
    EXPECT_GT(fs::file_size(dir + "/" + png), 10000u) << png;
  }
  // A report of a fabric it cannot lay out is refused with a reason.
  EXPECT_NE(plot("plot-link-heatmap.py", std::string(FABRICSIM_SOURCE_DIR) + "/tests/CMakeLists.txt 2> /dev/null"), 0);
}

}  // namespace
