#include "models/npu/npu.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "models/memory/memory_endpoint.h"
#include "tlm/util/errors.h"

namespace fabricsim {

const ParamTable<Npu::Params>& Npu::Params::table() {
  static const auto table =
      ParamTable<NpuParams>("npu",
                            "an NPU: replays its trace, computes by roofline, starts collectives and memory accesses")
          .add("peak_flops", Quantity::kFlopRate, &NpuParams::peak_flops, "dense compute rate of the roofline")
          .legacy("peak_tflops", 1e12, "TFLOP/s")
          .add("memory_bandwidth", Quantity::kBandwidth, &NpuParams::memory_bandwidth,
               "the roofline's local-memory bandwidth (when no hbm is modeled)")
          .legacy("memory_bandwidth_GBps", 1e9, "GB/s")
          .add("cpu_flops", Quantity::kFlopRate, &NpuParams::cpu_flops,
               "compute rate of nodes marked as CPU operations")
          .legacy("cpu_gflops", 1e9, "GFLOP/s")
          .add("remote_memory_latency", Quantity::kDuration, &NpuParams::remote_memory_latency,
               "memory loads and stores when no memory on a fabric serves the NPU")
          .legacy("remote_memory_latency_ns", 1e3, "ns")
          .add("remote_memory_bandwidth", Quantity::kBandwidth, &NpuParams::remote_memory_bandwidth,
               "and their bandwidth")
          .legacy("remote_memory_bandwidth_GBps", 1e9, "GB/s")
          .add("collective_start_overhead", Quantity::kDuration, &NpuParams::collective_start_overhead,
               "before each collective starts (endpoint delay)");
  return table;
}

namespace {
const char* tlm_response_string(tlm::tlm_response_status s) {
  switch (s) {
    case tlm::TLM_ADDRESS_ERROR_RESPONSE:
      return "address error";
    case tlm::TLM_COMMAND_ERROR_RESPONSE:
      return "command error";
    case tlm::TLM_BURST_ERROR_RESPONSE:
      return "burst error";
    case tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE:
      return "byte enable error";
    case tlm::TLM_GENERIC_ERROR_RESPONSE:
      return "generic error";
    default:
      return "incomplete";
  }
}
}  // namespace

Npu::Npu(const sc_core::sc_module_name& name, int rank, unsigned nics, const Params& params, const Directory& directory,
         const CollectiveConfig& collectives)
    : sc_core::sc_module(name),
      to_nic("to_nic", nics),
      from_nic("from_nic", nics),
      hbm("hbm", *this),
      rank_(rank),
      params_(params),
      directory_(directory),
      collectives_(*this, collectives),
      compute_model_(
          make_compute_model(params.compute, params.peak_flops, params.memory_bandwidth.bytes_per_ps() * 1e12)),
      cpu_model_(params.cpu_flops, params.memory_bandwidth.bytes_per_ps() * 1e12) {
  nic_path_.reserve(nics);
  for (unsigned i = 0; i < nics; ++i) {
    nic_path_.emplace_back(to_nic[i]);
    to_nic[i].register_nb_transport_bw<&Npu::nic_bw>(this, static_cast<int>(i));
    from_nic[i].register_nb_transport_fw<&Npu::nic_fw>(this, static_cast<int>(i));
  }
}

// ---- bookkeeping --------------------------------------------------------------

Npu::Pending* Npu::begin_op(NpuClient* client, NpuOperation* ctx, OpType type, std::string what, bool active) {
  ActivityTracker::Kind kind = ActivityTracker::kComm;
  if (type == OpType::kCompute) kind = ActivityTracker::kCompute;
  if (type == OpType::kMemory) kind = ActivityTracker::kMemory;
  auto p = std::make_unique<Pending>(this);
  p->seq = next_seq_++;
  p->client = client;
  p->ctx = ctx;
  p->type = type;
  p->kind = kind;
  p->what = std::move(what);
  p->started = now_ticks();
  Pending* raw = p.get();
  live_.emplace(raw->seq, std::move(p));
  ++in_flight_;
  if (active) activity_.begin(kind, now_ticks());
  return raw;
}

void Npu::set_timeline(TimelineSink* timeline) {
  timeline_ = timeline && timeline->records(rank_) ? timeline : nullptr;
  collectives_.set_timeline(timeline_);
}

void Npu::end_op(Pending* p) {
  const Tick now = now_ticks();
  if (timeline_ && (p->type == OpType::kMemory || p->type == OpType::kSend || p->type == OpType::kRecv)) {
    TimelineSink::Args args;
    args.node = p->label.node;
    args.bytes = p->bytes;
    args.peer = p->peer;
    const std::string name = p->label.name ? *p->label.name : p->what;
    timeline_->slice(rank_,
                     p->type == OpType::kMemory ? TimelineSink::Track::kMemory : TimelineSink::Track::kPointToPoint,
                     name, p->started, now, args);
  }
  activity_.end(p->kind, now);
  finish_ = std::max(finish_, now);
  --in_flight_;
  NpuClient* client = p->client;
  NpuOperation* ctx = p->ctx;
  live_.erase(p->seq);
  if (client) client->operation_done(ctx);
}

// ---- compute ------------------------------------------------------------------

Tick Npu::compute_time(const ComputeOp& op) const {
  if (op.use_recorded) return op.recorded;
  return op.on_cpu ? cpu_model_.time(op.work) : compute_model_->time(op.work);
}

void Npu::start_compute(const ComputeOp& op, NpuClient* client, NpuOperation* ctx) {
  const unsigned r = op.on_cpu ? 1 : 0;
  Pending* p = begin_op(client, ctx, OpType::kCompute, op.on_cpu ? "CPU compute" : "compute", false);
  ComputeJob job;
  job.op = p;
  job.label = op.label;
  job.tensor_bytes = static_cast<std::uint64_t>(op.work.bytes);
  if (!op.use_recorded) {
    job.cls = static_cast<int>(op.work.cls);
    job.flops = op.work.flops;
  } else {
    job.cls = op.recorded_class;
  }
  if (hbm.bound() && !op.use_recorded && !op.on_cpu) {
    // The tensor bytes go through the HBM, sharing it with the NICs' DMA:
    // the node takes the longer of its model's time and its memory traffic.
    job.compute = compute_model_->time_beside_memory(op.work);
    job.hbm_bytes = job.tensor_bytes;
  } else {
    job.compute = compute_time(op);
  }
  compute_[r].queue.push_back(job);
  run_next(r);
}

void Npu::run_next(unsigned r) {
  ComputeResource& res = compute_[r];
  if (res.running || res.queue.empty()) return;
  const ComputeJob job = res.queue.front();
  res.queue.pop_front();
  res.running = job.op;
  res.job = job;
  res.started = now_ticks();
  res.parts_left = 1;
  activity_.begin(ActivityTracker::kCompute, now_ticks());
  calendar_.schedule_in<&Npu::compute_part_done>(job.compute, this, r);
  // Larger than the window: several requests at once, as a kernel's loads are.
  for (std::uint64_t left = job.hbm_bytes; left > 0;) {
    const std::uint64_t piece = std::min<std::uint64_t>(left, 1ull << 30);
    ++res.parts_left;
    hbm.stream(false, piece, r);
    left -= piece;
  }
}

void Npu::compute_part_done(unsigned r) {
  ComputeResource& res = compute_[r];
  if (--res.parts_left > 0) return;
  res.busy += now_ticks() - res.started;
  if (r == 0) {
    ClassTime& c = by_class_[res.job.cls < 0 ? kKernelClasses : static_cast<std::size_t>(res.job.cls)];
    ++c.kernels;
    c.busy += now_ticks() - res.started;
    c.flops += res.job.flops;
  }
  if (timeline_) {
    TimelineSink::Args args;
    args.node = res.job.label.node;
    args.bytes = res.job.tensor_bytes;
    static const std::string kCompute = "compute";
    timeline_->slice(rank_, r == 0 ? TimelineSink::Track::kGpu : TimelineSink::Track::kCpu,
                     res.job.label.name ? *res.job.label.name : kCompute, res.started, now_ticks(), args);
  }
  Pending* p = res.running;
  res.running = nullptr;
  end_op(p);
  run_next(r);
}

void Npu::memory_done(unsigned resource, bool /*write*/, tlm::tlm_response_status status) {
  if (status != tlm::TLM_OK_RESPONSE) {
    throw ModelError(std::string(name()) + ": its HBM refused a compute node's access (" + tlm_response_string(status) +
                     ")");
  }
  compute_part_done(resource);
}

// ---- memory (stand-in until the memory models: latency + size / bandwidth) -------

void Npu::start_memory(bool store, std::uint64_t bytes, const std::string& what, NpuClient* client, NpuOperation* ctx,
                       const OpLabel& label) {
  Pending* p = begin_op(client, ctx, OpType::kMemory, what);
  p->label = label;
  p->bytes = bytes;
  const Directory::MemoryRoute* mem = directory_.memory(rank_);
  if (!mem) {
    if (params_.no_remote_memory) {
      throw ModelError(std::string(name()) + ": " + what + ": the platform has no remote memory");
    }
    // No memory on any fabric: the documented stand-in.
    const Tick t = params_.remote_memory_latency + params_.remote_memory_bandwidth.time_for(static_cast<double>(bytes));
    calendar_.schedule_in<&Npu::end_op>(t, this, p);
    return;
  }
  if (bytes > mem->size) {  // would wrap the streaming cursor, and no address range holds it
    throw ModelError(std::string(name()) + ": a " + (store ? "store" : "load") + " of " + std::to_string(bytes) +
                     " bytes is larger than the " + std::to_string(mem->size) + "-byte memory \"" + mem->name + "\"");
  }
  // A request to the memory node; its answer ends the operation.
  const std::uint64_t seq = next_memory_op_++;
  memory_ops_[seq] = p;
  Message* m = Message::allocate();
  m->ref();
  for (const auto& a : directory_.attachments(rank_)) {
    if (a.nic == mem->nic) m->src = a.address;
  }
  m->dst = mem->address;
  m->flow = static_cast<std::uint32_t>(rank_) * 0x9e37u + 0x51u;
  m->tag.user = kMemoryMessage;
  m->tag.src_rank = static_cast<std::uint32_t>(rank_);
  m->memory.op = store ? Message::MemoryOp::kStoreData : Message::MemoryOp::kLoadRequest;
  m->memory.request = seq;
  m->bytes = store ? bytes : kMemoryRequestBytes;
  // Successive operations stream through the memory's range.
  if (memory_cursor_ + bytes > mem->size) memory_cursor_ = 0;
  m->memory.address = mem->base + memory_cursor_;
  memory_cursor_ += bytes;
  m->memory.bytes = bytes;
  m->sender.port = static_cast<std::uint32_t>(mem->nic);
  post(m);
}

// ---- collectives ----------------------------------------------------------------

void Npu::start_collective(const CollectiveSpec& spec, NpuClient* client, NpuOperation* ctx) {
  std::ostringstream what;
  what << to_string(spec.type) << " \"" << spec.name << "\" (node " << spec.node_id << ")";
  Pending* p = begin_op(client, ctx, OpType::kCollective, what.str());
  collectives_.start(spec, p);
}

void Npu::collective_done(CollectiveRun& run) {
  CollectiveRecord rec;
  rec.node_id = run.spec.node_id;
  rec.name = run.spec.name;
  rec.type = run.spec.type;
  rec.algorithm = run.spec.algorithm;
  rec.protocol = run.spec.protocol;
  rec.channels = run.spec.channels;
  rec.nccl_algorithm = run.spec.nccl_algorithm;
  rec.nccl_protocol = run.spec.nccl_protocol;
  rec.bytes = run.spec.bytes;
  rec.group = run.spec.group->name;
  rec.start = run.started;
  rec.end = run.finished;
  const Tick took = rec.end - rec.start;
  const auto [it, fresh] = kind_index_.try_emplace(
      std::make_tuple(rec.name, rec.group, static_cast<int>(rec.type), static_cast<int>(rec.algorithm),
                      static_cast<int>(rec.protocol), rec.channels, rec.nccl_algorithm, rec.nccl_protocol, rec.bytes),
      collective_kinds_.size());
  if (fresh) collective_kinds_.push_back(CollectiveSummary{rec, 0, 0, took, took});
  CollectiveSummary& kind = collective_kinds_[it->second];
  ++kind.count;
  kind.total += took;
  kind.shortest = std::min(kind.shortest, took);
  kind.longest = std::max(kind.longest, took);
  ++collectives_run_;
  if (collective_log_.size() < collective_list_limit_) collective_log_.push_back(std::move(rec));
  if (!run.data_error.empty()) data_errors_.push_back(run.data_error);
  if (timeline_ && run.timeline_lane >= 0) {
    TimelineSink::Args args;
    args.node = static_cast<std::int64_t>(run.spec.node_id);
    args.bytes = run.spec.bytes;
    args.algorithm = to_string(run.spec.algorithm);
    args.group = &run.spec.group->name;
    args.chunks = static_cast<std::uint32_t>(std::max<std::size_t>(1, run.spec.chunks));
    timeline_->close_collective(rank_, run.timeline_lane, std::string(to_string(run.spec.type)) + " " + run.spec.name,
                                run.started, run.finished, args);
  }
  end_op(static_cast<Pending*>(run.owner));  // the Pending start_collective handed the engine
}

Message* Npu::new_message(int peer, std::uint64_t bytes) {
  if (peer < 0) {  // a switch reduction unit
    const Directory::Unit& unit = directory_.unit(peer);
    const Directory::Attachment* a = directory_.on(rank_, unit.fabric);
    Message* m = Message::allocate();
    m->ref();
    m->src = a->address;
    m->dst = unit.address;
    m->bytes = bytes;
    m->tag.src_rank = static_cast<std::uint32_t>(rank_);
    m->flow = static_cast<std::uint32_t>(rank_) * 0x10001u + unit.address * 0x9e37u;
    m->sender.port = static_cast<std::uint32_t>(a->nic);
    return m;
  }
  if (peer != cached_peer_) {
    // NPUs that share no fabric talk through others, dimension by dimension
    // (store and forward of whole messages, as a proxy does).
    cached_hop_ = directory_.connected(rank_, peer) ? peer : directory_.next_hop(rank_, peer);
    cached_route_ = directory_.route(rank_, cached_hop_);
    cached_src_ = directory_.on(rank_, cached_route_.fabric)->address;
    cached_peer_ = peer;
  }
  const PeerRoute& route = cached_route_;
  Message* m = Message::allocate();
  m->ref();  // one reference for the sender (released on END_REQ), one for the receiver
  m->src = cached_src_;
  m->dst = route.address;
  m->bytes = bytes;
  m->tag.src_rank = static_cast<std::uint32_t>(rank_);
  m->flow = static_cast<std::uint32_t>(rank_) * 0x10001u + static_cast<std::uint32_t>(peer);
  if (cached_hop_ != peer) m->sender.final_rank = peer;
  m->sender.port = static_cast<std::uint32_t>(route.nic);
  return m;
}

void Npu::post(Message* m) {
  const unsigned nic = m->sender.port;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  nic_path_[nic](m->payload(), phase, delay);
}

// ---- point-to-point ---------------------------------------------------------------

void Npu::start_send(int peer, std::uint64_t bytes, std::int64_t tag, NpuClient* client, NpuOperation* ctx,
                     const OpLabel& label) {
  std::ostringstream what;
  what << "send of " << bytes << " bytes to NPU " << peer << " (tag " << tag << ")";
  Pending* p = begin_op(client, ctx, OpType::kSend, what.str());
  p->label = label;
  p->bytes = bytes;
  p->peer = peer;
  if (peer == rank_) {  // to itself: no fabric involved
    Message* m = Message::allocate();
    m->bytes = bytes;
    m->tag.user = kPointToPointMessage;
    m->tag.src_rank = static_cast<std::uint32_t>(rank_);
    m->tag.collective = static_cast<std::uint64_t>(tag);
    m->sender.origin_node = label.node;
    message_arrived(m);
    end_op(p);
    return;
  }
  Message* m = new_message(peer, bytes);
  m->tag.user = kPointToPointMessage;
  m->tag.collective = static_cast<std::uint64_t>(tag);
  m->sender.origin_node = label.node;
  // The send is done when its last byte has left (the NIC's END_REQ, always
  // later than this call): the operation is told.
  m->sender.owner = p;
  post(m);
}

void Npu::start_recv(int peer, std::uint64_t bytes, std::int64_t tag, NpuClient* client, NpuOperation* ctx,
                     const OpLabel& label) {
  std::ostringstream what;
  what << "recv of " << bytes << " bytes from NPU " << peer << " (tag " << tag << ")";
  Pending* p = begin_op(client, ctx, OpType::kRecv, what.str());
  p->label = label;
  p->bytes = bytes;
  p->peer = peer;
  const P2pKey key{peer, tag};
  auto it = unexpected_p2p_.find(key);
  if (it != unexpected_p2p_.end() && !it->second.empty()) {
    Message* m = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) unexpected_p2p_.erase(it);
    receive_matched(p, m, tag);
    return;
  }
  posted_recvs_[key].emplace_back(bytes, p);
}

void Npu::receive_matched(Pending* recv, Message* m, std::int64_t tag) {
  if (m->bytes != recv->bytes) {
    std::ostringstream os;
    const std::string where = recv->client ? recv->client->where(recv->ctx) : "";
    if (!where.empty()) os << where << ": ";
    os << "a send and its receive disagree on the size: NPU " << m->tag.src_rank << " (node " << m->sender.origin_node
       << ") sends " << m->bytes << " bytes to NPU " << rank_ << " with tag " << tag << ", NPU " << rank_ << " (node "
       << recv->label.node;
    if (recv->label.name) os << " \"" << *recv->label.name << "\"";
    os << ") receives " << recv->bytes << " bytes";
    m->unref();
    throw InputError(os.str());
  }
  m->unref();
  end_op(recv);
}

std::string Npu::describe_tag_mismatch() const {
  for (const auto& [want, q] : posted_recvs_) {
    if (q.empty()) continue;
    for (const auto& [have, msgs] : unexpected_p2p_) {
      if (have.peer != want.peer || msgs.empty()) continue;
      const Pending& recv = *q.front().second;
      const Message& m = *msgs.front();
      std::ostringstream os;
      const std::string where = recv.client ? recv.client->where(recv.ctx) : "";
      if (!where.empty()) os << where << ": ";
      os << "a send and its receive disagree on the tag: NPU " << have.peer << " (node " << m.sender.origin_node
         << ") sent " << m.bytes << " bytes to NPU " << rank_ << " with tag " << have.tag << ", NPU " << rank_
         << " (node " << recv.label.node << ") waits to receive " << recv.bytes << " bytes with tag " << want.tag;
      return os.str();
    }
  }
  return "";
}

std::string Npu::describe_unreceived() const {
  for (const auto& [have, msgs] : unexpected_p2p_) {
    if (msgs.empty()) continue;
    const Message& m = *msgs.front();
    std::ostringstream os;
    os << "NPU " << have.peer << " (node " << m.sender.origin_node << ") sent " << m.bytes << " bytes to NPU " << rank_
       << " with tag " << have.tag;
    return os.str();
  }
  return "";
}

std::uint64_t Npu::unmatched_messages() const {
  std::uint64_t n = 0;
  for (const auto& [k, q] : unexpected_p2p_) n += q.size();
  return n;
}

// ---- the fabric boundary ------------------------------------------------------------

tlm::tlm_sync_enum Npu::nic_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::END_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase from NIC");
  Message* m = Message::cast(gp);
  if (m->sender.owner) {
    m->sender.owner->message_left(*m, absolute(delay));
  } else {  // relayed or memory traffic: nobody here waits for its leaving
    m->unref();
  }
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum Npu::nic_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase from NIC");
  Message* m = Message::cast(gp);
  if (delay == sc_core::SC_ZERO_TIME) {
    message_arrived(m);
  } else {
    calendar_.schedule<&Npu::message_arrived>(absolute(delay), this, m);
  }
  return tlm::TLM_COMPLETED;
}

void Npu::Pending::message_left(Message& m, Tick left) {
  // A send ends when its last byte has left: in time order, through the calendar.
  m.unref();
  if (left <= now_ticks()) {
    npu->end_op(this);
  } else {
    npu->calendar_.schedule<&Npu::end_op>(left, npu, this);
  }
}

void Npu::message_arrived(Message* m) {
  if (m->sender.final_rank >= 0 && m->sender.final_rank != rank_) {
    // Passing through: send it on towards its NPU.
    Message* next = new_message(m->sender.final_rank, m->bytes);
    next->tag.user = m->tag.user;
    next->tag.collective = m->tag.collective;
    next->tag.chunk = m->tag.chunk;
    next->tag.step = m->tag.step;
    next->tag.src_rank = m->tag.src_rank;
    next->reduction.dtype = m->reduction.dtype;
    next->reduction.op = m->reduction.op;
    next->memory = m->memory;
    next->data.swap(m->data);
    next->sender.relayed = true;
    ++relayed_;
    m->unref();
    post(next);
    return;
  }
  switch (m->tag.user) {
    case kCollectiveMessage:
      collectives_.on_message(m);
      break;
    case kMemoryMessage: {
      auto it = memory_ops_.find(m->memory.request);
      if (it == memory_ops_.end()) throw std::logic_error(std::string(name()) + ": an answer to no memory request");
      Pending* p = it->second;
      memory_ops_.erase(it);
      const bool error = m->memory.error;
      const std::uint64_t a = m->memory.address, n = m->memory.bytes;
      m->unref();
      if (error) {
        const Directory::MemoryRoute* mem = directory_.memory(rank_);
        std::ostringstream os;
        os << name() << ": " << p->what << ": memory \"" << mem->name << "\" refused the access to [0x" << std::hex << a
           << ", 0x" << a + n << std::dec << ") (" << n << " bytes): outside its " << mem->size
           << "-byte range (TLM_ADDRESS_ERROR_RESPONSE)";
        throw ModelError(os.str());
      }
      end_op(p);
      break;
    }
    case kPointToPointMessage: {
      const P2pKey key{static_cast<int>(m->tag.src_rank), static_cast<std::int64_t>(m->tag.collective)};
      auto it = posted_recvs_.find(key);
      if (it == posted_recvs_.end() || it->second.empty()) {
        unexpected_p2p_[key].push_back(m);
        return;
      }
      Pending* p = it->second.front().second;
      it->second.pop_front();
      if (it->second.empty()) posted_recvs_.erase(it);
      receive_matched(p, m, key.tag);
      break;
    }
    default:
      throw std::logic_error(std::string(name()) + ": message of an unknown class arrived");
  }
}

std::vector<std::string> Npu::describe_unfinished() const {
  std::vector<std::string> out;
  for (const auto& [seq, p] : live_) {
    // Collectives and receives are described below, with what they wait for.
    if (p->type != OpType::kCollective && p->type != OpType::kRecv) out.push_back(p->what);
  }
  for (const auto& [key, q] : posted_recvs_) {
    for (const auto& [bytes, p] : q) out.push_back(p->what + ": no matching send has arrived");
  }
  for (auto& line : collectives_.describe_unfinished()) out.push_back(line);
  return out;
}

}  // namespace fabricsim
