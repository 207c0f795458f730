// The collective library on its own: every algorithm x collective type x
// group size runs in the in-memory executor (no SystemC, no fabric), and
// each run must
// - finish, with every send taken by exactly one receive of the same size;
// - take the number of rounds its algorithm's formula gives;
// - move the bytes the algorithm's volume formula gives, where it has one;
// - leave every member's buffer as the collective defines it.
// Which types an algorithm runs is asserted too: the others must be refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "models/collectives/program_executor.h"

using namespace fabricsim;

namespace {

constexpr CollectiveType kAllTypes[] = {
    CollectiveType::kAllReduce, CollectiveType::kReduce,        CollectiveType::kAllGather,
    CollectiveType::kGather,    CollectiveType::kScatter,       CollectiveType::kBroadcast,
    CollectiveType::kAllToAll,  CollectiveType::kReduceScatter, CollectiveType::kReduceScatterBlock,
    CollectiveType::kBarrier};
constexpr int kSizes[] = {2, 3, 5, 8, 16};

/// An algorithm as the tests run it: its kind and what the platform offers it.
struct Variant {
  std::string name;
  AlgorithmKind kind;
  std::set<CollectiveType> types;  // the types it must run; the others must be refused
  std::function<std::unique_ptr<IdealReductionUnits>()> units = [] { return nullptr; };
};

const std::set<CollectiveType> kRooted = {CollectiveType::kReduce, CollectiveType::kBroadcast};
const std::set<CollectiveType> kRingTypes = {CollectiveType::kAllReduce,     CollectiveType::kReduce,
                                             CollectiveType::kAllGather,     CollectiveType::kBroadcast,
                                             CollectiveType::kReduceScatter, CollectiveType::kReduceScatterBlock,
                                             CollectiveType::kBarrier};
// The ring also relays all-to-all, a block a hop at a time (ASTRA-sim's ring all-to-all).
std::set<CollectiveType> ring_types() {
  auto t = kRingTypes;
  t.insert(CollectiveType::kAllToAll);
  return t;
}
const std::set<CollectiveType> kInSwitchTypes = {CollectiveType::kAllReduce,     CollectiveType::kReduce,
                                                 CollectiveType::kAllGather,     CollectiveType::kBroadcast,
                                                 CollectiveType::kReduceScatter, CollectiveType::kReduceScatterBlock};

std::vector<Variant> variants() {
  return {
      {"ring", AlgorithmKind::kRing, ring_types()},
      {"direct", AlgorithmKind::kDirect, std::set<CollectiveType>(std::begin(kAllTypes), std::end(kAllTypes))},
      {"halving_doubling", AlgorithmKind::kHalvingDoubling, kRingTypes},
      {"double_binary_tree", AlgorithmKind::kDoubleBinaryTree, {CollectiveType::kAllReduce, CollectiveType::kBarrier}},
      {"pat",
       AlgorithmKind::kPat,
       {CollectiveType::kAllGather, CollectiveType::kReduceScatter, CollectiveType::kReduceScatterBlock}},
      // NVSwitch-like: four units weighted 5/4/4/5, pieces of 64 B so that
      // pulls and multicasts pipeline even on small buffers.
      {"in_switch_pull", AlgorithmKind::kInSwitch, kInSwitchTypes,
       [] {
         return std::make_unique<IdealReductionUnits>(std::vector<std::uint64_t>{5, 4, 4, 5}, true, 64, 2);
       }},
      {"in_switch_push", AlgorithmKind::kInSwitch, kInSwitchTypes,
       [] {
         return std::make_unique<IdealReductionUnits>(std::vector<std::uint64_t>{1, 1}, false);
       }},
  };
}

/// Element i of member r's input: distinct across ranks and elements, so a
/// lost, doubled or misplaced contribution changes some sum.
std::uint32_t input(int r, std::uint64_t i) {
  return static_cast<std::uint32_t>((r + 1) * 1000003u + i * 7919u);
}

/// n buffers of `size` bytes, member m's first `filled` bytes (all, by
/// default) holding input(m, 0), input(m, 1), ... as 32-bit words.
std::vector<std::vector<std::uint8_t>> inputs(int n, std::uint64_t size, std::uint64_t filled = ~std::uint64_t{0}) {
  std::vector<std::vector<std::uint8_t>> buffers(static_cast<std::size_t>(n), std::vector<std::uint8_t>(size));
  for (int m = 0; m < n; ++m) {
    for (std::uint64_t i = 0; i < std::min(size, filled) / 4; ++i) {
      const std::uint32_t x = input(m, i);
      std::memcpy(buffers[static_cast<std::size_t>(m)].data() + 4 * i, &x, 4);
    }
  }
  return buffers;
}

std::uint32_t word(const std::vector<std::uint8_t>& b, std::uint64_t i) {
  std::uint32_t v = 0;
  std::memcpy(&v, b.data() + 4 * i, 4);
  return v;
}

/// What element i of member m's buffer must hold at the end; nullopt where
/// the collective leaves it undefined. `bytes` is the collective's size.
std::optional<std::uint32_t> expected(CollectiveType type, int n, int root, int m, std::uint64_t bytes,
                                      std::uint64_t i) {
  const std::uint64_t elements = bytes / 4, block = bytes / static_cast<std::uint64_t>(n) / 4;
  auto sum = [&](std::uint64_t e) {
    std::uint32_t s = 0;
    for (int r = 0; r < n; ++r) s += input(r, e);
    return s;
  };
  const auto owner = [&](std::uint64_t e) { return static_cast<int>(e / block); };
  switch (type) {
    case CollectiveType::kAllReduce:
      return i < elements ? std::optional(sum(i)) : std::nullopt;
    case CollectiveType::kReduce:
      return m == root && i < elements ? std::optional(sum(i)) : std::nullopt;
    case CollectiveType::kBroadcast:
      return i < elements ? std::optional(input(root, i)) : std::nullopt;
    case CollectiveType::kBarrier:
      return std::nullopt;
    default:
      break;
  }
  if (type == CollectiveType::kAllToAll) {  // receive half: block j from member j's block m
    if (i < elements || i >= elements + block * static_cast<std::uint64_t>(n)) return std::nullopt;
    const std::uint64_t j = (i - elements) / block, within = (i - elements) % block;
    // A member's block for itself never crosses the fabric: the engine
    // copies it locally before the programs run (data_check.cpp).
    if (j == static_cast<std::uint64_t>(m)) return std::nullopt;
    return input(static_cast<int>(j), static_cast<std::uint64_t>(m) * block + within);
  }
  if (i >= block * static_cast<std::uint64_t>(n)) return std::nullopt;  // past the last whole block
  switch (type) {
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
      return owner(i) == m ? std::optional(sum(i)) : std::nullopt;
    case CollectiveType::kAllGather:
      return input(owner(i), i);
    case CollectiveType::kGather:
      return m == root ? std::optional(input(owner(i), i)) : std::nullopt;
    case CollectiveType::kScatter:
      return owner(i) == m ? std::optional(input(root, i)) : std::nullopt;
    default:
      return std::nullopt;
  }
}

/// Every element `plan` defines, on every member's buffer, holds what it
/// must; stops at the first that does not, naming it after `what`.
void expect_results(const ProgramPlan& plan, int n, const std::vector<std::vector<std::uint8_t>>& buffers,
                    const std::string& what) {
  const std::uint64_t words = working_bytes(plan.type, plan.bytes, n) / 4;
  for (int m = 0; m < n; ++m) {
    for (std::uint64_t i = 0; i < words; ++i) {
      const auto want = expected(plan.type, n, plan.root, m, plan.bytes, i);
      if (!want) continue;
      ASSERT_EQ(word(buffers[static_cast<std::size_t>(m)], i), *want) << what << "member " << m << " element " << i;
    }
  }
}

int log2_ceil(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}
int log2_floor(int n) {
  int k = 0;
  while ((2 << k) <= n) ++k;
  return k;
}

/// The rounds of one program, by the algorithm's formula; nullopt where the
/// count depends on the pieces (in-switch pull all-reduce).
std::optional<std::uint32_t> rounds_formula(const Variant& v, CollectiveType type, int n) {
  const auto u = [](int x) { return static_cast<std::uint32_t>(x); };
  const bool ar = type == CollectiveType::kAllReduce || type == CollectiveType::kBarrier;
  const bool rs_ag = type == CollectiveType::kReduceScatter || type == CollectiveType::kReduceScatterBlock ||
                     type == CollectiveType::kAllGather;
  switch (v.kind) {
    case AlgorithmKind::kRing:
      if (ar) return u(2 * (n - 1));       // reduce-scatter, then all-gather, n-1 steps each
      if (kRooted.count(type)) return 2u;  // a chain: receive, then pass on
      if (type == CollectiveType::kAllToAll) return u(n * (n - 1) / 2);  // one block relayed a hop a round
      return u(n - 1);
    case AlgorithmKind::kDirect:
      return type == CollectiveType::kAllReduce ? 2u : 1u;
    case AlgorithmKind::kHalvingDoubling: {
      const int fold = (1 << log2_floor(n)) == n ? 0 : 2;  // hand data to a partner and get it back
      if (type == CollectiveType::kAllReduce) return u(2 * log2_floor(n) + fold);
      if (rs_ag) return u(log2_floor(n) + fold);
      return u(log2_ceil(n));  // binomial trees, dissemination barrier
    }
    case AlgorithmKind::kDoubleBinaryTree:
      return 4u;  // receive, send up; receive, send down
    case AlgorithmKind::kPat:
      return u(log2_ceil(n));  // a step per tree level, any n
    case AlgorithmKind::kInSwitch: {
      const bool pull = v.name == "in_switch_pull";
      if (!pull) return 1u;
      if (type == CollectiveType::kAllReduce) return std::nullopt;
      if (type == CollectiveType::kReduceScatter || type == CollectiveType::kReduceScatterBlock) return 2u;
      return 1u;
    }
    default:
      return std::nullopt;
  }
}

/// Bytes a member sends to other members (not to units), summed over the
/// group, where the algorithm has a closed form for it.
std::optional<std::uint64_t> volume_formula(const Variant& v, CollectiveType type, int n, std::uint64_t bytes) {
  const auto un = static_cast<std::uint64_t>(n);
  const std::uint64_t block = bytes / un;
  const bool exact_split = bytes % (4 * un) == 0;
  if (v.kind == AlgorithmKind::kRing || v.kind == AlgorithmKind::kDirect || v.kind == AlgorithmKind::kPat) {
    switch (type) {
      case CollectiveType::kAllReduce:  // every member sends (n-1)/n of the buffer twice
        return exact_split ? std::optional(2 * (un - 1) * bytes) : std::nullopt;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
      case CollectiveType::kAllGather:
        return un * (un - 1) * block;
      case CollectiveType::kAllToAll:  // ring: a block for the member k places on travels k hops
        return v.kind == AlgorithmKind::kRing ? un * (un * (un - 1) / 2) * block : un * (un - 1) * block;
      case CollectiveType::kGather:
      case CollectiveType::kScatter:
        return (un - 1) * block;
      case CollectiveType::kBroadcast:
      case CollectiveType::kReduce:
        return (un - 1) * bytes;
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

/// Runs one (variant, type, n, chunks, bytes) and checks all of the above.
void check(const Variant& v, CollectiveType type, int n, std::uint32_t chunks, std::uint64_t bytes) {
  SCOPED_TRACE(v.name + " " + to_string(type) + " n=" + std::to_string(n) + " chunks=" + std::to_string(chunks) +
               " bytes=" + std::to_string(bytes));
  std::vector<int> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(10 + 3 * r);  // group ranks need not be 0..n-1
  auto units = v.units();
  ProgramPlan plan;
  plan.type = type;
  plan.algorithm = v.kind;
  plan.ranks = &ranks;
  plan.root = kRooted.count(type) || type == CollectiveType::kGather || type == CollectiveType::kScatter ? n - 1 : 0;
  plan.bytes = type == CollectiveType::kBarrier ? 0 : bytes;
  plan.chunks = chunks;
  plan.element = 4;
  plan.in_switch = units.get();

  const bool runs = v.types.count(type) > 0;
  if (!runs) {
    EXPECT_THROW(make_programs(plan, 0), std::invalid_argument) << "must be refused";
    return;
  }
  const std::uint64_t size = working_bytes(type, plan.bytes, n);
  auto buffers = inputs(n, size);
  ExecutionStats stats;
  ASSERT_NO_THROW(stats = execute_programs(plan, buffers));

  // Rounds: every member's programs, by the formula.
  if (const auto want = rounds_formula(v, type, n)) {
    for (int m = 0; m < n; ++m) {
      for (const auto& p : make_programs(plan, m)) EXPECT_EQ(p->num_rounds(), *want) << "member " << m;
    }
    EXPECT_EQ(stats.most_rounds, *want);
  }
  // Bytes: what members sent to members arrived, and as much as the formula says.
  if (v.kind != AlgorithmKind::kInSwitch) {
    EXPECT_EQ(stats.bytes_sent, stats.bytes_received);
  }
  if (const auto want = volume_formula(v, type, n, plan.bytes)) {
    EXPECT_EQ(stats.bytes_sent, *want);
  }

  // Data: every defined element of every member.
  std::uint64_t wrong = 0, checked = 0;
  for (int m = 0; m < n; ++m) {
    for (std::uint64_t i = 0; i < size / 4; ++i) {
      const auto want = expected(type, n, plan.root, m, plan.bytes, i);
      if (!want) continue;
      ++checked;
      const std::uint32_t got = word(buffers[static_cast<std::size_t>(m)], i);
      if (got != *want && wrong++ < 3)
        ADD_FAILURE() << "member " << m << " element " << i << ": " << got << ", expected " << *want;
    }
  }
  EXPECT_EQ(wrong, 0u);
  if (type != CollectiveType::kBarrier) {
    EXPECT_GT(checked, 0u);
  }
}

TEST(CollectivePrograms, EveryAlgorithmTypeAndGroupSizeFinishesWithTheRightRoundsBytesAndData) {
  for (const Variant& v : variants()) {
    for (CollectiveType type : kAllTypes) {
      for (int n : kSizes) {
        // Sizes that split evenly, and ones that leave remainders in every
        // cut: elements over members and chunks, and (for the types that
        // cut one buffer, not per-member blocks) elements over segments.
        const auto un = static_cast<std::uint64_t>(n);
        const bool blocks = type == CollectiveType::kAllGather || type == CollectiveType::kGather ||
                            type == CollectiveType::kScatter || type == CollectiveType::kAllToAll ||
                            type == CollectiveType::kReduceScatter || type == CollectiveType::kReduceScatterBlock;
        check(v, type, n, 1, 4 * 6 * un * 5);
        check(v, type, n, 3, blocks ? 4 * 37 * un : 4 * (37 * un + 3));
        // Stray bytes past the last whole element ride on the last piece.
        if (!blocks) check(v, type, n, 2, 4 * (37 * un + 3) + 2);
      }
    }
  }
}

TEST(CollectivePrograms, HierarchicalAllReduceRunsEachDimensionsAlgorithm) {
  // 16 NPUs as 4 x 2 x 2 (ring, halving-doubling, direct), 8 as 2 x 4, 5 as
  // one dimension: the rounds are the sum of each dimension's
  // reduce-scatter and all-gather.
  struct Shape {
    std::vector<Dimension> dims;
    std::uint32_t rounds;
  };
  const std::vector<Shape> shapes = {
      {{{4, 1, AlgorithmKind::kRing}, {2, 4, AlgorithmKind::kHalvingDoubling}, {2, 8, AlgorithmKind::kDirect}},
       2 * 3 + 2 * 1 + 2 * 1},
      {{{2, 1, AlgorithmKind::kDirect}, {4, 2, AlgorithmKind::kRing}}, 2 * 1 + 2 * 3},
      {{{5, 1, AlgorithmKind::kRing}}, 2 * 4},
      // A tree on top all-reduces in one phase (4 rounds), tree A on even
      // chunks, B on odd; 3 at the top: B is A shifted by one.
      {{{4, 1, AlgorithmKind::kRing}, {4, 4, AlgorithmKind::kDoubleBinaryTree}}, 2 * 3 + 4},
      {{{2, 1, AlgorithmKind::kDirect}, {3, 2, AlgorithmKind::kDoubleBinaryTree}}, 2 * 1 + 4},
  };
  for (const Shape& s : shapes) {
    int n = 1;
    for (const auto& d : s.dims) n *= d.size;
    SCOPED_TRACE("n=" + std::to_string(n));
    std::vector<int> ranks;
    for (int r = 0; r < n; ++r) ranks.push_back(r);
    for (std::uint64_t bytes : {4ull * 16 * 9, 4ull * (16 * 9 + 5)}) {
      ProgramPlan plan;
      plan.type = CollectiveType::kAllReduce;
      plan.algorithm = AlgorithmKind::kHierarchical;
      plan.ranks = &ranks;
      plan.bytes = bytes;
      plan.chunks = 2;
      plan.dims = &s.dims;
      auto buffers = inputs(n, bytes);
      const ExecutionStats stats = execute_programs(plan, buffers);
      EXPECT_EQ(stats.most_rounds, s.rounds);
      EXPECT_EQ(stats.bytes_sent, stats.bytes_received);
      for (int m = 0; m < n; ++m) {
        for (std::uint64_t i = 0; i < bytes / 4; ++i) {
          ASSERT_EQ(word(buffers[static_cast<std::size_t>(m)], i), *expected(plan.type, n, 0, m, bytes, i))
              << "member " << m << " element " << i;
        }
      }
    }
    // Not the whole platform: refused.
    std::vector<int> part(ranks.begin(), ranks.end() - 1);
    ProgramPlan plan;
    plan.algorithm = AlgorithmKind::kHierarchical;
    plan.ranks = &part;
    plan.bytes = 4096;
    plan.dims = &s.dims;
    EXPECT_THROW(make_programs(plan, 0), std::invalid_argument);
  }
}

TEST(CollectivePrograms, ThemisOrdersEachChunksLevelsByLoadAndKeepsTheData) {
  // 4 x 2 x 2 with the first dimension slowest: chunk 0 takes the levels in
  // ascending order (no load yet); its first reduce-scatter loads dimension
  // 0 most, so chunk 1 starts elsewhere. Every order still all-reduces.
  std::vector<Dimension> dims = {
      {4, 1, AlgorithmKind::kRing}, {2, 4, AlgorithmKind::kRing}, {2, 8, AlgorithmKind::kRing}};
  dims[0].bandwidth = 50, dims[1].bandwidth = 200, dims[2].bandwidth = 100;
  const int n = 16;
  std::vector<int> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(r);
  ProgramPlan plan;
  plan.type = CollectiveType::kAllReduce;
  plan.algorithm = AlgorithmKind::kHierarchical;
  plan.ranks = &ranks;
  plan.bytes = 4ull * 16 * 8 * 3;
  plan.chunks = 8;
  plan.dims = &dims;
  plan.themis = true;
  const auto programs = make_programs(plan, 0);
  std::vector<std::string> first;
  for (const auto& p : programs) first.push_back(p->phase(0));
  EXPECT_EQ(first[0], "dim 0 reduce-scatter (ring)");
  EXPECT_NE(first[1], first[0]);         // chunk 1 starts on a less loaded dimension
  EXPECT_EQ(programs[0]->stages(), 1u);  // chunks run free: their orders differ
  auto buffers = inputs(n, plan.bytes);
  const ExecutionStats stats = execute_programs(plan, buffers);
  EXPECT_EQ(stats.bytes_sent, stats.bytes_received);
  expect_results(plan, n, buffers, "");
  plan.themis = false;
  for (const auto& p : make_programs(plan, 0)) EXPECT_EQ(std::string(p->phase(0)), "dim 0 reduce-scatter (ring)");
}

/// A hierarchical `type` of `bytes` in `chunks` over all of `ranks` (the
/// caller's: the plan points at it) on `dims`.
ProgramPlan hierarchical_plan(CollectiveType type, const std::vector<int>& ranks, const std::vector<Dimension>& dims,
                              std::uint64_t bytes, std::uint32_t chunks) {
  ProgramPlan plan;
  plan.type = type;
  plan.algorithm = AlgorithmKind::kHierarchical;
  plan.ranks = &ranks;
  plan.bytes = bytes;
  plan.chunks = chunks;
  plan.dims = &dims;
  return plan;
}

/// Ranks 0 .. n-1.
std::vector<int> first_ranks(int n) {
  std::vector<int> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(r);
  return ranks;
}

TEST(CollectivePrograms, WholeLevelsAllReduceTheWholeChunkInEachDimension) {
  // ASTRA-sim's baseline: each dimension all-reduces the whole chunk, so a
  // member sends 2 (n_d - 1)/n_d of it per dimension (4 x 2 x 2: 3/2 + 1 +
  // 1 = 3.5 chunks), against 2 x 15/16 when each level works on the part
  // the one below left. Every member still ends with the sum.
  const std::vector<Dimension> dims = {
      {4, 1, AlgorithmKind::kRing}, {2, 4, AlgorithmKind::kDirect}, {2, 8, AlgorithmKind::kDoubleBinaryTree}};
  const int n = 16;
  const std::vector<int> ranks = first_ranks(n);
  ProgramPlan plan = hierarchical_plan(CollectiveType::kAllReduce, ranks, dims, 4ull * 16 * 8, 2);
  plan.level_data = LevelData::kWhole;
  const auto programs = make_programs(plan, 0);
  EXPECT_EQ(std::string(programs[0]->phase(0)), "dim 0 all-reduce (ring)");
  EXPECT_EQ(programs[0]->stages(), 3u);  // one stage per level: no all-gathers coming down
  auto buffers = inputs(n, plan.bytes);
  const ExecutionStats stats = execute_programs(plan, buffers);
  EXPECT_EQ(stats.bytes_sent, static_cast<std::uint64_t>(3.5 * n * plan.bytes));
  expect_results(plan, n, buffers, "");
  // Themis's load estimate: with whole levels the data does not shrink, so
  // on two equal dimensions chunk 0 loads both alike and chunk 1 keeps the
  // ascending order; with parts, dimension 1 got half and goes first.
  const std::vector<Dimension> equal = {{2, 1, AlgorithmKind::kRing, false, 100},
                                        {2, 2, AlgorithmKind::kRing, false, 100}};
  plan.dims = &equal;
  plan.themis = true;
  const std::vector<int> four = first_ranks(4);
  plan.ranks = &four;
  EXPECT_EQ(std::string(make_programs(plan, 0)[1]->phase(0)), "dim 0 all-reduce (ring)");
  plan.level_data = LevelData::kPart;
  EXPECT_EQ(std::string(make_programs(plan, 0)[1]->phase(0)), "dim 1 reduce-scatter (ring)");
}

TEST(CollectivePrograms, HierarchicalReduceScatterAndAllGatherRunAPhasePerDimension) {
  // 4 x 2 x 2 (ring, direct, ring), 16 members, 7 words per block plus 3
  // stray bytes, in 3 chunks. Reduce-scatter goes up from dimension 0, where
  // a member works on every block whose lower coordinates are its own;
  // all-gather comes down from dimension 2. Dimension d moves n_d - 1 of its
  // segments, each the 16 / s_(d+1) blocks of one coordinate: 3 x 4 + 1 x 2
  // + 1 x 1 = 15 blocks per member, what a flat ring moves too.
  const std::vector<Dimension> dims = {
      {4, 1, AlgorithmKind::kRing}, {2, 4, AlgorithmKind::kDirect}, {2, 8, AlgorithmKind::kRing}};
  const int n = 16;
  const std::vector<int> ranks = first_ranks(n);
  const std::uint64_t block = 7 * 4;
  for (const CollectiveType type :
       {CollectiveType::kReduceScatter, CollectiveType::kReduceScatterBlock, CollectiveType::kAllGather}) {
    const ProgramPlan plan = hierarchical_plan(type, ranks, dims, n * block + 3, 3);
    const auto programs = make_programs(plan, 5);
    const bool gather = type == CollectiveType::kAllGather;
    EXPECT_EQ(std::string(programs[0]->phase(0)),
              gather ? "dim 2 all_gather (ring)" : std::string("dim 0 ") + to_string(type) + " (ring)");
    EXPECT_EQ(programs[0]->stages(), 3u);
    auto buffers = inputs(n, plan.bytes);
    const ExecutionStats stats = execute_programs(plan, buffers);
    EXPECT_EQ(stats.bytes_sent, static_cast<std::uint64_t>(n) * 15 * block) << to_string(type);
    expect_results(plan, n, buffers, std::string(to_string(type)) + " ");
  }
  // A level must send one segment at a time, and the group must be the
  // platform's NPUs in order.
  std::vector<Dimension> halving = dims;
  halving[1].algorithm = AlgorithmKind::kHalvingDoubling;
  ProgramPlan plan = hierarchical_plan(CollectiveType::kReduceScatter, ranks, halving, n * block, 1);
  EXPECT_THROW(make_programs(plan, 0), std::invalid_argument);
  std::vector<int> shuffled = ranks;
  std::swap(shuffled[0], shuffled[1]);
  plan.dims = &dims;
  plan.ranks = &shuffled;
  EXPECT_THROW(make_programs(plan, 0), std::invalid_argument);
}

TEST(CollectivePrograms, HierarchicalAllToAllRunsAPhasePerDimensionInPlace) {
  // Ring or direct in each dimension, in the receive half, which starts as
  // a copy of the send half. Direct in dimension d moves n_d - 1 of its n_d
  // segments, so a member sends (n_d - 1)/n_d of its n blocks: on 4 x 3 x 2,
  // 24 x (3/4 + 2/3 + 1/2) = 46 blocks. A ring relays n_d(n_d - 1)/2
  // segments, (n_d - 1)/2 of the n blocks, its blocks on their way waiting
  // in the send half. 2 x 4 in 3 chunks (the middle dimension of three needs
  // whole blocks, so one chunk there). A direct window takes peers in pairs
  // (k and n-k away), so a block from j never lands before the one for j left.
  const auto ring = AlgorithmKind::kRing, direct = AlgorithmKind::kDirect;
  for (const auto& [dims, chunks, window] :
       std::vector<std::tuple<std::vector<Dimension>, std::uint32_t, std::uint32_t>>{
           {{{4, 1, direct}, {3, 4, direct}, {2, 12, direct}}, 1, 0},
           {{{2, 1, direct}, {4, 2, direct}}, 3, 0},
           {{{4, 1, ring}, {3, 4, ring}, {2, 12, ring}}, 1, 0},
           {{{5, 1, ring}, {3, 5, direct}}, 2, 0},
           {{{3, 1, direct}, {4, 3, ring}}, 3, 0},
           {{{7, 1, direct}, {2, 7, direct}}, 2, 2},
           {{{8, 1, direct}, {3, 8, ring}}, 1, 4}}) {
    int n = 1;
    double blocks = 0;
    for (const Dimension& d : dims) n *= d.size;
    for (const Dimension& d : dims) {
      blocks += static_cast<double>(n) * (d.size - 1) / (d.algorithm == ring ? 2 : d.size);
    }
    const std::vector<int> ranks = first_ranks(n);
    const std::uint64_t block = 6 * 4;
    ProgramPlan plan =
        hierarchical_plan(CollectiveType::kAllToAll, ranks, dims, static_cast<std::uint64_t>(n) * block, chunks);
    plan.direct_window = window;
    auto buffers = inputs(n, working_bytes(plan.type, plan.bytes, n), plan.bytes);
    for (auto& b : buffers) std::memcpy(b.data() + plan.bytes, b.data(), plan.bytes);  // as data_check.cpp starts it
    const ExecutionStats stats = execute_programs(plan, buffers);
    EXPECT_EQ(stats.bytes_sent, static_cast<std::uint64_t>(blocks * n * block + 0.5)) << n << " members";
    expect_results(plan, n, buffers, std::to_string(n) + " members: ");
  }
}

TEST(CollectivePrograms, HierarchicalLevelsAreStagesInTheOrderChunksPassThem) {
  // Up through each level's reduce-scatter, down through the all-gathers in
  // reverse: one stage each, so the engine can overlap chunks level by level.
  const std::vector<Dimension> dims = {{4, 1, AlgorithmKind::kRing}, {2, 4, AlgorithmKind::kHalvingDoubling}};
  std::vector<int> ranks(8);
  for (int r = 0; r < 8; ++r) ranks[static_cast<std::size_t>(r)] = r;
  ProgramPlan plan;
  plan.algorithm = AlgorithmKind::kHierarchical;
  plan.ranks = &ranks;
  plan.bytes = 4096;
  plan.dims = &dims;
  const auto programs = make_programs(plan, 5);
  const Program& p = *programs.at(0);
  EXPECT_EQ(p.stages(), 4u);
  std::vector<std::uint32_t> stage_of_round;
  for (std::uint32_t r = 0; r < p.num_rounds(); ++r) stage_of_round.push_back(p.stage(r));
  // ring reduce-scatter (3), halving-doubling reduce-scatter (1), its
  // all-gather (1), ring all-gather (3)
  EXPECT_EQ(stage_of_round, (std::vector<std::uint32_t>{0, 0, 0, 1, 2, 3, 3, 3}));
  // One-level algorithms are one stage: the engine leaves them alone.
  plan.algorithm = AlgorithmKind::kRing;
  EXPECT_EQ(make_programs(plan, 0).at(0)->stages(), 1u);
}

TEST(CollectivePrograms, TheTreesAreNcclsBinaryTreeAndItsMirrorOrShift) {
  // ncclGetBtree on 8 ranks: 0 -> 4 -> {2, 6}, 2 -> {1, 3}, 6 -> {5, 7};
  // tree B mirrors it (n even); on 5 ranks it is shifted by one.
  auto parents = [](int n, int tree) {
    std::vector<int> ranks(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) ranks[static_cast<std::size_t>(r)] = r;
    ProgramPlan plan;
    plan.algorithm = AlgorithmKind::kDoubleBinaryTree;
    plan.ranks = &ranks;
    plan.bytes = 4 * 64 * static_cast<std::uint64_t>(n);
    std::vector<int> parent(static_cast<std::size_t>(n), -1);
    for (int m = 0; m < n; ++m) {
      const auto programs = make_programs(plan, m);
      Round round;
      programs.at(static_cast<std::size_t>(tree))->round(1, round);  // round 1 sends up
      if (!round.sends.empty()) parent[static_cast<std::size_t>(m)] = round.sends[0].peer;
    }
    return parent;
  };
  EXPECT_EQ(parents(8, 0), (std::vector<int>{-1, 2, 4, 2, 0, 6, 4, 6}));
  EXPECT_EQ(parents(8, 1), (std::vector<int>{1, 3, 1, 7, 5, 3, 5, -1}));
  // 5 ranks: A is 0 -> 4 -> 2 -> {1, 3}; B shifts every rank by one.
  EXPECT_EQ(parents(5, 0), (std::vector<int>{-1, 2, 4, 2, 0}));
  EXPECT_EQ(parents(5, 1), (std::vector<int>{1, -1, 3, 0, 3}));
}

TEST(CollectivePrograms, AllToAllVMovesEachPairsOwnSize) {
  // Member i sends (i + 2j + 1) x 4 bytes to member j, in 2 chunks.
  const int n = 5;
  std::vector<int> ranks = {0, 1, 2, 3, 4};
  std::vector<std::vector<std::uint64_t>> sizes(n, std::vector<std::uint64_t>(n));
  std::uint64_t largest = 0, total = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      sizes[i][j] = 4u * static_cast<std::uint64_t>(i + 2 * j + 1);
      largest = std::max(largest, sizes[i][j]);
      if (i != j) total += sizes[i][j];
    }
  }
  ProgramPlan plan;
  plan.type = CollectiveType::kAllToAll;
  plan.algorithm = AlgorithmKind::kDirect;
  plan.ranks = &ranks;
  plan.bytes = largest * n;
  plan.chunks = 2;
  plan.sizes = &sizes;
  auto buffers = inputs(n, 2 * plan.bytes, plan.bytes);  // the send half
  const ExecutionStats stats = execute_programs(plan, buffers);
  EXPECT_EQ(stats.bytes_sent, total);
  EXPECT_EQ(stats.bytes_received, total);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      for (std::uint64_t e = 0; e < sizes[j][i] / 4; ++e) {  // from j: its block i's first sizes[j][i] bytes
        ASSERT_EQ(word(buffers[i], (plan.bytes + j * largest) / 4 + e), input(j, (i * largest) / 4 + e))
            << "member " << i << " from " << j << " element " << e;
      }
    }
  }
}

TEST(CollectivePrograms, TheDoubleBinaryTreesCarryHalfTheDataEach) {
  // Tree A takes segments [0, n/2), tree B the rest: any other split still
  // gives the right sums, but loads one tree's links more.
  for (int n : kSizes) {
    std::vector<int> ranks;
    for (int r = 0; r < n; ++r) ranks.push_back(r);
    ProgramPlan plan;
    plan.algorithm = AlgorithmKind::kDoubleBinaryTree;
    plan.ranks = &ranks;
    plan.bytes = 4 * 64 * static_cast<std::uint64_t>(n);
    std::uint64_t tree_bytes[2] = {0, 0};
    for (int m = 0; m < n; ++m) {
      const auto programs = make_programs(plan, m);
      ASSERT_EQ(programs.size(), 2u);
      for (std::size_t k = 0; k < 2; ++k) {
        Round round;
        for (std::uint32_t r = 0; r < programs[k]->num_rounds(); ++r) {
          programs[k]->round(r, round);
          for (const Transfer& t : round.sends) tree_bytes[k] += t.bytes();
        }
      }
    }
    // Each tree: every member but its root sends its range up once and gets
    // it back once: 2 (n - 1) times its segments.
    const std::uint64_t segment = plan.bytes / static_cast<std::uint64_t>(n);
    EXPECT_EQ(tree_bytes[0], 2 * static_cast<std::uint64_t>(n - 1) * (n / 2) * segment) << "n=" << n;
    EXPECT_EQ(tree_bytes[1], 2 * static_cast<std::uint64_t>(n - 1) * (n - n / 2) * segment) << "n=" << n;
  }
}

// ---- the executor itself must catch broken programs ------------------------------

/// A program whose rounds are given as data.
class ScriptedProgram : public Program {
 public:
  explicit ScriptedProgram(std::vector<Round> rounds) : rounds_(std::move(rounds)) {}
  std::uint32_t num_rounds() const override { return static_cast<std::uint32_t>(rounds_.size()); }
  void round(std::uint32_t r, Round& out) const override { out = rounds_[r]; }
  const char* phase(std::uint32_t) const override { return "scripted"; }

 private:
  std::vector<Round> rounds_;
};

Transfer to(int peer, std::uint64_t bytes, bool reduce = false) {
  Transfer t;
  t.peer = peer;
  t.length = bytes;
  t.reduce = reduce;
  return t;
}

/// Runs scripted programs: rounds[m] is member m's single chunk.
ExecutionStats run_scripted(const std::vector<std::vector<Round>>& rounds,
                            std::vector<std::vector<std::uint8_t>>& buffers) {
  std::vector<int> ranks;
  for (std::size_t m = 0; m < rounds.size(); ++m) ranks.push_back(static_cast<int>(m));
  return execute_programs(
      ranks,
      [&](int m) {
        std::vector<std::unique_ptr<Program>> p;
        p.push_back(std::make_unique<ScriptedProgram>(rounds[static_cast<std::size_t>(m)]));
        return p;
      },
      buffers);
}

Round round_of(std::vector<Transfer> sends, std::vector<Transfer> recvs) {
  Round r;
  for (const auto& t : sends) r.sends.push_back(t);
  for (const auto& t : recvs) r.recvs.push_back(t);
  return r;
}

void expect_refused(const std::vector<std::vector<Round>>& rounds, const std::string& what) {
  std::vector<std::vector<std::uint8_t>> buffers(rounds.size(), std::vector<std::uint8_t>(64));
  try {
    run_scripted(rounds, buffers);
    ADD_FAILURE() << "not refused; expected: " << what;
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(ProgramExecutor, RefusesProgramsThatCannotFinishOrLoseOrDoubleMessages) {
  // A receive nobody sends: member 1 waits for ever.
  expect_refused(
      {{round_of({}, {})}, {round_of({}, {to(0, 8)})}},
      "member 1 (rank 1), chunk 0, round 0 of 1 cannot finish: it waits for [8 bytes at 0 from rank 0, tag 0]");
  // A send nobody receives.
  expect_refused(
      {{round_of({to(1, 8)}, {})}, {round_of({}, {})}},
      "1 message(s) no receive took; the first: programs over 2: member 0 (rank 0), chunk 0, round 0 to member 1");
  // Sizes that differ.
  expect_refused({{round_of({to(1, 8)}, {})}, {round_of({}, {to(0, 4)})}}, "got a message of 8 bytes");
  // Two sends one receive could take.
  expect_refused({{round_of({to(1, 8), to(1, 8)}, {})}, {round_of({}, {to(0, 8)})}},
                 "two messages one receive could take");
  // Past the buffer.
  Transfer far = to(1, 8);
  far.offset = 60;
  expect_refused({{round_of({far}, {})}, {round_of({}, {to(0, 8)})}}, "ends at byte 68, past the buffer's 64");
}

TEST(ProgramExecutor, ReduceAddsAndCopyReplaces) {
  // The data check of the big test relies on this: a receive that copies
  // where it should reduce loses a contribution.
  for (bool reduce : {true, false}) {
    auto buffers = inputs(2, 8);
    const auto stats = run_scripted({{round_of({to(1, 8)}, {})}, {round_of({}, {to(0, 8, reduce)})}}, buffers);
    EXPECT_EQ(stats.messages, 1u);
    EXPECT_EQ(stats.bytes_sent, 8u);
    for (std::uint64_t i = 0; i < 2; ++i) {
      EXPECT_EQ(word(buffers[1], i), reduce ? input(0, i) + input(1, i) : input(0, i));
    }
  }
}

}  // namespace
