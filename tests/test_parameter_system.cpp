// The parameter system (tlm/kernel/parameters.h): every component's parameters
// declared once; an empty section loads each to its declared default; values
// with units mean what the older unit-named keys meant; `fabricsim params`
// lists them; reports record the values a platform resolved to.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/switch/switch.h"
#include "platforms/assembly/loader.h"
#include "platforms/assembly/parameter_catalogue.h"
#include "platforms/assembly/topologies.h"
#include "support/fabric_harness.h"
#include "support/test_util.h"

using namespace fabricsim;

namespace {

double parsed(const std::string& text, Quantity q) {
  const ParsedQuantity p = parse_quantity(text, q);
  EXPECT_TRUE(p.value.has_value()) << text << ": " << p.error;
  return p.value.value_or(-1);
}

std::string refusal(const std::string& text, Quantity q) {
  const ParsedQuantity p = parse_quantity(text, q);
  EXPECT_FALSE(p.value.has_value()) << text << " read as " << p.value.value_or(0);
  return p.error;
}

TEST(Units, ValuesAreReadInTheirUnits) {
  EXPECT_DOUBLE_EQ(parsed("400 GB/s", Quantity::kBandwidth), 400e9);
  EXPECT_DOUBLE_EQ(parsed("400GB/s", Quantity::kBandwidth), 400e9);
  EXPECT_DOUBLE_EQ(parsed("3.2 Tb/s", Quantity::kBandwidth), 400e9);  // bits
  EXPECT_DOUBLE_EQ(parsed("400 Gb/s", Quantity::kBandwidth), 50e9);
  EXPECT_DOUBLE_EQ(parsed("50 GiB/s", Quantity::kBandwidth), 50.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(parsed("unlimited", Quantity::kBandwidth), 0);
  EXPECT_DOUBLE_EQ(parsed("500 ns", Quantity::kDuration), 500e3);  // picoseconds
  EXPECT_DOUBLE_EQ(parsed("1.5 us", Quantity::kDuration), 1.5e6);
  EXPECT_DOUBLE_EQ(parsed("2 ms", Quantity::kDuration), 2e9);
  EXPECT_DOUBLE_EQ(parsed("0", Quantity::kDuration), 0);  // zero needs no unit
  EXPECT_DOUBLE_EQ(parsed("16 GiB", Quantity::kBytes), 16.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(parsed("4096", Quantity::kBytes), 4096);  // bytes may be bare
  EXPECT_DOUBLE_EQ(parsed("1 MB", Quantity::kBytes), 1e6);
  EXPECT_DOUBLE_EQ(parsed("989 TFLOP/s", Quantity::kFlopRate), 989e12);
  EXPECT_DOUBLE_EQ(parsed("1.5 GHz", Quantity::kFrequency), 1.5e9);
  EXPECT_DOUBLE_EQ(parsed("64", Quantity::kCount), 64);
}

TEST(Units, WrongOrMissingUnitsAreRefusedNamingTheAcceptedOnes) {
  EXPECT_NE(refusal("400", Quantity::kBandwidth).find("needs a unit (PB/s, TB/s, GB/s"), std::string::npos);
  EXPECT_NE(refusal("400 GB", Quantity::kBandwidth).find("has unit \"GB\", not a unit of a bandwidth"),
            std::string::npos);
  EXPECT_NE(refusal("500 GB/s", Quantity::kDuration).find("not a unit of a duration (s, ms, us, ns, ps)"),
            std::string::npos);
  EXPECT_NE(refusal("fast", Quantity::kBandwidth).find("must be a number and a unit"), std::string::npos);
  EXPECT_NE(refusal("nan GB/s", Quantity::kBandwidth).find("must be a number and a unit"), std::string::npos);
  EXPECT_NE(refusal("1.5 B", Quantity::kBytes).find("not a whole number of bytes"), std::string::npos);
  EXPECT_NE(refusal("4.5", Quantity::kCount).find("whole number"), std::string::npos);
  EXPECT_NE(refusal("-1", Quantity::kCount).find("whole number"), std::string::npos);
}

template <class P>
void expect_defaults_read_back(const ParamTable<P>& table) {
  const P defaults = table.defaults();
  for (const auto& p : table.params()) {
    const double v = p.get(defaults);
    const std::string text = format_quantity(v, p.info.quantity, p.info.choices);
    const ParsedQuantity back = parse_quantity(text, p.info.quantity, p.info.choices);
    ASSERT_TRUE(back.value.has_value()) << table.type() << "." << p.info.name << " = " << text << ": " << back.error;
    EXPECT_DOUBLE_EQ(*back.value, v) << table.type() << "." << p.info.name << " = " << text;
    EXPECT_FALSE(out_of_range(p.info, v).has_value())
        << table.type() << "." << p.info.name << ": default " << text << " " << *out_of_range(p.info, v);
  }
}

TEST(Parameters, EveryDefaultIsInRangeAndReadsBackAsWritten) {
  expect_defaults_read_back(npu_section_table());
  expect_defaults_read_back(MemoryParams::table());
  expect_defaults_read_back(CollectiveConfig::table());
  expect_defaults_read_back(NcclSettings::table());
  expect_defaults_read_back(NicParams::table());
  expect_defaults_read_back(LinkParams::table());
  expect_defaults_read_back(Switch::Params::table());
  expect_defaults_read_back(reduction_spec_table());
}

// Every section of a platform file, present and empty.
const char* kEmptySections = R"(npus: 4
npu: { hbm: {} }
nic: {}
collectives: {}
fabrics:
  - topology: netlist
    link: {}
    switch: { reduction: {} }
    nic: {}
    switches: [ { name: s0 } ]
    memories: [ { name: m0 } ]
    links:
      - { from: npu0, to: s0 }
      - { from: npu1, to: s0 }
      - { from: npu2, to: s0 }
      - { from: npu3, to: s0 }
      - { from: m0, to: s0 }
)";

template <class P>
void expect_defaults(const ParamTable<P>& table, const P& loaded) {
  const P defaults = table.defaults();
  ASSERT_FALSE(table.params().empty()) << table.type();
  for (const auto& p : table.params()) {
    EXPECT_EQ(p.get(loaded), p.get(defaults)) << table.type() << "." << p.info.name;
  }
}

TEST(Parameters, AnEmptySectionLoadsEveryParameterToItsDeclaredDefault) {
  const PlatformSpec spec = load_platform(testutil::platform_file(kEmptySections));
  expect_defaults(npu_section_table(), spec);
  ASSERT_TRUE(spec.hbm.has_value());
  expect_defaults(MemoryParams::table(), *spec.hbm);
  expect_defaults(CollectiveConfig::table(), spec.collectives);
  const FabricSpec& f = spec.fabrics.at(0);
  // Unset, the read-ahead is derived: one port at 50 GB/s (the default
  // link) x (100 ns + 256 KiB at half of the default memory's 819 GB/s)
  // = 37 kB, within one 256 KiB frame.
  EXPECT_EQ(f.nic.read_ahead_bytes, 256u << 10);
  NicParams nic = f.nic;
  nic.read_ahead_bytes = 0;
  expect_defaults(NicParams::table(), nic);
  ASSERT_FALSE(f.edges.empty());
  for (const FabricEdge& e : f.edges) {
    if (!e.internal) expect_defaults(LinkParams::table(), e.link);
  }
  ASSERT_EQ(f.memories.size(), 1u);
  expect_defaults(MemoryParams::table(), f.memories[0].memory);
  int switches = 0;
  for (const FabricNode& n : f.nodes) {
    if (n.kind != FabricNode::Kind::kSwitch) continue;
    ++switches;
    Switch::Params s;
    s.hop_latency = n.hop_latency;
    expect_defaults(Switch::Params::table(), s);
    ASSERT_TRUE(n.reduction.has_value());
    expect_defaults(reduction_spec_table(), *n.reduction);
  }
  EXPECT_EQ(switches, 1);
}

// The same platform written with units in values and with the older
// unit-named keys; every value differs from its default, so a parameter the
// loader ignored would show.
const char* kWithUnits = R"(npus: 4
npu: { peak_flops: 989 TFLOP/s, memory_bandwidth: 3.35 TB/s, cpu_flops: 2 TFLOP/s, remote_memory_latency: 2 us,
       remote_memory_bandwidth: 100 GB/s, max_collectives_in_flight: 3, collective_start_overhead: 3 us,
       hbm: { size: 80 GiB, channels: 80, bandwidth: 3350 GB/s, latency: 120 ns, interleave: 512 } }
nic: { mtu: 8 KiB, header: 64, segment: 1 MiB, message_overhead: 1.5 us, injection_bandwidth: 400 Gb/s,
       forward_latency: 80 ns, stripe: true, step_overhead_simple: 2.6 us, step_overhead_ll: 0.2 us,
       step_overhead_ll128: 1.1 us }
collectives: { chunks: 8, channels: 4, active_chunks: 16, chunks_per_stage: 3, pipeline_chunk: 8 MiB, scheduling: lifo, local_reduction_bandwidth: 200 GB/s,
               protocol: ll128, launch_simple: 8.4 us, launch_ll: 6.6 us, launch_ll128: 14 us, dimension_order: themis,
               level_data: whole, direct_window: 2, probe_margin: 0.25, library: nccl, @NCCL@ }
fabrics:
  - topology: switch
    link: { bandwidth: 3.6 Tb/s, latency: 0.25 us, buffer: 8 MiB }
    switch:
      latency: 120 ns
      reduction: { throughput: 2 TB/s, streams: 8, latency: 150 ns, slots: 512, buffer: 16 MiB,
                   protocol: pull, pipeline: 512 KiB, pipeline_depth: 2, clock: 1.5 GHz }
    memories: [ { name: pool, size: 1 TiB, channels: 8, bandwidth: 64 GB/s, latency: 600 ns, interleave: 4 KiB } ]
)";
const char* kWithUnitKeys = R"(npus: 4
npu: { peak_tflops: 989, memory_bandwidth_GBps: 3350, cpu_gflops: 2000, remote_memory_latency_ns: 2000,
       remote_memory_bandwidth_GBps: 100, max_collectives_in_flight: 3, collective_start_overhead: 3000 ns,
       hbm: { size_GiB: 80, channels: 80, bandwidth_GBps: 3350, latency_ns: 120, interleave_bytes: 512 } }
nic: { mtu_bytes: 8192, header_bytes: 64, segment_bytes: 1048576, message_overhead_ns: 1500,
       injection_bandwidth_GBps: 50, forward_latency_ns: 80, stripe: true, step_overhead_simple: 2600 ns,
       step_overhead_ll: 200 ns, step_overhead_ll128: 1100 ns }
collectives: { chunks: 8, channels: 4, active_chunks: 16, chunks_per_stage: 3, pipeline_chunk: 8388608, scheduling: lifo, local_reduction_bandwidth: 1.6 Tb/s,
               protocol: ll128, launch_simple: 8400 ns, launch_ll: 6600 ns, launch_ll128: 14000 ns, dimension_order: themis,
               level_data: whole, direct_window: 2, probe_margin: 0.25, library: nccl, @NCCL@ }
fabrics:
  - topology: switch
    link: { bandwidth_GBps: 450, latency_ns: 250, buffer_bytes: 8388608 }
    switch:
      latency_ns: 120
      reduction: { throughput_GBps: 2000, streams: 8, latency_ns: 150, slots: 512, buffer_bytes: 16777216,
                   protocol: pull, pipeline_bytes: 524288, pipeline_depth: 2, clock_MHz: 1500 }
    memories: [ { name: pool, size_GiB: 1024, channels: 8, bandwidth_GBps: 64, latency_ns: 600, interleave_bytes: 4096 } ]
)";

TEST(Parameters, UnitsInValuesMeanWhatUnitNamedKeysMean) {
  // Every NCCL setting away from its default too.
  const auto with_nccl = [](std::string text) {
    const std::string nccl = std::string("nccl: { tuning: ") + FABRICSIM_SOURCE_DIR +
                             "/platforms/libraries/nccl-2.21.5.yaml, compute_capability: 80, cpu: amd, intra: pci, "
                             "nvls_enable: off, collnet_enable: true, tree: false, ring: false, collnet_direct: false, "
                             "collnet_chain: false, nvls: false, nvls_tree: false, pat: true, ll: false, "
                             "simple: false, ll128: on, min_channels: 2, max_channels: 8, nvlinks: 12 }";
    text.replace(text.find("@NCCL@"), 6, nccl);
    return text;
  };
  const auto with_units =
      resolved_parameters(load_platform(testutil::platform_file(with_nccl(kWithUnits), "units.yaml")));
  const auto with_keys =
      resolved_parameters(load_platform(testutil::platform_file(with_nccl(kWithUnitKeys), "keys.yaml")));
  EXPECT_EQ(with_units.dump(2), with_keys.dump(2));
  const auto defaults = resolved_parameters(load_platform(testutil::platform_file(kEmptySections, "empty.yaml")));
  // Every parameter of every section was set away from its default.
  for (const char* section : {"npu", "hbm", "collectives"}) {
    for (const auto& [name, value] : with_units[section].items()) {
      EXPECT_NE(value, defaults[section][name]) << section << "." << name;
    }
  }
  const NcclSettings nccl_defaults;
  for (const auto& p : NcclSettings::table().params()) {
    if (p.info.name == std::string("pat")) continue;  // one algorithm stays on: NCCL with none fails every call
    EXPECT_NE(with_units["nccl"]["settings"][p.info.name],
              format_quantity(p.get(nccl_defaults), p.info.quantity, p.info.choices))
        << "nccl." << p.info.name;
  }
  const auto& f = with_units["fabrics"][0];
  const auto& d = defaults["fabrics"][0];
  for (const char* section : {"nic"}) {
    for (const auto& [name, value] : f[section].items()) EXPECT_NE(value, d[section][name]) << section << "." << name;
  }
  for (const char* section : {"links", "switches", "memories"}) {
    for (const auto& [name, value] : f[section][0].items()) {
      if (name != "name") {
        EXPECT_NE(value, d[section][0][name]) << section << "." << name;
      }
    }
  }
  for (const auto& [name, value] : f["reduction_units"][0].items()) {
    if (name != "model" && name != "multicast_buffer") {
      EXPECT_NE(value, d["reduction_units"][0][name]) << name;
    }
  }
  EXPECT_EQ(f["reduction_units"][0]["multicast_buffer"], "16 MiB");  // follows buffer
  EXPECT_EQ(f["links"][0]["bandwidth"], "450 GB/s");
  EXPECT_EQ(with_units["npu"]["remote_memory_latency"], "2 us");
}

TEST(Parameters, BadValuesNameTheFilePlaceValueAndWhatIsAccepted) {
  const struct {
    const char* link;
    const char* message;
  } cases[] = {
      {"{ latency: 2 s }", "\"latency\" is 2 s: it must be from 0 to 1 s"},
      {"{ bandwidth: 0 }", "\"bandwidth\" is unlimited: it must be from 1 kB/s to 1000000 GB/s"},
      {"{ bandwidth: 2 PB/s }", "\"bandwidth\" is 2000000 GB/s: it must be from 1 kB/s to 1000000 GB/s"},
      {"{ buffer: 0 }", "\"buffer\" is 0: it must be from 1 B to 1 PiB"},
      {"{ latency: 5 }", "\"latency\" is \"5\": it needs a unit (s, ms, us, ns, ps)"},
      {"{ latency: [5] }", "\"latency\" must be a single value, not a list"},
      {"{ latency: 5 ns, latency_ns: 5 }", "\"latency\" and \"latency_ns\" are the same parameter; give one"},
      {"{ latency_ns: 5 ns }", "\"latency_ns\" (ns) must be a finite number >= 0 and <= 1e+09, not \"5 ns\""},
  };
  for (const auto& c : cases) {
    const std::string path =
        testutil::platform_file(std::string("npus: 4\nfabrics:\n  - topology: ring\n    link: ") + c.link + "\n");
    const auto r = testutil::run_fabricsim("params --platform " + path);
    EXPECT_EQ(r.exit_code, 2) << c.link;
    EXPECT_NE(r.err.find(path + ":4:"), std::string::npos) << c.link << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.link << ": " << r.err;
  }
}

TEST(ParamsCommand, ListsEveryParameterWithUnitDefaultAndDescription) {
  const auto r = testutil::run_fabricsim("params --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto listed = nlohmann::json::parse(r.out);
  std::size_t rows = 0;
  for (const ParamSection& s : parameter_catalogue()) {
    const auto it = std::find_if(listed.begin(), listed.end(), [&](const auto& j) { return j["type"] == s.type; });
    ASSERT_NE(it, listed.end()) << s.type;
    ASSERT_EQ((*it)["parameters"].size(), s.rows.size()) << s.type;
    for (std::size_t i = 0; i < s.rows.size(); ++i) {
      const auto& row = (*it)["parameters"][i];
      EXPECT_EQ(row["name"], s.rows[i].name);
      EXPECT_EQ(row["default"], s.rows[i].default_value) << s.rows[i].name;
      EXPECT_FALSE(row["unit"].get<std::string>().empty()) << s.rows[i].name;
      EXPECT_FALSE(row["description"].get<std::string>().empty()) << s.type << "." << s.rows[i].name;
      ++rows;
    }
  }
  EXPECT_GE(rows, 38u);  // 38 today: a section that lost its table would show
  const auto text = testutil::run_fabricsim("params link");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("bandwidth  GB/s   50 GB/s  data rate of each direction"), std::string::npos) << text.out;
  const auto bad = testutil::run_fabricsim("params lnk");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown component type \"lnk\" (known: npu, npu.compute, kernel_class, memory, "
                         "collectives, nccl, nic, pcie, link, switch, reduction_unit, transport, model, training)"),
            std::string::npos)
      << bad.err;
}

TEST(ParamsCommand, ListsTheModelAndTrainingKeysTheDocsPointTo) {
  // docs/workload.md sends users to `fabricsim params model|training`.
  const auto model = testutil::run_fabricsim("params model");
  ASSERT_EQ(model.exit_code, 0) << model.err;
  EXPECT_NE(model.out.find("written at: model (a model file: traces/models/*.yaml) --set model.KEY=VALUE"),
            std::string::npos)
      << model.out;
  EXPECT_NE(model.out.find("layers             count               24           transformer layers; [1, 100000]"),
            std::string::npos)
      << model.out;
  const auto training = testutil::run_fabricsim("params training");
  ASSERT_EQ(training.exit_code, 0) << training.err;
  for (const auto& key : {"tp", "pp", "global_batch", "recompute", "zero", "allow_oom"}) {
    EXPECT_NE(training.out.find(std::string("\n  ") + key + " "), std::string::npos) << key << "\n" << training.out;
  }
}

TEST(Reports, RecordTheResolvedParameters) {
  const std::string dir = testutil::scratch_dir("report-params");
  const std::string platform = testutil::platform_file(
      "npus: 2\nfabrics:\n  - topology: switch\n    link: { bandwidth: 100 GB/s, latency: 250 ns }\n");
  const auto r =
      testutil::run_fabricsim("collbench --platform " + platform + " -b 1M -e 1M -q --json " + dir + "/c.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(testutil::read_text(dir + "/c.json"));
  EXPECT_EQ(j["parameters"]["fabrics"][0]["links"][0]["bandwidth"], "100 GB/s");
  EXPECT_EQ(j["parameters"]["fabrics"][0]["links"][0]["latency"], "250 ns");
  EXPECT_EQ(j["parameters"]["npu"]["peak_flops"], "100 TFLOP/s");
}

}  // namespace

namespace {

TEST(Topologies, TheRegistryNamesWhatIsKnownAndEachTopologyTakesOnlyItsKeys) {
  const struct {
    const char* fabric;
    const char* message;
  } cases[] = {
      {"{ topology: hypercube }",
       "unknown topology \"hypercube\" (known: ring, unidirectional_ring, fully_connected, "
       "switch, torus, mesh, fat_tree, netlist)"},
      {"{ topology: switch, dims: [2, 2] }",
       "unknown key \"dims\" in a switch fabric (known: name, topology, link, "
       "uplink, switch, nic, transport, group_size, group_stride, memories, algorithm, pcie, gpus_per_nic, lanes)"},
      {"{ topology: ring, leaf_down: 4 }", "unknown key \"leaf_down\" in a ring fabric"},
      {"{ topology: torus }", "missing \"dims\" in a torus fabric"},
  };
  for (const auto& c : cases) {
    const std::string path = testutil::platform_file(std::string("npus: 4\nfabrics:\n  - ") + c.fabric + "\n");
    const auto r = testutil::run_fabricsim("params --platform " + path);
    EXPECT_EQ(r.exit_code, 2) << c.fabric;
    EXPECT_NE(r.err.find(path + ":3:"), std::string::npos) << c.fabric << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.fabric << ": " << r.err;
  }
  for (const TopologyKind& k : topology_kinds()) {
    EXPECT_EQ(find_topology(k.name), &k);
    EXPECT_FALSE(k.description.empty()) << k.name;
  }
}

}  // namespace
