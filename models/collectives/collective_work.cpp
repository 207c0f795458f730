#include "models/collectives/collective_work.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace fabricsim {

namespace {

/// Frames a send's bytes become in the fabric, per frame sent: an in-switch
/// send's data moves again at the units (a pull reads the range from every
/// member and returns it; a contribution comes back as its share of the
/// result; a multicast reaches every member).
double fan_out(MessageKind kind, double members) {
  switch (kind) {
    case MessageKind::kPullRequest:
      return members + 1;
    case MessageKind::kReduce:
      return 2;
    case MessageKind::kMulticast:
    case MessageKind::kMulticastDown:
      return members;
    default:
      return 1;
  }
}

/// Member `me`'s share: its messages, frames and the most it posts at once.
CollectiveWork member_work(const ProgramPlan& base, int me, const CollectiveConfig& config, const FrameModel& model) {
  // The members of a group at the units: the whole group, or the level
  // of a hierarchical collective that runs in the switches.
  double members = static_cast<double>(base.ranks->size());
  if (base.algorithm == AlgorithmKind::kHierarchical && base.dims) {
    for (const Dimension& d : *base.dims) {
      if (d.algorithm == AlgorithmKind::kInSwitch) members = d.size;
    }
  }
  ProgramPlan plan = base;
  const auto programs = make_staged_programs(plan, me, config);
  const int self = (*base.ranks)[static_cast<std::size_t>(me)];
  CollectiveWork w;
  if (programs.empty()) return w;
  const std::size_t total = programs.size(), sampled = std::min(total, kExactPrograms);
  const double scale = static_cast<double>(total) / static_cast<double>(sampled);
  // Chunks in flight at once on this member: all, or active_chunks.
  const double in_flight =
      config.active_chunks == 0
          ? 1.0
          : static_cast<double>(std::min<std::size_t>(total, config.active_chunks)) / static_cast<double>(total);
  w.chunk_states = static_cast<double>(total);
  Round round;
  for (std::size_t i = 0; i < sampled; ++i) {
    const Program& p = *programs[i * total / sampled];
    double most = 0;
    for (std::uint32_t r = 0; r < p.num_rounds(); ++r) {
      round.clear();
      p.round(r, round);
      for (const Transfer& t : round.sends) {
        const FrameModel::Fabric& f = model.between(self, t.peer);
        const double frames =
            fan_out(t.kind, members) *
            std::max(1.0, std::ceil(static_cast<double>(t.bytes()) / static_cast<double>(f.frame_bytes)));
        w.messages += scale;
        w.frames += scale * frames;
        w.frame_seconds += scale * frames * f.seconds;
      }
      most = std::max(most, static_cast<double>(round.sends.size()));
    }
    w.peak_messages += scale * in_flight * most;
  }
  return w;
}

}  // namespace

CollectiveWork collective_work(const CollectiveSpec& spec, const CollectiveConfig& config, InSwitchResolver* in_switch,
                               std::uint64_t frame_bytes) {
  FrameModel model;
  model.fallback.frame_bytes = std::max<std::uint64_t>(1, frame_bytes);
  return collective_work(spec, config, in_switch, model);
}

CollectiveWork collective_work(const CollectiveSpec& spec, const CollectiveConfig& config, InSwitchResolver* in_switch,
                               const FrameModel& frame) {
  CollectiveWork total;
  const int n = static_cast<int>(spec.group->ranks.size());
  if (n <= 1) return total;
  const ProgramPlan plan = plan_of(spec, config, in_switch);
  // The root exactly (rooted collectives load it most), the others sampled
  // evenly and scaled to the n - 1 they stand for.
  const int root = std::clamp(spec.root, 0, n - 1);
  auto add = [&](const CollectiveWork& w, double scale) {
    total.messages += scale * w.messages;
    total.frames += scale * w.frames;
    total.frame_seconds += scale * w.frame_seconds;
    total.peak_messages += scale * w.peak_messages;
    total.chunk_states += scale * w.chunk_states;
  };
  add(member_work(plan, root, config, frame), 1);
  std::vector<int> others;
  const int wanted = std::min(n - 1, kExactMembers);
  for (int i = 0; i < wanted; ++i) {
    int m = static_cast<int>(static_cast<long long>(i) * (n - 1) / wanted);
    if (m >= root) ++m;  // skip the root
    others.push_back(m);
  }
  const double scale = static_cast<double>(n - 1) / static_cast<double>(others.size());
  for (int m : others) add(member_work(plan, m, config, frame), scale);
  return total;
}

CollectiveWork probe_work(const CollectiveSpec& spec, const CollectiveConfig& config, const PlatformHints& hints,
                          bool group_is_world, InSwitchResolver* in_switch, const FrameModel& frames) {
  CollectiveWork total;
  for (const AlgorithmKind a :
       probe_candidates(config, spec.type, spec.bytes, spec.group->ranks, group_is_world, hints)) {
    CollectiveSpec candidate = spec;  // as ChoiceProbe runs it: its own protocol and levels
    candidate.algorithm = a;
    candidate.protocol = choose_protocol(config, hints, spec.type, a, spec.bytes, spec.group->ranks);
    candidate.dims =
        a == AlgorithmKind::kHierarchical ? choose_levels(config, hints, spec.type, spec.bytes) : &config.dims;
    candidate.channels = 0;
    try {
      const CollectiveWork w = collective_work(candidate, config, in_switch, frames);
      total.messages += w.messages;
      total.frames += w.frames;
      total.frame_seconds += w.frame_seconds;
      total.peak_messages = std::max(total.peak_messages, w.peak_messages);
      total.chunk_states = std::max(total.chunk_states, w.chunk_states);
    } catch (const std::invalid_argument&) {
      // the probe passes over a candidate that cannot run
    }
  }
  return total;
}

}  // namespace fabricsim
