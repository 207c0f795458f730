// Recursive halving and doubling, with a fold for group sizes that are not powers of two.
#include "models/collectives/algorithms/program_base.h"

namespace fabricsim::algorithms {

namespace {

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
      case CollectiveType::kAllReduce:
        return fold + 2 * static_cast<std::uint32_t>(k_) + fold;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
      case CollectiveType::kAllGather:
        return fold + static_cast<std::uint32_t>(k_) + fold;
      case CollectiveType::kBroadcast:
      case CollectiveType::kReduce:
      case CollectiveType::kBarrier:
        return static_cast<std::uint32_t>(levels_);
      default:
        not_applicable(spec_, "use direct (or ring) for it");
    }
  }

  const char* phase(std::uint32_t r) const override {
    switch (spec_.type) {
      case CollectiveType::kBroadcast:
      case CollectiveType::kReduce:
        return "binomial tree";
      case CollectiveType::kBarrier:
        return "dissemination";
      case CollectiveType::kAllReduce:
        return r < num_rounds() / 2 ? "halving" : "doubling";
      case CollectiveType::kAllGather:
        return "doubling";
      default:
        return "halving";
    }
  }

  void round(std::uint32_t r, Round& out) const override {
    out.clear();
    switch (spec_.type) {
      case CollectiveType::kBroadcast:
        return binomial_broadcast(static_cast<int>(r), out);
      case CollectiveType::kReduce:
        return binomial_reduce(static_cast<int>(r), out);
      case CollectiveType::kBarrier:
        return dissemination(static_cast<int>(r), out);
      default:
        break;
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
  int lo(int q) const { return q < e_ ? 2 * q : q + e_; }  // first segment participant q owns
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

}  // namespace

std::unique_ptr<Program> make_halving_doubling(const ProgramSpec& spec) {
  auto p = std::make_unique<HalvingDoublingProgram>(spec);
  p->num_rounds();  // refuses types it does not support
  return p;
}

}  // namespace fabricsim::algorithms
