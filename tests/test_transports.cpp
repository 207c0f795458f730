// Transports (docs/transports.md): PFC against its closed form on one link,
// and on platforms: a lossless incast, a pause spreading hop by hop onto a
// victim flow, DCQCN sharing a bottleneck and holding its queue near Kmin,
// and ECMP collisions against the balls-in-bins expectation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "models/link/link.h"
#include "models/link/shared_buffer.h"
#include "models/nic/window_transport.h"
#include "support/fabric_harness.h"
#include "support/frame_harness.h"
#include "support/test_util.h"
#include "tlm/routing_table.h"

using namespace fabricsim;
using testutil::Flow;
using testutil::run_transfers;

namespace {

constexpr std::uint64_t MiB = 1u << 20;
double ns(Tick t) {
  return ticks_to_ns(t);
}

/// The link from `from` to `to` on the platform's first fabric (or the named one).
const Link& link_between(const Platform& p, const std::string& from, const std::string& to, std::size_t fabric = 0) {
  for (const auto& l : p.fabrics().at(fabric).links) {
    if (l.from == from && l.to == to) return *l.link;
  }
  throw std::runtime_error("no link " + from + " -> " + to);
}

TEST(Pfc, TheReceiverPausesAtXoffAndTheSenderResumesALatencyAfterXon) {
  // One link at 8 GB/s (T = 512 ns per 4 KiB frame), latency L = 300 ns; the
  // sink holds each frame H = 10 T after its tail. xoff = 2 frames, xon = 1.
  // The third frame's head makes 3 frames > xoff at 2T + L: PAUSE reaches
  // the sender at 2T + 2L, by when it has started K = 4 frames (3T < 2T + 2L
  // < 4T). It resumes a latency after the buffer falls to xon, i.e. after
  // K - 1 frames have left it: at (K-1)T + T + L + H - T + L = (K-1)T + 2L + H.
  // Every cycle repeats this, so frame k starts at (k / 4) P + (k % 4) T with
  // P = 3T + 2L + H, the buffer peaks at 4 frames, and each pause lasts
  // P - (2T + 2L) = T + H.
  constexpr std::uint64_t kFrame = 4096;
  constexpr Tick T = 512'000, L = 300'000, H = 10 * T, kStart = 1'000'000;
  constexpr Tick P = 3 * T + 2 * L + H;
  Link::Params p;
  p.bandwidth = Bandwidth::GBps(8);
  p.latency = L;
  p.buffer_bytes = 64 << 10;
  testutil::FrameSource source("source", false);
  Link link("link", p);
  testutil::FrameSink sink("sink", H);
  source.out.bind(link.in);
  link.out.bind(sink.in);
  link.set_pfc(Link::Pfc{2 * kFrame, kFrame}, kFrame);
  constexpr std::size_t kFrames = 12;
  for (std::size_t k = 0; k < kFrames; ++k) source.send(testutil::make_frame(kFrame), kStart);
  testutil::run_to_end();
  ASSERT_EQ(sink.arrivals().size(), kFrames);
  for (std::size_t k = 0; k < kFrames; ++k) {
    const Tick start = kStart + (k / 4) * P + (k % 4) * T;
    EXPECT_EQ(sink.arrivals()[k].head, start + L) << "frame " << k;
    EXPECT_EQ(source.left()[k], start + T) << "frame " << k;
  }
  EXPECT_EQ(link.stats().pauses, 3u);
  EXPECT_EQ(link.stats().paused, 3 * (T + H));
  EXPECT_EQ(link.stats().peak_buffer_bytes, 4 * kFrame);
}

TEST(Pfc, ABufferWithoutRoomForTheHeadroomIsRefused) {
  Link::Params p;
  p.bandwidth = Bandwidth::GBps(50);
  p.latency = 1'000'000;  // 1 us: 100 kB of round trip
  p.buffer_bytes = 128 << 10;
  Link link("link", p);
  try {
    link.set_pfc(Link::Pfc{64 << 10, 32 << 10}, 4096);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no room for PFC xoff 65536 bytes plus the 108192 bytes of headroom"),
              std::string::npos)
        << e.what();
  }
}

/// n NPUs on one switch; `transport` is the fabric's section.
std::string one_switch(int n, const std::string& transport, const std::string& buffer = "256 KiB",
                       const std::string& bandwidth = "50 GB/s") {
  return "npus: " + std::to_string(n) + R"(
nic: { mtu: 4 KiB, header: 0 }
fabrics:
  - topology: switch
    link: { bandwidth: )" +
         bandwidth + ", latency: 500 ns, buffer: " + buffer + R"( }
    switch: { latency: 100 ns }
    transport: )" +
         transport + "\n";
}

TEST(Transport, ALosslessIncastOfSixteenNeverOverflowsAndKeepsTheBottleneckBusy) {
  // 16 senders into one receiver with PFC alone: every byte arrives, no
  // buffer ever holds more than it has (the model throws if one did: a
  // drop), the senders' links were paused, and the receiver's link ran at
  // line rate: the last byte arrives at 16 S / B plus the path's latency.
  const std::uint64_t S = 2 * MiB;
  std::vector<Flow> flows;
  for (int src = 1; src <= 16; ++src) flows.push_back(Flow{src, 0, S});
  const auto run = run_transfers(one_switch(17, "{ kind: roce, congestion_control: none }"), flows);
  Tick last = 0;
  for (Tick d : run.done) {
    ASSERT_NE(d, kNever);
    last = std::max(last, d);
  }
  const double expected = 16.0 * S / 50.0;
  EXPECT_NEAR(ns(last), expected, 0.01 * expected);
  std::uint64_t pauses = 0;
  for (const auto& l : run.platform->fabrics()[0].links) {
    EXPECT_LE(l.link->stats().peak_buffer_bytes, 256u << 10) << l.link->name();
    if (l.to == "switch") pauses += l.link->stats().pauses;
  }
  EXPECT_GT(pauses, 16u);  // every sender was paused, again and again
  EXPECT_EQ(link_between(*run.platform, "switch", "npu0").stats().payload_bytes, 16 * S);
}

/// Two switches: npu0..npu2 on sw0, npu3..npu6 on sw1, one 50 GB/s link between.
const char* kTwoSwitches = R"(
npus: 7
nic: { mtu: 4 KiB, header: 0 }
fabrics:
  - topology: netlist
    link: { bandwidth: 50 GB/s, latency: 200 ns, buffer: 64 KiB }
    switch: { latency: 100 ns }
    transport: { kind: roce, congestion_control: none }
    switches: [ {name: sw0}, {name: sw1} ]
    links:
      - { from: npu0, to: sw0 }
      - { from: npu1, to: sw0 }
      - { from: npu2, to: sw0 }
      - { from: sw0, to: sw1 }
      - { from: sw1, to: npu3 }
      - { from: sw1, to: npu4 }
      - { from: sw1, to: npu5 }
      - { from: sw1, to: npu6 }
)";

TEST(Transport, APfcPauseSpreadsHopByHopAndHoldsUpAVictimFlow) {
  // npu0, npu1 (behind sw0) and npu5, npu6 (on sw1) all send to npu3. sw1's
  // buffer for the sw0 link fills, sw1 pauses sw0, sw0's buffers fill and it
  // pauses npu0, npu1, and npu2, whose flow to the idle npu4 shares the
  // paused links: head-of-line blocking. Alone, npu2's 4 MiB would take
  // S/B plus a few hundred ns of latency.
  const std::uint64_t S = 4 * MiB;
  const auto congested =
      run_transfers(kTwoSwitches, {Flow{0, 3, S}, Flow{1, 3, S}, Flow{5, 3, S}, Flow{6, 3, S}, Flow{2, 4, S}});
  const double line = S / 50.0;
  // Hop by hop: the link into sw1 was paused, then the links into sw0.
  const Platform& p = *congested.platform;
  EXPECT_GT(link_between(p, "sw0", "sw1").stats().pauses, 0u);
  EXPECT_GT(link_between(p, "npu0", "sw0").stats().pauses, 0u);
  EXPECT_GT(link_between(p, "npu2", "sw0").stats().pauses, 0u);  // the victim's own link
  EXPECT_EQ(link_between(p, "sw1", "npu4").stats().pauses, 0u);  // its receiver never asked
  // The victim shares sw0 -> sw1 with two of the four incast flows, which
  // npu3's link holds to a quarter of its rate each: it finishes well after S/B.
  EXPECT_GT(ns(congested.done[4]), 1.5 * line) << "the victim flow was not held up";
}

// Flow A (npu0 -> npu2) starts alone; flow B (npu1 -> npu2) joins t1 later.
const std::uint64_t kShareBytes = 256 * MiB;
const Tick kJoin = 1'000'000'000;  // 1 ms
const std::vector<Flow> kShare = {Flow{0, 2, kShareBytes, 0}, Flow{1, 2, kShareBytes, kJoin}};

TEST(Transport, DcqcnFlowsConvergeToEqualRatesAndKeepTheQueueBetweenKminAndKmax) {
  // DCQCN as published, at the speed it was published for (40 GbE). When B
  // joins, the queue overshoots past Kmax before the first marks (Pmax is
  // 1%) and both flows are cut until it drains: well below the link's rate,
  // from where additive increase (40 Mb/s per 55 us) takes about 17 ms to
  // fill the link again. From then on (documented: 20 ms after the join,
  // about 5,000 round trips of 4 us) the link stays full, each 5 ms window
  // gives the two flows rates within 25% of each other, and the switch's
  // queue averages below 100 kB and passes Kmax (200 kB) in fewer than 5% of
  // samples, PFC never pausing anyone.
  constexpr Tick kSample = 100'000'000, kWindow = 50 * kSample, kConverged = kJoin + 20'000'000'000;
  struct Sample {
    Tick at;
    std::uint64_t a, b, queue;
  };
  std::vector<Sample> samples;
  const auto run =
      run_transfers(one_switch(3, "{ kind: roce }", "1 MiB", "40 Gb/s"), kShare, kSample, [&](const Platform& p) {
        samples.push_back(Sample{now_ticks(), link_between(p, "npu0", "switch").stats().payload_bytes,
                                 link_between(p, "npu1", "switch").stats().payload_bytes,
                                 link_between(p, "switch", "npu2").queued_bytes()});
      });
  ASSERT_NE(run.done[0], kNever);
  ASSERT_NE(run.done[1], kNever);
  const Tick first_done = std::min(run.done[0], run.done[1]);
  int windows = 0;
  double queue_sum = 0;
  int queue_samples = 0, above_kmax = 0;
  for (std::size_t i = 0; i + 50 < samples.size(); i += 50) {
    if (samples[i].at < kConverged || samples[i].at + kWindow > first_done) continue;
    const double ra = static_cast<double>(samples[i + 50].a - samples[i].a);
    const double rb = static_cast<double>(samples[i + 50].b - samples[i].b);
    EXPECT_NEAR(ra / rb, 1.0, 0.25) << "window from " << ns(samples[i].at) << " ns";
    EXPECT_NEAR((ra + rb) / ns(kWindow), 5.0, 0.25) << "the link was not kept full from " << ns(samples[i].at) << " ns";
    for (std::size_t k = i; k < i + 50; ++k) {
      EXPECT_LT(samples[k].queue, 500'000u) << "at " << ns(samples[k].at) << " ns: near PFC's xoff";
      queue_sum += static_cast<double>(samples[k].queue);
      above_kmax += samples[k].queue >= 200'000u ? 1 : 0;
      ++queue_samples;
    }
    ++windows;
  }
  EXPECT_GE(windows, 10);
  EXPECT_LT(queue_sum / queue_samples, 100e3);
  EXPECT_LT(above_kmax, queue_samples / 20) << "the queue should pass Kmax only briefly";
  const Nic* sender = run.platform->fabrics()[0].nic_of_rank[0];
  ASSERT_NE(sender->dcqcn(), nullptr);
  EXPECT_GT(sender->dcqcn()->stats().cnps_received, 0u);
  EXPECT_EQ(link_between(*run.platform, "npu0", "switch").stats().pauses, 0u) << "DCQCN should keep PFC quiet";
  EXPECT_EQ(link_between(*run.platform, "npu1", "switch").stats().pauses, 0u) << "DCQCN should keep PFC quiet";
}

TEST(Transport, PfcAloneLetsTheQueueGrowToXoff) {
  // The same two flows without congestion control: nothing slows the
  // senders but PAUSE, so the switch's input buffers fill to xoff (the 1 MiB
  // buffer less its headroom) and its egress queue holds about as much.
  const auto run = run_transfers(one_switch(3, "{ kind: roce, congestion_control: none }", "1 MiB", "40 Gb/s"), kShare);
  const double both = 2.0 * kShareBytes / 5.0;
  EXPECT_NEAR(ns(run.done[1]), both, 0.02 * both);
  const Link& in = link_between(*run.platform, "npu0", "switch");
  const Link::Stats& q = link_between(*run.platform, "switch", "npu2").stats();
  const std::uint64_t xoff = (1u << 20) - Link::pfc_headroom(in.params(), 4096);
  EXPECT_GT(in.stats().peak_buffer_bytes, xoff);
  EXPECT_GT(in.stats().pauses, 0u);
  EXPECT_EQ(q.ecn_marks, 0u);
  EXPECT_GT(q.peak_queue_bytes, xoff);
}

/// Two or three NPUs on one RoCE switch that marks by RED (`kmin`, `kmax`,
/// `pmax`), 4 KiB frames of no header (T = 4096 / 50 GB/s = 81.92 ns), links
/// of `latency` with room for PFC's headroom; `injection` caps the NICs.
std::string ecn_switch(int n, const std::string& red, const std::string& latency = "500 ns",
                       const std::string& injection = "") {
  return "npus: " + std::to_string(n) + "\nnic: { mtu: 4 KiB, header: 0" +
         (injection.empty() ? "" : ", injection_bandwidth: " + injection) + R"( }
fabrics:
  - topology: switch
    link: { bandwidth: 50 GB/s, latency: )" +
         latency + R"(, buffer: 16 MiB }
    switch: { latency: 100 ns }
    transport: { kind: roce, congestion_control: dcqcn, )" +
         red + " }\n";
}

/// One flow through the switch, at line rate or capped below it by the NIC.
/// A link holds latency x rate = 25 kB in flight, far above kmin (1 kB): a
/// port that measured its queue when the switch handed a frame over (its
/// head still on the wire) instead of when the head arrives would mark it,
/// and DCQCN would slow a flow that has the network to itself (it did: a
/// 1 GiB transfer between two nodes of dgx_h100_4node_roce.yaml ran at 17.1
/// GB/s where the link gives 48.4).
void expect_a_lone_flow_unmarked(const std::string& injection, double rate_GBps) {
  const std::uint64_t S = 16 * MiB;
  const auto run =
      run_transfers(ecn_switch(2, "ecn_kmin: 1 kB, ecn_kmax: 2 kB, ecn_pmax: 1", "500 ns", injection), {Flow{0, 1, S}});
  const Link::Stats& egress = link_between(*run.platform, "switch", "npu1").stats();
  EXPECT_EQ(egress.frames, S / 4096);
  EXPECT_EQ(egress.ecn_marks, 0u);
  EXPECT_EQ(egress.peak_queue_bytes, 0u);
  // S at the flow's rate, plus two links and the switch: DCQCN cut nothing.
  const double closed = S / rate_GBps + 2 * 500 + 100;
  ASSERT_NE(run.done[0], kNever);
  EXPECT_NEAR(ns(run.done[0]), closed, 0.001 * closed);
}

TEST(Ecn, ALoneFlowAtLineRateFindsNoQueueAndIsNeverMarked) {
  expect_a_lone_flow_unmarked("", 50.0);
}

TEST(Ecn, ALoneFlowBelowLineRateFindsNoQueueAndIsNeverMarked) {
  expect_a_lone_flow_unmarked("30 GB/s", 30.0);
}

TEST(Ecn, ATwoToOneIncastIsMarkedAtTheQueueItBuilds) {
  // npu0 and npu1 each send N frames to npu2 from t = 0. Their frames reach
  // the egress port to npu2 in pairs, one pair every T, and the port sends
  // one per T: frame k of the first sender finds k frames ahead of it (2k
  // arrived, k sent) and the second sender's k + 1. With kmin = kmax = K =
  // 4.5 frames a frame is marked exactly when more than K bytes are ahead:
  // the first sender's from k = 5, the second's from k = 4, 2N - 9 in all.
  // The links' 50 us latency keeps every CNP away until both have sent all
  // (N T = 1.3 us), so DCQCN changes nothing in between.
  constexpr std::uint64_t F = 4096, N = 16;
  const std::string red = "ecn_kmin: 18432, ecn_kmax: 18432, ecn_pmax: 1";
  const auto run = run_transfers(ecn_switch(3, red, "50 us"), {Flow{0, 2, N * F}, Flow{1, 2, N * F}});
  const Link::Stats& egress = link_between(*run.platform, "switch", "npu2").stats();
  ASSERT_EQ(egress.frames, 2 * N);
  EXPECT_EQ(egress.ecn_marks, 2 * N - 9);
  EXPECT_EQ(egress.peak_queue_bytes, N * F);  // the last pair's second frame: N frames ahead
  // sum over pairs of k F + (k + 1) F
  EXPECT_EQ(egress.queue_bytes_seen, N * N * F);
}

TEST(Ecn, AnIncastIsMarkedWithREDsLinearProbability) {
  // The same incast, 256 frames each, RED from kmin = 0 to kmax = 512
  // frames with pmax = 1: a frame finding q bytes ahead is marked with
  // probability q / kmax. The queues are k F and (k + 1) F for k < 256, so
  // the expected count is sum (2k + 1) / 512 = 128, with a standard
  // deviation of 9.2 (sum of p(1 - p)); the draws are repeatable.
  constexpr std::uint64_t F = 4096, N = 256;
  const std::string red = "ecn_kmin: 0, ecn_kmax: " + std::to_string(512 * F) + ", ecn_pmax: 1";
  const auto run = run_transfers(ecn_switch(3, red, "50 us"), {Flow{0, 2, N * F}, Flow{1, 2, N * F}});
  const Link::Stats& egress = link_between(*run.platform, "switch", "npu2").stats();
  ASSERT_EQ(egress.frames, 2 * N);
  EXPECT_EQ(egress.queue_bytes_seen, N * N * F);
  EXPECT_NEAR(static_cast<double>(egress.ecn_marks), 128.0, 3 * 9.2);
}

TEST(Pfc, ASharedBufferPausesEachOfTwoCongestedPortsAtAThirdOfIt) {
  // Two senders into one receiver, PFC alone, the switch's 1 MiB shared
  // by its ports with alpha = 1: a port pauses when it holds more than the
  // free bytes, so two ports filling together pause at B/3 each (x > B - 2x),
  // not at their 4 MiB links' static xoff; then only their headroom's worth
  // more arrives.
  constexpr std::uint64_t B = 1 * MiB;
  const auto run =
      run_transfers(one_switch(3, "{ kind: roce, congestion_control: none, switch_buffer: 1 MiB }", "4 MiB", "40 Gb/s"),
                    {Flow{0, 2, 16 * MiB}, Flow{1, 2, 16 * MiB}});
  for (const char* from : {"npu0", "npu1"}) {
    SCOPED_TRACE(from);
    const Link& in = link_between(*run.platform, from, "switch");
    const std::uint64_t headroom = Link::pfc_headroom(in.params(), 4096);
    EXPECT_GT(in.stats().pauses, 0u);
    EXPECT_GT(in.stats().peak_buffer_bytes, B / 3);
    EXPECT_LE(in.stats().peak_buffer_bytes, B / 3 + headroom);
  }
  for (Tick d : run.done) EXPECT_NE(d, kNever);
}

TEST(Ecmp, CollidingFlowsMatchTheBallsInBinsExpectation) {
  // F flows hashed onto P equal-cost ports: the expected number of ports
  // used is P (1 - (1 - 1/P)^F). Over many routers (salts), the mean of what
  // the hash gives must match it within 3 standard errors.
  constexpr int P = 8, F = 8, kRouters = 4000;
  std::vector<std::uint16_t> ports;
  for (int p = 0; p < P; ++p) ports.push_back(static_cast<std::uint16_t>(p));
  double sum = 0, sum2 = 0;
  for (int r = 0; r < kRouters; ++r) {
    RoutingTable table;
    table.set(0, ports);
    table.set_salt(static_cast<std::uint32_t>(r));
    std::set<std::uint16_t> used;
    // NCCL-like flows: rank r's flow to peer k, as the NPU numbers them.
    for (int f = 0; f < F; ++f) used.insert(table.port(0, static_cast<std::uint32_t>(f) * 0x10001u + 17u));
    sum += static_cast<double>(used.size());
    sum2 += static_cast<double>(used.size() * used.size());
  }
  const double mean = sum / kRouters;
  const double sd = std::sqrt(sum2 / kRouters - mean * mean);
  const double expected = P * (1 - std::pow(1 - 1.0 / P, F));
  EXPECT_NEAR(mean, expected, 3 * sd / std::sqrt(static_cast<double>(kRouters)));
  EXPECT_LT(mean, P - 2.0) << "collisions must be visible: 8 flows on 8 paths rarely use all 8";
}

// --- TCP over lossy Ethernet --------------------------------------------------

/// What a tcp fabric's links and window transports did, summed.
struct TcpTotals {
  std::uint64_t drops = 0, retransmissions = 0, fast_retransmits = 0, timeouts = 0, duplicates = 0;
};
TcpTotals tcp_totals(const Platform& p) {
  TcpTotals t;
  for (const auto& l : p.fabrics()[0].links) t.drops += l.link->stats().drops;
  for (const auto& nic : p.fabrics()[0].nics) {
    const WindowTransport::Stats& s = nic->window_transport()->stats();
    t.retransmissions += s.retransmissions;
    t.fast_retransmits += s.fast_retransmits;
    t.timeouts += s.timeouts;
    t.duplicates += s.duplicates;
  }
  return t;
}

/// Two NPUs on one switch, 50 GB/s links of latency L = 2 us, 100 ns hop,
/// 4 KiB packets with 64-byte headers, ACK per frame, TCP window `window`.
std::string tcp_pair(const std::string& window) {
  return R"(
npus: 2
nic: { mtu: 4 KiB, header: 64 }
fabrics:
  - topology: switch
    link: { bandwidth: 50 GB/s, latency: 2 us, buffer: 16 MiB }
    switch: { latency: 100 ns }
    transport: { kind: tcp, tcp_ack_every: 1, tcp_ack_delay: 0 ns, tcp_max_window: )" +
         window + " }\n";
}

class TcpWindow : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(TcpWindow, ThroughputIsTheWindowPerRoundTripUpToTheLink) {
  // A frame's ACK returns after RTT = T + 2 (2L + hop) + T_ack: its own
  // serialization (4,160 bytes), two links and the switch each way, and the
  // ACK's (64 bytes). With at most W bytes in flight the flow moves W per RTT,
  // until W / RTT reaches the link: min(B, W / RTT). 64 MiB, so slow start
  // (10 packets, doubling per RTT) is a few percent of the time.
  const std::uint64_t W = GetParam();
  const double B = 50.0;                                        // bytes per ns
  const double rtt = 4160 / B + 2 * (2 * 2000 + 100) + 64 / B;  // ns
  const std::uint64_t S = 64 * MiB;
  const auto run = run_transfers(tcp_pair(std::to_string(W)), {Flow{0, 1, S}});
  ASSERT_NE(run.done[0], kNever);
  const double wire = S / 4096.0 * 4160.0;
  const double rate = wire / (ns(run.done[0]) - rtt);
  const double expected = std::min(B, static_cast<double>(W) / rtt);
  EXPECT_NEAR(rate, expected, 0.05 * expected) << "window " << W;
  const WindowTransport* w = run.platform->fabrics()[0].nic_of_rank[0]->window_transport();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->stats().retransmissions, 0u);
}

INSTANTIATE_TEST_SUITE_P(Windows, TcpWindow, ::testing::Values(64u << 10, 128u << 10, 256u << 10, 1u << 20, 4u << 20),
                         [](const auto& info) { return std::to_string(info.param >> 10) + "KiB"; });

TEST(Tcp, IncastDropsAreRetransmittedAndEveryByteArrivesOnce) {
  // 16 senders into one receiver through a switch whose 256 KiB buffer is
  // shared by its ports (alpha 1): the port towards the receiver's queue
  // overflows, packets are dropped, the senders find out (a later packet's
  // ACK, or the timeout) and send them again; every transfer completes with
  // each byte delivered once, and the receiver's link carried exactly the
  // bytes sent, copies that arrived twice aside.
  const std::uint64_t S = 1 * MiB;
  std::vector<Flow> flows;
  for (int src = 1; src <= 16; ++src) flows.push_back(Flow{src, 0, S});
  const auto run =
      run_transfers(one_switch(17, "{ kind: tcp, switch_buffer: 256 KiB, tcp_rto: 200 us }", "16 MiB"), flows);
  for (Tick d : run.done) ASSERT_NE(d, kNever);
  const TcpTotals t = tcp_totals(*run.platform);
  EXPECT_GT(t.drops, 0u);
  EXPECT_GE(t.retransmissions, t.drops) << "every dropped frame is sent again";
  EXPECT_GT(t.fast_retransmits, 0u) << "a later frame's ACK must reveal a loss before the timeout does";
  const Nic* receiver = run.platform->fabrics()[0].nic_of_rank[0];
  EXPECT_EQ(receiver->stats().bytes_received, 16 * S);
  EXPECT_EQ(receiver->stats().messages_received, 16u);
  EXPECT_EQ(link_between(*run.platform, "switch", "npu0").stats().payload_bytes, 16 * S + 4096 * t.duplicates);
}

TEST(Tcp, ATimeoutShorterThanTheQueueSendsCopiesThatAreDeliveredOnce) {
  // 8 senders into one receiver, buffers large enough for no drops, but a
  // 2 us timeout against the several microseconds frames queue at the
  // receiver's port: frames are sent again though they were not lost, and
  // arrive twice. Each is acknowledged again and counted once: every
  // message is delivered only when each of its frames has arrived (the
  // model checks), and the receiver's link carried the bytes sent plus the
  // copies.
  const std::uint64_t S = 1 * MiB;
  std::vector<Flow> flows;
  for (int src = 1; src <= 8; ++src) flows.push_back(Flow{src, 0, S});
  const auto run = run_transfers(one_switch(9, "{ kind: tcp, tcp_rto: 2 us }", "16 MiB"), flows);
  for (Tick d : run.done) ASSERT_NE(d, kNever);
  const TcpTotals t = tcp_totals(*run.platform);
  EXPECT_EQ(t.drops, 0u);
  EXPECT_GT(t.timeouts, 0u);
  EXPECT_GT(t.duplicates, 0u);
  const Nic* receiver = run.platform->fabrics()[0].nic_of_rank[0];
  EXPECT_EQ(receiver->stats().messages_received, 8u);
  EXPECT_EQ(link_between(*run.platform, "switch", "npu0").stats().payload_bytes, 8 * S + 4096 * t.duplicates);
}

TEST(SharedBuffer, APortMayHoldAlphaTimesTheFreeBytes) {
  // alpha = 1: one port alone fills half the buffer; two ports congested
  // together a third each (Choudhury and Hahne).
  SharedBuffer pool("pool", 90'000, 1.0);
  std::uint64_t a = 0;
  while (pool.admits(a, 1000)) {
    pool.take(1000);
    a += 1000;
  }
  EXPECT_EQ(a, 45'000u);
  pool.give(a);
  std::uint64_t p = 0, q = 0;
  for (bool more = true; more;) {
    more = false;
    if (pool.admits(p, 1000)) {
      pool.take(1000);
      p += 1000;
      more = true;
    }
    if (pool.admits(q, 1000)) {
      pool.take(1000);
      q += 1000;
      more = true;
    }
  }
  EXPECT_EQ(p, 30'000u);
  EXPECT_EQ(q, 30'000u);
}

TEST(BadTransports, EachIsOneMessageNamingThePlaceTheValueAndWhatIsAccepted) {
  const std::string dir = testutil::scratch_dir("bad-transports");
  ASSERT_EQ(
      testutil::run_fabricsim("gen collective --npus 4 --type all_reduce --bytes 1M --out " + dir + "/ar").exit_code,
      0);
  auto on_switch = [](const std::string& link, const std::string& transport) {
    return "npus: 4\nfabrics:\n  - topology: switch\n    link: " + link + "\n    transport: " + transport + "\n";
  };
  const std::string link = "{ bandwidth: 50 GB/s, latency: 1 us, buffer: 1 MiB }";
  struct Case {
    std::string yaml, where, what;
  };
  const std::vector<Case> cases = {
      {on_switch(link, "{ kind: rocee }"),
       "p.yaml:5:", "\"kind\" is \"rocee\": it must be one of credit, infiniband, roce, tcp"},
      {on_switch(link, "{ kind: tcp, congestion_control: dcqcn }"),
       "p.yaml:5:", "transport tcp takes congestion_control reno or dctcp"},
      {on_switch(link, "{ kind: credit, congestion_control: dctcp }"),
       "p.yaml:5:", "congestion_control needs an Ethernet transport (kind: roce or tcp)"},
      {on_switch(link, "{ kind: roce, pfc_xoff: 100 kB, pfc_xon: 200 kB }"), "p.yaml:5:", "pfc_xon is above pfc_xoff"},
      {on_switch(link, "{ kind: roce, ecn_kmin: 300 kB }"),
       "p.yaml:5:", "ecn_kmax (200000 bytes) is below ecn_kmin (300000 bytes)"},
      {"npus: 4\nfabrics:\n  - topology: ring\n    transport: { kind: roce }\n",
       "p.yaml:4:", "transport roce on a ring fabric: its rings rely on credit (bubble) flow control"},
      {on_switch(link, "{ kind: tcp, load_balancing: spray }"), "p.yaml:5:",
       "load_balancing spray reorders a flow's packets, and the window transport (congestion_control reno) finds "
       "losses by their order: it takes load_balancing ecmp"},
      {on_switch(link, "{ kind: roce, congestion_control: dctcp, load_balancing: adaptive }"), "p.yaml:5:",
       "load_balancing adaptive reorders a flow's packets, and the window transport (congestion_control dctcp)"},
      {"npus: 4\nnic: { stripe: true }\nfabrics:\n  - topology: switch\n    transport: { kind: tcp }\n", "p.yaml:2:",
       "nic.stripe spreads a message's frames over several ports, which reorders them, and fabric \"fabric0\"'s "
       "window transport finds losses by their order"},
      {"npus: 4\nfabrics:\n  - topology: ring\n    transport: { load_balancing: adaptive }\n",
       "p.yaml:4:", "a ring fabric routes by dimension order (one path per destination): it takes load_balancing ecmp"},
      {on_switch("{ bandwidth: 50 GB/s, latency: 1 us, buffer: 64 KiB }", "{ kind: roce }"),
       "p.yaml: fabric \"fabric0\", transport roce",
       "a 65536-byte buffer has no room for PFC xoff 0 bytes plus the 108192 bytes of headroom it needs (two "
       "latencies at line rate and two frames of 4096 bytes); it needs at least 108192 bytes"},
  };
  for (const auto& c : cases) {
    testutil::write_text(dir + "/p.yaml", c.yaml);
    const auto r = testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/ar");
    EXPECT_EQ(r.exit_code, 2) << c.yaml << r.err;
    EXPECT_NE(r.err.find(dir + "/" + c.where), std::string::npos)
        << "expected the place " << c.where << " in: " << r.err;
    EXPECT_NE(r.err.find(c.what), std::string::npos) << "expected \"" << c.what << "\" in: " << r.err;
  }
}

/// Bytes each link from leaf 0 up to a spine carried, in link order.
std::vector<std::uint64_t> leaf0_uplink_bytes(const testutil::TransferRun& run) {
  std::vector<std::uint64_t> bytes;
  for (const auto& l : run.platform->fabrics()[0].links) {
    if (l.from.rfind("leaf0", 0) == 0 && l.to.rfind("spine", 0) == 0) bytes.push_back(l.link->stats().payload_bytes);
  }
  return bytes;
}

/// Two leaves joined by 4 spines: how many spines one 8 MiB message from a
/// rank under leaf 0 to one under leaf 1 crosses, with `qps` queue pairs.
int spines_used(int qps) {
  const std::string yaml = R"(
npus: 4
nic: { mtu: 4 KiB, header: 0 }
fabrics:
  - topology: fat_tree
    levels: 2
    leaf_down: 2
    leaf_up: 4
    link: { bandwidth: 50 GB/s, latency: 200 ns, buffer: 1 MiB }
    transport: { kind: roce, congestion_control: none, queue_pairs: )" +
                           std::to_string(qps) + " }\n";
  const auto bytes = leaf0_uplink_bytes(run_transfers(yaml, {Flow{0, 2, 8 * MiB}}));
  return static_cast<int>(std::count_if(bytes.begin(), bytes.end(), [](std::uint64_t b) { return b > 0; }));
}

TEST(Ecmp, OneQueuePairKeepsAConnectionOnOnePath) {
  EXPECT_EQ(spines_used(1), 1);
}

// --- Adaptive routing and packet spraying -------------------------------------

/// `flows` of the eight NPUs under leaf 0 each send S = 8 MiB to one of the
/// eight under leaf 1, across 8 spines (non-blocking, 50 GB/s links), on
/// transport `kind` with switches picking ports by `load_balancing`.
struct LeafToLeaf {
  testutil::TransferRun run;
  std::vector<std::uint64_t> spine_bytes;  // what each leaf0 -> spine link carried
};
LeafToLeaf leaf_to_leaf(const std::string& load_balancing, int flows, const std::string& kind = "infiniband") {
  const std::string yaml = R"(
npus: 16
fabrics:
  - topology: fat_tree
    levels: 2
    leaf_down: 8
    leaf_up: 8
    link: { bandwidth: 50 GB/s, latency: 200 ns, buffer: 1 MiB }
    switch: { latency: 100 ns }
    transport: { kind: )" + kind +
                           ", congestion_control: none, load_balancing: " + load_balancing + " }\n";
  std::vector<Flow> f;
  for (int k = 0; k < flows; ++k) f.push_back(Flow{k, 8 + k, 8 * MiB});
  LeafToLeaf out{run_transfers(yaml, f), {}};
  out.spine_bytes = leaf0_uplink_bytes(out.run);
  return out;
}

TEST(LoadBalancing, EcmpHashesEightFlowsOntoFewerSpines) {
  // The baseline adaptive routing must beat: eight flows hashed onto eight
  // spines collide for all but 0.24% of salts (8!/8^8), so a spine carries
  // two flows and they take twice as long.
  const auto r = leaf_to_leaf("ecmp", 8);
  const std::uint64_t busiest = *std::max_element(r.spine_bytes.begin(), r.spine_bytes.end());
  EXPECT_GE(busiest, 16 * MiB);
  Tick last = 0;
  for (Tick d : r.run.done) last = std::max(last, d);
  EXPECT_GT(ns(last), 1.9 * 8 * MiB / 50.0);
}

TEST(Ecmp, TheCostModelPutsEachFlowOnThePathItsPacketsTake) {
  // The default choice estimates collectives on the paths the switches
  // hash flows onto: where two flows share a spine in the run, they share
  // it in the estimate (a split over every equal-cost path would see none).
  const auto r = leaf_to_leaf("ecmp", 8);
  const CostModel* model = r.run.platform->spec().hints.cost_model;
  ASSERT_NE(model, nullptr);
  const auto links = r.run.platform->links();  // a fabric without reduction units: ids are its links' order
  ASSERT_EQ(model->paths().links(), links.size());
  std::vector<double> load(links.size(), 0.0);
  for (int k = 0; k < 8; ++k) {
    std::vector<TrafficPaths::Use> uses;
    model->paths().path(k, 8 + k, uses);
    for (const auto& u : uses) load[u.link] += u.share;
  }
  for (std::size_t i = 0; i < links.size(); ++i) {
    EXPECT_DOUBLE_EQ(load[i] * 8 * MiB, static_cast<double>(links[i]->link->stats().payload_bytes))
        << links[i]->from << " -> " << links[i]->to;
  }
}

/// Per frame, the leaf sends each to the spine with the least backlog, so
/// the eight flows share the eight spines and each finishes at its own
/// link's rate: S / B plus the path's latency (3 links, 2 hops, one frame).
void expect_line_rate_with_adaptive_routing(const std::string& kind) {
  const auto r = leaf_to_leaf("adaptive", 8, kind);
  const double bound = 8 * MiB / 50.0;
  for (Tick d : r.run.done) {
    ASSERT_NE(d, kNever);
    EXPECT_LT(ns(d), 1.03 * bound) << "a flow was held back by a shared spine";
  }
  for (std::uint64_t b : r.spine_bytes) EXPECT_NEAR(static_cast<double>(b), 8.0 * MiB, 0.15 * 8 * MiB);
}

TEST(LoadBalancing, AdaptiveRoutingRunsEightFlowsAtLineRateOnInfiniband) {
  expect_line_rate_with_adaptive_routing("infiniband");
}

TEST(LoadBalancing, AdaptiveRoutingRunsEightFlowsAtLineRateOnRoce) {
  // Frames start one at a time on roce, so what a port holds is mostly its
  // queue, not reservations: the backlog must count both.
  expect_line_rate_with_adaptive_routing("roce");
}

TEST(LoadBalancing, AdaptiveRoutingKeepsAnUncongestedFlowOnItsHashedPath) {
  // Ports that are idle tie, and ties go to the flow's hash: one flow alone
  // never finds a backlog, so it stays on one spine, in order.
  const auto r = leaf_to_leaf("adaptive", 1);
  EXPECT_EQ(std::count_if(r.spine_bytes.begin(), r.spine_bytes.end(), [](std::uint64_t b) { return b > 0; }), 1);
}

TEST(LoadBalancing, DestinationRoutingGivesALeafShiftAPathEach) {
  // d-mod-k, as InfiniBand's subnet manager routes a fat tree: the eight
  // destinations under leaf 1 are reached over eight different spines, so
  // the shift ECMP collides (above) runs every flow at its link's rate.
  const auto r = leaf_to_leaf("destination", 8);
  ASSERT_EQ(r.spine_bytes.size(), 8u);
  for (std::uint64_t b : r.spine_bytes) EXPECT_EQ(b, 8 * MiB);
  for (Tick d : r.run.done) {
    ASSERT_NE(d, kNever);
    EXPECT_LT(ns(d), 1.03 * 8 * MiB / 50.0) << "a flow shared a link";
  }
}

TEST(LoadBalancing, DestinationRoutingGivesAPodShiftAPathEachOnThreeLevels) {
  // Four pods of two leaves of two NPUs (2 up from each leaf, 2 up from each
  // aggregation switch): pod 0's four NPUs send to pod 1's. Going up, the
  // leaves choose by the destination's place under its leaf, the
  // aggregation switches by its leaf: no two flows meet on a link.
  const std::string yaml = R"(
npus: 16
fabrics:
  - topology: fat_tree
    levels: 3
    leaf_down: 2
    leaf_up: 2
    pod_leaves: 2
    agg_up: 2
    link: { bandwidth: 50 GB/s, latency: 200 ns, buffer: 1 MiB }
    switch: { latency: 100 ns }
    transport: { kind: infiniband, load_balancing: destination }
)";
  const auto run =
      run_transfers(yaml, {Flow{0, 4, 8 * MiB}, Flow{1, 5, 8 * MiB}, Flow{2, 6, 8 * MiB}, Flow{3, 7, 8 * MiB}});
  for (Tick d : run.done) {
    ASSERT_NE(d, kNever);
    EXPECT_LT(ns(d), 1.03 * 8 * MiB / 50.0) << "a flow shared a link";
  }
}

TEST(LoadBalancing, SprayingTakesTheSpinesInTurn) {
  // One flow of 32 frames of 256 KiB: each of 8 spines carries exactly 4.
  const auto r = leaf_to_leaf("spray", 1);
  ASSERT_EQ(r.spine_bytes.size(), 8u);
  for (std::uint64_t b : r.spine_bytes) EXPECT_EQ(b, 1 * MiB);
}

TEST(Ecmp, EightQueuePairsSpreadAConnectionOverThePaths) {
  // Hashed, 8 queue pairs take 3.6 of the 4 spines on average (balls in bins).
  EXPECT_GE(spines_used(8), 3);
}

}  // namespace
