// Every topology generator: connectivity, hop counts and bisection bandwidth
// against their formulas, for several sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "platforms/assembly/loader.h"
#include "platforms/assembly/routing.h"
#include "platforms/assembly/topology_generators.h"
#include "support/test_util.h"

using namespace fabricsim;

namespace {

LinkParams link(double gbps = 100) {
  LinkParams p;
  p.bandwidth = Bandwidth::GBps(gbps);
  return p;
}
constexpr double B = 100e9;  // bytes per second of link()

int ring_distance(int a, int b, int n) {
  const int d = std::abs(a - b);
  return std::min(d, n - d);
}

class RingSizes : public ::testing::TestWithParam<int> {};

TEST_P(RingSizes, BidirectionalRingTakesTheShorterWay) {
  const int n = GetParam();
  const FabricSpec f = make_ring(iota_ranks(n), true, link());
  const auto hops = route_hops(f);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) EXPECT_EQ(hops[a][b], ring_distance(a, b, n)) << a << " -> " << b;
  }
  if (n > 2) {
    EXPECT_DOUBLE_EQ(bisection_bandwidth(f), 2 * B);
  }
}

TEST_P(RingSizes, UnidirectionalRingGoesForwardOnly) {
  const int n = GetParam();
  const auto hops = route_hops(make_ring(iota_ranks(n), false, link()));
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) EXPECT_EQ(hops[a][b], ((b - a) % n + n) % n) << a << " -> " << b;
  }
}

TEST_P(RingSizes, FullyConnectedIsOneHopEverywhere) {
  const int n = GetParam();
  const FabricSpec f = make_fully_connected(iota_ranks(n), link());
  const auto hops = route_hops(f);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) EXPECT_EQ(hops[a][b], a == b ? 0 : 1);
  }
  EXPECT_DOUBLE_EQ(bisection_bandwidth(f), (n / 2) * (n - n / 2) * B);
}

TEST_P(RingSizes, SingleSwitchIsTwoHops) {
  const int n = GetParam();
  const FabricSpec f = make_single_switch(iota_ranks(n), link(), 0);
  const auto hops = route_hops(f);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) EXPECT_EQ(hops[a][b], a == b ? 0 : 2);
  }
  EXPECT_DOUBLE_EQ(bisection_bandwidth(f), std::min(n / 2, n - n / 2) * B);
}

INSTANTIATE_TEST_SUITE_P(N, RingSizes, ::testing::Values(2, 3, 5, 8, 16));

struct TorusCase {
  std::vector<int> dims;
  bool wrap;
};
void PrintTo(const TorusCase& c, std::ostream* os) {
  for (int d : c.dims) *os << d << "x";
  *os << (c.wrap ? " torus" : " mesh");
}

class Tori : public ::testing::TestWithParam<TorusCase> {};

TEST_P(Tori, HopsAreTheSumOfPerDimensionDistances) {
  const auto& c = GetParam();
  int n = 1;
  for (int d : c.dims) n *= d;
  const FabricSpec f = make_torus(iota_ranks(n), c.dims, c.wrap, link());
  const auto hops = route_hops(f);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      int expected = 0, va = a, vb = b;
      for (int d : c.dims) {
        expected += c.wrap ? ring_distance(va % d, vb % d, d) : std::abs(va % d - vb % d);
        va /= d;
        vb /= d;
      }
      ASSERT_EQ(hops[a][b], expected) << a << " -> " << b;
    }
  }
}

TEST_P(Tori, BisectionCutsTheHighestDimension) {
  const auto& c = GetParam();
  int n = 1;
  for (int d : c.dims) n *= d;
  const FabricSpec f = make_torus(iota_ranks(n), c.dims, c.wrap, link());
  // Addresses [0, n/2) are the lower half of the last dimension: the cut
  // crosses every line of that dimension once (mesh) or twice (torus).
  const int lines = n / c.dims.back();
  const int per_line = c.wrap && c.dims.back() > 2 ? 2 : 1;
  EXPECT_DOUBLE_EQ(bisection_bandwidth(f), lines * per_line * B);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Tori,
                         ::testing::Values(TorusCase{{4, 4}, true}, TorusCase{{8, 4}, true}, TorusCase{{3, 6}, true},
                                           TorusCase{{4, 4, 4}, true}, TorusCase{{2, 3, 4}, true},
                                           TorusCase{{4, 4}, false}, TorusCase{{5, 4}, false},
                                           TorusCase{{3, 3, 4}, false}));

struct FatTreeCase {
  int npus;
  FatTreeShape shape;
};
void PrintTo(const FatTreeCase& c, std::ostream* os) {
  *os << c.npus << " NPUs, " << c.shape.levels << " levels, " << c.shape.leaf_down << "/" << c.shape.leaf_up;
}

class FatTrees : public ::testing::TestWithParam<FatTreeCase> {};

TEST_P(FatTrees, HopsClimbToTheLowestCommonLevel) {
  const auto& c = GetParam();
  const FabricSpec f = make_fat_tree(iota_ranks(c.npus), c.shape, link(), link(), 0);
  const auto hops = route_hops(f);
  const int pod = c.shape.leaf_down * c.shape.pod_leaves;
  for (int a = 0; a < c.npus; ++a) {
    for (int b = 0; b < c.npus; ++b) {
      int expected = 6;
      if (a == b) {
        expected = 0;
      } else if (a / c.shape.leaf_down == b / c.shape.leaf_down) {
        expected = 2;
      } else if (c.shape.levels == 2 || a / pod == b / pod) {
        expected = 4;
      }
      ASSERT_EQ(hops[a][b], expected) << a << " -> " << b;
    }
  }
}

TEST_P(FatTrees, BisectionFollowsTheOversubscription) {
  const auto& c = GetParam();
  const FabricSpec f = make_fat_tree(iota_ranks(c.npus), c.shape, link(), link(), 0);
  double oversub = static_cast<double>(c.shape.leaf_down) / c.shape.leaf_up;
  if (c.shape.levels == 3) {
    oversub *= static_cast<double>(c.shape.pod_leaves) / c.shape.agg_up;
  }
  EXPECT_NEAR(bisection_bandwidth(f), c.npus / 2 * B / std::max(1.0, oversub), 1e-3 * B);
}

INSTANTIATE_TEST_SUITE_P(Shapes, FatTrees,
                         ::testing::Values(FatTreeCase{16, {2, 4, 4, 1, 1, 1}}, FatTreeCase{32, {2, 8, 4, 1, 1, 1}},
                                           FatTreeCase{64, {3, 4, 4, 4, 4, 1}}, FatTreeCase{64, {3, 4, 2, 4, 4, 1}},
                                           FatTreeCase{128, {3, 8, 8, 2, 2, 1}}));

TEST(FatTrees, RailOptimizedPutsEachRailOnItsOwnLeaves) {
  // 4 nodes of 8 NPUs; NPU k of every node on rail k.
  FatTreeShape s{2, 4, 4, 1, 1, 8};
  const FabricSpec f = make_fat_tree(iota_ranks(32), s, link(), link(), 0);
  const auto hops = route_hops(f);  // by address: rail-major
  for (const auto& a : f.nodes) {
    for (const auto& b : f.nodes) {
      if (a.kind != FabricNode::Kind::kNic || b.kind != FabricNode::Kind::kNic || a.npu == b.npu) continue;
      const bool same_rail = a.npu % 8 == b.npu % 8;
      EXPECT_EQ(hops[a.address][b.address], same_rail ? 2 : 4) << a.npu << " -> " << b.npu;
    }
  }
}

TEST(Generators, RankGroupsFollowAstraSimDimensions) {
  const auto dim0 = rank_groups(8, 2, 1);
  const auto dim1 = rank_groups(8, 4, 2);
  ASSERT_EQ(dim0.size(), 4u);
  EXPECT_EQ(dim0[1], (std::vector<int>{2, 3}));
  ASSERT_EQ(dim1.size(), 2u);
  EXPECT_EQ(dim1[0], (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(dim1[1], (std::vector<int>{1, 3, 5, 7}));
}

TEST(Generators, MultiDimensionalAstraNetworkBuildsOneFabricPerGroup) {
  const std::string dir = testutil::scratch_dir("astra2d");
  testutil::write_text(
      dir + "/n.yml",
      "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 1000 ]\n");
  const PlatformSpec spec = load_platform(dir + "/n.yml");
  EXPECT_EQ(spec.npus, 8);
  ASSERT_EQ(spec.fabrics.size(), 2u + 4u);
  EXPECT_EQ(spec.fabrics[0].topology, "ring");
  EXPECT_EQ(spec.fabrics[2].topology, "switch");
  // The switch dimension joins NPUs 4 apart, two links each way.
  const auto hops = route_hops(spec.fabrics[3]);
  EXPECT_EQ(hops[0][1], 2);
  EXPECT_EQ(spec.fabrics[3].nodes[1].npu, 5);
}

}  // namespace
