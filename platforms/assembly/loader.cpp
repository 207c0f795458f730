#include "platforms/assembly/loader.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "models/switch/switch.h"
#include "platforms/assembly/collective_library.h"
#include "platforms/assembly/parameter_catalogue.h"
#include "platforms/assembly/reduction_models.h"
#include "platforms/assembly/topologies.h"
#include "platforms/assembly/topology_generators.h"
#include "platforms/assembly/yaml_input.h"
#include "platforms/importers/astra_network.h"
#include "tlm/reduction.h"

namespace fabricsim {

namespace {
/// Why a transport key does nothing on transport `t` ("" when it acts).
std::string unused_transport_key(const std::string& key, const TransportSpec& t) {
  using CC = TransportSpec::CongestionControl;
  const auto starts = [&key](const char* prefix) { return key.rfind(prefix, 0) == 0; };
  const bool roce = t.kind == TransportSpec::Kind::kRoce, tcp = t.kind == TransportSpec::Kind::kTcp;
  if (starts("pfc_") && !roce) return "PFC acts on transport roce only";
  if (starts("tcp_") && !tcp) return "it sets transport tcp's window";
  if (starts("dcqcn_") && !(roce && t.control() == CC::kDcqcn)) return "it sets congestion_control dcqcn on roce";
  if (starts("dctcp_") && t.control() != CC::kDctcp) return "it sets congestion_control dctcp";
  if (starts("ecn_") && t.control() != CC::kDcqcn && t.control() != CC::kDctcp) {
    return "switches mark ECN only under congestion_control dcqcn or dctcp";  // Platform::apply_transport
  }
  if ((key == "switch_buffer" || key == "buffer_alpha") && !t.ethernet()) {
    return "a shared switch buffer is modelled on roce and tcp only";
  }
  if (key == "flow_quantum" && t.model != TransportSpec::Model::kFlow) return "it applies to model: flow only";
  return "";
}
}  // namespace

namespace {

LinkParams read_link(const YamlInput& in, const YAML::Node& node, const std::string& what, LinkParams p = {}) {
  read_params(in, node, LinkParams::table(), p, what);
  return p;
}

/// A memory: a preset name (hbm3_stack, h100) or its parameters.
MemoryParams read_memory(const YamlInput& in, const YAML::Node& node, const std::string& what,
                         const std::vector<std::string>& other_keys = {}) {
  MemoryParams p;
  if (node.IsScalar()) {
    const std::string preset = node.Scalar();
    if (preset == "hbm3_stack") {
      // The parameters' defaults are one HBM3 stack.
    } else if (preset == "h100") {  // five HBM3 stacks, 80 GB at 3.35 TB/s (H100 SXM datasheet)
      p.size_bytes = 80ull << 30;
      p.channels = 80;
      p.bandwidth = Bandwidth::GBps(3350);
    } else {
      in.fail(node, "unknown memory preset \"" + preset + "\" (known: hbm3_stack, h100)");
    }
    return p;
  }
  read_params(in, node, MemoryParams::table(), p, what, other_keys);
  return p;
}

/// A switch's reduction unit (docs/platforms.md, "Reduction units").
ReductionSpec read_reduction(const YamlInput& in, const YAML::Node& node) {
  ReductionSpec r;
  read_params(in, node, reduction_spec_table(), r, "a switch's reduction unit", {"ops"});
  ReductionUnitParams& p = r.unit;
  if (const YAML::Node ops = node["ops"]) {
    if (ops.IsScalar()) {
      const std::string preset = ops.Scalar();
      if (preset == "all") {
        p.supported = kAllReductions;
      } else if (preset == "nvls") {
        p.supported = kNvlsReductions;
      } else {
        in.fail(ops, "\"ops\" must be all, nvls, or a map from operation to types (sum: [fp32, bf16])");
      }
    } else {
      in.require_map(ops, "\"ops\"");
      p.supported = 0;
      for (const auto& kv : ops) {
        ReduceOp op;
        const std::string op_name = kv.first.Scalar();
        if (!parse_reduce_op(op_name, op))
          in.fail(kv.first, "unknown reduction \"" + op_name + "\" (known: sum, min, max)");
        if (!kv.second.IsSequence())
          in.fail(kv.second, "the types of \"" + op_name + "\" must be a list (fp32, fp16, bf16, int32)");
        for (const auto& t : kv.second) {
          DataType type;
          if (!t.IsScalar()) in.fail(t, "a data type must be a name (fp32, fp16, bf16, int32)");
          const std::string type_name = t.Scalar();
          if (!parse_data_type(type_name, type)) {
            in.fail(t, "unknown data type \"" + type_name + "\" (known: fp32, fp16, bf16, int32)");
          }
          p.supported |= reduction_bit(op, type);
        }
      }
      if (p.supported == 0) {  // a unit that reduces nothing would refuse every reduction, far from here
        in.fail(ops,
                "\"ops\" lists no reduction: give all, nvls or a map from operation to types "
                "(sum: [fp32, bf16]), or remove the reduction section");
      }
    }
  }
  const ReductionModel& model = reduction_model(r);
  if (model.unsupported && node["ops"] && (p.supported & model.unsupported)) {
    in.fail(node["ops"], std::string("the ") + model.name + " reduction unit does not support " +
                             describe_reductions(p.supported & model.unsupported));
  }
  p.supported &= ~model.unsupported;
  return r;
}

/// The fitted coefficients of npu.compute.classes: a mapping of class name
/// to coefficients, or the name of a file holding one (relative to the
/// platform file), as `fabricsim calibrate` writes it.
void read_compute_classes(const YamlInput& platform, const YAML::Node& node, ComputeParams& c) {
  YAML::Node map = node;
  YamlInput in = platform;
  if (node.IsScalar()) {
    std::string path = node.Scalar();
    const std::string& from = platform.file();
    if (!path.empty() && path[0] != '/' && from.find('/') != std::string::npos) {
      path = from.substr(0, from.rfind('/') + 1) + path;
    }
    try {
      map = load_yaml_file(path, "kernel classes file");
    } catch (const InputError& e) {
      platform.fail(node, std::string("npu.compute.classes names a file that cannot be read: ") + e.what());
    }
    in = YamlInput(path);
  }
  in.require_map(map, "npu.compute.classes");
  std::vector<std::string> known = {"source"};
  for (std::size_t i = 0; i < kKernelClasses; ++i) known.push_back(kernel_class_name(static_cast<KernelClass>(i)));
  in.only_keys(map, known, "npu.compute.classes");
  for (std::size_t i = 0; i < kKernelClasses; ++i) {
    const auto cls = static_cast<KernelClass>(i);
    const YAML::Node k = map[kernel_class_name(cls)];
    if (!k) continue;
    const std::string what = std::string("npu.compute.classes.") + kernel_class_name(cls);
    in.require_map(k, what);
    read_params(in, k, KernelClassParams::table(), c.of(cls), what);
  }
  c.source = in.text(map, "source", in.file());
}

/// npu.compute: the model, the NPU's facts it needs, and its classes.
void read_compute(const YamlInput& in, const YAML::Node& map, ComputeParams& c) {
  in.require_map(map, "npu.compute");
  read_params(in, map, ComputeParams::table(), c, "npu.compute", {"gemm_tiles", "classes"});
  if (const YAML::Node classes = map["classes"]) read_compute_classes(in, classes, c);
  if (const YAML::Node tiles = map["gemm_tiles"]) {
    if (!tiles.IsSequence() || tiles.size() == 0)
      in.fail(tiles, "gemm_tiles is a list of tile shapes: [256x128, 128x128]");
    c.gemm_tiles.clear();
    for (const YAML::Node& t : tiles) {
      const std::string text = t.IsScalar() ? t.Scalar() : "";
      const std::size_t x = text.find('x');
      unsigned long a = 0, b = 0;
      try {
        if (x != std::string::npos) a = std::stoul(text.substr(0, x)), b = std::stoul(text.substr(x + 1));
      } catch (const std::exception&) {
        a = 0;
      }
      if (a == 0 || b == 0 || a > 4096 || b > 4096) {
        in.fail(t, "gemm_tiles entry \"" + text + "\": a tile is ROWSxCOLUMNS of 1 to 4096 each, such as 256x128");
      }
      c.gemm_tiles.push_back({static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)});
    }
  }
}

void read_npu(const YamlInput& in, const YAML::Node& node, PlatformSpec& spec) {
  read_params(in, node, npu_section_table(), spec, "npu", {"hbm", "compute"});
  if (const YAML::Node h = node["hbm"]) spec.hbm = read_memory(in, h, "npu hbm");
  if (const YAML::Node c = node["compute"]) read_compute(in, c, spec.npu.compute);
}

void read_collectives(const YamlInput& in, const YAML::Node& node, CollectiveConfig& c,
                      std::optional<NcclSection>& nccl) {
  read_params(in, node, CollectiveConfig::table(), c, "collectives", {"algorithms", "nccl"});
  if (const YAML::Node n = node["nccl"]) nccl = read_nccl_section(in, n);
  if (c.library == CollectiveLibrary::kNccl && !nccl) {
    in.fail(node["library"] ? node["library"] : node,
            "collectives.library is nccl, and collectives.nccl does not say which NCCL: give its tuning (a library "
            "file, e.g. libraries/nccl-2.21.5.yaml beside the shipped platforms) and the GPUs' compute_capability");
  }
  if (const YAML::Node algos = node["algorithms"]) {
    in.require_map(algos, "collectives.algorithms");
    for (const auto& kv : algos) {
      const std::string type_name = kv.first.Scalar();
      const auto type = collective_from_name(type_name);
      if (!type) in.fail(kv.first, "unknown collective type \"" + type_name + "\"");
      if (!kv.second.IsScalar()) in.fail(kv.second, "an algorithm must be a name");
      const std::string algo_name = kv.second.Scalar();
      const auto algo = algorithm_from_name(algo_name);
      if (!algo) {
        in.fail(kv.second,
                "unknown algorithm \"" + algo_name +
                    "\" (known: ring, direct, halving_doubling, double_binary_tree, hierarchical, in_switch, pat)");
      }
      c.algorithm[static_cast<int>(*type)] = *algo;
    }
  }
}

/// Memories on a fabric: name, parameters, and the NPUs they serve.
std::vector<MemorySpec> read_memories(const YamlInput& in, const YAML::Node& list, const std::vector<int>& ranks,
                                      int npus) {
  if (!list.IsSequence()) in.fail(list, "\"memories\" must be a list");
  std::vector<MemorySpec> out;
  std::set<int> taken;
  for (const auto& m : list) {
    MemorySpec spec;
    spec.memory = read_memory(in, m, "a memory", {"name", "serves", "link"});
    if (m["link"]) spec.link = read_link(in, m["link"], "a memory's link");
    spec.name = in.text(m, "name", "");
    if (spec.name.empty()) in.fail(m, "a memory needs a \"name\"");
    const YAML::Node serves = m["serves"];
    if (!serves || (serves.IsScalar() && serves.Scalar() == "all")) {
      spec.serves = ranks;
    } else {
      for (int r : whole_number_list(in, serves, "serves", limits::kMaxNpus)) {
        if (r < 0 || r >= npus)
          in.fail(serves, "\"serves\" names NPU " + std::to_string(r) + ", not an NPU of the platform");
        spec.serves.push_back(r);
      }
    }
    for (int r : spec.serves) {
      if (!taken.insert(r).second) in.fail(m, "NPU " + std::to_string(r) + " is served by two memories on this fabric");
    }
    out.push_back(std::move(spec));
  }
  return out;
}

}  // namespace

/// An explicit netlist: named switches, and links between npuN and switches.
FabricSpec read_netlist(const TopologyRequest& r) {
  const YamlInput& in = r.in;
  const YAML::Node& node = r.node;
  const std::vector<int>& ranks = r.ranks;
  const LinkParams& default_link = r.link;
  const Switch::Params& default_switch = r.switch_params;
  const std::optional<ReductionSpec>& default_reduction = r.reduction;
  FabricSpec f;
  f.topology = "netlist";
  f.routing = Routing::kShortestPath;
  std::map<std::string, int> index;
  add_nics(f, ranks);
  for (std::size_t i = 0; i < f.nodes.size(); ++i) index[f.nodes[i].name] = static_cast<int>(i);
  if (const YAML::Node sws = node["switches"]) {
    if (!sws.IsSequence()) in.fail(sws, "\"switches\" must be a list");
    for (const auto& sw : sws) {
      Switch::Params params = default_switch;
      read_params(in, sw, Switch::Params::table(), params, "a netlist switch", {"name", "reduction"});
      const std::string name = in.text(sw, "name", "");
      if (name.empty()) in.fail(sw, "a netlist switch needs a \"name\"");
      if (index.count(name)) in.fail(sw, "\"" + name + "\" is declared twice");
      FabricNode n;
      n.kind = FabricNode::Kind::kSwitch;
      n.name = name;
      n.hop_latency = params.hop_latency;
      n.reduction = sw["reduction"] ? read_reduction(in, sw["reduction"]) : default_reduction;
      index[name] = static_cast<int>(f.nodes.size());
      f.nodes.push_back(n);
    }
  }
  if (const YAML::Node mems = node["memories"]) {
    Address next = static_cast<Address>(ranks.size());
    for (auto& ms : read_memories(in, mems, ranks, *std::max_element(ranks.begin(), ranks.end()) + 1)) {
      if (index.count(ms.name)) in.fail(mems, "\"" + ms.name + "\" is declared twice");
      FabricNode n;
      n.kind = FabricNode::Kind::kMemory;
      n.name = ms.name;
      n.address = next++;
      n.memory = static_cast<int>(f.memories.size());
      index[ms.name] = static_cast<int>(f.nodes.size());
      f.nodes.push_back(n);
      f.memories.push_back(std::move(ms));
    }
  }
  const YAML::Node links = in.required(node, "links", "a netlist fabric");
  if (!links.IsSequence() || links.size() == 0) in.fail(links, "\"links\" must be a non-empty list");
  for (const auto& l : links) {
    const std::string from = in.text(l, "from", ""), to = in.text(l, "to", "");
    for (const std::string* end : {&from, &to}) {
      if (end->empty()) in.fail(l, "a link needs \"from\" and \"to\"");
      if (!index.count(*end)) {
        in.fail(l, "dangling link: \"" + *end + "\" is neither a declared switch nor an NPU of this fabric");
      }
    }
    if (from == to) in.fail(l, "a link from \"" + from + "\" to itself");
    FabricEdge e;
    e.a = index[from];
    e.b = index[to];
    e.link = default_link;
    read_params(in, l, LinkParams::table(), e.link, "a netlist link", {"from", "to"});
    f.edges.push_back(e);
  }
  return f;
}

namespace {

/// A fabric's `pcie` section: the PCIe switch between each of its NICs and
/// the NPU's memory.
std::optional<PcieSwitchParams> read_pcie(const YamlInput& in, const YAML::Node& fabric, const PlatformSpec& spec) {
  const YAML::Node node = fabric["pcie"];
  if (!node) return std::nullopt;
  PcieSwitchParams p;
  read_params(in, node, PcieSwitchParams::table(), p, "fabric pcie");
  if (!PcieSwitchParams::valid_lanes(p.lanes)) {
    in.fail(node["lanes"], "pcie lanes " + std::to_string(p.lanes) + ": a PCIe port has 1, 2, 4, 8, 16 or 32 lanes");
  }
  // A switch stays within a node: the first level's groups split into whole switches.
  const std::vector<Dimension>& dims = spec.collectives.dims;
  if (dims.size() > 1 && dims[0].stride == 1 && dims[0].size % static_cast<int>(p.devices_per_switch) != 0) {
    in.fail(node["devices_per_switch"],
            "pcie devices_per_switch " + std::to_string(p.devices_per_switch) + ": a node's " +
                std::to_string(dims[0].size) + " NPUs (the first fabric's groups) do not split into PCIe switches of " +
                std::to_string(p.devices_per_switch) + ", and a switch stays within its node: give a divisor of " +
                std::to_string(dims[0].size));
  }
  if (!PcieSwitchParams::valid_lanes(p.uplink_lanes)) {
    in.fail(node["uplink_lanes"],
            "pcie uplink_lanes " + std::to_string(p.uplink_lanes) + ": a PCIe port has 1, 2, 4, 8, 16 or 32 lanes");
  }
  if (!PcieSwitchParams::valid_max_payload(p.max_payload_bytes)) {
    in.fail(node["max_payload"], "pcie max_payload " + std::to_string(p.max_payload_bytes) +
                                     " bytes: PCIe allows 128, 256, 512, 1024, 2048 or 4096");
  }
  if (!spec.hbm) {
    in.fail(node,
            "a pcie section puts a PCIe switch between each NIC and its NPU's memory, and this platform has "
            "none: give npu.hbm, or leave pcie out");
  }
  return p;
}

/// One fabric entry of the platform file: a generator, possibly replicated
/// over groups of NPUs.
std::vector<FabricSpec> read_fabric(const YamlInput& in, const YAML::Node& node, const PlatformSpec& spec,
                                    std::size_t index, std::vector<std::string>& notes) {
  const std::string topology = in.text(node, "topology", "");
  if (topology.empty()) in.fail(node, "missing \"topology\" in fabric");
  const TopologyKind* kind = find_topology(topology);
  if (!kind) in.fail(node["topology"], "unknown topology \"" + topology + "\" (known: " + topology_names() + ")");
  std::vector<std::string> keys = {"name",      "topology",  "link",        "uplink",       "switch",
                                   "nic",       "transport", "group_size",  "group_stride", "memories",
                                   "algorithm", "pcie",      "gpus_per_nic"};
  keys.insert(keys.end(), kind->keys.begin(), kind->keys.end());
  in.only_keys(node, keys, "a " + topology + " fabric");
  LinkParams link;
  if (node["link"]) link = read_link(in, node["link"], "fabric link");
  LinkParams uplink = link;
  if (node["uplink"]) uplink = read_link(in, node["uplink"], "fabric uplink", link);
  Switch::Params switch_params;
  std::optional<ReductionSpec> reduction;
  if (const YAML::Node sw = node["switch"]) {
    read_params(in, sw, Switch::Params::table(), switch_params, "fabric switch", {"reduction"});
    if (sw["reduction"]) reduction = read_reduction(in, sw["reduction"]);
  }
  TransportSpec transport;
  if (const YAML::Node t = node["transport"]) {
    read_params(in, t, transport_spec_table(), transport, "fabric transport");
    if (transport.ecn_kmax < transport.ecn_kmin) {
      in.fail(t["ecn_kmax"] ? t["ecn_kmax"] : t,
              "ecn_kmax (" + std::to_string(transport.ecn_kmax) + " bytes) is below ecn_kmin (" +
                  std::to_string(transport.ecn_kmin) + " bytes): marking rises from kmin to kmax");
    }
    if (transport.pfc_xoff > 0 && transport.pfc_xon > transport.pfc_xoff) {
      in.fail(t["pfc_xon"], "pfc_xon is above pfc_xoff: a paused link would never resume");
    }
    using CC = TransportSpec::CongestionControl;
    const CC cc = transport.control();
    const YAML::Node where = t["congestion_control"] ? t["congestion_control"] : t;
    if (transport.kind == TransportSpec::Kind::kTcp && cc != CC::kReno && cc != CC::kDctcp) {
      in.fail(where,
              "transport tcp takes congestion_control reno or dctcp (a lossy fabric needs a window to recover drops)");
    }
    if (transport.kind == TransportSpec::Kind::kRoce && cc == CC::kReno) {
      in.fail(where, "transport roce takes congestion_control none, dcqcn or dctcp");
    }
    if (!transport.ethernet() && cc != CC::kNone) {
      in.fail(where, "congestion_control needs an Ethernet transport (kind: roce or tcp)");
    }
    // Keys of another transport are taken (a platform may keep a sweep's
    // settings) but said: a user who set tcp_rto on RoCE should know it does
    // nothing.
    for (const auto& kv : t) {
      const std::string key = kv.first.Scalar();
      const std::string why = unused_transport_key(key, transport);
      if (!why.empty()) notes.push_back(in.where(kv.first) + ": transport." + key + " has no effect: " + why);
    }
    const bool per_packet =
        transport.load_balancing == PortChoice::kAdaptive || transport.load_balancing == PortChoice::kSpray;
    if (per_packet && transport.needs_order()) {
      in.fail(t["load_balancing"], std::string("load_balancing ") +
                                       (transport.load_balancing == PortChoice::kAdaptive ? "adaptive" : "spray") +
                                       " reorders a flow's packets, and the window transport (congestion_control " +
                                       (cc == CC::kReno ? "reno" : "dctcp") +
                                       ") finds losses by their order: it takes load_balancing ecmp");
    }
  }
  const int size =
      static_cast<int>(in.count(node, "group_size", static_cast<std::uint64_t>(spec.npus), 1, limits::kMaxNpus));
  const int stride = static_cast<int>(in.count(node, "group_stride", 1, 1, limits::kMaxNpus));
  std::vector<std::vector<int>> groups;
  try {
    groups = rank_groups(spec.npus, size, stride);
  } catch (const std::invalid_argument& e) {
    in.fail(node["group_size"] ? node["group_size"] : node, e.what());
  }
  const std::string name = in.text(node, "name", "fabric" + std::to_string(index));
  // NICs shared by several NPUs: the topology is made over the NICs (the
  // first NPU of each group), and each NIC then serves its group.
  const int per_nic = static_cast<int>(in.count(node, "gpus_per_nic", 1, 1, 64));
  if (per_nic > 1 && node["memories"]) {
    in.fail(node["gpus_per_nic"], "gpus_per_nic and memories on one fabric: put the memories on a fabric of their own");
  }
  if (per_nic > 1 && stride != 1) {
    in.fail(node["gpus_per_nic"], "gpus_per_nic shares a NIC among consecutive NPUs of a group, and group_stride " +
                                      std::to_string(stride) + " makes a group of NPUs apart: give group_stride 1");
  }
  if (per_nic > 1 && reduction) {
    in.fail(node["gpus_per_nic"],
            "gpus_per_nic with switch reduction units: in-network reduction of NICs shared by several GPUs (their "
            "contributions combined before the port, as NCCL's CollNet does inside a node) is not modelled; give "
            "gpus_per_nic 1, or drop switch.reduction");
  }
  if (per_nic > 1 && size % per_nic != 0) {
    in.fail(node["gpus_per_nic"], "gpus_per_nic " + std::to_string(per_nic) +
                                      " does not divide the fabric's group of " + std::to_string(size) + " NPUs");
  }
  std::vector<FabricSpec> out;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& ranks = groups[g];
    std::vector<int> ports;
    for (std::size_t k = 0; k < ranks.size(); k += static_cast<std::size_t>(per_nic)) ports.push_back(ranks[k]);
    FabricSpec f;
    try {
      f = kind->make(TopologyRequest{in, node, ports, link, uplink, switch_params, reduction});
    } catch (const std::invalid_argument& e) {
      in.fail(node, e.what());
    }
    f.name = groups.size() == 1 ? name : name + std::to_string(g);
    f.transport = transport;
    if (g == 0) {  // sections the topology has no use for: said, once per fabric entry
      const bool has_switch = std::any_of(f.nodes.begin(), f.nodes.end(),
                                          [](const FabricNode& v) { return v.kind == FabricNode::Kind::kSwitch; });
      if (node["switch"] && !has_switch) {
        notes.push_back(in.where(node["switch"]) + ": switch has no effect: a " + topology + " fabric has no switches");
      }
      if (transport.load_balancing == PortChoice::kDestination && topology != "fat_tree") {
        notes.push_back(in.where(node["transport"]["load_balancing"]) +
                        ": load_balancing destination has no effect: it chooses among a fat tree's up ports");
      }
      if (node["uplink"] && topology != "fat_tree") {
        notes.push_back(in.where(node["uplink"]) +
                        ": uplink has no effect: only a fat_tree has links above its leaves");
      }
    }
    if (transport.load_balancing != PortChoice::kFlowHash && f.routing == Routing::kDimensionOrder) {
      in.fail(node["transport"]["load_balancing"],
              "load_balancing picks among equal-cost ports, and a " + topology +
                  " fabric routes by dimension order (one path per destination): it takes load_balancing ecmp");
    }
    if (transport.ethernet()) {
      for (const FabricEdge& e : f.edges) {
        if (e.ring < 0) continue;
        in.fail(node["transport"],
                "transport " + std::string(transport.lossless_ethernet() ? "roce" : "tcp") + " on a " + topology +
                    " fabric: its rings rely on credit (bubble) flow control, and PFC on a ring "
                    "can deadlock; Ethernet transports are accepted on fabrics without rings (switch, fat_tree, "
                    "levels, mesh, fully_connected, netlist)");
      }
    }
    if (reduction && topology != "netlist") {
      bool any = false;
      for (FabricNode& n : f.nodes) {
        if (n.kind == FabricNode::Kind::kSwitch) {
          n.reduction = reduction;
          any = true;
        }
      }
      if (!any)
        in.fail(node["switch"]["reduction"], "a " + topology + " fabric has no switches to hold reduction units");
    }
    if (transport.model == TransportSpec::Model::kFlow) {
      // Switch reduction units are not modelled as flows: the fabric runs
      // without them (the platform notes it), so no collective is planned
      // on them and NCCL's tuner does not count them.
      for (FabricNode& n : f.nodes) {
        if (n.reduction) f.reduction_units_dropped = true;
        n.reduction.reset();
      }
    }
    if (const YAML::Node mems = node["memories"]; mems && topology != "netlist") {
      try {
        attach_memories(f, read_memories(in, mems, ranks, spec.npus), link);
      } catch (const std::invalid_argument& e) {
        in.fail(mems, e.what());
      }
    }
    if (per_nic > 1) {
      // A NIC's functions and its port are one chip: no wire between them.
      LinkParams inner = link;
      inner.latency = 0;
      try {
        share_nics(f, ranks, per_nic, inner);
      } catch (const std::invalid_argument& e) {
        in.fail(node["gpus_per_nic"], e.what());
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

/// a * b for NPU counts, held past the largest platform instead of
/// overflowing: group sizes of 65,536 twice are 2^32.
int capped_product(int a, int b) {
  const std::int64_t p = static_cast<std::int64_t>(a) * b;
  return static_cast<int>(std::min<std::int64_t>(p, 2 * static_cast<std::int64_t>(limits::kMaxNpus)));
}

/// What the default choices' cost model needs of a fabric
/// (PlatformHints::FabricCosts), read off its first NIC: its overheads, the
/// payload its links carry per second (headers taken off, at most its
/// injection bandwidth), and a hop's latency (two of its links and its
/// slowest switch).
PlatformHints::FabricCosts protocol_costs(const FabricSpec& f) {
  PlatformHints::FabricCosts c;
  int first = -1;
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    if (f.nodes[i].kind != FabricNode::Kind::kNic) continue;
    c.npus.push_back(f.nodes[i].npu);
    if (first < 0) first = static_cast<int>(i);
  }
  std::sort(c.npus.begin(), c.npus.end());
  if (first < 0) return c;
  // A shared NIC: its port's links, shared by its functions.
  int port = first;
  for (const FabricEdge& e : f.edges) {
    const int other = e.a == first ? e.b : e.b == first ? e.a : -1;
    if (other >= 0 && f.nodes[static_cast<std::size_t>(other)].nic_port) port = other;
  }
  double bytes_per_second = 0;
  Tick latency = 0, switch_latency = 0;
  for (const FabricEdge& e : f.edges) {
    if (e.internal || (e.a != port && e.b != port)) continue;
    const int other = e.a == port ? e.b : e.a;
    if (port != first && f.nodes[static_cast<std::size_t>(other)].kind == FabricNode::Kind::kNic) continue;
    bytes_per_second += e.link.bandwidth.bytes_per_ps() * 1e12;
    latency = std::max(latency, e.link.latency);
  }
  if (port != first) bytes_per_second /= std::max(1, f.gpus_per_nic);
  for (const FabricNode& n : f.nodes) {
    if (n.kind == FabricNode::Kind::kSwitch && !n.nic_port) switch_latency = std::max(switch_latency, n.hop_latency);
  }
  if (!f.nic.injection.is_unlimited()) {
    bytes_per_second = std::min(bytes_per_second, f.nic.injection.bytes_per_ps() * 1e12);
  }
  const double mtu = static_cast<double>(f.nic.mtu_bytes), header = static_cast<double>(f.nic.header_bytes);
  c.bandwidth = bytes_per_second * mtu / (mtu + header);
  c.header_share = header / (mtu + header);
  c.step[0] = f.nic.step_overhead_simple;
  c.step[1] = f.nic.step_overhead_ll;
  c.step[2] = f.nic.step_overhead_ll128;
  c.plain = f.nic.message_overhead;
  c.hop = 2 * latency + switch_latency;
  c.segment = f.nic.segment_bytes;
  return c;
}

/// An unset `nic.read_ahead` on a fabric whose NICs read the NPU's memory:
/// as deep as a port's rate and a frame's read need (NicParams::derived_read_ahead).
/// A read waits the memory's latency, and through a PCIe switch a crossing
/// each way (staged through host memory, another crossing and the host's
/// latency); it moves its bytes at the memory's bandwidth shared by every
/// port of the NIC reading and writing at once, or the PCIe port's rate if
/// that is slower.
void resolve_read_ahead(const PlatformSpec& spec, FabricSpec& f) {
  if (f.nic.read_ahead_bytes != 0 || !spec.hbm) return;
  Tick path = spec.hbm->latency;
  double read = spec.hbm->bandwidth.bytes_per_ps();
  Bandwidth port;  // a NIC's port: its first link
  int ports = 0;
  for (std::size_t i = 0; i < f.nodes.size() && ports == 0; ++i) {
    if (f.nodes[i].kind != FabricNode::Kind::kNic) continue;
    for (const FabricEdge& e : f.edges) {
      if (e.internal || (e.a != static_cast<int>(i) && e.b != static_cast<int>(i))) continue;
      if (ports++ == 0) port = e.link.bandwidth;
    }
  }
  read /= 2.0 * std::max(1, ports);
  if (f.pcie) {
    path += 2 * f.pcie->latency;
    if (f.pcie->stages_reads()) path += f.pcie->latency + f.pcie->host_latency;
    read = std::min(read, f.pcie->data_bandwidth().bytes_per_ps());
  }
  f.nic.read_ahead_bytes =
      NicParams::derived_read_ahead(port, path, Bandwidth::bytes_per_second(read * 1e12), f.nic.segment_bytes);
}

PlatformSpec read_platform(const std::string& path, const std::vector<YamlOverride>& overrides) {
  const YamlDocument doc = load_yaml_document(path, overrides);
  const YAML::Node& root = doc.root;
  if (is_astra_network(root)) return read_astra_network(doc);
  const YamlInput& in = doc.in;
  in.only_keys(root, {"name", "npus", "npu", "nic", "collectives", "fabrics"}, "the platform");
  PlatformSpec spec;
  spec.file = path;
  spec.name = in.text(root, "name", file_stem(path));
  if (!root["npus"]) in.fail(root, "missing \"npus\" in the platform");
  spec.npus = static_cast<int>(in.count(root, "npus", 0, 1, limits::kMaxNpus));
  if (root["npu"]) read_npu(in, root["npu"], spec);
  NicParams nic_defaults;
  if (root["nic"]) read_params(in, root["nic"], NicParams::table(), nic_defaults, "nic");
  std::optional<NcclSection> nccl;
  if (root["collectives"]) read_collectives(in, root["collectives"], spec.collectives, nccl);
  const YAML::Node fabrics = in.required(root, "fabrics", "the platform");
  if (!fabrics.IsSequence() || fabrics.size() == 0) in.fail(fabrics, "\"fabrics\" must be a non-empty list");
  // Each fabric entry is a dimension of the platform (for hierarchical
  // collectives and the default choice of algorithm); one that spans every
  // NPU after smaller ones is the dimension joining their groups.
  std::vector<std::string> shapes;
  int covered = 1;
  for (std::size_t i = 0; i < fabrics.size(); ++i) {
    in.require_map(fabrics[i], "a fabric");
    const int size = static_cast<int>(
        in.count(fabrics[i], "group_size", static_cast<std::uint64_t>(spec.npus), 1, limits::kMaxNpus));
    const int stride = static_cast<int>(in.count(fabrics[i], "group_stride", 1, 1, limits::kMaxNpus));
    const std::string topology = in.text(fabrics[i], "topology", "");
    Dimension dim;
    // A fabric whose groups hold whole groups of the levels below (all the
    // NPUs, or a server's PCIe tree over NVLink-bridged pairs) is the level
    // joining them: its size counts those groups, `covered` NPUs apart.
    if (covered > 1 && stride == 1 && size % covered == 0) {
      dim.size = size / covered;
      dim.stride = covered;
    } else {
      dim.size = size;
      dim.stride = stride;
    }
    if (dim.size <= 1) continue;
    shapes.push_back(topology);
    // Reduction units in a dimension's switches: in-switch within it, unless
    // the fabric names the algorithm its level of a hierarchical collective runs.
    if (fabrics[i]["switch"] && fabrics[i]["switch"]["reduction"]) dim.algorithm = AlgorithmKind::kInSwitch;
    if (const YAML::Node a = fabrics[i]["algorithm"]) {
      const auto algo = a.IsScalar() ? algorithm_from_name(a.Scalar()) : std::nullopt;
      if (!algo || !runs_a_level(*algo)) {
        in.fail(a, "\"algorithm\" " + (a.IsScalar() ? "\"" + a.Scalar() + "\"" : std::string("must be a name")) +
                       ": this fabric's level of a hierarchical collective runs ring, direct, halving_doubling, "
                       "double_binary_tree (last level only) or in_switch");
      }
      dim.algorithm = *algo;
      dim.named = true;
    }
    if ((topology == "torus" || topology == "mesh") && fabrics[i]["dims"] && fabrics[i]["dims"].IsSequence()) {
      // A torus is a dimension per axis (x fastest).
      int axis_stride = dim.stride;
      for (const auto& d : fabrics[i]["dims"]) {
        Dimension axis;
        axis.algorithm = dim.algorithm;
        axis.size = static_cast<int>(in.count_at(d, "an entry of \"dims\"", 1, limits::kMaxNpus));
        axis.stride = axis_stride;
        axis_stride = capped_product(axis_stride, axis.size);
        if (axis.size > 1) spec.collectives.dims.push_back(axis);
      }
    } else {
      spec.collectives.dims.push_back(dim);
    }
    covered = capped_product(covered, dim.size);
  }
  if (shapes.size() > 1) {
    spec.hints.shape = "multi_dimensional";
  } else if (!shapes.empty()) {
    spec.hints.shape = shapes.front() == "unidirectional_ring" ? "ring" : shapes.front();
  }
  for (std::size_t i = 0; i < fabrics.size(); ++i) {
    NicParams nic = nic_defaults;
    if (fabrics[i]["nic"]) read_params(in, fabrics[i]["nic"], NicParams::table(), nic, "fabric nic");
    const std::optional<PcieSwitchParams> pcie = read_pcie(in, fabrics[i], spec);
    std::vector<std::string> notes;
    for (FabricSpec& f : read_fabric(in, fabrics[i], spec, i, notes)) {
      f.nic = nic;
      f.pcie = pcie;
      if (pcie && pcie->devices_per_switch % static_cast<unsigned>(f.gpus_per_nic) != 0) {
        in.fail(
            fabrics[i]["pcie"]["devices_per_switch"] ? fabrics[i]["pcie"]["devices_per_switch"] : fabrics[i]["pcie"],
            "pcie devices_per_switch " + std::to_string(pcie->devices_per_switch) + " with gpus_per_nic " +
                std::to_string(f.gpus_per_nic) +
                ": a shared NIC sits on the PCIe switch of the GPUs it serves, "
                "so a switch holds a whole number of them: give a multiple of " +
                std::to_string(f.gpus_per_nic));
      }
      if (nic.stripe && f.transport.needs_order()) {
        in.fail(fabrics[i]["nic"] && fabrics[i]["nic"]["stripe"] ? fabrics[i]["nic"] : root["nic"],
                "nic.stripe spreads a message's frames over several ports, which reorders them, and fabric \"" +
                    f.name +
                    "\"'s window transport finds losses by their order: a striped NIC takes transport "
                    "credit, infiniband, or roce without congestion_control dctcp");
      }
      for (const auto& other : spec.fabrics) {
        if (other.name == f.name) in.fail(fabrics[i], "two fabrics are named \"" + f.name + "\"");
      }
      spec.fabrics.push_back(std::move(f));
    }
    spec.notes.insert(spec.notes.end(), notes.begin(), notes.end());
  }
  for (FabricSpec& f : spec.fabrics) resolve_read_ahead(spec, f);
  for (const FabricSpec& f : spec.fabrics) spec.hints.fabric_costs.push_back(protocol_costs(f));
  for (const FabricSpec& f : spec.fabrics) {
    std::vector<int> domain;
    bool units = false, pull = false;
    for (const FabricNode& n : f.nodes) {
      if (n.kind == FabricNode::Kind::kNic) domain.push_back(n.npu);
      const bool unit = n.kind == FabricNode::Kind::kSwitch && n.reduction.has_value();
      units |= unit;
      pull |= unit && n.reduction->pull;
    }
    if (!units || domain.size() < 2) continue;
    std::sort(domain.begin(), domain.end());
    spec.hints.in_switch_domains.push_back(std::move(domain));
    spec.hints.in_switch_pull.push_back(pull);
  }
  if (nccl) {
    NcclMachine machine = nccl_machine(spec);
    if (nccl->settings.nvlinks > 0) machine.nvlinks_per_gpu = static_cast<int>(nccl->settings.nvlinks);
    auto tuner = std::make_shared<const NcclTuner>(std::move(nccl->tuning), nccl->settings, machine);
    // NCCL counts NVLinks and takes each at its generation's speed: a
    // netlist link far faster than one NVLink stands for several.
    const double per_link = tuner->nvlink_bw();
    if (nccl->settings.nvlinks == 0 && nccl->settings.intra == NcclSettings::IntraLink::kNvlink && per_link > 0 &&
        machine.nvlink_lane_GBps > 1.5 * per_link) {
      std::ostringstream msg;
      msg << "collectives.nccl: NPU 0's NVLink in the netlist carries " << machine.nvlink_lane_GBps
          << " GB/s per lane, more than one NVLink (NCCL takes " << per_link << " GB/s per link at compute capability "
          << nccl->settings.compute_capability
          << "), and NCCL's search counts links: give the link's NVLinks as the fabric's lanes, or "
             "collectives.nccl.nvlinks";
      in.fail(root["collectives"]["nccl"], msg.str());
    }
    spec.hints.nccl = std::move(tuner);
  }
  return spec;
}

}  // namespace

PlatformSpec load_platform(const std::string& path, const std::vector<YamlOverride>& overrides) {
  return naming_yaml_errors(path, [&] { return read_platform(path, overrides); });
}

}  // namespace fabricsim
