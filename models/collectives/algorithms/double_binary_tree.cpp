// Double binary tree all-reduce (NCCL's tree algorithm).
#include "models/collectives/algorithms/program_base.h"

namespace fabricsim::algorithms {

namespace {

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

}  // namespace

std::unique_ptr<Program> make_double_binary_tree(const ProgramSpec& spec) {
  return std::make_unique<DoubleBinaryTreeProgram>(spec);
}

}  // namespace fabricsim::algorithms
