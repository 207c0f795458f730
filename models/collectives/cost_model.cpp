#include "models/collectives/cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>

#include "models/collectives/collective_engine.h"
#include "models/collectives/round_cursor.h"

namespace fabricsim {

namespace {
/// A time on paper, kept in its two parts (ticks), compared by their sum.
struct Time {
  double latency = 0, transfer = 0;
  double total() const { return latency + transfer; }
};
Time later(const Time& a, const Time& b) {
  return a.total() >= b.total() ? a : b;
}
bool to_an_npu(int peer) {
  return peer >= 0 && peer != kReductionUnitPeer;
}
}  // namespace

Estimate routed_estimate(const CollectiveConfig& config, const TrafficPaths& paths, const ProgramPlan& plan,
                         CommProtocol p) {
  const auto& ranks = *plan.ranks;
  const int n = static_cast<int>(ranks.size());
  std::vector<std::vector<std::unique_ptr<Program>>> programs(static_cast<std::size_t>(n));
  std::map<int, int> index_of;  // global rank -> member
  for (int me = 0; me < n; ++me) {
    programs[static_cast<std::size_t>(me)] = make_programs(plan, me);
    index_of[ranks[static_cast<std::size_t>(me)]] = me;
  }
  std::vector<TrafficPaths::Use> uses;
  Round r;

  // Every program's bytes on every link: the busiest link bounds the whole.
  std::vector<double> total(paths.links(), 0.0);
  for (int me = 0; me < n; ++me) {
    for (const auto& program : programs[static_cast<std::size_t>(me)]) {
      for (std::uint32_t k = 0; k < program->num_rounds(); ++k) {
        program->round(k, r);
        for (const Transfer& t : r.sends) {
          if (!to_an_npu(t.peer)) continue;
          uses.clear();
          paths.path(ranks[static_cast<std::size_t>(me)], t.peer, uses);
          const double bytes = static_cast<double>(protocol_bytes(t.bytes(), p));
          for (const auto& u : uses) total[u.link] += bytes * u.share;
        }
      }
    }
  }
  double busiest = 0;
  for (std::size_t l = 0; l < total.size(); ++l) {
    if (total[l] > 0) busiest = std::max(busiest, total[l] / paths.rate(static_cast<std::uint32_t>(l)));
  }

  // The first program on paper, member by member as the engine runs it: a
  // round posts its sends when it starts (together they leave at the
  // member's payload rate into the fabric, each arriving its protocol's
  // overhead and its hops later) and ends when its receives are in.
  std::vector<Time> start(static_cast<std::size_t>(n));
  std::map<std::array<std::int64_t, 3>, Time> arrived;  // (receiver, sender, tag) -> when
  std::vector<int> work;
  for (int me = n - 1; me >= 0; --me) work.push_back(me);
  Time end;
  // Chunks running at once on each member, all taking the same steps over
  // the same links (a double binary tree's two trees are apart: its second
  // tree runs on the links its first leaves idle).
  const std::uint32_t channels = effective_channels(plan);
  const std::size_t chunks = static_cast<std::size_t>(std::max<std::uint32_t>(1, plan.chunks)) * channels;
  const double concurrent =
      static_cast<double>(config.active_chunks > 0 ? std::min<std::size_t>(chunks, config.active_chunks) : chunks);
  // Channels take different links (a ring's channels cross between nodes on
  // different rails): a link is shared by the channels whose first round
  // sends over it, not by all of them. Without channels every program takes
  // the first one's links.
  std::vector<double> channels_on(paths.links(), 1.0);
  if (channels > 1) {
    std::fill(channels_on.begin(), channels_on.end(), 0.0);
    for (int me = 0; me < n; ++me) {
      const auto& mine = programs[static_cast<std::size_t>(me)];
      for (std::uint32_t c = 0; c < channels && c < mine.size(); ++c) {
        if (mine[c]->num_rounds() == 0) continue;
        mine[c]->round(0, r);
        for (const Transfer& t : r.sends) {
          if (!to_an_npu(t.peer)) continue;
          uses.clear();
          paths.path(ranks[static_cast<std::size_t>(me)], t.peer, uses);
          for (const auto& u : uses) {
            if (u.first) channels_on[u.link] += 1;
          }
        }
      }
    }
  }
  // A collective's chunks to one peer leave in order (one NIC queue per
  // collective, Message::queue): the first program runs alone on paper and
  // the others follow it through the pipeline.
  const double per_channel = std::max(1.0, concurrent / channels);  // chunks of one channel at once
  // Each member's first program, now that nothing else reads it.
  std::vector<RoundCursor> cursors(static_cast<std::size_t>(n));
  for (int me = 0; me < n; ++me) {
    auto& mine = programs[static_cast<std::size_t>(me)];
    if (!mine.empty()) cursors[static_cast<std::size_t>(me)] = RoundCursor(std::move(mine.front()));
  }
  while (!work.empty()) {
    const int me = work.back();
    work.pop_back();
    if (programs[static_cast<std::size_t>(me)].empty()) continue;  // a member with no program (its cursor has none)
    RoundCursor& cursor = cursors[static_cast<std::size_t>(me)];
    const int rank = ranks[static_cast<std::size_t>(me)];
    Time& t0 = start[static_cast<std::size_t>(me)];
    while (!cursor.finished()) {
      if (!cursor.started()) {
        const Round& round = cursor.start();
        // A reduction unit's answer is not on paper: taken as in.
        for (std::size_t i = 0; i < round.recvs.size(); ++i) {
          if (!to_an_npu(round.recvs[i].peer)) cursor.arrive(i);
        }
        // The round's sends leave together, each link out of the member at
        // its rate (a striping NIC's share on each of its ports).
        std::map<std::uint32_t, double> out_bytes;
        std::vector<std::pair<int, std::vector<TrafficPaths::Use>>> routes;  // per send: hops and links
        for (const Transfer& t : round.sends) {
          if (!to_an_npu(t.peer)) continue;
          routes.emplace_back();
          routes.back().first = paths.path(rank, t.peer, routes.back().second);
          const double bytes = static_cast<double>(protocol_bytes(t.bytes(), p));
          for (const auto& u : routes.back().second) {
            if (u.first) out_bytes[u.link] += bytes * u.share;
          }
        }
        std::size_t next_route = 0;
        for (const Transfer& t : round.sends) {
          if (!to_an_npu(t.peer)) continue;
          const auto& [hops, links] = routes[next_route++];
          const FabricCosts& c = paths.costs(rank, t.peer);
          Time at = t0;
          at.latency += static_cast<double>(c.overhead(p)) + hops * 0.5 * static_cast<double>(c.hop);
          // Other channels' messages of this step share the link frame by
          // frame: this one's last frame leaves after all but the last frames
          // of theirs (the same channel's other chunks wait behind it).
          const double bytes = static_cast<double>(protocol_bytes(t.bytes(), p));
          const double frames = c.segment > 0 ? std::max(1.0, std::ceil(bytes / static_cast<double>(c.segment))) : 1.0;
          double leaving = 0;
          for (const auto& u : links) {
            if (!u.first) continue;
            const double sharing = std::max(1.0, channels_on[u.link]);
            const double shared = (sharing * (frames - 1) + 1) / frames;
            leaving = std::max(leaving, shared * out_bytes[u.link] / paths.rate(u.link));
          }
          at.transfer += leaving * 1e12;
          arrived[{t.peer, rank, cursor.tag(t)}] = at;
          const auto to = index_of.find(t.peer);
          if (to != index_of.end()) work.push_back(to->second);
        }
      }
      // The round ends with the last of its messages in, taken together
      // (in the receives' order: a tie keeps the first).
      const auto& recvs = cursor.current().recvs;
      const auto key = [&](const Transfer& t) { return std::array<std::int64_t, 3>{rank, t.peer, cursor.tag(t)}; };
      bool ready = true;
      for (std::size_t i = 0; ready && i < recvs.size(); ++i) {
        ready = !cursor.waiting(i) || arrived.count(key(recvs[i])) > 0;
      }
      if (!ready) break;  // resumed when the missing message is sent
      Time done = t0;
      for (std::size_t i = 0; i < recvs.size(); ++i) {
        if (!cursor.waiting(i)) continue;
        const auto it = arrived.find(key(recvs[i]));
        done = later(done, it->second);
        arrived.erase(it);
        cursor.arrive(i);
      }
      t0 = done;
      cursor.next();
    }
    if (cursor.finished()) end = later(end, t0);
  }
  const double launch = static_cast<double>(config.launch(p));
  // Programs beyond those at once run in further waves; within a wave the
  // first program's time fills the pipeline and the others' share of the
  // busiest link follows it; that link bounds them all.
  const double waves = std::ceil(static_cast<double>(chunks) / concurrent);
  const double transfer =
      std::max(busiest * 1e12, end.transfer * waves + busiest * 1e12 * (per_channel - 1) / per_channel);
  return Estimate{launch + end.latency, transfer};
}

Estimate CostModel::estimate(const CollectiveConfig& config, const ProgramPlan& plan, CommProtocol p) {
  std::string key;
  const auto put = [&key](std::uint64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(static_cast<std::uint64_t>(plan.type) | static_cast<std::uint64_t>(plan.algorithm) << 8 |
      static_cast<std::uint64_t>(p) << 16 | static_cast<std::uint64_t>(plan.element) << 24 |
      static_cast<std::uint64_t>(plan.chunks) << 32);
  put(plan.channels);
  put(plan.bytes);
  put(static_cast<std::uint64_t>(plan.root));
  for (int r : *plan.ranks) put(static_cast<std::uint64_t>(r));
  auto it = known_.find(key);
  if (it != known_.end()) return it->second;
  const Estimate e = routed_estimate(config, paths_, plan, p);
  known_.emplace(std::move(key), e);
  return e;
}

const std::vector<Dimension>* CostModel::keep(const std::vector<Dimension>& levels) {
  for (const auto& k : kept_) {
    bool same = k.size() == levels.size();
    for (std::size_t d = 0; same && d < k.size(); ++d) {
      same = k[d].size == levels[d].size && k[d].stride == levels[d].stride && k[d].algorithm == levels[d].algorithm;
    }
    if (same) return &k;
  }
  kept_.push_back(levels);
  return &kept_.back();
}

}  // namespace fabricsim
