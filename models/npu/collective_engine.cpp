#include "models/npu/collective_engine.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "models/npu/data_check.h"
#include "tlm/reduction.h"

namespace fabricsim {

CollectiveEngine::~CollectiveEngine() = default;

void CollectiveEngine::start(const CollectiveSpec& spec, void* owner) {
  if (!spec.group) throw std::invalid_argument("collective without a group");
  const int me = spec.group->index_of(host_.rank());
  if (me < 0) throw std::invalid_argument("NPU is not a member of the collective's group");
  const int n = static_cast<int>(spec.group->ranks.size());

  auto run = std::make_unique<CollectiveRun>();
  run->spec = spec;
  run->me = me;
  run->owner = owner;
  run->started = now_ticks();
  const std::uint64_t seq = group_seq_[spec.group->id]++;
  run->key = (static_cast<std::uint64_t>(spec.group->id) << 40) | seq;

  const std::uint32_t chunks = std::max<std::uint32_t>(1, spec.chunks);
  const unsigned elem = element_bytes(spec.dtype);
  run->chunks_.resize(chunks);
  for (std::uint32_t c = 0; c < chunks; ++c) {
    ProgramSpec ps;
    ps.type = spec.type;
    ps.algorithm = spec.algorithm;
    ps.ranks = &spec.group->ranks;
    ps.me = me;
    ps.root = spec.root;
    ps.segments = chunk_segments(spec.type, spec.bytes, n, c, chunks, elem);
    run->chunks_[c].program = make_program(ps);  // throws if the algorithm does not apply
  }
  if (spec.data) init_collective_data(*run);

  CollectiveRun& r = *run;
  runs_.push_back(std::move(run));
  ++started_;

  // Messages that arrived before this NPU reached the collective.
  auto early = unexpected_.find(r.key);
  std::vector<Message*> waiting;
  if (early != unexpected_.end()) {
    waiting.swap(early->second);
    unexpected_.erase(early);
  }
  for (Message* m : waiting) r.early_.emplace(match_key(m->tag_chunk, m->tag_step, m->tag_src_rank), m);
  start_chunks(r);
  finish_if_done(r);  // a collective with nothing to do (one rank) ends at once
}

void CollectiveEngine::start_chunks(CollectiveRun& run) {
  const std::uint32_t limit =
      run.spec.active_chunks == 0 ? static_cast<std::uint32_t>(run.chunks_.size()) : run.spec.active_chunks;
  while (run.next_chunk_ < run.chunks_.size() && run.active_ < limit) {
    const std::uint32_t c = run.next_chunk_++;
    ++run.active_;
    run.chunks_[c].started = true;
    run.chunks_[c].round = 0;
    begin_round(run, c);
  }
}

void CollectiveEngine::begin_round(CollectiveRun& run, std::uint32_t c) {
  CollectiveRun::Chunk& chunk = run.chunks_[c];
  for (;;) {
    if (chunk.round >= chunk.program->num_rounds()) {
      chunk.finished = true;
      --run.active_;
      ++run.chunks_done_;
      start_chunks(run);
      return;
    }
    chunk.program->round(chunk.round, chunk.current);
    for (const Transfer& t : chunk.current.sends) {
      Message* m = host_.new_message(t.peer, t.length);
      m->tag_user = kCollectiveMessage;
      m->tag_collective = run.key;
      m->tag_chunk = c;
      m->tag_step = chunk.round;
      m->tag_src_rank = static_cast<std::uint32_t>(host_.rank());
      m->sender_context = &run;  // for on_sent: the run outlives its sends
      m->dtype = run.spec.dtype;
      m->op = run.spec.op;
      if (run.spec.data) m->data.assign(run.data.begin() + static_cast<std::ptrdiff_t>(t.offset),
                                        run.data.begin() + static_cast<std::ptrdiff_t>(t.offset + t.length));
      ++run.sends_outstanding_;
      host_.post(m);
    }
    chunk.pending = static_cast<std::uint32_t>(chunk.current.recvs.size());
    chunk.got.assign(chunk.current.recvs.size(), false);
    for (std::size_t i = 0; i < chunk.current.recvs.size(); ++i) {
      const Transfer& t = chunk.current.recvs[i];
      auto it = run.early_.find(match_key(c, chunk.round, static_cast<std::uint32_t>(t.peer)));
      if (it != run.early_.end()) {
        Message* m = it->second;
        run.early_.erase(it);
        consume(run, chunk, i, m);
      }
    }
    if (chunk.pending > 0) return;
    ++chunk.round;
  }
}

void CollectiveEngine::consume(CollectiveRun& run, CollectiveRun::Chunk& chunk, std::size_t i, Message* m) {
  const Transfer& t = chunk.current.recvs[i];
  if (m->bytes != t.length) {
    std::ostringstream os;
    os << "collective " << run.spec.name << ": NPU " << host_.rank() << " expected " << t.length
       << " bytes from NPU " << t.peer << " but got " << m->bytes;
    throw std::logic_error(os.str());
  }
  if (run.spec.data) {
    std::uint8_t* dst = run.data.data() + t.offset;
    if (t.reduce) {
      reduce_into(dst, m->data.data(), t.length, run.spec.dtype, run.spec.op);
    } else {
      std::copy(m->data.begin(), m->data.end(), dst);
    }
  }
  chunk.got[i] = true;
  --chunk.pending;
  m->unref();
}

void CollectiveEngine::on_message(Message* m) {
  CollectiveRun* run = find(m->tag_collective);
  if (!run) {
    unexpected_[m->tag_collective].push_back(m);
    return;
  }
  receive(*run, m);
}

void CollectiveEngine::receive(CollectiveRun& run, Message* m) {
  const std::uint32_t c = m->tag_chunk;
  if (c >= run.chunks_.size()) throw std::logic_error("collective message for a chunk that does not exist");
  CollectiveRun::Chunk& chunk = run.chunks_[c];
  if (chunk.started && !chunk.finished && chunk.round == m->tag_step) {
    const auto& recvs = chunk.current.recvs;
    for (std::size_t i = 0; i < recvs.size(); ++i) {
      if (!chunk.got[i] && static_cast<std::uint32_t>(recvs[i].peer) == m->tag_src_rank) {
        consume(run, chunk, i, m);
        if (chunk.pending == 0) {
          ++chunk.round;
          begin_round(run, c);
          finish_if_done(run);
        }
        return;
      }
    }
  }
  run.early_.emplace(match_key(c, m->tag_step, m->tag_src_rank), m);
}

void CollectiveEngine::on_sent(Message* m, Tick left) {
  CollectiveRun& run = *static_cast<CollectiveRun*>(m->sender_context);
  --run.sends_outstanding_;
  run.last_send_left_ = std::max(run.last_send_left_, left);
  m->unref();
  finish_if_done(run);
}

void CollectiveEngine::wake(std::uint64_t key) {
  CollectiveRun* run = find(key);
  if (!run) return;
  run->wake_pending_ = false;
  finish_if_done(*run);
}

void CollectiveEngine::finish_if_done(CollectiveRun& run) {
  if (!run.done()) return;
  if (run.last_send_left_ > now_ticks()) {  // the last bytes are still leaving
    if (!run.wake_pending_) {
      run.wake_pending_ = true;
      host_.wake_at(run.last_send_left_, run.key);
    }
    return;
  }
  run.finished = now_ticks();
  if (run.spec.data) check_collective_data(run);
  auto it = std::find_if(runs_.begin(), runs_.end(), [&run](const auto& r) { return r.get() == &run; });
  std::unique_ptr<CollectiveRun> owned = std::move(*it);
  runs_.erase(it);
  host_.collective_done(*owned);
}

std::vector<std::string> CollectiveEngine::describe_unfinished() const {
  std::vector<std::string> out;
  for (const auto& run : runs_) {
    std::ostringstream os;
    os << to_string(run->spec.type) << " \"" << run->spec.name << "\" (node " << run->spec.node_id << ", "
       << run->spec.bytes << " bytes, group " << run->spec.group->name << "): " << run->chunks_done_ << "/"
       << run->chunks_.size() << " chunks done";
    for (std::size_t c = 0; c < run->chunks_.size(); ++c) {
      const auto& ch = run->chunks_[c];
      if (!ch.started || ch.finished) continue;
      for (std::size_t i = 0; i < ch.current.recvs.size(); ++i) {
        if (!ch.got[i]) {
          os << "; chunk " << c << " round " << ch.round << " waits for NPU " << ch.current.recvs[i].peer;
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
    os << msgs.size() << " message(s) from NPU " << msgs.front()->tag_src_rank
       << " for a collective this NPU never started (group " << (key >> 40) << ", sequence "
       << (key & ((1ull << 40) - 1)) << ")";
    out.push_back(os.str());
  }
  return out;
}

}  // namespace fabricsim
