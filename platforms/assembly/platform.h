// The builder: instantiates a PlatformSpec's modules, binds their sockets
// and fills the routing tables. The returned Platform owns the modules.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/collectives/collective_agreement.h"
#include "models/flow/flow_fabric.h"
#include "models/link/link.h"
#include "models/memory/memory.h"
#include "models/memory/memory_endpoint.h"
#include "models/nic/nic.h"
#include "models/npu/directory.h"
#include "models/npu/npu.h"
#include "models/npu/work_bounds.h"
#include "models/pcie/pcie_switch.h"
#include "models/switch/aggregation.h"
#include "models/switch/reduction_unit.h"
#include "models/switch/switch.h"
#include "platforms/assembly/in_network_control.h"
#include "platforms/assembly/platform_spec.h"
#include "platforms/assembly/routing.h"
#include "platforms/assembly/traffic_paths.h"
#include "tlm/protocol_checker.h"

namespace fabricsim {

class Platform;
/// The bounds for work on this platform (models/npu/work_bounds.h): its
/// smallest frame as built, its memory, what the process may use.
WorkBounds work_bounds(const Platform& platform, bool force);

class Platform {
 public:
  struct BuiltLink {
    std::unique_ptr<Link> link;
    std::string from, to;            // node names
    int from_npu = -1, to_npu = -1;  // the NPUs whose NICs it joins, if any
  };
  struct BuiltMemory {
    std::string name;
    std::unique_ptr<Memory> memory;
    std::unique_ptr<MemoryEndpoint> endpoint;  // for memories on a fabric
  };
  struct BuiltFabric {
    std::string name;
    std::vector<Nic*> nic_of_rank;  // nullptr where the rank is not on this fabric
    std::vector<std::unique_ptr<Nic>> nics;
    std::vector<std::unique_ptr<PcieSwitch>> pcie_switches;  // between NICs and their NPUs' memories
    std::map<int, PcieSwitch*> pcie_switch_of_group;         // by NPU / pcie.devices_per_switch
    std::vector<std::unique_ptr<Switch>> switches;
    std::vector<BuiltLink> links;
    std::unique_ptr<AggregationManager> aggregation;  // with reduction units
    std::vector<std::unique_ptr<ReductionUnit>> units;
    std::map<std::size_t, std::unique_ptr<SharedBuffer>> shared_buffers;  // tcp: by switch node
    std::vector<std::string> unit_switch;                                 // the switch each unit is in
    std::vector<std::unique_ptr<sc_core::sc_module>> unit_alus;           // RTL units behind their ALU ports
    std::vector<const RoutingTable*> routes;   // per node: its routing table (null: bound straight to a switch)
    std::vector<std::vector<PortInfo>> ports;  // per node: its ports' edges and peers
    /// Run as flows (transport.model: flow): the whole fabric, in place of
    /// its NICs, switches and links (which are then empty).
    std::unique_ptr<FlowFabric> flow;
  };

  /// Elaborates the platform; throws InputError for inconsistent specs, and
  /// for one whose estimated memory (kBuildBytesPer*) is past what the
  /// process may use (WorkBounds::usable_memory), before building anything.
  explicit Platform(PlatformSpec spec);
  static constexpr double kBuildBytesPerEdge = 20e3;  // measured: fully connected 256-1,024 NPUs, 19.6-20.3 KB
  static constexpr double kBuildBytesPerNpu = 16e3;
  static constexpr double kBuildBytesPerNode = 3e3;
  /// The memory the platform takes once built, in bytes (kBuildBytesPer*).
  static double build_memory_estimate(const PlatformSpec& spec);
  ~Platform();

  const PlatformSpec& spec() const { return spec_; }
  int npus() const { return spec_.npus; }
  Npu& npu(int rank) { return *npus_.at(static_cast<std::size_t>(rank)); }
  const Npu& npu(int rank) const { return *npus_.at(static_cast<std::size_t>(rank)); }
  const Directory& directory() const { return directory_; }
  /// The switches' reduction units as collectives use them; null without any.
  InSwitchResolver* in_switch() { return in_network_.any() ? &in_network_ : nullptr; }
  /// Per packet fabric as built, for the resource estimate (none when every
  /// fabric runs as flows).
  struct FrameSize {
    std::size_t fabric = 0;   // its index
    std::uint64_t bytes = 0;  // a frame's payload
    double seconds = 0;       // the wall time a frame costs to simulate here
  };
  const std::vector<FrameSize>& frame_sizes() const { return frame_sizes_; }
  const std::vector<BuiltFabric>& fabrics() const { return fabrics_; }
  /// Every memory: NPUs' HBM first, then memories on fabrics.
  const std::vector<BuiltMemory>& memories() const { return memories_; }
  /// Adjustments the builder made (frames shrunk to fit buffers...), for the user.
  const std::vector<std::string>& notes() const { return notes_; }
  /// Every NPU, every reduction unit and the chosen links report to
  /// `timeline`: none, those touching a recorded NPU, or all. Units and
  /// links are numbered in fabric order, as units() and links() list them.
  enum class TimelineLinks { kNone, kTouchingRecordedNpus, kAll };
  void attach_timeline(TimelineSink* timeline, TimelineLinks links);
  std::vector<const ReductionUnit*> units() const;
  /// Every NPU's and NIC's streamed memory accesses start again at their
  /// window's base. A benchmark that reuses one buffer for every size (as
  /// nccl-tests does) calls it between sizes, so that a row does not depend
  /// on the rows before it: where a frame falls on HBM's interleaved
  /// channels changes its timing.
  void rewind_memory_streams();
  std::vector<const BuiltLink*> links() const;
  /// With protocol_checks: how many checkers sit on the bindings, the
  /// transactions they saw and the breaches they found (a breach also stops
  /// the run with its report).
  struct ProtocolCheckSummary {
    std::size_t checkers = 0;
    std::uint64_t transactions = 0;
    std::uint64_t violations = 0;
  };
  ProtocolCheckSummary protocol_checks() const;
  /// "nic", "switch", "memory", "reduction_unit": a node kind's name in reports.
  static const char* kind_name(FabricNode::Kind kind);

 private:
  /// Binds an initiator socket to a target socket, through a `Checker`
  /// when the spec asks for protocol checks.
  template <class Checker, class Initiator, class Target>
  void bind(Initiator& from, Target& to);
  /// Binds an NPU's NIC sockets on `fabric` (a Nic's or a FlowFabric
  /// endpoint's in and out) to NPU `rank`.
  template <class Target, class Initiator>
  void bind_to_npu(std::size_t fabric, int rank, Target& in, Initiator& out);
  void check_build_memory() const;
  /// Elaborates fabric `index`: its nodes by kind, its links, lookaheads
  /// and routes, and its reduction units' groups.
  void build_fabric(std::size_t index, FabricSpec& f);
  /// Elaborates fabric `index` as flows: one FlowFabric for its NICs,
  /// switches and links, bound to the NPUs and memories as the NICs are.
  void build_flow_fabric(std::size_t index, const FabricSpec& f);
  /// A memory node's memory and controller, and the NPUs it serves told
  /// its address; the caller binds the controller to the fabric.
  BuiltMemory make_fabric_memory(std::size_t fabric, const FabricSpec& f, const FabricNode& n);
  /// The fabric's NIC parameters with frames shortened to fit its smallest
  /// buffer (noted for the user); `frame_wire` gets a frame's wire bytes.
  NicParams fit_frames(const FabricSpec& f, std::uint64_t& frame_wire);
  /// What the fabric's transport asks of node `n`'s NIC (queue pairs, DCQCN).
  void apply_transport(const FabricSpec& f, const FabricNode& n, Nic& nic);
  /// The rate of the link at NIC `n`'s port (its first), unlimited if none.
  static Bandwidth port_rate(const FabricSpec& f, const FabricNode& n);
  /// PFC on a link of a lossless fabric, and ECN marking if its sender is a switch.
  void apply_transport(const FabricSpec& f, Link& link, bool from_switch, SharedBuffer* into, std::uint64_t frame_wire);
  /// Node `node`'s shared buffer on a tcp fabric that has them (null otherwise), made on first use.
  SharedBuffer* shared_buffer(std::size_t fabric, const FabricSpec& f, std::size_t node);
  /// What the maker of a node's component is told.
  struct NodeContext {
    std::size_t fabric;      // index of the fabric being built
    const FabricSpec& spec;  // its description
    const FabricNode& node;
    unsigned ports;                  // its edges: port p is its p-th edge
    const NicParams& nic;            // every NIC's parameters on this fabric, frames fitted
    const std::string& attached_to;  // the node its first port leads to
  };
  /// The component a node of each kind becomes, and its name in reports; see
  /// node_kinds() in platform.cpp. Each returns the node's forwarder, or null
  /// for a node its neighbour binds directly (a switch's reduction unit).
  struct NodeKind {
    FabricNode::Kind kind;
    const char* name;
    Forwarder* (Platform::*make)(const NodeContext&);
  };
  static const std::vector<NodeKind>& node_kinds();
  Forwarder* make_nic(const NodeContext& c);
  Forwarder* make_memory_node(const NodeContext& c);
  Forwarder* make_reduction_unit(const NodeContext& c);
  Forwarder* make_switch(const NodeContext& c);
  void make_links(std::size_t index, const FabricSpec& f, const std::vector<Forwarder*>& router,
                  std::uint64_t frame_wire);
  void set_lookaheads(const FabricSpec& f, const std::vector<Forwarder*>& router);
  /// Fills the routing tables of the nodes that have one (`table(u)`, null
  /// for the others) as the fabric's routing says.
  void install_routes(const FabricSpec& f, const std::vector<std::vector<PortInfo>>& ports,
                      const std::function<RoutingTable*(std::size_t)>& table);
  /// Gives each switch with a reduction unit an internal port to it.
  void add_reduction_units(FabricSpec& f);
  void set_up_aggregation(std::size_t index, const FabricSpec& f);

  PlatformSpec spec_;
  Directory directory_;
  InNetworkControl in_network_{directory_};
  std::vector<FrameSize> frame_sizes_;
  CollectiveAgreement agreement_;  // shared by the NPUs' collective engines
  std::vector<std::unique_ptr<Npu>> npus_;
  // With protocol_checks, by protocol.
  std::vector<std::unique_ptr<MessageChecker>> message_checkers_;
  std::vector<std::unique_ptr<FrameChecker>> frame_checkers_;
  std::vector<std::unique_ptr<BaseProtocolChecker>> memory_checkers_;
  std::vector<BuiltFabric> fabrics_;
  std::vector<BuiltMemory> memories_;
  std::vector<std::string> notes_;
  /// What the flow model leaves out of each fabric run as flows: (reason, fabric).
  std::vector<std::pair<std::string, std::string>> flow_caveats_;
  void note_flow_caveats();
  std::map<std::string, unsigned> units_of_model_;  // reduction units made so far, by model
  std::unique_ptr<PlatformPaths> paths_;            // for the default choices' cost model (spec_.hints.cost_model)
  std::unique_ptr<CostModel> cost_model_;
};

}  // namespace fabricsim
