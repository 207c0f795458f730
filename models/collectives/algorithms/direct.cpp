// Direct: every rank talks to every other at once, or to a window of
// them per round.
#include "models/collectives/algorithms/program_base.h"

namespace fabricsim::algorithms {

namespace {

/// Every rank talks to every other at once: one round (two for all-reduce:
/// reduce-scatter, then all-gather); with a window of w peers, (n-1)/w
/// rounds (each twice for all-reduce).
class DirectProgram : public ProgramBase {
 public:
  explicit DirectProgram(const ProgramSpec& s) : ProgramBase(s) {}

 private:
  // all-to-all-v: chunk c of `bytes`, placed at the start of block j.
  void vary(Transfer& t, std::uint64_t bytes, int j) const {
    const std::uint64_t e = spec_.element, chunks = spec_.chunks, c = spec_.chunk;
    const std::uint64_t elems = bytes / e;
    t.offset = spec_.segments.stride * static_cast<std::uint64_t>(j) +
               (c * (elems / chunks) + std::min(c, elems % chunks)) * e;
    t.length = (elems / chunks + (c < elems % chunks ? 1 : 0)) * e + (c == chunks - 1 ? bytes % e : 0);
    t.count = 1;
  }

 public:
  std::uint32_t num_rounds() const override {
    if (n_ <= 1) return 0;
    return (spec_.type == CollectiveType::kAllReduce ? 2 : 1) * windows();
  }

  const char* phase(std::uint32_t r) const override {
    if (spec_.type == CollectiveType::kAllReduce) return r < windows() ? "reduce-scatter" : "all-gather";
    return to_string(spec_.type);
  }

  void round(std::uint32_t r, Round& out) const override {
    out.clear();
    const int i = me_, root = spec_.root;
    const std::uint32_t w = window(), q = r % windows();
    const bool gather_half = spec_.type == CollectiveType::kAllReduce && r >= windows();
    // Each rank starts with its right neighbour (rank i sends to i+1, i+2,
    // ...) and hears from its left (i-1, i-2, ...), as NCCL and ASTRA-sim
    // do: were every rank to start with rank 0, all the first messages
    // would queue at one receiver. Round q of a window of w takes peers
    // q*w+1 .. (q+1)*w away, so the peers a rank sends to in a round are the
    // ones whose sends it hears in that round.
    //
    // In place (a phase of a hierarchical all-to-all) a block from j lands
    // in slot j, so the block for j must leave in the same round: a window
    // there takes peers in pairs, k and n-k away (1, n-1, 2, n-2, ...), and
    // has an even size, so no pair is split.
    const bool paired = in_place() && w < static_cast<std::uint32_t>(n_ - 1);
    const int first = static_cast<int>(q * w), last = std::min(n_ - 1, static_cast<int>((q + 1) * w));
    for (int p = first; p < last; ++p) {
      const int k = !paired ? p + 1 : p % 2 == 0 ? 1 + p / 2 : n_ - 1 - p / 2;
      const int to = (i + k) % n_, from = (i - k + n_) % n_;
      switch (spec_.type) {
        case CollectiveType::kAllReduce:
          if (!gather_half) {
            out.sends.push_back(piece(to, to, to + 1));
            out.recvs.push_back(piece(from, i, i + 1, true));
          } else {
            out.sends.push_back(piece(to, i, i + 1));
            out.recvs.push_back(piece(from, from, from + 1));
          }
          break;
        case CollectiveType::kReduceScatter:
        case CollectiveType::kReduceScatterBlock:
          out.sends.push_back(piece(to, to, to + 1));
          out.recvs.push_back(piece(from, i, i + 1, true));
          break;
        case CollectiveType::kAllGather:
          out.sends.push_back(piece(to, i, i + 1));
          out.recvs.push_back(piece(from, from, from + 1));
          break;
        case CollectiveType::kAllToAll: {
          Transfer s = piece(to, to, to + 1);
          Transfer rv = piece(from, from, from + 1);
          rv.offset += spec_.recv_base;
          if (spec_.sizes) {  // all-to-all-v: this chunk's part of each pair's bytes, from the block's start
            vary(s, (*spec_.sizes)[static_cast<std::size_t>(i)][static_cast<std::size_t>(to)], to);
            vary(rv, (*spec_.sizes)[static_cast<std::size_t>(from)][static_cast<std::size_t>(i)], from);
            rv.offset += spec_.recv_base;
          }
          out.sends.push_back(s);
          out.recvs.push_back(rv);
          break;
        }
        case CollectiveType::kBroadcast:
          if (i == root) out.sends.push_back(whole(to));
          if (from == root) out.recvs.push_back(whole(from));
          break;
        case CollectiveType::kReduce:
          if (to == root) out.sends.push_back(whole(to));
          if (i == root) out.recvs.push_back(whole(from, true));
          break;
        case CollectiveType::kGather:
          if (to == root) out.sends.push_back(piece(to, i, i + 1));
          if (i == root) out.recvs.push_back(piece(from, from, from + 1));
          break;
        case CollectiveType::kScatter:
          if (i == root) out.sends.push_back(piece(to, to, to + 1));
          if (from == root) out.recvs.push_back(piece(from, i, i + 1));
          break;
        case CollectiveType::kBarrier:
          out.sends.push_back(nothing(to));
          out.recvs.push_back(nothing(from));
          break;
      }
    }
  }

 private:
  /// Peers per round: the configured window for the types ASTRA-sim windows
  /// (a rooted collective's non-roots would idle through the rounds), else all.
  std::uint32_t window() const {
    const auto all = static_cast<std::uint32_t>(n_ - 1);
    const bool windowed = spec_.type == CollectiveType::kAllReduce || spec_.type == CollectiveType::kReduceScatter ||
                          spec_.type == CollectiveType::kReduceScatterBlock ||
                          spec_.type == CollectiveType::kAllGather || spec_.type == CollectiveType::kAllToAll;
    if (!windowed || spec_.direct_window == 0 || spec_.direct_window > all) return std::max(1u, all);
    return spec_.direct_window;
  }
  /// A phase of a hierarchical all-to-all, working in the receive half.
  bool in_place() const { return spec_.type == CollectiveType::kAllToAll && spec_.scratch_below > 0; }
  std::uint32_t windows() const {
    const auto all = static_cast<std::uint32_t>(n_ - 1);
    return std::max(1u, (all + window() - 1) / window());
  }
};

}  // namespace

std::unique_ptr<Program> make_direct(const ProgramSpec& spec) {
  return std::make_unique<DirectProgram>(spec);
}

}  // namespace fabricsim::algorithms
