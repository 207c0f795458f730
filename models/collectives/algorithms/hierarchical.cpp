// Hierarchical all-reduce, reduce-scatter and all-gather over a
// multi-dimensional platform.
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
/// Reduce-scatter, all-gather and all-to-all run one phase per dimension, as
/// ASTRA-sim runs them: reduce-scatter and all-to-all from the lowest
/// dimension up, all-gather from the highest down.
class HierarchicalProgram : public Program {
 public:
  explicit HierarchicalProgram(const ProgramSpec& s) : spec_(s) {
    const bool scatter = s.type == CollectiveType::kReduceScatter || s.type == CollectiveType::kReduceScatterBlock;
    if (s.type != CollectiveType::kAllReduce && !scatter && s.type != CollectiveType::kAllGather &&
        s.type != CollectiveType::kAllToAll) {
      not_applicable(s, "it runs all-reduce, reduce-scatter, all-gather and all-to-all");
    }
    if (s.sizes) not_applicable(s, "all-to-all-v has no phase per dimension (its blocks differ in size)");
    if (!s.dims || s.dims->empty()) not_applicable(s, "the platform has no dimensions");
    std::int64_t total = 1;  // wide: dimensions that do not fit the group must not wrap into it
    for (const auto& d : *s.dims) total = std::min<std::int64_t>(total * d.size, std::int64_t{1} << 40);
    if (total != static_cast<std::int64_t>(s.ranks->size())) {
      not_applicable(s, "it needs the group to be the whole " + std::to_string(total) + "-NPU platform");
    }
    if (s.type == CollectiveType::kAllReduce) {
      build_all_reduce(s);
    } else {
      build_per_dimension(s, scatter || s.type == CollectiveType::kAllToAll);
    }
    for (const Phase& ph : phases_) {
      up_rounds_ += ph.up->num_rounds();
      down_ |= ph.down != nullptr;
    }
  }

 private:
  /// Reduce-scatter, all-gather or all-to-all, a phase per dimension. Before
  /// dimension d (of stride s_d, the product of the sizes below, ASTRA-sim's
  /// layout) a reduce-scatter or all-gather works on every block whose
  /// coordinates below d are the NPU's: blocks p + s_d x m + s_(d+1) x j,
  /// where p is its own block's part below d. The member at coordinate m of
  /// d takes (reduce-scatter) or gives (all-gather) the runs of its m:
  /// strided runs, one segment each, which ring and direct send one at a
  /// time. An all-to-all works in the receive half, which starts as a copy
  /// of the send half (data_check.cpp): in dimension d, slot x holds what
  /// goes to the NPU whose coordinate d is x's, so member m gets the slots
  /// whose coordinate d is m and puts what it gets from member k in the
  /// slots whose coordinate d is k, where its own went out (direct, all at
  /// once: a send's bytes are taken when it is posted; a ring relays
  /// through the send half, ring.cpp). After the last dimension slot x
  /// holds what NPU x sent this one.
  void build_per_dimension(const ProgramSpec& s, bool ascending) {
    const auto& dims = *s.dims;
    const int me_rank = (*s.ranks)[static_cast<std::size_t>(s.me)];
    for (std::size_t i = 0; i < s.ranks->size(); ++i) {
      if ((*s.ranks)[i] != static_cast<int>(i)) {
        not_applicable(s,
                       "its " + std::string(to_string(s.type)) + " needs the group to be the platform's NPUs in order");
      }
    }
    std::vector<std::uint64_t> stride_below(dims.size() + 1, 1);  // s_d
    for (std::size_t d = 0; d < dims.size(); ++d) {
      stride_below[d + 1] = stride_below[d] * static_cast<std::uint64_t>(dims[d].size);
      if (static_cast<std::uint64_t>(dims[d].stride) != stride_below[d] && dims[d].size > 1) {
        not_applicable(s, "its " + std::string(to_string(s.type)) +
                              " needs dimension d to group NPUs the product "
                              "of the sizes below it apart (dimension " +
                              std::to_string(d) + " has stride " + std::to_string(dims[d].stride) + ")");
      }
    }
    const std::uint64_t n = stride_below[dims.size()];
    const bool all_to_all = s.type == CollectiveType::kAllToAll;
    std::vector<std::size_t> order;
    for (std::size_t d = 0; d < dims.size(); ++d) order.push_back(d);
    if (!ascending) std::reverse(order.begin(), order.end());
    for (const std::size_t d : order) {
      const Dimension& dim = dims[d];
      if (dim.size == 1) continue;
      const bool odd_window = dim.algorithm == AlgorithmKind::kDirect && s.direct_window % 2 == 1 &&
                              s.direct_window < static_cast<std::uint32_t>(dim.size - 1);
      if (all_to_all &&
          ((dim.algorithm != AlgorithmKind::kDirect && dim.algorithm != AlgorithmKind::kRing) || odd_window)) {
        // In place, a direct window takes peers in pairs (direct.cpp).
        not_applicable(s, std::string("a level of its all-to-all runs ring, or direct with all peers at once or an "
                                      "even window (it works in place), not ") +
                              to_string(dim.algorithm) +
                              (odd_window ? " with a window of " + std::to_string(s.direct_window) : std::string()) +
                              " (dimension " + std::to_string(d) + ")");
      }
      if (!all_to_all && dim.algorithm != AlgorithmKind::kRing && dim.algorithm != AlgorithmKind::kDirect) {
        not_applicable(s, std::string("a level of its reduce-scatter or all-gather runs ring or direct, not ") +
                              to_string(dim.algorithm) + " (dimension " + std::to_string(d) + ")");
      }
      std::uint64_t below = 0;  // p: my block's part below d
      for (std::size_t k = 0; k < d; ++k) {
        below += static_cast<std::uint64_t>(me_rank / dims[k].stride % dims[k].size) * stride_below[k];
      }
      Phase ph;
      const int coord = me_rank / dim.stride % dim.size;
      ph.ranks = std::make_shared<std::vector<int>>();
      for (int x = 0; x < dim.size; ++x) ph.ranks->push_back(me_rank + (x - coord) * dim.stride);
      ProgramSpec sub;
      sub.type = s.type;
      sub.algorithm = dim.algorithm;
      sub.ranks = ph.ranks.get();
      sub.me = coord;
      sub.element = s.element;
      sub.chunk = s.chunk;
      sub.chunks = s.chunks;
      sub.direct_window = s.direct_window;
      Segments& seg = sub.segments;
      seg = s.segments;  // the chunk's slice of every block: `base` bytes, blocks `stride` apart
      seg.n = dim.size;
      if (all_to_all) {
        // Member m's slots: a + m s_d + b s_(d+1) for a below s_d and every b.
        // One level of runs when a or b takes one value, or when the runs of
        // consecutive a touch (whole blocks).
        const std::uint64_t inner = stride_below[d], outer = n / stride_below[d + 1];
        const bool touching = s.segments.base == s.segments.stride || s.segments.base == 0;
        if (inner > 1 && outer > 1 && !touching) {
          not_applicable(s, "its all-to-all phase in dimension " + std::to_string(d) +
                                " (neither the lowest nor the highest) sends runs of blocks that are strided in turn; "
                                "a transfer takes one stride, so each chunk must hold whole blocks: give one chunk "
                                "(preferred-dataset-splits 1; or --chunks 1 with collectives.pipeline_chunk 0, "
                                "which otherwise adds chunks to large hierarchical collectives)");
        }
        seg.first = s.recv_base + s.segments.offset(0);
        seg.stride = inner * s.segments.stride;
        if (inner > 1 && (outer == 1 || touching)) {
          seg.base = (touching ? inner : 1) * s.segments.base;
          seg.pieces = static_cast<std::uint32_t>(touching ? outer : inner);
          seg.piece_stride = touching ? stride_below[d + 1] * s.segments.stride : s.segments.stride;
        } else {
          seg.pieces = static_cast<std::uint32_t>(outer);
          seg.piece_stride = stride_below[d + 1] * s.segments.stride;
        }
        sub.recv_base = 0;                // in place
        sub.scratch_below = s.recv_base;  // the send half: a ring's relayed blocks wait there
      } else {
        seg.first = s.segments.offset(0) + below * s.segments.stride;
        seg.stride = stride_below[d] * s.segments.stride;
        seg.pieces = static_cast<std::uint32_t>(n / stride_below[d + 1]);
        seg.piece_stride = stride_below[d + 1] * s.segments.stride;
      }
      ph.up = make_program(sub);
      ph.up_name = "dim " + std::to_string(d) + " " + to_string(s.type) + " (" + to_string(dim.algorithm) + ")";
      phases_.push_back(std::move(ph));
    }
  }

  void build_all_reduce(const ProgramSpec& s) {
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
      // The top level all-reduces the part the levels below left this NPU
      // where that is one operation: a tree has no reduce-scatter (NCCL's
      // NVLS-tree and tree), and switches that reduce by push send each
      // member the whole result of one contribution (NCCL's NVLS with
      // CollNet over SHARP), where a reduce-scatter and an all-gather would
      // carry half as much again up the top level's links. Levels taken in
      // Themis's order may end below the top, so there an in-switch top
      // keeps both. So does a pulled (NVLS) top, which moves the same bytes
      // either way: its all-reduce takes a round per piece of the member's
      // part, and parts one element apart would give the members of a
      // level below different round numbers for their all-gathers.
      const bool in_switch_top = d == top && dim.algorithm == AlgorithmKind::kInSwitch && s.level_order.empty() &&
                                 s.in_switch && !s.in_switch->in_switch_plan(*ph.ranks, coord).pull;
      if (dim.algorithm == AlgorithmKind::kDoubleBinaryTree || in_switch_top) {
        if (d != top) not_applicable(s, hierarchical_levels_problem(*s.dims));
        sub.type = CollectiveType::kAllReduce;
        if (dim.algorithm == AlgorithmKind::kDoubleBinaryTree) sub.variant = kTreeByChunk;
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
  }

 public:
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
    if (themis_free()) return 1;
    return static_cast<std::uint32_t>((down_ ? 2 : 1) * phases_.size());  // whole levels: no all-gathers coming down
  }
  std::uint32_t stage(std::uint32_t r) const override { return themis_free() ? 0 : locate(r).stage; }
  /// A level's own bound (a pulled in-switch level's pipeline depth).
  std::uint32_t stage_limit(std::uint32_t s) const override {
    if (themis_free()) return 0;
    const std::size_t n = phases_.size();
    if (s < n) return phases_[s].up->stage_limit(0);
    const std::size_t i = 2 * n - 1 - s;  // going down, the phases in reverse (locate())
    return i < n && phases_[i].down ? phases_[i].down->stage_limit(0) : 0;
  }

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

  /// Themis orders an all-reduce's levels chunk by chunk; such chunks run free.
  bool themis_free() const { return spec_.themis && spec_.type == CollectiveType::kAllReduce; }

  ProgramSpec spec_;
  std::vector<Phase> phases_;
  std::uint32_t up_rounds_ = 0;
  bool down_ = false;  // some phase comes back down (all-reduce by reduce-scatter and all-gather)
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
