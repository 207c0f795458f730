// Memory in the system: compute and NIC DMA contending for an NPU's HBM,
// remote memory on the fabric, ASTRA-sim remote-memory files, and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "support/fabric_harness.h"
#include "support/test_util.h"
#include "traces/generator/et_writer.h"

using namespace fabricsim;

namespace {

constexpr std::uint64_t MiB = 1u << 20;

/// Writes a trace of independent nodes per rank.
void write_nodes(const std::string& prefix, int ranks, const std::function<void(int, traces::EtWriter&)>& fill) {
  for (int r = 0; r < ranks; ++r) {
    traces::EtWriter w(prefix + "." + std::to_string(r) + ".et");
    fill(r, w);
    w.close();
  }
}

nlohmann::json run(const std::string& args, int expect = 0, std::string* err = nullptr) {
  const std::string dir = testutil::scratch_dir("memrun");
  const auto r = testutil::run_fabricsim("run --quiet --report " + dir + "/r.json " + args);
  EXPECT_EQ(r.exit_code, expect) << r.err;
  if (err) *err = r.err;
  if (r.exit_code != 0) return {};
  return nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
}

double finish_of(const nlohmann::json& npu, const std::string& collective) {
  for (const auto& c : npu["collectives"]) {
    if (c["name"] == collective) return c["end_ns"];
  }
  return -1;
}

/// Two NPUs on a switch, one 450 GB/s port each (a B300-class NVLink port
/// of 9 x 50 GB/s), 32 KiB frames that take 73 ns on the wire, HBM of
/// 8 TB/s with 100 ns of latency; `nic` adds to the NICs' section.
std::string fast_port_platform(const std::string& nic = "") {
  return "npus: 2\n"
         "npu: { hbm: { size: 16 GiB, channels: 64, bandwidth: 8000 GB/s, latency: 100 ns } }\n"
         "nic: { mtu: 256, header: 0, segment: 32 KiB" +
         nic +
         " }\n"
         "fabrics: [ { topology: switch, link: { bandwidth: 450 GB/s, latency: 250 ns, buffer: 1 MiB }, "
         "switch: { latency: 100 ns } } ]\n";
}

void expect_the_port_at_its_bound(const std::string& nic, bool at_bound) {
  // A frame's read takes 100 ns + 32 KiB at the memory's 4 TB/s left for
  // each direction = 108 ns, longer than the frame's 73 ns on the wire: read
  // one frame ahead, the port waits for every read (about 2/3 of its rate);
  // derived (Little's law: 450 GB/s x 108 ns = 49 kB, two frames), the
  // reads keep up and 64 MiB cross at the port's rate plus the path.
  const std::uint64_t S = 64 * MiB;
  const auto run = testutil::run_transfers(fast_port_platform(nic), {testutil::Flow{0, 1, S}});
  ASSERT_NE(run.done[0], kNever);
  const double bound = S / 450.0 + 2 * 250 + 100 + 100;  // wire, links, switch, the first read's latency
  const double took = ticks_to_ns(run.done[0]);
  if (at_bound) {
    EXPECT_EQ(run.platform->spec().fabrics[0].nic.read_ahead_bytes, 64u << 10);
    EXPECT_NEAR(took, bound, 0.01 * bound);
  } else {
    EXPECT_GT(took, 1.3 * bound) << "one frame of read-ahead should hold the port back";
  }
}

TEST(ReadAhead, DerivedFromRateAndLatencyItKeepsAFastPortAtItsBound) {
  expect_the_port_at_its_bound("", true);
}

TEST(ReadAhead, OneFrameAheadHoldsAFastPortBackWhereTheReadOutlastsTheFrame) {
  expect_the_port_at_its_bound(", read_ahead: 32 KiB", false);
}

TEST(Hbm, AMemoryBoundKernelBesideAnAllReduceSlowsBoth) {
  // One HBM channel of M = 100 GB/s and a fabric far faster than it. Alone,
  // the kernel reads 2S in 2S/M, and the all-reduce (2 NPUs, ring) moves S/2
  // each way per step through the NIC's reads and writes: 2S/M. Together,
  // three streams share the HBM (kernel, NIC reads, NIC writes): the
  // all-reduce takes 3S/M, the kernel has read S by then and finishes at 4S/M.
  const std::string dir = testutil::scratch_dir("hbm");
  const double S = 64.0 * MiB, M = 100;
  const std::string platform = testutil::platform_file(
      "npus: 2\n"
      "npu: { peak_tflops: 1000, hbm: { size_GiB: 16, channels: 1, bandwidth_GBps: 100, latency_ns: 0 } }\n"
      "collectives: { chunks: 1, algorithms: { all_reduce: ring } }\n"
      "fabrics: [ { topology: fully_connected, link: { bandwidth_GBps: 100000, latency_ns: 0, buffer_bytes: 67108864 } "
      "} ]\n");
  for (const bool with_kernel : {false, true}) {
    const std::string prefix = dir + (with_kernel ? "/both" : "/alone");
    write_nodes(prefix, 2, [&](int, traces::EtWriter& w) {
      if (with_kernel) {
        ChakraProtoMsg::Node k;
        k.set_id(0);
        k.set_name("kernel");
        k.set_type(ChakraProtoMsg::COMP_NODE);
        traces::add_uint(k, "num_ops", 1);
        traces::add_uint(k, "tensor_size", static_cast<std::uint64_t>(2 * S));
        w.write(k);
      }
      ChakraProtoMsg::Node ar;
      ar.set_id(1);
      ar.set_name("all_reduce");
      ar.set_type(ChakraProtoMsg::COMM_COLL_NODE);
      traces::add_int(ar, "comm_type", 0);
      traces::add_uint(ar, "comm_size", static_cast<std::uint64_t>(S));
      w.write(ar);
    });
    const auto j = run("--platform " + platform + " --workload " + prefix);
    for (const auto& npu : j["npus"]) {
      const double ar = finish_of(npu, "all_reduce");
      if (with_kernel) {
        EXPECT_NEAR(ar, 3 * S / M, 0.02 * 3 * S / M);
        EXPECT_NEAR(npu["finish_ns"].get<double>(), 4 * S / M, 0.02 * 4 * S / M);
      } else {
        EXPECT_NEAR(ar, 2 * S / M, 0.02 * 2 * S / M);
      }
    }
    EXPECT_GT(j["memories"][0]["bytes_read"].get<double>(), 0.0);
  }
}

/// A 2-rank trace of one all-reduce of `bytes`.
void write_all_reduce(const std::string& prefix, std::uint64_t bytes) {
  write_nodes(prefix, 2, [&](int, traces::EtWriter& w) {
    ChakraProtoMsg::Node ar;
    ar.set_id(0);
    ar.set_name("all_reduce");
    ar.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    traces::add_int(ar, "comm_type", 0);
    traces::add_uint(ar, "comm_size", bytes);
    w.write(ar);
  });
}

TEST(Hbm, ANicReadsAheadAsManyBytesAsItsReadAheadAllows) {
  // HBM with a 2 us read latency and bandwidth to spare; a 100 GB/s link. A
  // 2-NPU ring all-reduce of 1 MiB sends 16 frames of 32 KiB per step (two
  // steps). Reading one frame ahead, each frame waits out a read: a step
  // takes 16 reads of L. Reading 16 frames ahead, a step takes one read and
  // then its 16 frames on the wire, 16 x 32 KiB / B. (Each step also waits
  // for its last frame to be written at the receiver, one more L.)
  const std::string dir = testutil::scratch_dir("readahead");
  const double L = 2000, B = 100, frame = 32.0 * 1024;
  write_all_reduce(dir + "/ar", MiB);
  for (const int ahead : {1, 16}) {
    const std::string platform = testutil::platform_file(
        "npus: 2\n"
        "npu: { hbm: { size: 16 GiB, channels: 1, bandwidth: 1000 TB/s, latency: 2 us } }\n"
        "nic: { segment: 32 KiB, read_ahead: " +
            std::to_string(ahead * 32) +
            " KiB }\n"
            "collectives: { chunks: 1, algorithms: { all_reduce: ring } }\n"
            "fabrics: [ { topology: fully_connected, link: { bandwidth: 100 GB/s, latency: 0, buffer: 64 MiB } } ]\n",
        "readahead" + std::to_string(ahead) + ".yaml");
    const auto j = run("--platform " + platform + " --workload " + dir + "/ar");
    const double step = ahead == 1 ? 16 * L + frame / B + L : L + 16 * frame / B + L;
    for (const auto& npu : j["npus"]) {
      EXPECT_NEAR(finish_of(npu, "all_reduce"), 2 * step, 0.02 * 2 * step) << "read_ahead " << ahead << " frames";
    }
  }
}

TEST(Hbm, ANicBehindAPcieSwitchSlowerThanItsLinkSendsAtThePcieRate) {
  // The same 2-NPU ring all-reduce of 1 MiB (two steps of 512 KiB in 32 KiB
  // frames) over a 100 GB/s link, but each NIC reaches its HBM through PCIe
  // 3.0 x4 (no TLP overhead: 4 x 8 GT/s x 128/130 / 8 = 3.94 GB/s): a step is
  // the sender's PCIe moving 512 KiB, one 4 KiB TLP by which the receiver's
  // PCIe trails it (it writes each frame as its bytes come: Frame::spread),
  // and a microsecond of latency. Without the switch it would be 25x faster.
  const std::string dir = testutil::scratch_dir("pcie");
  write_all_reduce(dir + "/ar", MiB);
  const std::string platform = testutil::platform_file(
      "npus: 2\n"
      "npu: { hbm: h100 }\n"
      "nic: { segment: 32 KiB }\n"
      "collectives: { chunks: 1, algorithms: { all_reduce: ring } }\n"
      "fabrics:\n"
      "  - topology: fully_connected\n"
      "    link: { bandwidth: 100 GB/s, latency: 500 ns, buffer: 64 MiB }\n"
      "    pcie: { generation: 3, lanes: 4, max_payload: 4096, tlp_overhead: 0, latency: 100 ns }\n",
      "pcie.yaml");
  const auto j = run("--platform " + platform + " --workload " + dir + "/ar");
  const double pcie_GBps = 4 * 8.0 * 128 / 130 / 8;
  const double step = (512.0 + 4) * 1024 / pcie_GBps;  // ns
  for (const auto& npu : j["npus"]) {
    EXPECT_NEAR(finish_of(npu, "all_reduce"), 2 * step, 0.01 * 2 * step);
  }
}

TEST(Hbm, StagedThroughHostMemoryTheAllReduceSharesTheUplinkAsEachByteCrossesItBothWays) {
  // The ring above, the NICs reaching their HBM through host memory instead:
  // a staged byte crosses the switch's uplink (PCIe 3.0 x4 too) once each
  // way. Sends staged only (write_only): the uplink carries each step's
  // 512 KiB once each way, the rate stays the PCIe port's. Both staged
  // (off): the sent and the received 512 KiB both go up it, half the rate.
  // Both NICs on one switch: four times 512 KiB on one uplink, a quarter.
  // The NICs read four frames ahead: a staged read takes 1.5 us more (host
  // memory, two more crossings, a TLP), which one frame in flight would
  // expose on every 32 KiB frame.
  struct Case {
    const char* pcie;
    double uplink_loads;  // 512 KiB loads a step puts on each direction of one uplink
  };
  const std::string dir = testutil::scratch_dir("pcie_staged");
  write_all_reduce(dir + "/ar", MiB);
  const double pcie_GBps = 4 * 8.0 * 128 / 130 / 8;
  // An uplink of x32 carries the four loads in half an x4 port's time: the
  // ports bound again (x16 would tie with them, and wait in turns).
  for (const Case& c :
       {Case{"uplink_lanes: 4, gpudirect_rdma: write_only", 1}, Case{"uplink_lanes: 4, gpudirect_rdma: off", 2},
        Case{"uplink_lanes: 4, gpudirect_rdma: off, devices_per_switch: 2", 4},
        Case{"uplink_lanes: 32, gpudirect_rdma: off, devices_per_switch: 2", 1}}) {
    SCOPED_TRACE(c.pcie);
    const std::string platform = testutil::platform_file(
        "npus: 2\n"
        "npu: { hbm: h100 }\n"
        "nic: { segment: 32 KiB, read_ahead: 128 KiB }\n"
        "collectives: { chunks: 1, algorithms: { all_reduce: ring } }\n"
        "fabrics:\n"
        "  - topology: fully_connected\n"
        "    link: { bandwidth: 100 GB/s, latency: 500 ns, buffer: 64 MiB }\n"
        "    pcie: { generation: 3, lanes: 4, max_payload: 4096, tlp_overhead: 0, latency: 100 ns, " +
            std::string(c.pcie) + " }\n",
        "pcie_staged.yaml");
    const auto j = run("--platform " + platform + " --workload " + dir + "/ar");
    // A step as above, each load on the uplink in turn, plus about one
    // staged read's latency (two crossings, host memory, a TLP): the fill
    // and drain, which are not derived here to the nanosecond (both sides
    // staged add a little more: the 1% covers it; the loads, 1, 2 or 4
    // times a step, are what the test tells apart). The last NPU's end:
    // sharing a switch, one ends a little before the other.
    const double staged_latency = 2 * 100 + 300 + 4096 / pcie_GBps;
    const double step = (c.uplink_loads * 512 + 4) * 1024 / pcie_GBps + staged_latency;  // ns
    double last = 0;
    for (const auto& npu : j["npus"]) last = std::max(last, finish_of(npu, "all_reduce"));
    EXPECT_NEAR(last, 2 * step, 0.01 * 2 * step);
    // The report says what went through host memory: each NPU's 1 MiB sent,
    // and with `off` its 1 MiB received too.
    const bool both = std::string(c.pcie).find("off") != std::string::npos;
    std::uint64_t via_host = 0;
    for (const auto& p : j["pcie_switches"]) via_host += p["bytes_via_host"].get<std::uint64_t>();
    EXPECT_EQ(via_host, (both ? 4 : 2) * MiB);
  }
}

std::string mem_trace(const std::string& dir, int npus, bool store, std::uint64_t bytes) {
  const std::string prefix = dir + "/mem";
  write_nodes(prefix, npus, [&](int, traces::EtWriter& w) {
    ChakraProtoMsg::Node n;
    n.set_id(5);
    n.set_name(store ? "offload" : "reload");
    n.set_type(store ? ChakraProtoMsg::MEM_STORE_NODE : ChakraProtoMsg::MEM_LOAD_NODE);
    traces::add_uint(n, "tensor_size", bytes);
    w.write(n);
  });
  return prefix;
}

struct RemoteCase {
  std::string type;
  bool store;
};
void PrintTo(const RemoteCase& c, std::ostream* os) {
  *os << c.type << (c.store ? " store" : " load");
}
class AstraRemoteMemory : public ::testing::TestWithParam<RemoteCase> {};

TEST_P(AstraRemoteMemory, OneRequestTakesLatencyPlusSizeAndSharedOnesShare) {
  const auto& c = GetParam();
  const std::string dir = testutil::scratch_dir("astra-mem");
  const int n = 4;
  const double S = 8.0 * MiB, L = 500, BW = 50;
  testutil::write_text(dir + "/m.json", "{\"memory-type\": \"" + c.type +
                                            "\", \"remote-mem-latency\": 500, \"remote-mem-bw\": 50,"
                                            " \"num-nodes\": 2, \"num-npus-per-node\": 2}");
  const auto j = run("--platform " + testutil::astra_network(dir, "Ring", n, 50, 500) + " --workload " +
                     mem_trace(dir, n, c.store, static_cast<std::uint64_t>(S)) + " --remote-memory " + dir + "/m.json");
  // Every NPU asks at once: a pool is shared by 4, a node's memory by 2.
  const int sharing = c.type == "MEMORY_POOL" ? n : c.type == "PER_NODE_MEMORY_EXPANSION" ? 2 : 1;
  const double expected = L + sharing * S / BW;
  for (const auto& npu : j["npus"]) EXPECT_NEAR(npu["finish_ns"].get<double>(), expected, 0.01 * expected);
  double moved = 0;
  for (const auto& m : j["memories"]) moved += m[c.store ? "bytes_written" : "bytes_read"].get<double>();
  EXPECT_DOUBLE_EQ(moved, n * S);
}

INSTANTIATE_TEST_SUITE_P(Types, AstraRemoteMemory,
                         ::testing::Values(RemoteCase{"PER_NPU_MEMORY_EXPANSION", false},
                                           RemoteCase{"PER_NODE_MEMORY_EXPANSION", true},
                                           RemoteCase{"MEMORY_POOL", false}, RemoteCase{"MEMORY_POOL", true}),
                         [](const auto& i) { return i.param.type + (i.param.store ? "_store" : "_load"); });

/// Two NPUs on a switch (64 GB/s, 250 ns links, no headers) and a pool of
/// 4 channels, 128 GB/s, 300 ns behind it: each NPU loads or stores S once.
constexpr double kPoolAccess = 16.0 * MiB;
nlohmann::json run_on_pool(const std::string& name, bool store) {
  const std::string dir = testutil::scratch_dir(name);
  const std::string platform = testutil::platform_file(
      "npus: 2\nnic: { header_bytes: 0 }\nfabrics:\n"
      "  - topology: switch\n    link: { bandwidth_GBps: 64, latency_ns: 250 }\n"
      "    memories: [ { name: pool, size_GiB: 64, channels: 4, bandwidth_GBps: 128, latency_ns: 300 } ]\n");
  return run("--platform " + platform + " --workload " +
             mem_trace(dir, 2, store, static_cast<std::uint64_t>(kPoolAccess)));
}

TEST(RemoteMemory, APoolBehindASwitchAnswersALoadAtItsClosedForm) {
  // The 64-byte request over two links, the read (latency + S at the pool's
  // 128 GB/s), then the data back over two 64 GB/s links, cut through.
  const double S = kPoolAccess;
  const auto j = run_on_pool("pool", false);
  // Both NPUs ask at once: the pool reads 2S at 128 GB/s (shared), then each
  // answer crosses the pool's one link, one after the other (FCFS frames
  // interleave, so both end near the same time).
  const double request = 2 * 250 + 64 / 64.0;
  const double read = 300 + 2 * S / 128;
  const double answers = 2 * 250 + 2 * S / 64;
  const double expected = request + read + answers;
  for (const auto& npu : j["npus"]) EXPECT_NEAR(npu["finish_ns"].get<double>(), expected, 0.02 * expected);
  EXPECT_EQ(j["memories"][0]["name"], "pool");
  EXPECT_DOUBLE_EQ(j["memories"][0]["bytes_read"].get<double>(), 2 * S);
  EXPECT_GT(j["memories"][0]["utilization"].get<double>(), 0.0);
}

TEST(RemoteMemory, APoolBehindASwitchTakesAStoreAtItsClosedForm) {
  // The pool above, storing: each NPU's S bytes cross the pool's one link
  // (shared, FCFS frames interleave, so both arrive near the end), the
  // writes take latency + 2S at 128 GB/s, and a 64-byte acknowledgement,
  // not the data, comes back over two links.
  const double S = kPoolAccess;
  const auto j = run_on_pool("pool-store", true);
  const double data = 2 * 250 + 2 * S / 64;
  const double write = 300 + 2 * S / 128;
  const double ack = 2 * 250 + 64 / 64.0;
  const double expected = data + write + ack;
  for (const auto& npu : j["npus"]) EXPECT_NEAR(npu["finish_ns"].get<double>(), expected, 0.02 * expected);
  EXPECT_DOUBLE_EQ(j["memories"][0]["bytes_written"].get<double>(), 2 * S);
}

TEST(RemoteMemory, AnAccessOutsideTheMemoryStopsTheRunNamingTheNode) {
  const std::string dir = testutil::scratch_dir("oob");
  const std::string platform = testutil::platform_file(
      "npus: 2\nfabrics:\n  - topology: switch\n"
      "    memories: [ { name: tiny, size_GiB: 1, channels: 1, bandwidth_GBps: 10, latency_ns: 100 } ]\n");
  std::string err;
  run("--platform " + platform + " --workload " + mem_trace(dir, 2, false, 2ull << 30), 2, &err);
  // Refused as the NPU issues it: no address range of the memory holds it.
  EXPECT_NE(err.find("node 5 (\"reload\", MEM_LOAD_NODE): npu0: a load of 2147483648 bytes is larger than the "
                     "1073741824-byte memory \"tiny\""),
            std::string::npos)
      << err;
}

TEST(RemoteMemory, NoMemoryExpansionRefusesMemoryNodes) {
  const std::string dir = testutil::scratch_dir("nomem");
  testutil::write_text(dir + "/m.json", R"({"memory-type": "NO_MEMORY_EXPANSION"})");
  std::string err;
  run("--platform " + testutil::astra_network(dir, "Ring", 2, 50, 500) + " --workload " +
          mem_trace(dir, 2, true, 4096) + " --remote-memory " + dir + "/m.json",
      2, &err);
  EXPECT_NE(err.find("node 5 (\"offload\", MEM_STORE_NODE, 4096 bytes): the platform has no remote memory"),
            std::string::npos)
      << err;
}

}  // namespace

TEST(RemoteMemory, EveryBindingOfThePoolPlatformPassesItsProtocolCheckerAndTimesStayTheSame) {
  // --check-protocol puts a checker on every socket binding: NPU-NIC
  // messages, every link's frames, the NICs' and NPUs' HBM and the pool's
  // base protocol. The shipped pool sample passes them all, in the same time.
  const std::string src = FABRICSIM_SOURCE_DIR;
  const std::string args =
      "--platform " + src + "/platforms/pool8.yaml --workload " + src + "/traces/samples/offload_8npus/offload";
  const auto plain = run(args);
  const std::string dir = testutil::scratch_dir("checked");
  const auto r = testutil::run_fabricsim("run --report " + dir + "/r.json --check-protocol " + args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("fabricsim/protocol"), std::string::npos) << r.err;
  const auto at = r.err.find("protocol checks: 127 checkers saw ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
  EXPECT_NE(line.find(" transactions, 0 breaches"), std::string::npos) << line;
  EXPECT_GT(std::stoull(line.substr(std::string("protocol checks: 127 checkers saw ").size())), 1000000u) << line;
  const auto checked = nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
  EXPECT_EQ(checked["sim_time_ns"], plain["sim_time_ns"]);
}
