// Max-min fair shares alone: progressive filling against rates worked out
// by hand, and recomputation confined to the flows a change can reach.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "models/flow/max_min_shares.h"

using fabricsim::MaxMinShares;

namespace {

/// Rebalances and returns the flows whose rate changed.
std::set<MaxMinShares::FlowId> rebalance(MaxMinShares& s, std::set<MaxMinShares::FlowId>* settled = nullptr) {
  std::set<MaxMinShares::FlowId> changed;
  s.rebalance(
      [&](MaxMinShares::FlowId f) {
        if (settled) settled->insert(f);
      },
      [&](MaxMinShares::FlowId f) { changed.insert(f); });
  return changed;
}

TEST(MaxMinShares, FlowsOnOneResourceShareItEvenly) {
  MaxMinShares s;
  const auto link = s.add_resource(90);
  const auto a = s.add_flow({link});
  const auto b = s.add_flow({link});
  const auto c = s.add_flow({link});
  rebalance(s);
  EXPECT_DOUBLE_EQ(s.rate(a), 30);
  EXPECT_DOUBLE_EQ(s.rate(b), 30);
  EXPECT_DOUBLE_EQ(s.rate(c), 30);
  s.remove_flow(c);
  rebalance(s);
  EXPECT_DOUBLE_EQ(s.rate(a), 45);
  EXPECT_DOUBLE_EQ(s.rate(b), 45);
}

TEST(MaxMinShares, AFlowLimitedElsewhereLeavesWhatItCannotUseToTheOthers) {
  // x crosses a 100 link and a 25 link; y only the 100 link: x gets 25 (its
  // bottleneck), y the 75 left, not 50.
  MaxMinShares s;
  const auto wide = s.add_resource(100);
  const auto narrow = s.add_resource(25);
  const auto x = s.add_flow({narrow, wide});
  const auto y = s.add_flow({wide});
  rebalance(s);
  EXPECT_DOUBLE_EQ(s.rate(x), 25);
  EXPECT_DOUBLE_EQ(s.rate(y), 75);
}

TEST(MaxMinShares, TheClassicParkingLotGivesTheLongFlowTheSmallestShare) {
  // Links L1 (10), L2 (10); f0 crosses both, f1 only L1, f2 and f3 only L2.
  // L2 is tightest: f0, f2, f3 get 10/3; f1 gets the 20/3 L1 has left.
  MaxMinShares s;
  const auto l1 = s.add_resource(10);
  const auto l2 = s.add_resource(10);
  const auto f0 = s.add_flow({l1, l2});
  const auto f1 = s.add_flow({l1});
  const auto f2 = s.add_flow({l2});
  const auto f3 = s.add_flow({l2});
  rebalance(s);
  EXPECT_DOUBLE_EQ(s.rate(f0), 10.0 / 3);
  EXPECT_DOUBLE_EQ(s.rate(f1), 20.0 / 3);
  EXPECT_DOUBLE_EQ(s.rate(f2), 10.0 / 3);
  EXPECT_DOUBLE_EQ(s.rate(f3), 10.0 / 3);
}

TEST(MaxMinShares, ARecomputationTouchesOnlyTheFlowsConnectedToTheChange) {
  // Two disjoint pairs of flows: a change in one leaves the other alone
  // (neither settled nor changed), and a flow two resources away through a
  // shared flow is reached.
  MaxMinShares s;
  const auto a = s.add_resource(10), b = s.add_resource(10), c = s.add_resource(10);
  const auto far = s.add_resource(10);
  const auto on_a = s.add_flow({a});
  const auto on_ab = s.add_flow({a, b});
  const auto on_bc = s.add_flow({b, c});
  const auto alone = s.add_flow({far});
  rebalance(s);
  EXPECT_DOUBLE_EQ(s.rate(alone), 10);
  EXPECT_FALSE(s.needs_rebalance());
  const auto on_c = s.add_flow({c});
  std::set<MaxMinShares::FlowId> settled;
  const auto changed = rebalance(s, &settled);
  EXPECT_EQ(settled, (std::set<MaxMinShares::FlowId>{on_a, on_ab, on_bc, on_c}));
  EXPECT_EQ(changed.count(alone), 0u);
  // c: on_bc and on_c share 10 (5 each); b: on_ab gets the 5 left; a: on_a 5.
  EXPECT_DOUBLE_EQ(s.rate(on_c), 5);
  EXPECT_DOUBLE_EQ(s.rate(on_bc), 5);
  EXPECT_DOUBLE_EQ(s.rate(on_ab), 5);
  EXPECT_DOUBLE_EQ(s.rate(on_a), 5);
}

TEST(MaxMinShares, RefusesAFlowWithNoResourceAndAResourceWithNoCapacity) {
  MaxMinShares s;
  EXPECT_THROW(s.add_flow({}), std::invalid_argument);
  EXPECT_THROW(s.add_resource(0), std::invalid_argument);
  EXPECT_THROW(s.add_resource(1.0 / 0.0), std::invalid_argument);
}

}  // namespace

namespace {

/// The rates progressive filling gives these flows from scratch.
std::vector<double> from_scratch(const std::vector<double>& capacity,
                                 const std::vector<std::vector<MaxMinShares::ResourceId>>& paths) {
  MaxMinShares fresh;
  for (double c : capacity) fresh.add_resource(c);
  std::vector<MaxMinShares::FlowId> ids;
  for (const auto& p : paths) ids.push_back(fresh.add_flow(p));
  fresh.rebalance([](MaxMinShares::FlowId) {}, [](MaxMinShares::FlowId) {});
  std::vector<double> rates;
  for (auto id : ids) rates.push_back(fresh.rate(id));
  return rates;
}

TEST(MaxMinShares, RecomputingOnlyTheFlowsAChangeCanReachGivesWhatAFreshComputationGives) {
  // Random flows over 12 resources of varied capacity come and go, one or
  // several at a time; after each rebalance every rate equals the one a
  // computation from scratch gives the flows then present.
  std::uint64_t seed = 12345;
  const auto next = [&seed](std::uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  std::vector<double> capacity;
  MaxMinShares s;
  for (int r = 0; r < 12; ++r) {
    capacity.push_back(10.0 + 7.0 * (r % 5));
    s.add_resource(capacity.back());
  }
  struct Live {
    MaxMinShares::FlowId id;
    std::vector<MaxMinShares::ResourceId> path;
  };
  std::vector<Live> live;
  int checked = 0;
  for (int round = 0; round < 300; ++round) {
    const std::uint64_t changes = 1 + next(3);
    for (std::uint64_t c = 0; c < changes; ++c) {
      if (!live.empty() && next(5) < 2) {
        const std::size_t k = next(live.size());
        s.remove_flow(live[k].id);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        std::vector<MaxMinShares::ResourceId> path;
        const std::uint64_t hops = 1 + next(4);
        for (std::uint64_t h = 0; h < hops; ++h) {
          const auto r = static_cast<MaxMinShares::ResourceId>(next(12));
          if (std::find(path.begin(), path.end(), r) == path.end()) path.push_back(r);
        }
        live.push_back(Live{s.add_flow(path), path});
      }
    }
    s.rebalance([](MaxMinShares::FlowId) {}, [](MaxMinShares::FlowId) {});
    std::vector<std::vector<MaxMinShares::ResourceId>> paths;
    for (const auto& l : live) paths.push_back(l.path);
    const auto expected = from_scratch(capacity, paths);
    for (std::size_t i = 0; i < live.size(); ++i) {
      ASSERT_NEAR(s.rate(live[i].id), expected[i], 1e-9 * expected[i]) << "round " << round << ", flow " << i;
      ++checked;
    }
    // And max-min by its definition, apart from the filling both share: no
    // resource over its capacity, and every flow has a saturated resource on
    // which no flow is faster (its bottleneck).
    std::vector<double> load(capacity.size(), 0), fastest(capacity.size(), 0);
    for (const auto& l : live) {
      for (auto r : l.path) {
        load[r] += s.rate(l.id);
        fastest[r] = std::max(fastest[r], s.rate(l.id));
      }
    }
    for (std::size_t r = 0; r < capacity.size(); ++r) ASSERT_LE(load[r], capacity[r] * (1 + 1e-9)) << "resource " << r;
    for (std::size_t i = 0; i < live.size(); ++i) {
      bool bottleneck = false;
      for (auto r : live[i].path) {
        bottleneck |= load[r] >= capacity[r] * (1 - 1e-9) && s.rate(live[i].id) >= fastest[r] * (1 - 1e-9);
      }
      ASSERT_TRUE(bottleneck) << "round " << round << ": flow " << i << " could go faster";
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(MaxMinShares, TheFastestFlowEndingRecomputesOnlyThoseAtLeastAsFast) {
  // L (capacity 12) holds slow1, slow2 and slow3, each also on its own
  // narrow resource of 2; fast is alone on W (100) and shares L: it gets 6.
  // fast ending frees L for nobody faster than it: the slow flows (2 each)
  // are neither settled nor changed.
  MaxMinShares s;
  const auto big = s.add_resource(12), wide = s.add_resource(100);
  std::vector<MaxMinShares::FlowId> slow;
  for (int i = 0; i < 3; ++i) slow.push_back(s.add_flow({big, s.add_resource(2)}));
  const auto fast = s.add_flow({big, wide});
  rebalance(s);
  EXPECT_DOUBLE_EQ(s.rate(fast), 6);
  for (auto f : slow) EXPECT_DOUBLE_EQ(s.rate(f), 2);
  s.remove_flow(fast);
  std::set<MaxMinShares::FlowId> settled;
  const auto changed = rebalance(s, &settled);
  EXPECT_TRUE(settled.empty());
  EXPECT_TRUE(changed.empty());
  for (auto f : slow) EXPECT_DOUBLE_EQ(s.rate(f), 2);
}

}  // namespace
