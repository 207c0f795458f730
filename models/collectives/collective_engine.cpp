#include "models/collectives/collective_engine.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "models/collectives/collective_agreement.h"
#include "models/collectives/data_check.h"
#include "tlm/reduction.h"

namespace fabricsim {

const ParamTable<CollectiveConfig>& CollectiveConfig::table() {
  static const auto table =
      ParamTable<CollectiveConfig>("collectives", "how NPUs run collectives: chunking, scheduling, local reduction")
          .add("chunks", Quantity::kCount, &CollectiveConfig::chunks, "pieces each collective is split into, pipelined")
          .range(1, limits::kMaxChunks)
          .add("channels", Quantity::kCount, &CollectiveConfig::channels,
               "NCCL's channels: rings a ring all-reduce, reduce-scatter or all-gather over several nodes runs side "
               "by side, each on its share of every chunk and entering each node at a different NPU, so that they "
               "cross between nodes on different rails; other collectives run in one")
          .range(1, 64)
          .add("active_chunks", Quantity::kCount, &CollectiveConfig::active_chunks,
               "chunks in flight per NPU, all collectives together; 0: no limit")
          .range(0, limits::kMaxChunks)
          .add("chunks_per_stage", Quantity::kCount, &CollectiveConfig::chunks_per_stage,
               "hierarchical collectives: chunks of one collective in one level's reduce-scatter or all-gather at "
               "once on an NPU, so levels overlap chunk by chunk; 0: no limit (levels run one after another)")
          .range(0, limits::kMaxChunks)
          .add("pipeline_chunk", Quantity::kBytes, &CollectiveConfig::pipeline_chunk,
               "hierarchical collectives: most bytes per chunk, so that a large collective has chunks enough to "
               "fill its levels' pipeline; 0: `chunks` only")
          .range(0, static_cast<double>(limits::kMaxBytes))
          .choice("scheduling", &CollectiveConfig::policy, {"fifo", "lifo", "priority"}, "which ready chunk goes next")
          .choice("dimension_order", &CollectiveConfig::dimension_order, {"baseline", "themis"},
                  "hierarchical all-reduce: each chunk's dimensions in ascending order, or in Themis's "
                  "load-balancing order (Rashidi et al., ISCA 2022)")
          .choice("level_data", &CollectiveConfig::level_data, {"part", "whole"},
                  "hierarchical all-reduce: each level works on the part the level below left this NPU "
                  "(reduce-scatter going up, all-gather coming down: NCCL, ASTRA-sim's localBWAware), or "
                  "all-reduces the whole chunk (ASTRA-sim's baseline)")
          .add("direct_window", Quantity::kCount, &CollectiveConfig::direct_window,
               "direct algorithms: peers an NPU sends to, and hears from, per round (ASTRA-sim's directN); "
               "0: all at once")
          .range(0, limits::kMaxCount)
          .add("local_reduction_bandwidth", Quantity::kBandwidth, &CollectiveConfig::local_reduce,
               "rate at which an NPU combines received bytes with its own")
          .zero_unlimited()
          .choice("library", &CollectiveConfig::library, {"best", "nccl"},
                  "the default choice of algorithm, protocol and channels: the fastest the fabric offers (best: "
                  "for exploring designs), or what NCCL's tuner would run (nccl: for predicting a job; "
                  "collectives.nccl gives its version's tables and the job's settings)")
          .choice("protocol", &CollectiveConfig::protocol, {"auto", "simple", "ll", "ll128"},
                  "NCCL's protocol for the steps of ring, tree, direct and halving-doubling collectives: auto picks "
                  "per collective the one its cost model finds fastest")
          .add("probe_margin", Quantity::kNumber, &CollectiveConfig::probe_margin,
               "the default choice: algorithms the cost model estimates within this fraction of its fastest "
               "(0.1: 10%) are each simulated from the same start, in a copy of the simulation, and the fastest "
               "runs; 0: the estimate alone decides (docs/collectives.md, \"Probing\")")
          .range(0, 10)
          .add("launch_simple", Quantity::kDuration, &CollectiveConfig::launch_simple,
               "per collective of a point-to-point algorithm under the Simple protocol: the kernel's start and "
               "setup before its first step (NCCL's base latency); in-switch collectives have none")
          .add("launch_ll", Quantity::kDuration, &CollectiveConfig::launch_ll,
               "the same under the LL protocol; unset: launch_simple")
          .follows("launch_simple")
          .add("launch_ll128", Quantity::kDuration, &CollectiveConfig::launch_ll128,
               "the same under the LL128 protocol; unset: launch_simple")
          .follows("launch_simple");
  return table;
}

const char* to_string(SchedulingPolicy p) {
  switch (p) {
    case SchedulingPolicy::kFifo:
      return "fifo";
    case SchedulingPolicy::kLifo:
      return "lifo";
    case SchedulingPolicy::kPriority:
      return "priority";
  }
  return "?";
}

ProgramPlan plan_of(const CollectiveSpec& spec, const CollectiveConfig& config, InSwitchResolver* in_switch) {
  ProgramPlan plan;
  plan.type = spec.type;
  plan.algorithm = spec.algorithm;
  plan.ranks = &spec.group->ranks;
  plan.root = spec.root;
  plan.bytes = spec.bytes;
  plan.chunks = spec.chunks;
  plan.channels = spec.channels > 0 ? spec.channels : config.channels;
  plan.element = element_bytes(spec.dtype);
  plan.dims = spec.dims;
  plan.sizes = spec.sizes.get();
  plan.in_switch = in_switch;
  plan.themis = config.dimension_order == LevelOrder::kThemis;
  plan.level_data = config.level_data;
  plan.direct_window = config.direct_window;
  if (static_cast<std::uint64_t>(std::max<std::uint32_t>(1, plan.chunks)) * effective_channels(plan) >
      limits::kMaxChunks) {
    throw std::invalid_argument("collectives.chunks (" + std::to_string(plan.chunks) + ") x collectives.channels (" +
                                std::to_string(plan.channels) + ") is more than " + std::to_string(limits::kMaxChunks) +
                                " rings per collective");
  }
  return plan;
}

std::vector<std::unique_ptr<Program>> make_staged_programs(ProgramPlan& plan, int me, const CollectiveConfig& config) {
  auto programs = make_programs(plan, me);  // throws if the algorithm does not apply
  const std::uint32_t stages = programs.empty() ? 1 : programs.front()->stages();
  if (stages > 1 && config.pipeline_chunk > 0) {
    // Enough chunks that the stages overlap (the same on every member: it
    // depends on the size and the platform's settings only).
    const std::uint64_t wanted =
        std::min<std::uint64_t>(limits::kMaxChunks, (plan.bytes + config.pipeline_chunk - 1) / config.pipeline_chunk);
    if (wanted > plan.chunks) {
      plan.chunks = static_cast<std::uint32_t>(wanted);
      programs = make_programs(plan, me);
    }
  }
  return programs;
}

CollectiveEngine::~CollectiveEngine() = default;

void CollectiveEngine::start(const CollectiveSpec& spec, CollectiveOwner* owner) {
  if (!spec.group) throw std::invalid_argument("collective without a group");
  const int me = spec.group->index_of(host_.rank());
  if (me < 0)
    throw std::invalid_argument("NPU " + std::to_string(host_.rank()) + " is not a member of group \"" +
                                spec.group->name + "\"");
  const int n = static_cast<int>(spec.group->ranks.size());
  if (spec.root < 0 || spec.root >= n) {
    throw std::invalid_argument("root " + std::to_string(spec.root) + " is not in the " + std::to_string(n) +
                                "-member group \"" + spec.group->name + "\"");
  }

  auto run = std::make_unique<CollectiveRun>();
  run->engine_ = this;
  run->spec = spec;
  run->me = me;
  run->owner = owner;
  run->started = now_ticks();
  run->order = next_order_++;

  ProgramPlan plan = plan_of(spec, config_, host_.in_switch());
  auto programs = make_staged_programs(plan, me, config_);  // throws if the algorithm does not apply
  run->spec.chunks = plan.chunks;
  const std::uint32_t stages = programs.empty() ? 1 : programs.front()->stages();
  bool limited = false;  // a program that bounds its own chunks in flight runs staged, even in one stage
  for (std::uint32_t s = 0; s < stages && !programs.empty(); ++s) limited |= programs.front()->stage_limit(s) > 0;
  if (stages > 1 || limited) {
    run->stages_.resize(stages);
    run->staged_ = true;
    for (std::uint32_t s = 0; s < stages; ++s) {
      const std::uint32_t own = programs.front()->stage_limit(s);
      std::uint32_t& capacity = run->stages_[s].capacity;
      capacity = stages > 1 ? config_.chunks_per_stage : 0;  // one stage: the chunks are not staged otherwise
      if (own > 0) capacity = capacity == 0 ? own : std::min(capacity, own);
    }
  }
  run->chunks_.resize(programs.size());
  for (std::size_t k = 0; k < programs.size(); ++k) {
    run->chunks_[k].cursor = RoundCursor(std::move(programs[k]));
    run->chunks_[k].run = run.get();
  }
  // The group's sequence number is taken only once the collective is
  // accepted, so a refused one does not shift the matching on this NPU.
  std::uint64_t& next_seq = group_seq_[spec.group->id];
  const std::uint64_t seq = next_seq;
  run->key = (static_cast<std::uint64_t>(spec.group->id) << 40) | seq;
  if (agreement_) agreement_->check(run->key, seq, spec, host_.rank());  // throws when the members disagree
  ++next_seq;
  if (spec.data) init_collective_data(*run);

  if (timeline_) run->timeline_lane = timeline_->open_collective(host_.rank());
  CollectiveRun& r = *run;
  runs_.push_back(std::move(run));
  // Messages that arrived before this NPU reached the collective.
  auto early = unexpected_.find(r.key);
  if (early != unexpected_.end()) {
    std::vector<Message*> waiting;
    waiting.swap(early->second);
    unexpected_.erase(early);
    for (Message* m : waiting) {
      if (m->kind == MessageKind::kPullRequest) {
        serve_read(r, m);  // the data is ready now that the collective has started here
      } else {
        r.early_.emplace(match_key(m->tag.chunk, m->tag.step, m->tag.src_rank), m);
      }
    }
  }
  if (const Tick launch = config_.launch(spec.protocol); launch > 0) {
    r.launching_ = true;
    calendar_.schedule<&CollectiveEngine::on_launched>(now_ticks() + launch, this, &r);
    return;
  }
  schedule_chunks();  // also ends a collective with nothing to do (one rank)
}

void CollectiveEngine::schedule_chunks() {
  if (scheduling_) {
    rescan_ = true;
    return;
  }
  scheduling_ = true;
  do {
    rescan_ = false;
    while (config_.active_chunks == 0 || active_chunks_ < config_.active_chunks) {
      // The collective whose chunk goes next, by policy.
      CollectiveRun* pick = nullptr;
      for (const auto& r : runs_) {
        if (r->next_chunk_ >= r->chunks_.size() || r->launching_) continue;
        if (!pick) {
          pick = r.get();
          continue;
        }
        bool better = false;
        switch (config_.policy) {
          case SchedulingPolicy::kFifo:
            better = r->order < pick->order;
            break;
          case SchedulingPolicy::kLifo:
            better = r->order > pick->order;
            break;
          case SchedulingPolicy::kPriority:
            better = r->spec.priority > pick->spec.priority ||
                     (r->spec.priority == pick->spec.priority && r->order < pick->order);
            break;
        }
        if (better) pick = r.get();
      }
      if (!pick) break;
      const std::uint32_t c = pick->next_chunk_++;
      ++active_chunks_;
      pick->chunks_[c].started = true;
      begin_round(*pick, c);
    }
  } while (rescan_);
  scheduling_ = false;
  finish_done_runs();  // collectives whose last chunk ended meanwhile
}

void CollectiveEngine::finish_done_runs() {
  for (std::size_t i = 0; i < runs_.size();) {
    if (finish_if_done(*runs_[i])) continue;  // erased: the next one moved to i
    ++i;
  }
}

void CollectiveEngine::on_last_send_left(CollectiveRun* r) {
  CollectiveRun& run = *r;
  run.wake_pending_ = false;
  // A run that finished by another path while this wake was pending was
  // kept for it: let it go now.
  for (auto it = finished_waking_.begin(); it != finished_waking_.end(); ++it) {
    if (it->get() == &run) {
      finished_waking_.erase(it);
      return;
    }
  }
  finish_if_done(run);
}

void CollectiveEngine::on_launched(CollectiveRun* run) {
  run->launching_ = false;
  schedule_chunks();  // also ends a collective with nothing to do
}

void CollectiveEngine::on_stage_turn(CollectiveRun::Chunk* chunk) {
  begin_round(*chunk->run, chunk->run->index_of(*chunk));
  if (!scheduling_) finish_done_runs();
}

void CollectiveEngine::on_round_over(CollectiveRun::Chunk* chunk) {
  chunk->cursor.next();
  begin_round(*chunk->run, chunk->run->index_of(*chunk));
  if (!scheduling_) finish_done_runs();
}

void CollectiveEngine::begin_round(CollectiveRun& run, std::uint32_t c) {
  CollectiveRun::Chunk& chunk = run.chunks_[c];
  for (;;) {
    RoundCursor& cursor = chunk.cursor;
    if (cursor.finished()) {
      if (timeline_) end_phase(run, chunk, c);
      leave_stage(run, c);
      chunk.finished = true;
      --active_chunks_;
      ++run.chunks_done_;
      schedule_chunks();
      return;
    }
    if (run.staged_) {
      const std::uint32_t s = cursor.program().stage(cursor.round());
      if (s != chunk.stage && !enter_stage(run, c, s)) return;  // resumed at its turn (kStageTurn)
    }
    const Round& round = cursor.start();
    if (timeline_) {
      const char* phase = cursor.program().phase(cursor.round());
      if (phase != chunk.phase) {
        end_phase(run, chunk, c);
        chunk.phase = phase;
        chunk.phase_start = now_ticks();
      }
    }
    // Point-to-point algorithms: a round that only sends waits for them.
    const bool await_sends = round.recvs.empty() && !round.sends.empty() &&
                             run.spec.algorithm != AlgorithmKind::kInSwitch &&
                             run.spec.algorithm != AlgorithmKind::kHierarchical;
    if (await_sends) {
      chunk.unsent = static_cast<std::uint32_t>(round.sends.size());
      chunk.sends_left = now_ticks();
    }
    for (const Transfer& t : round.sends) {
      Message* m = host_.new_message(t.peer, t.bytes());
      m->tag.user = kCollectiveMessage;
      m->tag.collective = run.key;
      // A collective's messages go through one queue, so its chunks to a
      // peer (or to a switch's reduction unit) leave in order, as a
      // channel's steps do (models/nic/nic.h).
      const auto queue =
          static_cast<std::uint32_t>(run.key ^ (run.key >> 32)) + 1u;  // the group's id and sequence number
      m->queue = queue != 0 ? queue : 1u;                              // 0 means no queue
      m->tag.chunk = c;
      m->tag.step = cursor.tag(t);
      m->sender.owner = &run;  // told when it has left: the run outlives its sends
      m->reduction.dtype = run.spec.dtype;
      m->reduction.op = run.spec.op;
      m->kind = t.kind;
      m->protocol = run.spec.protocol;
      m->reduction.target = t.target;
      m->reduction.group = t.group;
      if (t.kind == MessageKind::kPullRequest) {
        m->reduction.data_offset = t.offset;  // a request carries no data, only where the unit should read
      } else if (run.spec.data && t.bytes() > 0) {
        m->data.resize(t.bytes());
        for (std::uint32_t p = 0; p < t.count; ++p) {
          std::memcpy(m->data.data() + p * t.length, run.data.data() + t.offset + p * t.stride, t.length);
        }
      }
      ++run.sends_outstanding_;
      host_.post(m);
    }
    if (await_sends) {
      if (chunk.unsent > 0) {
        chunk.awaiting_sends = true;  // on_sent schedules the round's end
      } else {
        calendar_.schedule<&CollectiveEngine::on_round_over>(chunk.sends_left, this, &chunk);
      }
      return;
    }
    for (std::size_t i = 0; i < round.recvs.size(); ++i) {
      const Transfer& t = round.recvs[i];
      auto it = run.early_.find(match_key(c, cursor.tag(t), static_cast<std::uint32_t>(t.peer)));
      if (it != run.early_.end()) {
        Message* m = it->second;
        run.early_.erase(it);
        consume(run, chunk, i, m);
      }
    }
    if (cursor.pending() > 0) return;
    if (chunk.reduced_at > now_ticks()) {  // wait for the local reduction
      calendar_.schedule<&CollectiveEngine::on_round_over>(chunk.reduced_at, this, &chunk);
      return;
    }
    cursor.next();
  }
}

bool CollectiveEngine::enter_stage(CollectiveRun& run, std::uint32_t c, std::uint32_t s) {
  leave_stage(run, c);
  CollectiveRun::Stage& stage = run.stages_.at(s);
  const bool room = stage.capacity == 0 || stage.inside < stage.capacity;
  if (stage.next != c || !room) {
    stage.waiting.push_back(c);
    return false;
  }
  ++stage.inside;
  ++stage.next;
  run.chunks_[c].stage = s;
  wake_stage(run, s);  // the chunk after this one may be waiting already
  return true;
}

void CollectiveEngine::leave_stage(CollectiveRun& run, std::uint32_t c) {
  CollectiveRun::Chunk& chunk = run.chunks_[c];
  if (chunk.stage == CollectiveRun::kNoStage) return;
  const std::uint32_t s = chunk.stage;
  --run.stages_[s].inside;
  chunk.stage = CollectiveRun::kNoStage;
  wake_stage(run, s);
}

void CollectiveEngine::wake_stage(CollectiveRun& run, std::uint32_t s) {
  CollectiveRun::Stage& stage = run.stages_[s];
  if (stage.capacity != 0 && stage.inside >= stage.capacity) return;
  auto it = std::find(stage.waiting.begin(), stage.waiting.end(), stage.next);
  if (it == stage.waiting.end()) return;
  stage.waiting.erase(it);
  // Not resumed from in here: the caller is in the middle of another chunk.
  calendar_.schedule<&CollectiveEngine::on_stage_turn>(now_ticks(), this, &run.chunks_[stage.next]);
}

void CollectiveEngine::end_phase(CollectiveRun& run, CollectiveRun::Chunk& chunk, std::uint32_t c) {
  if (chunk.phase && run.timeline_lane >= 0) {
    timeline_->chunk_phase(host_.rank(), run.timeline_lane, c, chunk.phase, chunk.phase_start, now_ticks());
  }
  chunk.phase = nullptr;
}

void CollectiveEngine::consume(CollectiveRun& run, CollectiveRun::Chunk& chunk, std::size_t i, Message* m) {
  const Transfer& t = chunk.cursor.current().recvs[i];
  if (m->bytes != t.bytes()) {
    std::ostringstream os;
    os << to_string(run.spec.type) << " \"" << run.spec.name << "\": NPU " << host_.rank() << " expected " << t.bytes()
       << " bytes from NPU " << t.peer << " but got " << m->bytes;
    throw std::logic_error(os.str());
  }
  if (t.reduce && !config_.local_reduce.is_unlimited()) {
    // Combining the received bytes with ours takes the NPU's local memory
    // bandwidth, one buffer after another.
    reducer_free_ =
        std::max(reducer_free_, now_ticks()) + config_.local_reduce.time_for(static_cast<double>(t.bytes()));
    chunk.reduced_at = std::max(chunk.reduced_at, reducer_free_);
  }
  if (run.spec.data && t.length > 0) {
    for (std::uint32_t p = 0; p < t.count; ++p) {
      std::uint8_t* dst = run.data.data() + t.offset + p * t.stride;
      const std::uint8_t* src = m->data.data() + p * t.length;
      if (t.reduce) {
        reduce_into(dst, src, t.length, run.spec.dtype, run.spec.op);
      } else {
        std::memcpy(dst, src, t.length);
      }
    }
  }
  chunk.cursor.arrive(i);
  m->unref();
}

void CollectiveEngine::on_message(Message* m) {
  CollectiveRun* run = find(m->tag.collective);
  if (!run) {
    unexpected_[m->tag.collective].push_back(m);
    return;
  }
  if (m->kind == MessageKind::kPullRequest) {
    serve_read(*run, m);
    return;
  }
  receive(*run, m);
}

void CollectiveEngine::serve_read(CollectiveRun& run, Message* request) {
  // A switch reduction unit reads a range of this NPU's buffer (NVLS
  // multimem.ld_reduce): the memory system answers, no software involved.
  Message* m = host_.new_message(static_cast<int>(request->tag.src_rank), request->bytes);
  m->tag.user = kCollectiveMessage;
  m->tag.collective = request->tag.collective;
  m->tag.chunk = request->tag.chunk;
  m->tag.step = request->tag.step;
  m->kind = MessageKind::kReduce;
  m->reduction.target = request->reduction.target;
  m->reduction.group = request->reduction.group;
  m->reduction.slot_base = request->reduction.slot_base;
  m->hardware = true;
  m->reduction.dtype = run.spec.dtype;
  m->reduction.op = run.spec.op;
  m->sender.owner = &run;
  if (run.spec.data) {
    const auto first = run.data.begin() + static_cast<std::ptrdiff_t>(request->reduction.data_offset);
    m->data.assign(first, first + static_cast<std::ptrdiff_t>(request->bytes));
  }
  ++run.sends_outstanding_;
  request->unref();
  host_.post(m);
}

void CollectiveEngine::receive(CollectiveRun& run, Message* m) {
  const std::uint32_t c = m->tag.chunk;
  if (c >= run.chunks_.size()) throw std::logic_error("collective message for a chunk that does not exist");
  CollectiveRun::Chunk& chunk = run.chunks_[c];
  const int i = chunk.cursor.receive_for(m->tag.step, m->tag.src_rank);
  if (i >= 0) {
    consume(run, chunk, static_cast<std::size_t>(i), m);
    if (chunk.cursor.pending() == 0) {
      if (chunk.reduced_at > now_ticks()) {  // wait for the local reduction
        calendar_.schedule<&CollectiveEngine::on_round_over>(chunk.reduced_at, this, &chunk);
        return;
      }
      chunk.cursor.next();
      begin_round(run, c);  // may end the collective: `run` is not used after this
    }
    return;
  }
  if (!run.early_.emplace(match_key(c, m->tag.step, m->tag.src_rank), m).second) {
    throw std::logic_error("two collective messages with the same chunk, tag and sender");
  }
}

void CollectiveRun::message_left(Message& m, Tick left) {
  engine_->on_sent(*this, &m, left);
}

void CollectiveEngine::on_sent(CollectiveRun& run, Message* m, Tick left) {
  --run.sends_outstanding_;
  run.last_send_left_ = std::max(run.last_send_left_, left);
  // Counted against the chunk's send-only round: its own messages, or one
  // of the round before still leaving (its receives came in first), which
  // then ends the round a little early rather than never.
  if (m->tag.chunk < run.chunks_.size()) {
    CollectiveRun::Chunk& chunk = run.chunks_[m->tag.chunk];
    if (chunk.unsent > 0) {
      chunk.sends_left = std::max(chunk.sends_left, left);
      if (--chunk.unsent == 0 && chunk.awaiting_sends) {
        chunk.awaiting_sends = false;
        calendar_.schedule<&CollectiveEngine::on_round_over>(chunk.sends_left, this, &chunk);
      }
    }
  }
  m->unref();
  finish_if_done(run);
}

bool CollectiveEngine::finish_if_done(CollectiveRun& run) {
  if (!run.done()) return false;
  if (run.last_send_left_ > now_ticks()) {  // the last bytes are still leaving
    if (!run.wake_pending_) {
      run.wake_pending_ = true;
      calendar_.schedule<&CollectiveEngine::on_last_send_left>(run.last_send_left_, this, &run);
    }
    return false;
  }
  run.finished = now_ticks();
  if (run.spec.data) check_collective_data(run);
  auto it = std::find_if(runs_.begin(), runs_.end(), [&run](const auto& r) { return r.get() == &run; });
  std::unique_ptr<CollectiveRun> owned = std::move(*it);
  runs_.erase(it);
  host_.collective_done(*owned);
  if (owned->wake_pending_) finished_waking_.push_back(std::move(owned));  // its wake still refers to it
  return true;
}

std::vector<std::string> CollectiveEngine::describe_unfinished() const {
  std::vector<std::string> out;
  for (const auto& run : runs_) {
    std::ostringstream os;
    os << to_string(run->spec.type) << " \"" << run->spec.name << "\" (node " << run->spec.node_id << ", "
       << run->spec.bytes << " bytes, " << to_string(run->spec.algorithm) << ", group " << run->spec.group->name
       << "): " << run->chunks_done_ << "/" << run->chunks_.size() << " chunks done";
    for (std::size_t c = 0; c < run->chunks_.size(); ++c) {
      const auto& ch = run->chunks_[c];
      if (!ch.started || ch.finished) continue;
      const auto& recvs = ch.cursor.current().recvs;
      for (std::size_t i = 0; ch.cursor.started() && i < recvs.size(); ++i) {
        if (ch.cursor.waiting(i)) {
          os << "; chunk " << c << " round " << ch.cursor.round() << " waits for ";
          if (recvs[i].peer == kReductionUnitPeer) {
            os << "a switch reduction unit";
          } else {
            os << "NPU " << recvs[i].peer;
          }
          break;
        }
      }
      break;
    }
    if (run->sends_outstanding_) os << "; " << run->sends_outstanding_ << " send(s) not yet left";
    out.push_back(os.str());
  }
  for (const auto& [key, msgs] : unexpected_) {
    if (msgs.empty()) continue;
    std::ostringstream os;
    const std::uint32_t from = msgs.front()->tag.src_rank;
    os << msgs.size() << " message(s) from "
       << (from >= kFromReductionUnit ? std::string("a switch reduction unit") : "NPU " + std::to_string(from))
       << " for a collective this NPU never started (group " << (key >> 40) << ", sequence "
       << (key & ((1ull << 40) - 1)) << ")";
    out.push_back(os.str());
  }
  return out;
}

}  // namespace fabricsim
