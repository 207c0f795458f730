// A switch bound straight to test sockets, or to links (8 GB/s, 125 ps a
// byte) from test sources and to test sinks: each timing rule of switch.h and
// forwarding.h against its closed form, to the picosecond.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "models/link/link.h"
#include "models/switch/switch.h"
#include "support/frame_harness.h"

using namespace fabricsim;
using testutil::FrameSink;
using testutil::FrameSource;
using testutil::make_frame;

namespace {

constexpr std::uint64_t kGBps = 8;
constexpr Tick kHop = 50'000;        // 50 ns
constexpr Tick kStart = 1'000'000;   // 1 us
constexpr Address kDestination = 7;  // beyond the switch's last port

/// Serialization of `bytes` at `gbps` GB/s, in ps.
constexpr Tick wire_time(std::uint64_t bytes, std::uint64_t gbps = kGBps) {
  return bytes * 1000 / gbps;
}

Link::Params link_params(Tick latency, std::uint64_t gbps = kGBps, std::uint64_t buffer_bytes = 4u << 20) {
  Link::Params p;
  p.bandwidth = Bandwidth::GBps(static_cast<double>(gbps));
  p.latency = latency;
  p.buffer_bytes = buffer_bytes;
  return p;
}

Switch::Params switch_params(unsigned ports) {
  Switch::Params p;
  p.ports = ports;
  p.hop_latency = kHop;
  return p;
}

/// A switch whose ports are each fed by a source, through a link or
/// straight, and each drain into a sink, through a link or straight. Frames
/// for kDestination leave on port `output`.
struct SwitchBench {
  Switch sw;
  std::vector<std::unique_ptr<FrameSource>> sources;
  std::vector<std::unique_ptr<FrameSink>> sinks;
  std::vector<std::unique_ptr<Link>> links;

  /// in_links[p] / out_links[p]: the link's parameters, or null for none.
  SwitchBench(unsigned output, const std::vector<const Link::Params*>& in_links,
              const std::vector<const Link::Params*>& out_links)
      : sw("switch", switch_params(static_cast<unsigned>(in_links.size()))) {
    Tick lookahead = kNever;
    for (unsigned p = 0; p < in_links.size(); ++p) {
      const std::string n = "port" + std::to_string(p);
      sources.push_back(std::make_unique<FrameSource>((n + "_source").c_str()));
      sinks.push_back(std::make_unique<FrameSink>((n + "_sink").c_str()));
      if (in_links[p]) {
        links.push_back(std::make_unique<Link>((n + "_in").c_str(), *in_links[p]));
        sources.back()->out.bind(links.back()->in);
        links.back()->out.bind(sw.rx[p]);
        lookahead = std::min(lookahead, in_links[p]->latency);
      } else {
        sources.back()->out.bind(sw.rx[p]);
        lookahead = 0;
      }
      if (out_links[p]) {
        links.push_back(std::make_unique<Link>((n + "_out").c_str(), *out_links[p]));
        sw.tx[p].bind(links.back()->in);
        links.back()->out.bind(sinks.back()->in);
      } else {
        sw.tx[p].bind(sinks.back()->in);
      }
    }
    sw.forwarder().routes().set(kDestination, {static_cast<std::uint16_t>(output)});
    sw.forwarder().set_lookahead(lookahead);  // as the builder does: the smallest input latency
  }
  FrameSource& source(unsigned p) { return *sources.at(p); }
  FrameSink& sink(unsigned p) { return *sinks.at(p); }
};

TEST(SwitchTiming, AFrameLeavesItsHopLatencyAfterItsHeadArrivesBeforeItsTailHas) {
  // Straight from a source on port 0 to a sink on port 1: the tail is 2 us
  // behind the head, the hop 50 ns. The head leaves at kStart + hop, the tail
  // follows at kStart + 2 us + hop, and the input is released when the sink
  // has taken the tail.
  constexpr Tick kTailAfter = 2'000'000;
  SwitchBench b(1, {nullptr, nullptr}, {nullptr, nullptr});
  b.source(0).send(make_frame(4096, kDestination), kStart, kTailAfter);
  testutil::run_to_end();
  ASSERT_EQ(b.sink(1).arrivals().size(), 1u);
  EXPECT_EQ(b.sink(1).arrivals()[0].head, kStart + kHop);
  EXPECT_EQ(b.sink(1).arrivals()[0].tail, kStart + kTailAfter + kHop);
  EXPECT_EQ(b.source(0).left()[0], kStart + kTailAfter + kHop);
  EXPECT_EQ(b.sw.frames_forwarded(), 1u);
}

TEST(SwitchTiming, AnOutputServesFramesInHeadArrivalOrderNotCallOrder) {
  // A comes over a 2 us link, B over a 100 ns one; both are sent at kStart,
  // A first, so the switch hears of A first. B's head arrives first and B
  // takes the output at once; A, whose head is in at 2 us, waits for B's
  // tail to leave (T = 4.096 us > the 1.9 us between the heads).
  constexpr std::uint64_t kBytes = 32768;
  constexpr Tick T = wire_time(kBytes);
  constexpr Tick kLongLatency = 2'000'000, kShortLatency = 100'000, kOutLatency = 300'000;
  static_assert(kLongLatency - kShortLatency < T, "the frames must contend for the output");
  const Link::Params long_link = link_params(kLongLatency), short_link = link_params(kShortLatency),
                     out_link = link_params(kOutLatency);
  SwitchBench b(2, {&long_link, &short_link, &short_link}, {nullptr, nullptr, &out_link});
  Frame* a = make_frame(kBytes, kDestination);
  Frame* c = make_frame(kBytes, kDestination);
  a->index = 0;
  c->index = 1;
  b.source(0).send(a, kStart);
  b.source(1).send(c, kStart);
  testutil::run_to_end();
  ASSERT_EQ(b.sink(2).arrivals().size(), 2u);
  const Tick b_leaves = kStart + kShortLatency + kHop;
  EXPECT_EQ(b.sink(2).find(1)->head, b_leaves + kOutLatency) << "B";
  EXPECT_EQ(b.sink(2).find(1)->tail, b_leaves + T + kOutLatency) << "B";
  EXPECT_EQ(b.sink(2).find(0)->head, b_leaves + T + kOutLatency) << "A";
  EXPECT_EQ(b.sink(2).find(0)->tail, b_leaves + 2 * T + kOutLatency) << "A";
}

TEST(SwitchTiming, UnderIncastEachFlowCompletesAtItsTurnOfTheSharedOutput) {
  // Three senders, four frames each (T a frame), over equal links of latency
  // L into one output; sender i starts i T/4 after kStart, so heads never
  // tie. The output serves heads in arrival order: round k of frames, sender
  // 0, 1, 2, back to back from kStart + L + hop. Frame n = k N + i leaves
  // over [n, n + 1] T from there, so flow i's tail reaches the sink at
  // kStart + L + hop + ((F - 1) N + i + 1) T + L.
  constexpr unsigned N = 3, F = 4;
  constexpr std::uint64_t kBytes = 4096;
  constexpr Tick T = wire_time(kBytes), L = 300'000;
  const Link::Params link = link_params(L);
  SwitchBench b(N, {&link, &link, &link, &link}, {nullptr, nullptr, nullptr, &link});
  for (unsigned i = 0; i < N; ++i) {
    for (unsigned k = 0; k < F; ++k) {
      Frame* f = make_frame(kBytes, kDestination);
      f->src = i;
      f->index = k;
      b.source(i).send(f, kStart + i * T / 4);
    }
  }
  testutil::run_to_end();
  const auto& out = b.sink(N).arrivals();
  ASSERT_EQ(out.size(), N * F);
  for (unsigned n = 0; n < N * F; ++n) {
    EXPECT_EQ(out[n].src, n % N) << "frame " << n << " on the output";
    EXPECT_EQ(out[n].index, n / N) << "frame " << n << " on the output";
    EXPECT_EQ(out[n].tail, kStart + L + kHop + (n + 1) * T + L) << "frame " << n << " on the output";
  }
  for (unsigned i = 0; i < N; ++i) {
    Tick done = 0;
    for (const auto& a : out) {
      if (a.src == i) done = std::max(done, a.tail);
    }
    EXPECT_EQ(done, kStart + L + kHop + ((F - 1) * N + i + 1) * T + L) << "flow " << i;
  }
}

TEST(SwitchTiming, AnInputsCreditReturnsOnlyWhenItsFrameHasLeftOnTheOutput) {
  // The input link's buffer holds one frame; the output is 4 times slower.
  // Frame k's credit comes back when it has left the output (out start +
  // T_out) plus the input latency, and only then can frame k + 1 start on
  // the input: frame k starts at kStart + k (2 L + hop + T_out).
  constexpr std::uint64_t kBytes = 4096;
  constexpr Tick L = 300'000, T = wire_time(kBytes), T_out = wire_time(kBytes, kGBps / 4);
  const Link::Params in_link = link_params(L, kGBps, kBytes), out_link = link_params(L, kGBps / 4);
  SwitchBench b(1, {&in_link, &in_link}, {nullptr, &out_link});
  constexpr unsigned kFrames = 3;
  for (unsigned k = 0; k < kFrames; ++k) b.source(0).send(make_frame(kBytes, kDestination), kStart);
  testutil::run_to_end();
  ASSERT_EQ(b.sink(1).arrivals().size(), kFrames);
  for (unsigned k = 0; k < kFrames; ++k) {
    const Tick start = kStart + k * (2 * L + kHop + T_out);
    EXPECT_EQ(b.source(0).left()[k], start + T) << "frame " << k << " left the source";
    EXPECT_EQ(b.sink(1).arrivals()[k].head, start + L + kHop + L) << "frame " << k;
    EXPECT_EQ(b.sink(1).arrivals()[k].tail, start + L + kHop + T_out + L) << "frame " << k;
  }
}

}  // namespace
