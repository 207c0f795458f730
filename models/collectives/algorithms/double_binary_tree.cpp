// Double binary tree all-reduce (NCCL's tree algorithm).
#include "models/collectives/algorithms/program_base.h"

namespace fabricsim::algorithms {

namespace {

/// One binary tree over positions 0..n-1 as NCCL builds it (ncclGetBtree):
/// the root, position 0, has a single child; inner nodes sit at positions
/// with a low set bit, so leaves and inner nodes alternate. -1: none.
struct TreeLinks {
  int parent = -1, child0 = -1, child1 = -1;
};
TreeLinks btree(int n, int p) {
  TreeLinks t;
  int bit = 1;
  while (bit < n && !(bit & p)) bit <<= 1;
  if (p == 0) {
    t.child1 = n > 1 ? bit >> 1 : -1;
    return t;
  }
  t.parent = (p ^ bit) | (bit << 1);
  if (t.parent >= n) t.parent = p ^ bit;
  int low = bit >> 1;
  t.child0 = low == 0 ? -1 : p - low;
  t.child1 = low == 0 ? -1 : p + low;
  while (t.child1 >= n) {
    low >>= 1;
    t.child1 = low == 0 ? -1 : p + low;
  }
  return t;
}

/// Two binary trees, each reducing half the data up to its root and
/// broadcasting the result back down (NCCL's double binary tree, as
/// ncclGetDtree makes it): tree A is the tree above over group positions;
/// tree B mirrors it (position n-1-p) when n is even and shifts it by one
/// when n is odd, so an inner node of one is a leaf of the other. Each tree
/// is its own program (spec.variant 0 or 1), run as its own chunk, so the
/// two never wait on each other. Variant kTreeByChunk (a level of a
/// hierarchical all-reduce, one program per chunk) runs the whole chunk down
/// tree A on even chunks and tree B on odd ones: as NCCL gives its channels
/// to the two trees in turn.
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
    const bool by_chunk = spec_.variant == kTreeByChunk;
    const int tree = by_chunk ? static_cast<int>(spec_.chunk % 2) : spec_.variant;
    const int half = n_ / 2;  // tree A carries segments [0, half), tree B [half, n)
    const int a = by_chunk || tree == 0 ? 0 : half, b = by_chunk || tree == 1 ? n_ : half;
    // Tree B's position of group index i, and back.
    const bool odd = n_ % 2 == 1;
    auto position = [&](int i) { return tree == 0 ? i : odd ? mod(i - 1, n_) : n_ - 1 - i; };
    auto index = [&](int q) { return tree == 0 ? q : odd ? mod(q + 1, n_) : n_ - 1 - q; };
    const TreeLinks links = btree(n_, position(me_));
    auto data = [&](int peer_pos, bool reduce, std::uint32_t tag) {
      const int peer = index(peer_pos);
      Transfer t = spec_.type == CollectiveType::kBarrier ? nothing(peer) : piece(peer, a, b, reduce);
      t.tag = tag;
      return t;
    };
    const int parent = links.parent;
    // Up messages are sent in round 1, down messages in round 3.
    switch (r) {
      case 0:
        for (int c : {links.child0, links.child1}) {
          if (c >= 0) out.recvs.push_back(data(c, true, 1));
        }
        break;
      case 1:
        if (parent >= 0) out.sends.push_back(data(parent, false, 1));
        break;
      case 2:
        if (parent >= 0) out.recvs.push_back(data(parent, false, 3));
        break;
      case 3:
        for (int c : {links.child0, links.child1}) {
          if (c >= 0) out.sends.push_back(data(c, false, 3));
        }
        break;
    }
  }
};

}  // namespace

std::unique_ptr<Program> make_double_binary_tree(const ProgramSpec& spec) {
  return std::make_unique<DoubleBinaryTreeProgram>(spec);
}

}  // namespace fabricsim::algorithms
