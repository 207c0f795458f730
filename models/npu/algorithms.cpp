// The algorithms: each turns (collective type, group, my index, chunk layout)
// into the rounds this NPU runs. Rounds are generated when needed, never
// stored, so a 1,024-rank ring costs no memory per step.
#include <stdexcept>
#include <string>

#include "models/npu/collective.h"

namespace fabricsim {

namespace {

int mod(int a, int n) { return ((a % n) + n) % n; }

/// Ring algorithms: every rank sends to its right neighbour and receives from
/// its left, one segment per round.
class RingProgram : public Program {
 public:
  explicit RingProgram(const ProgramSpec& s) : spec_(s), n_(static_cast<int>(s.ranks->size())) {}

  std::uint32_t num_rounds() const override {
    if (n_ <= 1) return 0;
    switch (spec_.type) {
      case CollectiveType::kAllReduce: return static_cast<std::uint32_t>(2 * (n_ - 1));
      default: return static_cast<std::uint32_t>(n_ - 1);
    }
  }

  void round(std::uint32_t r, Round& out) const override {
    out.clear();
    const int i = spec_.me;
    const int right = (*spec_.ranks)[static_cast<std::size_t>(mod(i + 1, n_))];
    const int left = (*spec_.ranks)[static_cast<std::size_t>(mod(i - 1, n_))];
    const int rr = static_cast<int>(r);
    int send_seg = 0, recv_seg = 0;
    bool reduce = false;
    switch (spec_.type) {
      case CollectiveType::kAllReduce:
        if (rr < n_ - 1) {  // reduce-scatter phase: rank i ends owning segment i+1
          send_seg = i - rr;
          recv_seg = i - rr - 1;
          reduce = true;
        } else {  // all-gather phase
          const int q = rr - (n_ - 1);
          send_seg = i + 1 - q;
          recv_seg = i - q;
        }
        break;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:  // rank i ends owning segment i
        send_seg = i - rr - 1;
        recv_seg = i - rr - 2;
        reduce = true;
        break;
      case CollectiveType::kAllGather:  // rank i starts with segment i
        send_seg = i - rr;
        recv_seg = i - rr - 1;
        break;
      default:
        throw std::logic_error("ring program built for an unsupported type");
    }
    send_seg = mod(send_seg, n_);
    recv_seg = mod(recv_seg, n_);
    out.sends.push_back(Transfer{right, spec_.segments.offset(send_seg), spec_.segments.length(send_seg), false});
    out.recvs.push_back(Transfer{left, spec_.segments.offset(recv_seg), spec_.segments.length(recv_seg), reduce});
  }

 private:
  ProgramSpec spec_;
  int n_;
};

[[noreturn]] void not_supported(const ProgramSpec& s) {
  throw std::invalid_argument(std::string("the ") + to_string(s.algorithm) + " algorithm does not support " +
                              to_string(s.type) + " (not supported yet)");
}

}  // namespace

std::unique_ptr<Program> make_program(const ProgramSpec& spec) {
  if (!spec.ranks || spec.ranks->empty()) throw std::invalid_argument("collective over an empty group");
  switch (spec.algorithm) {
    case AlgorithmKind::kRing:
      switch (spec.type) {
        case CollectiveType::kAllReduce:
        case CollectiveType::kReduceScatter:
        case CollectiveType::kReduceScatterBlock:
        case CollectiveType::kAllGather:
          return std::make_unique<RingProgram>(spec);
        default:
          not_supported(spec);
      }
    default:
      not_supported(spec);
  }
}

}  // namespace fabricsim
