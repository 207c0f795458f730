#!/usr/bin/env bash
# Breaks the model on purpose, one mutation at a time, and checks that the
# tests meant to guard each behaviour fail: a test a broken model passes is
# not a test. Each mutation is applied to the source, built (incrementally,
# in build/), its tests run, and the source restored, whatever happens.
# Usage:
#   scripts/mutation-check.sh [build-dir]  every mutation (about a minute each)
#   ONLY=regex scripts/mutation-check.sh   the mutations whose name matches
#   SAMPLE=N [SEED=S] [BUDGET=seconds] scripts/mutation-check.sh
#                                          N of them drawn at random (the seed is
#                                          printed, so a run can be repeated); none
#                                          is started once BUDGET seconds have passed
#   scripts/mutation-check.sh --check      only that every mutation still applies:
#                                          its text is in its file exactly once
# CI runs --check and a sample on a fixed budget (.ci/run). In a text "\n" is a
# newline and "\|" a "|"; the last field is a ctest -R regex.
set -euo pipefail
cd "$(dirname "$0")/.."
check_only=false
if [ "${1:-}" = "--check" ]; then
  check_only=true
  shift
fi
build=${1:-build}

# name | file | text to replace | replacement | tests (ctest -R) that must fail
mutations=(
  "no collective agreement|models/collectives/collective_engine.cpp|if (agreement_) agreement_->check|if (false) agreement_->check|BadCollectives"
  "no send/receive size check|models/npu/npu.cpp|if (m->bytes != recv->bytes) {|if (false) {|BadSends"
  "window ignores running nodes|traces/workload/trace_workload.cpp|held_.size() < options_.window;|held_.size() < options_.window + running_;|Window.Independent"
  "no work bound|models/npu/work_bounds.cpp|if (seconds(e) > kMaxSeconds) {|if (false) {|BadWork.TheEstimate"
  "estimate: each collective once|platforms/run/simulation.cpp|const double runs = static_cast<double>(calls.calls) / members;|const double runs = 1;|BadWork.TheWholeRun"
  "work ignores sampled chunks|models/collectives/collective_work.cpp|const double scale = static_cast<double>(total) / static_cast<double>(sampled);|const double scale = 1;|CollectiveWork.ARing"
  "work ignores messages in flight|models/npu/work_bounds.cpp|return kBaseBytes + platform_bytes + e.peak_messages * kBytesPerMessageInFlight +|return kBaseBytes + platform_bytes +|BadWork.AnAllToAll"
  "work ignores in-switch fan-out|models/collectives/collective_work.cpp|    case MessageKind::kReduce:\n      return 2;|    case MessageKind::kReduce:\n      return 1;|CollectiveWork.InSwitch"
  "a memory answer names no request|models/memory/memory_endpoint.cpp|  reply->memory.request = req->memory.request;\n|\n|RemoteMemory"
  "a store answered as a load|models/memory/memory_endpoint.cpp|  const bool load = req->memory.op == Message::MemoryOp::kLoadRequest;|  const bool load = true;|RemoteMemory.APoolBehindASwitchTakesAStore"
  "memory request not cut|models/memory/memory_endpoint.cpp|if (bytes <= kMaxPiece) {|if (true) {|BadMemory"
  "sends' frames cost nothing|platforms/run/simulation.cpp|e.frame_seconds += one.frame_seconds * static_cast<double>(count);|(void)count;|BadWork.TheEstimateCounts"
  "gen output not counted|platforms/tools/cli/main.cpp|if (cmd->get_name() != \"model\") check_output(*cmd, write);|if (false) check_output(*cmd, write);|BadWork.Generators"
  "transfer time overflow unchecked|tlm/kernel/units.h|    if (ps >= 0 && ps <= static_cast<double>(kMaxTime)) return static_cast<Tick>(std::llround(ps));\n    throw_too_long(bytes);|    return static_cast<Tick>(ps);|BadTimes"
  "RTL command left on the payload|models/switch/reduction_unit.cpp|~Attached() { gp.clear_extension(cmd); }|~Attached() {}|rtl.Cosim.AWrongRtlResult"
  "RTL mismatch as bad input|rtl/rtl_reduction.cpp|throw DataMismatchError(|throw ModelError(|rtl.Cosim.AWrongRtlResult"
  "output replaces a symlink|tlm/util/output_file.cpp|if (char* real = ::realpath(path.c_str(), nullptr)) {|if (char* real = nullptr) {|BadPaths.Outputs"
  "output replaces a dangling symlink|tlm/util/output_file.cpp|if (!exists && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {|if (false) {|BadPaths.Outputs"
  "issue_ready nests calls|traces/workload/trace_workload.cpp|  if (issuing_) return;|  if (false) return;|Window.AMillion"
  "window delay not reported|traces/workload/trace_workload.cpp|window_full_of_running_ = !eof_ && running_ >= options_.window;|window_full_of_running_ = false;|Window.AWindowFull"
  "a negative peer accepted|traces/workload/trace_workload.cpp|if (peer_key && peer && (*peer < 0 |if (peer_key && peer && (false |BadSends"
  "repeated JSON key kept|tlm/util/json_input.cpp|if (!l.keys.insert(l.key).second) {|if (false) {|BadJson"
  "keyed process groups lose their key|traces/workload/trace_workload.cpp|        pg = it.key();|        pg.clear();|Workload.AProcessGroupConfiguration"
  "ECN keys without marking taken silently|platforms/assembly/loader.cpp|  if (starts(\"ecn_\") && |  if (false && |BadPlatforms.TransportKeys"
  "destination routing hashes as ECMP does|platforms/assembly/routing.cpp|  const RouteSink sink = f.transport.load_balancing == PortChoice::kDestination && |  const RouteSink sink = false && |LoadBalancing.DestinationRouting"
  "destination routing ignores the switch's level|platforms/assembly/routing.cpp|    const double m = below[|    const double m = 1 + 0 * below[|LoadBalancing.DestinationRoutingGivesAPod"
  "a rank twice in a group|traces/workload/process_groups.cpp|    if (seen[static_cast<std::size_t>(r)]) {|    if (false) {|BadGroups"
  "forwarding in call order|models/switch/forwarding.cpp|  if (when <= now_ticks()) {\n    forward(f);|  if (true) {\n    forward(f);|Fabric.AnOutputServes"
  "a NIC port sends messages whole, one after another|models/nic/nic.cpp|  queue.push_back(m);  // round robin between messages|  queue.insert(0, m);|NicFrames"
  "message overhead ignored|models/nic/nic.h|{ return m.nic.posted_at + (m.hardware ? 0 : params_.overhead(m.protocol)); }|{ return m.nic.posted_at; }|NicParameters"
  "injection bandwidth ignored|models/nic/nic.cpp|        f->tail = f->head + params_.injection.time_for(static_cast<double>(f->wire_bytes));|        f->tail = f->head;|NicParameters"
  "forward latency ignored|models/nic/nic.cpp|      forwarder_(*this, params.forward_latency) {|      forwarder_(*this, 0) {|NicParameters"
  "CPU operators at the GPU's rate|models/npu/npu.cpp|  return op.on_cpu ? cpu_model_.time(op.work) : compute_model_->time(op.work);|  return compute_model_->time(op.work);|NpuParameters"
  "GEMM tiles not in waves|models/npu/compute_model.cpp|    const double waves = std::ceil(tiles / units);|    const double waves = tiles / units;|ComputeModel.GemmTiles"
  "a class floor ignored|models/npu/compute_model.cpp|  return ticks_to_ns(c.floor) * 1e-9 + std::max(arithmetic, memory);|  return std::max(arithmetic, memory);|ComputeModel.MemoryClasses"
  "attention causal ignored|traces/workload/kernel_work.cpp| * (causal ? 0.5 : 1)||KernelWork.Attention"
  "copy_ reads its destination|traces/workload/kernel_work.cpp|  const bool write_only = one_of(op, {\"aten::copy_\", \"aten::fill_\", \"aten::zero_\"});|  const bool write_only = false;|KernelWork.InPlace"
  "ranks [] refused|traces/workload/trace_workload.cpp|    if (wide.empty()) {\n      for (int r = 0; r < npus_; ++r) wide.push_back(r);\n    }|    |Cli.Gpt2Ddp"
  "later kernels of an op timed again|traces/workload/trace_workload.cpp|    if (rf && last_modelled_op_ == rf) {|    if (false) {|Cli.Gpt2Step"
  "unknown ops timed as nothing|traces/workload/trace_workload.cpp|      ++timing_.unknown_ops[op.empty() ? \"(unnamed)\" : op];\n      return recorded();|      ++timing_.unknown_ops[op.empty() ? \"(unnamed)\" : op];\n      n.use_recorded = false;\n      return;|Cli.UnknownGpuOps"
  "calibration fits no floor|platforms/tools/calibrate.cpp|        const double t = floor + (memory_bound|        const double t = 0 * floor + (memory_bound|Calibration.Recovers"
  "local reduction free|models/collectives/collective_engine.cpp|  if (t.reduce && !config_.local_reduce.is_unlimited()) {|  if (false) {|CollectiveParameters"
  "direct sends in the same order on every rank|models/collectives/algorithms/direct.cpp|      const int to = (i + k) % n_, from|      const int to = k - 1 + (k - 1 >= i ? 1 : 0), from|AstraMicrobenchmarks"
  "direct window ignored|models/collectives/algorithms/direct.cpp|    return spec_.direct_window;|    return std::max(1u, all);|ClosedForm.WindowedDirect"
  "all-gather climbs the dimensions|models/collectives/algorithms/hierarchical.cpp|    if (!ascending) std::reverse(order.begin(), order.end());||CollectivePrograms.HierarchicalReduceScatter"
  "a level's runs taken as adjacent blocks|models/collectives/algorithms/hierarchical.cpp|n / stride_below[d + 1]);\n        seg.piece_stride = stride_below[d + 1] * s.segments.stride;|n / stride_below[d + 1]);\n        seg.piece_stride = s.segments.stride;|CollectivePrograms.HierarchicalReduceScatter"
  "ASTRA-sim all-gather lists run flat|platforms/importers/astra_system.cpp|                          *type == CollectiveType::kAllGather|                          false|AstraSystem.ReduceScatterAndAllGather"
  "reduce-scatter and all-gather default flat on several dimensions|models/collectives/algorithm_choice.cpp|    return AlgorithmKind::kHierarchical;  // a phase per dimension, as for all-reduce|    return point_to_point_default(type, bytes, n, hints);|DefaultChoice.AReduceScatter"
  "all-to-all phases start from an empty receive half|models/collectives/data_check.cpp|    std::memcpy(run.data.data() + s.bytes, run.data.data(), s.bytes);|    (void)0;|AstraSystem.AllToAll"
  "an all-to-all phase's slices taken as touching|models/collectives/algorithms/hierarchical.cpp|        const bool touching = s.segments.base == s.segments.stride|        const bool touching = true|CollectivePrograms.HierarchicalAllToAll"
  "ASTRA-sim sub-groups run the file's phases|models/collectives/algorithm_choice.cpp|  return ranks.size() != npus;|  return ranks.size() != npus && false;|AstraSystem.Settings"
  "an in-place ring relay delivers before its own block left|models/collectives/algorithms/ring.cpp|    const int k = in_place && r == 0 ? n_ - 1 - t : t + 1, i = me_;|    const int k = t + 1, i = me_;|CollectivePrograms.HierarchicalAllToAll"
  "an in-place direct window takes peers in ASTRA-sim's order|models/collectives/algorithms/direct.cpp|    const bool paired = in_place() && w < static_cast<std::uint32_t>(n_ - 1);|    const bool paired = false;|CollectivePrograms.HierarchicalAllToAll"
  "hierarchical point-to-point levels run plain|models/collectives/algorithm_choice.cpp|  const bool p2p_levels = algorithm == AlgorithmKind::kHierarchical && point_to_point_levels(config, hints, type);|  const bool p2p_levels = false;|ProtocolChoice"
  "all-to-all levels run flat|platforms/importers/astra_system.cpp| *type == CollectiveType::kAllToAll;| false;|AstraSystem.AllToAll"
  "an odd all-to-all window accepted in place|platforms/importers/astra_system.cpp|              window % 2 == 1 && window < static_cast<std::uint32_t>(dims[d].size - 1)) {|              false) {|AstraSystem.AllToAll"
  "whole levels run as parts|models/collectives/algorithms/hierarchical.cpp|      if (s.level_data == LevelData::kWhole) {|      if (false) {|AstraSystem.Baseline"
  "Themis counts whole levels as shrinking|models/collectives/algorithms/hierarchical.cpp|      if (level_data == LevelData::kPart) data /= n;|      data /= n;|CollectivePrograms.WholeLevels"
  "localBWAware read as baseline|platforms/importers/astra_system.cpp|v == \"localBWAware\" ? LevelData::kPart : LevelData::kWhole|LevelData::kWhole|AstraSystem.Baseline"
  "ASTRA-sim's one chunk per dimension not the default|platforms/importers/astra_system.cpp|  set_active_chunks_per_dimension(spec, 1);\n||AstraSystem.Settings"
  "chunks per dimension read as per NPU|platforms/importers/astra_system.cpp|  spec.collectives.active_chunks = k * std::max(1u, dims);|  spec.collectives.active_chunks = k;|AstraSystem.Settings"
  "EXPLICIT read as FIFO|platforms/importers/astra_system.cpp|spec.collectives.policy = SchedulingPolicy::kPriority;|spec.collectives.policy = SchedulingPolicy::kFifo;|AstraSystem.Settings"
  "ring reduce-scatter copies|models/collectives/algorithms/ring.cpp|out.recvs.push_back(piece(me_ - 1, recv_seg, recv_seg + 1, reduce));|out.recvs.push_back(piece(me_ - 1, recv_seg, recv_seg + 1, false));|CollectivePrograms"
  "double binary trees split unevenly|models/collectives/algorithms/double_binary_tree.cpp|const int half = n_ / 2;|const int half = (n_ + 1) / 2 - 1;|CollectivePrograms.TheDoubleBinaryTrees"
  "stray bytes on the first chunk|models/collectives/collective.cpp|if (i == parts - 1) l += len % elem;|if (i == 0) l += len % elem;|CollectivePrograms.Every"
  "hierarchical keeps the wrong part|models/collectives/algorithms/hierarchical.cpp|      keep = coord;|      keep = 0;|CollectivePrograms.Hierarchical"
  "a foreign payload let in|tlm/sockets.h|    if (!Protocol::is_ours(p)) {|    if (false) {|ForeignPayloads"
  "bridge reads the destination from the low bits|models/nic/base_protocol_bridge.cpp|  m->dst = static_cast<Address>(gp.get_address() >> 32);|  m->dst = static_cast<Address>(gp.get_address());|BaseProtocolBridge.ASimple"
  "bridge answers before the message has left|models/nic/base_protocol_bridge.cpp|  sc_core::wait(send.left());|  sc_core::wait(sc_core::SC_ZERO_TIME);|BaseProtocolBridge.ASimple"
  "bridge responds to nb writes together|models/nic/base_protocol_bridge.cpp|  while (!responding_ && !responses_.empty()) {|  while (!responses_.empty()) {|BaseProtocolBridge.NonBlocking"
  "checker lets a second END_REQ pass|tlm/protocol_checker.cpp|  if (it == outstanding_.end()) {|  if (false) {|ProtocolChecker.EveryRule"
  "checker lets a completed frame pass|tlm/protocol_checker.cpp|      if (kFrames) violation(|      if (false) violation(|ProtocolChecker.EveryRule"
  "base checker without request exclusion|tlm/protocol_checker.cpp|    expect(requesting_ == nullptr,|    expect(true,|BaseProtocolChecker.EveryRule"
  "base checker trusts b_transport's status|tlm/protocol_checker.cpp|  if (gp.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE) {\n    violation(\"b_transport returned|  if (false) {\n    violation(\"b_transport returned|BaseProtocolChecker.EveryRule"
  "--set ignored|platforms/assembly/yaml_input.cpp|  if (overrides.empty()) return {root, YamlInput(path)};|  if (true) return {root, YamlInput(path)};|Sets.ASetValue"
  "--set errors name a line, not the flag|platforms/assembly/yaml_input.cpp|    if (const std::string* flag = origins_->flag_of(at)) throw|    if (const std::string* flag = nullptr) throw|BadSets.AnUnknownPath"
  "a sweep reruns every point|platforms/tools/sweep.cpp|    bool run = !fs::exists(file, ec);|    bool run = true;|Sweep.Resumes"
  "unit-named keys ignored|platforms/assembly/yaml_input.cpp|  const bool has_legacy = !p.legacy_key.empty() && map[p.legacy_key];|  const bool has_legacy = false;|Parameters.UnitsInValues"
  "a following default not followed|platforms/assembly/yaml_input.h|  for (const Param<P>* p : unset) p->set(values, table.find(p->info.follows)->get(values));|  (void)unset;|Parameters.UnitsInValues"
  "Gb/s read as GB/s|tlm/kernel/parameters.cpp|{\"Gb/s\", 1e9 / 8}|{\"Gb/s\", 1e9}|Units.Values"
  "chunks not pipelined|models/collectives/collective_engine.cpp|    while (config_.active_chunks == 0 |    while ((active_chunks_ < 1 && config_.active_chunks == 0) |RingAllReduce"
  "in-switch multicast skips the sender|models/collectives/algorithms/in_switch.cpp|      for (int j = 0; j < n_; ++j)\n        add(out.recvs, rank(j), seg.offset(j), seg.length(j), s, MessageKind::kUnicast, -1, tag);|      for (int j = 0; j < n_; ++j)\n        if (j != me_) add(out.recvs, rank(j), seg.offset(j), seg.length(j), s, MessageKind::kUnicast, -1, tag);|CollectivePrograms.Every"
  # NCCL's protocols, launch latency and the default choice's cost model.
  "LL flags not on the wire|models/nic/nic_params.h|      return wire_bytes(protocol_bytes(bytes, protocol));|      return wire_bytes(bytes);|NicTiming.ACollectiveStep"
  "a striped message goes in whole segments|models/nic/nic.cpp|    m->nic.frame_payload = (per_port + frames_per_port - 1) / frames_per_port * params_.mtu_bytes;|    m->nic.frame_payload = params_.segment_bytes;|Striping.AMessageSmaller"
  "the first port reads a striped message ahead whole|models/nic/nic.cpp|  return held < share;|  return true;|Striping.AMessageSmaller|Striping.TwoSmall"
  "a port reads a large striped message a frame at a time|models/nic/nic.cpp|  const std::uint32_t share = (m->nic.frames_total + m->nic.stripe_ports - 1) / m->nic.stripe_ports;|  const std::uint32_t share = 1;|Striping.ALargeMessage"
  "a striped NIC runs a window transport|platforms/assembly/loader.cpp|      if (nic.stripe && f.transport.needs_order()) {|      if (false) {|BadTransports"
  "a spent striped entry opens a closed window|models/nic/nic.cpp|    return m->nic.frames_sent == m->nic.frames_total \|\| !window_allows(*m);|    return !window_allows(*m);|NicWindow.AClosedWindow"
  "collbench levels leave the algorithm to the default choice|platforms/tools/cli/main.cpp|      o.algorithm = AlgorithmKind::kHierarchical;|      (void)0;|BadLevels"
  "PAT passes blocks past the end of their tree|models/collectives/algorithms/pat.cpp|    for (int i = 0; i + d < n_; i += 2 * d) f(mod(x - i, n_));|    for (int i = 0; i < n_; i += 2 * d) f(mod(x - i, n_));|CollectivePrograms.EveryAlgorithm"
  "PAT's reduce-scatter copies where it should add|models/collectives/algorithms/pat.cpp|      for_each_block(me_, d, [&](int s) { out.recvs.push_back(block(me_ + d, s, r, true)); });|      for_each_block(me_, d, [&](int s) { out.recvs.push_back(block(me_ + d, s, r, false)); });|CollectivePrograms.EveryAlgorithm"
  "LL steps wait the plain overhead|models/nic/nic_params.h|step_overhead_simple, step_overhead_ll, step_overhead_ll128);|step_overhead_simple, message_overhead, step_overhead_ll128);|NicTiming.ACollectiveStep"
  "launch latency ignored|models/collectives/collective_engine.cpp|  if (const Tick launch = config_.launch(spec.protocol); launch > 0) {|  if (const Tick launch = 0; launch > 0) {|ProtocolClosedForm"
  "protocols chosen without their step latency|models/collectives/algorithm_choice.cpp|         sequential_steps(type, algorithm, n) * static_cast<double>(costs.overhead(p) + costs.hop) +|         0.0 +|ProtocolChoice.Auto"
  "the default choice takes the slowest estimate|models/collectives/algorithm_choice.cpp|  for (const auto& [a, t] : default_estimates(config, type, bytes, ranks, group_is_world, hints)) {\n    if (t < best) {|  for (const auto& [a, t] : default_estimates(config, type, bytes, ranks, group_is_world, hints)) {\n    if (!pick or t > best) {|CostModel.ARing|DefaultChoice.Within"
  "the cost model ignores the busiest link|models/collectives/cost_model.cpp|      std::max(busiest * 1e12, end.transfer * waves + busiest * 1e12 * (per_channel - 1) / per_channel);|      end.transfer * waves;|CostModel.ARing"
  "equal-cost paths split instead of hashed|platforms/assembly/traffic_paths.cpp|  } else if (depth == 0 && f.spec->nic.stripe) {|  } else {|Ecmp.TheCostModelPutsEachFlow"
  # The component harnesses (tests/models/): each model alone, bound to test
  # sockets. A fault some other test already catches is listed again with the
  # harness's test alone, so that the harness is shown to catch it too.
  "link serialization free|models/link/link.cpp|    const Tick duration = params_.bandwidth.time_for(static_cast<double>(f->wire_bytes));\n    const Tick ready|    const Tick duration = 0;\n    const Tick ready|LinkTiming.OneFrame"
  "link latency ignored|models/link/link.cpp|  // Hand the frame to the receiver: head after the wire latency.\n  f->head = start + params_.latency;\n  f->tail = end + params_.latency;|  f->head = start;\n  f->tail = end;|LinkTiming.OneFrame"
  "PFC pause ignored by the sender|models/link/link.cpp|  ethernet_->sender_paused = true;|  ethernet_->sender_paused = false;|Pfc.TheReceiver"
  "PFC pause reaches the sender at once|models/link/link.cpp|    calendar_.schedule<&Link::on_pause>(now_ticks() + params_.latency, this);|    calendar_.schedule<&Link::on_pause>(now_ticks(), this);|Pfc.TheReceiver"
  "PFC resumes at xoff, not xon|models/link/link.cpp|  } else if (l.receiver_pausing && l.occupancy <= xon) {|  } else if (l.receiver_pausing && l.occupancy <= xoff) {|Pfc.TheReceiver"
  "no ECN marks|models/link/link.cpp|    f->ecn = true;\n    ++stats_.ecn_marks;|    ++stats_.ecn_marks;|Transport.Dcqcn"
  "DCQCN does not cut the rate|models/nic/dcqcn.cpp|  q.rc = std::max(params_.min_rate.bytes_per_ps(), q.rc * (1 - q.alpha / 2));|  q.rc = std::max(params_.min_rate.bytes_per_ps(), q.rc);|Transport.Dcqcn"
  "DCQCN rate not applied|models/nic/nic.cpp|        if (dcqcn_ && f->msg->notice == Message::Notice::kNone) {|        if (false) {|Transport.Dcqcn"
  "queue pairs not spread|models/nic/nic.h|    return queue_pairs_ <= 1 ? flow : flow + (index % queue_pairs_) * 0x9e3779b9u;|    return flow;|Ecmp.EightQueuePairs"
  "adaptive routing takes the busiest port|models/switch/forwarding.cpp|    if (b < least) {|    if (b > least) {|LoadBalancing.AdaptiveRoutingRuns"
  "adaptive routing ignores queued frames|models/link/link.cpp|  return sending + params_.bandwidth.time_for(static_cast<double>(waiting_bytes_));|  return sending;|LoadBalancing.AdaptiveRoutingRuns"
  "spraying keeps one port|models/switch/forwarding.cpp|return choices[spray_next_++ % count];|return choices[0];|LoadBalancing.Spraying"
  "load balancing never applied|platforms/assembly/platform.cpp|      if (r) r->set_port_choice(f.transport.load_balancing);|      (void)r;|LoadBalancing"
  "ECN queue measured when the frame is handed over|models/link/link.cpp|  const Tick at = std::max(now_ticks(), f->head);|  const Tick at = now_ticks();|Ecn\\."
  "ECN queue ignores what the port sends meanwhile|models/link/link.cpp|    if (end <= at) continue;|    if (false) continue;|Ecn\\.AnIncast|Ecn\\.ATwo"
  "read-ahead left at one segment|platforms/assembly/loader.cpp|  if (f.nic.read_ahead_bytes != 0 |  if (true |ReadAhead.Derived"
  "read-ahead blind to the memory's latency|platforms/assembly/loader.cpp|  Tick path = spec.hbm->latency;|  Tick path = 0;|ReadAhead.Derived"
  "NCCL's ring LL at full bandwidth|models/collectives/nccl_tuner.cpp|bus = std::min(ll_max_bw, bus * tuning_.ring_ll);|bus = std::min(ll_max_bw, bus);|NcclTables.ARing"
  "NCCL's NVLS-tree on one node|models/collectives/nccl_tuner.cpp|  if (c.nodes == 1) algo_on[index_of(NcclAlgorithm::kNvlsTree)] = false;|  (void)0;|NcclTables"
  "NCCL's NVLS on two GPUs|models/collectives/nccl_tuner.cpp|  c.nvls_support = nvls_possible && g > 2;|  c.nvls_support = nvls_possible;|NcclChoice.OneDgxH100"
  "NCCL's search keeps fast channels whole|models/collectives/nccl_tuner.cpp|  if (best.bw_intra >= 25.0 && |  if (false && |NcclSearch"
  "NCCL keeps every channel for small sizes|models/collectives/nccl_tuner.cpp|  while (nc >= 2 && bytes <|  while (false && bytes <|NcclChannels"
  "NCCL's candidates all take the kernel's channels|models/collectives/nccl_tuner.cpp|cand.channels = channels_for(c, cand.algorithm, cand.protocol, bytes);|cand.channels = c.coll_channels;|NcclChannels"
  "NCCL_MIN_NCHANNELS past MAXCHANNELS|models/collectives/nccl_tuner.cpp|std::max(1, std::min(n, tuning_.max_channels));|std::max(1, n);|NcclChannels"
  "NCCL_ALGO=CollNet kept where CollNet cannot run|models/collectives/nccl_tuner.cpp|    if (!algo_on[index_of(NcclAlgorithm::kRing)] && !algo_on[index_of(NcclAlgorithm::kTree)] &&|    if (false &&|NcclChoice.CollNetAlone"
  "NCCL settings with no protocol accepted|platforms/assembly/collective_library.cpp|  if (!set.ll && set.ll128 == NcclSettings::Switch::kOff && !set.simple) {|  if (false) {|NcclSettingsInput.Settings"
  "a library file's missing row costs nothing|platforms/assembly/collective_library.cpp|    } else if (has[a]) {|    } else if (false) {|NcclSettingsInput.ALibrary"
  "a netlist lane of many NVLinks counted as one|platforms/assembly/loader.cpp|        machine.nvlink_lane_GBps > 1.5 * per_link) {|        false) {|NcclSettingsInput.AnNvlink"
  "NCCL's NVLS-tree network side not halved beyond two nodes|models/collectives/nccl_tuner.cpp|c.nodes <= 2 ? graph.bw_inter : graph.bw_inter / 2|graph.bw_inter|NcclChoice.FourOrMore"
  "the nccl personality ignored|models/collectives/algorithm_choice.cpp|  if (config.library == CollectiveLibrary::kNccl && hints.nccl && chosen_by_default|  if (false && hints.nccl && chosen_by_default|NcclRun"
  "a group NCCL's pick cannot run on falls to fabricsim's own choice|models/collectives/algorithm_choice.cpp|        if (!c) continue;|        if (!c) break;|NcclRun.WhatNccl"
  "a shared NIC's functions each have a PCIe port|models/pcie/pcie_switch.cpp|  return pairs_[static_cast<std::size_t>(device) / std::max(1u, params_.devices_per_port)];|  return pairs_[static_cast<std::size_t>(device)];|SharedNic.TwoGpusOfAPcie"
  "a shared NIC's functions a wire away from its port|platforms/assembly/loader.cpp|      inner.latency = 0;|      (void)0;|SharedNic.OneGpuAlone"
  "a shared NIC's port marks and drops as a switch|platforms/assembly/platform.cpp|    if (!f.nodes[a].nic_port && !f.nodes[b].nic_port) {|    if (true) {|SharedNic.APortAndItsFunctions"
  "shared NICs under switch reduction units accepted|platforms/assembly/loader.cpp|  if (per_nic > 1 && reduction) {|  if (false) {|SharedNic.ASharedNicNeeds"
  "the cost model reads a function's wire, not its NIC's port|platforms/assembly/loader.cpp|    if (other >= 0 && f.nodes[static_cast<std::size_t>(other)].nic_port) port = other;|    (void)other;|SharedNic.TheCostModel"
  "NCCL counts each GPU's function of a shared NIC as a NIC|platforms/assembly/collective_library.cpp|static_cast<int>(nics.size()) / std::max(1, net->gpus_per_nic)|static_cast<int>(nics.size())|SharedNic.Nccl"
  "a job on fewer NPUs than the platform waits for the rest|platforms/run/simulation.cpp|  if (n < platform_->npus()) groups_.set_world(n);|  (void)0;|BadNpus"
  "the stuck report reads past the job's NPUs|platforms/run/simulation.cpp|    for (std::size_t r = 0; r < workloads_.size(); ++r) {  // the NPUs|    for (std::size_t r = 0; r < static_cast<std::size_t>(platform_->npus()); ++r) {  // the NPUs|BadNpus"
  "a metadata-less trace's first node taken for its metadata|traces/reader/et_reader.cpp|  if (node) {\n    lacked_metadata_ = true;|  if (false) {\n    lacked_metadata_ = true;|BadTraces.ATraceWithout"
  "a trace's number written as text read as absent|traces/workload/trace_workload.cpp|    fail(n, std::string(key) + \" is \" + attr_kind(*a) + \", not a number\");|    return std::nullopt;|BadTraces.ANumber"
  "timeline loses ECN marks|platforms/run/perfetto_timeline.cpp|  l->marks[b] += marked ? 1 : 0;|  l->marks[b] += 0;|Timeline.MarksAndPauses"
  "timeline loses PFC pauses|models/link/link.cpp|  if (timeline_) timeline_->link_paused(timeline_id_, l.paused_since, now);|  (void)0;|Timeline.MarksAndPauses"
  "timeline loses drops|platforms/run/perfetto_timeline.cpp|  ++l->drops[static_cast<std::size_t>(when / bucket_)];|  (void)0;|Timeline.DropsOfALossy"
  "PFC ignores the shared buffer|models/link/link.cpp|  if (l.pool) xoff = std::min(|  if (false) xoff = std::min(|Pfc.ASharedBuffer"
  "a lossy link never drops|models/link/link.cpp|    if (!room) {  // dropped|    if (false) {  // dropped|Tcp.Incast"
  "TCP window ignored|models/nic/window_transport.cpp|  if (q.in_flight == 0) return true;|  return true;|TcpWindow"
  "a loss found only by timeout|models/nic/window_transport.cpp|  while (!q.out.empty() && q.out.front().seq < highest) {|  while (false) {|Tcp.Incast"
  "a frame that arrives twice counted twice|models/nic/window_transport.cpp|  if (seen[index]) {|  if (false) {|Tcp.ATimeout"
  "shared buffer without dynamic threshold|models/link/shared_buffer.h|    return used_ + bytes <= bytes_ && static_cast<double>(port_bytes + bytes) <= threshold();|    return used_ + bytes <= bytes_;|SharedBuffer"
  "link credits ignored|models/link/link.cpp|  if (in_flight_bytes_ + need <= params_.buffer_bytes) return from;|  return from;|LinkTiming.WithCreditsHeld"
  "credits return without the link latency|models/link/link.cpp|schedule_return(left_receiver + params_.latency, bytes);|schedule_return(left_receiver, bytes);|LinkTiming.WithCreditsHeld"
  "ring bubble ignored|models/link/link.cpp|    const std::uint64_t need = f->wire_bytes + (f->entering_ring ? params_.bubble_bytes : 0);|    const std::uint64_t need = f->wire_bytes;|LinkTiming.AFrameEnteringARing"
  "a frame waiting for credit holds up other inputs|models/link/link.cpp|      if (params_.bubble_bytes == 0) break;|      break;|LinkTiming.AFrameEnteringARing"
  "a slower input's tail overtaken|models/link/link.cpp|    const Tick end = std::max(start + duration, f->tail);|    const Tick end = start + duration;|LinkTiming.AFrameFedMoreSlowly"
  "read requests take no time from data|models/link/link.cpp|  busy_until_ = std::max(busy_until_, start) + duration;|  busy_until_ = std::max(busy_until_, start);|LinkTiming.AReadRequest"
  "message overhead ignored (NIC alone)|models/nic/nic.h|{ return m.nic.posted_at + (m.hardware ? 0 : params_.overhead(m.protocol)); }|{ return m.nic.posted_at; }|NicTiming.AMessageIsCut"
  "packet headers not on the wire|models/nic/nic_params.h|    return bytes + packets * header_bytes;|    return bytes + packets * 0;|NicTiming.AMessageIsCut\|FlowFourHops"
  "frames not whole packets|models/nic/nic_params.h|    return segment - segment % mtu_bytes;|    return segment;|NicTiming.AMessageIsCut"
  "injection bandwidth ignored (NIC alone)|models/nic/nic.cpp|        f->tail = f->head + params_.injection.time_for(static_cast<double>(f->wire_bytes));|        f->tail = f->head;|NicTiming.InjectionBandwidthBelow"
  "injection not shared by the ports|models/nic/nic.cpp|        if (!params_.injection.is_unlimited()) injection_free_ = f->tail;|        (void)0;|NicTiming.InjectionBandwidthIsShared"
  "a NIC port sends messages whole (NIC alone)|models/nic/nic.cpp|  queue.push_back(m);  // round robin between messages|  queue.insert(0, m);|NicTiming.TwoMessages"
  "striping ignored|models/nic/nic.cpp|  if (params_.stripe && num_ports() > 1) stripe_ports|  if (false) stripe_ports|NicTiming.AStripedMessageSpreads"
  "a message has left when its last frame to be reported has, not its latest|models/nic/nic.cpp|  m->nic.left_at = std::max(m->nic.left_at, left);|  m->nic.left_at = left;|NicTiming.AStripedMessageOverUnequalPorts"
  "forward latency ignored (NIC alone)|models/nic/nic.cpp|      forwarder_(*this, params.forward_latency) {|      forwarder_(*this, 0) {|NicTiming.AFramePassingThrough"
  "switch hop latency ignored|models/switch/switch.cpp|      forwarder_(*this, params.hop_latency) {|      forwarder_(*this, 0) {|SwitchTiming.AFrameLeaves"
  "switch hop latency ignored (incast)|models/switch/switch.cpp|      forwarder_(*this, params.hop_latency) {|      forwarder_(*this, 0) {|SwitchTiming.UnderIncast"
  "store-and-forward switch|models/switch/forwarding.cpp|  const Tick leave = head_arrival + hop_latency_;|  const Tick leave = std::max(head_arrival, f->tail) + hop_latency_;|SwitchTiming.AFrameLeaves"
  "forwarding in call order (switch alone)|models/switch/forwarding.cpp|  if (when <= now_ticks()) {\n    forward(f);|  if (true) {\n    forward(f);|SwitchTiming.AnOutputServes"
  "credit returned when the head leaves|models/switch/forwarding.cpp|  if (offer(out, f, &left)) release(f, hop_in, left);|  if (offer(out, f, &left)) release(f, hop_in, f->head);|SwitchTiming.AnInputsCredit"
  "ALU passes overlap|models/switch/reduction_unit.cpp|    const Tick start = std::max(alu_free_, now_ticks());|    const Tick start = now_ticks();|ReductionUnitTiming.OneStream"
  "an ALU pass ignores its streams|models/switch/reduction_unit.cpp|static_cast<double>(f->bytes) * params_.streams)|static_cast<double>(f->bytes))|ReductionUnitTiming.APassTakes"
  "every contribution its own ALU pass|models/switch/reduction_unit.h|    const unsigned k = params_.streams;|    return true;\n    const unsigned k = params_.streams;|ReductionUnitTiming.APassTakes"
  "reduction result latency ignored|models/switch/reduction_unit.cpp|  const Tick out = now_ticks() + params_.latency;\n  for (const Dest& d : dests) {|  const Tick out = now_ticks();\n  for (const Dest& d : dests) {|ReductionUnitTiming.OneStream"
  "reduction slots unlimited|models/switch/reduction_unit.cpp|      return false;\n    }\n    check_supported(m);|    }\n    check_supported(m);|ReductionUnitSlots"
  "a slot freed before its copies have left|models/switch/reduction_unit.cpp|    if (slot->last_left > now_ticks()) {|    if (false) {|ReductionUnitSlots"
  "multicast copies store-and-forward|models/switch/reduction_unit.cpp|f->wire_bytes, now + params_.latency,|f->wire_bytes, std::max(now, f->tail) + params_.latency,|ReductionUnitTiming.AMulticast"
  "multicast buffer unlimited|models/switch/reduction_unit.cpp|  if (copy_buffer_used_ + f->bytes > params_.multicast_buffer_bytes) {|  if (false) {|ReductionUnitTiming.AMulticastFrameFinding"
  "hierarchical levels not staged|models/collectives/algorithms/hierarchical.cpp|    if (themis_free()) return 1;|    return 1;|ClosedForm.PipelinedHierarchical"
  "pipeline_chunk ignored|models/collectives/collective_engine.cpp|    if (wanted > plan.chunks) {|    if (false) {|ClosedForm.PipelinedHierarchical"
  "a tree that is not NCCL's|models/collectives/algorithms/double_binary_tree.cpp|  if (t.parent >= n) t.parent = p ^ bit;|  t.parent = p ^ bit;|CollectivePrograms.TheTrees"
  "a waiting contribution skipped once slots are full|models/switch/reduction_unit.cpp|waiting_with_slot_ == 0 && (copies_blocked|true && (true|Limits"
  "NIC read-ahead ignored|models/nic/nic.cpp|tp.prefetch_bytes < params_.read_ahead_bytes|tp.prefetch_bytes < params_.segment_bytes|Hbm.ANicReadsAhead"
  "a bad level algorithm accepted|platforms/assembly/loader.cpp|!runs_a_level(*algo)) {|false) {|BadLevels"
  "ring channels not entering the nodes at different NPUs|models/collectives/make_program.cpp|    ps.node_size = node_size;|    ps.node_size = 0;|ClosedForm.RingChannels"
  "ring channels for whole nodes only|models/collectives/make_program.cpp|  if (g < 2 |  if (static_cast<int>(g) != per_node |ClosedForm.ASubgroupsRing"
  "a ring channel's segments by place, not by member|models/collectives/make_program.cpp|  const int block = member(a);|  const int block = a;|rails12_channels4"
  "the hierarchical estimate without filling and draining|models/collectives/algorithm_choice.cpp|  return latency + transfer + (transfers - transfer) / chunks;|  return latency + transfer;|DefaultChoice.TheHierarchicalEstimate"
  "a send-only round ends before its sends have left|models/collectives/collective_engine.cpp|    const bool await_sends = round.recvs.empty() &&|    const bool await_sends = false &&|ClosedForm.ABinomialTree"
  "a collective's chunks to one peer take turns frame by frame|models/nic/nic.cpp|    if (last && m->queue == last->queue && m->dst == last->dst) {|    if (false) {|ClosedForm.AChunkedRingBroadcast"
  "the cost model's chunks sharing each link at once|models/collectives/cost_model.cpp|      std::max(busiest * 1e12, end.transfer * waves + busiest * 1e12 * (per_channel - 1) / per_channel);|      std::max(busiest * 1e12, end.transfer * waves * per_channel);|ClosedForm.AChunkedRingBroadcast"
  "a NIC's DMA write taken as a read|models/nic/nic.cpp|  if (write) {  // a received frame is in memory|  if (!write) {  // a received frame is in memory|Hbm"
  # The round rules (round_cursor.h), shared by the engine, the executor and the cost model.
  "a receive matched without its sender|models/collectives/round_cursor.h|      if (!t.arrived && static_cast<std::uint32_t>(t.peer) == sender && tag_in(t, round_) == tag) {|      if (!t.arrived && tag_in(t, round_) == tag) {|Transports.DataModeOnRoce.all_to_all"
  "a transfer's named tag ignored|models/collectives/round_cursor.h|    return t.tag == Transfer::kSameRound ? round : t.tag;|    return round;|CollectivePrograms"
  "the executor ends a round before its receives|models/collectives/program_executor.cpp|      if (cursor.pending() > 0) break;|      if (false) break;|CollectivePrograms"
  "the estimate ends a round at its first message in|models/collectives/cost_model.cpp|        done = later(done, it->second);|        if (i == 0) done = later(done, it->second);|CostModel.ARoundEnds"
  "a message that came early is not taken when its round starts|models/collectives/collective_engine.cpp|      if (it != run.early_.end()) {|      if (false) {|CollectiveEngine.ARingAllReduceOnBareWires"
  "every collective in one NIC queue|models/collectives/collective_engine.cpp|      m->queue = queue != 0 ? queue : 1u; |      m->queue = 1u; |Scheduling.TwoCollectivesToOnePeer"
  "in-switch messages in no queue|models/collectives/collective_engine.cpp|      m->queue = queue != 0 ? queue : 1u; |      m->queue = t.kind == MessageKind::kUnicast ? (queue != 0 ? queue : 1u) : 0u; |ShippedPlatforms.DgxH100NvlsMulticastsAPiece"
  "a queue's in-switch messages taking turns like any others|models/nic/nic.cpp|    if (x->queue == m->queue && x->dst == m->dst && x->kind != MessageKind::kUnicast) {|    if (false) {|NicTiming.AQueuesInSwitch"
  "in-switch messages chained behind the one posted before|models/nic/nic.cpp|  if (!m->hardware && m->notice == Message::Notice::kNone && m->kind == MessageKind::kUnicast) {|  if (!m->hardware && m->notice == Message::Notice::kNone) {|NicTiming.AQueuesInSwitchMessagesKeep"
  "a pushed in-switch level's all-gather estimated without its way up|models/collectives/algorithm_choice.cpp|        level.transfer = pull ? all.transfer : all.transfer * (1 + 1.0 / n);|        level.transfer = all.transfer;|DefaultChoice.ASharpTopLevel"
  "a SHARP top level run as reduce-scatter and all-gather|models/collectives/algorithms/hierarchical.cpp|      const bool in_switch_top = d == top && dim.algorithm == AlgorithmKind::kInSwitch && s.level_order.empty() &&|      const bool in_switch_top = false &&|DefaultChoice.ASharpTopLevel"
  "a pulled top level run as one all-reduce|models/collectives/algorithms/hierarchical.cpp|                                 s.in_switch && !s.in_switch->in_switch_plan(*ph.ranks, coord).pull;|                                 true;|DefaultChoice.APulledTopLevel"
  "a SHARP top level estimated as reduce-scatter and all-gather|models/collectives/algorithm_choice.cpp|(l == top && !pull && config.dimension_order != LevelOrder::kThemis)) {|false) {|DefaultChoice.ASharpTopLevel"
  "in-switch estimates blind to a tree of units|models/collectives/algorithm_choice.cpp|  const double tree = std::max(0, links - 2) * per_link;|  const double tree = 0;|DefaultChoice.WithinFivePercentOfTheFastestOnTwoAndFour"
  "pulled in-switch chunks without the pipeline depth's bound|models/collectives/algorithms/in_switch.cpp|        return std::max<std::uint32_t>(1, plan_.pipeline_depth / chunk_depth());|        return 0;|DgxH100NvlsKeepsItsPipelineDepth"
  "a pulled in-switch level of a hierarchical collective without its bound|models/collectives/algorithms/hierarchical.cpp|    if (s < n) return phases_[s].up->stage_limit(0);|    if (s < n) return 0;|NvlsTreeKeepsTheNvlsLevels"
  "a collbench row on the streams the last row left|platforms/tools/collbench.cpp|  platform.rewind_memory_streams();|  (void)0;|Collbench.ARowDoesNotDepend"
  "a row's estimates lost on the way back from its process|platforms/tools/collbench.cpp|    r.estimates_us.emplace_back(static_cast<AlgorithmKind>(e.at(0).get<int>()), e.at(1).get<double>());|    (void)e;|Collbench.RowsMeasuredInParallel"
  "a row process's bad input reported as our fault|platforms/tools/collbench.cpp|  if (kind == \"input\") throw InputError(message);|  (void)kind;|Collbench.AnErrorInARowsProcess"
  "a message in its overhead holds the port from ready ones|models/nic/nic.cpp|start_of(*queue.front());\n    if (t <= now |start_of(*queue.front());\n    if (true |NicTiming.AMessageStillInItsOverhead"
  "a message whose window is full sent in place of one in its overhead|models/nic/nic.cpp|!window_allows(*m);|false;|NicWindow.AMessageWhoseWindowIsFull"
  "the class whose turn it is holds the port through its overhead|models/nic/nic.cpp|put_startable_first(tp.sending[c ^ 1]) < start) c ^= 1;|put_startable_first(tp.sending[c ^ 1]) < 0) c ^= 1;|NicTiming.TheOtherClassSends"
  "PCIe reads store and forward|models/pcie/pcie_switch.cpp|  if (StreamTiming* t = gp.get_extension<StreamTiming>(); t && t->consume_time > 0) {|  if (StreamTiming* t = gp.get_extension<StreamTiming>(); t && false) {|PcieSwitch"
  "PCIe writes wait for their last byte|models/pcie/pcie_switch.cpp|    first = std::min(t->first_byte, now);|    first = now;|PcieSwitch.AStreamingWrite"
  "PCIe pipe never busy|models/pcie/pcie_switch.cpp|  pipe.free = start + take;|  pipe.free = earliest;|PcieSwitch"
  "PCIe latency one way only|models/pcie/pcie_switch.cpp|  const Tick last_in = out.end + params_.latency;|  const Tick last_in = out.end;|PcieSwitch"
  "staged bytes skip host memory's latency|models/pcie/pcie_switch.cpp|  const Tick in_host = params_.latency + params_.host_latency;|  const Tick in_host = params_.latency;|PcieSwitch.AStaged"
  "write_only stages the writes too|models/pcie/pcie_switch_params.h|  bool stages_writes() const { return gpudirect_rdma == PcieGpuDirect::kOff; }|  bool stages_writes() const { return gpudirect_rdma != PcieGpuDirect::kOn; }|PcieSwitch.WriteOnly|Hbm.Staged"
  "the uplink queues behind the last reservation|models/pcie/pcie_switch.cpp|  Tick start = std::max(earliest, forgotten_until_);|  Tick start = std::max(earliest, busy_.empty() ? forgotten_until_ : std::prev(busy_.end())->second);|Hbm.Staged"
  "each pair on a PCIe switch of its own|platforms/assembly/platform.cpp|      const int per_switch = static_cast<int>(c.spec.pcie->devices_per_switch);|      const int per_switch = 1;|Hbm.Staged"
  "the uplink at the ports' rate|models/pcie/pcie_switch.cpp|  uplink_bandwidth_ = params_.data_bandwidth(params_.uplink_lanes);|  uplink_bandwidth_ = bandwidth_;|Hbm.Staged"
  "every NIC on the first PCIe switch|platforms/assembly/platform.cpp|      PcieSwitch*& pcie = bf.pcie_switch_of_group[n.npu / per_switch];|      PcieSwitch*& pcie = bf.pcie_switch_of_group[0];|Hbm"
  "NIC tells no wire time to the PCIe switch|models/nic/nic.cpp|        streaming.consume_time = leave_time(f->wire_bytes);|        streaming.consume_time = 0;|PcieSwitchUnderANic.Faster"
  "NIC writes received frames as if they came at once|models/nic/nic.cpp|    streaming.first_byte = f->head - std::min(f->spread, f->head);|    streaming.first_byte = kNever;|PcieSwitchUnderANic.Received"
  "PCIe responses ignore END_RESP|models/pcie/pcie_switch.cpp|  if (out.awaiting_end_resp) {  // the base protocol|  if (false) {  // the base protocol|PcieSwitch.ADeviceThatEnds"
  "a frame sent whole after trickling in carries no spread|models/nic/nic.cpp|        f->spread = first_in != kNever && f->head > could_start ? f->head - could_start : 0;|        f->spread = 0;|PcieSwitchUnderANic.Slower"
  "a receiving NIC ignores the spread|models/nic/nic.cpp|    streaming.first_byte = f->head - std::min(f->spread, f->head);|    streaming.first_byte = f->head;|PcieSwitchUnderANic.AReceivedFrameSentWhole"
  "a frame that waits at a link keeps its spread|models/link/link.cpp|    f->spread = f->spread > waited ? f->spread - waited : 0;|    f->spread = f->spread;|LinkTiming.AFrameThatWaits"
  "PCIe TLP overhead ignored|models/pcie/pcie_switch.cpp|                                     (payload + static_cast<double>(tlp_overhead_bytes)));|                                     payload);|PcieSwitchParams"
  "a sweep point computed by another build taken as this one's|platforms/tools/cli/main.cpp|input_file_sha256(\"/proc/self/exe\", \"fabricsim's own executable\")|std::string(\"any build\")|Sweep.ResumesAfterAKill"
  "collbench's probe keeps the slowest candidate|platforms/tools/collbench.cpp|t < (*best)[\"row\"].at(\"time_us\")|t > (*best)[\"row\"].at(\"time_us\")|DefaultChoice.AlgorithmsTooClose"
  "no probe: the estimate alone decides|models/collectives/algorithm_choice.cpp|  if (out.size() < 2) out.clear();|  out.clear();|DefaultChoice.AlgorithmsTooClose|DefaultChoice.ATraceProbes|RingTorusAndPool"
  "a trace's probe keeps the slowest candidate|traces/workload/choice_probe.cpp|t < best)) {|t > best)) {|DefaultChoice.ATraceProbes"
  "a trace's candidates timed as the first of their batch|traces/workload/choice_probe.cpp|        d.simulated.emplace_back(a, has_time ? t : kNever);|        d.simulated.emplace_back(running.front().first, has_time ? t : kNever);|DefaultChoice.ATracesCandidatesRunSideBySide"
  "a trace's probe stops after its first batch|traces/workload/choice_probe.cpp|first < candidates.size() && d.failure.empty()|first < width && d.failure.empty()|DefaultChoice.ATracesCandidatesRunSideBySide"
  "a trace's probe timed to the first member's end|traces/workload/choice_probe.cpp|--child_.remaining > 0) return;|(child_.remaining = 0) > 0) return;|DefaultChoice.ATraceProbes"
  "a repeat probed again|traces/workload/choice_probe.cpp|    by_shape_.emplace(shape, pick);|    (void)shape;|DefaultChoice.ATraceProbes"
  "a probe's copy reads its traces from /dev/null|tlm/util/simulation_copy.cpp|const int with = copy >= 0 ? copy : null;|const int with = null;|DefaultChoice.AProbeOfATraceLonger"
  "a probe's shape blind to nodes|traces/workload/choice_probe.cpp|  s.nodes = node_offsets(config, group.ranks);|  (void)config;|DefaultChoice.AProbedDecisionIsShared"
  "a probe's shape blind to reduction units|traces/workload/choice_probe.cpp|  if (const int d = hints.in_switch_domain(group.ranks); d >= 0) {|  if (const int d = hints.in_switch_domain(group.ranks); d < -1) {|DefaultChoice.AProbedDecisionIsShared"
  "an algorithm the platform names probed away|models/collectives/algorithm_choice.cpp|!chosen_by_default(config, type, ranks)) return {};|false) return {};|DefaultChoice.AnAlgorithmThePlatformNames"
  "the H100 collective cut in chunks that hide NCCL's step costs|platforms/dgx_h100.yaml|  chunks: 1 |  chunks: 4 |ShippedPlatforms.DgxH100RingPaysNccl"
  "a ResNet block without its shortcut projection|traces/model/resnet.cpp|      if (b == 0) out.push_back(|      if (false) out.push_back(|ResnetS"
  "a ResNet stride on the 1x1 reduce (v1, not v1.5)|traces/model/resnet.cpp|      out.push_back({Role::kReduce, channels, width, 1, 1, side, side});|      out.push_back({Role::kReduce, channels, width, 1, 1, side, (side + stride - 1) / stride});|ResnetShape"
  "DDP reduces in every microbatch|traces/model/resnet_nodes.cpp|    reduce_now_ = last_microbatch;|    reduce_now_ = true;|ResnetStep"
  "1F1B without its warm-up forwards|traces/model/training_job.cpp|    const int warm = std::min(p - stage - 1, m);|    const int warm = 0;|TrainingSchedule"
  "the bubble counts microbatches, not chunks|traces/model/training_job.cpp|  const double p = pp_, mv = static_cast<double>(m_) * vp_;|  const double p = pp_, mv = static_cast<double>(m_);|TrainingSchedule"
  "equation 3 without the recomputed forward|traces/model/training_job.cpp|  return model_flops() + tokens_per_step() * layers;|  return model_flops();|TrainingFlops"
  "a signal leaves the outputs' temporaries|tlm/util/interrupt_cleanup.cpp|    if (s.owner.load() == me) ::unlink(s.path);|    if (false) ::unlink(s.path);|Signals"
  "a second YAML document dropped|platforms/assembly/yaml_input.cpp|  if (documents.second) {\n    // The first alone|  if (false) {\n    // The first alone|BadYaml.ASecondDocument"
  "--set values skip the file's checks|platforms/assembly/yaml_input.cpp|  check_document(YamlInput(o.flag() + \" (its value)\"), value, 0, visited);|  (void)visited;|BadYaml.ASecondDocument"
  "data buffers bounded by the machine, not the process|platforms/assembly/platform.cpp|  b.memory_bytes = limit.bytes;|  b.memory_bytes = WorkBounds::physical_memory();|BadWork.DataBuffers"
  "held args drop a list's tensors|traces/model/node_emitter.cpp|      for (const Tensor& t : a.tensors) o.tensors.push_back(tensor(t));|      {}|TrainingRun.HeldArgs"
  "held scalars kept as their text|traces/reader/op_args.cpp|  if (plain) return OpArg{{}, false, std::string(text)};|  return OpArg{{}, false, std::string(text)};|TrainingRun.HeldArgs"
  "report lists every collective|models/npu/npu.cpp|  if (collective_log_.size() < collective_list_limit_) collective_log_.push_back(std::move(rec));|  collective_log_.push_back(std::move(rec));|TrainingRun.AReportLists"
  "collective summary keeps the last duration|models/npu/npu.cpp|  kind.total += took;|  kind.total = took;|TrainingRun.AReportLists"
  "gen model writes past its bound|platforms/run/training_loader.cpp|  if (bytes > limit && !force) {|  if (false) {|TrainingInput.TracesPast"
  "gen model estimates from nothing|platforms/run/training_loader.cpp|      rank0_bytes += size + (size < 128 ? 1 : size < 16384 ? 2 : 3);|      rank0_bytes += 0 * size;|TrainingInput.TracesPast"
  "a process-group configuration keyed by name skipped|traces/workload/trace_workload.cpp|    if (!j.is_array() && !j.is_object()) {|    if (!j.is_array()) return;\n    if (false) {|Workload.AProcessGroupConfigurationKeyed"
  "a platform built whatever its size|platforms/assembly/platform.cpp|  check_build_memory();\n|\n|BadWork.APlatformPast"
  "calendar events lose their argument|tlm/kernel/calendar.h|    add(when, Entry{owner, &Traits::template run<Handler>, Traits::pack(arg)});|    add(when, Entry{owner, &Traits::template run<Handler>, 0});|Calendar"
  "a memory ends a delayed request before it began|models/memory/memory.cpp|  phase = tlm::END_REQ;\n  return tlm::TLM_UPDATED;|  phase = tlm::END_REQ;\n  delay = sc_core::SC_ZERO_TIME;\n  return tlm::TLM_UPDATED;|BaseProtocolChecker.ADelayedRequest"
  "a memory client reuses a payload inside its response|tlm/memory_client.cpp|  done_for(ctx, gp.is_write(), status);\n  gp.release();|  gp.release();\n  done_for(ctx, gp.is_write(), status);|BaseProtocolChecker.AMemoryClientAsking"
  "the protocol-check option installs no checker|platforms/assembly/platform.cpp|  if (!spec_.protocol_checks) {|  if (true) {|RemoteMemory.EveryBindingOfThePool"
  "max-min: a fixed flow takes nothing from its other resources|models/flow/max_min_shares.cpp|            left_[q] -= level;\n|\n|MaxMinShares\|FlowFabric"
  "max-min: recomputes only the changed resources, not their component|models/flow/max_min_shares.cpp|      for (ResourceId r : flow.path) {\n        if (resource_seen_[r] == stamp_) continue;|      for (ResourceId r : {ResourceId{0}}) {\n        if (true) continue;|MaxMinShares.ARecomputation"
  "max-min: an added flow's least rate taken as its whole path's capacity|models/flow/max_min_shares.cpp|  for (ResourceId r : path) least = std::min(least, capacity_[r] / static_cast<double>(on_[r].size()));|  for (ResourceId r : path) least = std::min(least, capacity_[r]);|MaxMinShares.Recomputing"
  "max-min: a removed flow frees nothing for the slower flows (threshold from the wrong side)|models/flow/max_min_shares.cpp|  threshold_ = std::min(threshold_, flow.fresh ? 0.0 : flow.rate * (1 - 1e-9));|  threshold_ = std::min(threshold_, flow.fresh ? 0.0 : flow.rate * 2);|MaxMinShares.Recomputing"
  "max-min: flows fixed at a level their resource is 0.1% above|models/flow/max_min_shares.cpp|    const double bound = level * (1 + 1e-12);|    const double bound = level * (1 + 1e-3);|MaxMinShares.Recomputing"
  "flows: bytes moved at the old rate not settled|models/flow/flow_fabric.cpp|        st.remaining = std::max(0.0, st.remaining - shares_.rate(f) * static_cast<double>(now - st.settled_at));|        (void)st;|FlowFabric.TwoFlows\|FlowFabric.ThreeFlows"
  "flows: link latency left out|models/flow/flow_fabric.cpp|    latency += l.latency;|    (void)l.latency;|FlowFourHops"
  "flows: switch hop latency left out|models/flow/flow_fabric.cpp|    latency += n.hop_latency;|    (void)n.hop_latency;|FlowFourHops\|FlowFabric.FlowsOnARing"
  "flows: a stripe split evenly, not by rate|models/flow/flow_fabric.cpp|    const double share = sum > 0 ? bw / sum : 1.0 / static_cast<double>(count);|    const double share = 1.0 / static_cast<double>(count);|FlowFabric.AStriping"
  "flows: no injection cap|models/flow/flow_fabric.cpp|  if (resource_of_endpoint_[t->endpoint] >= 0) {\n    path_scratch_|  if (false) {\n    path_scratch_|FlowFabric.TheInjectionCap"
  "flows: no DMA at the receiver|models/flow/flow_fabric.cpp|  t->arrive_at += dma_time(m, static_cast<std::uint32_t>(endpoint_of_address_[m.dst]));  // its last frame written|  (void)0;|FlowFabric.WithAnHbm"
)

# Applies one mutation's text to its file (exit 1 and a message if the text
# does not appear exactly once).
apply_mutation() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys
path, old, new = sys.argv[1:4]
old, new = old.replace("\\n", "\n"), new.replace("\\n", "\n")
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"{path}: the text to mutate appears {text.count(old)} times: {old}")
open(path, "w").write(text.replace(old, new))
PY
}

# The fields of entry $1, a "\|" kept as a "|" inside its field.
split_entry() {
  local bar=$'\x01'
  IFS='|' read -r name file old new tests <<<"${1//\\|/$bar}"
  old=${old//$bar/|}
  new=${new//$bar/|}
  tests=${tests//$bar/|}
}

chosen=()
for m in "${mutations[@]}"; do
  split_entry "$m"
  if [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]]; then continue; fi
  chosen+=("$m")
done
if [ -n "${SAMPLE:-}" ]; then
  seed=${SEED:-$(date +%s)}
  echo "a sample of $SAMPLE of ${#chosen[@]} mutations, seed $seed (SEED=$seed SAMPLE=$SAMPLE repeats it)"
  mapfile -t chosen < <(printf '%s\n' "${chosen[@]}" | python3 -c '
import random, sys
lines = sys.stdin.read().splitlines()
random.Random(int(sys.argv[1])).shuffle(lines)
print("\n".join(lines[: int(sys.argv[2])]))' "$seed" "$SAMPLE")
fi

if $check_only; then
  stale=0
  for m in "${chosen[@]}"; do
    split_entry "$m"
    if ! [ -f "$file" ]; then
      echo "STALE    $name: no file $file"
      stale=$((stale + 1))
      continue
    fi
    copy=$(mktemp)
    cp "$file" "$copy"
    if ! apply_mutation "$copy" "$old" "$new" >/dev/null 2>&1; then
      echo "STALE    $name: its text is not in $file exactly once"
      stale=$((stale + 1))
    fi
    rm -f "$copy"
  done
  echo "${#chosen[@]} mutations, $stale stale"
  exit $((stale > 0))
fi

restore() { [ -n "${saved:-}" ] && cp "$saved" "$file" && rm -f "$saved"; saved=""; }
trap restore EXIT
survivors=0
started=$SECONDS
for m in "${chosen[@]}"; do
  split_entry "$m"
  if [ -n "${BUDGET:-}" ] && [ $((SECONDS - started)) -ge "$BUDGET" ]; then
    echo "the budget of $BUDGET s is spent: the rest of the sample is not run"
    break
  fi
  saved=$(mktemp)
  cp "$file" "$saved"
  if ! apply_mutation "$file" "$old" "$new"; then
    restore
    echo "SKIPPED  $name (the source changed: update the mutation)"
    survivors=$((survivors + 1))
    continue
  fi
  if ! cmake --build "$build" -j2 >/dev/null 2>&1; then
    echo "BROKEN   $name: the mutated source does not build (update the mutation)"
    survivors=$((survivors + 1))
  elif ctest --test-dir "$build" -R "$tests" >/dev/null 2>&1; then
    echo "SURVIVED $name: $tests still pass"
    survivors=$((survivors + 1))
  else
    echo "killed   $name ($tests fail)"
  fi
  restore
done
cmake --build "$build" -j2 >/dev/null  # back to the real model
exit $((survivors > 0))
