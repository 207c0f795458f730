#include "platforms/assembly/platform.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <type_traits>

#include "platforms/assembly/reduction_models.h"
#include "platforms/assembly/routing.h"
#include "tlm/kernel/calendar.h"

namespace fabricsim {

WorkBounds work_bounds(const Platform& platform, bool force) {
  WorkBounds b;
  // Frames as the built NICs cut them (shortened to fit small buffers, one
  // packet on Ethernet), on the fabric each message takes; a fabric of
  // flows moves one per message.
  b.frames.fabrics.assign(platform.fabrics().size(),
                          {std::numeric_limits<std::uint64_t>::max(), WorkBounds::kSecondsPerFrame});
  // Sends without a known route (and relays): the smallest frame, its cost.
  b.frames.fallback = {std::numeric_limits<std::uint64_t>::max(), WorkBounds::kSecondsPerFrame};
  for (const Platform::FrameSize& f : platform.frame_sizes()) {
    b.frames.fabrics.at(f.fabric) = {f.bytes, f.seconds};
    if (f.bytes <= b.frames.fallback.frame_bytes) b.frames.fallback = {f.bytes, f.seconds};
  }
  b.frame_bytes = b.frames.fallback.frame_bytes;
  b.seconds_per_frame = b.frames.fallback.seconds;
  const Directory* directory = &platform.directory();
  b.frames.fabric_of = [directory](int from, int to) {
    if (from < 0 || to < 0 || from >= directory->npus() || to >= directory->npus()) return -1;  // a unit
    try {
      return static_cast<int>(directory->route(from, to).fabric);
    } catch (const std::runtime_error&) {
      return -1;  // relayed by another NPU
    }
  };
  // A message's own work: its engine rounds, NIC overhead and matching, and
  // with HBM the DMA of its first frame and the memory model's sharing.
  b.seconds_per_message =
      WorkBounds::kSecondsPerMessage + (platform.spec().hbm ? WorkBounds::kSecondsPerMessageDma : 0);
  b.platform_bytes = Platform::build_memory_estimate(platform.spec());
  const WorkBounds::MemoryLimit limit = WorkBounds::usable_memory();
  b.memory_bytes = limit.bytes;
  b.memory_limit = limit.what;
  b.force = force;
  return b;
}

Platform::~Platform() = default;

template <class Checker, class Initiator, class Target>
void Platform::bind(Initiator& from, Target& to) {
  if (!spec_.protocol_checks) {
    from.bind(to);
    return;
  }
  auto checker = std::make_unique<Checker>(sc_core::sc_gen_unique_name("protocol_checker"));
  from.bind(checker->in);
  checker->out.bind(to);
  if constexpr (std::is_same_v<Checker, MessageChecker>) {
    message_checkers_.push_back(std::move(checker));
  } else if constexpr (std::is_same_v<Checker, FrameChecker>) {
    frame_checkers_.push_back(std::move(checker));
  } else {
    memory_checkers_.push_back(std::move(checker));
  }
}

template <class Target, class Initiator>
void Platform::bind_to_npu(std::size_t fabric, int rank, Target& in, Initiator& out) {
  // The NIC index is the fabric's position among the NPU's fabrics.
  Npu& npu = *npus_[static_cast<std::size_t>(rank)];
  for (const auto& a : directory_.attachments(rank)) {
    if (a.fabric == fabric) {
      bind<MessageChecker>(npu.to_nic[a.nic], in);
      bind<MessageChecker>(out, npu.from_nic[a.nic]);
    }
  }
}

Platform::ProtocolCheckSummary Platform::protocol_checks() const {
  ProtocolCheckSummary s;
  const auto add = [&s](const auto& checkers) {
    for (const auto& c : checkers) {
      ++s.checkers;
      s.transactions += c->transactions();
      s.violations += c->violations();
    }
  };
  add(message_checkers_);
  add(frame_checkers_);
  add(memory_checkers_);
  return s;
}

Platform::Platform(PlatformSpec spec) : spec_(std::move(spec)) {
  Calendar::instance();  // the fabric's calendar is a top-level module
  if (spec_.npus < 1) throw InputError(spec_.file + ": a platform needs at least one NPU");
  check_build_memory();
  notes_ = spec_.notes;
  directory_.resize(spec_.npus);

  // Which fabrics each NPU is on, in declaration order: that is its NIC order.
  std::vector<unsigned> nic_count(static_cast<std::size_t>(spec_.npus), 0);
  for (std::size_t fi = 0; fi < spec_.fabrics.size(); ++fi) {
    const FabricSpec& f = spec_.fabrics[fi];
    if (f.edges.empty()) continue;  // one NPU alone: nothing to build
    for (const FabricNode& n : f.nodes) {
      if (n.kind != FabricNode::Kind::kNic) continue;
      if (n.npu < 0 || n.npu >= spec_.npus) {
        throw InputError(spec_.file + ": fabric \"" + f.name + "\" names NPU " + std::to_string(n.npu) +
                         ", but the platform has " + std::to_string(spec_.npus));
      }
      directory_.attach(n.npu, static_cast<std::uint16_t>(fi),
                        static_cast<std::uint16_t>(nic_count[static_cast<std::size_t>(n.npu)]++), n.address);
    }
  }
  for (int r = 0; r < spec_.npus; ++r) {
    npus_.push_back(std::make_unique<Npu>(("npu" + std::to_string(r)).c_str(), r,
                                          nic_count[static_cast<std::size_t>(r)], spec_.npu, directory_,
                                          spec_.collectives));
    npus_.back()->set_agreement(&agreement_);
  }
  // Local memory: one per NPU, shared by its compute engine and its NICs.
  if (spec_.hbm) {
    for (int r = 0; r < spec_.npus; ++r) {
      BuiltMemory bm;
      bm.name = "npu" + std::to_string(r) + "_hbm";
      bm.memory = std::make_unique<Memory>(bm.name.c_str(), *spec_.hbm);
      Npu& npu = *npus_[static_cast<std::size_t>(r)];
      bind<BaseProtocolChecker>(npu.hbm.socket, bm.memory->in);
      // Compute streams through the lower half, NIC DMA through the upper.
      npu.hbm.set_window(spec_.hbm->base, spec_.hbm->size_bytes / 2);
      memories_.push_back(std::move(bm));
    }
  }
  fabrics_.resize(spec_.fabrics.size());
  for (std::size_t fi = 0; fi < spec_.fabrics.size(); ++fi) build_fabric(fi, spec_.fabrics[fi]);
  note_flow_caveats();
  // The default choices' cost model follows the routes just installed.
  if (spec_.hints.fabric_costs.size() == spec_.fabrics.size()) {
    std::vector<PlatformPaths::Fabric> paths;
    for (std::size_t fi = 0; fi < spec_.fabrics.size(); ++fi) {
      const bool built = !spec_.fabrics[fi].edges.empty();
      paths.push_back(PlatformPaths::Fabric{built ? &spec_.fabrics[fi] : nullptr, fabrics_[fi].routes,
                                            fabrics_[fi].ports, &spec_.hints.fabric_costs[fi]});
    }
    paths_ = std::make_unique<PlatformPaths>(directory_, std::move(paths));
    cost_model_ = std::make_unique<CostModel>(*paths_);
    spec_.hints.cost_model = cost_model_.get();
  }
  // NPUs use reduction units only through the control plane.
  if (in_network_.any()) {
    for (auto& npu : npus_) npu->set_in_switch(&in_network_);
  }
}

void Platform::note_flow_caveats() {
  std::vector<std::string> reasons;  // in the order first met
  for (const auto& [reason, fabric] : flow_caveats_) {
    if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(reason);
  }
  for (const std::string& reason : reasons) {
    std::vector<std::string> names;
    for (const auto& [r, fabric] : flow_caveats_) {
      if (r == reason) names.push_back(fabric);
    }
    std::string list;
    for (std::size_t i = 0; i < names.size() && i < 3; ++i) list += (i ? ", \"" : "\"") + names[i] + "\"";
    if (names.size() > 3) list += " and " + std::to_string(names.size() - 3) + " more";
    const bool one = names.size() == 1;
    const std::string said = one && reason.rfind("their ", 0) == 0 ? "its " + reason.substr(6) : reason;
    notes_.push_back((one ? "fabric " : "fabrics ") + list + (one ? " runs" : " run") +
                     " as flows (transport.model: flow): " + said);
  }
  flow_caveats_.clear();
}

namespace {
/// What a platform builds: its fabrics' connections and nodes.
struct BuildSize {
  double edges = 0, nodes = 0;
};
BuildSize build_size(const PlatformSpec& spec) {
  BuildSize b;
  for (const FabricSpec& f : spec.fabrics) {
    b.edges += static_cast<double>(f.edges.size());
    b.nodes += static_cast<double>(f.nodes.size());
  }
  return b;
}
}  // namespace

double Platform::build_memory_estimate(const PlatformSpec& spec) {
  const BuildSize b = build_size(spec);
  return kBuildBytesPerEdge * b.edges + kBuildBytesPerNpu * spec.npus + kBuildBytesPerNode * b.nodes;
}

void Platform::check_build_memory() const {
  // Measured on the project's machine (docs/performance.md, "Building a
  // platform"): about 20 KB per fabric edge (its two links, their ports,
  // routing entries), 16 KB per NPU (its engine, HBM model, NIC), 3 KB per
  // other node; fully connected fabrics of 256, 512 and 1,024 NPUs took
  // 0.66, 2.6 and 10.2 GB. A platform past the memory the process may use
  // is refused before a module is built: 4,096 fully connected NPUs would
  // take 170 GB, and ran the machine out of memory.
  const double estimate = build_memory_estimate(spec_);
  const WorkBounds::MemoryLimit limit = WorkBounds::usable_memory();
  if (limit.bytes > 0 && estimate > static_cast<double>(limit.bytes)) {
    const BuildSize size = build_size(spec_);
    char counts[160];
    std::snprintf(counts, sizeof counts,
                  " to build (%.0f connections between %.0f fabric nodes, %d NPUs), more than the ", size.edges,
                  size.nodes, spec_.npus);
    throw InputError(spec_.file + ": the platform would take about " + WorkBounds::gib_text(estimate) + counts +
                     WorkBounds::gib_text(static_cast<double>(limit.bytes)) + " of " + limit.what +
                     " (a switch or fat tree joins as many NPUs with far fewer links)");
  }
}

const std::vector<Platform::NodeKind>& Platform::node_kinds() {
  // Adding a kind of node: its model in its own folder under models/, a
  // FabricNode::Kind for the topologies to place it, and one line here.
  static const std::vector<NodeKind> kinds = {
      {FabricNode::Kind::kNic, "nic", &Platform::make_nic},
      {FabricNode::Kind::kSwitch, "switch", &Platform::make_switch},
      {FabricNode::Kind::kMemory, "memory", &Platform::make_memory_node},
      {FabricNode::Kind::kReductionUnit, "reduction_unit", &Platform::make_reduction_unit},
  };
  return kinds;
}

const char* Platform::kind_name(FabricNode::Kind kind) {
  for (const NodeKind& k : node_kinds()) {
    if (k.kind == kind) return k.name;
  }
  throw std::logic_error("a fabric node kind with no entry in Platform::node_kinds()");
}

void Platform::build_fabric(std::size_t fi, FabricSpec& f) {
  BuiltFabric& bf = fabrics_[fi];
  bf.name = f.name;
  bf.nic_of_rank.assign(static_cast<std::size_t>(spec_.npus), nullptr);
  if (f.edges.empty()) return;
  if (f.transport.model == TransportSpec::Model::kFlow) {
    build_flow_fabric(fi, f);
    return;
  }

  add_reduction_units(f);
  const auto ports = port_map(f);
  std::uint64_t frame_wire = 0;
  const NicParams nic = fit_frames(f, frame_wire);
  // What a frame costs to simulate here (WorkBounds): its hops, plus its
  // NICs' DMA through HBM (per frame; an Ethernet NIC's one-packet frames
  // come from reads ahead of a segment), plus a TCP transport's
  // acknowledgements.
  double frame_cost = WorkBounds::kSecondsPerFrame;
  if (spec_.hbm && !f.transport.ethernet()) frame_cost += WorkBounds::kSecondsPerFrameDma;
  if (f.transport.kind == TransportSpec::Kind::kTcp) frame_cost += WorkBounds::kSecondsPerFrameAcked;
  frame_sizes_.push_back({fi, nic.segment_bytes, frame_cost});
  // One component per node, by kind; routers are the nodes that forward.
  std::vector<Forwarder*> router(f.nodes.size(), nullptr);
  for (std::size_t u = 0; u < f.nodes.size(); ++u) {
    const FabricNode& n = f.nodes[u];
    const auto nports = static_cast<unsigned>(ports[u].size());
    if (nports == 0) {
      throw InputError(spec_.file + ": fabric \"" + f.name + "\": " + n.name + " is not connected to anything");
    }
    const std::string& attached_to = f.nodes[static_cast<std::size_t>(ports[u].front().peer)].name;
    for (const NodeKind& k : node_kinds()) {
      if (k.kind == n.kind) router[u] = (this->*k.make)(NodeContext{fi, f, n, nports, nic, attached_to});
    }
  }
  make_links(fi, f, router, frame_wire);
  set_lookaheads(f, router);
  if (f.routing != Routing::kDimensionOrder) {
    for (Forwarder* r : router) {
      if (r) r->set_port_choice(f.transport.load_balancing);
    }
  }
  install_routes(f, ports, [&](std::size_t u) { return router[u] ? &router[u]->routes() : nullptr; });
  if (bf.aggregation) set_up_aggregation(fi, f);
  for (Forwarder* r : router) bf.routes.push_back(r ? &r->routes() : nullptr);
  bf.ports = ports;
}

void Platform::build_flow_fabric(std::size_t fi, const FabricSpec& f) {
  BuiltFabric& bf = fabrics_[fi];
  // What flows leave out that this fabric has, said once per kind for all
  // the fabrics it applies to (flow_caveats_, noted by the constructor).
  if (f.reduction_units_dropped) {
    flow_caveats_.emplace_back(
        "their switch reduction units are not modelled as flows and were left out; in-switch "
        "collectives need model: packet",
        f.name);
  }
  if (f.transport.ethernet()) {
    flow_caveats_.emplace_back(
        "their transport's PFC, ECN marking, " +
            std::string(f.transport.needs_order() ? "drops, window congestion control" : "DCQCN rate control") +
            " and switch buffers are not represented; links are shared by max-min fairness",
        f.name);
  }
  if (f.transport.load_balancing == PortChoice::kAdaptive || f.transport.load_balancing == PortChoice::kSpray) {
    flow_caveats_.emplace_back("load_balancing adaptive and spray are per packet; each flow keeps its hashed path",
                               f.name);
  }
  if (spec_.hbm) {
    flow_caveats_.emplace_back(std::string("their NICs' DMA to and from HBM") + (f.pcie ? " through PCIe" : "") +
                                   " is a fixed cost per message and shares no bandwidth with compute or other NICs",
                               f.name);
  }
  const auto ports = port_map(f);
  FlowFabric::Graph g;
  const std::string prefix = bf.name + "_";
  for (std::size_t u = 0; u < f.nodes.size(); ++u) {
    const FabricNode& n = f.nodes[u];
    if (ports[u].empty()) {
      throw InputError(spec_.file + ": fabric \"" + f.name + "\": " + n.name + " is not connected to anything");
    }
    FlowFabric::Graph::Node gn;
    gn.name = n.name;
    gn.address = n.address;
    gn.endpoint = n.kind == FabricNode::Kind::kNic || n.kind == FabricNode::Kind::kMemory;
    gn.dma = n.kind == FabricNode::Kind::kNic && spec_.hbm.has_value();  // as make_nic binds its dma
    // As the packet model's nodes: a switch's hop latency, a NIC's forward latency.
    gn.hop_latency = n.kind == FabricNode::Kind::kSwitch ? n.hop_latency : f.nic.forward_latency;
    for (const PortInfo& p : ports[u]) {
      const FabricEdge& e = f.edges[static_cast<std::size_t>(p.edge)];
      gn.ports.push_back(2 * static_cast<std::uint32_t>(p.edge) + (e.a == static_cast<int>(u) ? 0u : 1u));
    }
    g.nodes.push_back(std::move(gn));
  }
  for (const FabricEdge& e : f.edges) {
    const auto a = static_cast<std::uint32_t>(e.a), b = static_cast<std::uint32_t>(e.b);
    const std::string& na = f.nodes[a].name;
    const std::string& nb = f.nodes[b].name;
    g.links.push_back(FlowFabric::Graph::Link{a, b, e.link.bandwidth, e.link.latency, prefix + na + "_to_" + nb});
    g.links.push_back(FlowFabric::Graph::Link{b, a, e.link.bandwidth, e.link.latency, prefix + nb + "_to_" + na});
  }
  FlowFabric::Params fp;
  fp.nic = f.nic;
  // Frames as the NICs cut them (Nic's constructor, fit_frames): whole
  // packets, and one packet on Ethernet; they set the queue pairs a message
  // uses and the frame its DMA reads first.
  fp.nic.segment_bytes = f.transport.ethernet() ? fp.nic.mtu_bytes : fp.nic.frame_bytes();
  fp.queue_pairs = f.transport.queue_pairs;
  fp.quantum = f.transport.flow_quantum;
  if (spec_.hbm) {  // a frame read from (written to) HBM, through the PCIe switch and back if there is one
    fp.dma_latency = spec_.hbm->latency + (f.pcie ? 2 * f.pcie->latency : 0);
    fp.dma_rate = spec_.hbm->bandwidth;
    if (f.pcie && f.pcie->data_bandwidth().bytes_per_ps() < fp.dma_rate.bytes_per_ps()) {
      fp.dma_rate = f.pcie->data_bandwidth();
    }
  }
  bf.flow = std::make_unique<FlowFabric>((prefix + "flows").c_str(), fp, std::move(g));
  FlowFabric& flow = *bf.flow;
  install_routes(f, ports, [&](std::size_t u) { return &flow.routes(static_cast<std::uint32_t>(u)); });
  for (std::size_t u = 0; u < f.nodes.size(); ++u) bf.routes.push_back(&flow.routes(static_cast<std::uint32_t>(u)));
  bf.ports = ports;
  // Bind each endpoint as its NIC would be: NPUs by their NIC on this fabric, memories by their controller.
  for (std::size_t u = 0; u < f.nodes.size(); ++u) {
    const FabricNode& n = f.nodes[u];
    const int e = flow.endpoint_of_node(static_cast<std::uint32_t>(u));
    if (e < 0) continue;
    const auto ei = static_cast<std::size_t>(e);
    if (n.kind == FabricNode::Kind::kNic) {
      bind_to_npu(fi, n.npu, flow.in[ei], flow.out[ei]);
    } else {
      BuiltMemory bm = make_fabric_memory(fi, f, n);
      bind<MessageChecker>(flow.out[ei], bm.endpoint->from_nic);
      bind<MessageChecker>(bm.endpoint->to_nic, flow.in[ei]);
      memories_.push_back(std::move(bm));
    }
  }
}

NicParams Platform::fit_frames(const FabricSpec& f, std::uint64_t& frame_wire) {
  bool rings = false;
  for (const FabricEdge& e : f.edges) rings |= e.ring >= 0;
  // Frames must fit the smallest buffer (twice over on rings, where a frame
  // entering a ring needs room for one more: bubble flow control).
  std::uint64_t min_buffer = ~0ull;
  std::string min_buffer_edge;
  for (const FabricEdge& e : f.edges) {
    if (e.internal) {  // a reduction unit's buffer must hold a frame too
      const auto& unit = f.nodes[static_cast<std::size_t>(e.b)].reduction->unit;
      if (unit.buffer_bytes < min_buffer) {
        min_buffer = unit.buffer_bytes;
        min_buffer_edge = f.nodes[static_cast<std::size_t>(e.a)].name + "'s reduction unit";
      }
      continue;
    }
    if (e.link.buffer_bytes < min_buffer) {
      min_buffer = e.link.buffer_bytes;
      min_buffer_edge =
          f.nodes[static_cast<std::size_t>(e.a)].name + " - " + f.nodes[static_cast<std::size_t>(e.b)].name;
    }
  }
  NicParams nic = f.nic;
  const std::uint64_t packet_wire = nic.mtu_bytes + nic.header_bytes;
  const std::uint64_t need_packets = rings ? 2 : 1;
  if (min_buffer < need_packets * packet_wire) {
    throw InputError(spec_.file + ": fabric \"" + f.name + "\": the " + std::to_string(min_buffer) +
                     "-byte buffer of link " + min_buffer_edge + " is too small for one " +
                     std::to_string(packet_wire) + "-byte packet" + (rings ? " plus the bubble a ring needs" : ""));
  }
  const std::uint64_t fit_packets = min_buffer / need_packets / packet_wire;
  const std::uint64_t seg_packets = (nic.segment_bytes + nic.mtu_bytes - 1) / nic.mtu_bytes;
  if (seg_packets > fit_packets) {
    nic.segment_bytes = fit_packets * nic.mtu_bytes;
    notes_.push_back("fabric \"" + f.name + "\": frames shortened to " + std::to_string(nic.segment_bytes) +
                     " bytes to fit the " + std::to_string(min_buffer) + "-byte buffers");
  }
  if (f.transport.ethernet() && nic.segment_bytes > nic.mtu_bytes) {
    // ECN marks, PFC and drops act per packet.
    nic.segment_bytes = nic.mtu_bytes;
    notes_.push_back("fabric \"" + f.name + "\": transport " + (f.transport.lossless_ethernet() ? "roce" : "tcp") +
                     " sends frames of one " + std::to_string(nic.mtu_bytes) +
                     "-byte packet (ECN, PFC and drops act per packet)");
  }
  frame_wire = nic.segment_bytes + ((nic.segment_bytes + nic.mtu_bytes - 1) / nic.mtu_bytes) * nic.header_bytes;
  return nic;
}

void Platform::apply_transport(const FabricSpec& f, const FabricNode& n, Nic& nic) {
  const TransportSpec& t = f.transport;
  using CC = TransportSpec::CongestionControl;
  const CC cc = t.control();
  const bool dcqcn = cc == CC::kDcqcn;
  const bool window = cc == CC::kReno || cc == CC::kDctcp;
  if (!dcqcn && !window && t.queue_pairs <= 1) return;
  Nic::Transport nt;
  nt.queue_pairs = t.queue_pairs;
  nt.dcqcn = dcqcn;
  nt.dcqcn_params = t.dcqcn;
  nt.window = window;
  nt.window_params = t.window;
  nt.window_params.control = cc == CC::kDctcp ? WindowControl::kDctcp : WindowControl::kReno;
  nt.line_rate = port_rate(f, n);  // DCQCN's highest rate
  nic.set_transport(nt);
}

Bandwidth Platform::port_rate(const FabricSpec& f, const FabricNode& n) {
  // The NIC's port: its first link.
  const auto u = static_cast<int>(&n - f.nodes.data());
  for (const FabricEdge& e : f.edges) {
    if (e.a == u || e.b == u) return e.link.bandwidth;
  }
  return Bandwidth::unlimited();
}

void Platform::apply_transport(const FabricSpec& f, Link& link, bool from_switch, SharedBuffer* into,
                               std::uint64_t frame_wire) {
  const TransportSpec& t = f.transport;
  using CC = TransportSpec::CongestionControl;
  const bool marks = from_switch && (t.control() == CC::kDcqcn || t.control() == CC::kDctcp);
  if (marks) {
    Link::Ecn ecn;
    ecn.kmin = t.ecn_kmin;
    ecn.kmax = t.ecn_kmax;
    ecn.pmax = t.ecn_pmax;
    ecn.seed = std::hash<std::string>()(link.name());  // repeatable, different per link
    link.set_ecn(ecn);
  }
  if (t.kind == TransportSpec::Kind::kTcp) {
    link.set_lossy(into);
    return;
  }
  if (!t.lossless_ethernet()) return;
  const LinkParams& lp = link.params();
  const std::uint64_t headroom = Link::pfc_headroom(lp, frame_wire);
  Link::Pfc pfc;
  pfc.xoff = t.pfc_xoff > 0 ? t.pfc_xoff : lp.buffer_bytes > headroom ? lp.buffer_bytes - headroom : 0;
  pfc.xon = t.pfc_xon > 0 ? t.pfc_xon : pfc.xoff > 2 * frame_wire ? pfc.xoff - 2 * frame_wire : 0;
  try {
    link.set_pfc(pfc, frame_wire, into);
  } catch (const std::invalid_argument& e) {
    throw InputError(spec_.file + ": fabric \"" + f.name + "\", transport roce: " + e.what());
  }
}

Forwarder* Platform::make_nic(const NodeContext& c) {
  const std::size_t fi = c.fabric;
  const FabricNode& n = c.node;
  BuiltFabric& bf = fabrics_[fi];
  NicParams p = c.nic;
  p.address = n.address;
  p.ports = c.ports;
  auto m = std::make_unique<Nic>((bf.name + "_" + n.name + "_nic").c_str(), p);
  Nic* raw = m.get();
  bf.nic_of_rank[static_cast<std::size_t>(n.npu)] = raw;
  apply_transport(c.spec, n, *raw);
  bind_to_npu(fi, n.npu, m->in, m->out);
  if (spec_.hbm) {
    Memory& hbm = *memories_[static_cast<std::size_t>(n.npu)].memory;
    if (c.spec.pcie) {  // the NIC reaches the GPU's memory through a PCIe switch
      // Consecutive NPUs share a switch, each NIC beside its own GPU.
      const int per_switch = static_cast<int>(c.spec.pcie->devices_per_switch);
      PcieSwitch*& pcie = bf.pcie_switch_of_group[n.npu / per_switch];
      if (!pcie) {
        const std::string name =
            per_switch == 1 ? bf.name + "_" + n.name + "_pcie" : bf.name + "_pcie" + std::to_string(n.npu / per_switch);
        PcieSwitchParams pp = *c.spec.pcie;
        pp.devices_per_port = static_cast<unsigned>(c.spec.gpus_per_nic);
        bf.pcie_switches.push_back(std::make_unique<PcieSwitch>(name.c_str(), pp));
        pcie = bf.pcie_switches.back().get();
      }
      bind<BaseProtocolChecker>(m->dma.socket, pcie->from_devices);
      bind<BaseProtocolChecker>(pcie->to_memory, hbm.in);
    } else {
      bind<BaseProtocolChecker>(m->dma.socket, hbm.in);
    }
    m->dma.set_window(spec_.hbm->base + spec_.hbm->size_bytes / 2, spec_.hbm->size_bytes / 2);
  }
  raw->set_line_rate(port_rate(c.spec, n));
  bf.nics.push_back(std::move(m));
  return &raw->forwarder();
}

Forwarder* Platform::make_memory_node(const NodeContext& c) {
  // A memory node: its own NIC, the controller, and the memory.
  const std::size_t fi = c.fabric;
  const FabricSpec& f = c.spec;
  const FabricNode& n = c.node;
  BuiltFabric& bf = fabrics_[fi];
  NicParams p = c.nic;
  p.address = n.address;
  p.ports = c.ports;
  auto m = std::make_unique<Nic>((bf.name + "_" + n.name + "_nic").c_str(), p);
  Nic* raw = m.get();
  apply_transport(f, n, *raw);
  BuiltMemory bm = make_fabric_memory(fi, f, n);
  bind<MessageChecker>(m->out, bm.endpoint->from_nic);
  bind<MessageChecker>(bm.endpoint->to_nic, m->in);
  bf.nics.push_back(std::move(m));
  memories_.push_back(std::move(bm));
  return &raw->forwarder();
}

Platform::BuiltMemory Platform::make_fabric_memory(std::size_t fi, const FabricSpec& f, const FabricNode& n) {
  const std::string prefix = fabrics_[fi].name + "_";
  const MemorySpec& ms = f.memories.at(static_cast<std::size_t>(n.memory));
  BuiltMemory bm;
  bm.name = ms.name;
  bm.memory = std::make_unique<Memory>((prefix + n.name).c_str(), ms.memory);
  bm.endpoint = std::make_unique<MemoryEndpoint>((prefix + n.name + "_controller").c_str(), n.address);
  bind<BaseProtocolChecker>(bm.endpoint->memory.socket, bm.memory->in);
  for (int rank : ms.serves) {
    const Directory::Attachment* a = nullptr;
    for (const auto& x : directory_.attachments(rank)) {
      if (x.fabric == fi) {
        a = &x;
        break;
      }
    }
    if (!a) {
      throw InputError(spec_.file + ": memory \"" + ms.name + "\" serves NPU " + std::to_string(rank) +
                       ", which is not on fabric \"" + f.name + "\"");
    }
    directory_.set_memory(rank,
                          Directory::MemoryRoute{a->nic, n.address, ms.memory.base, ms.memory.size_bytes, ms.name});
  }
  return bm;
}

Forwarder* Platform::make_reduction_unit(const NodeContext& c) {
  // Bound straight to its switch's crossbar (make_links): no forwarder.
  const std::size_t fi = c.fabric;
  const FabricNode& n = c.node;
  const std::string& switch_name = c.attached_to;
  BuiltFabric& bf = fabrics_[fi];
  const std::string prefix = bf.name + "_";
  ReductionUnitParams p = n.reduction->unit;
  p.address = n.address;
  p.peer_id = static_cast<std::uint32_t>(directory_.add_unit(static_cast<std::uint16_t>(fi), n.address));
  p.mtu_bytes = c.nic.mtu_bytes;
  p.header_bytes = c.nic.header_bytes;
  if (!bf.aggregation) bf.aggregation = std::make_unique<AggregationManager>();
  bf.units.push_back(std::make_unique<ReductionUnit>((prefix + n.name).c_str(), p, *bf.aggregation));
  const ReductionModel& model = reduction_model(*n.reduction);
  if (!model.unavailable.empty()) {
    throw InputError(spec_.file + ": switch \"" + switch_name + "\" asks for the " + model.name +
                     " reduction unit (model: " + model.name + "), but " + model.unavailable);
  }
  if (model.attach) {
    unsigned& made = units_of_model_[model.name];
    auto alu = model.attach(*bf.units.back(),
                            ReductionModelContext{prefix + n.name + "_" + model.name, *n.reduction, spec_.rtl, made++});
    bf.unit_alus.push_back(std::move(alu));
  }
  bf.unit_switch.push_back(switch_name);
  return nullptr;
}

Forwarder* Platform::make_switch(const NodeContext& c) {
  BuiltFabric& bf = fabrics_[c.fabric];
  Switch::Params p;
  p.ports = c.ports;
  p.hop_latency = c.node.hop_latency;
  bf.switches.push_back(std::make_unique<Switch>((bf.name + "_" + c.node.name).c_str(), p));
  return &bf.switches.back()->forwarder();
}

void Platform::make_links(std::size_t fi, const FabricSpec& f, const std::vector<Forwarder*>& router,
                          std::uint64_t frame_wire) {
  // Two directions per edge. Port p of node u is its p-th edge.
  BuiltFabric& bf = fabrics_[fi];
  const std::string prefix = bf.name + "_";
  std::vector<unsigned> next_port(f.nodes.size(), 0);
  std::size_t next_unit = 0;
  for (const FabricEdge& edge : f.edges) {
    const auto a = static_cast<std::size_t>(edge.a), b = static_cast<std::size_t>(edge.b);
    const unsigned pa = next_port[a]++, pb = next_port[b]++;
    if (edge.internal) {  // a switch (a) and its reduction unit (b): the crossbar, no link
      ReductionUnit& unit = *bf.units.at(next_unit++);
      bind<FrameChecker>(router[a]->output(pa), unit.in);
      bind<FrameChecker>(unit.out, router[a]->input(pa));
      continue;
    }
    LinkParams lp = edge.link;
    lp.bubble_bytes = edge.ring >= 0 ? frame_wire : 0;
    if (edge.ring >= 0) {
      router[a]->set_port_ring(pa, edge.ring);
      router[b]->set_port_ring(pb, edge.ring);
    }
    const std::string& na = f.nodes[a].name;
    const std::string& nb = f.nodes[b].name;
    auto ab = std::make_unique<Link>((prefix + na + "_to_" + nb).c_str(), lp);
    auto ba = std::make_unique<Link>((prefix + nb + "_to_" + na).c_str(), lp);
    bind<FrameChecker>(router[a]->output(pa), ab->in);
    bind<FrameChecker>(ab->out, router[b]->input(pb));
    bind<FrameChecker>(router[b]->output(pb), ba->in);
    bind<FrameChecker>(ba->out, router[a]->input(pa));
    router[a]->set_backlog(pa, ab.get());
    router[b]->set_backlog(pb, ba.get());
    // A shared NIC's port and its functions are one chip: no transport
    // between them; toward the network the port is a NIC's (no marks).
    if (!f.nodes[a].nic_port && !f.nodes[b].nic_port) {
      apply_transport(f, *ab, f.nodes[a].kind == FabricNode::Kind::kSwitch, shared_buffer(fi, f, b), frame_wire);
      apply_transport(f, *ba, f.nodes[b].kind == FabricNode::Kind::kSwitch, shared_buffer(fi, f, a), frame_wire);
    } else if (f.nodes[a].kind != FabricNode::Kind::kNic && f.nodes[b].kind != FabricNode::Kind::kNic) {
      apply_transport(f, *ab, !f.nodes[a].nic_port, shared_buffer(fi, f, b), frame_wire);
      apply_transport(f, *ba, !f.nodes[b].nic_port, shared_buffer(fi, f, a), frame_wire);
    }
    const int npu_a = f.nodes[a].kind == FabricNode::Kind::kNic ? f.nodes[a].npu : -1;
    const int npu_b = f.nodes[b].kind == FabricNode::Kind::kNic ? f.nodes[b].npu : -1;
    bf.links.push_back(BuiltLink{std::move(ab), na, nb, npu_a, npu_b});
    bf.links.push_back(BuiltLink{std::move(ba), nb, na, npu_b, npu_a});
  }
}

SharedBuffer* Platform::shared_buffer(std::size_t fi, const FabricSpec& f, std::size_t node) {
  if (!f.transport.ethernet() || f.transport.switch_buffer == 0 || f.nodes[node].kind != FabricNode::Kind::kSwitch ||
      f.nodes[node].nic_port) {
    return nullptr;
  }
  BuiltFabric& bf = fabrics_[fi];
  auto& pool = bf.shared_buffers[node];
  if (!pool) {
    pool = std::make_unique<SharedBuffer>(bf.name + "_" + f.nodes[node].name + "_buffer", f.transport.switch_buffer,
                                          f.transport.buffer_alpha);
  }
  return pool.get();
}

void Platform::set_lookaheads(const FabricSpec& f, const std::vector<Forwarder*>& router) {
  // Each router may forward a frame as early as the slowest-to-arrive
  // competitor allows: its smallest input latency.
  std::vector<Tick> min_latency(f.nodes.size(), kNever);
  for (const FabricEdge& e : f.edges) {
    for (int n : {e.a, e.b})
      min_latency[static_cast<std::size_t>(n)] = std::min(min_latency[static_cast<std::size_t>(n)], e.link.latency);
  }
  for (std::size_t u = 0; u < f.nodes.size(); ++u) {
    if (router[u]) router[u]->set_lookahead(min_latency[u] == kNever ? 0 : min_latency[u]);
  }
}

void Platform::install_routes(const FabricSpec& f, const std::vector<std::vector<PortInfo>>& ports,
                              const std::function<RoutingTable*(std::size_t)>& table) {
  // A NIC with one port needs no table, and dimension-order routing is
  // computed from addresses rather than looked up (no table per node).
  try {
    if (f.routing == Routing::kDimensionOrder) {
      const DimensionOrder dor = dimension_order_of(f);
      compute_routes(f, ports, [](int, Address, const std::vector<std::uint16_t>&) {});  // checks reachability
      for (std::size_t u = 0; u < f.nodes.size(); ++u) {
        table(u)->set_dimension_order(dor, f.nodes[u].address, dimension_ports(f, ports, static_cast<int>(u)));
      }
    } else {
      for (std::size_t u = 0; u < f.nodes.size(); ++u) {
        if (RoutingTable* t = table(u)) t->set_salt(static_cast<std::uint32_t>(u));
      }
      compute_routes(f, ports, [&](int node, Address address, const std::vector<std::uint16_t>& p) {
        const auto u = static_cast<std::size_t>(node);
        RoutingTable* t = table(u);
        if (t && ports[u].size() > 1) t->set(address, p);
      });
      for (std::size_t u = 0; u < f.nodes.size(); ++u) {
        if (RoutingTable* t = table(u)) t->finalize();
      }
    }
  } catch (const InputError& e) {
    throw InputError(spec_.file + ": " + e.what());
  }
}

void Platform::attach_timeline(TimelineSink* timeline, TimelineLinks links) {
  for (auto& npu : npus_) npu->set_timeline(timeline);
  int unit = 0, link = 0;
  for (auto& f : fabrics_) {
    for (auto& u : f.units) u->set_timeline(timeline, unit++);
    for (auto& l : f.links) {
      const bool touches =
          (l.from_npu >= 0 && timeline->records(l.from_npu)) || (l.to_npu >= 0 && timeline->records(l.to_npu));
      if (links == TimelineLinks::kAll || (links == TimelineLinks::kTouchingRecordedNpus && touches)) {
        l.link->set_timeline(timeline, link);
      }
      ++link;
    }
  }
}

std::vector<const ReductionUnit*> Platform::units() const {
  std::vector<const ReductionUnit*> out;
  for (const auto& f : fabrics_) {
    for (const auto& u : f.units) out.push_back(u.get());
  }
  return out;
}

void Platform::rewind_memory_streams() {
  for (auto& npu : npus_) npu->hbm.rewind();
  for (auto& f : fabrics_) {
    for (auto& nic : f.nics) nic->dma.rewind();
  }
}

std::vector<const Platform::BuiltLink*> Platform::links() const {
  std::vector<const BuiltLink*> out;
  for (const auto& f : fabrics_) {
    for (const auto& l : f.links) out.push_back(&l);
  }
  return out;
}

void Platform::add_reduction_units(FabricSpec& f) {
  Address next = 0;
  for (const FabricNode& n : f.nodes) {
    if (n.kind != FabricNode::Kind::kSwitch) next = std::max<Address>(next, n.address + 1);
  }
  const std::size_t count = f.nodes.size();
  for (std::size_t u = 0; u < count; ++u) {
    if (f.nodes[u].kind != FabricNode::Kind::kSwitch || !f.nodes[u].reduction) continue;
    FabricNode unit;
    unit.kind = FabricNode::Kind::kReductionUnit;
    unit.name = f.nodes[u].name + "_reduction";
    unit.address = next++;
    unit.reduction = f.nodes[u].reduction;
    FabricEdge e;
    e.a = static_cast<int>(u);
    e.b = static_cast<int>(f.nodes.size());
    e.internal = true;
    // The unit hands its copies to the crossbar a pipeline latency ahead,
    // which is what the switch's lookahead may count on.
    e.link.latency = unit.reduction->unit.latency;
    f.nodes.push_back(std::move(unit));
    f.edges.push_back(e);
  }
}

void Platform::set_up_aggregation(std::size_t fi, const FabricSpec& f) {
  BuiltFabric& bf = fabrics_[fi];
  AggregationManager::Topology t;
  std::vector<int> switch_index(f.nodes.size(), -1);
  for (std::size_t u = 0; u < f.nodes.size(); ++u) {
    if (f.nodes[u].kind != FabricNode::Kind::kSwitch) continue;
    switch_index[u] = static_cast<int>(t.unit_of_switch.size());
    t.unit_of_switch.push_back(kNoAddress);
    t.level_of_switch.push_back(f.nodes[u].level);
  }
  t.switch_neighbours.resize(t.unit_of_switch.size());
  std::map<Address, std::map<int, std::uint64_t>> attached;  // endpoint -> switch -> bandwidth (MB/s)
  bool pull = false;
  std::uint64_t pipeline_bytes = 1 << 20;
  std::uint32_t pipeline_depth = 4;
  for (const FabricEdge& e : f.edges) {
    const FabricNode& a = f.nodes[static_cast<std::size_t>(e.a)];
    const FabricNode& b = f.nodes[static_cast<std::size_t>(e.b)];
    const int sa = switch_index[static_cast<std::size_t>(e.a)], sb = switch_index[static_cast<std::size_t>(e.b)];
    if (e.internal) {
      t.unit_of_switch[static_cast<std::size_t>(sa)] = b.address;
      pull |= b.reduction->pull;
      pipeline_bytes = b.reduction->pipeline_bytes;
      pipeline_depth = b.reduction->pipeline_depth;
    } else if (sa >= 0 && sb >= 0) {
      t.switch_neighbours[static_cast<std::size_t>(sa)].push_back(sb);
      t.switch_neighbours[static_cast<std::size_t>(sb)].push_back(sa);
    } else if (sa >= 0 || sb >= 0) {
      const FabricNode& end = sa >= 0 ? b : a;
      if (end.kind != FabricNode::Kind::kNic) continue;
      attached[end.address][sa >= 0 ? sa : sb] +=
          static_cast<std::uint64_t>(std::llround(e.link.bandwidth.GBps_value() * 1000));
    }
  }
  for (const auto& [address, switches] : attached) {
    for (const auto& [s, weight] : switches) {  // by switch index: the same order on every NPU
      t.switches_of_endpoint[address].push_back(s);
      t.weights_of_endpoint[address].push_back(weight);
    }
  }
  bf.aggregation->set_topology(std::move(t));
  in_network_.add_fabric(static_cast<std::uint16_t>(fi), bf.aggregation.get(), pull, pipeline_bytes, pipeline_depth);
}

}  // namespace fabricsim
