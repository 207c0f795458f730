// In-switch collectives: members talk to switch reduction units.
#include <algorithm>
#include <utility>

#include "models/collectives/algorithms/program_base.h"

namespace fabricsim::algorithms {

namespace {

/// Collectives that switch reduction units run (models/switch/reduction_unit.h).
/// Each member talks only to its units: one per switch it stripes over, the
/// bytes split between them by weight (a DGX H100 GPU spreads its 18 NVLinks
/// 5+4+4+5 over four NVSwitches), or its leaf switch's unit in a tree.
/// - all-reduce, push (SHARP): every member sends the chunk up once and gets
///   the result once. Pull (NVLS): each member asks for the reduction of its
///   segment (multimem.ld_reduce: the unit reads it from every member), then
///   multicasts the reduced segment to all (multimem.st).
/// - reduce-scatter: push, a contribution per segment to its owner; pull, as
///   the first round of the all-reduce.
/// - all-gather: each member multicasts its segment; broadcast: the root
///   multicasts the chunk; reduce: contributions, the result to the root.
/// Multicasts reach every member, the sender included, as NVLS stores do.
class InSwitchProgram : public ProgramBase {
 public:
  explicit InSwitchProgram(const ProgramSpec& s) : ProgramBase(s) {
    switch (s.type) {
      case CollectiveType::kAllReduce:
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
      case CollectiveType::kAllGather:
      case CollectiveType::kBroadcast:
      case CollectiveType::kReduce:
        break;
      default:
        not_applicable(s, "switch reduction units run all_reduce, reduce_scatter, all_gather, broadcast and reduce");
    }
    if (n_ <= 1) return;
    if (!s.in_switch)
      not_applicable(s, "the platform's switches have no reduction units (give them a \"reduction\" section)");
    plan_ = s.in_switch->in_switch_plan(*s.ranks, s.me);
    stripes_ = static_cast<int>(plan_.units.size());
    for (auto w : plan_.weights) weight_total_ += w;
    // Tags tell apart every operation of a chunk at a unit: one per member,
    // piece and stripe.
    const std::uint64_t tags = static_cast<std::uint64_t>(n_) * static_cast<std::uint64_t>(stripes_) * 2;
    if (tags >= (1u << 20)) not_applicable(s, "the group is too large for in-switch tags");
    if (spec_.type == CollectiveType::kAllReduce && plan_.pull) {
      std::uint64_t most = 0;
      for (int j = 0; j < n_; ++j) most = std::max(most, spec_.segments.length(j));
      piece_bytes_ = std::max<std::uint64_t>(plan_.pipeline_bytes, spec_.element);
      // Fewer, larger pieces when there would be too many tags.
      while ((most + piece_bytes_ - 1) / piece_bytes_ * tags >= (1u << 20)) piece_bytes_ *= 2;
      max_pieces_ = 1;
      for (int j = 0; j < n_; ++j) max_pieces_ = std::max(max_pieces_, pieces(j));
    }
  }

  std::uint32_t num_rounds() const override {
    if (n_ <= 1) return 0;
    if (!plan_.pull) return 1;
    switch (spec_.type) {
      case CollectiveType::kAllReduce:
        return pieces(me_) + 1;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
        return 2;  // pull, then the closing barrier
      default:
        return 1;
    }
  }

  std::uint32_t stage_limit(std::uint32_t /*s*/) const override {
    if (n_ <= 1 || !plan_.pull) return 0;
    switch (spec_.type) {
      case CollectiveType::kAllReduce:
        // Each chunk keeps `depth` pieces in flight (pull_and_multicast).
        return std::max<std::uint32_t>(1, plan_.pipeline_depth / chunk_depth());
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
        return plan_.pipeline_depth;  // a reduce-scatter pulls its segment as one piece
      default:
        return 0;  // multicasts and pushes make the units read nothing
    }
  }

  const char* phase(std::uint32_t r) const override {
    switch (spec_.type) {
      case CollectiveType::kAllReduce:
        if (!plan_.pull) return "reduce in switch";
        return r == 0 ? "pull" : r < pieces(me_) ? "pull and multicast" : "multicast";
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
        return r == 0 ? (plan_.pull ? "pull" : "reduce in switch") : "barrier";
      case CollectiveType::kReduce:
        return "reduce in switch";
      default:
        return "multicast";
    }
  }

  void round(std::uint32_t r, Round& out) const override {
    out.clear();
    const Segments& seg = spec_.segments;
    const auto S = static_cast<std::uint32_t>(stripes_);
    const std::uint64_t all_offset = seg.offset(0), all_length = seg.total();
    switch (spec_.type) {
      case CollectiveType::kAllReduce:
        if (!plan_.pull) {
          for (int s = 0; s < stripes_; ++s) {
            add(out.sends, unit(s), all_offset, all_length, s, MessageKind::kReduce, -1, s);
            add(out.recvs, kReductionUnitPeer, all_offset, all_length, s, MessageKind::kUnicast, -1, s);
          }
        } else {
          pull_and_multicast(out, r);
        }
        return;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
        if (plan_.pull) {
          if (r == 0) {
            pull_mine(out, static_cast<std::uint32_t>(me_) * S);
          } else {
            // As NCCL's NVLS kernels end: a barrier through the switch (a
            // flag multicast to all), so that no member leaves while others
            // still read its buffer.
            const auto tag = static_cast<std::uint32_t>(n_) * S;
            add(out.sends, unit(0), seg.offset(me_), 0, 0, MessageKind::kMulticast, -1, tag, true);
            for (int j = 0; j < n_; ++j) {
              add(out.recvs, rank(j), seg.offset(me_), 0, 0, MessageKind::kUnicast, -1, tag, true);
            }
          }
          return;
        }
        for (int k = 0; k < n_; ++k) {
          for (int s = 0; s < stripes_; ++s) {
            add(out.sends, unit(s), seg.offset(k), seg.length(k), s, MessageKind::kReduce, k,
                static_cast<std::uint32_t>(k) * S + static_cast<std::uint32_t>(s));
          }
        }
        for (int s = 0; s < stripes_; ++s) {
          add(out.recvs, kReductionUnitPeer, seg.offset(me_), seg.length(me_), s, MessageKind::kUnicast, -1,
              static_cast<std::uint32_t>(me_) * S + static_cast<std::uint32_t>(s));
        }
        return;
      case CollectiveType::kAllGather:
        gather(out, 0);
        return;
      case CollectiveType::kBroadcast:
        for (int s = 0; s < stripes_; ++s) {
          if (me_ == spec_.root) add(out.sends, unit(s), all_offset, all_length, s, MessageKind::kMulticast, -1, s);
          add(out.recvs, rank(spec_.root), all_offset, all_length, s, MessageKind::kUnicast, -1, s);
        }
        return;
      case CollectiveType::kReduce:
        for (int s = 0; s < stripes_; ++s) {
          add(out.sends, unit(s), all_offset, all_length, s, MessageKind::kReduce, spec_.root, s);
          if (me_ == spec_.root)
            add(out.recvs, kReductionUnitPeer, all_offset, all_length, s, MessageKind::kUnicast, -1, s);
        }
        return;
      default:
        not_applicable(spec_);
    }
  }

 private:
  int unit(int stripe) const { return plan_.units[static_cast<std::size_t>(stripe)]; }

  /// Pull all-reduce: the pieces a chunk keeps in flight. The depth is the
  /// collective's: its chunks share it, and stage_limit() lets no more
  /// chunks run at once than keep it.
  std::uint32_t chunk_depth() const {
    return std::max<std::uint32_t>(1, (plan_.pipeline_depth + spec_.chunks - 1) / spec_.chunks);
  }

  /// Pull all-reduce: member j's segment in pieces of about piece_bytes_.
  std::uint32_t pieces(int j) const {
    const std::uint64_t len = spec_.segments.length(j), e = spec_.element;
    const std::uint64_t elements = len / e, per = std::max<std::uint64_t>(1, piece_bytes_ / e);
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (elements + per - 1) / per));
  }
  /// Piece k of member j's segment, on element boundaries.
  std::pair<std::uint64_t, std::uint64_t> piece(int j, std::uint32_t k) const {
    const std::uint64_t off = spec_.segments.offset(j), len = spec_.segments.length(j), e = spec_.element;
    const std::uint64_t elements = len / e, p = pieces(j);
    const std::uint64_t a = elements * k / p, b = elements * (k + 1) / p;
    return {off + a * e, (b - a) * e + (k + 1 == p ? len % e : 0)};
  }
  /// Round 0 asks for the first `pipeline_depth` pieces of my segment; round
  /// k asks for the next, multicasts piece k - 1 (reduced by now) and waits
  /// for piece k; the last round gets every member's pieces. So reductions
  /// and multicasts overlap, with a bounded number of reads in flight, as in
  /// NCCL's NVLS kernel.
  void pull_and_multicast(Round& out, std::uint32_t r) const {
    const auto S = static_cast<std::uint32_t>(stripes_);
    const std::uint32_t p = pieces(me_);
    const std::uint32_t depth = chunk_depth();
    const auto pull_tag = [&](int j, std::uint32_t k, int s) {
      return (static_cast<std::uint32_t>(j) * max_pieces_ + k) * S + static_cast<std::uint32_t>(s);
    };
    const std::uint32_t multicast_base = static_cast<std::uint32_t>(n_) * max_pieces_ * S;
    for (int s = 0; s < stripes_; ++s) {
      // Reads: pieces [first, last) are asked for in this round.
      const std::uint32_t first = r == 0 ? 0 : r + depth - 1, last = std::min(p, r == 0 ? depth : r + depth);
      for (std::uint32_t k = first; k < last; ++k) {
        const auto [off, len] = piece(me_, k);
        add(out.sends, unit(s), off, len, s, MessageKind::kPullRequest, me_, pull_tag(me_, k, s));
      }
      if (r > 0) {
        const auto [off, len] = piece(me_, r - 1);
        add(out.sends, unit(s), off, len, s, MessageKind::kMulticast, -1, multicast_base + (r - 1) * S + s);
      }
      if (r < p) {
        const auto [off, len] = piece(me_, r);
        add(out.recvs, kReductionUnitPeer, off, len, s, MessageKind::kUnicast, -1, pull_tag(me_, r, s));
      } else {
        for (int j = 0; j < n_; ++j) {
          for (std::uint32_t k = 0; k < pieces(j); ++k) {
            const auto [off, len] = piece(j, k);
            add(out.recvs, rank(j), off, len, s, MessageKind::kUnicast, -1,
                multicast_base + k * S + static_cast<std::uint32_t>(s));
          }
        }
      }
    }
  }
  /// Asks for the reduction of my segment and receives it.
  void pull_mine(Round& out, std::uint32_t tag0) const {
    const Segments& seg = spec_.segments;
    for (int s = 0; s < stripes_; ++s) {
      const std::uint32_t tag = tag0 + static_cast<std::uint32_t>(s);
      add(out.sends, unit(s), seg.offset(me_), seg.length(me_), s, MessageKind::kPullRequest, me_, tag);
      add(out.recvs, kReductionUnitPeer, seg.offset(me_), seg.length(me_), s, MessageKind::kUnicast, -1, tag);
    }
  }
  /// Multicasts my segment and receives everyone's (mine included).
  void gather(Round& out, std::uint32_t tag0) const {
    const Segments& seg = spec_.segments;
    for (int s = 0; s < stripes_; ++s) {
      const std::uint32_t tag = tag0 + static_cast<std::uint32_t>(s);
      add(out.sends, unit(s), seg.offset(me_), seg.length(me_), s, MessageKind::kMulticast, -1, tag);
      for (int j = 0; j < n_; ++j)
        add(out.recvs, rank(j), seg.offset(j), seg.length(j), s, MessageKind::kUnicast, -1, tag);
    }
  }
  /// Stripe s of [offset, offset + length), split by weight on element
  /// boundaries (stray bytes on the last stripe); empty pieces are left out.
  void add(TransferList& list, int peer, std::uint64_t offset, std::uint64_t length, int s, MessageKind kind,
           int target, std::uint32_t tag, bool empty_too = false) const {
    const std::uint64_t e = spec_.element, elements = length / e;
    std::uint64_t before = 0;
    for (int i = 0; i < s; ++i) before += plan_.weights[static_cast<std::size_t>(i)];
    const std::uint64_t through = before + plan_.weights[static_cast<std::size_t>(s)];
    const std::uint64_t a = elements * before / weight_total_, b = elements * through / weight_total_;
    Transfer t;
    t.peer = peer;
    t.offset = offset + a * e;
    t.length = (b - a) * e + (s == stripes_ - 1 ? length % e : 0);
    if (t.length == 0 && !empty_too) return;
    t.kind = kind;
    t.target = target;
    t.group = plan_.group;
    t.tag = tag;
    list.push_back(t);
  }

  InSwitchPlan plan_;
  int stripes_ = 0;
  std::uint64_t weight_total_ = 0;
  std::uint64_t piece_bytes_ = 0;
  std::uint32_t max_pieces_ = 1;
};

}  // namespace

std::unique_ptr<Program> make_in_switch(const ProgramSpec& spec) {
  return std::make_unique<InSwitchProgram>(spec);
}

}  // namespace fabricsim::algorithms
