// The algorithms: each turns (collective type, group, my index, chunk layout)
// into the rounds this NPU runs. Rounds are generated when needed, never
// stored, so a 1,024-rank ring costs no memory per step.
//
// Round numbers must agree between a sender and its receiver (messages are
// matched by chunk, round and sender), so every rank numbers the rounds of a
// program the same way, leaving rounds empty where it has nothing to do.
//
// What each algorithm does with group sizes that do not suit it:
// - ring, direct: any size.
// - halving_doubling: a power of two p <= n works recursively; the n - p
//   extra ranks first hand their data to a partner and get the result back at
//   the end (one extra round each way).
// - double_binary_tree: any size; the two trees are a heap-ordered binary tree
//   and its mirror image, so a leaf of one is an inner node of the other.
// - hierarchical: the group must be the whole platform, laid out in the
//   platform's dimensions.
// - in_switch: any size; the group must be on one fabric whose switches have
//   reduction units (every member on the same switches, or each on one leaf
//   of a tree of switches that all have units).
#include <stdexcept>
#include <string>

#include "models/npu/collective.h"

namespace fabricsim {

namespace {

int mod(int a, int n) { return ((a % n) + n) % n; }

[[noreturn]] void not_applicable(const ProgramSpec& s, const std::string& why = "") {
  throw std::invalid_argument(std::string("the ") + to_string(s.algorithm) + " algorithm does not apply to " +
                              to_string(s.type) + (why.empty() ? "" : ": " + why));
}

class ProgramBase : public Program {
 public:
  explicit ProgramBase(const ProgramSpec& s) : spec_(s), n_(static_cast<int>(s.ranks->size())), me_(s.me) {}

 protected:
  int rank(int index) const { return (*spec_.ranks)[static_cast<std::size_t>(mod(index, n_))]; }
  Transfer piece(int peer_index, int a, int b, bool reduce = false) const {
    Transfer t = spec_.segments.range(a, b);
    t.peer = rank(peer_index);
    t.reduce = reduce;
    return t;
  }
  Transfer whole(int peer_index, bool reduce = false) const { return piece(peer_index, 0, n_, reduce); }
  Transfer nothing(int peer_index) const {
    Transfer t;
    t.peer = rank(peer_index);
    return t;
  }

  ProgramSpec spec_;
  int n_;
  int me_;
};

// ---- ring ----------------------------------------------------------------------

/// Every rank sends to its right neighbour and receives from its left, one
/// segment per round; rooted types run a chain from the root.
class RingProgram : public ProgramBase {
 public:
  explicit RingProgram(const ProgramSpec& s) : ProgramBase(s) {}

  std::uint32_t num_rounds() const override {
    if (n_ <= 1) return 0;
    switch (spec_.type) {
      case CollectiveType::kAllReduce:
      case CollectiveType::kBarrier: return static_cast<std::uint32_t>(2 * (n_ - 1));
      case CollectiveType::kBroadcast:
      case CollectiveType::kReduce: return 2;  // receive, then pass on
      default: return static_cast<std::uint32_t>(n_ - 1);
    }
  }

  const char* phase(std::uint32_t r) const override {
    switch (spec_.type) {
      case CollectiveType::kAllReduce:
      case CollectiveType::kBarrier: return static_cast<int>(r) < n_ - 1 ? "reduce-scatter" : "all-gather";
      case CollectiveType::kBroadcast:
      case CollectiveType::kReduce: return "chain";
      default: return to_string(spec_.type);
    }
  }

  void round(std::uint32_t r, Round& out) const override {
    out.clear();
    const int i = me_;
    const int rr = static_cast<int>(r);
    switch (spec_.type) {
      case CollectiveType::kAllReduce:
      case CollectiveType::kBarrier:
        if (rr < n_ - 1) {  // reduce-scatter phase: rank i ends owning segment i+1
          exchange(out, mod(i - rr, n_), mod(i - rr - 1, n_), true);
        } else {  // all-gather phase
          const int q = rr - (n_ - 1);
          exchange(out, mod(i + 1 - q, n_), mod(i - q, n_), false);
        }
        return;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:  // rank i ends owning segment i
        exchange(out, mod(i - rr - 1, n_), mod(i - rr - 2, n_), true);
        return;
      case CollectiveType::kAllGather:  // rank i starts with segment i
        exchange(out, mod(i - rr, n_), mod(i - rr - 1, n_), false);
        return;
      case CollectiveType::kBroadcast:  // a chain from the root
        chain(out, r, mod(i - spec_.root, n_), false);
        return;
      case CollectiveType::kReduce:  // a chain that ends at the root
        chain(out, r, mod(i - spec_.root - 1, n_), true);
        return;
      default:
        not_applicable(spec_);
    }
  }

 private:
  // Position p of a chain: the first sends in round 0; the others receive in
  // round 0 (what their predecessor sent in its sending round) and pass it on
  // in round 1.
  void chain(Round& out, std::uint32_t r, int p, bool reduce) const {
    if (r == 0 && p > 0) {
      Transfer t = whole(me_ - 1, reduce);
      t.tag = p == 1 ? 0 : 1;
      out.recvs.push_back(t);
    }
    if (r == (p == 0 ? 0u : 1u) && p < n_ - 1) out.sends.push_back(whole(me_ + 1));
  }
  void exchange(Round& out, int send_seg, int recv_seg, bool reduce) const {
    out.sends.push_back(piece(me_ + 1, send_seg, send_seg + 1));
    out.recvs.push_back(piece(me_ - 1, recv_seg, recv_seg + 1, reduce));
  }
};

// ---- direct ----------------------------------------------------------------------

/// Every rank talks to every other at once: one round (two for all-reduce:
/// reduce-scatter, then all-gather).
class DirectProgram : public ProgramBase {
 public:
  explicit DirectProgram(const ProgramSpec& s) : ProgramBase(s) {}

 private:
  // all-to-all-v: chunk c of `bytes`, placed at the start of block j.
  void vary(Transfer& t, std::uint64_t bytes, int j) const {
    const std::uint64_t e = spec_.element, chunks = spec_.chunks, c = spec_.chunk;
    const std::uint64_t elems = bytes / e;
    t.offset = spec_.segments.stride * static_cast<std::uint64_t>(j) + (c * (elems / chunks) + std::min(c, elems % chunks)) * e;
    t.length = (elems / chunks + (c < elems % chunks ? 1 : 0)) * e + (c == chunks - 1 ? bytes % e : 0);
    t.count = 1;
  }

 public:
  std::uint32_t num_rounds() const override {
    if (n_ <= 1) return 0;
    return spec_.type == CollectiveType::kAllReduce ? 2 : 1;
  }

  const char* phase(std::uint32_t r) const override {
    if (spec_.type == CollectiveType::kAllReduce) return r == 0 ? "reduce-scatter" : "all-gather";
    return to_string(spec_.type);
  }

  void round(std::uint32_t r, Round& out) const override {
    out.clear();
    const int i = me_, root = spec_.root;
    for (int j = 0; j < n_; ++j) {
      if (j == i) continue;
      switch (spec_.type) {
        case CollectiveType::kAllReduce:
          if (r == 0) {
            out.sends.push_back(piece(j, j, j + 1));
            out.recvs.push_back(piece(j, i, i + 1, true));
          } else {
            out.sends.push_back(piece(j, i, i + 1));
            out.recvs.push_back(piece(j, j, j + 1));
          }
          break;
        case CollectiveType::kReduceScatter:
        case CollectiveType::kReduceScatterBlock:
          out.sends.push_back(piece(j, j, j + 1));
          out.recvs.push_back(piece(j, i, i + 1, true));
          break;
        case CollectiveType::kAllGather:
          out.sends.push_back(piece(j, i, i + 1));
          out.recvs.push_back(piece(j, j, j + 1));
          break;
        case CollectiveType::kAllToAll: {
          Transfer s = piece(j, j, j + 1);
          Transfer rv = piece(j, j, j + 1);
          rv.offset += spec_.recv_base;
          if (spec_.sizes) {  // all-to-all-v: this chunk's part of each pair's bytes, from the block's start
            vary(s, (*spec_.sizes)[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)], j);
            vary(rv, (*spec_.sizes)[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)], j);
            rv.offset += spec_.recv_base;
          }
          out.sends.push_back(s);
          out.recvs.push_back(rv);
          break;
        }
        case CollectiveType::kBroadcast:
          if (i == root) out.sends.push_back(whole(j));
          if (j == root) out.recvs.push_back(whole(j));
          break;
        case CollectiveType::kReduce:
          if (j == root) out.sends.push_back(whole(j));
          if (i == root) out.recvs.push_back(whole(j, true));
          break;
        case CollectiveType::kGather:
          if (j == root) out.sends.push_back(piece(j, i, i + 1));
          if (i == root) out.recvs.push_back(piece(j, j, j + 1));
          break;
        case CollectiveType::kScatter:
          if (i == root) out.sends.push_back(piece(j, j, j + 1));
          if (j == root) out.recvs.push_back(piece(j, i, i + 1));
          break;
        case CollectiveType::kBarrier:
          out.sends.push_back(nothing(j));
          out.recvs.push_back(nothing(j));
          break;
      }
    }
  }
};

// ---- recursive halving and doubling ---------------------------------------------

/// Power-of-two exchanges between partners at distances n/2, n/4, ... (and
/// back). With n not a power of two, the lowest 2e ranks pair up: each even
/// one hands its data to the odd one above it and sits out.
class HalvingDoublingProgram : public ProgramBase {
 public:
  explicit HalvingDoublingProgram(const ProgramSpec& s) : ProgramBase(s) {
    p_ = 1;
    while (p_ * 2 <= n_) p_ *= 2;
    e_ = n_ - p_;
    k_ = 0;
    while ((1 << k_) < p_) ++k_;
    levels_ = 0;
    while ((1 << levels_) < n_) ++levels_;
  }

  std::uint32_t num_rounds() const override {
    if (n_ <= 1) return 0;
    const std::uint32_t fold = e_ > 0 ? 1 : 0;
    switch (spec_.type) {
      case CollectiveType::kAllReduce: return fold + 2 * static_cast<std::uint32_t>(k_) + fold;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
      case CollectiveType::kAllGather: return fold + static_cast<std::uint32_t>(k_) + fold;
      case CollectiveType::kBroadcast:
      case CollectiveType::kReduce:
      case CollectiveType::kBarrier: return static_cast<std::uint32_t>(levels_);
      default: not_applicable(spec_, "use direct (or ring) for it");
    }
  }

  const char* phase(std::uint32_t r) const override {
    switch (spec_.type) {
      case CollectiveType::kBroadcast:
      case CollectiveType::kReduce: return "binomial tree";
      case CollectiveType::kBarrier: return "dissemination";
      case CollectiveType::kAllReduce: return r < num_rounds() / 2 ? "halving" : "doubling";
      case CollectiveType::kAllGather: return "doubling";
      default: return "halving";
    }
  }

  void round(std::uint32_t r, Round& out) const override {
    out.clear();
    switch (spec_.type) {
      case CollectiveType::kBroadcast: return binomial_broadcast(static_cast<int>(r), out);
      case CollectiveType::kReduce: return binomial_reduce(static_cast<int>(r), out);
      case CollectiveType::kBarrier: return dissemination(static_cast<int>(r), out);
      default: break;
    }
    const bool fold = e_ > 0;
    int rr = static_cast<int>(r);
    const bool rs = spec_.type != CollectiveType::kAllGather;  // has a halving phase
    const bool ag = spec_.type == CollectiveType::kAllReduce || spec_.type == CollectiveType::kAllGather;
    // pre-fold round
    if (fold) {
      if (rr == 0) {
        if (folded()) {
          out.sends.push_back(spec_.type == CollectiveType::kAllGather ? piece(me_ + 1, me_, me_ + 1) : whole(me_ + 1));
        } else if (me_ < 2 * e_) {
          out.recvs.push_back(spec_.type == CollectiveType::kAllGather ? piece(me_ - 1, me_ - 1, me_)
                                                                        : whole(me_ - 1, true));
        }
        return;
      }
      --rr;
    }
    if (rs) {
      if (rr < k_) {
        if (!folded()) halving_step(rr, out);
        return;
      }
      rr -= k_;
    }
    if (ag) {
      if (rr < k_) {
        if (!folded()) doubling_step(rr, out);
        return;
      }
      rr -= k_;
    }
    // post-fold round: hand the folded rank its result
    if (fold && rr == 0 && me_ < 2 * e_) {
      const bool to_folded_all = spec_.type == CollectiveType::kAllReduce || spec_.type == CollectiveType::kAllGather;
      if (folded()) {
        out.recvs.push_back(to_folded_all ? whole(me_ + 1) : piece(me_ + 1, me_, me_ + 1));
      } else {
        out.sends.push_back(to_folded_all ? whole(me_ - 1) : piece(me_ - 1, me_ - 1, me_));
      }
    }
  }

 private:
  bool folded() const { return me_ < 2 * e_ && me_ % 2 == 0; }
  int participant() const { return me_ < 2 * e_ ? me_ / 2 : me_ - e_; }
  int index_of(int q) const { return q < e_ ? 2 * q + 1 : q + e_; }
  int lo(int q) const { return q < e_ ? 2 * q : q + e_; }   // first segment participant q owns
  int hi(int q) const { return q < e_ ? 2 * q + 2 : q + e_ + 1; }

  // Step s of recursive halving: partners d = p/2^(s+1) apart swap halves of
  // the participants' range they share.
  void halving_step(int s, Round& out) const {
    const int q = participant();
    const int d = p_ >> (s + 1);
    const int base = q - q % (2 * d);
    const int partner = q ^ d;
    const bool lower = q < partner;
    const int keep_lo = lower ? base : base + d, give_lo = lower ? base + d : base;
    out.sends.push_back(piece(index_of(partner), lo(give_lo), hi(give_lo + d - 1)));
    out.recvs.push_back(piece(index_of(partner), lo(keep_lo), hi(keep_lo + d - 1), true));
  }
  // Step s of recursive doubling (distances 1, 2, 4, ...): swap what each has.
  void doubling_step(int s, Round& out) const {
    const int q = participant();
    const int d = 1 << s;
    const int mine = q - q % d;
    const int partner = q ^ d;
    const int theirs = partner - partner % d;
    out.sends.push_back(piece(index_of(partner), lo(mine), hi(mine + d - 1)));
    out.recvs.push_back(piece(index_of(partner), lo(theirs), hi(theirs + d - 1)));
  }
  void binomial_broadcast(int s, Round& out) const {
    const int p = mod(me_ - spec_.root, n_);
    const int step = 1 << s;
    if (p < step && p + step < n_) out.sends.push_back(whole(me_ + step));
    if (p >= step && p < 2 * step) out.recvs.push_back(whole(me_ - step));
  }
  void binomial_reduce(int s, Round& out) const {
    const int p = mod(me_ - spec_.root, n_);
    const int step = 1 << s;
    if (p % (2 * step) == step) out.sends.push_back(whole(me_ - step));
    if (p % (2 * step) == 0 && p + step < n_) out.recvs.push_back(whole(me_ + step, true));
  }
  void dissemination(int s, Round& out) const {
    const int step = 1 << s;
    out.sends.push_back(nothing(me_ + step));
    out.recvs.push_back(nothing(me_ - step));
  }

  int p_ = 1, e_ = 0, k_ = 0, levels_ = 0;
};

// ---- double binary tree ----------------------------------------------------------

/// Two binary trees, each reducing half the data up to its root and
/// broadcasting the result back down. Tree A is heap-ordered over group
/// positions (parent (p-1)/2); tree B is its mirror image (position n-1-p),
/// so a leaf of one is an inner node of the other. Each tree is its own
/// program (spec.variant), run as its own chunk, so the two never wait on
/// each other.
class DoubleBinaryTreeProgram : public ProgramBase {
 public:
  explicit DoubleBinaryTreeProgram(const ProgramSpec& s) : ProgramBase(s) {
    if (s.type != CollectiveType::kAllReduce && s.type != CollectiveType::kBarrier) {
      not_applicable(s, "it is an all-reduce algorithm");
    }
  }
  std::uint32_t num_rounds() const override { return n_ <= 1 ? 0 : 4; }

  const char* phase(std::uint32_t r) const override { return r < 2 ? "up the tree" : "down the tree"; }

  void round(std::uint32_t r, Round& out) const override {
    out.clear();
    const int tree = spec_.variant;
    const int half = n_ / 2;  // tree A carries segments [0, half), tree B [half, n)
    const int a = tree == 0 ? 0 : half, b = tree == 0 ? half : n_;
    const int p = tree == 0 ? me_ : n_ - 1 - me_;
    const int parent = p == 0 ? -1 : (p - 1) / 2;
    auto data = [&](int peer_pos, bool reduce, std::uint32_t tag) {
      Transfer t = spec_.type == CollectiveType::kBarrier ? nothing(index(peer_pos)) : piece(index(peer_pos), a, b, reduce);
      t.tag = tag;
      return t;
    };
    // Up messages are sent in round 1, down messages in round 3.
    switch (r) {
      case 0:
        for (int c : {2 * p + 1, 2 * p + 2}) {
          if (c < n_) out.recvs.push_back(data(c, true, 1));
        }
        break;
      case 1:
        if (parent >= 0) out.sends.push_back(data(parent, false, 1));
        break;
      case 2:
        if (parent >= 0) out.recvs.push_back(data(parent, false, 3));
        break;
      case 3:
        for (int c : {2 * p + 1, 2 * p + 2}) {
          if (c < n_) out.sends.push_back(data(c, false, 3));
        }
        break;
    }
  }

 private:
  int index(int pos) const { return spec_.variant == 0 ? pos : n_ - 1 - pos; }
};

// ---- hierarchical ----------------------------------------------------------------

/// All-reduce over a multi-dimensional platform: reduce-scatter within each
/// dimension going up (each on the part the previous one left this NPU),
/// all-gather back down, with each dimension's own algorithm.
class HierarchicalProgram : public Program {
 public:
  explicit HierarchicalProgram(const ProgramSpec& s) : spec_(s) {
    if (s.type != CollectiveType::kAllReduce) not_applicable(s, "it is an all-reduce algorithm");
    if (!s.dims || s.dims->empty()) not_applicable(s, "the platform has no dimensions");
    int total = 1;
    for (const auto& d : *s.dims) total *= d.size;
    if (total != static_cast<int>(s.ranks->size())) {
      not_applicable(s, "it needs the group to be the whole " + std::to_string(total) + "-NPU platform");
    }
    const int me_rank = (*s.ranks)[static_cast<std::size_t>(s.me)];
    // The whole chunk as one segment; each dimension cuts the part the
    // previous one left this NPU into as many segments as it has members.
    Segments current;
    current.n = 1;
    current.first = s.segments.offset(0);
    current.base = s.segments.total();
    current.element = s.element;
    int keep = 0;  // which segment of `current` the next dimension works on
    // Up: reduce-scatter per dimension.
    for (std::size_t d = 0; d < s.dims->size(); ++d) {
      const Dimension& dim = (*s.dims)[d];
      if (dim.size == 1) continue;
      Phase ph;
      const int coord = me_rank / dim.stride % dim.size;
      ph.ranks = std::make_shared<std::vector<int>>();
      for (int x = 0; x < dim.size; ++x) ph.ranks->push_back(me_rank + (x - coord) * dim.stride);
      ProgramSpec sub;
      sub.type = CollectiveType::kReduceScatter;
      sub.algorithm = dim.algorithm;
      sub.ranks = ph.ranks.get();
      sub.me = coord;
      sub.segments = current.split(keep, dim.size, s.element);
      sub.element = s.element;
      sub.in_switch = s.in_switch;
      current = sub.segments;
      keep = coord;
      ph.up = make_program(sub);
      sub.type = CollectiveType::kAllGather;
      ph.down = make_program(sub);
      const std::string label = "dim " + std::to_string(d) + " ";
      ph.up_name = label + "reduce-scatter (" + to_string(sub.algorithm) + ")";
      ph.down_name = label + "all-gather (" + to_string(sub.algorithm) + ")";
      phases_.push_back(std::move(ph));
    }
    for (const Phase& ph : phases_) up_rounds_ += ph.up->num_rounds();
  }

  std::uint32_t num_rounds() const override {
    std::uint32_t n = up_rounds_;
    for (const Phase& ph : phases_) n += ph.down->num_rounds();
    return n;
  }

  const char* phase(std::uint32_t r) const override {
    std::uint32_t offset = 0;
    for (const Phase& ph : phases_) {
      if (r - offset < ph.up->num_rounds()) return ph.up_name.c_str();
      offset += ph.up->num_rounds();
    }
    for (auto it = phases_.rbegin(); it != phases_.rend(); ++it) {
      if (r - offset < it->down->num_rounds()) return it->down_name.c_str();
      offset += it->down->num_rounds();
    }
    return "all-gather";
  }

  void round(std::uint32_t r, Round& out) const override {
    std::uint32_t offset = 0;
    const Program* program = nullptr;
    for (const Phase& ph : phases_) {
      if (!program && r - offset < ph.up->num_rounds()) program = ph.up.get();
      if (!program) offset += ph.up->num_rounds();
    }
    for (auto it = phases_.rbegin(); it != phases_.rend() && !program; ++it) {
      if (r - offset < it->down->num_rounds()) {
        program = it->down.get();
      } else {
        offset += it->down->num_rounds();
      }
    }
    out.clear();
    if (!program) return;
    program->round(r - offset, out);
    // A phase's own tags count its own rounds.
    for (TransferList* list : {&out.sends, &out.recvs}) {
      for (Transfer& t : *list) {
        if (t.tag != Transfer::kSameRound) t.tag += offset;
      }
    }
  }

 private:
  struct Phase {
    std::shared_ptr<std::vector<int>> ranks;
    std::unique_ptr<Program> up, down;
    std::string up_name, down_name;  // "dim 0 reduce-scatter (ring)"...
  };
  ProgramSpec spec_;
  std::vector<Phase> phases_;
  std::uint32_t up_rounds_ = 0;
};

// ---- in-switch ---------------------------------------------------------------------

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
    if (!s.in_switch) not_applicable(s, "the platform's switches have no reduction units (give them a \"reduction\" section)");
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
      case CollectiveType::kAllReduce: return pieces(me_) + 1;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock: return 2;  // pull, then the closing barrier
      default: return 1;
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
      case CollectiveType::kReduce: return "reduce in switch";
      default: return "multicast";
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
          if (me_ == spec_.root) add(out.recvs, kReductionUnitPeer, all_offset, all_length, s, MessageKind::kUnicast, -1, s);
        }
        return;
      default:
        not_applicable(spec_);
    }
  }

 private:
  int unit(int stripe) const { return plan_.units[static_cast<std::size_t>(stripe)]; }

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
    // The depth is the collective's: its chunks share it.
    const std::uint32_t p = pieces(me_);
    const std::uint32_t depth = std::max<std::uint32_t>(1, (plan_.pipeline_depth + spec_.chunks - 1) / spec_.chunks);
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
      for (int j = 0; j < n_; ++j) add(out.recvs, rank(j), seg.offset(j), seg.length(j), s, MessageKind::kUnicast, -1, tag);
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

std::unique_ptr<Program> make_program(const ProgramSpec& spec) {
  if (!spec.ranks || spec.ranks->empty()) throw std::invalid_argument("collective over an empty group");
  if (spec.type == CollectiveType::kAllToAll && spec.algorithm != AlgorithmKind::kDirect) {
    not_applicable(spec, "all-to-all runs with direct");
  }
  if ((spec.type == CollectiveType::kGather || spec.type == CollectiveType::kScatter) &&
      spec.algorithm != AlgorithmKind::kDirect) {
    not_applicable(spec, std::string(to_string(spec.type)) + " runs with direct");
  }
  switch (spec.algorithm) {
    case AlgorithmKind::kRing: return std::make_unique<RingProgram>(spec);
    case AlgorithmKind::kDirect: return std::make_unique<DirectProgram>(spec);
    case AlgorithmKind::kHalvingDoubling: {
      auto p = std::make_unique<HalvingDoublingProgram>(spec);
      p->num_rounds();  // refuses types it does not support
      return p;
    }
    case AlgorithmKind::kDoubleBinaryTree: return std::make_unique<DoubleBinaryTreeProgram>(spec);
    case AlgorithmKind::kHierarchical: return std::make_unique<HierarchicalProgram>(spec);
    case AlgorithmKind::kInSwitch: return std::make_unique<InSwitchProgram>(spec);
  }
  not_applicable(spec);
}

}  // namespace fabricsim
