// A platform as data: what the YAML loader produces and the builder
// instantiates. One or more fabrics (networks), each a graph of nodes (the
// NPUs' NICs and switches) joined by full-duplex links.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/collectives/collective_config.h"
#include "models/collectives/platform_hints.h"
#include "models/link/link_params.h"
#include "models/memory/memory_params.h"
#include "models/nic/dcqcn_params.h"
#include "models/nic/nic_params.h"
#include "models/nic/window_transport_params.h"
#include "models/npu/npu_params.h"
#include "models/pcie/pcie_switch_params.h"
#include "models/switch/port_choice.h"
#include "models/switch/reduction_unit_params.h"
#include "tlm/util/errors.h"

namespace fabricsim {

/// A memory on a fabric (pooled or expansion memory) and the NPUs it serves.
struct MemorySpec {
  std::string name;
  MemoryParams memory;
  std::vector<int> serves;         // ranks
  std::optional<LinkParams> link;  // its link into the fabric (default: the fabric's)
};

/// A switch's reduction unit, as the platform file gives it.
struct ReductionSpec {
  ReductionUnitParams unit;                // address, peer id and packet sizes are set by the builder
  bool pull = false;                       // all-reduce and reduce-scatter pull (NVLS) rather than push (SHARP)
  std::uint64_t pipeline_bytes = 1 << 20;  // pull all-reduce: pieces in which pulls and multicasts overlap
  std::uint32_t pipeline_depth = 4;        // pieces whose reads are in flight at once
  unsigned model = 0;     // what does the arithmetic: an index into reduction_models() (0: the TLM model)
  double clock_hz = 1e9;  // the RTL unit's clock
};

struct FabricNode {
  enum class Kind { kNic, kSwitch, kMemory, kReductionUnit };
  Kind kind = Kind::kNic;
  std::string name;
  int npu = -1;                            // rank, for NICs
  Address address = kNoAddress;            // NICs and memories: the address on this fabric
  int memory = -1;                         // kMemory: index into FabricSpec::memories
  Tick hop_latency = 0;                    // switches: head in to head out; NICs: for frames passing through
  int level = 0;                           // fat trees: 0 = leaf
  std::vector<int> coords;                 // tori and meshes
  std::optional<ReductionSpec> reduction;  // switches: the reduction unit it hosts, if any
  /// A switch node that is a shared NIC's port (gpus_per_nic): its
  /// functions' frames meet there. Inside the NIC: it marks no ECN, keeps
  /// no switch buffer, and its links to the functions are lossless.
  bool nic_port = false;
};

struct FabricEdge {
  int a = 0, b = 0;  // node indexes
  LinkParams link;
  int ring = -1;          // the ring (or torus dimension) this edge belongs to, if any
  bool internal = false;  // a switch and its reduction unit: bound directly, no link
  int lanes = 1;          // links bonded into this one (a switch's `lanes`): its bandwidth is theirs together
};

enum class Routing { kShortestPath, kDimensionOrder, kUpDown };

/// How a fabric moves packets and reacts to congestion (docs/transports.md).
///   credit:     credit flow control on every link (NVLink; today's default);
///   infiniband: the same (InfiniBand's link-level credits);
///   roce:       RoCEv2 on lossless Ethernet: PFC on every link instead of
///               credits, ECN marking at switch egress queues, DCQCN (or
///               DCTCP) at the NICs, and frames of one packet;
///   tcp:        lossy Ethernet: no flow control, switches drop what their
///               shared buffer has no room for, and the NICs run a reliable
///               window transport (TCP Reno, or DCTCP with ECN).
struct TransportSpec {
  enum class Kind { kCredit, kInfiniband, kRoce, kTcp };
  /// auto: dcqcn on roce, reno on tcp.
  enum class CongestionControl { kAuto, kNone, kDcqcn, kReno, kDctcp };
  /// How the fabric is simulated: packet, every frame through every link
  /// and switch; flow, each message a flow sharing links by max-min
  /// fairness (models/flow/flow_fabric.h, docs/flow-model.md).
  enum class Model { kPacket, kFlow };
  Kind kind = Kind::kCredit;
  Model model = Model::kPacket;
  /// Flows: rates recomputed at most once per quantum (0: at every flow's
  /// start and end, exact).
  Tick flow_quantum = 0;
  std::uint64_t pfc_xoff = 0;        // 0: the link's buffer less the headroom PFC needs
  std::uint64_t pfc_xon = 0;         // 0: xoff less two packets
  std::uint64_t ecn_kmin = 5'000;    // DCQCN paper: 5 KB
  std::uint64_t ecn_kmax = 200'000;  // DCQCN paper: 200 KB
  double ecn_pmax = 0.01;            // DCQCN paper: 1%
  CongestionControl congestion_control = CongestionControl::kAuto;
  std::uint32_t queue_pairs = 1;
  std::uint64_t switch_buffer = 0;  // tcp, roce: each switch's shared buffer; 0: each port has its link's buffer
  double buffer_alpha = 1;          // dynamic threshold: a port may hold alpha x the free bytes
  PortChoice load_balancing = PortChoice::kFlowHash;  // how switches pick among equal-cost ports
  DcqcnParams dcqcn;
  WindowTransportParams window;
  /// A window transport finds losses by the order frames are acknowledged in.
  bool needs_order() const { return control() == CongestionControl::kReno || control() == CongestionControl::kDctcp; }
  bool lossless_ethernet() const { return kind == Kind::kRoce; }
  bool ethernet() const { return kind == Kind::kRoce || kind == Kind::kTcp; }
  /// What the NICs run, `auto` resolved.
  CongestionControl control() const {
    if (congestion_control != CongestionControl::kAuto) return congestion_control;
    return kind == Kind::kTcp    ? CongestionControl::kReno
           : kind == Kind::kRoce ? CongestionControl::kDcqcn
                                 : CongestionControl::kNone;
  }
};

struct FabricSpec {
  std::string name;
  std::string topology;  // the generator that made it, for reports
  std::vector<FabricNode> nodes;
  std::vector<FabricEdge> edges;
  Routing routing = Routing::kShortestPath;
  std::vector<int> dims;                 // dimension-order routing: sizes
  std::vector<bool> wrap;                // and whether each wraps around (torus)
  bool forward_only = false;             // a unidirectional ring: traffic only goes to rank+1
  NicParams nic;                         // for every NIC on this fabric (address and ports set per NIC)
  std::optional<PcieSwitchParams> pcie;  // a PCIe switch between each NIC and its NPU's memory
  int gpus_per_nic = 1;                  // NPUs sharing each physical NIC (topology_generators.h, share_nics)
  TransportSpec transport;
  std::vector<MemorySpec> memories;
  /// Run as flows (transport.model), the switches' reduction units the file
  /// gives were left out: the flow model has none.
  bool reduction_units_dropped = false;
};

/// Where the RTL reduction units dump their waveforms (--vcd).
struct RtlOptions {
  std::string vcd;  // empty: none
  Tick vcd_from = 0;
  Tick vcd_to = 100'000'000;          // 100 us: a long run must not fill the disk
  std::vector<std::string> plusargs;  // for the RTL's $value$plusargs
};

struct PlatformSpec {
  /// What the loader noticed and did not refuse (a key with no effect on the
  /// fabric it is written for), "file:line: ..." each, said as warnings.
  std::vector<std::string> notes;
  std::string name;
  std::string file;  // where it came from
  int npus = 0;
  NpuParams npu;
  CollectiveConfig collectives;
  PlatformHints hints;  // for the default choice of collective algorithms
  unsigned max_collectives_in_flight = 1;
  bool roofline = true;  // false: compute nodes take their recorded durations
  /// ASTRA-sim's custom collectives: per type, a Chakra trace prefix whose
  /// rank files run in place of that collective (docs/collectives.md).
  std::map<CollectiveType, std::string> custom_collectives;
  std::vector<FabricSpec> fabrics;
  std::optional<MemoryParams> hbm;  // each NPU's local memory, if modeled
  bool no_remote_memory = false;    // ASTRA-sim NO_MEMORY_EXPANSION: MEM nodes are errors
  RtlOptions rtl;
  /// A protocol checker (tlm/protocol_checker.h) on every socket binding:
  /// fabric messages and frames, and the base protocol of memories (--check-protocol).
  bool protocol_checks = false;
};

}  // namespace fabricsim
