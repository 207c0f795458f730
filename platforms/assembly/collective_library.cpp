#include "platforms/assembly/collective_library.h"

#include <algorithm>
#include <set>

#include "platforms/assembly/platform_spec.h"

namespace fabricsim {

namespace {
constexpr double kMaxGBps = 1e6;
constexpr double kMaxUs = 1e6;

/// A list of exactly `n` numbers in [min, max].
std::vector<double> numbers(const YamlInput& in, const YAML::Node& node, const std::string& what, std::size_t n,
                            double min, double max) {
  if (!node.IsSequence() || (n > 0 && node.size() != n)) {
    in.fail(node, what + " must be a list of " + (n > 0 ? std::to_string(n) + " " : std::string()) + "numbers");
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    out.push_back(in.number_at(node[i], what + "[" + std::to_string(i) + "]", min, max));
  }
  return out;
}

template <std::size_t N>
std::array<double, N> fixed(const YamlInput& in, const YAML::Node& node, const std::string& what, double min,
                            double max) {
  const auto v = numbers(in, node, what, N, min, max);
  std::array<double, N> out{};
  std::copy(v.begin(), v.end(), out.begin());
  return out;
}

/// [rows][3]: a table of NCCL's by GPU (or CPU) row and nodes column.
std::array<NcclTuning::PerNodes, 3> by_rows(const YamlInput& in, const YAML::Node& map, const char* key) {
  const YAML::Node node = in.required(map, key, "a library file");
  if (!node.IsSequence() || node.size() != 3) in.fail(node, std::string(key) + " must be a list of 3 rows");
  std::array<NcclTuning::PerNodes, 3> out{};
  for (std::size_t r = 0; r < 3; ++r) {
    out[r] = fixed<3>(in, node[r], std::string(key) + "[" + std::to_string(r) + "]", 0, kMaxGBps);
  }
  return out;
}

/// Per algorithm (by key), three protocols' values.
/// Every algorithm the file lists (`has`) needs its row: a missing one
/// would cost nothing and win every choice.
std::array<NcclTuning::PerProtocol, kNcclAlgorithms> per_algorithm(const YamlInput& in, const YAML::Node& map,
                                                                   const std::string& what,
                                                                   const std::array<bool, kNcclAlgorithms>& has) {
  in.require_map(map, what);
  std::vector<std::string> known;
  for (int a = 0; a < kNcclAlgorithms; ++a) known.push_back(key_of(static_cast<NcclAlgorithm>(a)));
  in.only_keys(map, known, what);
  std::array<NcclTuning::PerProtocol, kNcclAlgorithms> out{};
  for (int a = 0; a < kNcclAlgorithms; ++a) {
    const char* key = key_of(static_cast<NcclAlgorithm>(a));
    if (const YAML::Node v = map[key]) {
      out[a] = fixed<3>(in, v, what + "." + key, 0, kMaxUs);
    } else if (has[a]) {
      in.fail(map,
              what + " has no row for " + key + ", which \"algorithms\" lists: give its LL, LL128 and Simple values");
    }
  }
  return out;
}

std::vector<double> speeds(const YamlInput& in, const YAML::Node& map, const char* key) {
  const auto v = numbers(in, in.required(map, key, "a library file"), key, 0, 0.001, kMaxGBps);
  if (v.empty()) in.fail(map[key], std::string(key) + " is empty: the search needs at least one speed");
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (v[i] >= v[i - 1]) in.fail(map[key][i], std::string(key) + " must be in decreasing order, as NCCL tries them");
  }
  return v;
}
}  // namespace

NcclTuning read_nccl_tuning(const std::string& path) {
  const YAML::Node root = load_yaml_file(path, "collective library file");
  const YamlInput in(path);
  in.require_map(root, "a library file");
  in.only_keys(root,
               {"library",
                "version",
                "source",
                "algorithms",
                "base_latency",
                "hw_latency",
                "ll_max_bw",
                "per_ch_max_ring_ll128_bw",
                "per_ch_max_tree_ll128_bw",
                "per_ch_max_tree_bw",
                "tree_correction",
                "nvlink_bw",
                "speeds_intra",
                "speeds_inter",
                "sm90_speeds_intra",
                "sm90_speeds_inter",
                "ring_ll",
                "ring_ll128",
                "ring_ll128_one_per_node",
                "tree",
                "tree_ll",
                "tree_ll128_one_node",
                "tree_ll128",
                "nvls_ratio",
                "pat",
                "ring_plateau",
                "ring_plateau_before_sm80",
                "net_overhead",
                "inter_steps_minus_one",
                "thread_threshold",
                "collnet_thread_threshold",
                "max_threads",
                "max_channels",
                "nvls_channels",
                "pci_bw"},
               "a library file");
  NcclTuning t;
  // Which library of NCCL's family the tables are (nccl, rccl, a vendor's
  // build): a name for reports; the tuner's formulas are NCCL's.
  t.library = in.text(root, "library", "nccl");
  if (t.library.empty()) in.fail(root["library"], "library must name the library the tables are of (nccl, rccl, ...)");
  t.version = in.text(root, "version", "");
  if (t.version.empty())
    in.fail(root, "a library file must say which version its tables are from (version: \"2.21.5\")");
  t.source = in.text(root, "source", "");
  const YAML::Node algos = in.required(root, "algorithms", "a library file");
  if (!algos.IsSequence() || algos.size() == 0) in.fail(algos, "\"algorithms\" must be a non-empty list");
  for (const auto& a : algos) {
    bool known = false;
    for (int k = 0; k < kNcclAlgorithms; ++k) {
      if (a.IsScalar() && a.Scalar() == key_of(static_cast<NcclAlgorithm>(k))) {
        t.has[k] = known = true;
      }
    }
    if (!known) {
      in.fail(a, "unknown algorithm \"" + (a.IsScalar() ? a.Scalar() : std::string("?")) +
                     "\" (known: tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat)");
    }
  }
  t.base_latency = per_algorithm(in, in.required(root, "base_latency", "a library file"), "base_latency", t.has);
  const YAML::Node hw = in.required(root, "hw_latency", "a library file");
  in.require_map(hw, "hw_latency");
  in.only_keys(hw, {"nvlink", "pci", "net"}, "hw_latency");
  const char* links[3] = {"nvlink", "pci", "net"};
  for (int l = 0; l < 3; ++l) {
    t.hw_latency[l] =
        per_algorithm(in, in.required(hw, links[l], "hw_latency"), std::string("hw_latency.") + links[l], t.has);
  }
  t.ll_max_bw = by_rows(in, root, "ll_max_bw");
  t.per_ch_max_ring_ll128_bw = by_rows(in, root, "per_ch_max_ring_ll128_bw");
  t.per_ch_max_tree_ll128_bw = by_rows(in, root, "per_ch_max_tree_ll128_bw");
  t.per_ch_max_tree_bw = by_rows(in, root, "per_ch_max_tree_bw");
  const YAML::Node corr = in.required(root, "tree_correction", "a library file");
  if (!corr.IsSequence() || corr.size() != kNcclProtocols)
    in.fail(corr, "tree_correction must be a list of 3 rows (LL, LL128, Simple)");
  for (std::size_t p = 0; p < kNcclProtocols; ++p) {
    t.tree_correction[p] = fixed<23>(in, corr[p], "tree_correction[" + std::to_string(p) + "]", 0.001, 10);
  }
  const YAML::Node nvl = in.required(root, "nvlink_bw", "a library file");
  in.require_map(nvl, "nvlink_bw");
  for (const auto& kv : nvl) {
    const auto cc = static_cast<int>(in.count_at(kv.first, "a compute capability of nvlink_bw", 10, 1000));
    t.nvlink_bw[cc] = in.number_at(kv.second, "nvlink_bw." + kv.first.Scalar(), 0.001, kMaxGBps);
  }
  t.speeds_intra = speeds(in, root, "speeds_intra");
  t.speeds_inter = speeds(in, root, "speeds_inter");
  t.sm90_speeds_intra = speeds(in, root, "sm90_speeds_intra");
  t.sm90_speeds_inter = speeds(in, root, "sm90_speeds_inter");
  const auto factor = [&](const char* key, double& v) {
    if (root[key]) v = in.number_at(root[key], key, 0, 10);
  };
  factor("ring_ll", t.ring_ll);
  factor("ring_ll128", t.ring_ll128);
  factor("ring_ll128_one_per_node", t.ring_ll128_one_per_node);
  factor("tree", t.tree);
  factor("tree_ll", t.tree_ll);
  factor("tree_ll128_one_node", t.tree_ll128_one_node);
  factor("tree_ll128", t.tree_ll128);
  factor("nvls_ratio", t.nvls_ratio);
  factor("pat", t.pat);
  factor("ring_plateau", t.ring_plateau);
  factor("ring_plateau_before_sm80", t.ring_plateau_before_sm80);
  if (root["net_overhead"]) t.net_overhead = fixed<2>(in, root["net_overhead"], "net_overhead", 0, kMaxUs);
  if (const YAML::Node v = root["inter_steps_minus_one"]) {
    if (!v.IsScalar() || (v.Scalar() != "true" && v.Scalar() != "false"))
      in.fail(v, "inter_steps_minus_one must be true or false");
    t.inter_steps_minus_one = v.Scalar() == "true";
  }
  const auto counts = [&](const char* key, std::array<int, kNcclProtocols>& v) {
    if (!root[key]) return;
    const auto n = numbers(in, root[key], key, kNcclProtocols, 1, 1 << 20);
    for (int p = 0; p < kNcclProtocols; ++p) v[p] = static_cast<int>(n[p]);
  };
  counts("thread_threshold", t.thread_threshold);
  counts("max_threads", t.max_threads);
  const auto count = [&](const char* key, int& v, std::uint64_t min, std::uint64_t max) {
    if (root[key]) v = static_cast<int>(in.count_at(root[key], key, min, max));
  };
  count("collnet_thread_threshold", t.collnet_thread_threshold, 1, 1 << 20);
  count("max_channels", t.max_channels, 2, 1024);
  count("nvls_channels", t.nvls_channels, 1, 1024);
  if (root["pci_bw"]) t.pci_bw = in.number_at(root["pci_bw"], "pci_bw", 0, kMaxGBps);
  return t;
}

NcclSection read_nccl_section(const YamlInput& platform, const YAML::Node& node) {
  platform.require_map(node, "collectives.nccl");
  NcclSection s;
  read_params(platform, node, NcclSettings::table(), s.settings, "collectives.nccl", {"tuning"});
  // NCCL fails every collective when nothing is left to run ("no
  // algorithm/protocol available"); CollNet alone falls back to ring and
  // tree where it cannot run, so it counts.
  const NcclSettings& set = s.settings;
  if (!set.ll && set.ll128 == NcclSettings::Switch::kOff && !set.simple) {
    platform.fail(node,
                  "collectives.nccl enables no protocol (ll, ll128 and simple all off): NCCL would fail every "
                  "collective; enable at least one");
  }
  bool any = false;
  for (int a = 0; a < kNcclAlgorithms; ++a) any = any || set.allows(static_cast<NcclAlgorithm>(a));
  if (!any) {
    platform.fail(node,
                  "collectives.nccl enables no algorithm (ring, tree, nvls, nvls_tree, collnet_direct, "
                  "collnet_chain and pat all false): NCCL would fail every collective; enable at least one");
  }
  const YAML::Node file = platform.required(node, "tuning", "collectives.nccl");
  if (!file.IsScalar() || file.Scalar().empty())
    platform.fail(file, "collectives.nccl.tuning must name a library file");
  std::string path = file.Scalar();
  const std::string& from = platform.file();
  if (path[0] != '/' && from.find('/') != std::string::npos) path = from.substr(0, from.rfind('/') + 1) + path;
  try {
    s.tuning = read_nccl_tuning(path);
  } catch (const InputError& e) {
    platform.fail(file, std::string("collectives.nccl.tuning names a library file that cannot be used: ") + e.what());
  }
  s.tuning_file = path;
  return s;
}

namespace {
/// The fabric's NIC node of NPU `npu`, or -1.
int nic_of(const FabricSpec& f, int npu) {
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    if (f.nodes[i].kind == FabricNode::Kind::kNic && f.nodes[i].npu == npu) return static_cast<int>(i);
  }
  return -1;
}

bool joins(const FabricSpec& f, int a, int b) {
  return nic_of(f, a) >= 0 && nic_of(f, b) >= 0;
}

/// PCIe as NCCL's topology counts it: lanes x the generation's rate (in
/// 100 Mb/s per lane, topo.cc's kvDictPciGen) / 80, in GB/s.
double nccl_pci_bw(const PcieSwitchParams& p) {
  static const double rate[] = {0, 15, 30, 60, 120, 240, 480};
  const unsigned gen = std::min<unsigned>(p.generation, 6);
  return p.lanes * rate[gen] / 80.0;
}
}  // namespace

NcclMachine nccl_machine(const PlatformSpec& spec) {
  NcclMachine m;
  // A node: every level but the top one (NVLink bridges and a PCIe tree
  // are both inside a server), the top's stride in ASTRA-sim's layout.
  const auto& dims = spec.collectives.dims;
  m.gpus_per_node = dims.size() >= 2 ? dims.back().stride : spec.npus;
  const int g = m.gpus_per_node;
  // The GPUs' own links: the first fabric joining NPU 0 to NPU 1.
  const FabricSpec* intra = nullptr;
  for (const FabricSpec& f : spec.fabrics) {
    if (g > 1 && joins(f, 0, 1)) {
      intra = &f;
      break;
    }
  }
  if (intra) {
    const int nic = nic_of(*intra, 0);
    for (const FabricEdge& e : intra->edges) {
      if (e.internal || (e.a != nic && e.b != nic)) continue;
      m.nvlinks_per_gpu += e.lanes;
      m.nvlink_lane_GBps = std::max(m.nvlink_lane_GBps, e.link.bandwidth.GBps_value() / std::max(1, e.lanes));
    }
    for (const FabricNode& n : intra->nodes) {
      if (n.kind != FabricNode::Kind::kSwitch) continue;
      m.nvswitch = true;
      if (n.reduction && n.reduction->pull) m.nvls_units = true;
    }
  }
  // The network: the first fabric joining NPU 0 to the next node's first
  // NPU; on one node, the first other fabric NPU 0 is on.
  const FabricSpec* net = nullptr;
  for (const FabricSpec& f : spec.fabrics) {
    if (&f == intra || nic_of(f, 0) < 0) continue;
    if (g < spec.npus ? joins(f, 0, g) : true) {
      net = &f;
      break;
    }
  }
  if (net) {
    std::set<int> nics;
    for (int r = 0; r < g; ++r) {
      if (nic_of(*net, r) >= 0) nics.insert(nic_of(*net, r));
    }
    // Physical NICs: a shared one serves gpus_per_nic of the node's GPUs,
    // all on its PCIe switch (PIX), as NCCL's ncclTopoGetLocalNet maps them.
    m.nics_per_node = std::max(1, static_cast<int>(nics.size()) / std::max(1, net->gpus_per_nic));
    m.nic_beside_gpu = net->gpus_per_nic == 1 ? static_cast<int>(nics.size()) >= g
                                              : net->pcie.has_value() && net->pcie->devices_per_switch >= 2;
    const int nic = nic_of(*net, 0);
    for (const FabricEdge& e : net->edges) {
      if (!e.internal && (e.a == nic || e.b == nic)) {
        m.nic_bw = e.link.bandwidth.bytes_per_ps() * 1e12 / 1e9;  // NCCL: the port's Gb/s / 8
        break;
      }
    }
    if (net->pcie) m.pci_bw = nccl_pci_bw(*net->pcie);
    for (const FabricNode& n : net->nodes) {
      if (n.kind == FabricNode::Kind::kSwitch && n.reduction && !n.reduction->pull) m.sharp_units = true;
    }
  }
  return m;
}

}  // namespace fabricsim
