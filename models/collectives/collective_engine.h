// An NPU's collective engine: what NCCL is to a GPU. It turns each collective
// into chunks, each chunk into the rounds of its algorithm's program, and
// each round into messages to peers (a round that only sends ends when they
// have left, a round with receives when they are in); it matches arriving messages to the
// rounds that wait for them (messages may arrive before their round, or
// before this NPU has even started the collective) and reports the
// collective done when every chunk has finished and every send has left.
//
// Chunks in flight are limited per NPU (`active_chunks`, shared by all the
// collectives running); when a slot frees, the scheduling policy picks which
// collective's next chunk takes it: the oldest (FIFO), the newest (LIFO) or
// the one with the highest comm_priority.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/collectives/collective.h"
#include "models/collectives/collective_config.h"
#include "models/collectives/round_cursor.h"
#include "tlm/fabric_protocol.h"
#include "tlm/kernel/calendar.h"
#include "tlm/kernel/parameters.h"
#include "tlm/timeline_sink.h"

namespace fabricsim {

/// One collective as the workload asks for it.
struct CollectiveSpec {
  CollectiveType type = CollectiveType::kAllReduce;
  std::uint64_t bytes = 0;
  const Group* group = nullptr;
  int root = 0;  // index in the group
  AlgorithmKind algorithm = AlgorithmKind::kRing;
  /// Its steps' protocol (kPlain for in-switch and hierarchical ones).
  CommProtocol protocol = CommProtocol::kPlain;
  std::uint32_t chunks = 1;
  /// A ring's channels over several nodes (effective_channels); 0: the
  /// platform's collectives.channels.
  std::uint32_t channels = 0;
  /// What the platform's library chose, for reports: NCCL's algorithm
  /// (NcclAlgorithm's value; 0xff: not NCCL's choice) and protocol (0 LL,
  /// 1 LL128, 2 Simple).
  std::uint8_t nccl_algorithm = 0xff;
  std::uint8_t nccl_protocol = 0;
  int priority = 0;
  DataType dtype = DataType::kFp32;
  ReduceOp op = ReduceOp::kSum;
  bool data = false;
  const std::vector<Dimension>* dims = nullptr;
  /// all-to-all-v: bytes from group index i to j; `bytes` is then n times the
  /// largest entry (the buffer layout).
  std::shared_ptr<const std::vector<std::vector<std::uint64_t>>> sizes;
  std::uint64_t node_id = 0;
  std::string name;
};

/// The plan every member's engine runs a collective by; throws
/// std::invalid_argument past limits::kMaxChunks rings.
ProgramPlan plan_of(const CollectiveSpec& spec, const CollectiveConfig& config, InSwitchResolver* in_switch);
/// Member `me`'s programs for the plan, with the plan's chunks raised where
/// its stages should overlap (CollectiveConfig::pipeline_chunk). Throws
/// std::invalid_argument when the algorithm does not apply.
std::vector<std::unique_ptr<Program>> make_staged_programs(ProgramPlan& plan, int me, const CollectiveConfig& config);

/// Whoever started a collective on an NPU, handed back with the run when it
/// ends: an object of the host's, of a class derived from this empty one.
struct CollectiveOwner {};

/// A collective in progress on one NPU.
class CollectiveEngine;

class CollectiveRun final : public MessageOwner {
  // What a message leaving touches, first: one cache line at 1,000 NPUs.
  friend class CollectiveEngine;
  CollectiveEngine* engine_ = nullptr;
  std::uint64_t sends_outstanding_ = 0;
  Tick last_send_left_ = 0;

 public:
  /// One of its messages has left this NPU (the engine keeps the time: no event).
  void message_left(Message& m, Tick left) override;

  std::uint64_t key = 0;  // (group id, sequence number in the group): the same on every member
  CollectiveSpec spec;
  int me = 0;  // my index in the group
  Tick started = 0;
  Tick finished = 0;
  CollectiveOwner* owner = nullptr;
  std::uint64_t order = 0;         // start order on this NPU, for scheduling
  std::vector<std::uint8_t> data;  // working buffer in data mode
  std::string data_error;          // first mismatch found by the data check
  int timeline_lane = -1;          // recorded on a timeline: its lane there

  bool done() const { return !launching_ && chunks_done_ == chunks_.size() && sends_outstanding_ == 0; }

 private:
  static constexpr std::uint32_t kNoStage = 0xffffffffu;
  struct Chunk {
    RoundCursor cursor;            // its program, and its round by the rules of round_cursor.h
    CollectiveRun* run = nullptr;  // whose chunk it is, for the calendar's events
    bool started = false;
    bool finished = false;
    /// A round that only sends (a binomial tree's or a chain's sender) ends
    /// when its sends have left, as a GPU's step ends when its data is out:
    /// sends of the round still leaving, and when the last one leaves.
    bool awaiting_sends = false;
    std::uint32_t unsent = 0;
    Tick sends_left = 0;
    std::uint32_t stage = kNoStage;  // staged programs: the stage it holds a place in (in the bools' padding)
    Tick reduced_at = 0;             // local reduction of this round's data done
    const char* phase = nullptr;     // timeline: the algorithm phase running, since phase_start
    Tick phase_start = 0;
  };
  std::vector<Chunk> chunks_;  // sized once, when the run is made: events point into it
  std::uint32_t index_of(const Chunk& c) const { return static_cast<std::uint32_t>(&c - chunks_.data()); }
  std::uint32_t next_chunk_ = 0;
  std::size_t chunks_done_ = 0;
  bool wake_pending_ = false;
  bool staged_ = false;                                // its programs have stages (stages_ below is not empty)
  bool launching_ = false;                             // its launch latency has not passed yet: no chunk starts
  std::unordered_map<std::uint64_t, Message*> early_;  // arrived before their round
  /// Staged programs: per stage, chunks in it and the next chunk to enter
  /// (chunks enter every stage in chunk order, so that no two members can
  /// admit different chunks and wait on each other), and who waits. Last:
  /// the fields above are on every message's path.
  struct Stage {
    std::uint32_t inside = 0;
    std::uint32_t next = 0;
    std::uint32_t capacity =
        0;  // chunks at once: chunks_per_stage or the program's stage_limit(), the lower; 0: no limit
    std::vector<std::uint32_t> waiting;  // chunk indices
  };
  std::vector<Stage> stages_;
};

class CollectiveAgreement;

class CollectiveEngine {
 public:
  /// What the engine needs from its NPU.
  class Host {
   public:
    virtual int rank() const = 0;
    /// A message to `peer` of `bytes`, addressed and ready to tag.
    virtual Message* new_message(int peer, std::uint64_t bytes) = 0;
    virtual void post(Message* m) = 0;
    virtual void collective_done(CollectiveRun& run) = 0;
    /// The platform's switch reduction units, for in-switch algorithms
    /// (nullptr: none).
    virtual InSwitchResolver* in_switch() { return nullptr; }

   protected:
    ~Host() = default;
  };

  CollectiveEngine(Host& host, const CollectiveConfig& config) : host_(host), config_(config) {}
  ~CollectiveEngine();

  /// Starts a collective; throws std::invalid_argument when the algorithm
  /// does not apply to it. Host::collective_done() reports the end (at once,
  /// from inside this call, when there is nothing to do).
  void start(const CollectiveSpec& spec, CollectiveOwner* owner);
  void on_message(Message* m);
  /// A message of ours has left its NIC at `left` (which may be later than
  /// now: END_REQ is annotated, and no event is spent waiting for it).
  void on_sent(CollectiveRun& run, Message* m, Tick left);

  std::size_t in_flight() const { return runs_.size(); }
  /// Checks every collective against the other members' calls (null: not
  /// checked; models/collectives/collective_agreement.h).
  void set_agreement(CollectiveAgreement* agreement) { agreement_ = agreement; }
  /// The key the next collective this NPU starts in group `group_id` gets:
  /// (group id << 40) | its sequence in the group, the same on every member.
  std::uint64_t next_key(std::uint32_t group_id) const {
    const auto it = group_seq_.find(group_id);
    return (static_cast<std::uint64_t>(group_id) << 40) | (it == group_seq_.end() ? 0 : it->second);
  }
  /// Records collectives and their chunks' phases (null: not recorded).
  void set_timeline(TimelineSink* timeline) { timeline_ = timeline; }
  /// One line per collective that has not finished, for stuck reports.
  std::vector<std::string> describe_unfinished() const;

 private:
  void schedule_chunks();
  void begin_round(CollectiveRun& run, std::uint32_t c);
  void receive(CollectiveRun& run, Message* m);
  void consume(CollectiveRun& run, CollectiveRun::Chunk& chunk, std::size_t recv, Message* m);
  /// Answers a switch reduction unit's read request with this NPU's bytes.
  void serve_read(CollectiveRun& run, Message* request);
  /// Ends the collective if it is done; true when it was (and is gone).
  bool finish_if_done(CollectiveRun& run);
  void finish_done_runs();
  // The calendar's events.
  void on_launched(CollectiveRun* run);             // its launch latency has passed
  void on_last_send_left(CollectiveRun* run);       // its last send has left
  void on_stage_turn(CollectiveRun::Chunk* chunk);  // the chunk's turn to enter the stage it waits for
  /// The chunk's round is over: its send-only round's sends have left, or
  /// the data it received has been reduced.
  void on_round_over(CollectiveRun::Chunk* chunk);
  static std::uint64_t match_key(std::uint32_t chunk, std::uint32_t tag, std::uint32_t src) {
    return (static_cast<std::uint64_t>(chunk) << 48) | (static_cast<std::uint64_t>(tag & 0xffffff) << 24) | src;
  }
  CollectiveRun* find(std::uint64_t key) const {
    for (const auto& r : runs_) {
      if (r->key == key) return r.get();
    }
    return nullptr;
  }

  void end_phase(CollectiveRun& run, CollectiveRun::Chunk& chunk, std::uint32_t c);
  /// Staged programs: moves chunk c into stage s (leaving its old one);
  /// false when it must wait for its turn.
  bool enter_stage(CollectiveRun& run, std::uint32_t c, std::uint32_t s);
  void leave_stage(CollectiveRun& run, std::uint32_t c);
  /// Schedules the turn of the stage's next chunk if it waits and has room.
  void wake_stage(CollectiveRun& run, std::uint32_t s);

  Host& host_;
  const CollectiveConfig& config_;
  Calendar& calendar_ = Calendar::instance();
  TimelineSink* timeline_ = nullptr;
  CollectiveAgreement* agreement_ = nullptr;
  // Few collectives run at once: a flat list beats a hash table here.
  std::vector<std::unique_ptr<CollectiveRun>> runs_;
  std::unordered_map<std::uint64_t, std::vector<Message*>> unexpected_;  // for collectives not started here yet
  std::vector<std::unique_ptr<CollectiveRun>> finished_waking_;          // done, with a wake-up still pending
  std::unordered_map<std::uint32_t, std::uint64_t> group_seq_;
  std::uint32_t active_chunks_ = 0;
  Tick reducer_free_ = 0;  // the NPU's local reduction, one buffer at a time
  std::uint64_t next_order_ = 0;
  bool scheduling_ = false;
  bool rescan_ = false;
};

/// Message classes an NPU tells apart on arrival (Message::tag.user).
enum MessageClass : std::uint32_t { kCollectiveMessage = 1, kPointToPointMessage = 2, kMemoryMessage = 3 };

}  // namespace fabricsim
