#include "models/switch/reduction_unit.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "models/switch/reduction_alu.h"
#include "tlm/reduction.h"
#include "tlm/util/errors.h"

namespace fabricsim {

const ParamTable<ReductionUnit::Params>& ReductionUnit::Params::table() {
  static const auto table =
      ParamTable<ReductionUnitParams>("reduction_unit",
                                      "a switch's in-network reduction unit (SHARP/NVLS-style): slots that "
                                      "combine contributions and send or multicast the result")
          .add("throughput", Quantity::kBandwidth, &ReductionUnitParams::throughput,
               "input bytes combined per second, all streams busy")
          .legacy("throughput_GBps", 1e9, "GB/s")
          .add("streams", Quantity::kCount, &ReductionUnitParams::streams, "contributions combined in one pass")
          .range(1, 1 << 16)
          .add("latency", Quantity::kDuration, &ReductionUnitParams::latency,
               "last contribution combined to result out")
          .legacy("latency_ns", 1e3, "ns")
          .add("slots", Quantity::kCount, &ReductionUnitParams::slots,
               "aggregation slots (packets being combined at once)")
          .range(1, 1 << 20)
          .add("buffer", Quantity::kBytes, &ReductionUnitParams::buffer_bytes,
               "accumulator memory, shared by the slots")
          .range(1, static_cast<double>(limits::kMaxBytes))
          .legacy("buffer_bytes", 1, "bytes")
          .add("multicast_buffer", Quantity::kBytes, &ReductionUnitParams::multicast_buffer_bytes,
               "room for frames being copied to several ports")
          .range(1, static_cast<double>(limits::kMaxBytes))
          .legacy("multicast_buffer_bytes", 1, "bytes")
          .follows("buffer");
  return table;
}

std::string describe_reductions(std::uint32_t mask) {
  std::string out;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
    std::string types;
    for (DataType t : {DataType::kFp32, DataType::kFp16, DataType::kBf16, DataType::kInt32}) {
      if (mask & reduction_bit(op, t)) types += std::string(types.empty() ? "" : "/") + to_string(t);
    }
    if (!types.empty()) out += std::string(out.empty() ? "" : ", ") + to_string(op) + " on " + types;
  }
  return out.empty() ? "nothing" : out;
}

struct ReductionUnit::Holder : FrameOwner {
  explicit Holder(ReductionUnit& u) : unit(u) {}
  /// A copy has left the switch: counted against this holder.
  void frame_left(Frame&, Tick left) override { unit.copy_left(this, left); }
  ReductionUnit& unit;
  bool is_slot = false;
  bool sending = true;      // copies are still being made (the switch may report some left meanwhile)
  unsigned copies_out = 0;  // copies handed to the switch that have not left yet
  Tick last_left = 0;
};

/// An aggregation slot: frame `key.frame` of one reduction.
struct ReductionUnit::Slot final : Holder {
  using Holder::Holder;
  SlotKey key;
  const AggregationManager::Plan* plan = nullptr;
  Message* like = nullptr;  // a message of the operation, for the result's fields (kept referenced)
  bool pull = false;
  std::uint64_t offset = 0;  // the frame's place in the result message
  std::uint64_t bytes = 0;
  std::uint64_t wire_bytes = 0;
  std::uint64_t message_bytes = 0;
  std::uint32_t frames = 0;
  unsigned arrived = 0;
  std::vector<bool> seen;                        // by position in the plan
  std::vector<std::vector<std::uint8_t>> parts;  // data mode, by position
  std::vector<Tick> first_byte, last_byte;       // external ALU: when each contribution came in, by position
  Tick ready = 0;
  bool emitted = false;
  bool computed = false;             // an external ALU has produced `result`
  std::vector<std::uint8_t> result;  // data mode
};

/// A frame being copied to several destinations: its bytes stay in the
/// unit's buffer until every copy has left.
struct ReductionUnit::Fanout final : Holder {
  using Holder::Holder;
  std::uint64_t bytes = 0;
};

std::size_t ReductionUnit::Hash::operator()(const OpKey& k) const {
  std::uint64_t h = k.group * 0x9e3779b97f4a7c15ull;
  h ^= k.collective + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
  h ^= (static_cast<std::uint64_t>(k.chunk) << 32 | k.step) + (h << 6) + (h >> 2);
  h ^= k.origin + (h << 6) + (h >> 2);
  return static_cast<std::size_t>(h);
}

ReductionUnit::OpKey ReductionUnit::op_of(const Message& m) {
  const bool multicast = m.kind == MessageKind::kMulticast || m.kind == MessageKind::kMulticastDown;
  return OpKey{m.reduction.group, m.tag.collective, m.tag.chunk, m.tag.step, multicast ? m.tag.src_rank : kNoOrigin};
}

ReductionUnit::ReductionUnit(const sc_core::sc_module_name& name, const Params& params, AggregationManager& manager)
    : sc_core::sc_module(name),
      in("in"),
      out("out"),
      alu("alu"),
      params_(params),
      manager_(manager),
      calendar_(Calendar::instance()) {
  if (params_.slots == 0)
    throw std::invalid_argument(std::string(this->name()) + ": a reduction unit needs at least one slot");
  if (params_.streams == 0)
    throw std::invalid_argument(std::string(this->name()) + ": an ALU needs at least one stream");
  if (params_.mtu_bytes == 0) throw std::invalid_argument(std::string(this->name()) + ": mtu_bytes must be > 0");
  in.register_nb_transport_fw<&ReductionUnit::in_fw>(this, 0);
  out.register_nb_transport_bw<&ReductionUnit::out_bw>(this, 0);
}

ReductionUnit::~ReductionUnit() {
  for (auto& [key, slot] : slots_) delete slot;
}

tlm::tlm_sync_enum ReductionUnit::in_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                        sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on in");
  Frame* f = Frame::cast(gp);
  // Handled in time order, when its head arrives.
  calendar_.schedule<&ReductionUnit::arrive>(absolute(delay), this, f);
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum ReductionUnit::out_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                         sc_core::sc_time& delay) {
  if (phase != tlm::END_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on out");
  Frame* c = Frame::cast(gp);
  if (c->owner) c->owner->frame_left(*c, absolute(delay));
  return tlm::TLM_ACCEPTED;
}

const AggregationManager::Plan& ReductionUnit::plan_of(const Message& m) {
  return manager_.plan(m.reduction.group, params_.address);
}

void ReductionUnit::check_supported(const Message& m) const {
  if (params_.supported & reduction_bit(m.reduction.op, m.reduction.dtype)) return;
  throw ModelError(std::string(name()) + ": this switch's reduction unit does not support " +
                   to_string(m.reduction.op) + " on " + to_string(m.reduction.dtype) + " (it supports " +
                   describe_reductions(params_.supported) + ")");
}

void ReductionUnit::arrive(Frame* f) {
  switch (f->msg->kind) {
    case MessageKind::kReduce:
    case MessageKind::kPullRequest:
      if (!try_slot_frame(f)) {
        // A contribution waits in its switch input buffer, which backs up
        // the fabric behind it. A read request travels on a virtual channel
        // of its own (as NVLink's requests do): it waits in the unit's
        // request queue and frees its buffer now.
        const bool request = f->msg->kind == MessageKind::kPullRequest;
        if (request) end_request(f, now_ticks());
        waiting_.push_back(Waiting{f, now_ticks(), request});
        ++waiting_per_slot_[SlotKey{op_of(*f->msg), f->msg->reduction.slot_base + f->index}];
        ++stats_.frames_waited;
      }
      return;
    case MessageKind::kMulticast:
    case MessageKind::kMulticastDown:
    case MessageKind::kResult:
      if (!try_fan_out(f)) {  // waits in its switch input buffer for room in the unit's
        waiting_.push_back(Waiting{f, now_ticks(), false});
        ++waiting_fanouts_;
        ++stats_.frames_waited;
      }
      return;
    case MessageKind::kUnicast:
      break;
  }
  throw std::logic_error(std::string(name()) + ": a plain message addressed to a reduction unit");
}

bool ReductionUnit::try_slot_frame(Frame* f, bool buffer_freed) {
  Message& m = *f->msg;
  const SlotKey key{op_of(m), m.reduction.slot_base + f->index};
  auto it = slots_.find(key);
  if (it == slots_.end()) {
    if (m.hardware) throw std::logic_error(std::string(name()) + ": an answer to a read request this unit never made");
    if (slots_.size() >= params_.slots || buffer_used_ + f->bytes > params_.buffer_bytes) {
      if (slots_.empty()) {
        throw ModelError(std::string(name()) + ": a " + std::to_string(f->bytes) + "-byte frame does not fit the " +
                         std::to_string(params_.buffer_bytes) + "-byte buffer of the reduction unit");
      }
      return false;
    }
    check_supported(m);
    auto* slot = new Slot(*this);
    slot->is_slot = true;
    slot->key = key;
    slot->plan = &plan_of(m);
    slot->like = &m;
    m.ref();
    slot->pull = m.kind == MessageKind::kPullRequest;
    slot->offset = f->offset;
    slot->bytes = f->bytes;
    slot->message_bytes = m.bytes;
    slot->frames = m.nic.frames_total;
    if (slot->pull && !manager_.single_level(m.reduction.group)) {
      throw ModelError(std::string(name()) + ": pull (NVLS-style) reductions need every member on the same switches");
    }
    slot->seen.assign(slot->plan->expected(), false);
    slot->parts.resize(slot->plan->expected());
    if (alu.size() > 0) {
      slot->first_byte.assign(slot->plan->expected(), 0);
      slot->last_byte.assign(slot->plan->expected(), 0);
    }
    it = slots_.emplace(key, slot).first;
    if (auto w = waiting_per_slot_.find(key); w != waiting_per_slot_.end()) waiting_with_slot_ += w->second;
    buffer_used_ += f->bytes;
    stats_.peak_slots = std::max(stats_.peak_slots, static_cast<unsigned>(slots_.size()));
    stats_.peak_buffer_bytes = std::max(stats_.peak_buffer_bytes, buffer_used_);
    occupancy_changed();
  }
  Slot& slot = *it->second;
  if (m.kind == MessageKind::kPullRequest) {
    // Read the range from every member (their memory systems answer): one
    // one-frame request per slot and member.
    OpKey read = key.op;
    read.origin = key.frame;
    for (Address member : slot.plan->local) {
      const SlotKey rkey{read, member};
      Message* r = result_message(rkey, m, MessageKind::kPullRequest, params_.peer_id, f->bytes, 1);
      r->reduction.data_offset = m.reduction.data_offset + f->offset;
      r->reduction.slot_base = key.frame;
      const Tick out = now_ticks() + params_.latency;
      send_copy(rkey, r, 0, 0, f->bytes, f->wire_bytes, out, std::max(out, f->tail + params_.latency), nullptr);
    }
    release(f, std::max(now_ticks(), f->tail), buffer_freed);
    return true;
  }
  contribute(slot, f);
  return true;
}

void ReductionUnit::contribute(Slot& slot, Frame* f) {
  Message& m = *f->msg;
  const auto pos = slot.plan->position.find(m.src);
  if (pos == slot.plan->position.end()) {
    throw std::logic_error(std::string(name()) + ": a contribution from address " + std::to_string(m.src) +
                           ", which is not below this unit in the group's tree");
  }
  const auto p = static_cast<std::size_t>(pos->second);
  if (slot.seen[p]) throw std::logic_error(std::string(name()) + ": two contributions from one member to one slot");
  slot.seen[p] = true;
  ++slot.arrived;
  // A contribution that starts an ALU pass books the pass (all its
  // streams' time, see the header); the slot is done when its passes are
  // and every tail is in. (An external ALU is
  // handed the slot once all are in, with when each arrived: see
  // compute_externally.)
  Tick done = f->tail;
  if (alu.size() > 0) {
    slot.first_byte[p] = now_ticks();
    slot.last_byte[p] = f->tail;
  } else if (starts_pass(slot.arrived - 1)) {
    const Tick start = std::max(alu_free_, now_ticks());
    const Tick work = params_.throughput.time_for(static_cast<double>(f->bytes) * params_.streams);
    alu_free_ = start + work;
    stats_.alu_busy += work;
    done = std::max(alu_free_, f->tail);
  }
  stats_.bytes_reduced += f->bytes;
  slot.ready = std::max(slot.ready, done);
  slot.wire_bytes = f->wire_bytes;
  if (!m.data.empty()) {
    const auto first = m.data.begin() + static_cast<std::ptrdiff_t>(f->offset);
    slot.parts[p].assign(first, first + static_cast<std::ptrdiff_t>(f->bytes));
  }
  release(f, done);
  if (slot.arrived == slot.seen.size()) {
    // Decided when the last contribution is in; the result leaves a pipeline
    // latency later (handed to the crossbar that far ahead).
    calendar_.schedule<&ReductionUnit::emit>(slot.ready, this, &slot);
  }
}

void ReductionUnit::compute_externally(Slot* slot) {
  // The external ALU keeps its own busy time and may have begun on the
  // contributions as they came in; the result leaves when it says the slot
  // is done.
  const Message& like = *slot->like;
  const bool data = !slot->parts.empty() && !slot->parts.front().empty();
  ReductionCommand cmd;
  cmd.op = like.reduction.op;
  cmd.dtype = like.reduction.dtype;
  cmd.count = slot->parts.size();
  cmd.bytes = slot->bytes;
  for (const auto& p : slot->parts) cmd.parts.push_back(data ? p.data() : nullptr);
  cmd.first_byte = slot->first_byte;
  cmd.last_byte = slot->last_byte;
  cmd.what = std::string(name()) + ", frame " + std::to_string(slot->key.frame) + " of collective " +
             std::to_string(slot->key.op.collective >> 40) + "/" +
             std::to_string(slot->key.op.collective & ((1ull << 40) - 1)) + " chunk " +
             std::to_string(slot->key.op.chunk) + " step " + std::to_string(slot->key.op.step);
  if (data) slot->result.resize(slot->bytes);
  tlm::tlm_generic_payload gp;
  gp.set_command(tlm::TLM_WRITE_COMMAND);
  gp.set_address(0);
  gp.set_data_ptr(data ? slot->result.data() : nullptr);
  gp.set_data_length(static_cast<unsigned>(slot->bytes));
  gp.set_streaming_width(static_cast<unsigned>(slot->bytes));
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  // The command lives on this stack: it must leave the payload however the
  // call ends, or the payload's destructor would free it (a throwing ALU,
  // such as the RTL's result check, would then corrupt the heap).
  struct Attached {
    tlm::tlm_generic_payload& gp;
    ReductionCommand* cmd;
    ~Attached() { gp.clear_extension(cmd); }
  } attached{gp, &cmd};
  gp.set_extension(&cmd);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  alu->b_transport(gp, delay);
  if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
    throw ModelError(std::string(name()) + ": its ALU refused " + cmd.what);
  }
  const Tick done = absolute(delay);
  // Busy from when it could begin (its first contribution in, or its
  // previous slot done) to the end.
  const Tick begun = std::max(alu_free_, *std::min_element(slot->first_byte.begin(), slot->first_byte.end()));
  stats_.alu_busy += done - std::min(done, begun);
  alu_free_ = done;
  slot->computed = true;
  calendar_.schedule<&ReductionUnit::emit>(done, this, slot);
}

void ReductionUnit::emit(Slot* slot) {
  if (alu.size() > 0 && !slot->computed) {
    compute_externally(slot);
    return;
  }
  slot->emitted = true;
  ++stats_.operations;
  const Message& like = *slot->like;
  const AggregationManager::Plan& plan = *slot->plan;
  // The combination, in a fixed order (see the header).
  std::vector<std::uint8_t> result = std::move(slot->result);
  if (!slot->computed && !slot->parts.empty() && !slot->parts.front().empty()) {
    result = slot->parts.front();
    for (std::size_t i = 1; i < slot->parts.size(); ++i) {
      if (slot->parts[i].size() != result.size()) {
        throw std::logic_error(std::string(name()) + ": contributions of different sizes");
      }
      reduce_into(result.data(), slot->parts[i].data(), result.size(), like.reduction.dtype, like.reduction.op);
    }
  }
  struct Dest {
    Address address;
    MessageKind kind;
  };
  std::vector<Dest> dests;
  if (!slot->pull && plan.parent != kNoAddress) {
    dests.push_back({plan.parent, MessageKind::kReduce});  // a partial result, up the tree
  } else if (like.reduction.target < 0) {
    for (Address a : plan.local) dests.push_back({a, MessageKind::kResult});
    for (Address a : plan.children) dests.push_back({a, MessageKind::kResult});
  } else {
    const auto& members = manager_.members(like.reduction.group);
    dests.push_back({members.at(static_cast<std::size_t>(like.reduction.target)), MessageKind::kResult});
  }
  const Tick out = now_ticks() + params_.latency;
  for (const Dest& d : dests) {
    const SlotKey rkey{slot->key.op, d.address};
    const std::uint32_t src_rank = d.kind == MessageKind::kReduce ? like.tag.src_rank : kFromReductionUnit;
    Message* r = result_message(rkey, like, d.kind, src_rank, slot->message_bytes, slot->frames);
    if (!result.empty()) {
      r->data.resize(r->bytes);
      std::copy(result.begin(), result.end(), r->data.begin() + static_cast<std::ptrdiff_t>(slot->offset));
    }
    send_copy(rkey, r, slot->key.frame, slot->offset, slot->bytes, slot->wire_bytes, out, out, slot);
  }
  for (auto& part : slot->parts) std::vector<std::uint8_t>().swap(part);
  all_sent(slot);
}

bool ReductionUnit::try_fan_out(Frame* f) {
  Message& m = *f->msg;
  if (copy_buffer_used_ + f->bytes > params_.multicast_buffer_bytes) {
    if (copy_buffer_used_ == 0) {
      throw ModelError(std::string(name()) + ": a " + std::to_string(f->bytes) + "-byte frame does not fit the " +
                       std::to_string(params_.multicast_buffer_bytes) + "-byte multicast buffer of the reduction unit");
    }
    return false;
  }
  copy_buffer_used_ += f->bytes;
  stats_.peak_multicast_buffer_bytes = std::max(stats_.peak_multicast_buffer_bytes, copy_buffer_used_);
  occupancy_changed();
  const AggregationManager::Plan& plan = plan_of(m);
  std::vector<std::pair<Address, MessageKind>> dests;
  if (m.kind == MessageKind::kMulticast && plan.parent != kNoAddress) {
    dests.emplace_back(plan.parent, MessageKind::kMulticast);  // up to the root first
  } else {
    const MessageKind down = m.kind == MessageKind::kResult ? MessageKind::kResult : MessageKind::kMulticastDown;
    for (Address a : plan.local) dests.emplace_back(a, down);
    for (Address a : plan.children) dests.emplace_back(a, down);
  }
  auto* fan = new Fanout(*this);
  fan->bytes = f->bytes;
  const std::uint32_t src_rank = m.kind == MessageKind::kResult ? kFromReductionUnit : m.tag.src_rank;
  const Tick now = now_ticks();
  for (const auto& [address, kind] : dests) {
    const SlotKey rkey{op_of(m), address};
    Message* r = result_message(rkey, m, kind, src_rank, m.bytes, m.nic.frames_total);
    if (!m.data.empty()) {
      r->data.resize(r->bytes);
      std::copy_n(m.data.begin() + static_cast<std::ptrdiff_t>(f->offset), f->bytes,
                  r->data.begin() + static_cast<std::ptrdiff_t>(f->offset));
    }
    // Cut-through: copies start a pipeline latency after the frame's head.
    send_copy(rkey, r, f->index, f->offset, f->bytes, f->wire_bytes, now + params_.latency,
              std::max(now, f->tail) + params_.latency, fan);
  }
  // In the unit's buffer now: the switch input is free once the tail is in.
  release(f, std::max(now, f->tail));
  all_sent(fan);
  return true;
}

Message* ReductionUnit::result_message(const SlotKey& key, const Message& like, MessageKind kind,
                                       std::uint32_t src_rank, std::uint64_t bytes, std::uint32_t frames) {
  auto it = results_.find(key);
  if (it != results_.end()) return it->second;
  Message* r = Message::allocate();
  r->ref();  // one reference for this unit until its last frame is out, one for the receiver
  r->src = params_.address;
  r->dst = static_cast<Address>(key.frame);
  r->bytes = bytes;
  r->kind = kind;
  r->flow = static_cast<std::uint32_t>(Hash()(key));
  r->tag.user = like.tag.user;
  r->tag.collective = like.tag.collective;
  r->tag.chunk = like.tag.chunk;
  r->tag.step = like.tag.step;
  r->tag.src_rank = src_rank;
  r->reduction.group = like.reduction.group;
  r->reduction.target = like.reduction.target;
  r->reduction.dtype = like.reduction.dtype;
  r->reduction.op = like.reduction.op;
  r->nic.frames_total = frames;
  r->nic.posted_at = now_ticks();
  results_.emplace(key, r);
  return r;
}

void ReductionUnit::send_copy(const SlotKey& key, Message* m, std::uint32_t index, std::uint64_t offset,
                              std::uint64_t bytes, std::uint64_t wire_bytes, Tick head, Tick tail, Holder* holder) {
  Frame* c = Frame::allocate();
  c->msg = m;
  c->src = params_.address;
  c->dst = m->dst;
  c->flow = m->flow;
  c->index = index;
  c->offset = offset;
  c->bytes = bytes;
  c->wire_bytes = wire_bytes;
  c->last = index + 1 == m->nic.frames_total;
  c->request = m->kind == MessageKind::kPullRequest;
  c->head = head;
  c->tail = std::max(head, tail);
  c->owner = holder;
  if (holder) ++holder->copies_out;
  ++stats_.copies;
  if (m->kind != MessageKind::kPullRequest) stats_.result_bytes += bytes;
  if (++m->nic.frames_sent == m->nic.frames_total) {
    results_.erase(key);
    m->unref();  // ours; the receiver keeps its own
  }
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = delay_until(head);
  if (to_switch_(c->payload(), phase, delay) == tlm::TLM_UPDATED && holder) {
    copy_left(holder, absolute(delay));
  }
}

void ReductionUnit::copy_left(Holder* holder, Tick when) {
  holder->last_left = std::max(holder->last_left, when);
  --holder->copies_out;
  if (!holder->sending) finish_if_left(holder);
}

void ReductionUnit::all_sent(Holder* holder) {
  holder->sending = false;
  finish_if_left(holder);
}

void ReductionUnit::finish_if_left(Holder* holder) {
  if (holder->copies_out > 0) return;
  if (holder->is_slot) {
    auto* slot = static_cast<Slot*>(holder);
    if (slot->last_left > now_ticks()) {
      calendar_.schedule<&ReductionUnit::free_slot>(slot->last_left, this, slot);
    } else {
      free_slot(slot);
    }
    return;
  }
  auto* fan = static_cast<Fanout*>(holder);
  if (fan->last_left > now_ticks()) {
    calendar_.schedule<&ReductionUnit::free_fanout>(fan->last_left, this, fan);
  } else {
    free_fanout(fan);
  }
}

void ReductionUnit::free_fanout(Fanout* fan) {
  copy_buffer_used_ -= fan->bytes;
  delete fan;
  occupancy_changed();
  admit_waiting();
}

void ReductionUnit::end_request(Frame* f, Tick when) {
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_core::sc_time delay = delay_until(std::max(when, now_ticks()));
  release_to_switch_(f->payload(), phase, delay);
}

void ReductionUnit::release(Frame* f, Tick when, bool buffer_freed) {
  Message* m = f->msg;
  if (!buffer_freed) end_request(f, when);
  if (++m->nic.frames_received == m->nic.frames_total) m->unref();  // every frame of it is done with here
  f->release();
}

void ReductionUnit::free_slot(Slot* slot) {
  if (auto w = waiting_per_slot_.find(slot->key); w != waiting_per_slot_.end()) waiting_with_slot_ -= w->second;
  buffer_used_ -= slot->bytes;
  slots_.erase(slot->key);
  slot->like->unref();
  delete slot;
  occupancy_changed();
  admit_waiting();
}

void ReductionUnit::admit_waiting() {
  // First come, first served within each resource: once a frame finds no
  // room, later ones that need the same resource wait behind it; a frame
  // whose slot is open (another member's contribution opened it) goes in.
  bool slots_blocked = false, copies_blocked = false;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    // Frames behind this one are admitted only if their slot is open or
    // their resource has room: stop when neither can be true.
    if (slots_blocked && waiting_with_slot_ == 0 && (copies_blocked || waiting_fanouts_ == 0)) break;
    Frame* f = it->frame;
    const MessageKind kind = f->msg->kind;
    const bool fans_out = kind != MessageKind::kReduce && kind != MessageKind::kPullRequest;
    const SlotKey key{op_of(*f->msg), f->msg->reduction.slot_base + f->index};
    const bool has_slot = !fans_out && slots_.count(key) > 0;
    if (fans_out ? copies_blocked : (!has_slot && slots_blocked)) {
      ++it;
      continue;
    }
    const Tick since = it->since;
    if (fans_out ? try_fan_out(f) : try_slot_frame(f, it->buffer_freed)) {
      stats_.wait_time += now_ticks() - since;
      if (fans_out) {
        --waiting_fanouts_;
      } else {
        auto w = waiting_per_slot_.find(key);
        if (--w->second == 0) waiting_per_slot_.erase(w);
        --waiting_with_slot_;  // its slot is open now, if it was not before
      }
      it = waiting_.erase(it);
    } else {
      (fans_out ? copies_blocked : slots_blocked) = true;
      ++it;
    }
  }
}

std::vector<std::string> ReductionUnit::describe_unfinished() const {
  std::vector<std::string> out;
  std::size_t shown = 0;
  for (const auto& [key, slot] : slots_) {
    if (slot->emitted || ++shown > 4) continue;
    std::ostringstream os;
    os << name() << ": slot for frame " << key.frame << " of collective " << (key.op.collective >> 40) << "/"
       << (key.op.collective & ((1ull << 40) - 1)) << " chunk " << key.op.chunk << " step " << key.op.step << " has "
       << slot->arrived << " of " << slot->seen.size() << " contributions";
    out.push_back(os.str());
  }
  if (!waiting_.empty()) {
    out.push_back(std::string(name()) + ": " + std::to_string(waiting_.size()) + " frame(s) wait for one of its " +
                  std::to_string(params_.slots) + " slots (" + std::to_string(slots_.size()) + " in use, " +
                  std::to_string(buffer_used_) + " of " + std::to_string(params_.buffer_bytes) + " buffer bytes)");
  }
  return out;
}

}  // namespace fabricsim
