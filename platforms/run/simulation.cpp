#include "platforms/run/simulation.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "models/collectives/collective_work.h"
#include "platforms/assembly/parameter_catalogue.h"
#include "tlm/kernel/calendar.h"
#include "traces/reader/et_reader.h"

namespace fabricsim {

namespace {

class Kickoff {
 public:
  explicit Kickoff(std::vector<std::unique_ptr<TraceWorkload>>& w) : workloads_(w) {}
  void start() {
    for (auto& w : workloads_) w->start();
  }

 private:
  std::vector<std::unique_ptr<TraceWorkload>>& workloads_;
};

double ns(Tick t) {
  return ticks_to_ns(t);
}

}  // namespace

Simulation::Simulation(PlatformSpec spec)
    : platform_(std::make_unique<Platform>(std::move(spec))), groups_(platform_->npus()) {}

Simulation::~Simulation() = default;

void Simulation::load_workload(const WorkloadSettings& settings) {
  settings_ = settings;
  const int n = settings.npus ? settings.npus : platform_->npus();
  if (n > platform_->npus()) {
    throw InputError("--npus " + std::to_string(n) + ": the platform " + platform_->spec().name + " has " +
                     std::to_string(platform_->npus()) + " NPUs");
  }
  // With --npus the job is the first n NPUs, as CUDA_VISIBLE_DEVICES makes
  // it: its world (the default group) is they, not the platform.
  if (n < platform_->npus()) groups_.set_world(n);
  const std::size_t listed = settings.collectives_listed
                                 ? settings.collectives_listed
                                 : std::max<std::size_t>(1, kListedCollectives / static_cast<std::size_t>(n));
  for (int r = 0; r < platform_->npus(); ++r) platform_->npu(r).set_collective_list_limit(listed);
  if (!settings.comm_groups.empty()) {
    try {
      groups_.load_json(settings.comm_groups);
    } catch (const std::runtime_error& e) {
      throw InputError(e.what());
    }
  }
  WorkloadOptions options;
  options.replay = settings.replay || !platform_->spec().roofline;
  options.model_operators = platform_->spec().npu.compute.model == ComputeParams::Model::kKernelClasses;
  options.max_collectives_in_flight = platform_->spec().max_collectives_in_flight;
  options.collectives = &platform_->spec().collectives;
  options.custom_collectives = &platform_->spec().custom_collectives;
  options.hints = &platform_->spec().hints;
  options.groups = &groups_;
  options.probe = &probe_;
  bounds_ = work_bounds(*platform_, settings.force);
  if (settings.job) {
    if (settings.job->gpus() != n) {
      throw InputError("the training job is laid out on " + std::to_string(settings.job->gpus()) +
                       " GPUs, and runs on " + std::to_string(n));
    }
    // Each process group's collectives follow one another by their
    // dependencies (a communicator's stream) and groups run side by side, so
    // no cap across groups (npu.max_collectives_in_flight) applies.
    options.max_collectives_in_flight = 0;
    for (int r = 0; r < n; ++r) {
      try {
        workloads_.push_back(std::make_unique<TraceWorkload>(
            platform_->npu(r), settings.job->source(r, OpIoForm::kStructured), n, options));
      } catch (const traces::TraceError& e) {
        throw InputError(e.what());
      }
    }
    estimate_work(options.window);
    return;
  }
  for (int r = 0; r < n; ++r) {
    const std::string path = traces::rank_file(settings.prefix, r);
    try {
      workloads_.push_back(std::make_unique<TraceWorkload>(platform_->npu(r), path, n, options));
    } catch (const traces::TraceError& e) {
      throw InputError(e.what());
    }
  }
  // A workload with more rank files than NPUs is probably meant for another platform.
  const std::string extra = traces::rank_file(settings.prefix, n);
  if (struct stat st{}; ::stat(extra.c_str(), &st) == 0) {  // stat, not open: a FIFO would block
    throw InputError(extra + ": the workload has more ranks than the " + std::to_string(n) + " NPUs it runs on" +
                     (settings.npus ? " (--npus)" : ""));
  }
  estimate_work(options.window);
}

void Simulation::estimate_work(std::size_t window) {
  // Every rank's workload read once more, in full (its own pass: the run
  // streams it through a window), before anything runs.
  WorkSurvey survey;
  WorkBounds::Estimate e;
  for (std::size_t r = 0; r < workloads_.size(); ++r) {
    const int rank = static_cast<int>(r);
    std::unique_ptr<traces::NodeSource> source =
        settings_.job ? settings_.job->source(rank, OpIoForm::kOmitted)  // the survey times no compute
                      : std::make_unique<traces::EtFileSource>(traces::rank_file(settings_.prefix, rank));
    try {
      workloads_[r]->survey(*source, survey);
    } catch (const traces::TraceError& x) {
      throw InputError(x.what());
    }
    e.held_nodes += static_cast<double>(std::min<std::uint64_t>(window, workloads_[r]->nodes_total()));
  }
  e.operations += static_cast<double>(survey.operations);
  for (const auto& [bytes, count] : survey.send_sizes) {
    const WorkBounds::Estimate one = bounds_.message(bytes);
    e.messages += one.messages * static_cast<double>(count);
    e.frames += one.frames * static_cast<double>(count);
    e.frame_seconds += one.frame_seconds * static_cast<double>(count);  // what they cost to simulate
  }
  std::string largest;  // the collective that costs most, for the message
  double largest_seconds = 0;
  for (const auto& [key, calls] : survey.collectives) {
    const CollectiveSpec& spec = calls.spec;
    const double members = static_cast<double>(spec.group->ranks.size());
    const auto& config = platform_->spec().collectives;
    WorkBounds::Estimate part;
    try {
      // Each member's trace holds the call: calls / members runs of it.
      const double runs = static_cast<double>(calls.calls) / members;
      const double data = spec.data ? WorkBounds::data_bytes(spec.bytes, spec.group->ranks.size()) : 0;
      part += WorkBounds::collective(collective_work(spec, config, platform_->in_switch(), bounds_.frames), runs, data);
      // The choice probe simulates its candidates once per shape.
      part += WorkBounds::collective(probe_work(spec, config, platform_->spec().hints, spec.group->id == 0,
                                                platform_->in_switch(), bounds_.frames),
                                     1);
      const double seconds = bounds_.seconds(part);
      if (seconds > largest_seconds) {
        largest_seconds = seconds;
        char runs_text[32];
        std::snprintf(runs_text, sizeof runs_text, "%.0f", runs);
        largest = std::string(to_string(spec.type)) + " of " + std::to_string(spec.bytes) + " bytes over " +
                  std::to_string(spec.group->ranks.size()) + " NPUs (group \"" + spec.group->name + "\", " +
                  to_string(spec.algorithm) + ", " + runs_text + (runs_text == std::string("1") ? " run)" : " runs)");
      }
    } catch (const std::invalid_argument& x) {
      throw InputError(calls.first + ": " + x.what());
    }
    e += part;
  }
  estimate_ = e;
  const std::string what =
      (settings_.job ? "the step of " + settings_.job->name() : "the workload " + settings_.prefix) + " on " +
      std::to_string(workloads_.size()) + " NPUs" + (largest.empty() ? "" : " (most of it: " + largest + ")");
  try {
    long_run_ = bounds_.check(e, what);
  } catch (const std::invalid_argument& x) {
    throw InputError(x.what());
  }
}

Simulation::Outcome Simulation::run() {
  try {
    return run_to_end();
  } catch (...) {
    // A probe's copy must not carry an error into the parent's code (its
    // destructors would remove the parent's temporary files): it ends here,
    // and the parent passes the candidate over.
    probe_.end_child_if_any();
    throw;
  }
}

Simulation::Outcome Simulation::run_to_end() {
  Kickoff kickoff(workloads_);
  Calendar::instance().schedule<&Kickoff::start>(now_ticks(), &kickoff);
  auto rethrow = [this] {
    if (auto e = Calendar::instance().take_error()) {
      try {
        std::rethrow_exception(e);
      } catch (const traces::TraceError& t) {
        throw InputError(t.what());
      }
    }
  };
  for (;;) {
    sc_core::sc_start();
    rethrow();
    bool all_done = true;
    for (auto& w : workloads_) all_done &= w->finished();
    if (all_done) {
      probe_.end_child_if_any();  // its collective did not end: it was not this run's
      // A send that no receive took. MPI and NCCL would hang on it; ASTRA-sim
      // completes it, and Chakra's own generator writes such traces
      // (one_comm_send_node), so it runs, and the user hears of each NPU's
      // first one (the report counts them all: unreceived_messages).
      for (std::size_t r = 0; r < workloads_.size(); ++r) {
        const std::string sent = platform_->npu(static_cast<int>(r)).describe_unreceived();
        if (sent.empty()) continue;
        std::cerr << "warning: " << traces::rank_file(settings_.prefix, static_cast<int>(r)) << ": " << sent
                  << ", and no node of this trace receives it; the send completed as ASTRA-sim completes it (NCCL "
                     "or MPI would wait for its receive)\n";
      }
      break;
    }
    // Before calling it stuck, let every NPU read past its window.
    bool progressed = false;
    for (auto& w : workloads_) progressed |= w->unstick();
    rethrow();
    if (progressed) continue;
    probe_.end_child_if_any();  // stuck with the candidate: passed over
    // A receive stuck on a send made under another tag is the traces'
    // fault, not the platform's: bad input.
    for (int r = 0; r < platform_->npus(); ++r) {
      const std::string mismatch = platform_->npu(r).describe_tag_mismatch();
      if (!mismatch.empty()) throw InputError(mismatch);
    }
    stuck_.clear();
    for (std::size_t r = 0; r < workloads_.size(); ++r) {  // the NPUs the job runs on (--npus)
      const auto& w = *workloads_[r];
      if (w.finished()) continue;
      std::ostringstream head;
      head << "NPU " << r << ": " << w.nodes_done() << " of " << w.nodes_total() << " nodes done";
      stuck_.push_back(head.str());
      for (const auto& line : platform_->npu(r).describe_unfinished()) stuck_.push_back("  " + line);
      for (const auto& line : w.describe_stuck()) stuck_.push_back("  " + line);
    }
    for (const auto& f : platform_->fabrics()) {
      for (const auto& l : f.links) {
        if (l.link->frames_waiting()) stuck_.push_back("  " + l.link->describe_waiting());
      }
      for (const auto& u : f.units) {
        for (const auto& line : u->describe_unfinished()) stuck_.push_back("  " + line);
      }
      if (f.flow) {
        for (const auto& line : f.flow->describe_unfinished()) stuck_.push_back("  " + line);
      }
    }
    ran_ = true;
    for (int r = 0; r < platform_->npus(); ++r) platform_->npu(r).finalize();
    clear_progress();
    return Outcome::kStuck;
  }
  ran_ = true;
  for (int r = 0; r < platform_->npus(); ++r) platform_->npu(r).finalize();
  clear_progress();
  return Outcome::kFinished;
}

void Simulation::clear_progress() {
  Calendar::instance().set_progress_hook(nullptr);
  if (progress_shown_) std::cerr << "\r\033[K" << std::flush;  // the line the report replaces
  progress_shown_ = false;
}

namespace {
/// The total of counts by name, and "name (count), ..." for a warning.
std::pair<std::uint64_t, std::string> counted(const std::map<std::string, std::uint64_t>& counts) {
  std::uint64_t total = 0;
  std::string list;
  for (const auto& [name, count] : counts) {
    total += count;
    list += (list.empty() ? "" : ", ") + name + " (" + std::to_string(count) + ")";
  }
  return {total, list};
}
}  // namespace

std::vector<std::string> Simulation::warnings() const {
  std::vector<std::string> out = platform_->notes();
  std::map<std::string, int> seen;
  for (const auto& w : workloads_) {
    for (const auto& [key, line] : w->warnings()) {
      // The same warning on every rank is said once.
      if (seen[key]++ == 0) out.push_back(line);
    }
    const ComputeTiming& t = w->compute_timing();
    if (!t.unknown_ops.empty() && seen["unknown-ops"]++ == 0) {
      const auto [nodes, list] = counted(t.unknown_ops);
      out.push_back(w->path() + ": " + std::to_string(nodes) + " GPU nodes of " + std::to_string(t.unknown_ops.size()) +
                    " ops the compute model does not know kept their recorded durations: " + list);
    }
    if (!w->unrun_types().empty() && seen["unrun-types"]++ == 0) {
      const auto [nodes, list] = counted(w->unrun_types());
      out.push_back(w->path() + ": " + std::to_string(nodes) +
                    " nodes of types fabricsim does not run took no time: " + list);
    }
    if (t.gpu_unmodelled && seen["unmodelled"]++ == 0) {
      out.push_back(w->path() + ": " + std::to_string(t.gpu_unmodelled) +
                    " GPU nodes carry no num_ops and the platform's npu.compute is the roofline, which cannot time "
                    "them from their ops: they kept their recorded durations (npu.compute.model: kernel_classes "
                    "does; docs/compute.md)");
    }
    if (w->missing_dependencies()) {
      const std::string key = "missing-count";
      if (seen[key]++ == 0) {
        out.push_back(w->path() + ": " + std::to_string(w->missing_dependencies()) +
                      " dependencies on nodes absent from the file were ignored");
      }
    }
  }
  return out;
}

std::vector<std::string> Simulation::data_errors() const {
  std::vector<std::string> out;
  for (int r = 0; r < platform_->npus(); ++r) {
    for (const auto& e : platform_->npu(r).data_errors()) out.push_back(e);
  }
  return out;
}

Tick Simulation::end_time() const {
  Tick t = 0;
  for (int r = 0; r < platform_->npus(); ++r) t = std::max(t, platform_->npu(r).finish_time());
  return t;
}

namespace {

using nlohmann::ordered_json;

/// What a collective was: its node, name, type, algorithm, protocol, NCCL's
/// choice, bytes and group.
ordered_json collective_entry(const CollectiveRecord& c) {
  ordered_json ce;
  ce["node_id"] = c.node_id;
  ce["name"] = c.name;
  ce["type"] = to_string(c.type);
  ce["algorithm"] = to_string(c.algorithm);
  if (c.protocol != CommProtocol::kPlain) ce["protocol"] = to_string(c.protocol);
  if (c.nccl_algorithm < kNcclAlgorithms) {  // NCCL's choice (collectives.library: nccl)
    ce["nccl"] = std::string(to_string(static_cast<NcclAlgorithm>(c.nccl_algorithm))) + "/" +
                 (c.nccl_protocol == 0   ? "LL"
                  : c.nccl_protocol == 1 ? "LL128"
                                         : "Simple");
  }
  ce["bytes"] = c.bytes;
  ce["group"] = c.group;
  return ce;
}

/// Per NPU: its times, its trace's progress, its collectives (listed up to
/// the limit, and every one in a summary by kind).
ordered_json npu_entries(const Platform& platform, const std::vector<std::unique_ptr<TraceWorkload>>& workloads) {
  ordered_json npus = ordered_json::array();
  for (int r = 0; r < platform.npus(); ++r) {
    const Npu& npu = platform.npu(r);
    const ActivityTotals& a = npu.activity();
    ordered_json e;
    e["id"] = r;
    e["finish_ns"] = ns(npu.finish_time());
    e["compute_ns"] = ns(a.compute);
    e["gpu_busy_ns"] = ns(npu.gpu_busy());
    e["cpu_busy_ns"] = ns(npu.cpu_busy());
    e["communication_ns"] = ns(a.communication);
    e["exposed_comm_ns"] = ns(a.exposed_comm);
    e["memory_ns"] = ns(a.memory);
    e["exposed_memory_ns"] = ns(a.exposed_memory);
    e["idle_ns"] = ns(a.idle);
    if (r < static_cast<int>(workloads.size())) {
      const TraceWorkload& w = *workloads[static_cast<std::size_t>(r)];
      e["nodes"] = w.nodes_total();
      e["nodes_done"] = w.nodes_done();
      e["peak_nodes_held"] = w.peak_nodes_held();  // the trace window's use
      const ComputeTiming& t = w.compute_timing();
      e["compute_nodes"] = {{"gpu_modelled", t.gpu_modelled},
                            {"gpu_part_of_modelled_op", t.gpu_part_of_op},
                            {"gpu_recorded", t.gpu_recorded},
                            {"cpu_modelled", t.cpu_modelled},
                            {"cpu_recorded", t.cpu_recorded}};
      if (!w.exposed_by_kind().empty()) {
        ordered_json k;
        for (const auto& [kind, tick] : w.exposed_by_kind()) k[kind] = ns(tick);
        e["exposed_comm_by_kind_ns"] = std::move(k);
      }
    }
    ordered_json classes;
    const auto& by_class = npu.gpu_by_class();
    for (std::size_t c = 0; c < by_class.size(); ++c) {
      if (by_class[c].kernels == 0) continue;
      const char* name = c < kKernelClasses ? kernel_class_name(static_cast<KernelClass>(c)) : "recorded";
      classes[name] = {
          {"kernels", by_class[c].kernels}, {"busy_ns", ns(by_class[c].busy)}, {"flops", by_class[c].flops}};
    }
    if (!classes.empty()) e["gpu_by_class"] = std::move(classes);
    ordered_json colls = ordered_json::array();
    for (const auto& c : npu.collectives()) {
      ordered_json ce = collective_entry(c);
      ce["start_ns"] = ns(c.start);
      ce["end_ns"] = ns(c.end);
      colls.push_back(std::move(ce));
    }
    e["collectives"] = std::move(colls);
    e["collectives_run"] = npu.collectives_run();
    if (npu.collectives_run() > npu.collectives().size()) {
      e["collectives_unlisted"] = npu.collectives_run() - npu.collectives().size();  // --report-collectives
    }
    ordered_json kinds = ordered_json::array();
    for (const auto& k : npu.collective_summary()) {
      ordered_json ke = collective_entry(k.first);
      ke.erase("node_id");  // the kind's, not one call's
      ke["count"] = k.count;
      ke["total_ns"] = ns(k.total);
      ke["shortest_ns"] = ns(k.shortest);
      ke["longest_ns"] = ns(k.longest);
      kinds.push_back(std::move(ke));
    }
    e["collective_summary"] = std::move(kinds);
    if (npu.unmatched_messages()) e["unreceived_messages"] = npu.unmatched_messages();
    npus.push_back(std::move(e));
  }
  return npus;
}

/// Per link direction: traffic, busy time over the run of `span` ticks, peak buffer.
ordered_json link_entries(const Platform& platform, double span) {
  ordered_json links = ordered_json::array();
  // What every link direction reports, packets or flows: `units` counts its
  // frames or its flows.
  const auto entry = [span](const std::string& name, const std::string& fabric, const std::string& from,
                            const std::string& to, std::uint64_t bytes, std::uint64_t wire_bytes, const char* unit,
                            std::uint64_t units, Tick busy) {
    ordered_json le;
    le["name"] = name;
    le["fabric"] = fabric;
    le["from"] = from;
    le["to"] = to;
    le["bytes"] = bytes;
    le["wire_bytes"] = wire_bytes;
    le[unit] = units;
    le["busy_ns"] = ns(busy);
    le["utilization"] = span > 0 ? static_cast<double>(busy) / span : 0.0;
    return le;
  };
  for (const auto& f : platform.fabrics()) {
    for (const auto& l : f.links) {
      const Link::Stats& s = l.link->stats();
      ordered_json le =
          entry(l.link->name(), f.name, l.from, l.to, s.payload_bytes, s.wire_bytes, "frames", s.frames, s.busy);
      le["peak_buffer_bytes"] = s.peak_buffer_bytes;
      if (l.link->is_lossy()) le["drops"] = s.drops;
      if (l.link->has_pfc() || l.link->is_lossy()) {  // Ethernet: what PFC and ECN did
        le["pfc_pauses"] = s.pauses;
        le["paused_ns"] = ns(s.paused);
        le["ecn_marks"] = s.ecn_marks;
        le["peak_queue_bytes"] = s.peak_queue_bytes;
        le["mean_queue_bytes"] =
            s.frames > 0 ? static_cast<double>(s.queue_bytes_seen) / static_cast<double>(s.frames) : 0.0;
      }
      links.push_back(std::move(le));
    }
    if (const FlowFabric* flow = f.flow.get()) {  // run as flows: the same entries, no buffers
      const auto& g = flow->graph();
      for (std::uint32_t l = 0; l < g.links.size(); ++l) {
        const FlowFabric::LinkStats& s = flow->link_stats(l);
        ordered_json le = entry(g.links[l].name, f.name, g.nodes[g.links[l].from].name, g.nodes[g.links[l].to].name,
                                s.payload_bytes, s.wire_bytes, "flows", s.flows, flow->link_busy(l));
        le["peak_flows"] = s.peak_flows;
        links.push_back(std::move(le));
      }
    }
  }
  return links;
}

/// The fabrics' shapes, so that plots can lay links out (scripts/plot-link-heatmap.py).
ordered_json fabric_shapes(const PlatformSpec& spec) {
  ordered_json fabrics = ordered_json::array();
  for (const FabricSpec& f : spec.fabrics) {
    ordered_json fe;
    fe["name"] = f.name;
    fe["topology"] = f.topology;
    if (!f.dims.empty()) {
      fe["dims"] = f.dims;
      fe["wrap"] = f.wrap;
    }
    ordered_json nodes = ordered_json::array();
    for (const FabricNode& n : f.nodes) {
      ordered_json ne;
      ne["name"] = n.name;
      ne["kind"] = Platform::kind_name(n.kind);
      if (n.npu >= 0) ne["npu"] = n.npu;
      if (!n.coords.empty()) ne["coords"] = n.coords;
      if (n.kind == FabricNode::Kind::kSwitch) ne["level"] = n.level;
      nodes.push_back(std::move(ne));
    }
    fe["nodes"] = std::move(nodes);
    fabrics.push_back(std::move(fe));
  }
  return fabrics;
}

/// Per switch reduction unit: work done, ALU busy time, slots and buffer used.
ordered_json unit_entries(const Platform& platform, double span) {
  ordered_json units = ordered_json::array();
  for (const auto& f : platform.fabrics()) {
    for (std::size_t i = 0; i < f.units.size(); ++i) {
      const ReductionUnit& u = *f.units[i];
      const ReductionUnit::Stats& s = u.stats();
      ordered_json ue;
      ue["name"] = u.name();
      ue["fabric"] = f.name;
      ue["switch"] = f.unit_switch[i];
      ue["operations"] = s.operations;
      ue["bytes_reduced"] = s.bytes_reduced;
      ue["result_bytes"] = s.result_bytes;
      ue["alu_busy_ns"] = ns(s.alu_busy);
      ue["alu_utilization"] = span > 0 ? static_cast<double>(s.alu_busy) / span : 0.0;
      ue["peak_slots"] = s.peak_slots;
      ue["slots"] = u.params().slots;
      ue["peak_buffer_bytes"] = s.peak_buffer_bytes;
      ue["frames_waited"] = s.frames_waited;
      ue["wait_ns"] = ns(s.wait_time);
      units.push_back(std::move(ue));
    }
  }
  return units;
}

/// The share of a memory's bandwidth a run of `span` ps used.
double memory_utilization(const Memory& m, double span) {
  const double capacity = m.total_bandwidth_GBps() * span / 1000.0;  // bytes movable over the run
  const Memory::Stats& s = m.stats();
  return capacity > 0 ? static_cast<double>(s.bytes_read + s.bytes_written) / capacity : 0.0;
}

/// Per memory on a fabric: bytes moved and the share of its bandwidth used.
ordered_json memory_entries(const Platform& platform, double span) {
  ordered_json memories = ordered_json::array();
  for (const auto& m : platform.memories()) {
    const Memory::Stats& s = m.memory->stats();
    ordered_json me;
    me["name"] = m.name;
    me["bytes_read"] = s.bytes_read;
    me["bytes_written"] = s.bytes_written;
    me["busy_ns"] = ns(s.busy);
    me["utilization"] = memory_utilization(*m.memory, span);
    memories.push_back(std::move(me));
  }
  return memories;
}

/// Per PCIe switch that carried anything: bytes each way and through host
/// memory, and the share of the run each direction of its uplink was busy.
ordered_json pcie_entries(const Platform& platform, double span) {
  ordered_json out = ordered_json::array();
  for (const auto& f : platform.fabrics()) {
    for (const auto& p : f.pcie_switches) {
      const PcieSwitch::Stats& s = p->stats();
      if (s.reads + s.writes == 0) continue;
      ordered_json pe;
      pe["name"] = p->name();
      pe["bytes_to_devices"] = s.bytes_to_device;
      pe["bytes_to_memories"] = s.bytes_to_memory;
      pe["bytes_via_host"] = s.bytes_via_host;
      pe["uplink_to_host_utilization"] = span > 0 ? static_cast<double>(s.busy_to_host) / span : 0.0;
      pe["uplink_from_host_utilization"] = span > 0 ? static_cast<double>(s.busy_from_host) / span : 0.0;
      out.push_back(std::move(pe));
    }
  }
  return out;
}

/// Per fabric with a transport that does more than credits: what its NICs
/// and links did about congestion and loss, summed.
ordered_json transport_entries(const Platform& platform) {
  ordered_json out = ordered_json::array();
  for (const auto& f : platform.fabrics()) {
    ordered_json fe;
    std::uint64_t cnps = 0, retransmissions = 0, timeouts = 0, duplicates = 0, acks = 0;
    bool any = false;
    for (const auto& nic : f.nics) {
      if (const Dcqcn* d = nic->dcqcn()) {
        cnps += d->stats().cnps_sent;
        any = true;
      }
      if (const WindowTransport* w = nic->window_transport()) {
        retransmissions += w->stats().retransmissions;
        timeouts += w->stats().timeouts;
        duplicates += w->stats().duplicates;
        acks += w->stats().acks_sent;
        any = true;
      }
    }
    std::uint64_t pauses = 0, drops = 0, marks = 0;
    for (const auto& l : f.links) {
      const Link::Stats& s = l.link->stats();
      pauses += s.pauses;
      drops += s.drops;
      marks += s.ecn_marks;
      any |= l.link->has_pfc() || l.link->is_lossy();
    }
    if (!any) continue;
    fe["fabric"] = f.name;
    fe["pfc_pauses"] = pauses;
    fe["drops"] = drops;
    fe["ecn_marks"] = marks;
    fe["cnps"] = cnps;
    fe["acks"] = acks;
    fe["retransmissions"] = retransmissions;
    fe["timeouts"] = timeouts;
    fe["duplicate_frames"] = duplicates;
    out.push_back(std::move(fe));
  }
  return out;
}

}  // namespace

ordered_json Simulation::step_entry() const {
  const TrainingJob& job = *settings_.job;
  ordered_json s;
  const int n = job.gpus();
  Tick finish = 0;
  for (int r = 0; r < n; ++r) finish = std::max(finish, platform_->npu(r).finish_time());
  const double steps = job.training().steps;
  const double step_s = static_cast<double>(finish) * 1e-12 / steps;
  const double peak = platform_->spec().npu.peak_flops;
  s["model"] = job.name();
  s["layout"] = job.describe();
  s["gpus"] = n;
  s["steps"] = job.training().steps;
  s["step_time_ns"] = step_s * 1e9;
  const std::string samples = job.samples();  // tokens, or a ResNet's images
  s[samples + "_per_step"] = job.tokens_per_step();
  s[samples + "_per_s"] = step_s > 0 ? job.tokens_per_step() / step_s : 0;
  s["model_flops"] = job.model_flops();
  s["step_flops"] = job.step_flops();
  // Megatron's "TFLOP/s per GPU": the step's FLOPs as it counts them (its
  // equation 3, recomputation included) over the time and the GPUs.
  s["tflops_per_gpu"] = step_s > 0 ? job.step_flops() / (step_s * n) / 1e12 : 0;
  s["mfu"] = step_s > 0 ? job.model_flops() / (step_s * n * peak) : 0;
  s["peak_flops_per_gpu"] = peak;
  s["bubble_closed_form"] = job.bubble_fraction();
  double idle_sum = 0, idle_max = 0, idle_min = 1;
  std::map<std::string, std::pair<double, double>> exposed;  // kind -> (sum, max) ns per step
  std::map<std::string, std::pair<double, double>> classes;  // class -> (busy ns, flops), per GPU and step
  for (int r = 0; r < n; ++r) {
    const Npu& npu = platform_->npu(r);
    const double idle = 1.0 - static_cast<double>(npu.gpu_busy()) / static_cast<double>(std::max<Tick>(1, finish));
    idle_sum += idle;
    idle_max = std::max(idle_max, idle);
    idle_min = std::min(idle_min, idle);
    for (const auto& [kind, tick] : workloads_[static_cast<std::size_t>(r)]->exposed_by_kind()) {
      auto& e = exposed[kind];
      e.first += ns(tick) / steps;
      e.second = std::max(e.second, ns(tick) / steps);
    }
    const auto& by_class = npu.gpu_by_class();
    for (std::size_t c = 0; c < by_class.size(); ++c) {
      if (by_class[c].kernels == 0) continue;
      auto& e = classes[c < kKernelClasses ? kernel_class_name(static_cast<KernelClass>(c)) : "recorded"];
      e.first += ns(by_class[c].busy) / steps / n;
      e.second += by_class[c].flops / steps / n;
    }
  }
  // The least idle GPU is the busiest stage's: with free communication its
  // idle time is the pipeline's bubble alone.
  s["gpu_idle_fraction"] = {{"mean", idle_sum / n}, {"min", idle_min}, {"max", idle_max}};
  ordered_json ex;
  for (const auto& [kind, v] : exposed) ex[kind] = {{"mean_ns", v.first / n}, {"max_ns", v.second}};
  s["exposed_comm_by_kind"] = std::move(ex);
  ordered_json cl;
  for (const auto& [name, v] : classes) cl[name] = {{"busy_ns", v.first}, {"flops", v.second}};
  s["gpu_by_class_per_gpu"] = std::move(cl);
  ordered_json mem = ordered_json::array();
  for (int p = 0; p < job.pp(); ++p) {
    const MemoryEstimate m = job.memory(job.rank_of({0, 0, 0, p}));
    mem.push_back({{"stage", p},
                   {"total_bytes", m.total()},
                   {"weights", m.weights},
                   {"gradients", m.gradients},
                   {"optimizer", m.optimizer},
                   {"activations", m.activations},
                   {"in_flight", m.in_flight},
                   {"communication", m.communication},
                   {"reserved", m.reserved}});
  }
  s["memory_per_gpu"] = std::move(mem);
  return s;
}

nlohmann::ordered_json Simulation::report() const {
  ordered_json j;
  j["platform"] = platform_->spec().name;
  j["workload"] = settings_.job ? "model " + settings_.job->name() : settings_.prefix;
  if (settings_.job) j["step"] = step_entry();
  j["sim_time_ns"] = ns(end_time());
  // What the run was estimated to take before it started (to hold against
  // the wall time and peak memory measured outside: scripts/check-estimates.py).
  j["estimate"] = bounds_.json(estimate_);
  const double span = static_cast<double>(end_time());
  j["npus"] = npu_entries(*platform_, workloads_);
  j["links"] = link_entries(*platform_, span);
  if (auto t = transport_entries(*platform_); !t.empty()) j["transports"] = std::move(t);
  j["fabrics"] = fabric_shapes(platform_->spec());
  for (std::size_t i = 0; i < platform_->fabrics().size() && i < j["fabrics"].size(); ++i) {
    const FlowFabric* flow = platform_->fabrics()[i].flow.get();
    if (!flow) continue;
    const FlowFabric::Stats& s = flow->stats();  // what the flow model did, for its cost
    j["fabrics"][i]["flows"] = {{"messages", s.messages},
                                {"flows", s.flows},
                                {"peak_flows", s.peak_flows},
                                {"rebalances", s.rebalances},
                                {"flows_recomputed", s.flows_recomputed}};
  }
  j["reduction_units"] = unit_entries(*platform_, span);
  j["memories"] = memory_entries(*platform_, span);
  if (auto p = pcie_entries(*platform_, span); !p.empty()) j["pcie_switches"] = std::move(p);
  if (!probe_.decisions().empty()) {
    nlohmann::ordered_json probes;
    probes["simulations"] = probe_.children_run();
    auto list = nlohmann::ordered_json::array();
    for (const auto& d : probe_.decisions()) {
      nlohmann::ordered_json e;
      e["group"] = d.group;
      e["type"] = to_string(d.type);
      e["bytes"] = d.bytes;
      e["chosen"] = to_string(d.chosen);
      nlohmann::ordered_json times;
      for (const auto& [a, t] : d.simulated)
        times[to_string(a)] = t == kNever ? nlohmann::ordered_json() : nlohmann::ordered_json(ns(t));
      e["simulated_ns"] = std::move(times);
      if (!d.failure.empty()) e["probe_failed"] = d.failure;
      list.push_back(std::move(e));
    }
    probes["collectives"] = std::move(list);
    j["default_choice_probes"] = std::move(probes);
  }
  j["parameters"] = resolved_parameters(platform_->spec());
  return j;
}

void Simulation::print_summary(std::ostream& os, std::size_t top_links) const {
  os << std::fixed << std::setprecision(3);
  os << "fabricsim: " << platform_->spec().name << ", " << platform_->npus() << " NPUs, workload "
     << (settings_.job ? "model " + settings_.job->name() : settings_.prefix) << "\n";
  if (settings_.job) {
    const ordered_json st = step_entry();
    os << std::setprecision(2) << "step: " << st["step_time_ns"].get<double>() / 1e6 << " ms, "
       << st[std::string(settings_.job->samples()) + "_per_s"].get<double>() << " " << settings_.job->samples()
       << "/s, " << st["tflops_per_gpu"].get<double>() << " TFLOP/s per GPU (Megatron's count), MFU "
       << 100 * st["mfu"].get<double>() << "%, GPU idle " << 100 * st["gpu_idle_fraction"]["mean"].get<double>()
       << "% (bubble by closed form " << 100 * st["bubble_closed_form"].get<double>() << "%)\n";
    os << "exposed communication per GPU and step, mean:";
    for (const auto& [kind, v] : st["exposed_comm_by_kind"].items())
      os << " " << kind << " " << v["mean_ns"].get<double>() / 1e6 << " ms";
    os << "\n" << std::setprecision(3);
  }
  os << "simulated time: " << ns(end_time()) << " ns (" << Calendar::instance().events_run() << " events)\n";
  os << "per NPU, in ns: finish = when its last operation ended; compute = time some compute node ran;\n"
        "  exposed communication = time communication was in flight and no compute ran;\n"
        "  memory = time a remote-memory operation was in flight; exposed memory = of that, time\n"
        "  neither compute nor communication ran (docs/timeline.md)\n";
  const auto line = [&](int r) {
    const Npu& npu = platform_->npu(r);
    const ActivityTotals& a = npu.activity();
    os << "npu " << r << ": finish " << ns(npu.finish_time()) << " ns, compute " << ns(a.compute)
       << " ns, exposed communication " << ns(a.exposed_comm) << " ns, memory " << ns(a.memory)
       << " ns, exposed memory " << ns(a.exposed_memory) << " ns\n";
  };
  ComputeTiming t;
  for (const auto& w : workloads_) {
    const ComputeTiming& x = w->compute_timing();
    t.gpu_modelled += x.gpu_modelled, t.gpu_part_of_op += x.gpu_part_of_op, t.gpu_recorded += x.gpu_recorded;
    t.cpu_modelled += x.cpu_modelled, t.cpu_recorded += x.cpu_recorded;
  }
  if (t.gpu_modelled + t.gpu_part_of_op + t.gpu_recorded + t.cpu_modelled + t.cpu_recorded > 0) {
    os << "compute nodes: GPU " << t.gpu_modelled << " timed by the compute model";
    if (t.gpu_part_of_op) os << " (and " << t.gpu_part_of_op << " later kernels of their ops)";
    os << ", " << t.gpu_recorded << " recorded durations; CPU " << t.cpu_modelled << " modelled, " << t.cpu_recorded
       << " recorded\n";
  }
  const int n = platform_->npus();
  if (n <= 16) {
    for (int r = 0; r < n; ++r) line(r);
  } else {
    // Too many to list: the spread of each figure, and the NPU that finished last.
    const auto spread = [&](const char* what, auto get) {
      std::vector<double> v;
      for (int r = 0; r < n; ++r) v.push_back(get(platform_->npu(r)));
      std::sort(v.begin(), v.end());
      os << "  " << what << ": min " << v.front() << " ns, median " << v[v.size() / 2] << " ns, max " << v.back()
         << " ns\n";
    };
    spread("finish", [](const Npu& x) { return ns(x.finish_time()); });
    spread("compute", [](const Npu& x) { return ns(x.activity().compute); });
    spread("exposed communication", [](const Npu& x) { return ns(x.activity().exposed_comm); });
    spread("memory", [](const Npu& x) { return ns(x.activity().memory); });
    spread("exposed memory", [](const Npu& x) { return ns(x.activity().exposed_memory); });
    int last = 0;
    for (int r = 1; r < n; ++r) {
      if (platform_->npu(r).finish_time() > platform_->npu(last).finish_time()) last = r;
    }
    os << "last to finish: ";
    line(last);
  }
  // The hottest links: busy share of the run, bytes carried, peak buffer.
  const double span = static_cast<double>(end_time());
  std::vector<const Platform::BuiltLink*> links = platform_->links();
  if (top_links > 0 && !links.empty() && span > 0) {
    std::stable_sort(links.begin(), links.end(),
                     [](const auto* a, const auto* b) { return a->link->stats().busy > b->link->stats().busy; });
    os << "hottest links (busy = share of the simulated time spent sending; bytes = payload carried):\n";
    for (std::size_t i = 0; i < std::min(top_links, links.size()); ++i) {
      const Link::Stats& st = links[i]->link->stats();
      if (st.busy == 0) break;
      os << "  " << links[i]->link->name() << ": busy " << std::setprecision(1)
         << 100.0 * static_cast<double>(st.busy) / span << "%, " << st.payload_bytes << " bytes, "
         << std::setprecision(2) << st.payload_bytes / (span / 1000.0) << " GB/s average, peak buffer "
         << st.peak_buffer_bytes << " bytes";
      if (links[i]->link->has_pfc()) {
        os << ", " << st.pauses << " PFC pauses (paused " << std::setprecision(1)
           << 100.0 * static_cast<double>(st.paused) / span << "%), " << st.ecn_marks << " ECN marks";
      } else if (links[i]->link->is_lossy()) {
        os << ", " << st.drops << " drops, " << st.ecn_marks << " ECN marks";
      }
      os << "\n";
    }
    os << std::setprecision(3);
  }
  // Fabrics run as flows: their hottest links the same way (no buffers).
  if (top_links > 0 && span > 0) {
    struct Hot {
      const FlowFabric* flow;
      std::uint32_t link;
      Tick busy;
    };
    std::vector<Hot> hot;
    for (const auto& f : platform_->fabrics()) {
      if (!f.flow) continue;
      for (std::uint32_t l = 0; l < f.flow->graph().links.size(); ++l) {
        const Tick busy = f.flow->link_busy(l);
        if (busy > 0) hot.push_back(Hot{f.flow.get(), l, busy});
      }
    }
    std::stable_sort(hot.begin(), hot.end(), [](const Hot& a, const Hot& b) { return a.busy > b.busy; });
    if (!hot.empty())
      os << "hottest links run as flows (busy = share of the simulated time its bytes take at full rate):\n";
    for (std::size_t i = 0; i < std::min(top_links, hot.size()); ++i) {
      const FlowFabric::LinkStats& st = hot[i].flow->link_stats(hot[i].link);
      os << "  " << hot[i].flow->graph().links[hot[i].link].name << ": busy " << std::setprecision(1)
         << 100.0 * static_cast<double>(hot[i].busy) / span << "%, " << st.payload_bytes << " bytes, "
         << std::setprecision(2) << static_cast<double>(st.payload_bytes) / (span / 1000.0) << " GB/s average, at most "
         << st.peak_flows << " flows at once\n";
    }
    os << std::setprecision(3);
  }
  // The busiest memories (HBM, pools): how much of their bandwidth the run used.
  std::vector<const Platform::BuiltMemory*> memories;
  for (const auto& m : platform_->memories()) memories.push_back(&m);
  const auto moved_by = [](const Platform::BuiltMemory* m) {
    return m->memory->stats().bytes_read + m->memory->stats().bytes_written;
  };
  std::stable_sort(memories.begin(), memories.end(), [&](auto* a, auto* b) { return moved_by(a) > moved_by(b); });
  if (memories.size() > 8) memories.resize(8);
  if (!memories.empty() && moved_by(memories.front()) > 0 && span > 0) {
    os << "busiest memories (share of the bandwidth the run used; busy = time moving data):\n";
  }
  for (const auto* mp : memories) {
    const auto& m = *mp;
    const Memory::Stats& st = m.memory->stats();
    if (st.reads + st.writes == 0 || span <= 0) continue;
    const double moved = static_cast<double>(st.bytes_read + st.bytes_written);
    os << "  " << m.name << ": " << st.bytes_read << " bytes read, " << st.bytes_written << " written, "
       << std::setprecision(2) << moved / (span / 1000.0) << " GB/s average, " << std::setprecision(1)
       << 100.0 * memory_utilization(*m.memory, span) << "% of its bandwidth, busy "
       << 100.0 * static_cast<double>(st.busy) / span << "% of the time" << std::setprecision(3) << "\n";
  }
  for (const ReductionUnit* u : platform_->units()) {
    const auto& st = u->stats();
    if (st.operations == 0) continue;
    os << "reduction unit " << u->name() << ": " << st.operations << " operations, " << st.bytes_reduced
       << " bytes reduced, ALU busy " << std::setprecision(1) << 100.0 * static_cast<double>(st.alu_busy) / span
       << "%, peak " << st.peak_slots << " of " << u->params().slots << " slots" << std::setprecision(3) << "\n";
  }
  os.unsetf(std::ios::floatfield);
}

void Simulation::enable_progress() {
  const auto started = std::chrono::steady_clock::now();
  auto last = started;
  Calendar::instance().set_progress_hook([this, started, last]() mutable {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::milliseconds(500)) return;
    last = now;
    std::uint64_t done = 0, total = 0;
    for (const auto& w : workloads_) {
      done += w->nodes_done();
      total += w->nodes_total();
    }
    const double wall = std::chrono::duration<double>(now - started).count();
    const double share = total ? static_cast<double>(done) / static_cast<double>(total) : 0.0;
    char buf[200];
    if (share > 0.01) {
      std::snprintf(buf, sizeof buf,
                    "\r  simulated %.3f ms | %5.1f%% of trace nodes done | %.0f s elapsed, about %.0f s left   ",
                    ticks_to_ns(now_ticks()) / 1e6, 100 * share, wall, wall * (1 - share) / share);
    } else {
      std::snprintf(buf, sizeof buf, "\r  simulated %.3f ms | %5.1f%% of trace nodes done | %.0f s elapsed   ",
                    ticks_to_ns(now_ticks()) / 1e6, 100 * share, wall);
    }
    std::cerr << buf << std::flush;
    progress_shown_ = true;
  });
}

}  // namespace fabricsim
