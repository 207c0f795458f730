// Bad input never gives a wrong answer, a crash, a hang or harm to a file:
// one test per class of bad input, each asserting the exit code and that the
// message names the file, the place and the value.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/npu/work_bounds.h"
#include "support/fabric_harness.h"
#include "support/test_util.h"
#include "traces/generator/et_writer.h"

using namespace fabricsim;
namespace fs = std::filesystem;

namespace {

const std::string kRing4 = "npus: 4\nfabrics:\n  - topology: ring\n    link: { bandwidth_GBps: 50, latency_ns: 500 }\n";

std::string all_reduce_4() {
  return testutil::shared_trace("astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce");
}

/// Runs `fabricsim run` on the platform text and the 4-NPU all-reduce.
testutil::CommandResult run_platform(const std::string& dir, const std::string& yaml, const std::string& extra = "") {
  testutil::write_text(dir + "/p.yaml", yaml);
  return testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + all_reduce_4() + " " +
                                 extra);
}

void expect_refused(const testutil::CommandResult& r, const std::string& where, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(where), std::string::npos) << "expected the place " << where << " in: " << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << "expected \"" << what << "\" in: " << r.err;
}

TEST(BadNumbers, NanInfinityAndOutOfRangeAreRefusedWithFileLineAndValue) {
  const std::string dir = testutil::scratch_dir("bad-numbers");
  struct Case {
    std::string yaml, where, what;
  };
  const std::vector<Case> cases = {
      {"npus: 4\nfabrics:\n  - topology: ring\n    link: { bandwidth_GBps: .nan }\n",
       "p.yaml:4:", "\"bandwidth_GBps\" (GB/s) must be a finite number >= 0 and <= 1e+06, not \".nan\""},
      {"npus: 4\nnpu: { peak_tflops: .inf }\nfabrics: [ { topology: ring } ]\n",
       "p.yaml:2:", "\"peak_tflops\" (TFLOP/s) must be a finite number > 0 and <= 1e+06, not \".inf\""},
      {"npus: 4\nfabrics:\n  - topology: ring\n    link: { latency_ns: -5 }\n",
       "p.yaml:4:", "\"latency_ns\" (ns) is -5: it must be >= 0"},
      {"npus: 4\nfabrics:\n  - topology: ring\n    link: { latency_ns: 1e300 }\n",
       "p.yaml:4:", "\"latency_ns\" (ns) is 1e+300"},
      {"npus: 4\nfabrics:\n  - topology: ring\n    link: { bandwidth_GBps: 1e-30 }\n",
       "p.yaml:4:", "\"bandwidth_GBps\" (GB/s) is 1e-30: it must be >= 1e-06"},
      {"npus: 4\nnpu: { memory_bandwidth_GBps: abc }\nfabrics: [ { topology: ring } ]\n",
       "p.yaml:2:", "must be a finite number >= 0 and <= 1e+06, not \"abc\""},
  };
  for (const auto& c : cases) expect_refused(run_platform(dir, c.yaml), dir + "/" + c.where, c.what);
}

TEST(BadNumbers, WholeNumbersDoNotWrap) {
  const std::string dir = testutil::scratch_dir("bad-wrap");
  // 2^32 + 8 once ran 8 NPUs; 2^64 - 5 once read as a small count.
  expect_refused(run_platform(dir, "npus: 4294967304\nfabrics: [ { topology: ring } ]\n"),
                 dir + "/p.yaml:1:", "\"npus\" is 4294967304: it must be from 1 to 131072");
  expect_refused(run_platform(dir, "npus: -4\nfabrics: [ { topology: ring } ]\n"),
                 dir + "/p.yaml:1:", "\"npus\" must be a whole number from 1 to 131072, not \"-4\"");
  expect_refused(run_platform(dir, "npus: 4\ncollectives: { chunks: 4294967297 }\nfabrics: [ { topology: ring } ]\n"),
                 dir + "/p.yaml:2:", "\"chunks\" is 4294967297: it must be from 1 to 4096");
  expect_refused(run_platform(dir, "npus: 4.5\nfabrics: [ { topology: ring } ]\n"), dir + "/p.yaml:1:", "not \"4.5\"");
}

TEST(BadNumbers, AstraNetworkDimensionsThatOverflowAreRefused) {
  FABRICSIM_NEEDS_SHARED_DATA();
  // 65536 x 65536 once overflowed int and divided by zero (SIGFPE).
  const std::string dir = testutil::scratch_dir("bad-astra-overflow");
  testutil::write_text(
      dir + "/net.yml",
      "topology: [ Ring, Ring ]\nnpus_count: [ 65536, 65536 ]\nbandwidth: [ 50, 50 ]\nlatency: [ 500, 500 ]\n");
  const auto r = testutil::run_fabricsim("run --platform " + dir + "/net.yml --workload " + all_reduce_4());
  expect_refused(r, dir + "/net.yml:2:", "the dimensions make more than 131072 NPUs");
  testutil::write_text(dir + "/nan.yml",
                       "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ .nan ]\nlatency: [ 500 ]\n");
  expect_refused(testutil::run_fabricsim("run --platform " + dir + "/nan.yml --workload " + all_reduce_4()),
                 dir + "/nan.yml:3:", "bandwidth (GB/s) must be a finite number");
}

TEST(BadNumbers, AstraSystemJsonInfinityIsRefused) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("bad-astra-json");
  testutil::write_text(dir + "/p.yaml", kRing4);
  testutil::write_text(dir + "/sys.json", "{\"peak-perf\": 1e999}\n");
  const auto r = testutil::run_fabricsim("run --platform " + dir + "/p.yaml --system " + dir + "/sys.json --workload " +
                                         all_reduce_4());
  expect_refused(r, dir + "/sys.json: not valid JSON", "a number too large for a double (1e999)");
  EXPECT_NE(r.err.find("at line 1, column 15"), std::string::npos) << r.err;
}

TEST(BadNumbers, AstraRemoteMemoryCountsMustBeWhole) {
  FABRICSIM_NEEDS_SHARED_DATA();
  // 4.9 NPUs per node was read as 4.
  const std::string dir = testutil::scratch_dir("bad-astra-memory");
  testutil::write_text(dir + "/p.yaml", kRing4);
  testutil::write_text(dir + "/mem.json",
                       "{\"memory-type\": \"PER_NODE_MEMORY_EXPANSION\", \"remote-mem-latency\": 100,\n"
                       " \"remote-mem-bw\": 50, \"num-npus-per-node\": 4.9}\n");
  const auto r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --remote-memory " + dir +
                                         "/mem.json --workload " + all_reduce_4());
  expect_refused(r, dir + "/mem.json: \"num-npus-per-node\"", "must be a whole number, not 4.9");
}

TEST(BadJson, AKeyGivenTwiceIsRefusedInEveryJsonInput) {
  FABRICSIM_NEEDS_SHARED_DATA();
  // nlohmann's parser keeps the last value of a repeated key: one setting
  // silently lost. Our YAML refuses repeats; the JSON inputs now do too.
  const std::string dir = testutil::scratch_dir("bad-json-keys");
  testutil::write_text(dir + "/p.yaml", kRing4);
  testutil::write_text(dir + "/sys.json", "{\"preferred-dataset-splits\": 4,\n \"preferred-dataset-splits\": 8}\n");
  testutil::write_text(dir + "/mem.json", "{\"memory-type\": \"NO_MEMORY_EXPANSION\", \"x\": {\"a\": 1, \"a\": 2}}\n");
  testutil::write_text(dir + "/groups.json", "{\"tp\": [0, 1], \"dp\": [2, 3], \"tp\": [0, 2]}\n");
  const std::string run = "run --quiet --platform " + dir + "/p.yaml --workload " + all_reduce_4();
  expect_refused(testutil::run_fabricsim(run + " --system " + dir + "/sys.json"), dir + "/sys.json",
                 "key \"preferred-dataset-splits\" appears twice in the top-level object");
  expect_refused(testutil::run_fabricsim(run + " --remote-memory " + dir + "/mem.json"), dir + "/mem.json",
                 "key \"a\" appears twice in the object at [\"x\"]");
  expect_refused(testutil::run_fabricsim(run + " --comm-groups " + dir + "/groups.json"), dir + "/groups.json",
                 "key \"tp\" appears twice in the top-level object");
}

TEST(BadYaml, AliasesThatExpandWithoutBoundAreRefused) {
  // Nine levels of ten aliases each are 10^9 values: walking them once took
  // for ever.
  std::string yaml = "npus: 4\nfabrics: [ { topology: ring } ]\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    yaml += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k) yaml += ", " + prev;
    yaml += "]\n";
  }
  const std::string dir = testutil::scratch_dir("bad-yaml-aliases");
  expect_refused(run_platform(dir, yaml),
                 dir + "/p.yaml:", "the document has more than 4000000 values once its aliases");
}

TEST(BadYaml, DuplicateKeysNonScalarKeysAndNonUtf8AreRefused) {
  const std::string dir = testutil::scratch_dir("bad-yaml");
  expect_refused(run_platform(dir, "npus: 4\nnpus: 8\nfabrics: [ { topology: ring } ]\n"),
                 dir + "/p.yaml:2:", "the key \"npus\" appears twice");
  expect_refused(
      run_platform(dir, "npus: 4\nfabrics:\n  - topology: ring\n    link: { latency_ns: 1, latency_ns: 2 }\n"),
      dir + "/p.yaml:4:", "the key \"latency_ns\" appears twice");
  expect_refused(run_platform(dir, "npus: 4\n? [a, b]\n: 1\nfabrics: [ { topology: ring } ]\n"),
                 dir + "/p.yaml:2:", "a key must be a plain name, not a list");
  expect_refused(run_platform(dir, "name: caf\xe9\nnpus: 4\nfabrics: [ { topology: ring } ]\n"),
                 dir + "/p.yaml:1:", "text that is not UTF-8");
  expect_refused(
      run_platform(dir,
                   "npus: 4\ncollectives: { algorithms: { all_reduce: [ring] } }\nfabrics: [ { topology: ring } ]\n"),
      dir + "/p.yaml:2:", "an algorithm must be a name");
}

TEST(BadYaml, ASecondDocumentAndSetValuesGetTheFilesChecks) {
  // A second document (after --- or ...) was dropped without a word, and a
  // --set value skipped the checks a file's values get.
  const std::string dir = testutil::scratch_dir("bad-yaml-documents");
  const std::string ring = "npus: 4\nfabrics: [ { topology: ring } ]\n";
  expect_refused(run_platform(dir, ring + "---\nnpus: 8\n"), dir + "/p.yaml:4:", "a second YAML document");
  expect_refused(run_platform(dir, ring + "...\nnpus: 8\n"), dir + "/p.yaml:4:", "a second YAML document");
  testutil::write_text(dir + "/p.yaml", ring);
  const std::string bench = "collbench --quiet --platform " + dir + "/p.yaml -b 1M -e 1M --set ";
  auto r = testutil::run_fabricsim(bench + "'fabrics.0.link={bandwidth: 1 GB/s, bandwidth: 2 GB/s}'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("(its value):1:21: the key \"bandwidth\" appears twice"), std::string::npos) << r.err;
  r = testutil::run_fabricsim(bench + "'fabrics.0.link.latency=5 ns\n---\nx'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the value holds several YAML documents"), std::string::npos) << r.err;
  std::string nested(70, '[');
  nested += std::string(70, ']');
  r = testutil::run_fabricsim(bench + "'fabrics.0.link=" + nested + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("nested more than 64 levels deep"), std::string::npos) << r.err;
}

TEST(BadYaml, APcieSectionPcieCannotHaveOrWithoutAMemoryToReachIsRefused) {
  const std::string dir = testutil::scratch_dir("bad-pcie");
  const std::string hbm = "npus: 4\nnpu: { hbm: h100 }\nfabrics:\n  - topology: switch\n";
  expect_refused(run_platform(dir, hbm + "    pcie: { lanes: 12 }\n"),
                 dir + "/p.yaml:5:", "pcie lanes 12: a PCIe port has 1, 2, 4, 8, 16 or 32 lanes");
  expect_refused(run_platform(dir, hbm + "    pcie: { max_payload: 384 }\n"),
                 dir + "/p.yaml:5:", "pcie max_payload 384 bytes: PCIe allows 128, 256, 512, 1024, 2048 or 4096");
  expect_refused(run_platform(dir, hbm + "    pcie: { generation: 6 }\n"), dir + "/p.yaml:5:", "\"generation\"");
  expect_refused(run_platform(dir, "npus: 4\nfabrics:\n  - topology: switch\n    pcie: { lanes: 16 }\n"),
                 dir + "/p.yaml:4:", "this platform has none: give npu.hbm, or leave pcie out");
  expect_refused(run_platform(dir, hbm + "    pcie: { uplink_lanes: 3 }\n"),
                 dir + "/p.yaml:5:", "pcie uplink_lanes 3: a PCIe port has 1, 2, 4, 8, 16 or 32 lanes");
  expect_refused(run_platform(dir, hbm + "    pcie: { gpudirect_rdma: sometimes }\n"),
                 dir + "/p.yaml:5:", "on, write_only, off");
  // Two nodes of 4 NPUs: a switch of 3 would hold NICs of both.
  const std::string nodes =
      "npus: 8\nnpu: { hbm: h100 }\nfabrics:\n  - topology: switch\n    group_size: 4\n"
      "  - topology: switch\n    pcie: { devices_per_switch: 3 }\n";
  expect_refused(run_platform(dir, nodes), dir + "/p.yaml:7:",
                 "pcie devices_per_switch 3: a node's 4 NPUs (the first fabric's groups) do not split into PCIe "
                 "switches of 3, and a switch stays within its node: give a divisor of 4");
}

TEST(BadPaths, DirectoriesFifosAndDevicesAreRefusedAsInputsWithoutBlocking) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("bad-paths");
  testutil::write_text(dir + "/p.yaml", kRing4);
  ASSERT_EQ(::mkfifo((dir + "/fifo.yaml").c_str(), 0600), 0);
  struct Case {
    std::string args, what;
  };
  const std::vector<Case> cases = {
      {"--platform " + dir + " --workload " + all_reduce_4(), dir + ": the platform file is a directory"},
      {"--platform " + dir + "/fifo.yaml --workload " + all_reduce_4(),
       dir + "/fifo.yaml: the platform file is a FIFO (named pipe)"},
      {"--platform /dev/zero --workload " + all_reduce_4(), "/dev/zero: the platform file is a character device"},
      {"--platform " + dir + "/p.yaml --system /dev/zero --workload " + all_reduce_4(),
       "/dev/zero: the ASTRA-sim system file is a character device"},
      {"--platform " + dir + "/p.yaml --comm-groups " + dir + "/fifo.yaml --workload " + all_reduce_4(),
       dir + "/fifo.yaml: the process-group file is a FIFO"},
  };
  for (const auto& c : cases) {
    const auto r = testutil::run_fabricsim("run --quiet " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.what), std::string::npos) << c.args << ": " << r.err;
  }
}

TEST(BadPaths, TraceFilesThatAreDirectoriesFifosOrDevicesAreRefusedWithoutBlocking) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("bad-trace-paths");
  testutil::write_text(dir + "/p.yaml", "npus: 2\nfabrics: [ { topology: ring } ]\n");
  ASSERT_EQ(::mkfifo((dir + "/fifo.0.et").c_str(), 0600), 0);
  fs::create_directory(dir + "/folder.0.et");
  fs::create_symlink("/dev/zero", dir + "/zero.0.et");
  for (const char* prefix : {"fifo", "folder", "zero"}) {
    const std::string other = dir + "/" + prefix + ".1.et";
    fs::copy_file(testutil::shared_trace("astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce.1.et"), other);
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fifo", "fifo.0.et: the trace is a FIFO (named pipe)"},
      {"folder", "folder.0.et: the trace is a directory"},
      {"zero", "zero.0.et: the trace is a character device"},
  };
  for (const auto& [prefix, what] : cases) {
    const auto r =
        testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/" + prefix);
    EXPECT_EQ(r.exit_code, 2) << prefix << ": " << r.err;
    EXPECT_NE(r.err.find(dir + "/" + what), std::string::npos) << prefix << ": " << r.err;
  }
}

TEST(BadPaths, OutputsNeverReplaceDevicesOrSymlinksAndNeverLeavePartialFiles) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("out-paths");
  testutil::write_text(dir + "/p.yaml", kRing4);
  const std::string run = "run --quiet --platform " + dir + "/p.yaml --workload " + all_reduce_4();
  // A device is written in place: /dev/null stays a character device.
  for (const char* option : {"--report", "--timeline"}) {
    const auto r = testutil::run_fabricsim(run + " " + option + " /dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    struct stat st {};
    ASSERT_EQ(::stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << option;
  }
  // A symlink stays a symlink; its target gets the report.
  testutil::write_text(dir + "/target.json", "old");
  fs::create_symlink("target.json", dir + "/link.json");
  auto r = testutil::run_fabricsim(run + " --report " + dir + "/link.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir + "/link.json"));
  EXPECT_NE(testutil::read_text(dir + "/target.json").find("\"npus\""), std::string::npos);
  // A directory is refused, and a failed write leaves nothing behind.
  r = testutil::run_fabricsim(run + " --report " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir + ": is a directory"), std::string::npos) << r.err;
  r = testutil::run_fabricsim(run + " --report " + dir + "/missing/r.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir + "/missing/r.json: cannot write the report"), std::string::npos) << r.err;
  // A symlink to nothing would be replaced by the rename: refused, kept.
  fs::create_symlink("nowhere.json", dir + "/dangling.json");
  for (const std::string& args :
       {run + " --timeline " + dir + "/dangling.json",
        "collbench --platform " + dir + "/p.yaml -b 1K -e 1K --json " + dir + "/dangling.json"}) {
    r = testutil::run_fabricsim(args);
    expect_refused(r, dir + "/dangling.json", "is a symlink to a file that does not exist");
    EXPECT_TRUE(fs::is_symlink(dir + "/dangling.json"));
  }
  // A FIFO nobody reads once blocked for ever: refused at once.
  ASSERT_EQ(::mkfifo((dir + "/pipe.json").c_str(), 0600), 0);
  r = testutil::run_fabricsim(run + " --report " + dir + "/pipe.json");
  expect_refused(r, dir + "/pipe.json", "is a FIFO that nothing reads");
  // collbench's table through a symlink lands in its target, the link kept.
  r = testutil::run_fabricsim("collbench --platform " + dir + "/p.yaml -b 1K -e 1K --json " + dir + "/link.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir + "/link.json"));
  EXPECT_NE(testutil::read_text(dir + "/target.json").find("\"rows\""), std::string::npos);
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name == "p.yaml" || name == "target.json" || name == "link.json" || name == "dangling.json" ||
                name == "pipe.json")
        << "left behind: " << name;
  }
}

/// Writes a one-node trace per rank; `fill` is told the rank.
void write_one_node(const std::string& prefix, int ranks, const std::function<void(ChakraProtoMsg::Node&, int)>& fill) {
  for (int r = 0; r < ranks; ++r) {
    traces::EtWriter w(prefix + "." + std::to_string(r) + ".et");
    ChakraProtoMsg::Node n;
    n.set_id(0);
    n.set_name("node");
    fill(n, r);
    w.write(n);
    w.close();
  }
}
void write_one_node(const std::string& prefix, int ranks, const std::function<void(ChakraProtoMsg::Node&)>& fill) {
  write_one_node(prefix, ranks, [&fill](ChakraProtoMsg::Node& n, int) { fill(n); });
}

TEST(BadTimes, ADurationPastTheTimeRangeIsRefusedNotWrapped) {
  // 2^62 bytes at 50 GB/s take 9.2e7 s, past 2^62 ps: it once reported
  // 9.22e15 ns. A 2^63 us compute node once counted as 0.
  const std::string dir = testutil::scratch_dir("bad-times");
  testutil::write_text(dir + "/p.yaml", kRing4);
  write_one_node(dir + "/load", 4, [](ChakraProtoMsg::Node& n) {
    n.set_type(ChakraProtoMsg::MEM_LOAD_NODE);
    traces::add_uint(n, "tensor_size", std::uint64_t{1} << 62);
  });
  auto r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/load");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/load.0.et: node 0 (\"node\", MEM_LOAD_NODE): moving 4.61169e+18 bytes at "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("outside the simulator's time range"), std::string::npos) << r.err;
  write_one_node(dir + "/long", 4, [](ChakraProtoMsg::Node& n) {
    n.set_type(ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(std::uint64_t{1} << 63);
  });
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/long");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/long.0.et: node 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("duration_micros 9223372036854775808 is past the simulator's time range"), std::string::npos)
      << r.err;
  write_one_node(dir + "/nanops", 4, [](ChakraProtoMsg::Node& n) {
    n.set_type(ChakraProtoMsg::COMP_NODE);
    auto* a = n.add_attr();
    a->set_name("num_ops");
    a->set_double_val(std::numeric_limits<double>::quiet_NaN());
  });
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/nanops");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/nanops.0.et: node 0 (\"node\", COMP_NODE): num_ops nan must be a finite number >= 0"),
            std::string::npos)
      << r.err;
}

}  // namespace

namespace {

TEST(BadTraces, NodeIdsAtBothEndsOfTheRangeRunInsteadOfCrashing) {
  // Ids 0 and 2^64-1 once made a zero-sized id map (SIGSEGV).
  const std::string dir = testutil::scratch_dir("bad-ids");
  testutil::write_text(dir + "/p.yaml", kRing4);
  for (int r = 0; r < 4; ++r) {
    traces::EtWriter w(dir + "/ids." + std::to_string(r) + ".et");
    for (std::uint64_t id : {std::uint64_t{0}, ~std::uint64_t{0}}) {
      ChakraProtoMsg::Node n;
      n.set_id(id);
      n.set_name("c" + std::to_string(id));
      n.set_type(ChakraProtoMsg::COMP_NODE);
      n.set_duration_micros(1);
      if (id != 0) n.add_data_deps(0);
      w.write(n);
    }
    w.close();
  }
  const auto r = testutil::run_fabricsim("run --platform " + dir + "/p.yaml --workload " + dir + "/ids");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("npu 0: finish 2000"), std::string::npos) << r.out;  // two 1 us nodes in a row
}

TEST(BadTraces, AStringThatIsNotUtf8IsOneMessageNamingTheFileWithoutProtobufNoise) {
  const std::string dir = testutil::scratch_dir("bad-utf8");
  testutil::write_text(dir + "/p.yaml", kRing4);
  write_one_node(dir + "/latin", 4, [](ChakraProtoMsg::Node& n) {
    n.set_type(ChakraProtoMsg::COMP_NODE);
    n.set_name("caf\xe9");  // Latin-1
    n.set_duration_micros(1);
  });
  const auto r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/latin");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/latin.0.et"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("node record 1: truncated or malformed record (10 bytes expected): String field "
                       "'ChakraProtoMsg.Node.name' contains invalid UTF-8 data\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("[libprotobuf"), std::string::npos) << r.err;  // protobuf's own log line, once printed too
}

/// A trace file of `nodes` only, without the GlobalMetadata record Chakra's
/// writers put first (length-delimited records, as EtWriter writes them).
void write_without_metadata(const std::string& path, const std::vector<ChakraProtoMsg::Node>& nodes) {
  std::string out;
  for (const auto& n : nodes) {
    const std::string bytes = n.SerializeAsString();
    for (std::uint64_t v = bytes.size();; v >>= 7) {
      if (v < 0x80) {
        out.push_back(static_cast<char>(v));
        break;
      }
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    }
    out += bytes;
  }
  testutil::write_text(path, out);
}

TEST(BadTraces, ATraceWithoutItsMetadataRecordKeepsItsFirstNodeAndSaysSo) {
  // Its first node was once taken for the GlobalMetadata and lost without a
  // word: a 2-node trace ran 1 node.
  const std::string dir = testutil::scratch_dir("bad-trace-metadata");
  testutil::write_text(dir + "/p.yaml", kRing4);
  for (int r = 0; r < 4; ++r) {
    std::vector<ChakraProtoMsg::Node> nodes(2);
    for (int k = 0; k < 2; ++k) {
      nodes[k].set_id(static_cast<std::uint64_t>(k + 1));
      nodes[k].set_name("compute");
      nodes[k].set_type(ChakraProtoMsg::COMP_NODE);
      nodes[k].set_duration_micros(10);
    }
    write_without_metadata(dir + "/t." + std::to_string(r) + ".et", nodes);
  }
  const auto r = testutil::run_fabricsim("run --quiet --replay --platform " + dir + "/p.yaml --workload " + dir +
                                         "/t --report " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(dir + "/t.0.et: no GlobalMetadata record (Chakra's writers put one first): the first record "
                             "is node 1, read as a node"),
            std::string::npos)
      << r.err;
  const auto j = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  EXPECT_EQ(j["npus"][0]["nodes"], 2);
  EXPECT_DOUBLE_EQ(j["npus"][0]["finish_ns"].get<double>(), 20000.0);
}

TEST(BadTraces, ANumberWrittenAsTextOrWithAFractionIsRefusedAWholeDoubleTaken) {
  // comm_size as a double or a string was once read as absent: a 1 MiB
  // all-reduce ran as 0 bytes. A whole double is the number it says; text
  // or a fraction is refused, naming the node and the value.
  const std::string dir = testutil::scratch_dir("bad-trace-types");
  testutil::write_text(dir + "/p.yaml", kRing4);
  const auto collective = [&](const std::string& prefix, const std::function<void(ChakraProtoMsg::Node&)>& size) {
    write_one_node(prefix, 4, [&](ChakraProtoMsg::Node& n) {
      n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
      traces::add_int(n, "comm_type", 0);
      size(n);
    });
  };
  collective(dir + "/double", [](ChakraProtoMsg::Node& n) {
    auto* a = n.add_attr();
    a->set_name("comm_size");
    a->set_double_val(1048576.0);
  });
  auto r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/double --report " +
                                   dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(testutil::read_text(dir + "/r.json"))["npus"][0]["collectives"][0]["bytes"], 1048576);
  collective(dir + "/text", [](ChakraProtoMsg::Node& n) {
    auto* a = n.add_attr();
    a->set_name("comm_size");
    a->set_string_val("1M");
  });
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/text");
  expect_refused(r, dir + "/text.0.et: node 0 (\"node\", COMM_COLL_NODE)", "comm_size is text (\"1M\"), not a number");
  collective(dir + "/fraction", [](ChakraProtoMsg::Node& n) {
    auto* a = n.add_attr();
    a->set_name("comm_size");
    a->set_double_val(1.5);
  });
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/fraction");
  expect_refused(r, dir + "/fraction.0.et: node 0 (\"node\", COMM_COLL_NODE)",
                 "comm_size 1.500000 must be a whole number");
  write_one_node(dir + "/ops", 4, [](ChakraProtoMsg::Node& n) {
    n.set_type(ChakraProtoMsg::COMP_NODE);
    auto* a = n.add_attr();
    a->set_name("num_ops");
    a->set_string_val("1e12");
  });
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/ops");
  expect_refused(r, dir + "/ops.0.et: node 0 (\"node\", COMP_NODE)", "num_ops is text (\"1e12\"), not a number");
}

TEST(BadFlags, FlagsOutOfRangeAreRefusedNotWrappedOrRunForever) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("bad-flags");
  testutil::write_text(dir + "/p.yaml", kRing4);
  struct Case {
    std::string args, what;
  };
  const std::vector<Case> cases = {
      {"collbench --platform " + dir + "/p.yaml -e inf", "\"inf\": a size must be finite"},
      {"collbench --platform " + dir + "/p.yaml -f 1", "--factor must be a finite number > 1"},
      {"collbench --platform " + dir + "/p.yaml -f nan", "--factor must be a finite number > 1"},
      {"collbench --platform " + dir + "/p.yaml -f 1.0001", "at most 1000 are run"},
      {"collbench --platform " + dir + "/p.yaml --chunks 1000000", "--chunks: Value 1000000 not in range 1 to 4096"},
      {"run --platform " + dir + "/p.yaml --workload " + all_reduce_4() + " --chunks 0",
       "--chunks: Value 0 not in range"},
      {"gen long --nodes -5 --out " + dir + "/long", "--nodes: Value -5 not in range"},
      {"gen collective --npus 4 --bytes -1 --out " + dir + "/c", "--bytes: \"-1\": a size cannot be negative"},
      {"gen training --dp 1024 --tp 1024 --out " + dir + "/t", "--dp x --tp x --pp is more than 131072 NPUs"},
  };
  for (const auto& c : cases) {
    const auto r = testutil::run_fabricsim(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_NE((r.err + r.out).find(c.what), std::string::npos) << c.args << ": " << r.err << r.out;
  }
  EXPECT_FALSE(fs::exists(dir + "/long.0.et"));
}

TEST(BadCollectives, MembersThatDisagreeStopWithBothRanksNodesAndValues) {
  // Different sizes once gave "internal error"; a different root per rank
  // once ran to exit 0.
  const std::string dir = testutil::scratch_dir("bad-collectives");
  testutil::write_text(dir + "/p.yaml", kRing4);
  write_one_node(dir + "/sizes", 4, [](ChakraProtoMsg::Node& n, int rank) {
    n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    traces::add_int(n, "comm_type", ChakraProtoMsg::ALL_REDUCE);
    traces::add_uint(n, "comm_size", rank == 2 ? 4096 : 1048576);
  });
  auto r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/sizes --data");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/sizes.2.et: node 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("differs between its members in its size: NPU 2 asks for 4096 bytes (all_reduce \"node\", "
                       "node 0), NPU 0 for 1048576 bytes"),
            std::string::npos)
      << r.err;

  write_one_node(dir + "/roots", 4, [](ChakraProtoMsg::Node& n, int rank) {
    n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    traces::add_int(n, "comm_type", ChakraProtoMsg::BROADCAST);
    traces::add_uint(n, "comm_size", 65536);
    traces::add_int(n, "root", rank == 3 ? 1 : 0);
  });
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/roots --data");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/roots.3.et: node 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in its root: NPU 3 asks for group member 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NPU 0 for group member 0"), std::string::npos) << r.err;

  write_one_node(dir + "/types", 4, [](ChakraProtoMsg::Node& n, int rank) {
    n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    traces::add_int(n, "comm_type", rank == 1 ? ChakraProtoMsg::ALL_GATHER : ChakraProtoMsg::ALL_REDUCE);
    traces::add_uint(n, "comm_size", 65536);
  });
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/types");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/types.1.et: node 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in its type: NPU 1 asks for all_gather"), std::string::npos) << r.err;

  // A root past the group once wrapped (2^32 read as 0).
  write_one_node(dir + "/wrap", 4, [](ChakraProtoMsg::Node& n) {
    n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    traces::add_int(n, "comm_type", ChakraProtoMsg::BROADCAST);
    traces::add_uint(n, "comm_size", 65536);
    traces::add_int(n, "root", std::int64_t{1} << 32);
  });
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/wrap");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/wrap.0.et: node 0 (\"node\", COMM_COLL_NODE): root 4294967296 is not a member of the "
                             "4-member group"),
            std::string::npos)
      << r.err;
}

TEST(BadGroups, RanksThatAreNotWholeOrAreGivenTwiceAreRefused) {
  FABRICSIM_NEEDS_SHARED_DATA();
  // A rank of 1.5 in a trace's process-group configuration was read as 1; a
  // rank listed twice made the group's collectives wait on themselves.
  const std::string dir = testutil::scratch_dir("bad-groups");
  testutil::write_text(dir + "/p.yaml", kRing4);
  write_one_node(dir + "/half", 4, [](ChakraProtoMsg::Node& n) {
    n.set_type(ChakraProtoMsg::METADATA_NODE);
    n.set_name("## process_group:init ##");
    n.mutable_inputs()->set_values(R"([[{"pg_name": "7", "ranks": [0, 1.5]}]])");
  });
  auto r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/half");
  expect_refused(r, dir + "/half.0.et: node 0", "process group \"7\": rank 1.5 is not a whole number from 0 to 3");
  testutil::write_text(dir + "/twice.json", "{\"pairs\": [0, 1, 1]}\n");
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + all_reduce_4() +
                              " --comm-groups " + dir + "/twice.json");
  expect_refused(r, dir + "/twice.json", "process group \"pairs\" names rank 1 twice");
}

TEST(BadSends, ASendAndItsReceiveThatDisagreeStopWithBothRanksNodesAndValues) {
  const std::string dir = testutil::scratch_dir("bad-sends");
  testutil::write_text(dir + "/p.yaml", kRing4);
  const auto pair = [](std::uint64_t recv_bytes, std::int64_t recv_tag) {
    return [=](ChakraProtoMsg::Node& n, int rank) {
      if (rank == 0) {
        n.set_type(ChakraProtoMsg::COMM_SEND_NODE);
        traces::add_uint(n, "comm_size", 1048576);
        traces::add_int(n, "comm_dst", 1);
        traces::add_int(n, "comm_tag", 5);
      } else if (rank == 1) {
        n.set_type(ChakraProtoMsg::COMM_RECV_NODE);
        n.set_id(7);
        traces::add_uint(n, "comm_size", recv_bytes);
        traces::add_int(n, "comm_src", 0);
        traces::add_int(n, "comm_tag", recv_tag);
      } else {
        n.set_type(ChakraProtoMsg::COMP_NODE);
        n.set_duration_micros(1);
      }
    };
  };
  write_one_node(dir + "/size", 4, pair(4096, 5));
  auto r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/size");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/size.1.et: node 7 (\"node\", COMM_RECV_NODE): a send and its receive disagree on the "
                             "size: NPU 0 (node 0) sends 1048576 bytes to NPU 1 "
                             "with tag 5, NPU 1 (node 7 \"node\") receives 4096 bytes"),
            std::string::npos)
      << r.err;

  write_one_node(dir + "/tag", 4, pair(1048576, 6));
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/tag");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/tag.1.et: node 7 (\"node\", COMM_RECV_NODE): a send and its receive disagree on the "
                             "tag: NPU 0 (node 0) sent 1048576 bytes to "
                             "NPU 1 with tag 5, NPU 1 (node 7) waits to receive 1048576 bytes with tag 6"),
            std::string::npos)
      << r.err;

  // A peer out of range once read as absent: the message went to the next
  // rank, with a warning that the trace had given none.
  write_one_node(dir + "/negative", 4, [](ChakraProtoMsg::Node& n, int rank) {
    n.set_type(rank == 0 ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(1);
    traces::add_uint(n, "comm_size", 4096);
    traces::add_int(n, "comm_dst", -1);
  });
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/negative");
  expect_refused(r, dir + "/negative.0.et: node 0 (\"node\", COMM_SEND_NODE)",
                 "comm_dst -1 is not an NPU of this platform (0 to 3)");
  write_one_node(dir + "/huge", 4, [](ChakraProtoMsg::Node& n, int rank) {
    n.set_type(rank == 1 ? ChakraProtoMsg::COMM_RECV_NODE : ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(1);
    traces::add_uint(n, "comm_size", 4096);
    traces::add_uint(n, "comm_src", ~std::uint64_t{0});
  });
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/huge");
  expect_refused(r, dir + "/huge.1.et: node 0 (\"node\", COMM_RECV_NODE)",
                 "comm_src 18446744073709551615 is not an NPU of this platform (0 to 3)");

  write_one_node(dir + "/good", 4, pair(1048576, 5));
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/good");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(BadSends, ASendNoOneReceivesRunsWithAWarningNamingItsTraceAndBothEnds) {
  // As ASTRA-sim completes it (Chakra's generator writes such traces): it
  // runs, is counted in the report, and each receiving trace is named.
  const std::string dir = testutil::scratch_dir("bad-sends-unreceived");
  testutil::write_text(dir + "/p.yaml", kRing4);
  write_one_node(dir + "/lone", 4, [](ChakraProtoMsg::Node& n, int rank) {
    n.set_type(rank == 0 ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(1);
    traces::add_uint(n, "comm_size", 4096);
    traces::add_int(n, "comm_dst", 2);
    traces::add_int(n, "comm_tag", 9);
  });
  const auto r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir +
                                         "/lone --report " + dir + "/r.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: " + dir +
                       "/lone.2.et: NPU 0 (node 0) sent 4096 bytes to NPU 2 with tag 9, and no "
                       "node of this trace receives it"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(nlohmann::json::parse(testutil::read_text(dir + "/r.json"))["npus"][2]["unreceived_messages"], 1);
}

TEST(BadNpus, AJobOnFewerNpusThanThePlatformIsItsOwnWorld) {
  // --npus 2 on an 8-NPU ring, as the README runs a 1-rank trace on one GPU
  // of a node: the job's default group is its 2 NPUs. A collective over it
  // once waited for the 6 idle NPUs and the report of the stuck run read
  // past the job's workloads (a segmentation fault).
  const std::string dir = testutil::scratch_dir("bad-npus");
  ASSERT_EQ(testutil::run_fabricsim("gen collective --npus 2 --bytes 1M --out " + dir + "/ar2").exit_code, 0);
  const std::string ring8 = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/ring8.yaml";
  auto r = testutil::run_fabricsim("run --quiet --platform " + ring8 + " --workload " + dir +
                                   "/ar2 --npus 2 --report " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  ASSERT_EQ(j["npus"][0]["collectives"].size(), 1u);
  EXPECT_EQ(j["npus"][0]["collectives"][0]["group"], "world");
  EXPECT_GT(j["npus"][1]["collectives"][0]["end_ns"].get<double>(), 0.0);

  // A receive nobody sends, on 2 of the 8 NPUs: a run that cannot progress
  // (exit 3, saying what NPU 0 waits for), not a crash.
  write_one_node(dir + "/wait", 2, [](ChakraProtoMsg::Node& n, int rank) {
    n.set_type(rank == 0 ? ChakraProtoMsg::COMM_RECV_NODE : ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(1);
    traces::add_uint(n, "comm_size", 4096);
    traces::add_int(n, "comm_src", 1);
  });
  r = testutil::run_fabricsim("run --quiet --platform " + ring8 + " --workload " + dir + "/wait --npus 2");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("NPU 0: 0 of 1 nodes done"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("recv of 4096 bytes from NPU 1"), std::string::npos) << r.err;
}

TEST(BadWork, WorkThatWouldNotFinishIsRefusedWithItsEstimateUnlessForced) {
  // A 1 PiB all-reduce once ran for days; --data at 1 TiB died of bad_alloc.
  const std::string dgx = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/dgx_h100.yaml";
  auto r = testutil::run_fabricsim("collbench --platform " + dgx + " -b 1P -e 1P");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the sweep (all_reduce up to 1125899906842624 bytes over 8 NPUs) is "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("past the limit of 2 hours of wall time (give --force to run it anyway)"), std::string::npos)
      << r.err;
  r = testutil::run_fabricsim("collbench --platform " + dgx + " --data -b 1T -e 1T");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("24576.0 GiB of it data buffers (--data), more than the "), std::string::npos) << r.err;

  const std::string dir = testutil::scratch_dir("bad-work");
  testutil::write_text(dir + "/p.yaml", kRing4);
  write_one_node(dir + "/huge", 4, [](ChakraProtoMsg::Node& n) {
    n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    traces::add_int(n, "comm_type", ChakraProtoMsg::ALL_REDUCE);
    traces::add_uint(n, "comm_size", std::uint64_t{1} << 50);
  });
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/huge");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the workload " + dir +
                       "/huge on 4 NPUs (most of it: all_reduce of 1125899906842624 bytes "
                       "over 4 NPUs (group \"world\", "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("past the limit of 2 hours of wall time"), std::string::npos) << r.err;
}

/// Each of `ranks` trace files holds `count` independent all-reduces of `bytes`.
void write_all_reduces(const std::string& prefix, int ranks, int count, std::uint64_t bytes) {
  for (int r = 0; r < ranks; ++r) {
    traces::EtWriter w(prefix + "." + std::to_string(r) + ".et");
    for (int k = 0; k < count; ++k) {
      ChakraProtoMsg::Node n;
      n.set_id(static_cast<std::uint64_t>(k));
      n.set_name("all_reduce_" + std::to_string(k));
      n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
      traces::add_int(n, "comm_type", ChakraProtoMsg::ALL_REDUCE);
      traces::add_uint(n, "comm_size", bytes);
      w.write(n);
    }
    w.close();
  }
}

TEST(BadWork, TheWholeRunIsEstimatedBeforeItStartsNotOneCollectiveAtATime) {
  // One 256 TiB all-reduce on 4 NPUs is estimated at about half an hour:
  // warned. Five of them pass the 2-hour limit together, though each alone
  // is under it: once each was weighed alone and all five ran. --estimate
  // prints the estimate and stops either way.
  const std::string dir = testutil::scratch_dir("bad-work-sum");
  testutil::write_text(dir + "/p.yaml", kRing4);
  write_all_reduces(dir + "/one", 4, 1, std::uint64_t{1} << 48);
  write_all_reduces(dir + "/five", 4, 5, std::uint64_t{1} << 48);
  const std::string run = "run --platform " + dir + "/p.yaml --estimate --workload " + dir;
  auto r = testutil::run_fabricsim(run + "/one");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("estimate: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("warning: the workload " + dir + "/one on 4 NPUs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("minutes of wall time"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("finish"), std::string::npos) << r.out;  // nothing ran
  r = testutil::run_fabricsim(run + "/five");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the workload " + dir + "/five on 4 NPUs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("5 runs)) is "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("past the limit of 2 hours"), std::string::npos) << r.err;
}

TEST(BadWork, TheEstimateCountsEveryMessageOfTheAlgorithmAndItsChunks) {
  // A ring all-reduce over 8 NPUs in 2 chunks: 8 x 2 x 7 x 2 = 224
  // messages (the old estimate counted bytes / frame: 8 frames). The
  // report holds the same estimate beside what ran.
  const std::string dir = testutil::scratch_dir("bad-work-count");
  write_all_reduces(dir + "/ar", 8, 1, 1 << 20);
  const std::string ring8 = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/ring8.yaml";
  const std::string run = "run --platform " + ring8 + " --workload " + dir +
                          "/ar --algorithm all_reduce=ring --chunks 2 --report " + dir + "/r.json";
  auto r = testutil::run_fabricsim(run + " --estimate");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("estimate: 224 messages (224 frames), 8 operations"), std::string::npos) << r.err;
  r = testutil::run_fabricsim(run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  EXPECT_EQ(report["estimate"]["messages"], 224);
  EXPECT_EQ(report["estimate"]["operations"], 8);
  // A pipeline's sends: 2 stages x 2 microbatches, an activation forward and
  // a gradient back each, 1 MiB in 4 frames of 256 KiB, each frame's cost
  // counted (ring8 has no HBM: WorkBounds::kSecondsPerFrame).
  r = testutil::run_fabricsim("gen pipeline --stages 2 --microbatches 2 --bytes 1M --out " + dir + "/pp");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = testutil::run_fabricsim("run --quiet --platform " + ring8 + " --npus 2 --workload " + dir + "/pp --report " +
                              dir + "/pp.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto pp = nlohmann::json::parse(testutil::read_text(dir + "/pp.json"))["estimate"];
  EXPECT_EQ(pp["messages"], 4);
  EXPECT_EQ(pp["frames"], 16);
  EXPECT_DOUBLE_EQ(pp["frame_seconds"].get<double>(), 16 * WorkBounds::kSecondsPerFrame);
}

TEST(BadWork, AnAllToAllWhoseMessagesInFlightWouldNotFitIsRefusedAtOnce) {
  // A direct all-to-all over 1,024 NPUs posts every pair's message at once
  // (4 chunks: 4.2 million messages, about 4 GiB): it died of bad_alloc
  // after the platform was built and the messages were being made. Now
  // refused before anything runs, naming the limit.
  const std::string dir = testutil::scratch_dir("bad-work-a2a");
  testutil::write_text(dir + "/sw.yaml", "npus: 1024\nfabrics: [{topology: switch}]\n");
  auto r = testutil::run_fabricsim("gen collective --npus 1024 --type all_to_all --bytes 1M --out " + dir + "/a2a");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = testutil::run_fabricsim(
      "run --quiet --platform " + dir + "/sw.yaml --workload " + dir + "/a2a --algorithm all_to_all=direct",
      "env SLURM_MEM_PER_NODE=1024");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("(most of it: all_to_all of"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than the 1.0 GiB of the Slurm allocation (SLURM_MEM_PER_NODE)"), std::string::npos)
      << r.err;
}

TEST(BadWork, DataBuffersAreBoundedByWhatTheProcessMayUseNotTheMachine) {
  // 1.5 GiB of buffers (a 64 MiB all-reduce on 8 NPUs in data mode) fit
  // this machine but not a 1 GiB address-space limit or Slurm allocation:
  // compared with physical memory, the run went ahead and died of
  // bad_alloc. Refused, naming the limit; --force still runs past it.
  const std::string bench = "collbench --quiet --platform " + std::string(FABRICSIM_SOURCE_DIR) +
                            "/platforms/ring8.yaml --data -b 64M -e 64M";
  testutil::CommandResult r;
#if defined(__SANITIZE_ADDRESS__)  // GCC
#define FABRICSIM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)  // clang
#define FABRICSIM_TEST_ASAN 1
#endif
#endif
#ifndef FABRICSIM_TEST_ASAN  // AddressSanitizer reserves terabytes of address space: it cannot start under ulimit -v
  r = testutil::run_fabricsim(bench, "prlimit --as=1073741824 --");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("1.5 GiB of it data buffers (--data), more than the 1.0 GiB of the address-space limit "
                       "(ulimit -v)"),
            std::string::npos)
      << r.err;
#endif
  r = testutil::run_fabricsim(bench, "env SLURM_MEM_PER_NODE=1024");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("more than the 1.0 GiB of the Slurm allocation (SLURM_MEM_PER_NODE)"), std::string::npos)
      << r.err;
  EXPECT_EQ(testutil::run_fabricsim(bench).exit_code, 0);
}

TEST(BadWork, APlatformPastTheProcesssMemoryIsRefusedBeforeItIsBuilt) {
  // 512 NPUs fully connected: 130,816 connections, about 2.4 GiB to build
  // (measured 2.6 GB), against a 2 GiB allocation. 4,096 of them once took
  // the machine's memory before anything said so.
  const std::string dir = testutil::scratch_dir("bad-build-size");
  testutil::write_text(dir + "/fc.yaml", "npus: 512\nfabrics: [{topology: fully_connected}]\n");
  const auto r = testutil::run_fabricsim("collbench --quiet --platform " + dir + "/fc.yaml -b 1K -e 1K",
                                         "env SLURM_MEM_PER_NODE=2048");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/fc.yaml: the platform would take about 2.4 GiB to build (130816 connections between 512 "
                             "fabric nodes, 512 NPUs), more than the 2.0 GiB of the Slurm allocation"),
            std::string::npos)
      << r.err;
}

TEST(BadWork, TheEstimateWarnsPastTenMinutesAndRefusesPastTwoHours) {
  WorkBounds b;
  b.frame_bytes = 1 << 20;
  // A message of 2.5 MiB is three frames; an empty one still one.
  EXPECT_EQ(b.message(5 << 19).frames, 3);
  EXPECT_EQ(b.message(0).frames, 1);
  EXPECT_EQ(WorkBounds::data_bytes(1 << 20, 9), 3.0 * (1 << 20) * 9);
  WorkBounds::Estimate e;
  const double per_second = 1 / WorkBounds::kSecondsPerMessage;
  e.messages = per_second * 599;
  EXPECT_EQ(b.check(e, "x"), "");
  e.messages = per_second * 1200;
  const std::string long_run = b.check(e, "x");
  EXPECT_EQ(long_run.rfind("x is 4e+09 messages (0 frames), 0 operations: about 20 minutes of wall time", 0), 0u)
      << long_run;
  e.messages = per_second * 7199;
  EXPECT_NE(b.check(e, "x"), "");
  e.messages = per_second * 7201;
  EXPECT_THROW(b.check(e, "x"), std::invalid_argument);
  b.force = true;
  EXPECT_NE(b.check(e, "x").find("about 2 hours"), std::string::npos);
  e.messages = 0;
  e.data_bytes = 2e9;
  b.force = false;
  b.memory_bytes = 1000000000;
  EXPECT_THROW(b.check(e, "x"), std::invalid_argument);
  e.data_bytes = 0;
  e.peak_messages = 1e9 / WorkBounds::kBytesPerMessageInFlight;  // messages in flight count too
  EXPECT_THROW(b.check(e, "x"), std::invalid_argument);
  b.memory_bytes = 0;  // unknown: not checked
  EXPECT_EQ(b.check(e, "x"), "");
}

TEST(BadLevels, ALevelAlgorithmThatCannotRunALevelIsRefusedWithItsPlace) {
  // A fabric's `algorithm` is its level of a hierarchical collective: a name
  // that is no level algorithm stops at load with file:line; a tree below the
  // top level stops when the collective is made (it has no reduce-scatter);
  // --levels gets the same checks.
  const std::string dir = testutil::scratch_dir("bad-levels");
  const std::string two_levels =
      "npus: 8\nfabrics:\n"
      "  - {name: node, topology: switch, group_size: 4, algorithm: %A0%}\n"
      "  - {name: net, topology: ring, group_size: 2, group_stride: 4, algorithm: %A1%}\n";
  auto with = [&](const std::string& a0, const std::string& a1) {
    std::string y = two_levels;
    y.replace(y.find("%A0%"), 4, a0);
    y.replace(y.find("%A1%"), 4, a1);
    return y;
  };
  expect_refused(run_platform(dir, with("ring", "hierarchical")), dir + "/p.yaml:4:",
                 "\"algorithm\" \"hierarchical\": this fabric's level of a hierarchical collective runs ring, direct");
  expect_refused(run_platform(dir, with("sideways", "ring")), dir + "/p.yaml:3:", "\"algorithm\" \"sideways\"");
  testutil::write_text(dir + "/low.yaml", with("double_binary_tree", "ring"));
  auto r = testutil::run_fabricsim("collbench --quiet --platform " + dir + "/low.yaml -b 1M -e 1M");
  expect_refused(r, "hierarchical", "double_binary_tree runs only in the last dimension");
  testutil::write_text(dir + "/ok.yaml", with("ring", "ring"));
  r = testutil::run_fabricsim("collbench --quiet --platform " + dir + "/ok.yaml -b 1M -e 1M --levels ring");
  expect_refused(r, "--levels ring", "names 1 algorithm(s), but the platform has 2 level(s)");
  r = testutil::run_fabricsim("collbench --quiet --platform " + dir +
                              "/ok.yaml -b 1M -e 1M --levels double_binary_tree,ring");
  expect_refused(r, "--levels double_binary_tree,ring", "\"double_binary_tree\" for level 0");
  r = testutil::run_fabricsim("collbench --quiet --platform " + dir +
                              "/ok.yaml -b 1M -e 1M --data --levels ring,double_binary_tree");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Levels ask for a hierarchical collective: with no --algo they get one,
  // with another algorithm they are refused, not silently unused.
  r = testutil::run_fabricsim("collbench --quiet --platform " + dir +
                              "/ok.yaml -b 1M -e 1M --algo ring --levels ring,ring");
  expect_refused(r, "--levels ring,ring", "names the levels of a hierarchical collective, but --algo is ring");
  const std::string json = dir + "/levels.json";
  r = testutil::run_fabricsim("collbench --quiet --platform " + dir +
                              "/ok.yaml -b 64M -e 64M --levels ring,ring --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // (This group's default at 64 MiB is halving-doubling.)
  EXPECT_EQ(nlohmann::json::parse(testutil::read_text(json))["rows"][0]["algorithm"], "hierarchical");
}

}  // namespace

namespace {

TEST(BadAstraSystem, ACustomCollectiveWhoseTraceIsMissingIsNamed) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("astra-custom");
  testutil::write_text(dir + "/sys.json", R"({"all-reduce-implementation-custom": ["nowhere/custom_allreduce"]})");
  const std::string net = testutil::astra_network(dir, "Ring", 4, 50, 500);
  const auto r =
      testutil::run_fabricsim("run --platform " + net + " --system " + dir + "/sys.json --workload " +
                              testutil::shared_trace("astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("sys.json: \"all-reduce-implementation-custom\": names the trace nowhere/custom_allreduce, but "
                       "nowhere/custom_allreduce.0.et is not there"),
            std::string::npos)
      << r.err;
  testutil::write_text(dir + "/two.json", R"({"all-reduce-implementation-custom": ["a", "b"]})");
  const auto t =
      testutil::run_fabricsim("run --platform " + net + " --system " + dir + "/two.json --workload " +
                              testutil::shared_trace("astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce"));
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("must list one Chakra trace prefix (one dimension), not [\"a\",\"b\"]"), std::string::npos)
      << t.err;
}

}  // namespace

namespace {

/// collbench on a 4-NPU ring with `sets` (each a --set argument, quoted here).
testutil::CommandResult collbench_with(const std::string& dir, const std::vector<std::string>& sets) {
  testutil::write_text(dir + "/p.yaml", "npus: 4\nfabrics:\n  - topology: ring\n    link: { bandwidth: 50 GB/s }\n");
  std::string args = "collbench --quiet --platform " + dir + "/p.yaml -b 1M -e 1M";
  for (const auto& s : sets) args += " --set '" + s + "'";
  return testutil::run_fabricsim(args);
}

}  // namespace

TEST(BadSets, AnUnknownPathAMalformedValueOrOneOutOfRangeStopsNamingTheFlag) {
  const std::string dir = testutil::scratch_dir("bad-sets");
  struct Case {
    std::string set, what;
  };
  const std::vector<Case> cases = {
      {"fabrics.0.link.bandwith=100 GB/s", "unknown key \"bandwith\" in fabric link (known: bandwidth,"},
      {"fabric.0.link.bandwidth=100 GB/s", "unknown key \"fabric\" in the platform (known: name, npus,"},
      {"fabrics.0.link.bandwidth=fast", "\"bandwidth\" is \"fast\": it must be a number and a unit"},
      {"fabrics.0.link.bandwidth=-5 GB/s", "\"bandwidth\" is -5 GB/s: it must be from 1 kB/s to 1000000 GB/s"},
      {"npus=4.5", "\"npus\" must be a whole number from 1 to 131072, not \"4.5\""},
      {"fabrics.2.link.bandwidth=1 GB/s", "\"fabrics\" is a list of 1 entries: \"2\" must be an index from 0 to 0"},
      {"fabrics.0.topology.x=1", "\"fabrics.0.topology\" is a value (ring), not a mapping or list with \"x\" in it"},
      {"npus=[1, 2", "the value is not valid YAML"},
      {"npus", "expected PATH=VALUE"},
      {"npus=", "no value after '='"},
      {"fabrics..link=1", "a path is keys separated by single dots"},
  };
  for (const auto& c : cases) {
    const auto r = collbench_with(dir, {c.set});
    EXPECT_EQ(r.exit_code, 2) << c.set << ": " << r.err;
    EXPECT_NE(r.err.find("--set " + c.set), std::string::npos) << "the flag is not named: " << r.err;
    EXPECT_NE(r.err.find(c.what), std::string::npos) << "expected \"" << c.what << "\" in: " << r.err;
  }
}

TEST(Sets, ASetValueGivesTheResultOfTheSameValueInTheFile) {
  // kRing4's links are 50 GB/s; --set 25 GB/s must give what a file with
  // 25 GB/s gives, and a later --set of the same path wins.
  const std::string dir = testutil::scratch_dir("sets");
  testutil::write_text(dir + "/p.yaml", kRing4);
  testutil::write_text(dir + "/q.yaml",
                       "npus: 4\nfabrics:\n  - topology: ring\n    link: { bandwidth: 25 GB/s, latency_ns: 500 }\n");
  const auto run = [&](const std::string& file, const std::string& sets) {
    const auto r = testutil::run_fabricsim("collbench --quiet --platform " + dir + "/" + file +
                                           " -b 16M -e 16M --algo ring --json " + dir + "/out.json " + sets);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(testutil::read_text(dir + "/out.json"));
  };
  const auto set = run("p.yaml", "--set 'fabrics.0.link.bandwidth_GBps=99' --set 'fabrics.0.link.bandwidth_GBps=25'");
  const auto file = run("q.yaml", "");
  const auto plain = run("p.yaml", "");
  EXPECT_EQ(set["rows"][0]["time_us"], file["rows"][0]["time_us"]);
  EXPECT_NE(set["rows"][0]["time_us"], plain["rows"][0]["time_us"]);
  EXPECT_NE(set["fabricsim"]["command"].get<std::string>().find("--set fabrics.0.link.bandwidth_GBps=25"),
            std::string::npos);
  EXPECT_EQ(set["parameters"]["fabrics"][0]["links"][0]["bandwidth"], "25 GB/s");
}

TEST(BadSets, SystemFileKeysSetOnTheCommandLineAreCheckedAsTheFilesAndUnknownOnesRefused) {
  const std::string dir = testutil::scratch_dir("bad-system-sets");
  testutil::write_text(dir + "/p.yaml", kRing4);
  testutil::write_text(dir + "/sys.json", "{\"scheduling-policy\": \"LIFO\", \"preferred-dataset-splits\": 4}\n");
  const auto collbench = [&](const std::string& extra) {
    return testutil::run_fabricsim("collbench --quiet --platform " + dir + "/p.yaml -b 1M -e 1M --json " + dir +
                                   "/out.json " + extra);
  };
  struct Case {
    std::string args, what;
  };
  const std::vector<Case> cases = {
      {"--system " + dir + "/sys.json --set system.preferred-dataset-splits=0.5",
       "--set system.preferred-dataset-splits=0.5: must be a whole number, not 0.5"},
      {"--system " + dir + "/sys.json --set system.nonsense=1",
       "--set system.nonsense=1: \"nonsense\" is not an ASTRA-sim system key fabricsim knows (known: "
       "scheduling-policy,"},
      {"--system " + dir + "/sys.json --set system.a.b=1",
       "--set system.a.b=1: the system file's keys are at its top level"},
      {"--set system.preferred-dataset-splits=2", "sets a key of the ASTRA-sim system file, and no --system is given"},
  };
  for (const auto& c : cases) {
    const auto r = collbench(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.what), std::string::npos) << "expected \"" << c.what << "\" in: " << r.err;
  }
  // A value set there takes the file's place: a 2 us endpoint delay as the file would give it.
  testutil::write_text(
      dir + "/sys2us.json",
      "{\"scheduling-policy\": \"LIFO\", \"preferred-dataset-splits\": 4, \"endpoint-delay\": 2000}\n");
  ASSERT_EQ(collbench("--system " + dir + "/sys2us.json --algo ring").exit_code, 0);
  const auto file = nlohmann::json::parse(testutil::read_text(dir + "/out.json"));
  ASSERT_EQ(collbench("--system " + dir + "/sys.json --algo ring --set system.endpoint-delay=2000").exit_code, 0);
  const auto set = nlohmann::json::parse(testutil::read_text(dir + "/out.json"));
  ASSERT_EQ(collbench("--system " + dir + "/sys.json --algo ring").exit_code, 0);
  const auto plain = nlohmann::json::parse(testutil::read_text(dir + "/out.json"));
  EXPECT_EQ(set["rows"][0]["time_us"], file["rows"][0]["time_us"]);
  EXPECT_NE(set["rows"][0]["time_us"], plain["rows"][0]["time_us"]);
}

TEST(BadSweeps, EveryWrongSpecIsRefusedNamingTheFileLineAndWhatIsAccepted) {
  const std::string dir = testutil::scratch_dir("bad-sweeps");
  testutil::write_text(dir + "/p.yaml", kRing4);
  struct Case {
    std::string spec, where, what;
  };
  const std::string p = "args: { platform: p.yaml }\n";
  const std::vector<Case> cases = {
      {p + "nope: 1\n", ":2:", "unknown key \"nope\" in the sweep spec"},
      {p + "grid: { color: [red] }\n", ":2:", "unknown axis \"color\" in \"grid\" (known: set.PATH, platform,"},
      {p + "grid: { workload: [x] }\n", ":2:", "\"workload\" does not apply to collbench"},
      {p + "zip:\n  - { chunks: [1, 2], algorithm: [ring] }\n",
       ":3:", "must have equal lengths: \"chunks\" has 2, \"algorithm\" has 1"},
      {p + "grid: { platform: [p.yaml] }\n", ":2:", "\"platform\" is given twice"},
      {"grid: { chunks: [1] }\n", ":1:", "names no platform"},
      {"args: { platform: missing.yaml }\n", ":1:", "\"missing.yaml\" (platform): "},
      {p + "metrics: [rows..time_us]\n", ":2:", "a metric is a path into the command's JSON"},
      {"command: run\nargs: { platform: p.yaml, workload: w, generate: x }\n",
       ":1:", "either a workload or generate, not both"},
      {"command: sim\n", ":1:", "\"command\" is \"sim\": it must be collbench or run"},
      {p + "grid: { chunks: 4 }\n", ":2:", "\"chunks\" in \"grid\" must be a non-empty list"},
      {p + "grid: { set: { \"fabrics..link\": [1] } }\n", ":2:", "not a value path"},
  };
  for (const auto& c : cases) {
    testutil::write_text(dir + "/s.yaml", c.spec);
    const auto r = testutil::run_fabricsim("sweep " + dir + "/s.yaml --out " + dir + "/out --dry-run");
    EXPECT_EQ(r.exit_code, 2) << c.spec << r.err;
    EXPECT_NE(r.err.find(dir + "/s.yaml" + c.where), std::string::npos) << c.spec << " -> " << r.err;
    EXPECT_NE(r.err.find(c.what), std::string::npos) << c.spec << " -> expected \"" << c.what << "\" in " << r.err;
  }
  // A folder that holds another sweep is refused; so is --out missing.
  testutil::write_text(dir + "/a.yaml", p + "grid: { bytes: [1K] }\n");
  testutil::write_text(dir + "/b.yaml", p + "grid: { bytes: [2K] }\n");
  ASSERT_EQ(testutil::run_fabricsim("sweep " + dir + "/a.yaml --out " + dir + "/ab -q").exit_code, 0);
  const auto other = testutil::run_fabricsim("sweep " + dir + "/b.yaml --out " + dir + "/ab -q");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find(dir + "/ab holds another sweep"), std::string::npos) << other.err;
  EXPECT_EQ(testutil::run_fabricsim("sweep " + dir + "/a.yaml").exit_code, 2);
}

TEST(BadSweeps, APointFileOfTheWrongShapeIsNamedNotAnInternalError) {
  // A point file is JSON that fabricsim wrote; one edited, truncated or
  // replaced with valid JSON of another shape once stopped a rerun with
  // "internal error: [json.exception.type_error...]".
  const std::string dir = testutil::scratch_dir("bad-sweep-points");
  testutil::write_text(dir + "/p.yaml", kRing4);
  testutil::write_text(dir + "/s.yaml", "args: { platform: p.yaml }\ngrid: { bytes: [1K] }\n");
  ASSERT_EQ(testutil::run_fabricsim("sweep " + dir + "/s.yaml --out " + dir + "/out -q").exit_code, 0);
  std::string point;
  for (const auto& e : fs::directory_iterator(dir + "/out/points")) point = e.path().string();
  ASSERT_FALSE(point.empty());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{}", "its \"status\" is missing"},
      {"{\"status\": 3}", "its \"status\" is 3"},
      {"[1, 2]", "is [1,2], not an object"},
      {"{\"status\": \"ok\", \"exit_code\": \"0\", \"message\": \"\", \"metrics\": {}}", "its \"exit_code\" is \"0\""},
  };
  for (const auto& [text, what] : cases) {
    testutil::write_text(point, text);
    for (const std::string flags : {"", " --retry-failed"}) {
      const auto r = testutil::run_fabricsim("sweep " + dir + "/s.yaml --out " + dir + "/out -q" + flags);
      EXPECT_EQ(r.exit_code, 2) << text << flags << ": " << r.err;
      EXPECT_NE(r.err.find(point + ": " + what), std::string::npos) << text << flags << ": " << r.err;
      EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
    }
  }
}

TEST(BadPaths, AWaveformPathThatCannotTakeOneIsRefusedUpFront) {
  const std::string dir = testutil::scratch_dir("bad-vcd");
  const std::string dgx = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/dgx_h100.yaml";
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  fs::create_directory(dir + "/folder");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {dir + "/fifo", dir + "/fifo: is a FIFO, device or socket; the waveform (--vcd) is written in place"},
      {dir + "/folder", dir + "/folder: is a directory; give a file for the waveform (--vcd)"},
      {dir + "/missing/w.vcd", dir + "/missing/w.vcd: its folder " + dir + "/missing does not exist"},
  };
  for (const auto& [path, what] : cases) {
    const auto r = testutil::run_fabricsim("collbench --quiet --platform " + dgx +
                                           " --reduction-model rtl --algo in_switch -b 1K -e 1K --vcd " + path);
    EXPECT_EQ(r.exit_code, 2) << path << ": " << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  }
  // Without an RTL unit there is no waveform: --vcd is not silently ignored.
  const auto r =
      testutil::run_fabricsim("collbench --quiet --platform " + dgx + " -b 1K -e 1K --vcd " + dir + "/w.vcd");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--vcd " + dir + "/w.vcd: no reduction unit runs the RTL"), std::string::npos) << r.err;
}

TEST(BadJson, ValuesNestedDeeperThanAnySettingsFileAreRefusedNotEchoed) {
  // 300,000 levels once overflowed the stack echoing the value into the
  // message; an over-long value is quoted cut short.
  const std::string dir = testutil::scratch_dir("bad-json-deep");
  const int depth = 300000;
  testutil::write_text(dir + "/g.json", "{\"a\":" + std::string(depth, '[') + std::string(depth, ']') + "}");
  const std::string ring8 = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/ring8.yaml";
  const std::string sample = std::string(FABRICSIM_SOURCE_DIR) + "/traces/samples/allreduce_8npus_64MiB/allreduce";
  auto r = testutil::run_fabricsim("run --quiet --platform " + ring8 + " --workload " + sample + " --comm-groups " +
                                   dir + "/g.json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/g.json: values nest deeper than 64 levels"), std::string::npos) << r.err;
  EXPECT_LT(r.err.size(), 1000u);
  testutil::write_text(dir + "/s.json", "{\"scheduling-policy\": [\"" + std::string(20000, 'x') + "\"]}");
  r = testutil::run_fabricsim("run --quiet --platform " + ring8 + " --workload " + sample + " --system " + dir +
                              "/s.json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("must be \"LIFO\", \"FIFO\" or \"EXPLICIT\", not [\"xxxxx"), std::string::npos) << r.err;
  EXPECT_LT(r.err.size(), 1000u) << "the value is echoed whole";
  // A number past a double's range is quoted cut short too.
  testutil::write_text(dir + "/n.json", "{\"scheduling-policy\": " + std::string(20000, '7') + "}");
  r = testutil::run_fabricsim("run --quiet --platform " + ring8 + " --workload " + sample + " --system " + dir +
                              "/n.json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("a number too large for a double (7777"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at line 1, column 23"), std::string::npos) << r.err;
  EXPECT_LT(r.err.size(), 1000u) << "the number is echoed whole";
}

TEST(Sweeps, TheFirstGridAxisVariesSlowestAndZippedListsGoTogether) {
  const std::string dir = testutil::scratch_dir("sweep-order");
  testutil::write_text(dir + "/p.yaml", kRing4);
  testutil::write_text(dir + "/s.yaml",
                       "args: { platform: p.yaml }\ngrid: { chunks: [1, 2] }\nzip:\n"
                       "  - { bytes: [1K, 2K], set: { fabrics.0.link.latency_ns: [100, 200] } }\n");
  const auto r = testutil::run_fabricsim("sweep " + dir + "/s.yaml --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> points;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || !std::isdigit(static_cast<unsigned char>(line[0])) ||
        line.find(" points of ") != std::string::npos)
      continue;
    points.push_back(line.substr(line.find(' ', line.find(' ') + 1) + 1));  // after index and id
  }
  EXPECT_EQ(points, (std::vector<std::string>{
                        "chunks=1 bytes=1K set.fabrics.0.link.latency_ns=100",
                        "chunks=1 bytes=2K set.fabrics.0.link.latency_ns=200",
                        "chunks=2 bytes=1K set.fabrics.0.link.latency_ns=100",
                        "chunks=2 bytes=2K set.fabrics.0.link.latency_ns=200",
                    }));
  // The ids are a hash of the resolved inputs: the same spec gives the same ids.
  EXPECT_EQ(testutil::run_fabricsim("sweep " + dir + "/s.yaml --dry-run").out, r.out);
}

TEST(BadFlags, ACollbenchGroupBeyondThePlatformIsRefusedNamingTheFlag) {
  // --stride S takes NPUs 0, S, 2S, ...; on 4 NPUs a stride of 4 reaches one
  // and --npus 3 at stride 2 asks for more than the two it reaches.
  const std::string dir = testutil::scratch_dir("bad-stride");
  testutil::write_text(dir + "/p.yaml", kRing4);
  auto r = testutil::run_fabricsim("collbench --quiet --platform " + dir + "/p.yaml -b 1K -e 1K --stride 4");
  expect_refused(r, "--stride 4", "must be at least 1 and below the platform's 4 NPUs");
  r = testutil::run_fabricsim("collbench --quiet --platform " + dir + "/p.yaml -b 1K -e 1K --stride 2 --npus 3");
  expect_refused(r, "--npus 3", "the platform has 4 NPUs, 2 of them 2 apart");
  r = testutil::run_fabricsim("collbench --quiet --platform " + dir +
                              "/p.yaml -b 1K -e 1K --stride 2 --op broadcast --root 2");
  expect_refused(r, "--root 2", "the root is a member of the group, 0 to 1 (member k is NPU 2 x k)");
  r = testutil::run_fabricsim("collbench --quiet --platform " + dir + "/p.yaml -b 1K -e 1K --stride 2 --data");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The default stride of 1 on a platform of one NPU is no group beyond it.
  testutil::write_text(dir + "/one.yaml", "npus: 1\nfabrics:\n  - topology: ring\n");
  r = testutil::run_fabricsim("collbench --quiet --platform " + dir + "/one.yaml -b 1K -e 1K");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(BadPaths, EmptyPathsAndTwoOutputsOnOneFileAreRefusedBeforeAnythingRuns) {
  const std::string dir = testutil::scratch_dir("bad-empty-paths");
  const std::string ring8 = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/ring8.yaml";
  const std::string sample = std::string(FABRICSIM_SOURCE_DIR) + "/traces/samples/allreduce_8npus_64MiB/allreduce";
  // An empty --out once wrote ".0.et" and its siblings into the working folder.
  auto r = testutil::run_fabricsim("gen collective --npus 2 --type all_reduce --bytes 1K --out ''");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--out: an empty path"), std::string::npos) << r.err;
  // An empty --report once ran the job and wrote no report, silently.
  r = testutil::run_fabricsim("run --quiet --platform " + ring8 + " --workload " + sample + " --report ''");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--report: an empty path"), std::string::npos) << r.err;
  // The report and the timeline on one file (two spellings of it).
  r = testutil::run_fabricsim("run --quiet --platform " + ring8 + " --workload " + sample + " --report " + dir +
                              "/o.json --timeline " + dir + "/../bad-empty-paths/o.json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--report and --timeline both name"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/o.json"));
  // The same file not yet there, relative and with "./": once both were
  // written and the report replaced the timeline.
  r = testutil::run_fabricsim(
      "run --quiet --platform " + ring8 + " --workload " + sample + " --report x.json --timeline ./x.json",
      "cd " + dir + " &&");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--report and --timeline both name"), std::string::npos) << r.err;
  // A compute time that is not a number.
  r = testutil::run_fabricsim("gen pipeline --stages 2 --microbatches 2 --compute-us nan --out " + dir + "/pp");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--compute-us: Value nan not a number of microseconds"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/pp.0.et"));
}

namespace {

/// Starts `fabricsim ARGS` with SIGINT, SIGTERM and SIGHUP at their defaults
/// (a shell may hand a background job SIGINT ignored), output discarded.
pid_t start_fabricsim(const std::string& args) {
  const std::string command = "exec " + testutil::fabricsim_binary() + " " + args + " >/dev/null 2>&1";
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

std::vector<std::string> hidden_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!name.empty() && name[0] == '.') out.push_back(name);
  }
  return out;
}

}  // namespace

TEST(Signals, AnInterruptedRunOrGenLeavesNoTemporaryAndEndsByItsSignal) {
  // A run streams its timeline into a temporary beside the target from its
  // start; gen writes each rank's trace so. Stopped by a signal, both left
  // them behind (a timeline can be gigabytes). Each is stopped once its
  // temporary exists, and must end by that signal with none left.
  struct Case {
    std::string args;
    int sig;
  };
  const std::string dir = testutil::scratch_dir("signals");
  const std::string platforms = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/";
  const std::vector<Case> cases = {
      {"run --quiet --platform " + platforms +
           "dgx_h100.yaml --model llama3-8b --set training.tp=4 --set training.pp=2 "
           "--set training.seq=2048 --set training.global_batch=8 --timeline " +
           dir + "/t.json --report " + dir + "/r.json",
       SIGTERM},
      {"run --quiet --platform " + platforms +
           "dgx_h100.yaml --model llama3-8b --set training.tp=4 --set training.pp=2 "
           "--set training.seq=2048 --set training.global_batch=8 --timeline " +
           dir + "/t.json",
       SIGINT},
      {"gen model --model megatron-3.6b --npus 64 --out " + dir + "/g", SIGHUP},
  };
  for (const Case& c : cases) {
    const pid_t pid = start_fabricsim(c.args);
    ASSERT_GT(pid, 0);
    bool seen = false;
    for (int i = 0; i < 6000 && !seen; ++i) {  // up to a minute
      seen = !hidden_files(dir).empty();
      if (!seen) ::usleep(10000);
    }
    EXPECT_TRUE(seen) << "no temporary appeared: " << c.args;
    ::kill(pid, c.sig);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == c.sig) << c.args << ": status " << status;
    EXPECT_EQ(hidden_files(dir), std::vector<std::string>{}) << c.args;
  }
}

TEST(BadMemory, ALoadLargerThanThePoolIsRefusedPastFourGiBToo) {
  // A TLM payload's length is 32 bits: a 5 GiB load reached the pool as
  // 1 GiB, passed its range check and was timed as 1 GiB (exit 0). Now
  // refused when larger than the pool, and moved whole when it fits.
  const std::string dir = testutil::scratch_dir("bad-big-load");
  const std::string pool8 = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/pool8.yaml";
  write_one_node(dir + "/load", 8, [](ChakraProtoMsg::Node& n) {
    n.set_type(ChakraProtoMsg::MEM_LOAD_NODE);
    traces::add_uint(n, "tensor_size", std::uint64_t{5} << 30);
  });
  auto r = testutil::run_fabricsim("run --quiet --platform " + pool8 + " --workload " + dir +
                                   "/load --set 'fabrics.1.memories.0.size=2 GiB'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("npu0: a load of 5368709120 bytes is larger than the 2147483648-byte memory \"pool\""),
            std::string::npos)
      << r.err;
  r = testutil::run_fabricsim("run --quiet --platform " + pool8 + " --workload " + dir + "/load --report " + dir +
                              "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  std::uint64_t read = 0;  // at the pool (the NPUs' HBM also reads the requests' frames)
  for (const auto& m : report["memories"]) {
    if (m["name"].get<std::string>().find("pool") != std::string::npos) read += m["bytes_read"].get<std::uint64_t>();
  }
  EXPECT_EQ(read, 8 * (std::uint64_t{5} << 30));
}

TEST(BadPlatforms, ASwitchReductionThatReducesNothingIsRefusedWhereItIsWritten) {
  // `ops: {}` once loaded, and every in-switch collective then failed naming
  // only the unit ("it supports nothing"), no file or line.
  const std::string dir = testutil::scratch_dir("bad-empty-ops");
  const auto r = run_platform(dir,
                              "npus: 4\nfabrics:\n  - topology: switch\n    switch:\n      reduction:\n"
                              "        ops: {}\n");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/p.yaml:6:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"ops\" lists no reduction"), std::string::npos) << r.err;
}

TEST(BadSweeps, ASpecThatIsAFolderAndAManifestOfTheWrongShapeAreNamed) {
  const std::string dir = testutil::scratch_dir("bad-sweep-manifest");
  fs::create_directory(dir + "/specdir");
  auto r = testutil::run_fabricsim("sweep " + dir + "/specdir --out " + dir + "/o1");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("sweep spec"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("platform file"), std::string::npos) << r.err;
  // A manifest edited into another shape once ended "internal error:
  // [json.exception.type_error...]" in a rerun, `sweep point` and `collect`.
  testutil::write_text(dir + "/p.yaml", kRing4);
  testutil::write_text(dir + "/s.yaml", "args: { platform: p.yaml }\ngrid: { bytes: [1K] }\n");
  ASSERT_EQ(testutil::run_fabricsim("sweep " + dir + "/s.yaml --out " + dir + "/out -q").exit_code, 0);
  const std::string shapes[] = {"5", "[]", "{}",
                                "{\"spec_sha256\": \"x\", \"command\": \"run\", \"fabricsim\": {}, \"axes\": [], "
                                "\"metrics\": [], \"points\": [3]}"};
  for (const std::string& text : shapes) {
    testutil::write_text(dir + "/out/manifest.json", text);
    const std::string commands[] = {"sweep " + dir + "/s.yaml --out " + dir + "/out -q",
                                    "sweep point " + dir + "/out 0", "sweep collect " + dir + "/out"};
    for (const std::string& cmd : commands) {
      r = testutil::run_fabricsim(cmd);
      EXPECT_EQ(r.exit_code, 2) << text << ": " << cmd << ": " << r.err;
      EXPECT_NE(r.err.find(dir + "/out/manifest.json: not a sweep manifest as fabricsim sweep writes it"),
                std::string::npos)
          << text << ": " << cmd << ": " << r.err;
    }
  }
}

TEST(BadWork, GeneratorsCountTheirOutputBeforeWritingAFile) {
  // gen collective once wrote gigabytes for --npus 131072 --iterations
  // 1000000 with no bound. Every generator's output is counted first:
  // past --limit it is refused before a file is written; --force writes it.
  const std::string dir = testutil::scratch_dir("bad-gen-size");
  const std::string gen = "gen collective --npus 4 --bytes 1M --iterations 1000 --out " + dir + "/c";
  auto r = testutil::run_fabricsim(gen + " --limit 64K");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("gen collective --out " + dir +
                       "/c: the traces would take more than 0.1 MiB (give --force or "
                       "a larger --limit"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/c.0.et"));
  EXPECT_EQ(hidden_files(dir), std::vector<std::string>{});
  r = testutil::run_fabricsim(gen + " --limit 64K --force");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/c.3.et"));
  r = testutil::run_fabricsim("gen pipeline --stages 2 --microbatches 100000 --out " + dir + "/p --limit 1M");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/p.0.et"));
}

TEST(BadPlatforms, AFabricTooLargeForAnyMachineIsRefusedBeforeItsListIsMade) {
  // A 3-level fat tree with leaf_up = agg_up = 65,536 overflowed an int
  // counting its core switches and crashed; a 131,072-NPU fully connected
  // fabric died of bad_alloc making its connections. Both are counted first.
  const std::string dir = testutil::scratch_dir("bad-huge-fabric");
  auto r = run_platform(dir,
                        "npus: 131072\nfabrics:\n  - topology: fat_tree\n    levels: 3\n    leaf_down: 1\n"
                        "    leaf_up: 65536\n    pod_leaves: 1\n    agg_up: 65536\n");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir + "/p.yaml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a 3-level fat tree of 131072 NPUs has 5.63e+14 connections, more than the 16777216"),
            std::string::npos)
      << r.err;
  r = run_platform(dir, "npus: 131072\nfabrics: [{topology: fully_connected}]\n");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("a fully connected fabric of 131072 NPUs has 8.59e+09 connections"), std::string::npos) << r.err;
}

TEST(BadPlatforms, TransportKeysOfAnotherTransportAreSaidToDoNothing) {
  // tcp_rto on a credit fabric, dcqcn_g on RoCE without DCQCN and
  // flow_quantum under packets were taken silently, with no effect.
  const std::string dir = testutil::scratch_dir("bad-unused-keys");
  const auto r = run_platform(dir,
                              "npus: 4\nfabrics:\n  - topology: switch\n    transport:\n      tcp_rto: 1 ms\n"
                              "      flow_quantum: 1 us\n      ecn_kmin: 10 KiB\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: " + dir +
                       "/p.yaml:5:7: transport.tcp_rto has no effect: it sets transport tcp's "
                       "window"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(dir + "/p.yaml:6:7: transport.flow_quantum has no effect: it applies to model: flow only"),
            std::string::npos)
      << r.err;
  // ECN marking reads its keys under DCQCN or DCTCP only.
  EXPECT_NE(r.err.find(dir + "/p.yaml:7:7: transport.ecn_kmin has no effect: switches mark ECN only under "
                             "congestion_control dcqcn or dctcp"),
            std::string::npos)
      << r.err;
  const auto dctcp = run_platform(dir,
                                  "npus: 4\nfabrics:\n  - topology: switch\n    transport:\n      kind: tcp\n"
                                  "      congestion_control: dctcp\n      ecn_kmin: 10 KiB\n");
  EXPECT_EQ(dctcp.exit_code, 0) << dctcp.err;
  EXPECT_EQ(dctcp.err.find("has no effect"), std::string::npos) << dctcp.err;
  // A ring has no switches and no links above leaves.
  const auto ring = run_platform(dir,
                                 "npus: 4\nfabrics:\n  - topology: ring\n    switch: { latency: 5 us }\n"
                                 "    uplink: { bandwidth: 1 GB/s }\n");
  EXPECT_EQ(ring.exit_code, 0) << ring.err;
  EXPECT_NE(ring.err.find(dir + "/p.yaml:4:13: switch has no effect: a ring fabric has no switches"), std::string::npos)
      << ring.err;
  EXPECT_NE(ring.err.find("uplink has no effect: only a fat_tree has links above its leaves"), std::string::npos)
      << ring.err;
}

TEST(BadPlatforms, ALongValueIsQuotedShortNotEchoedWhole) {
  // A 60,000-character value once came back whole in the message (60 KB;
  // twice through --set, 120 KB).
  const std::string dir = testutil::scratch_dir("bad-long-value");
  const std::string value(60000, '9');
  auto r = run_platform(dir, "npus: 4\nfabrics:\n  - topology: ring\n    link: { bandwidth: \"" + value + "\" }\n");
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 300);
  EXPECT_LT(r.err.size(), 1000u) << r.err.substr(0, 300);
  EXPECT_NE(r.err.find("(60000 characters)"), std::string::npos) << r.err.substr(0, 300);
  testutil::write_text(dir + "/ok.yaml", kRing4);
  r = testutil::run_fabricsim("run --quiet --platform " + dir + "/ok.yaml --workload " + all_reduce_4() +
                              " --set fabrics.0.link.bandwidth=" + value);
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 300);
  EXPECT_LT(r.err.size(), 1000u) << r.err.substr(0, 300);
}
