// A switch's reduction unit: the in-network aggregation engine that NVLink
// SHARP (NVLS) and InfiniBand SHARP put inside a switch.
//
// It hangs off one port of its switch (`in` from the switch, `out` into it)
// and has a fabric address of its own. What it does with a frame depends on
// its message's kind:
//   kReduce        a contribution. Frame k of every contribution to one
//                  operation (same group, collective, chunk and step) meets in
//                  aggregation slot (operation, k); when the group's last
//                  contribution is combined, the result goes to every member
//                  (reduce_target -1), to one member, or up to the unit above
//                  (multi-level trees, SHARP-style).
//   kPullRequest   NVLS multimem.ld_reduce: a member asks for the reduction of
//                  a range. Frame k takes slot (operation, k) and the unit
//                  sends a one-frame read request to every member; their
//                  answers are kReduce contributions, and the result goes back
//                  to the asking member.
//   kMulticast     data for every member (multimem.st, all-gather, broadcast):
//                  passed up to the root of the group's tree, which sends a
//                  copy to every member (kMulticastDown through lower units).
//   kResult        a result coming down from the unit above: copied to the
//                  members below.
// Copies leave through the switch's crossbar, so one frame in becomes copies
// on the members' ports.
//
// Timing, kept apart from function:
// - The ALU has `streams` inputs and combines that many contributions in one
//   pass; `throughput` is its input bytes per second with every stream busy,
//   so a pass over a frame takes bytes x streams / throughput however many
//   of its streams are used (a slot of n > streams contributions takes
//   further passes of the partial result and streams - 1 more). Passes go
//   one after another; a slot is done when the ALU has passed its
//   contributions and their tails have arrived. The result leaves `latency`
//   after the last contribution is done.
// - `slots` aggregation slots and `buffer_bytes` of accumulator memory. A
//   slot is taken by the first contribution (or the pull request) of a frame
//   and freed when every copy of its result has left the switch. A frame that
//   needs a slot when none is free waits in its switch input buffer, which
//   backs up the link behind it (backpressure through the fabric; nothing is
//   dropped). Frames of operations that already hold a slot pass it. Read
//   requests wait in the unit instead (a virtual channel of their own).
// - A frame to copy takes room in a separate `multicast_buffer_bytes` (the
//   crossbar's replication buffer) until its last copy has left; it waits in
//   its switch input buffer while there is none. Kept apart from the slots'
//   memory so that copies, which always drain, never hold up reductions.
//
// Data mode: a slot keeps each contribution and combines them, when the last
// has arrived, in a fixed order whatever the arrival order: a left fold over
// the local members in group order, then the units below in address order
// (tlm/reduction.h rounds fp16/bf16 once per step).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <list>
#include <string>
#include <systemc>
#include <unordered_map>
#include <vector>

#include "models/switch/aggregation.h"
#include "models/switch/reduction_unit_params.h"
#include "tlm/fabric_protocol.h"
#include "tlm/kernel/calendar.h"
#include "tlm/kernel/parameters.h"
#include "tlm/timeline_sink.h"

namespace fabricsim {

/// Bit for (op, type) in ReductionUnit::Params::supported.
constexpr std::uint32_t reduction_bit(ReduceOp op, DataType type) {
  return 1u << (static_cast<unsigned>(op) * 4 + static_cast<unsigned>(type));
}
/// NVSwitch gen 3 (NVLS): sum, min, max on int32, fp16 and bf16; sum only on fp32.
constexpr std::uint32_t kNvlsReductions =
    reduction_bit(ReduceOp::kSum, DataType::kFp32) | reduction_bit(ReduceOp::kSum, DataType::kFp16) |
    reduction_bit(ReduceOp::kSum, DataType::kBf16) | reduction_bit(ReduceOp::kSum, DataType::kInt32) |
    reduction_bit(ReduceOp::kMin, DataType::kFp16) | reduction_bit(ReduceOp::kMin, DataType::kBf16) |
    reduction_bit(ReduceOp::kMin, DataType::kInt32) | reduction_bit(ReduceOp::kMax, DataType::kFp16) |
    reduction_bit(ReduceOp::kMax, DataType::kBf16) | reduction_bit(ReduceOp::kMax, DataType::kInt32);
/// "sum fp32, max bf16" style list of a mask.
std::string describe_reductions(std::uint32_t mask);

class ReductionUnit : public sc_core::sc_module {
 public:
  using Params = ReductionUnitParams;  // models/switch/reduction_unit_params.h

  struct Stats {
    std::uint64_t operations = 0;     // slots completed
    std::uint64_t bytes_reduced = 0;  // contribution bytes through the ALU
    std::uint64_t result_bytes = 0;   // result and multicast bytes sent (all copies)
    std::uint64_t copies = 0;         // frames sent
    unsigned peak_slots = 0;
    std::uint64_t peak_buffer_bytes = 0;
    std::uint64_t peak_multicast_buffer_bytes = 0;
    std::uint64_t frames_waited = 0;  // frames that found no free slot
    Tick wait_time = 0;               // their total wait
    Tick alu_busy = 0;
  };

  FrameTargetSocket<ReductionUnit> in;      // frames for this unit, from its switch
  FrameInitiatorSocket<ReductionUnit> out;  // results and copies, into its switch
  /// An external ALU (reduction_alu.h), optional: bound, it is handed each
  /// slot when its last contribution is in, with when each arrived, combines
  /// them in place of the throughput model, and says when the result is out.
  tlm_utils::simple_initiator_socket_optional<ReductionUnit> alu;

  ReductionUnit(const sc_core::sc_module_name& name, const Params& params, AggregationManager& manager);
  ~ReductionUnit() override;

  const Params& params() const { return params_; }
  const Stats& stats() const { return stats_; }
  Address address() const { return params_.address; }
  unsigned slots_in_use() const { return static_cast<unsigned>(slots_.size()); }
  /// Reports slot and buffer occupancy to a timeline as unit `id`.
  void set_timeline(TimelineSink* timeline, int id) {
    timeline_ = timeline;
    timeline_id_ = id;
  }
  /// What is held here, for reports on a stuck simulation (empty if nothing).
  std::vector<std::string> describe_unfinished() const;

 private:
  /// One operation of one group: a reduction, or one member's multicast
  /// (`origin`: its rank; kNoOrigin for reductions, which all members share).
  struct OpKey {
    std::uint64_t group, collective;
    std::uint32_t chunk, step, origin;
    bool operator==(const OpKey& o) const {
      return group == o.group && collective == o.collective && chunk == o.chunk && step == o.step && origin == o.origin;
    }
  };
  static constexpr std::uint32_t kNoOrigin = 0xffffffffu;
  struct SlotKey {
    OpKey op;
    std::uint32_t frame;
    bool operator==(const SlotKey& o) const { return op == o.op && frame == o.frame; }
  };
  struct Hash {
    std::size_t operator()(const OpKey& k) const;
    std::size_t operator()(const SlotKey& k) const { return (*this)(k.op) * 31 + k.frame; }
  };
  struct Holder;  // what copies in flight belong to: a slot, or a frame being fanned out
  struct Slot;
  struct Fanout;
  struct Waiting {
    Frame* frame;
    Tick since;
    bool buffer_freed;  // a read request: it waits here, not in the fabric
  };

  tlm::tlm_sync_enum in_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum out_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  // The calendar's events: a frame's head is here; a slot's result is
  // ready; a slot's or a multicast's last copy has left.
  void arrive(Frame* f);
  /// Handles a frame that needs a slot; false if it must wait for one.
  bool try_slot_frame(Frame* f, bool buffer_freed = false);
  void contribute(Slot& slot, Frame* f);
  // Whether the slot's contribution number i (from 0, in arrival order)
  // begins an ALU pass: the first pass takes `streams` of them, each further
  // pass the partial result and `streams` - 1 more.
  bool starts_pass(unsigned i) const {
    const unsigned k = params_.streams;
    return i == 0 || k == 1 || (i >= k && (i - k) % (k - 1) == 0);
  }
  void emit(Slot* slot);
  void compute_externally(Slot* slot);
  void free_slot(Slot* slot);
  /// Copies a frame to its destinations; false if the buffer has no room.
  bool try_fan_out(Frame* f);
  void free_fanout(Fanout* fan);
  void admit_waiting();
  /// A frame copy into the switch, for `dst`, part of the message `m`.
  void send_copy(const SlotKey& key, Message* m, std::uint32_t index, std::uint64_t offset, std::uint64_t bytes,
                 std::uint64_t wire_bytes, Tick head, Tick tail, Holder* holder);
  void copy_left(Holder* holder, Tick when);
  void all_sent(Holder* holder);
  void finish_if_left(Holder* holder);
  Message* result_message(const SlotKey& key, const Message& like, MessageKind kind, std::uint32_t src_rank,
                          std::uint64_t bytes, std::uint32_t frames);
  /// This frame of an incoming message is done with: free its buffer at
  /// `when` (unless that was done already).
  void release(Frame* f, Tick when, bool buffer_freed = false);
  void end_request(Frame* f, Tick when);
  const AggregationManager::Plan& plan_of(const Message& m);
  void check_supported(const Message& m) const;
  static OpKey op_of(const Message& m);

  void occupancy_changed() {
    if (timeline_)
      timeline_->unit_occupancy(timeline_id_, now_ticks(), slots_in_use(), buffer_used_ + copy_buffer_used_);
  }

  ForwardPath<FrameProtocol> to_switch_{out};
  BackwardPath<FrameProtocol> release_to_switch_{in};  // END_REQ: a frame's buffer space is free
  Params params_;
  AggregationManager& manager_;
  Calendar& calendar_;
  TimelineSink* timeline_ = nullptr;
  int timeline_id_ = -1;
  Stats stats_;
  std::unordered_map<SlotKey, Slot*, Hash> slots_;
  std::unordered_map<SlotKey, Message*, Hash> results_;  // result message per (operation, destination)
  // Frames waiting for room, in arrival order. Most wait for a slot no one
  // has opened yet (read requests of a large pulled reduction can number
  // thousands), so a scan stops once nothing behind it can be admitted: the
  // counts below say when.
  std::list<Waiting> waiting_;
  std::unordered_map<SlotKey, std::uint32_t, Hash> waiting_per_slot_;  // waiting slot frames by slot key
  std::uint64_t waiting_with_slot_ = 0;  // of those, frames whose slot is open (admitted at the next scan)
  std::uint64_t waiting_fanouts_ = 0;    // waiting multicast and result frames
  std::uint64_t buffer_used_ = 0;
  std::uint64_t copy_buffer_used_ = 0;
  Tick alu_free_ = 0;
  std::vector<std::uint8_t> alu_result_;
};

}  // namespace fabricsim
