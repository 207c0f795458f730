#include "models/collectives/program_executor.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

#include "models/collectives/round_cursor.h"

namespace fabricsim {

IdealReductionUnits::IdealReductionUnits(std::vector<std::uint64_t> weights, bool pull, std::uint64_t pipeline_bytes,
                                         std::uint32_t pipeline_depth) {
  plan_.group = 1;
  for (std::size_t s = 0; s < weights.size(); ++s) plan_.units.push_back(-1 - static_cast<int>(s));
  plan_.weights = std::move(weights);
  plan_.pull = pull;
  plan_.pipeline_bytes = pipeline_bytes;
  plan_.pipeline_depth = pipeline_depth;
}

InSwitchPlan IdealReductionUnits::in_switch_plan(const std::vector<int>&, int) {
  return plan_;
}

namespace {

constexpr std::uint32_t kUnit = kFromReductionUnit;

struct Payload {
  std::uint64_t bytes = 0;
  std::vector<std::uint8_t> data;  // empty without data
  std::string from;                // for messages: "member 2 round 3"
};

/// A reduction some unit is combining: its contributions so far.
struct Reduction {
  std::uint64_t bytes = 0;
  std::vector<std::uint8_t> sum;
  std::set<int> contributors;
  int target = -1;
};

/// dst member, program (chunk tag), tag, sender
using MailKey = std::tuple<int, std::uint32_t, std::uint32_t, std::uint32_t>;

void add_into(std::uint8_t* dst, const std::uint8_t* src, std::uint64_t length) {
  std::uint64_t i = 0;
  for (; i + 4 <= length; i += 4) {
    std::uint32_t a = 0, b = 0;
    std::memcpy(&a, dst + i, 4);
    std::memcpy(&b, src + i, 4);
    a += b;
    std::memcpy(dst + i, &a, 4);
  }
  for (; i < length; ++i) dst[i] = static_cast<std::uint8_t>(dst[i] + src[i]);
}

class Executor {
 public:
  Executor(const std::vector<int>& ranks, const ProgramsOf& programs_of, std::string name,
           std::vector<std::vector<std::uint8_t>>& buffers)
      : ranks_(ranks), name_(std::move(name)), buffers_(buffers), n_(static_cast<int>(ranks.size())) {
    for (int m = 0; m < n_; ++m) member_of_[ranks_[static_cast<std::size_t>(m)]] = m;
    if (!buffers_.empty() && static_cast<int>(buffers_.size()) != n_) {
      throw std::invalid_argument("one buffer per member, or none");
    }
    for (int m = 0; m < n_; ++m) {
      auto& cursors = states_.emplace_back();
      for (auto& program : programs_of(m)) cursors.emplace_back(std::move(program));
    }
  }

  ExecutionStats run() {
    for (bool progress = true; progress;) {
      progress = false;
      for (int m = 0; m < n_; ++m) {
        for (std::size_t k = 0; k < states_[static_cast<std::size_t>(m)].size(); ++k) progress |= advance(m, k);
      }
    }
    for (int m = 0; m < n_; ++m) {
      for (std::size_t k = 0; k < states_[static_cast<std::size_t>(m)].size(); ++k) {
        const RoundCursor& cursor = states_[static_cast<std::size_t>(m)][k];
        if (cursor.finished()) continue;
        std::ostringstream os;
        os << where(m, k, cursor.round()) << " of " << cursor.program().num_rounds() << " cannot finish: it waits for";
        for (std::size_t i = 0; i < cursor.current().recvs.size(); ++i) {
          if (cursor.waiting(i)) os << " " << describe(cursor.current().recvs[i], cursor.round());
        }
        throw std::logic_error(os.str());
      }
    }
    if (!mail_.empty()) {
      const auto& [key, payload] = *mail_.begin();
      std::ostringstream os;
      os << mail_.size() << " message(s) no receive took; the first: " << payload.from << " to member "
         << std::get<0>(key) << ", chunk " << std::get<1>(key) << ", tag " << std::get<2>(key) << ", from "
         << sender_name(std::get<3>(key)) << ", " << payload.bytes << " bytes";
      throw std::logic_error(os.str());
    }
    if (!reductions_.empty()) {
      const auto& [key, r] = *reductions_.begin();
      std::ostringstream os;
      os << "a reduction (chunk " << key.first << ", tag " << key.second << ") got " << r.contributors.size() << " of "
         << n_ << " contributions";
      throw std::logic_error(os.str());
    }
    return stats_;
  }

 private:
  bool data() const { return !buffers_.empty(); }

  std::string where(int m, std::size_t k, std::uint32_t round) const {
    std::ostringstream os;
    os << name_ << " over " << n_ << ": member " << m << " (rank " << ranks_[static_cast<std::size_t>(m)] << "), chunk "
       << k << ", round " << round;
    return os.str();
  }
  static std::string sender_name(std::uint32_t src) {
    return src == kUnit ? std::string("a reduction unit") : "rank " + std::to_string(src);
  }
  std::string describe(const Transfer& t, std::uint32_t round) const {
    std::ostringstream os;
    os << "[" << t.bytes() << " bytes at " << t.offset << " from " << sender_name(static_cast<std::uint32_t>(t.peer))
       << ", tag " << RoundCursor::tag_in(t, round) << "]";
    return os.str();
  }

  void check_range(int m, std::size_t k, std::uint32_t round, const Transfer& t) const {
    if (!data() || t.bytes() == 0) return;
    const std::uint64_t end = t.offset + (t.count - 1) * t.stride + t.length;
    if (end > buffers_[static_cast<std::size_t>(m)].size()) {
      throw std::logic_error(where(m, k, round) + ": transfer " + describe(t, round) + " ends at byte " +
                             std::to_string(end) + ", past the buffer's " +
                             std::to_string(buffers_[static_cast<std::size_t>(m)].size()));
    }
  }

  std::vector<std::uint8_t> gather(int m, const Transfer& t) const {
    std::vector<std::uint8_t> out;
    if (!data()) return out;
    out.resize(t.bytes());
    const auto& buf = buffers_[static_cast<std::size_t>(m)];
    for (std::uint32_t p = 0; p < t.count; ++p) {
      if (t.length) std::memcpy(out.data() + p * t.length, buf.data() + t.offset + p * t.stride, t.length);
    }
    return out;
  }

  void deliver(int dst, std::size_t k, std::uint32_t tag, std::uint32_t src, Payload payload) {
    const MailKey key{dst, static_cast<std::uint32_t>(k), tag, src};
    if (mail_.count(key)) {
      throw std::logic_error("two messages one receive could take: " + mail_[key].from + " and " + payload.from +
                             ", both to member " + std::to_string(dst) + ", chunk " + std::to_string(k) + ", tag " +
                             std::to_string(tag) + ", from " + sender_name(src));
    }
    mail_.emplace(key, std::move(payload));
  }

  void post(int m, std::size_t k, std::uint32_t round, const Transfer& t) {
    check_range(m, k, round, t);
    const std::uint32_t tag = RoundCursor::tag_in(t, round);
    const int my_rank = ranks_[static_cast<std::size_t>(m)];
    const std::string from = where(m, k, round);
    stats_.bytes_sent += t.bytes();
    switch (t.kind) {
      case MessageKind::kUnicast: {
        auto it = member_of_.find(t.peer);
        if (it == member_of_.end())
          throw std::logic_error(from + ": a send to rank " + std::to_string(t.peer) + ", not a member");
        deliver(it->second, k, tag, static_cast<std::uint32_t>(my_rank), Payload{t.bytes(), gather(m, t), from});
        return;
      }
      case MessageKind::kMulticast: {
        const Payload p{t.bytes(), gather(m, t), from};
        for (int j = 0; j < n_; ++j) deliver(j, k, tag, static_cast<std::uint32_t>(my_rank), p);
        return;
      }
      case MessageKind::kReduce: {
        ++stats_.unit_messages;
        Reduction& r = reductions_[{static_cast<std::uint32_t>(k), tag}];
        if (r.contributors.empty()) {
          r.bytes = t.bytes();
          r.target = t.target;
          r.sum = gather(m, t);
        } else {
          if (r.bytes != t.bytes() || r.target != t.target) {
            throw std::logic_error(from + ": a contribution of " + std::to_string(t.bytes()) + " bytes for member " +
                                   std::to_string(t.target) + " to a reduction of " + std::to_string(r.bytes) +
                                   " bytes for member " + std::to_string(r.target));
          }
          if (data()) add_into(r.sum.data(), gather(m, t).data(), t.bytes());
        }
        if (!r.contributors.insert(m).second) throw std::logic_error(from + ": a second contribution to one reduction");
        if (static_cast<int>(r.contributors.size()) == n_) {
          Reduction done = std::move(r);
          reductions_.erase({static_cast<std::uint32_t>(k), tag});
          for (int j = 0; j < n_; ++j) {
            if (done.target < 0 || done.target == j) deliver(j, k, tag, kUnit, Payload{done.bytes, done.sum, from});
          }
        }
        return;
      }
      case MessageKind::kPullRequest: {
        // The unit reads the range from every member now: in the engine the
        // members' memory answers, whatever round they are in.
        ++stats_.unit_messages;
        if (t.target < 0 || t.target >= n_) throw std::logic_error(from + ": a pull request for no member");
        Payload p{t.bytes(), {}, from};
        if (data()) {
          p.data = gather(0, t);
          for (int j = 1; j < n_; ++j) add_into(p.data.data(), gather(j, t).data(), t.bytes());
        }
        deliver(t.target, k, tag, kUnit, std::move(p));
        return;
      }
      default:
        throw std::logic_error(from + ": programs send unicasts, multicasts, contributions and pull requests only");
    }
  }

  /// Moves member m's program k on as far as it can; true if it moved.
  bool advance(int m, std::size_t k) {
    RoundCursor& cursor = states_[static_cast<std::size_t>(m)][k];
    bool moved = false;
    while (!cursor.finished()) {
      if (!cursor.started()) {
        for (const Transfer& t : cursor.start().sends) post(m, k, cursor.round(), t);
        moved = true;
      }
      for (std::size_t i = 0; i < cursor.current().recvs.size(); ++i) {
        if (!cursor.waiting(i)) continue;
        const Transfer& t = cursor.current().recvs[i];
        auto it =
            mail_.find(MailKey{m, static_cast<std::uint32_t>(k), cursor.tag(t), static_cast<std::uint32_t>(t.peer)});
        if (it == mail_.end()) continue;
        consume(m, k, cursor.round(), t, it->second);
        mail_.erase(it);
        cursor.arrive(i);
        moved = true;
      }
      if (cursor.pending() > 0) break;
      cursor.next();
      stats_.most_rounds = std::max(stats_.most_rounds, cursor.round());
    }
    return moved;
  }

  void consume(int m, std::size_t k, std::uint32_t round, const Transfer& t, const Payload& p) {
    if (p.bytes != t.bytes()) {
      throw std::logic_error(where(m, k, round) + ": receive " + describe(t, round) + " got a message of " +
                             std::to_string(p.bytes) + " bytes (" + p.from + ")");
    }
    check_range(m, k, round, t);
    ++stats_.messages;
    stats_.bytes_received += p.bytes;
    if (!data()) return;
    auto& buf = buffers_[static_cast<std::size_t>(m)];
    for (std::uint32_t piece = 0; piece < t.count; ++piece) {
      if (t.length == 0) continue;
      std::uint8_t* dst = buf.data() + t.offset + piece * t.stride;
      const std::uint8_t* src = p.data.data() + piece * t.length;
      if (t.reduce) {
        add_into(dst, src, t.length);
      } else {
        std::memcpy(dst, src, t.length);
      }
    }
  }

  const std::vector<int>& ranks_;
  std::string name_;  // "ring all_reduce", for messages
  std::vector<std::vector<std::uint8_t>>& buffers_;
  int n_;
  std::unordered_map<int, int> member_of_;
  std::vector<std::vector<RoundCursor>> states_;  // per member, per program (chunk)
  std::map<MailKey, Payload> mail_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, Reduction> reductions_;
  ExecutionStats stats_;
};

}  // namespace

ExecutionStats execute_programs(const ProgramPlan& plan, std::vector<std::vector<std::uint8_t>>& buffers) {
  if (!plan.ranks || plan.ranks->empty()) throw std::invalid_argument("collective over an empty group");
  return Executor(
             *plan.ranks, [&plan](int m) { return make_programs(plan, m); },
             std::string(to_string(plan.algorithm)) + " " + to_string(plan.type), buffers)
      .run();
}

ExecutionStats execute_programs(const std::vector<int>& ranks, const ProgramsOf& programs_of,
                                std::vector<std::vector<std::uint8_t>>& buffers) {
  if (ranks.empty()) throw std::invalid_argument("collective over an empty group");
  return Executor(ranks, programs_of, "programs", buffers).run();
}

}  // namespace fabricsim
