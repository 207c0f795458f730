// The algorithms: each turns (collective type, group, my index, chunk layout)
// into the rounds this NPU runs. Rounds are generated when needed, never
// stored, so a 1,024-rank ring costs no memory per step.
//
// Round numbers must agree between a sender and its receiver (messages are
// matched by chunk, round and sender), so every rank numbers the rounds of a
// program the same way, leaving rounds empty where it has nothing to do.
//
// What each algorithm does with group sizes that do not suit it:
// - ring, direct: any size.
// - halving_doubling: a power of two p <= n works recursively; the n - p
//   extra ranks first hand their data to a partner and get the result back at
//   the end (one extra round each way).
// - double_binary_tree: any size; the two trees are a heap-ordered binary tree
//   and its mirror image, so a leaf of one is an inner node of the other.
// - hierarchical: the group must be the whole platform, laid out in the
//   platform's dimensions.
// - in_switch: any size; the group must be on one fabric whose switches have
//   reduction units (every member on the same switches, or each on one leaf
//   of a tree of switches that all have units).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/collectives/algorithms/program_base.h"

namespace fabricsim {

namespace algorithms {

void not_applicable(const ProgramSpec& s, const std::string& why) {
  throw std::invalid_argument(std::string("the ") + to_string(s.algorithm) + " algorithm does not apply to " +
                              to_string(s.type) + (why.empty() ? "" : ": " + why));
}

Transfer ProgramBase::member_block(int a, int b) const {
  if (b != a + 1) throw std::logic_error("a ring in channels moves one segment or all of them");
  const int block = member(a);
  return spec_.segments.range(block, block + 1);
}

}  // namespace algorithms

namespace {

using Factory = std::unique_ptr<Program> (*)(const ProgramSpec&);

/// The algorithms by kind: a new one adds its file in algorithms/, its
/// AlgorithmKind and name (collective.h, collective.cpp), and a line here.
constexpr Factory kFactories[] = {
    algorithms::make_ring,                // kRing
    algorithms::make_direct,              // kDirect
    algorithms::make_halving_doubling,    // kHalvingDoubling
    algorithms::make_double_binary_tree,  // kDoubleBinaryTree
    algorithms::make_hierarchical,        // kHierarchical
    algorithms::make_in_switch,           // kInSwitch
    algorithms::make_pat,                 // kPat
};
static_assert(sizeof kFactories / sizeof kFactories[0] == static_cast<std::size_t>(AlgorithmKind::kPat) + 1,
              "one factory per AlgorithmKind, in order");

}  // namespace

std::unique_ptr<Program> make_program(const ProgramSpec& spec) {
  if (!spec.ranks || spec.ranks->empty()) throw std::invalid_argument("collective over an empty group");
  if (spec.type == CollectiveType::kAllToAll && spec.algorithm != AlgorithmKind::kDirect &&
      spec.algorithm != AlgorithmKind::kRing && spec.algorithm != AlgorithmKind::kHierarchical) {
    algorithms::not_applicable(spec, "all-to-all runs with direct, ring or hierarchical");
  }
  if ((spec.type == CollectiveType::kGather || spec.type == CollectiveType::kScatter) &&
      spec.algorithm != AlgorithmKind::kDirect) {
    algorithms::not_applicable(spec, std::string(to_string(spec.type)) + " runs with direct");
  }
  const auto kind = static_cast<std::size_t>(spec.algorithm);
  if (kind >= sizeof kFactories / sizeof kFactories[0]) algorithms::not_applicable(spec);
  return kFactories[kind](spec);
}

namespace {

/// Members per node when the plan is a ring whose channels can enter the
/// nodes at different NPUs: several channels, a type whose blocks the ring
/// may relabel (every member's segment follows its place in the ring), and a
/// group that visits each of two or more nodes (blocks of the first
/// dimension's size) once, as a run of the same count of members at the same
/// places in every node, so that a channel crossing from place l of one node
/// lands on place l of the next: one rail. A data-parallel group of a
/// tensor-parallel job (every second NPU) is such a group, as is the whole
/// platform. Else 0: one ring, the group's order.
int ring_node_size(const ProgramPlan& plan) {  // effective_channels's rule
  if (plan.algorithm != AlgorithmKind::kRing || plan.channels <= 1 || !plan.dims || plan.dims->size() < 2) return 0;
  switch (plan.type) {
    case CollectiveType::kAllReduce:
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
    case CollectiveType::kAllGather:
      break;
    default:
      return 0;
  }
  const Dimension& node = plan.dims->front();
  if (node.stride != 1 || node.size <= 1) return 0;
  const auto& ranks = *plan.ranks;
  const int per_node = node.size;
  // The first node's run sets the count and the places within a node.
  std::size_t g = 0;
  while (g < ranks.size() && ranks[g] / per_node == ranks[0] / per_node) ++g;
  if (g < 2 || g == ranks.size() || ranks.size() % g != 0) return 0;
  int previous_node = -1;
  for (std::size_t start = 0; start < ranks.size(); start += g) {
    const int node_of_run = ranks[start] / per_node;
    if (node_of_run <= previous_node) return 0;  // a node twice, or out of order
    previous_node = node_of_run;
    for (std::size_t k = 0; k < g; ++k) {
      const int r = ranks[start + k];
      if (r / per_node != node_of_run || r % per_node != ranks[k] % per_node) return 0;
    }
  }
  return static_cast<int>(g);
}

}  // namespace

std::uint32_t effective_channels(const ProgramPlan& plan) {
  return ring_node_size(plan) > 0 ? plan.channels : 1;
}

std::vector<std::unique_ptr<Program>> make_programs(const ProgramPlan& plan, int me) {
  if (!plan.ranks || plan.ranks->empty()) throw std::invalid_argument("collective over an empty group");
  const int n = static_cast<int>(plan.ranks->size());
  // Each chunk runs on every channel, its data split among them: programs
  // chunk by chunk, channel by channel within a chunk.
  const std::uint32_t channels = effective_channels(plan);
  const std::uint32_t chunks = std::max<std::uint32_t>(1, plan.chunks) * channels;
  const int node_size = ring_node_size(plan);
  // The double binary tree runs each tree as a chunk of its own.
  const std::uint32_t per_chunk = plan.algorithm == AlgorithmKind::kDoubleBinaryTree ? 2 : 1;
  std::vector<std::unique_ptr<Program>> programs;
  programs.reserve(chunks * per_chunk);
  // Themis's orders depend on every chunk before: computed once, not per chunk.
  std::vector<std::vector<std::size_t>> level_orders;
  if (plan.themis && plan.algorithm == AlgorithmKind::kHierarchical && plan.dims) {
    level_orders = algorithms::themis_level_orders(*plan.dims, chunks, plan.level_data);
  }
  for (std::uint32_t k = 0; k < chunks * per_chunk; ++k) {
    const std::uint32_t c = k / per_chunk;
    ProgramSpec ps;
    ps.type = plan.type;
    ps.algorithm = plan.algorithm;
    ps.ranks = plan.ranks;
    ps.me = me;
    ps.root = plan.root;
    ps.segments = chunk_segments(plan.type, plan.bytes, n, c, chunks, plan.element);
    ps.recv_base = plan.bytes;
    ps.element = plan.element;
    ps.dims = plan.dims;
    ps.variant = static_cast<int>(k % per_chunk);
    ps.sizes = plan.sizes;
    ps.chunk = c;
    ps.chunks = chunks;
    ps.in_switch = plan.in_switch;
    ps.themis = plan.themis;
    ps.level_data = plan.level_data;
    ps.direct_window = plan.direct_window;
    ps.node_size = node_size;
    ps.channel = c % channels;
    if (!level_orders.empty()) ps.level_order = level_orders[c];
    programs.push_back(make_program(ps));
  }
  return programs;
}

}  // namespace fabricsim
