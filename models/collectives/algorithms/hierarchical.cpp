// Hierarchical all-reduce over a multi-dimensional platform.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/collectives/algorithms/program_base.h"

namespace fabricsim::algorithms {

namespace {

/// All-reduce over a multi-dimensional platform: reduce-scatter within each
/// dimension going up (each on the part the previous one left this NPU),
/// all-gather back down, with each dimension's own algorithm.
class HierarchicalProgram : public Program {
 public:
  explicit HierarchicalProgram(const ProgramSpec& s) : spec_(s) {
    if (s.type != CollectiveType::kAllReduce) not_applicable(s, "it is an all-reduce algorithm");
    if (!s.dims || s.dims->empty()) not_applicable(s, "the platform has no dimensions");
    std::int64_t total = 1;  // wide: dimensions that do not fit the group must not wrap into it
    for (const auto& d : *s.dims) total = std::min<std::int64_t>(total * d.size, std::int64_t{1} << 40);
    if (total != static_cast<std::int64_t>(s.ranks->size())) {
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

}  // namespace

std::unique_ptr<Program> make_hierarchical(const ProgramSpec& spec) {
  return std::make_unique<HierarchicalProgram>(spec);
}

}  // namespace fabricsim::algorithms
