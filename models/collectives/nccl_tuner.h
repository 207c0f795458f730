// NCCL's tuner: which algorithm, protocol and channels NCCL would run a
// collective with on this machine, so that a prediction is of the job users
// run (the `nccl` personality, docs/collectives.md "The collective library").
//
// Three parts, kept apart so that another library's tuner of the same family
// (RCCL, a vendor's NCCL fork) is a data file, not code:
// - NcclTuning: the tuner's constants as one NCCL version has them
//   (src/graph/tuning.cc, topo.h, search.cc), read from a library file
//   (platforms/libraries/nccl-*.yaml);
// - NcclSettings: what a job sets in NCCL's environment (NCCL_ALGO,
//   NCCL_PROTO, NCCL_NVLS_ENABLE, NCCL_COLLNET_ENABLE, NCCL_MIN/MAX_NCHANNELS)
//   and the two facts of the machine NCCL reads off the hardware that a
//   netlist does not say (the GPUs' compute capability, the CPU's vendor);
// - NcclMachine: the machine as NCCL's topology detection sees it, which
//   the platform fills in from its netlist.
// The tuner emulates NCCL's graph search (channels and per-channel
// bandwidths), builds its bandwidth and latency tables per communicator and
// picks, per call, the (algorithm, protocol) of least modelled time, ties to
// the first in NCCL's order, then reduces the channels for small sizes as
// NCCL does. Plain C++, no SystemC.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/collectives/collective.h"
#include "tlm/kernel/parameters.h"
#include "tlm/message_kind.h"

namespace fabricsim {

/// NCCL's algorithms, in its own order (ties go to the first).
enum class NcclAlgorithm : std::uint8_t { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat };
constexpr int kNcclAlgorithms = 7;
/// NCCL's name: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT.
const char* to_string(NcclAlgorithm a);
/// Lower case, as library files and settings write them: tree, ring,
/// collnet_direct, collnet_chain, nvls, nvls_tree, pat.
const char* key_of(NcclAlgorithm a);
/// NCCL's protocols in its order: LL, LL128, Simple.
constexpr int kNcclProtocols = 3;
CommProtocol protocol_of(int nccl_protocol);

/// One NCCL version's tuner constants (src/graph/tuning.cc, topo.h,
/// search.cc, comm.h, device.h): every field a library file gives.
struct NcclTuning {
  std::string library = "nccl";
  std::string version;
  std::string source;  // where the constants were read
  /// The algorithms the version has (an algorithm absent here never runs).
  std::array<bool, kNcclAlgorithms> has{};
  using PerProtocol = std::array<double, kNcclProtocols>;   // LL, LL128, Simple
  std::array<PerProtocol, kNcclAlgorithms> base_latency{};  // us
  /// [NVLink, PCI, network][algorithm]: latency per hop, us.
  std::array<std::array<PerProtocol, kNcclAlgorithms>, 3> hw_latency{};
  using PerNodes = std::array<double, 3>;  // 1 node, 2 nodes, more
  /// Rows: Volta, Ampere, Hopper on one node; on several, Intel (row 0) and AMD (row 1) CPUs.
  std::array<PerNodes, 3> ll_max_bw{};
  std::array<PerNodes, 3> per_ch_max_ring_ll128_bw{};  // rows: Volta, Ampere, Hopper
  std::array<PerNodes, 3> per_ch_max_tree_ll128_bw{};
  std::array<PerNodes, 3> per_ch_max_tree_bw{};
  /// Tree bandwidth correction per protocol and log2(bytes / 64), 64 B to 256 MiB.
  std::array<std::array<double, 23>, kNcclProtocols> tree_correction{};
  /// NVLink bandwidth per link, GB/s, by compute capability (topo.h SMxx_NVLINK_BW);
  /// a capability between keys takes the next lower key.
  std::map<int, double> nvlink_bw;
  /// Per-channel speeds the graph search tries, GB/s, highest first: without
  /// and with a network, and the SM90 ones.
  std::vector<double> speeds_intra, speeds_inter, sm90_speeds_intra, sm90_speeds_inter;
  // The model's refinements (tuning.cc, ncclTopoTuneModel).
  double ring_ll = 0.5;                  // Ring LL: share of the bus bandwidth
  double ring_ll128 = 0.92;              // Ring LL128
  double ring_ll128_one_per_node = 0.7;  // Ring LL128 at one GPU per node (0: as ring_ll128)
  double tree = 0.92;                    // Tree, any protocol
  double tree_ll = 1 / 3.8;              // Tree LL
  double tree_ll128_one_node = 7.0 / 9;  // Tree LL128 on one node
  double tree_ll128 = 120.0 / 128;       // Tree LL128 on several
  double nvls_ratio = 5.0 / 6;           // NVLS and NVLS-tree: bus to algorithm bandwidth
  double pat = 0.75;                     // PAT: share of the bus bandwidth
  double ring_plateau = 1.4;             // Ring Simple all-reduce across nodes: latency x this (SM80 on)
  double ring_plateau_before_sm80 = 1.9;
  std::array<double, 2> net_overhead{1.0, 2.0};  // us, Intel and AMD CPUs (x3 for Simple)
  /// Inter-node steps of a ring all-reduce: 2 x nodes (before 2.24) or 2 x (nodes - 1).
  bool inter_steps_minus_one = false;
  std::array<int, kNcclProtocols> thread_threshold{8, 8, 64};  // bytes per thread per channel
  int collnet_thread_threshold = 512;
  std::array<int, kNcclProtocols> max_threads{512, 640, 512};
  int max_channels = 32;   // MAXCHANNELS
  int nvls_channels = 16;  // NCCL_NVLS_NCHANNELS' default
  double pci_bw = 12;      // PCI_BW (GB/s): Ring Simple at or below it runs 256 threads
};

/// What a job sets for NCCL, and what NCCL reads off the hardware that a
/// netlist does not say. Declared once (table()), written under
/// `collectives.nccl` in a platform file.
struct NcclSettings {
  enum class Switch : std::uint8_t { kAuto, kOff, kOn };
  enum class Cpu : std::uint8_t { kIntel, kAmd };
  enum class IntraLink : std::uint8_t { kNvlink, kPci };
  std::uint32_t compute_capability = 90;  // the GPUs' (NCCL's minCompCap): 70 V100, 80 A100, 90 H100, 100 B200
  Cpu cpu = Cpu::kIntel;
  IntraLink intra = IntraLink::kNvlink;  // how GPUs of a node reach one another
  Switch nvls_enable = Switch::kAuto;    // NCCL_NVLS_ENABLE
  bool collnet_enable = false;           // NCCL_COLLNET_ENABLE (and a CollNet/SHARP plugin)
  /// NCCL_ALGO, one flag per algorithm (false: excluded).
  bool tree = true, ring = true, collnet_direct = true, collnet_chain = true, nvls = true, nvls_tree = true, pat = true;
  /// NCCL_PROTO: LL and Simple on or off; LL128 auto (NCCL's rule), off or on.
  bool ll = true, simple = true;
  Switch ll128 = Switch::kAuto;
  std::uint32_t min_channels = 0;  // NCCL_MIN_NCHANNELS; 0: unset
  std::uint32_t max_channels = 0;  // NCCL_MAX_NCHANNELS; 0: unset
  std::uint32_t nvlinks = 0;       // NVLinks per GPU as NVML tells NCCL; 0: the netlist's lanes
  bool allows(NcclAlgorithm a) const;
  static const ParamTable<NcclSettings>& table();
};

/// The machine as NCCL's topology detection sees one node of it (bandwidths
/// in GB/s, as NCCL counts them).
struct NcclMachine {
  int gpus_per_node = 1;
  int nvlinks_per_gpu = 0;      // to other GPUs or NVSwitches (0: PCIe only)
  double nvlink_lane_GBps = 0;  // one of those lanes' bandwidth as the netlist gives it
  bool nvswitch = false;        // GPUs meet at switches (NVLS, CollNet Direct need it)
  bool nvls_units = false;      // those switches reduce and multicast (NVLink SHARP)
  double pci_bw = 0;            // a GPU's PCIe link: lanes x rate / 8 (Gen5 x16: 48)
  int nics_per_node = 0;        // network NICs (0: one node only)
  double nic_bw = 0;            // a NIC port: Gb/s / 8 (400G: 50)
  bool nic_beside_gpu =
      true;                  // every GPU reaches a NIC through PCIe switches only (PXB); else through another GPU (PXN)
  bool sharp_units = false;  // the network's switches reduce (InfiniBand SHARP): CollNet can run
};

/// One graph of NCCL's search: channels and each one's bandwidth.
struct NcclGraph {
  int channels = 0;
  double bw_intra = 0, bw_inter = 0;  // GB/s per channel
};

/// One (algorithm, protocol) NCCL weighed, and its modelled time.
struct NcclCandidate {
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  int protocol = 2;
  double bandwidth = 0;  // GB/s, NCCL's (algorithm) bandwidth after corrections
  double latency = 0;    // us
  double time_us = 0;
  int channels = 1;  // the kernel's channels (CTAs) were this pair to run the call
};

/// NCCL's choice for one call.
struct NcclDecision {
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  int protocol = 2;  // NCCL's index: 0 LL, 1 LL128, 2 Simple
  int channels = 1;  // the kernel's channels (CTAs) for this call: the pick's
  double time_us = 0;
  std::vector<NcclCandidate> candidates;  // every enabled pair, in NCCL's order
};

class NcclTuner {
 public:
  NcclTuner(NcclTuning tuning, NcclSettings settings, NcclMachine machine);

  /// NCCL's view of a communicator of `ranks` ranks on `nodes` nodes (its
  /// GPUs per node: ranks / nodes): the search's graphs, the channels its
  /// kernels launch, and what NCCL supports on it.
  struct Comm {
    int ranks = 1, nodes = 1, per_node = 1;
    NcclGraph ring, tree, nvls, collnet;
    int coll_channels = 1;  // comm->collChannels: ring and tree kernels start with these
    int nvls_channels = 0;
    bool nvls_support = false, collnet_support = false;
    /// [collective: all-reduce, reduce-scatter, all-gather, broadcast,
    /// reduce][algorithm][protocol]: algorithm bandwidth (GB/s, 0: not run)
    /// and latency (us).
    std::array<std::array<std::array<double, kNcclProtocols>, kNcclAlgorithms>, 5> bandwidth{}, latency{};
  };
  const Comm& comm(int ranks, int nodes) const;

  /// NCCL's choice for a collective of `type` whose buffer is `bytes` (the
  /// vector of an all-reduce, the whole gathered or scattered buffer of an
  /// all-gather or reduce-scatter, as NCCL's nBytes). Types NCCL runs as
  /// point-to-point sends (all-to-all, gather, scatter) and barriers have
  /// no entry: nullopt-like, `candidates` empty.
  NcclDecision decide(CollectiveType type, std::uint64_t bytes, int ranks, int nodes) const;

  /// Whether NCCL's tuner chooses for `type` (else NCCL runs it as
  /// point-to-point sends, or has no such call).
  static bool tunes(CollectiveType type);

  const NcclTuning& tuning() const { return tuning_; }
  const NcclSettings& settings() const { return settings_; }
  const NcclMachine& machine() const { return machine_; }
  /// NCCL's per-link NVLink bandwidth for the GPUs (GB/s).
  double nvlink_bw() const;

 private:
  Comm build(int ranks, int nodes) const;
  /// The ring search for a communicator of `per_node` GPUs on each of `nodes` nodes.
  NcclGraph search_ring(int nodes, int per_node) const;
  /// getChannnelThreadInfo: the channels a kernel of `algo`/`protocol`
  /// launches for a call of `bytes` on `c`.
  int channels_for(const Comm& c, NcclAlgorithm algo, int protocol, std::uint64_t bytes) const;
  /// The NICs a communicator of `per_node` GPUs of a node sees beside its GPUs.
  int nics_for(int per_node) const;
  NcclTuning tuning_;
  NcclSettings settings_;
  NcclMachine machine_;
  mutable std::map<std::pair<int, int>, std::unique_ptr<Comm>> comms_;  // by (ranks, nodes)
};

}  // namespace fabricsim
