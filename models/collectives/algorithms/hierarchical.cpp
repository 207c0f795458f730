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
/// all-gather back down, with each dimension's own algorithm; or, with
/// LevelData::kWhole, an all-reduce of the whole chunk in each dimension.
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
    const std::size_t top = top_level(*s.dims);
    // Up: reduce-scatter per dimension.
    std::vector<std::size_t> ascending;
    for (std::size_t d = 0; d < s.dims->size(); ++d) ascending.push_back(d);
    for (const std::size_t d : s.level_order.empty() ? ascending : s.level_order) {
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
      sub.chunk = s.chunk;
      sub.chunks = s.chunks;
      sub.direct_window = s.direct_window;
      const std::string label = "dim " + std::to_string(d) + " ";
      if (s.level_data == LevelData::kWhole) {
        // ASTRA-sim's baseline: the level all-reduces the whole chunk.
        sub.type = CollectiveType::kAllReduce;
        sub.segments = current.split(0, dim.size, s.element);
        if (dim.algorithm == AlgorithmKind::kDoubleBinaryTree) sub.variant = kTreeByChunk;
        ph.up = make_program(sub);
        ph.up_name = label + "all-reduce (" + std::string(to_string(sub.algorithm)) + ")";
        phases_.push_back(std::move(ph));
        continue;
      }
      current = sub.segments;
      keep = coord;
      if (dim.algorithm == AlgorithmKind::kDoubleBinaryTree) {
        // A tree has no reduce-scatter: the top level all-reduces the part
        // the levels below left this NPU (NCCL's NVLS-tree and tree).
        if (d != top) not_applicable(s, hierarchical_levels_problem(*s.dims));
        sub.type = CollectiveType::kAllReduce;
        sub.variant = kTreeByChunk;
        ph.up = make_program(sub);
        ph.up_name = label + "all-reduce (" + std::string(to_string(sub.algorithm)) + ")";
        phases_.push_back(std::move(ph));
        continue;
      }
      ph.up = make_program(sub);
      sub.type = CollectiveType::kAllGather;
      ph.down = make_program(sub);
      ph.up_name = label + "reduce-scatter (" + to_string(sub.algorithm) + ")";
      ph.down_name = label + "all-gather (" + to_string(sub.algorithm) + ")";
      phases_.push_back(std::move(ph));
    }
    for (const Phase& ph : phases_) up_rounds_ += ph.up->num_rounds();
  }

  std::uint32_t num_rounds() const override {
    std::uint32_t n = up_rounds_;
    for (const Phase& ph : phases_) n += ph.down ? ph.down->num_rounds() : 0;
    return n;
  }

  const char* phase(std::uint32_t r) const override {
    const Where w = locate(r);
    if (!w.program) return "all-gather";
    return w.up ? phases_[w.phase].up_name.c_str() : phases_[w.phase].down_name.c_str();
  }

  // Each level's reduce-scatter and all-gather is a stage of its own: they
  // use different links (or the same links in the other direction), so
  // chunks overlap level by level as NCCL's pipelined algorithms do. Under
  // Themis chunks take the levels in different orders, so they run free
  // (the engine's active-chunk limit still holds).
  std::uint32_t stages() const override {
    if (spec_.themis) return 1;
    const bool down = spec_.level_data == LevelData::kPart;  // whole levels have no all-gathers coming down
    return static_cast<std::uint32_t>((down ? 2 : 1) * phases_.size());
  }
  std::uint32_t stage(std::uint32_t r) const override { return spec_.themis ? 0 : locate(r).stage; }

  void round(std::uint32_t r, Round& out) const override {
    const Where w = locate(r);
    out.clear();
    if (!w.program) return;
    w.program->round(r - w.offset, out);
    // A phase's own tags count its own rounds.
    for (TransferList* list : {&out.sends, &out.recvs}) {
      for (Transfer& t : *list) {
        if (t.tag != Transfer::kSameRound) t.tag += w.offset;
      }
    }
  }

 private:
  struct Phase {
    std::shared_ptr<std::vector<int>> ranks;
    std::unique_ptr<Program> up, down;
    std::string up_name, down_name;  // "dim 0 reduce-scatter (ring)"...
  };
  /// Where round r falls: going up through the phases' reduce-scatters,
  /// then down through their all-gathers in reverse.
  struct Where {
    const Program* program = nullptr;
    std::uint32_t offset = 0;  // rounds before this phase
    std::uint32_t stage = 0;
    std::size_t phase = 0;
    bool up = true;
  };
  Where locate(std::uint32_t r) const {
    Where w;
    for (std::size_t i = 0; i < phases_.size(); ++i, ++w.stage) {
      const std::uint32_t n = phases_[i].up->num_rounds();
      if (r - w.offset < n) {
        w.program = phases_[i].up.get();
        w.phase = i;
        return w;
      }
      w.offset += n;
    }
    for (std::size_t i = phases_.size(); i-- > 0; ++w.stage) {
      if (!phases_[i].down) continue;  // the top level all-reduced on the way up
      const std::uint32_t n = phases_[i].down->num_rounds();
      if (r - w.offset < n) {
        w.program = phases_[i].down.get();
        w.phase = i;
        w.up = false;
        return w;
      }
      w.offset += n;
    }
    w.stage = 0;
    return w;
  }

  ProgramSpec spec_;
  std::vector<Phase> phases_;
  std::uint32_t up_rounds_ = 0;
};

}  // namespace

std::unique_ptr<Program> make_hierarchical(const ProgramSpec& spec) {
  return std::make_unique<HierarchicalProgram>(spec);
}

std::vector<std::vector<std::size_t>> themis_level_orders(const std::vector<Dimension>& dims, std::uint32_t chunks,
                                                          LevelData level_data) {
  std::vector<std::size_t> order;
  for (std::size_t d = 0; d < dims.size(); ++d) order.push_back(d);
  bool tree = false;
  for (const auto& d : dims) tree |= d.algorithm == AlgorithmKind::kDoubleBinaryTree && d.size > 1;
  std::vector<std::vector<std::size_t>> orders;
  std::vector<double> load(dims.size(), 0);
  for (std::uint32_t c = 0; c < chunks; ++c) {
    if (!tree) {
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return load[a] < load[b]; });
    }
    double data = 1;  // of the chunk, entering the next level
    for (const std::size_t d : order) {
      const double n = dims[d].size, bw = dims[d].bandwidth > 0 ? dims[d].bandwidth : 1;
      load[d] += 2 * data * (n - 1) / n / bw;
      if (level_data == LevelData::kPart) data /= n;
    }
    orders.push_back(order);
  }
  return orders;
}

}  // namespace fabricsim::algorithms

namespace fabricsim {
std::size_t top_level(const std::vector<Dimension>& dims) {
  std::size_t top = dims.size();
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d].size > 1) top = d;
  }
  return top;
}

std::string hierarchical_levels_problem(const std::vector<Dimension>& dims) {
  const std::size_t top = top_level(dims);
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d].size > 1 && d != top && dims[d].algorithm == AlgorithmKind::kDoubleBinaryTree) {
      return "double_binary_tree runs only in the last dimension (it has no reduce-scatter)";
    }
  }
  return "";
}
}  // namespace fabricsim
