// Ring: every rank sends to its right neighbour and receives from its left.
// All-to-all on a ring relays: a block for the rank k places on travels k
// hops, one block at a time, as ASTRA-sim runs all-to-all on a ring dimension.
#include "models/collectives/algorithms/program_base.h"

namespace fabricsim::algorithms {

namespace {

/// Every rank sends to its right neighbour and receives from its left, one
/// segment per round; rooted types run a chain from the root.
class RingProgram : public ProgramBase {
 public:
  explicit RingProgram(const ProgramSpec& s) : ProgramBase(s) {}

  std::uint32_t num_rounds() const override {
    if (n_ <= 1) return 0;
    switch (spec_.type) {
      case CollectiveType::kAllReduce:
      case CollectiveType::kBarrier:
        return static_cast<std::uint32_t>(2 * (n_ - 1));
      case CollectiveType::kBroadcast:
      case CollectiveType::kReduce:
        return 2;  // receive, then pass on
      case CollectiveType::kAllToAll:
        return static_cast<std::uint32_t>(n_ * (n_ - 1) / 2);
      default:
        return static_cast<std::uint32_t>(n_ - 1);
    }
  }

  const char* phase(std::uint32_t r) const override {
    switch (spec_.type) {
      case CollectiveType::kAllReduce:
      case CollectiveType::kBarrier:
        return static_cast<int>(r) < n_ - 1 ? "reduce-scatter" : "all-gather";
      case CollectiveType::kBroadcast:
      case CollectiveType::kReduce:
        return "chain";
      default:
        return to_string(spec_.type);
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
      case CollectiveType::kAllToAll:
        relay(out, rr);
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
  // All-to-all as ASTRA-sim's ring runs it: one block in flight per rank.
  // Step (r, k), r = 0 .. n-2, k = 1 .. n-1-r, is one round: rank i passes
  // to i+1 the block of rank i-r for rank i+k (its own at r = 0), and takes
  // from i-1 the block of rank i-1-r for rank i-1+k, delivered if that is i,
  // else kept in the send half where the block it replaces (for i+k-1) left
  // a step before. n(n-1)/2 rounds of one block.
  //
  // In place (a phase of a hierarchical all-to-all, scratch_below > 0) the
  // slots are in the receive half: own blocks leave from there, blocks on
  // their way wait in the send half below, and a delivered block from j
  // lands in slot j. Step r = 0 takes k from n-1 down, so the own block for
  // i-1 has left before i-1's block for i arrives (at k = 1); later
  // deliveries come after every own block has left.
  void relay(Round& out, int t) const {
    if (spec_.sizes) not_applicable(spec_, "all-to-all-v has no ring form (its blocks differ in size)");
    const bool in_place = spec_.scratch_below > 0;
    int r = 0;
    while (t >= n_ - 1 - r) t -= n_ - 1 - r++;
    const int k = in_place && r == 0 ? n_ - 1 - t : t + 1, i = me_;
    Transfer send = piece(i + 1, mod(i + k, n_), mod(i + k, n_) + 1);
    if (in_place && r > 0) send.offset -= spec_.scratch_below;
    out.sends.push_back(send);
    const int d = mod(i - 1 + k, n_);
    const int from = mod(i - 1 - r, n_);
    Transfer in = d == i ? piece(i - 1, from, from + 1) : piece(i - 1, d, d + 1);
    if (d == i && !in_place) in.offset += spec_.recv_base;
    if (d != i && in_place) in.offset -= spec_.scratch_below;
    out.recvs.push_back(in);
  }
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

}  // namespace

std::unique_ptr<Program> make_ring(const ProgramSpec& spec) {
  return std::make_unique<RingProgram>(spec);
}

}  // namespace fabricsim::algorithms
