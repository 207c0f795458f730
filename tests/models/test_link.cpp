// One direction of a link, bound straight to a test source and sink: each
// timing rule of link.h against its closed form, to the picosecond.
// 8 GB/s is 125 ps a byte, so every time below is a whole number of ticks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/link/link.h"
#include "support/frame_harness.h"

using namespace fabricsim;
using testutil::FrameSink;
using testutil::FrameSource;
using testutil::make_frame;

namespace {

constexpr std::uint64_t kGBps = 8;
constexpr std::uint64_t kFrame = 4096;
constexpr Tick kLatency = 300'000;  // 300 ns
constexpr Tick kStart = 1'000'000;  // 1 us: nothing happens at time zero by accident

/// Serialization of `bytes` at kGBps.
constexpr Tick wire_time(std::uint64_t bytes) {
  return bytes * 1000 / kGBps;
}
constexpr Tick T = wire_time(kFrame);

Link::Params link_params(std::uint64_t buffer_bytes = 4u << 20, std::uint64_t bubble_bytes = 0) {
  Link::Params p;
  p.bandwidth = Bandwidth::GBps(kGBps);
  p.latency = kLatency;
  p.buffer_bytes = buffer_bytes;
  p.bubble_bytes = bubble_bytes;
  return p;
}

/// A source, the link under test and a sink, bound.
struct Bench {
  FrameSource source;
  Link link;
  FrameSink sink;
  Bench(const std::string& name, const Link::Params& p, bool one_at_a_time = true, Tick hold = 0,
        FrameSink::Release how = FrameSink::Release::kInReturnPath)
      : source((name + "_source").c_str(), one_at_a_time),
        link((name + "_link").c_str(), p),
        sink((name + "_sink").c_str(), hold, how) {
    source.out.bind(link.in);
    link.out.bind(sink.in);
  }
};

TEST(LinkTiming, OneFrameLeavesAfterItsSerializationAndArrivesALatencyAfterItStarts) {
  Bench b("one", link_params());
  b.source.send(make_frame(kFrame), kStart);
  testutil::run_to_end();
  EXPECT_EQ(b.source.left()[0], kStart + T);  // END_REQ: its last byte has left the sender
  ASSERT_EQ(b.sink.arrivals().size(), 1u);
  EXPECT_EQ(b.sink.arrivals()[0].head, kStart + kLatency);
  EXPECT_EQ(b.sink.arrivals()[0].tail, kStart + T + kLatency);
  EXPECT_EQ(b.link.stats().busy, T);
}

TEST(LinkTiming, AFrameThatWaitsForTheLinkLosesThatMuchOfItsSpread) {
  // Three frames queued at once: the second carries a spread of 2T and waits
  // T for the first, so T of it is left; the third, spread T/2, waits 2T
  // and arrives with none (its packets would have been squeezed together).
  Bench b("spread", link_params(), false);
  Frame* plain = make_frame(kFrame);
  Frame* two = make_frame(kFrame);
  two->spread = 2 * T;
  Frame* half = make_frame(kFrame);
  half->spread = T / 2;
  b.source.send(plain, kStart);
  b.source.send(two, kStart);
  b.source.send(half, kStart);
  testutil::run_to_end();
  ASSERT_EQ(b.sink.arrivals().size(), 3u);
  EXPECT_EQ(b.sink.arrivals()[0].spread, 0u);
  EXPECT_EQ(b.sink.arrivals()[1].spread, T);
  EXPECT_EQ(b.sink.arrivals()[2].spread, 0u);
}

TEST(LinkTiming, BackToBackFramesFollowEachOtherAtTheLinkRate) {
  // Frames of different sizes, once offered each when the one before has left
  // (as a NIC port does) and once all at once (queued in the link): frame k
  // starts at kStart + the serialization of the frames before it.
  const std::vector<std::uint64_t> sizes = {4096, 1024, 8192, 2048};
  Bench paced("paced", link_params(), true);
  Bench queued("queued", link_params(), false);
  for (std::uint64_t s : sizes) {
    paced.source.send(make_frame(s), kStart);
    queued.source.send(make_frame(s), kStart);
  }
  testutil::run_to_end();
  for (Bench* b : {&paced, &queued}) {
    ASSERT_EQ(b->sink.arrivals().size(), sizes.size()) << b->link.name();
    Tick start = kStart;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const Tick end = start + wire_time(sizes[k]);
      EXPECT_EQ(b->source.left()[k], end) << b->link.name() << " frame " << k;
      EXPECT_EQ(b->sink.arrivals()[k].head, start + kLatency) << b->link.name() << " frame " << k;
      EXPECT_EQ(b->sink.arrivals()[k].tail, end + kLatency) << b->link.name() << " frame " << k;
      start = end;
    }
  }
}

TEST(LinkTiming, WithCreditsHeldAFlowGetsOneBufferPerRoundTrip) {
  // A 4-frame buffer; the sink keeps each frame `hold` after its tail is in.
  // A frame's credit comes back a latency after the sink lets it go, so its
  // bytes are held for R = T + L + hold + L from when it starts. 4T < R: the
  // buffer binds, and frame k starts at (k / 4) R + (k % 4) T. Once with the
  // release announced in the return path, once by a later backward call.
  constexpr Tick kHold = 2'000'000;
  constexpr Tick R = T + kLatency + kHold + kLatency;
  static_assert(4 * T < R, "the buffer must be what binds");
  const Link::Params p = link_params(4 * kFrame);
  Bench announced("announced", p, true, kHold, FrameSink::Release::kInReturnPath);
  Bench later("later", p, true, kHold, FrameSink::Release::kLater);
  constexpr std::size_t kFrames = 12;
  for (std::size_t k = 0; k < kFrames; ++k) {
    announced.source.send(make_frame(kFrame), kStart);
    later.source.send(make_frame(kFrame), kStart);
  }
  testutil::run_to_end();
  for (Bench* b : {&announced, &later}) {
    ASSERT_EQ(b->sink.arrivals().size(), kFrames) << b->link.name();
    for (std::size_t k = 0; k < kFrames; ++k) {
      const Tick start = kStart + (k / 4) * R + (k % 4) * T;
      EXPECT_EQ(b->sink.arrivals()[k].head, start + kLatency) << b->link.name() << " frame " << k;
      EXPECT_EQ(b->source.left()[k], start + T) << b->link.name() << " frame " << k;
    }
    EXPECT_EQ(b->link.stats().peak_buffer_bytes, 4 * kFrame) << b->link.name();
  }
}

TEST(LinkTiming, AFrameEnteringARingWaitsForRoomForOneMoreFrameWithoutHoldingUpOtherInputs) {
  // A 2-frame buffer with a 1-frame bubble; the sink (a switch) releases each
  // frame `hold` after its tail. At kStart come, in this order:
  //   A from input 0, passing along the ring: starts at once;
  //   B from input 1, entering the ring: needs room for 2 frames, A holds 1;
  //   C from input 0, passing: fits beside A, so it goes ahead of B, at A's end;
  //   D from input 1, passing: keeps its input's order, behind B.
  // B starts when both A's and C's credits are back: C's start + T + L +
  // hold + L; D follows it.
  constexpr Tick kHold = 1'000'000;
  Bench b("ring", link_params(2 * kFrame, kFrame), false, kHold, FrameSink::Release::kLater);
  Frame* entering = make_frame(kFrame, 0, 1);
  entering->entering_ring = true;
  b.source.send(make_frame(kFrame, 0, 0), kStart);  // A
  b.source.send(entering, kStart);                  // B
  b.source.send(make_frame(kFrame, 0, 0), kStart);  // C
  b.source.send(make_frame(kFrame, 0, 1), kStart);  // D
  testutil::run_to_end();
  const Tick a_start = kStart, c_start = a_start + T;
  const Tick b_start = c_start + T + kLatency + kHold + kLatency;
  const Tick d_start = b_start + T;
  ASSERT_EQ(b.sink.arrivals().size(), 4u);
  EXPECT_EQ(b.source.left()[0], a_start + T) << "A";
  EXPECT_EQ(b.source.left()[2], c_start + T) << "C";
  EXPECT_EQ(b.source.left()[1], b_start + T) << "B";
  EXPECT_EQ(b.source.left()[3], d_start + T) << "D";
  // The sink sees them in the order they started.
  EXPECT_EQ(b.sink.arrivals()[0].head, a_start + kLatency);
  EXPECT_EQ(b.sink.arrivals()[1].head, c_start + kLatency);
  EXPECT_EQ(b.sink.arrivals()[2].head, b_start + kLatency);
  EXPECT_EQ(b.sink.arrivals()[3].head, d_start + kLatency);
}

TEST(LinkTiming, AFrameFedMoreSlowlyThanTheLinkHoldsItUntilItsTailHasArrived) {
  // Cut-through from an input three times slower: the frame's head goes at
  // once but its last byte cannot leave before it has come, at kStart + 3T;
  // the next frame starts then.
  Bench b("slow", link_params());
  b.source.send(make_frame(kFrame), kStart, 3 * T);
  b.source.send(make_frame(kFrame), kStart);
  testutil::run_to_end();
  ASSERT_EQ(b.sink.arrivals().size(), 2u);
  EXPECT_EQ(b.source.left()[0], kStart + 3 * T);
  EXPECT_EQ(b.sink.arrivals()[0].head, kStart + kLatency);
  EXPECT_EQ(b.sink.arrivals()[0].tail, kStart + 3 * T + kLatency);
  EXPECT_EQ(b.sink.arrivals()[1].head, kStart + 3 * T + kLatency);
  EXPECT_EQ(b.sink.arrivals()[1].tail, kStart + 4 * T + kLatency);
}

TEST(LinkTiming, AReadRequestGoesAtOnceOnItsOwnChannelAndDelaysLaterDataByItsWireTime) {
  // Data frames D1 and D2 are granted at kStart (the wire is theirs until
  // kStart + 2T). A read request offered at kStart + T/2 does not queue behind
  // them: it starts then. Its bytes still cross the same wire, so D3, offered
  // after it, starts at kStart + 2T + its wire time.
  constexpr std::uint64_t kRequest = 64;  // header-only packet
  constexpr Tick kAsk = kStart + T / 2;
  Bench b("request", link_params(), false);
  Frame* request = make_frame(kRequest);
  request->request = true;
  const std::vector<Frame*> frames = {make_frame(kFrame), make_frame(kFrame), request, make_frame(kFrame)};
  for (std::uint32_t k = 0; k < frames.size(); ++k) frames[k]->index = k;  // to find each at the sink
  b.source.send(frames[0], kStart);                                        // D1
  b.source.send(frames[1], kStart);                                        // D2
  b.source.send(frames[2], kAsk);
  b.source.send(frames[3], kAsk);  // D3
  testutil::run_to_end();
  ASSERT_EQ(b.sink.arrivals().size(), 4u);
  EXPECT_EQ(b.source.left()[2], kAsk + wire_time(kRequest)) << "request";
  EXPECT_EQ(b.sink.find(0)->head, kStart + kLatency) << "D1";
  EXPECT_EQ(b.sink.find(2)->head, kAsk + kLatency) << "the request, ahead of D2";
  EXPECT_EQ(b.sink.find(1)->head, kStart + T + kLatency) << "D2";
  EXPECT_EQ(b.sink.find(3)->head, kStart + 2 * T + wire_time(kRequest) + kLatency) << "D3";
}

}  // namespace
