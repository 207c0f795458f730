// Direct: every rank talks to every other at once.
#include "models/collectives/algorithms/program_base.h"

namespace fabricsim::algorithms {

namespace {

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
    // Each rank starts with its right neighbour (rank i sends to i+1, i+2,
    // ...), as NCCL and ASTRA-sim do: were every rank to start with rank 0,
    // all the first messages would queue at one receiver.
    for (int k = 1; k < n_; ++k) {
      const int j = (i + k) % n_;
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

}  // namespace

std::unique_ptr<Program> make_direct(const ProgramSpec& spec) {
  return std::make_unique<DirectProgram>(spec);
}

}  // namespace fabricsim::algorithms
