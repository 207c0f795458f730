// PAT, NCCL's "parallel aggregated trees" for all-gather and reduce-scatter
// (NCCL 2.23): one binomial tree per member, rooted at it and shifted with it,
// all run together with their messages of a step aggregated. A logarithmic
// number of steps at any group size, not only powers of two.
#include "models/collectives/algorithms/program_base.h"

namespace fabricsim::algorithms {

namespace {

/// All-gather: in step k (distance D = 2^(L-1-k), farthest first) member x
/// sends to x + D every block it holds whose tree has x at a multiple of 2D
/// from the root with a node D further on: the blocks of members x - i for
/// i = 0, 2D, 4D, ... while i + D < n. Reduce-scatter runs the same trees
/// backwards (distances 1, 2, 4, ...), each member sending partial sums down
/// towards the block's owner. Every member sends and receives n - 1 blocks
/// in all, as on a ring, in ceil(log2 n) steps.
///
/// Blocks of one step go to one peer as one message each (their segments
/// need not be equally long or apart); each carries its own tag.
class PatProgram : public ProgramBase {
 public:
  explicit PatProgram(const ProgramSpec& s) : ProgramBase(s) {
    if (n_ > kMaxMembers) not_applicable(spec_, "PAT's tags hold groups of up to 131,072 members");
    while ((1 << levels_) < n_) ++levels_;
  }

  std::uint32_t num_rounds() const override {
    switch (spec_.type) {
      case CollectiveType::kAllGather:
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
        return n_ <= 1 ? 0 : static_cast<std::uint32_t>(levels_);
      default:
        not_applicable(spec_, "PAT runs all-gather and reduce-scatter, as NCCL's does");
    }
  }

  const char* phase(std::uint32_t) const override {
    return spec_.type == CollectiveType::kAllGather ? "PAT all-gather" : "PAT reduce-scatter";
  }

  void round(std::uint32_t r, Round& out) const override {
    out.clear();
    const int k = static_cast<int>(r);
    if (spec_.type == CollectiveType::kAllGather) {
      const int d = 1 << (levels_ - 1 - k);
      for_each_block(me_, d, [&](int s) { out.sends.push_back(block(me_ + d, s, r, false)); });
      for_each_block(me_ - d, d, [&](int s) { out.recvs.push_back(block(me_ - d, s, r, false)); });
    } else {
      const int d = 1 << k;
      for_each_block(me_ - d, d, [&](int s) { out.sends.push_back(block(me_ - d, s, r, false)); });
      for_each_block(me_, d, [&](int s) { out.recvs.push_back(block(me_ + d, s, r, true)); });
    }
  }

 private:
  /// The blocks member x passes at distance d: those of x - i, i = 0, 2d,
  /// 4d, ... while i + d < n.
  template <typename F>
  void for_each_block(int x, int d, F&& f) const {
    for (int i = 0; i + d < n_; i += 2 * d) f(mod(x - i, n_));
  }
  /// Block s to or from `peer`, tagged by step and block: a step sends one
  /// peer several blocks, and each must meet its own receive.
  Transfer block(int peer, int s, std::uint32_t r, bool reduce) const {
    Transfer t = piece(peer, s, s + 1, reduce);
    t.tag = r << 17 | static_cast<std::uint32_t>(s);  // 5 + 17 bits (the engine matches on 24)
    return t;
  }
  static constexpr int kMaxMembers = 1 << 17;

  int levels_ = 0;
};

}  // namespace

std::unique_ptr<Program> make_pat(const ProgramSpec& spec) {
  auto p = std::make_unique<PatProgram>(spec);
  p->num_rounds();  // refuses types it does not support
  return p;
}

}  // namespace fabricsim::algorithms
