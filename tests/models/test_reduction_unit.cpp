// A reduction unit bound straight to test sockets: contributions offered on
// `in` by a test source (standing for its switch's crossbar), result copies
// taken on `out` by a test sink. Each timing rule of reduction_unit.h against
// its closed form, to the picosecond. 4 GB/s is 250 ps a byte.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/switch/reduction_unit.h"
#include "support/frame_harness.h"

using namespace fabricsim;
using testutil::FrameSink;
using testutil::FrameSource;

namespace {

constexpr Address kUnit = 100;
constexpr std::uint64_t kGroup = 7;
constexpr std::uint64_t kThroughputGBps = 4;
constexpr std::uint64_t kFrame = 4096;
constexpr Tick kLatency = 100'000;  // 100 ns
constexpr Tick kStart = 1'000'000;  // 1 us
constexpr Tick kSpacing = 200'000;  // between contributions' heads
constexpr Tick kTailAfter = 500'000;

/// One pass of the ALU over a frame: bytes x streams / throughput.
constexpr Tick pass_time(unsigned streams, std::uint64_t bytes = kFrame) {
  return bytes * streams * 1000 / kThroughputGBps;
}
/// Passes for n contributions with `streams` inputs: the first takes
/// `streams`, each further one the partial result and streams - 1 more.
constexpr unsigned passes(unsigned n, unsigned streams) {
  if (streams == 1) return n;
  return n <= streams ? 1 : 1 + (n - streams + streams - 2) / (streams - 1);
}

std::vector<Address> members(unsigned n) {
  std::vector<Address> m;
  for (unsigned i = 0; i < n; ++i) m.push_back(10 + i);
  return m;
}

ReductionUnit::Params unit_params(unsigned streams = 1) {
  ReductionUnit::Params p;
  p.address = kUnit;
  p.throughput = Bandwidth::GBps(kThroughputGBps);
  p.streams = streams;
  p.latency = kLatency;
  return p;
}

/// A unit on one switch that every member of the group hangs off, its
/// aggregation manager, a source offering frames on `in` each at its own
/// time, and a sink that lets each copy go `hold` after it came.
struct UnitBench {
  AggregationManager manager;
  FrameSource crossbar_in;
  ReductionUnit unit;
  FrameSink crossbar_out;
  std::vector<Address> group;

  UnitBench(const std::string& name, const ReductionUnit::Params& p, unsigned n, Tick hold = 0)
      : crossbar_in((name + "_in").c_str(), false),
        unit((name + "_unit").c_str(), p, manager),
        crossbar_out((name + "_out").c_str(), hold),
        group(members(n)) {
    crossbar_in.out.bind(unit.in);
    unit.out.bind(crossbar_out.in);
    AggregationManager::Topology t;
    t.unit_of_switch = {kUnit};
    t.level_of_switch = {1};
    t.switch_neighbours = {{}};
    for (Address a : group) {
      t.switches_of_endpoint[a] = {0};
      t.weights_of_endpoint[a] = {1};
    }
    manager.set_topology(t);
    manager.register_group(kGroup, group);
  }

  /// Member i's contribution: a message of `frames` frames of kFrame bytes
  /// (the unit drops it when it is done with its frames).
  Message* contribution(unsigned i, std::uint32_t frames, std::int32_t reduce_target = -1) {
    Message* m = Message::allocate();
    m->kind = MessageKind::kReduce;
    m->src = group.at(i);
    m->dst = kUnit;
    m->bytes = frames * kFrame;
    m->nic.frames_total = frames;
    m->reduction.group = kGroup;
    m->tag.collective = 1;
    m->tag.src_rank = i;
    m->reduction.target = reduce_target;
    return m;
  }
  /// Offers frame `index` of `m` at `at`, its tail kTailAfter behind.
  void offer(Message* m, std::uint32_t index, Tick at) {
    Frame* f = testutil::make_frame(kFrame, kUnit);
    f->msg = m;
    f->src = m->src;
    f->index = index;
    f->offset = index * kFrame;
    f->last = index + 1 == m->nic.frames_total;
    crossbar_in.send(f, at, kTailAfter);
  }
};

TEST(ReductionUnitTiming, OneStreamPassesContributionsOneAfterAnotherAndTheResultLeavesALatencyAfterTheLast) {
  // One stream, four contributions 200 ns apart: a pass (P = 1.024 us) is
  // longer than the spacing, so passes run back to back from the first head
  // and the slot is done at kStart + 4P; every member gets a copy of the
  // result a latency later. Spread 5 us apart with tails 5.5 us behind their
  // heads, the last tail decides: its arrival plus the latency.
  constexpr unsigned n = 4;
  constexpr Tick P = pass_time(1);
  static_assert(kSpacing < P && kTailAfter < P, "the ALU must be what binds");
  UnitBench close("close", unit_params(1), n);
  for (unsigned i = 0; i < n; ++i) close.offer(close.contribution(i, 1), 0, kStart + i * kSpacing);
  UnitBench spread("spread", unit_params(1), n);
  constexpr Tick kWide = 5'000'000, kLongTail = 5'500'000;
  for (unsigned i = 0; i < n; ++i) {
    Frame* f = testutil::make_frame(kFrame, kUnit);
    f->msg = spread.contribution(i, 1);
    f->src = f->msg->src;
    spread.crossbar_in.send(f, kStart + i * kWide, kLongTail);
  }
  testutil::run_to_end();

  const Tick close_result = kStart + n * P + kLatency;
  const Tick spread_result = kStart + (n - 1) * kWide + kLongTail + kLatency;
  for (auto [bench, result] : {std::pair{&close, close_result}, std::pair{&spread, spread_result}}) {
    const auto& copies = bench->crossbar_out.arrivals();
    ASSERT_EQ(copies.size(), n) << bench->unit.name();
    for (unsigned i = 0; i < n; ++i) {
      EXPECT_EQ(copies[i].dst, bench->group[i]) << bench->unit.name() << ": to every member, in group order";
      EXPECT_EQ(copies[i].src, kUnit);
      EXPECT_EQ(copies[i].head, result) << bench->unit.name() << " copy " << i;
      EXPECT_EQ(copies[i].tail, result) << bench->unit.name() << " copy " << i;
      EXPECT_EQ(copies[i].bytes, kFrame);
      EXPECT_EQ(copies[i].wire_bytes, kFrame);
      EXPECT_TRUE(copies[i].last);
    }
    EXPECT_EQ(bench->unit.stats().operations, 1u);
    EXPECT_EQ(bench->unit.stats().alu_busy, n * P);
    bench->crossbar_out.unref_messages();
  }
  // A contribution's place in the input buffer is free once its pass is done.
  for (unsigned i = 0; i < n; ++i) EXPECT_EQ(close.crossbar_in.left()[i], kStart + (i + 1) * P) << "contribution " << i;
}

TEST(ReductionUnitTiming, APassTakesBytesTimesStreamsOverThroughputHoweverManyStreamsItUses) {
  // Four streams. Two contributions take one pass of 4 x bytes / throughput;
  // six take two (four, then the partial result and the other two), back to
  // back from the first head.
  constexpr unsigned kStreams = 4;
  constexpr Tick P = pass_time(kStreams);
  static_assert(
      passes(2, kStreams) == 1 && passes(6, kStreams) == 2 && passes(7, kStreams) == 2 && passes(8, kStreams) == 3,
      "the pass count of the header");
  UnitBench two("two", unit_params(kStreams), 2);
  UnitBench six("six", unit_params(kStreams), 6);
  for (unsigned i = 0; i < 2; ++i) two.offer(two.contribution(i, 1), 0, kStart + i * kSpacing);
  for (unsigned i = 0; i < 6; ++i) six.offer(six.contribution(i, 1), 0, kStart + i * kSpacing);
  testutil::run_to_end();

  for (auto [bench, n] : {std::pair{&two, 2u}, std::pair{&six, 6u}}) {
    const Tick result = kStart + passes(n, kStreams) * P + kLatency;
    ASSERT_EQ(bench->crossbar_out.arrivals().size(), n) << bench->unit.name();
    for (const auto& copy : bench->crossbar_out.arrivals()) EXPECT_EQ(copy.head, result) << bench->unit.name();
    EXPECT_EQ(bench->unit.stats().alu_busy, passes(n, kStreams) * P) << bench->unit.name();
    bench->crossbar_out.unref_messages();
  }
}

TEST(ReductionUnitTiming, AResultForOneMemberGoesToThatMemberAlone) {
  // reduce_target 2: one copy, to member 2, at the same time as a multicast.
  constexpr unsigned n = 4;
  UnitBench b("one", unit_params(1), n);
  for (unsigned i = 0; i < n; ++i) b.offer(b.contribution(i, 1, 2), 0, kStart + i * kSpacing);
  testutil::run_to_end();
  ASSERT_EQ(b.crossbar_out.arrivals().size(), 1u);
  EXPECT_EQ(b.crossbar_out.arrivals()[0].dst, b.group[2]);
  EXPECT_EQ(b.crossbar_out.arrivals()[0].head, kStart + n * pass_time(1) + kLatency);
  b.crossbar_out.unref_messages();
}

TEST(ReductionUnitTiming, AMulticastFrameIsCopiedToEveryMemberALatencyAfterItsHead) {
  // Multicast data (all-gather, broadcast) is copied cut-through: each copy's
  // head leaves a latency after the frame's head came, its tail a latency
  // after its tail; the frame's input is free once its tail is in.
  constexpr unsigned n = 3;
  UnitBench b("multicast", unit_params(1), n);
  Message* m = b.contribution(1, 1);
  m->kind = MessageKind::kMulticast;
  b.offer(m, 0, kStart);
  testutil::run_to_end();
  const auto& copies = b.crossbar_out.arrivals();
  ASSERT_EQ(copies.size(), n);
  for (unsigned i = 0; i < n; ++i) {
    EXPECT_EQ(copies[i].dst, b.group[i]);
    EXPECT_EQ(copies[i].head, kStart + kLatency) << "copy " << i;
    EXPECT_EQ(copies[i].tail, kStart + kTailAfter + kLatency) << "copy " << i;
  }
  EXPECT_EQ(b.crossbar_in.left()[0], kStart + kTailAfter);
  b.crossbar_out.unref_messages();
}

TEST(ReductionUnitTiming, AMulticastFrameFindingTheReplicationBufferFullWaitsUntilTheCopiesBeforeItHaveLeft) {
  // A multicast buffer of one frame. Frame A fans out at once; frame B, in
  // 200 ns later, waits in its input buffer until every copy of A has left
  // the switch (the sink holds each copy kHold after its tail): F = A's tail
  // + latency + kHold. B's copies then start a latency after F, and B's input
  // is free at F. With the default buffer B would go at once.
  constexpr unsigned n = 3;
  constexpr Tick kHold = 1'000'000;
  ReductionUnit::Params small = unit_params(1);
  small.multicast_buffer_bytes = kFrame;
  UnitBench full("replication_full", small, n, kHold);
  UnitBench room("replication_room", unit_params(1), n, kHold);
  for (UnitBench* b : {&full, &room}) {
    Message* a = b->contribution(0, 1);
    Message* c = b->contribution(1, 1);
    a->kind = c->kind = MessageKind::kMulticast;
    b->offer(a, 0, kStart);
    b->offer(c, 0, kStart + kSpacing);
  }
  testutil::run_to_end();

  const Tick a_tail = kStart + kTailAfter + kLatency;
  const Tick free_at = a_tail + kHold;
  for (UnitBench* b : {&full, &room}) {
    const bool limited = b == &full;
    const Tick b_head = limited ? free_at + kLatency : kStart + kSpacing + kLatency;
    const Tick b_tail = limited ? free_at + kLatency : kStart + kSpacing + kTailAfter + kLatency;
    const auto& copies = b->crossbar_out.arrivals();
    ASSERT_EQ(copies.size(), 2 * n) << b->unit.name();
    for (unsigned i = 0; i < 2 * n; ++i) {
      const bool first = copies[i].msg->tag.src_rank == 0;
      EXPECT_EQ(copies[i].head, first ? kStart + kLatency : b_head) << b->unit.name() << " copy " << i;
      EXPECT_EQ(copies[i].tail, first ? a_tail : b_tail) << b->unit.name() << " copy " << i;
    }
    ASSERT_EQ(b->crossbar_in.left().size(), 2u) << b->unit.name();
    EXPECT_EQ(b->crossbar_in.left()[0], kStart + kTailAfter) << b->unit.name();
    EXPECT_EQ(b->crossbar_in.left()[1], limited ? free_at : kStart + kSpacing + kTailAfter) << b->unit.name();
    b->crossbar_out.unref_messages();
  }
}

// Out of slots or out of accumulator memory, the wait is the same.
class ReductionUnitSlots : public ::testing::TestWithParam<bool> {
 protected:
  /// One stream, and room for one frame's slot: one slot, or one frame of
  /// accumulator memory.
  static ReductionUnit::Params one_slots_room() {
    ReductionUnit::Params p = unit_params(1);
    if (GetParam()) {
      p.slots = 1;
    } else {
      p.buffer_bytes = kFrame;
    }
    return p;
  }
  static constexpr Tick kHold = 1'000'000;  // a result copy leaves the switch this long after it came
};

TEST_P(ReductionUnitSlots, AFrameFindingNoRoomWaitsUntilEveryCopyOfTheSlotsResultHasLeft) {
  // Two members, two frames each, one slot's worth of room. Frame 0's slot
  // is done at kStart + 2P; its copies come out a latency later and leave the
  // switch `hold` after that, which frees the slot at F. Frame 1's
  // contributions, in since kStart + 400 ns, wait in their input buffers
  // until F, then pass one after the other: the result is at F + 2P +
  // latency, and their inputs are freed at F + P and F + 2P. (With room for
  // both, frame 1 would follow at kStart + 4P + latency.)
  constexpr Tick P = pass_time(1);
  UnitBench b("slots", one_slots_room(), 2, kHold);
  Message* m0 = b.contribution(0, 2);
  Message* m1 = b.contribution(1, 2);
  b.offer(m0, 0, kStart);
  b.offer(m1, 0, kStart + kSpacing);
  b.offer(m0, 1, kStart + 2 * kSpacing);
  b.offer(m1, 1, kStart + 3 * kSpacing);
  testutil::run_to_end();

  const Tick first_result = kStart + 2 * P + kLatency;
  const Tick slot_free = first_result + kHold;
  const Tick second_result = slot_free + 2 * P + kLatency;
  const auto& copies = b.crossbar_out.arrivals();
  ASSERT_EQ(copies.size(), 4u);
  for (unsigned i = 0; i < 4; ++i) {
    EXPECT_EQ(copies[i].index, i / 2) << "copy " << i;
    EXPECT_EQ(copies[i].head, i < 2 ? first_result : second_result) << "copy " << i;
  }
  EXPECT_EQ(b.crossbar_in.left()[2], slot_free + P);
  EXPECT_EQ(b.crossbar_in.left()[3], slot_free + 2 * P);
  EXPECT_EQ(b.unit.stats().frames_waited, 2u);
  EXPECT_EQ(b.unit.stats().peak_slots, 1u);
  b.crossbar_out.unref_messages();
}

TEST_P(ReductionUnitSlots, AWaitingContributionGoesInAsSoonAsItsSlotOpensEvenBehindOneThatFindsNoRoom) {
  // Two members, three frames each, one slot. Frames 1 and 2 of both wait,
  // in the order 0:1, 0:2, 1:1, 1:2. When frame 0's slot frees at F, 0:1
  // opens frame 1's slot and 0:2 finds no room; 1:1, behind it, has its slot
  // open and goes in at once (kept waiting, frame 1 could never finish and
  // nothing would free a slot again). Each frame's result: both passes, a
  // latency, then `hold` until the slot is free.
  constexpr Tick P = pass_time(1);
  UnitBench b("behind", one_slots_room(), 2, kHold);
  Message* m0 = b.contribution(0, 3);
  Message* m1 = b.contribution(1, 3);
  for (std::uint32_t i = 0; i < 3; ++i) b.offer(m0, i, kStart + i * kSpacing);
  for (std::uint32_t i = 0; i < 3; ++i) b.offer(m1, i, kStart + (3 + i) * kSpacing);
  testutil::run_to_end();

  const Tick r0 = kStart + 2 * P + kLatency;
  const Tick r1 = r0 + kHold + 2 * P + kLatency;
  const Tick r2 = r1 + kHold + 2 * P + kLatency;
  const auto& copies = b.crossbar_out.arrivals();
  ASSERT_EQ(copies.size(), 6u);
  const Tick expected[] = {r0, r0, r1, r1, r2, r2};
  for (unsigned i = 0; i < 6; ++i) {
    EXPECT_EQ(copies[i].index, i / 2) << "copy " << i;
    EXPECT_EQ(copies[i].head, expected[i]) << "copy " << i;
  }
  b.crossbar_out.unref_messages();
}

INSTANTIATE_TEST_SUITE_P(Limits, ReductionUnitSlots, ::testing::Values(true, false),
                         [](const auto& i) { return i.param ? "OneSlot" : "OneFrameOfBuffer"; });

}  // namespace
