#include "platforms/assembly/parameter_catalogue.h"

#include <algorithm>

#include "models/switch/switch.h"
#include "platforms/assembly/reduction_models.h"
#include "traces/model/model_spec.h"
#include "traces/model/training_spec.h"

namespace fabricsim {

const ParamTable<ReductionSpec>& reduction_spec_table() {
  static const auto table =
      ParamTable<ReductionSpec>(
          "reduction_unit",
          "a switch's in-network reduction unit (SHARP/NVLS-style): slots that combine contributions and send or "
          "multicast the result; the ops it supports are given as \"ops\": all, nvls, or {sum: [fp32, bf16], ...}")
          .include(&ReductionSpec::unit, ReductionUnitParams::table())
          .choice("protocol", &ReductionSpec::pull, {"push", "pull"},
                  "push: NPUs send contributions, results come back (SHARP); pull: the unit reads them and "
                  "multicasts (NVLS)")
          .add("pipeline", Quantity::kBytes, &ReductionSpec::pipeline_bytes,
               "pull all-reduce: pieces in which reads and multicasts overlap")
          .range(1, static_cast<double>(limits::kMaxBytes))
          .legacy("pipeline_bytes", 1, "bytes")
          .add("pipeline_depth", Quantity::kCount, &ReductionSpec::pipeline_depth,
               "pieces whose reads are in flight at once")
          .range(1, 1 << 16)
          .choice("model", &ReductionSpec::model, reduction_model_names(),
                  "what does the arithmetic: tlm, the TLM model; rtl, the Verilated SystemVerilog unit")
          .add("clock", Quantity::kFrequency, &ReductionSpec::clock_hz, "the RTL unit's clock")
          .legacy("clock_MHz", 1e6, "MHz");
  return table;
}

const ParamTable<PlatformSpec>& npu_section_table() {
  static const auto table =
      ParamTable<PlatformSpec>("npu", "")
          .include(&PlatformSpec::npu, NpuParams::table())
          .add("max_collectives_in_flight", Quantity::kCount, &PlatformSpec::max_collectives_in_flight,
               "collectives a trace may have started and not finished; 0: no limit")
          .range(0, 1 << 20);
  return table;
}

const ParamTable<TransportSpec>& transport_spec_table() {
  static const auto table =
      ParamTable<TransportSpec>("transport", "how a fabric moves packets and reacts to congestion (docs/transports.md)")
          .choice("kind", &TransportSpec::kind, {"credit", "infiniband", "roce", "tcp"},
                  "credit or infiniband: credit flow control on every link; roce: PFC instead of credits, ECN "
                  "marking at switch egress, DCQCN at the NICs, one packet per frame; tcp: no flow control, "
                  "switches drop what their buffer has no room for, the NICs retransmit")
          .choice("model", &TransportSpec::model, {"packet", "flow"},
                  "how the fabric is simulated: packet moves every frame through every link and switch (exact: "
                  "queues, credits, PFC, ECN, drops); flow makes each message a flow along its routed path, sharing "
                  "links and NIC injection by max-min fairness, recomputed when a flow starts or ends: much faster "
                  "when messages span many frames (congested fabrics can cost more, unless flow_quantum batches the "
                  "recomputations), and blind to what docs/flow-model.md lists (switch reduction units, DMA, "
                  "transports)")
          .add("flow_quantum", Quantity::kDuration, &TransportSpec::flow_quantum,
               "model flow: recompute the rates at most once per quantum, on its boundaries (flows starting or "
               "ending in between wait for it: each start and end is late by less than a quantum); 0: at every "
               "start and end, exact but costly when thousands of flows share links (docs/flow-model.md)")
          .range(0, 1e9)
          .add("pfc_xoff", Quantity::kBytes, &TransportSpec::pfc_xoff,
               "roce: bytes in a receiver's input buffer above which it pauses the link; 0: the buffer less the "
               "headroom PFC needs (two latencies at line rate and two packets)")
          .range(0, static_cast<double>(limits::kMaxBytes))
          .add("pfc_xon", Quantity::kBytes, &TransportSpec::pfc_xon,
               "roce: bytes at or below which a paused link resumes; 0: xoff less two packets")
          .range(0, static_cast<double>(limits::kMaxBytes))
          .add("ecn_kmin", Quantity::kBytes, &TransportSpec::ecn_kmin,
               "dcqcn or dctcp: a switch egress queue below this marks no frame")
          .range(0, static_cast<double>(limits::kMaxBytes))
          .add("ecn_kmax", Quantity::kBytes, &TransportSpec::ecn_kmax,
               "dcqcn or dctcp: above this it marks every frame")
          .range(0, static_cast<double>(limits::kMaxBytes))
          .add("ecn_pmax", Quantity::kNumber, &TransportSpec::ecn_pmax,
               "dcqcn or dctcp: the marking probability at kmax, rising linearly from 0 at kmin")
          .range(0, 1)
          .choice("congestion_control", &TransportSpec::congestion_control, {"auto", "none", "dcqcn", "reno", "dctcp"},
                  "the NICs' congestion control: auto is dcqcn on roce and reno on tcp; none (roce) is PFC alone; "
                  "dctcp is a window cut by the fraction of ECN-marked bytes, on roce or tcp")
          .add("queue_pairs", Quantity::kCount, &TransportSpec::queue_pairs,
               "queue pairs per connection (NCCL_IB_QPS_PER_CONNECTION): a message's packets take them in turn, "
               "each hashed to its own path by ECMP")
          .range(1, 1024)
          .add("switch_buffer", Quantity::kBytes, &TransportSpec::switch_buffer,
               "tcp and roce: each switch's packet buffer, shared by its input ports with dynamic thresholds "
               "(tcp: a port past its threshold drops; roce: it sends PFC PAUSE, its headroom on top); 0: each port "
               "has its link's buffer (roce: a static pfc_xoff)")
          .range(0, static_cast<double>(limits::kMaxBytes))
          .add("buffer_alpha", Quantity::kNumber, &TransportSpec::buffer_alpha,
               "dynamic threshold: a port may hold alpha x the shared buffer's free bytes")
          .range(0, 1024, true)
          .choice("load_balancing", &TransportSpec::load_balancing, {"ecmp", "adaptive", "spray", "destination"},
                  "how a switch picks among equal-cost ports: ecmp hashes each flow (queue pair) to one path; "
                  "destination fixes one path per destination by its place in a fat tree (d-mod-k, as InfiniBand's "
                  "subnet manager routes one: a shift of whole leaves meets no other flow going up); "
                  "adaptive takes, per packet, the port with the least backlog (InfiniBand adaptive routing); "
                  "spray takes the ports in turn, per packet. adaptive and spray reorder a flow's packets: not "
                  "with a window transport (reno, dctcp), which finds losses by order")
          .include(&TransportSpec::dcqcn, DcqcnParams::table())
          .include(&TransportSpec::window, WindowTransportParams::table());
  return table;
}

namespace {

template <class P>
ParamSection section(const ParamTable<P>& table, std::vector<std::string> written_at, std::string description = "") {
  ParamSection s;
  s.type = table.type();
  s.description = description.empty() ? table.description() : std::move(description);
  s.written_at = std::move(written_at);
  s.rows = param_rows(table);
  return s;
}

template <class P>
nlohmann::ordered_json values(const ParamTable<P>& table, const P& p) {
  nlohmann::ordered_json j;
  for (const auto& [name, value] : param_values(table, p)) j[name] = value;
  return j;
}

/// Each distinct value of `items`, once, in order of first appearance.
template <class P>
nlohmann::ordered_json distinct(const ParamTable<P>& table, const std::vector<P>& items) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const P& p : items) {
    const nlohmann::ordered_json j = values(table, p);
    if (std::find(out.begin(), out.end(), j) == out.end()) out.push_back(j);
  }
  return out;
}

}  // namespace

std::vector<ParamSection> parameter_catalogue() {
  return {
      section(npu_section_table(), {"npu"}, NpuParams::table().description()),
      section(ComputeParams::table(), {"npu.compute"},
              "the GPU's compute model; also gemm_tiles (a list such as [256x128, 128x128]) and classes (a mapping of "
              "class to coefficients, or a file fabricsim calibrate writes)"),
      section(KernelClassParams::table(), {"npu.compute.classes.CLASS"},
              "one class of kernels: gemm, gemm_unaligned, attention_forward, attention_backward, "
              "flash_attention_forward, flash_attention_backward, elementwise, norm_forward, norm_backward, copy"),
      section(
          MemoryParams::table(), {"npu.hbm", "fabrics[].memories[]"},
          "a memory (HBM or pooled): channels interleaved by address; npu.hbm also takes a preset: hbm3_stack, h100"),
      section(CollectiveConfig::table(), {"collectives"},
              "how NPUs run collectives; \"algorithms\" maps a collective type to an algorithm"),
      section(NcclSettings::table(), {"collectives.nccl"},
              "NCCL, where collectives.library is nccl: also tuning, the library file of its version's tables "
              "(platforms/libraries/nccl-2.21.5.yaml), relative to the platform file"),
      section(NicParams::table(), {"nic", "fabrics[].nic"}),
      section(PcieSwitchParams::table(), {"fabrics[].pcie"}),
      section(LinkParams::table(),
              {"fabrics[].link", "fabrics[].uplink", "fabrics[].links[] (netlist)", "fabrics[].memories[].link"}),
      section(Switch::Params::table(), {"fabrics[].switch", "fabrics[].switches[] (netlist)"}),
      section(reduction_spec_table(), {"fabrics[].switch.reduction", "fabrics[].switches[].reduction (netlist)"}),
      section(transport_spec_table(), {"fabrics[].transport"}),
  };
}

std::vector<ParamSection> workload_parameter_catalogue() {
  return {
      section(ModelSpec::table(), {"model (a model file: traces/models/*.yaml)", "--set model.KEY=VALUE"}),
      section(TrainingSpec::table(), {"training (a model file)", "--set training.KEY=VALUE"}),
  };
}

nlohmann::ordered_json resolved_parameters(const PlatformSpec& spec) {
  nlohmann::ordered_json j;
  j["npu"] = values(npu_section_table(), spec);
  const ComputeParams& compute = spec.npu.compute;
  nlohmann::ordered_json c = values(ComputeParams::table(), compute);
  if (compute.model == ComputeParams::Model::kKernelClasses) {
    c["source"] = compute.source;
    for (std::size_t i = 0; i < kKernelClasses; ++i) {
      const auto cls = static_cast<KernelClass>(i);
      c["classes"][kernel_class_name(cls)] = values(KernelClassParams::table(), compute.of(cls));
    }
  }
  j["npu_compute"] = c;
  if (spec.hbm) j["hbm"] = values(MemoryParams::table(), *spec.hbm);
  j["collectives"] = values(CollectiveConfig::table(), spec.collectives);
  if (const auto& nccl = spec.hints.nccl) {
    // The library the default choice follows: its tables' version, the
    // job's settings, and the machine as its topology sees it.
    nlohmann::ordered_json n;
    n["tuning"] = nccl->tuning().library + " " + nccl->tuning().version;
    n["source"] = nccl->tuning().source;
    n["settings"] = values(NcclSettings::table(), nccl->settings());
    const NcclMachine& m = nccl->machine();
    n["machine"] = {{"gpus_per_node", m.gpus_per_node},
                    {"nvlinks_per_gpu", m.nvlinks_per_gpu},
                    {"nvlink_GBps_per_link", nccl->nvlink_bw()},
                    {"nvswitch", m.nvswitch},
                    {"nvls_units", m.nvls_units},
                    {"pci_GBps", m.pci_bw},
                    {"nics_per_node", m.nics_per_node},
                    {"nic_GBps", m.nic_bw},
                    {"nic_beside_gpu", m.nic_beside_gpu},
                    {"sharp_units", m.sharp_units}};
    j["nccl"] = std::move(n);
  }
  nlohmann::ordered_json fabrics = nlohmann::ordered_json::array();
  for (const FabricSpec& f : spec.fabrics) {
    nlohmann::ordered_json fe;
    fe["name"] = f.name;
    fe["nic"] = values(NicParams::table(), f.nic);
    if (f.pcie) fe["pcie"] = values(PcieSwitchParams::table(), *f.pcie);
    if (f.transport.kind != TransportSpec::Kind::kCredit || f.transport.model != TransportSpec::Model::kPacket)
      fe["transport"] = values(transport_spec_table(), f.transport);
    std::vector<LinkParams> links;
    for (const FabricEdge& e : f.edges) {
      if (!e.internal) links.push_back(e.link);
    }
    fe["links"] = distinct(LinkParams::table(), links);
    std::vector<Switch::Params> switches;
    std::vector<ReductionSpec> units;
    for (const FabricNode& n : f.nodes) {
      if (n.kind != FabricNode::Kind::kSwitch) continue;
      Switch::Params s;
      s.hop_latency = n.hop_latency;
      switches.push_back(s);
      if (n.reduction) units.push_back(*n.reduction);
    }
    if (!switches.empty()) fe["switches"] = distinct(Switch::Params::table(), switches);
    if (!units.empty()) fe["reduction_units"] = distinct(reduction_spec_table(), units);
    if (!f.memories.empty()) {
      nlohmann::ordered_json mems = nlohmann::ordered_json::array();
      for (const MemorySpec& m : f.memories) {
        nlohmann::ordered_json me = values(MemoryParams::table(), m.memory);
        me["name"] = m.name;
        mems.push_back(std::move(me));
      }
      fe["memories"] = std::move(mems);
    }
    fabrics.push_back(std::move(fe));
  }
  j["fabrics"] = std::move(fabrics);
  return j;
}

}  // namespace fabricsim
