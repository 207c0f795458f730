#include "models/collectives/nccl_tuner.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim {

namespace {
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr int kNvlinkHw = 0, kPciHw = 1, kNetHw = 2;
// NCCL's collectives as its tables index them here.
constexpr int kAllReduce = 0, kReduceScatter = 1, kAllGather = 2, kBroadcast = 3, kReduce = 4;

int index_of(NcclAlgorithm a) {
  return static_cast<int>(a);
}

/// floor(log2(n)) for n >= 1, as NCCL's log2i.
int log2i(std::uint64_t n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

int nccl_collective(CollectiveType t) {
  switch (t) {
    case CollectiveType::kAllReduce:
      return kAllReduce;
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
      return kReduceScatter;
    case CollectiveType::kAllGather:
      return kAllGather;
    case CollectiveType::kBroadcast:
      return kBroadcast;
    case CollectiveType::kReduce:
      return kReduce;
    default:
      return -1;  // point-to-point in NCCL (all-to-all, gather, scatter), or no NCCL call (barrier)
  }
}

/// Whether NCCL's tuner weighs algorithm `a` for collective `coll` at all
/// (tuning.cc's loop filters).
bool weighs(int coll, NcclAlgorithm a) {
  switch (coll) {
    case kBroadcast:
    case kReduce:
      return a == NcclAlgorithm::kRing;
    case kReduceScatter:
    case kAllGather:
      return a == NcclAlgorithm::kRing || a == NcclAlgorithm::kNvls || a == NcclAlgorithm::kCollNetDirect ||
             a == NcclAlgorithm::kPat;
    default:
      return a != NcclAlgorithm::kPat;
  }
}

/// The highest of `speeds` at or below `limit` (0 when none is).
double highest_at_most(const std::vector<double>& speeds, double limit) {
  for (double s : speeds) {
    if (s <= limit + 1e-9) return s;
  }
  return 0;
}
}  // namespace

const char* to_string(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::kTree:
      return "Tree";
    case NcclAlgorithm::kRing:
      return "Ring";
    case NcclAlgorithm::kCollNetDirect:
      return "CollNetDirect";
    case NcclAlgorithm::kCollNetChain:
      return "CollNetChain";
    case NcclAlgorithm::kNvls:
      return "NVLS";
    case NcclAlgorithm::kNvlsTree:
      return "NVLSTree";
    case NcclAlgorithm::kPat:
      return "PAT";
  }
  return "?";
}

const char* key_of(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::kTree:
      return "tree";
    case NcclAlgorithm::kRing:
      return "ring";
    case NcclAlgorithm::kCollNetDirect:
      return "collnet_direct";
    case NcclAlgorithm::kCollNetChain:
      return "collnet_chain";
    case NcclAlgorithm::kNvls:
      return "nvls";
    case NcclAlgorithm::kNvlsTree:
      return "nvls_tree";
    case NcclAlgorithm::kPat:
      return "pat";
  }
  return "?";
}

CommProtocol protocol_of(int nccl_protocol) {
  return nccl_protocol == kLL      ? CommProtocol::kLL
         : nccl_protocol == kLL128 ? CommProtocol::kLL128
                                   : CommProtocol::kSimple;
}

bool NcclSettings::allows(NcclAlgorithm a) const {
  switch (a) {
    case NcclAlgorithm::kTree:
      return tree;
    case NcclAlgorithm::kRing:
      return ring;
    case NcclAlgorithm::kCollNetDirect:
      return collnet_direct;
    case NcclAlgorithm::kCollNetChain:
      return collnet_chain;
    case NcclAlgorithm::kNvls:
      return nvls;
    case NcclAlgorithm::kNvlsTree:
      return nvls_tree;
    case NcclAlgorithm::kPat:
      return pat;
  }
  return false;
}

const ParamTable<NcclSettings>& NcclSettings::table() {
  static const auto table =
      ParamTable<NcclSettings>("nccl",
                               "what a job sets for NCCL (its environment), and what NCCL reads off the "
                               "hardware that a netlist does not say")
          .add("compute_capability", Quantity::kCount, &NcclSettings::compute_capability,
               "the GPUs' compute capability as NCCL sees it (70 V100, 80 A100, 90 H100, 100 B200): its tables' "
               "rows and NVLink's bandwidth per link")
          .range(60, 200)
          .choice("cpu", &NcclSettings::cpu, {"intel", "amd"},
                  "the hosts' CPU vendor: NCCL's LL bandwidth cap and network overhead across nodes depend on it")
          .choice("intra", &NcclSettings::intra, {"nvlink", "pci"},
                  "how a node's GPUs reach one another, as NCCL's topology sees it")
          .choice("nvls_enable", &NcclSettings::nvls_enable, {"auto", "off", "on"},
                  "NCCL_NVLS_ENABLE: NVLink SHARP where the switches offer it (auto and on), or never (off)")
          .add("collnet_enable", Quantity::kFlag, &NcclSettings::collnet_enable,
               "NCCL_COLLNET_ENABLE=1 with a CollNet (SHARP) plugin loaded: CollNet algorithms, and NVLS across "
               "nodes, where the network's switches reduce")
          .add("tree", Quantity::kFlag, &NcclSettings::tree, "NCCL_ALGO includes Tree")
          .add("ring", Quantity::kFlag, &NcclSettings::ring, "NCCL_ALGO includes Ring")
          .add("collnet_direct", Quantity::kFlag, &NcclSettings::collnet_direct, "NCCL_ALGO includes CollNetDirect")
          .add("collnet_chain", Quantity::kFlag, &NcclSettings::collnet_chain, "NCCL_ALGO includes CollNetChain")
          .add("nvls", Quantity::kFlag, &NcclSettings::nvls, "NCCL_ALGO includes NVLS")
          .add("nvls_tree", Quantity::kFlag, &NcclSettings::nvls_tree, "NCCL_ALGO includes NVLSTree")
          .add("pat", Quantity::kFlag, &NcclSettings::pat, "NCCL_ALGO includes PAT (NCCL 2.23 and later)")
          .add("ll", Quantity::kFlag, &NcclSettings::ll, "NCCL_PROTO includes LL")
          .add("simple", Quantity::kFlag, &NcclSettings::simple, "NCCL_PROTO includes Simple")
          .choice("ll128", &NcclSettings::ll128, {"auto", "off", "on"},
                  "NCCL_PROTO and LL128: NCCL's own rule (auto: on Volta, Ampere and Hopper GPUs joined by NVLink, "
                  "their NICs within a PCIe switch, or reached through another GPU on Hopper), never, or always")
          .add("min_channels", Quantity::kCount, &NcclSettings::min_channels,
               "NCCL_MIN_NCHANNELS: channels a ring or tree kernel runs at least; 0: unset")
          .range(0, 64)
          .add("max_channels", Quantity::kCount, &NcclSettings::max_channels,
               "NCCL_MAX_NCHANNELS: channels a ring or tree kernel runs at most; 0: unset")
          .range(0, 64)
          .add("nvlinks", Quantity::kCount, &NcclSettings::nvlinks,
               "NVLinks from each GPU as NCCL counts them (NVML); 0: the netlist's lanes from NPU 0. Give it where "
               "one netlist link stands for several NVLinks (an NVLink bridge of 300 GB/s is 12 NVLink-4 links)")
          .range(0, 64);
  return table;
}

NcclTuner::NcclTuner(NcclTuning tuning, NcclSettings settings, NcclMachine machine)
    : tuning_(std::move(tuning)), settings_(settings), machine_(machine) {
  if (machine_.gpus_per_node < 1) throw std::invalid_argument("an NCCL machine needs at least one GPU per node");
}

double NcclTuner::nvlink_bw() const {
  const auto it = tuning_.nvlink_bw.upper_bound(static_cast<int>(settings_.compute_capability));
  if (it == tuning_.nvlink_bw.begin()) return 0;
  return std::prev(it)->second;
}

int NcclTuner::nics_for(int per_node) const {
  if (machine_.nics_per_node <= 0) return 0;
  const int g = std::max(1, machine_.gpus_per_node);
  return std::max(1, std::min(machine_.nics_per_node, (machine_.nics_per_node * per_node + g - 1) / g));
}

NcclGraph NcclTuner::search_ring(int nodes, int per_node) const {
  // search.cc, ncclTopoCompute for the ring pattern: the highest speed
  // (per-channel bandwidth) of the search's list that the paths allow,
  // as many channels as the links carry at it, and lower speeds tried
  // while they stay above half the best found, keeping the most channels
  // x speed; then ncclTopoDupChannels.
  const int cc = static_cast<int>(settings_.compute_capability);
  const bool sm90 = cc >= 90;
  // The communicator's GPUs of a node, and the NICs beside them.
  const int g = per_node;
  const int nics = nics_for(per_node);
  const double nvl = settings_.intra == NcclSettings::IntraLink::kNvlink ? machine_.nvlinks_per_gpu * nvlink_bw() : 0;
  const double total = nvl > 0 ? nvl : machine_.pci_bw;  // system->totalBw: a GPU's links together
  const int max_channels = tuning_.max_channels / 2;
  const bool network = nodes > 1 && nics > 0;
  const std::vector<double>& speeds = network ? (sm90 ? tuning_.sm90_speeds_inter : tuning_.speeds_inter)
                                              : (sm90 ? tuning_.sm90_speeds_intra : tuning_.speeds_intra);
  // system->maxBw: the best path from a GPU to a NIC (or to another GPU).
  double max_bw = total;
  if (network) {
    max_bw = std::min(machine_.pci_bw > 0 ? machine_.pci_bw : machine_.nic_bw, machine_.nic_bw);
    if (!machine_.nic_beside_gpu && nvl > 0) max_bw = std::min(max_bw, nvl);
  }
  const auto channels_at = [&](double s) {
    if (s <= 0) return 0;
    if (!network) return std::min(max_channels, static_cast<int>(std::floor(total / s + 1e-9)));
    // Each channel leaves and enters the node through a NIC, one at `s` per
    // NIC's share, and crosses NVLink at every GPU but the one it enters at.
    const int by_nic = nics * static_cast<int>(std::floor(machine_.nic_bw / s + 1e-9));
    const double per_gpu = g > 1 ? s * (g - 1) / g : s;
    const int by_links = g > 1 ? static_cast<int>(std::floor(total / per_gpu + 1e-9)) : by_nic;
    return std::min({max_channels, by_nic, by_links});
  };
  NcclGraph best;
  for (double s : speeds) {
    if (s > max_bw + 1e-9 || s > total + 1e-9) continue;
    if (best.channels > 0 && s / best.bw_intra <= 0.49) break;
    const int n = channels_at(s);
    if (n > 0 && n * s > best.channels * best.bw_intra + 1e-9) best = NcclGraph{n, s, s};
    if (best.channels > 0 && best.channels * best.bw_intra >= total - 1e-9) break;  // as good as the links allow
  }
  if (best.channels == 0) return best;
  // ncclTopoDupChannels: fast channels are split in two.
  if (best.bw_intra >= 25.0 && !(cc > 80 && best.bw_intra < 50.0 && best.channels > 4)) {
    const int dup = std::min(best.channels * 2, max_channels);
    const int split = (dup + best.channels - 1) / best.channels;
    best.bw_intra /= split;
    best.bw_inter /= split;
    best.channels = dup;
  }
  return best;
}

NcclTuner::Comm NcclTuner::build(int ranks, int nodes) const {
  Comm c;
  c.ranks = ranks;
  c.nodes = std::max(1, nodes);
  c.per_node = std::max(1, ranks / c.nodes);
  const int cc = static_cast<int>(settings_.compute_capability);
  const bool sm90 = cc >= 90;
  const double nvl = settings_.intra == NcclSettings::IntraLink::kNvlink ? machine_.nvlinks_per_gpu * nvlink_bw() : 0;
  const double total = nvl > 0 ? nvl : machine_.pci_bw;
  const int g = c.per_node;

  // The graphs.
  c.ring = search_ring(c.nodes, c.per_node);
  c.tree = c.ring;
  if (c.nodes == 1 && c.ring.channels > 0) {
    // A tree over the node's GPUs has the ring's channels; its speed is the
    // highest whose channels fit the GPUs' links (trees pass g/(g-1) of them).
    const auto& speeds = sm90 ? tuning_.sm90_speeds_intra : tuning_.speeds_intra;
    const double room = g > 1 ? total * g / (g - 1) : total;
    const double s = highest_at_most(speeds, room / c.ring.channels);
    if (s > 0) c.tree.bw_intra = c.tree.bw_inter = s;
  }
  c.collnet = c.ring;
  const bool nvls_possible = settings_.nvls_enable != NcclSettings::Switch::kOff && machine_.nvswitch &&
                             machine_.nvls_units && cc >= 90 && settings_.intra == NcclSettings::IntraLink::kNvlink;
  // ncclNvlsInit (2.18-2.22): no NVLS on two GPUs or fewer.
  c.nvls_support = nvls_possible && g > 2;
  if (c.nvls_support) {
    // One channel per head (a GPU; across nodes a GPU with its NIC). Each
    // head's links carry the others' contributions and its own twice.
    const auto& speeds = sm90 ? tuning_.sm90_speeds_intra : tuning_.speeds_intra;
    c.nvls.channels = c.nodes > 1 ? std::min(g, std::max(1, nics_for(g))) : g;
    c.nvls.bw_intra = highest_at_most(speeds, nvl / (g + 1));
    double inter = 2 * c.nvls.bw_intra;
    if (c.nodes > 1)
      inter = std::min(inter, std::min(machine_.pci_bw > 0 ? machine_.pci_bw : machine_.nic_bw, machine_.nic_bw));
    const auto& inter_speeds = c.nodes > 1 ? tuning_.sm90_speeds_inter : speeds;
    c.nvls.bw_inter = highest_at_most(inter_speeds, inter);
    if (c.nvls.channels == 0 || c.nvls.bw_intra <= 0) c.nvls_support = false;
  }
  c.nvls_channels = c.nvls_support ? tuning_.nvls_channels : 0;
  c.collnet_support =
      settings_.collnet_enable && machine_.sharp_units && c.nodes >= 2 && c.per_node <= 8 && c.collnet.channels > 0;

  // Channels (init.cc and ncclTopoPostset): the fewer of ring and tree,
  // doubled; on Hopper across nodes doubled again below 16 fast channels.
  int n = std::min(c.ring.channels, c.tree.channels);
  n = std::min(tuning_.max_channels, 2 * n);
  if (cc == 90 && c.nodes > 1 && c.ring.bw_intra > 45.0 && n < 16) n = std::min(tuning_.max_channels, 2 * n);
  if (settings_.max_channels > 0) n = std::min<int>(n, static_cast<int>(settings_.max_channels));
  if (settings_.min_channels > 0) n = std::max<int>(n, static_cast<int>(settings_.min_channels));
  c.coll_channels = std::max(1, std::min(n, tuning_.max_channels));  // MAXCHANNELS bounds NCCL_MIN_NCHANNELS too

  // The tables (tuning.cc, ncclTopoTuneModel).
  const int cap_row = cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
  const int nodes_col = c.nodes <= 2 ? c.nodes - 1 : 2;
  const int ll_row = c.nodes == 1 ? cap_row : settings_.cpu == NcclSettings::Cpu::kAmd ? 1 : 0;
  const double ll_max_bw = tuning_.ll_max_bw[ll_row][nodes_col];
  const double ring_ll128_cap = tuning_.per_ch_max_ring_ll128_bw[cap_row][nodes_col];
  const double tree_ll128_cap = tuning_.per_ch_max_tree_ll128_bw[cap_row][nodes_col];
  const double tree_cap = tuning_.per_ch_max_tree_bw[cap_row][nodes_col];
  const int intra_hw = settings_.intra == NcclSettings::IntraLink::kNvlink ? kNvlinkHw : kPciHw;
  const int hw = c.nodes == 1 ? intra_hw : kNetHw;
  const int ppn = c.per_node;
  const double net_overhead = tuning_.net_overhead[settings_.cpu == NcclSettings::Cpu::kAmd ? 1 : 0];

  // Which algorithms and protocols run at all.
  std::array<bool, kNcclAlgorithms> algo_on{};
  for (int a = 0; a < kNcclAlgorithms; ++a) {
    algo_on[a] = tuning_.has[a] && settings_.allows(static_cast<NcclAlgorithm>(a));
  }
  if (c.nodes == 1) algo_on[index_of(NcclAlgorithm::kNvlsTree)] = false;
  if (!c.collnet_support) {
    algo_on[index_of(NcclAlgorithm::kCollNetDirect)] = algo_on[index_of(NcclAlgorithm::kCollNetChain)] = false;
    if (c.nodes > 1) algo_on[index_of(NcclAlgorithm::kNvls)] = false;
    // NCCL_ALGO naming only CollNet where it cannot run: NCCL ignores it.
    if (!algo_on[index_of(NcclAlgorithm::kRing)] && !algo_on[index_of(NcclAlgorithm::kTree)] &&
        !algo_on[index_of(NcclAlgorithm::kNvls)] && !algo_on[index_of(NcclAlgorithm::kNvlsTree)]) {
      algo_on[index_of(NcclAlgorithm::kRing)] = tuning_.has[index_of(NcclAlgorithm::kRing)];
      algo_on[index_of(NcclAlgorithm::kTree)] = tuning_.has[index_of(NcclAlgorithm::kTree)];
    }
  } else if (!machine_.nvswitch) {
    algo_on[index_of(NcclAlgorithm::kCollNetDirect)] = false;
  }
  if (!c.nvls_support) algo_on[index_of(NcclAlgorithm::kNvls)] = algo_on[index_of(NcclAlgorithm::kNvlsTree)] = false;
  // PAT: one GPU per node only (ncclPatEnable).
  if (c.nodes != c.ranks) algo_on[index_of(NcclAlgorithm::kPat)] = false;
  std::array<bool, kNcclProtocols> proto_on{settings_.ll, true, settings_.simple};
  switch (settings_.ll128) {
    case NcclSettings::Switch::kOn:
      break;
    case NcclSettings::Switch::kOff:
      proto_on[kLL128] = false;
      break;
    case NcclSettings::Switch::kAuto: {
      // "Enable LL128 by default only on Volta/Ampere/Hopper+NVLink."
      bool on = settings_.intra == NcclSettings::IntraLink::kNvlink;
      if (c.nodes > 1) on = on && (machine_.nic_beside_gpu || cc >= 90);
      on = on && (cc == 70 || cc == 80 || cc == 90);
      proto_on[kLL128] = on;
      break;
    }
  }

  for (int coll = 0; coll < 5; ++coll) {
    const int nsteps = coll == kAllReduce                               ? 2 * (ranks - 1)
                       : (coll == kReduceScatter || coll == kAllGather) ? ranks - 1
                                                                        : ranks;
    int inter_steps = 0;
    if (tuning_.inter_steps_minus_one) {
      inter_steps = c.nodes == 1 ? 0 : coll == kAllReduce ? 2 * (c.nodes - 1) : c.nodes - 1;
    } else {
      inter_steps = coll == kAllReduce                               ? (c.nodes > 1 ? 2 * c.nodes : 0)
                    : (coll == kReduceScatter || coll == kAllGather) ? c.nodes - 1
                                                                     : c.nodes;
    }
    for (int a = 0; a < kNcclAlgorithms; ++a) {
      const auto algo = static_cast<NcclAlgorithm>(a);
      if (!weighs(coll, algo) || !algo_on[a]) continue;
      const NcclGraph& graph = algo == NcclAlgorithm::kTree                                       ? c.tree
                               : algo == NcclAlgorithm::kNvls || algo == NcclAlgorithm::kNvlsTree ? c.nvls
                               : algo == NcclAlgorithm::kCollNetDirect || algo == NcclAlgorithm::kCollNetChain
                                   ? c.collnet
                                   : c.ring;
      if (graph.channels == 0) continue;
      if (algo == NcclAlgorithm::kNvls && (coll == kReduceScatter || coll == kAllGather) && c.nodes > 1) {
        continue;  // single-node NVLS all-gather and reduce-scatter only
      }
      for (int p = 0; p < kNcclProtocols; ++p) {
        if (!proto_on[p]) continue;
        const bool simple_only = algo == NcclAlgorithm::kNvls || algo == NcclAlgorithm::kNvlsTree ||
                                 algo == NcclAlgorithm::kCollNetDirect || algo == NcclAlgorithm::kCollNetChain ||
                                 algo == NcclAlgorithm::kPat;
        if (simple_only && p != kSimple) continue;
        const bool collnet = algo == NcclAlgorithm::kCollNetDirect || algo == NcclAlgorithm::kCollNetChain;
        double bw = c.nodes <= 2 || collnet ? graph.bw_intra : graph.bw_inter;
        if (algo == NcclAlgorithm::kNvls) bw = std::min(graph.bw_intra, graph.bw_inter);
        if (algo == NcclAlgorithm::kNvlsTree)
          bw = std::min(graph.bw_intra, c.nodes <= 2 ? graph.bw_inter : graph.bw_inter / 2);
        double bus = graph.channels * bw;
        if (algo == NcclAlgorithm::kRing && p == kLL) bus = std::min(ll_max_bw, bus * tuning_.ring_ll);
        if (algo == NcclAlgorithm::kRing && p == kLL128) {
          const double f =
              ppn < 2 && tuning_.ring_ll128_one_per_node > 0 ? tuning_.ring_ll128_one_per_node : tuning_.ring_ll128;
          bus = std::min(bus * f, graph.channels * ring_ll128_cap);
        }
        if (algo == NcclAlgorithm::kTree) bus = std::min(bus * tuning_.tree, graph.channels * tree_cap);
        if (algo == NcclAlgorithm::kTree && p == kLL) bus = std::min(bus * tuning_.tree_ll, ll_max_bw);
        if (algo == NcclAlgorithm::kTree && p == kLL128) {
          bus = std::min(bus * (c.nodes == 1 ? tuning_.tree_ll128_one_node : tuning_.tree_ll128),
                         graph.channels * tree_ll128_cap);
        }
        if (algo == NcclAlgorithm::kPat) bus *= tuning_.pat;
        if (algo == NcclAlgorithm::kCollNetDirect) {
          if (coll == kAllGather || coll == kReduceScatter) {
            bus = ppn * bw;
            if (ppn > machine_.nics_per_node) bus = 0;  // needs a NIC per GPU
            const double w = (ppn - 1) / 7.0;
            bus *= w * 0.85 + (1 - w) * 0.95;
          } else {
            double factor = static_cast<double>(ppn) / graph.channels;  // GPUs per NIC
            factor -= (factor - 1) / 2;
            bus /= factor;
            if (cc >= 90) bus *= 0.85;
          }
        }
        // Bus to algorithm bandwidth.
        const bool keeps_bus = (algo == NcclAlgorithm::kCollNetDirect || algo == NcclAlgorithm::kPat) &&
                               (coll == kAllGather || coll == kReduceScatter);
        if (!keeps_bus) {
          if (algo == NcclAlgorithm::kRing) {
            bus *= static_cast<double>(ranks) / nsteps;
          } else if (algo == NcclAlgorithm::kNvls || algo == NcclAlgorithm::kNvlsTree) {
            bus *= tuning_.nvls_ratio;
          } else {
            bus *= 0.5;
          }
        }
        c.bandwidth[coll][a][p] = bus;

        // Latency.
        double lat = tuning_.base_latency[a][p];
        double intra_lat = tuning_.hw_latency[intra_hw][a][p];
        const double inter_lat = tuning_.hw_latency[kNetHw][a][p];  // latencyInter (the NIC's own) is 0 on InfiniBand
        switch (algo) {
          case NcclAlgorithm::kRing: {
            const double hop = tuning_.hw_latency[hw][a][p];
            if (coll == kReduce || coll == kBroadcast) {
              lat += hop;  // dup'ed channels are the same channels: one chain's latency
            } else {
              double overhead = 0;
              if (c.nodes > 1) overhead = net_overhead * (p == kSimple ? 3 : 1);
              intra_lat = std::max(intra_lat, overhead);
              lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
            }
            break;
          }
          case NcclAlgorithm::kTree:
            lat += 2 * ((ppn - 1) * intra_lat + log2i(static_cast<std::uint64_t>(c.nodes)) * inter_lat);
            break;
          case NcclAlgorithm::kCollNetDirect:
            lat += 2 * (std::min(1, ppn - 1) * intra_lat + (ppn - 1) * 0.4) + inter_lat;
            break;
          case NcclAlgorithm::kCollNetChain:
            lat += 2 * (ppn - 1) * intra_lat + inter_lat;
            break;
          case NcclAlgorithm::kNvls:
            lat = intra_lat;
            if (c.nodes > 1) lat += inter_lat;
            break;
          case NcclAlgorithm::kNvlsTree:
            lat += intra_lat + 2 * log2i(static_cast<std::uint64_t>(c.nodes)) * inter_lat;
            break;
          case NcclAlgorithm::kPat:
            lat = 8 + log2i(static_cast<std::uint64_t>(c.nodes)) * (inter_lat / 3.5) + ranks * 2.8;
            break;
        }
        c.latency[coll][a][p] = lat;
      }
    }
  }
  return c;
}

const NcclTuner::Comm& NcclTuner::comm(int ranks, int nodes) const {
  auto& slot = comms_[{ranks, nodes}];
  if (!slot) slot = std::make_unique<Comm>(build(ranks, nodes));
  return *slot;
}

bool NcclTuner::tunes(CollectiveType type) {
  return nccl_collective(type) >= 0;
}

NcclDecision NcclTuner::decide(CollectiveType type, std::uint64_t bytes, int ranks, int nodes) const {
  NcclDecision d;
  const int coll = nccl_collective(type);
  if (coll < 0 || ranks < 2) return d;
  const Comm& c = comm(ranks, nodes);
  const int cc = static_cast<int>(settings_.compute_capability);
  double best = 3600000000.0;  // NCCL's "hopefully no operation will take an hour"
  bool found = false;
  for (int a = 0; a < kNcclAlgorithms; ++a) {
    const auto algo = static_cast<NcclAlgorithm>(a);
    for (int p = 0; p < kNcclProtocols; ++p) {
      double bw = c.bandwidth[coll][a][p];
      if (bw <= 0) continue;
      double lat = c.latency[coll][a][p];
      // ncclTopoGetAlgoTime.
      const int log_size = bytes >= 64 ? log2i(bytes >> 6) : -1;
      if (algo == NcclAlgorithm::kTree && log_size >= 0 && log_size < 23) bw *= tuning_.tree_correction[p][log_size];
      if (algo == NcclAlgorithm::kRing && p == kSimple && c.nodes > 1 && coll == kAllReduce &&
          bytes / (static_cast<std::uint64_t>(c.coll_channels) * static_cast<std::uint64_t>(ranks)) >= 64) {
        lat *= cc < 80 ? tuning_.ring_plateau_before_sm80 : tuning_.ring_plateau;
      }
      const double time = lat + static_cast<double>(bytes) / (1000.0 * bw);
      d.candidates.push_back(NcclCandidate{algo, p, bw, lat, time});
      if (time < best) {
        best = time;
        d.algorithm = algo;
        d.protocol = p;
        d.time_us = time;
        found = true;
      }
    }
  }
  if (!found) return d;
  for (NcclCandidate& cand : d.candidates) cand.channels = channels_for(c, cand.algorithm, cand.protocol, bytes);
  d.channels = channels_for(c, d.algorithm, d.protocol, bytes);
  return d;
}

int NcclTuner::channels_for(const Comm& c, NcclAlgorithm algo, int protocol, std::uint64_t bytes) const {
  // NVLS and CollNet run their own channels; rings and trees drop channels
  // while each would have too few bytes per thread.
  if (algo == NcclAlgorithm::kNvls || algo == NcclAlgorithm::kNvlsTree) return c.nvls_channels;
  if (algo == NcclAlgorithm::kCollNetDirect || algo == NcclAlgorithm::kCollNetChain) return c.coll_channels;
  std::uint64_t threads = static_cast<std::uint64_t>(tuning_.max_threads[protocol]);
  if (algo == NcclAlgorithm::kRing && protocol == kSimple && c.ring.bw_intra * c.ring.channels <= tuning_.pci_bw) {
    threads = 256;
  }
  std::uint64_t threshold = static_cast<std::uint64_t>(tuning_.thread_threshold[protocol]);
  if (algo == NcclAlgorithm::kRing && protocol == kLL) threshold *= static_cast<std::uint64_t>(c.ranks);
  int nc = c.coll_channels;
  while (nc >= 2 && bytes < static_cast<std::uint64_t>(nc) * threads * threshold) --nc;
  return nc;
}

}  // namespace fabricsim
