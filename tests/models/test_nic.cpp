// A NIC bound straight to test sockets: messages posted on `in` by a test
// source, each port's frames through a link (8 GB/s, 125 ps a byte) to a test
// sink. Each timing rule of nic.h against its closed form, to the picosecond.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/link/link.h"
#include "models/nic/nic.h"
#include "support/frame_harness.h"

using namespace fabricsim;
using testutil::FrameSink;
using testutil::FrameSource;
using testutil::MessageSink;
using testutil::MessageSource;

namespace {

constexpr std::uint64_t kGBps = 8;
constexpr Tick kLatency = 300'000;  // 300 ns
constexpr Tick kStart = 1'000'000;  // 1 us

/// Serialization of `bytes` at `gbps` GB/s, in ps.
constexpr Tick wire_time(std::uint64_t bytes, std::uint64_t gbps = kGBps) {
  return bytes * 1000 / gbps;
}

Link::Params link_params(std::uint64_t gbps = kGBps) {
  Link::Params p;
  p.bandwidth = Bandwidth::GBps(static_cast<double>(gbps));
  p.latency = kLatency;
  return p;
}

/// The NIC under test with its NPU side bound to a message source and sink;
/// port p sends through a link of `port_GBps[p]` to sink p, and takes frames
/// from an idle source.
struct NicBench {
  MessageSource npu_out;
  MessageSink npu_in;
  Nic nic;
  std::vector<std::unique_ptr<Link>> links;
  std::vector<std::unique_ptr<FrameSink>> sinks;
  std::vector<std::unique_ptr<FrameSource>> inputs;

  NicBench(const std::string& name, const Nic::Params& p, const std::vector<std::uint64_t>& port_GBps)
      : npu_out((name + "_npu_out").c_str()), npu_in((name + "_npu_in").c_str()), nic((name + "_nic").c_str(), p) {
    npu_out.out.bind(nic.in);
    nic.out.bind(npu_in.in);
    for (unsigned port = 0; port < p.ports; ++port) {
      const std::string n = name + "_port" + std::to_string(port);
      links.push_back(std::make_unique<Link>((n + "_link").c_str(), link_params(port_GBps.at(port))));
      sinks.push_back(std::make_unique<FrameSink>((n + "_sink").c_str()));
      inputs.push_back(std::make_unique<FrameSource>((n + "_input").c_str()));
      nic.tx[port].bind(links.back()->in);
      links.back()->out.bind(sinks.back()->in);
      inputs.back()->out.bind(nic.rx[port]);
    }
  }
  const std::vector<FrameSink::Arrival>& frames(unsigned port) const { return sinks.at(port)->arrivals(); }
};

Message* message(Address src, Address dst, std::uint64_t bytes) {
  Message* m = Message::allocate();
  m->src = src;
  m->dst = dst;
  m->bytes = bytes;
  return m;
}

/// A one-port NIC at address 0 cutting messages into 2,000-byte frames of
/// two 1,000-byte packets: the bench of the frame-order tests.
Nic::Params two_packet_frames() {
  Nic::Params p;
  p.address = 0;
  p.mtu_bytes = 1000;
  p.segment_bytes = 2000;
  return p;
}

/// A two-port NIC at address 0 that stripes its messages: 1,000-byte
/// packets, frames of `segment` bytes.
Nic::Params two_striped_ports(std::uint64_t segment) {
  Nic::Params p;
  p.address = 0;
  p.ports = 2;
  p.mtu_bytes = 1000;
  p.segment_bytes = segment;
  p.stripe = true;
  return p;
}

/// A collective's 8,000-byte contribution (4 frames) from NPU 0 to the
/// reduction unit at address 5, in work queue `queue`.
Message* contribution(std::uint32_t queue) {
  Message* m = message(0, 5, 8000);
  m->kind = MessageKind::kReduce;
  m->queue = queue;
  return m;
}

/// Port 0 put exactly these (message, frame index) on the wire, in order.
void expect_frame_order(const NicBench& b, const std::vector<std::pair<Message*, std::uint32_t>>& order) {
  ASSERT_EQ(b.frames(0).size(), order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    EXPECT_EQ(b.frames(0)[k].msg, order[k].first) << "frame " << k << " on the wire";
    EXPECT_EQ(b.frames(0)[k].index, order[k].second) << "frame " << k << " on the wire";
  }
}

/// As expect_frame_order, and the frames went back to back, T each, the
/// first starting at `first`: the port never idled between them.
void expect_back_to_back(const NicBench& b, const std::vector<std::pair<Message*, std::uint32_t>>& order, Tick first,
                         Tick T) {
  expect_frame_order(b, order);
  for (std::size_t k = 0; k < b.frames(0).size(); ++k) {
    EXPECT_EQ(b.frames(0)[k].head, first + k * T + kLatency) << "frame " << k << " on the wire";
  }
}

TEST(NicTiming, AMessageIsCutIntoWholePacketFramesWithAHeaderPerPacketAfterItsOverhead) {
  // MTU 1000 with 40-byte headers; a 2500-byte segment holds 2 whole packets.
  // 4500 bytes: frames of 2000, 2000 and 500 bytes, on the wire 2080, 2080
  // and 540. The first leaves the message overhead after the post; each
  // starts when the one before has left.
  Nic::Params p;
  p.address = 0;
  p.mtu_bytes = 1000;
  p.header_bytes = 40;
  p.segment_bytes = 2500;
  p.message_overhead = 700'000;
  NicBench b("cut", p, {kGBps});
  Message* m = message(0, 1, 4500);
  b.npu_out.post(m, kStart);
  testutil::run_to_end();

  const std::vector<std::uint64_t> bytes = {2000, 2000, 500}, wire = {2080, 2080, 540};
  ASSERT_EQ(b.frames(0).size(), bytes.size());
  Tick start = kStart + p.message_overhead;
  for (std::size_t k = 0; k < bytes.size(); ++k) {
    const auto& f = b.frames(0)[k];
    EXPECT_EQ(f.index, k);
    EXPECT_EQ(f.offset, 2000 * k);
    EXPECT_EQ(f.bytes, bytes[k]);
    EXPECT_EQ(f.wire_bytes, wire[k]);
    EXPECT_EQ(f.last, k + 1 == bytes.size());
    EXPECT_EQ(f.head, start + kLatency) << "frame " << k;
    EXPECT_EQ(f.tail, start + wire_time(wire[k]) + kLatency) << "frame " << k;
    start += wire_time(wire[k]);
  }
  EXPECT_EQ(b.npu_out.left(m), kStart + p.message_overhead + wire_time(2080 + 2080 + 540));
  m->unref();
}

TEST(NicTiming, ACollectiveStepWaitsItsProtocolsOverheadAndCarriesItsFlagsOnTheWire) {
  // MTU 1000 with 40-byte headers, 1200 bytes of data. Simple sends the data
  // as it is (2 packets: 1280 on the wire); LL puts 4 bytes of flag in every
  // 8-byte line (2400 bytes, 3 packets: 2520); LL128 8 in every 128 (10 lines
  // of 120: 1280 bytes, 2 packets: 1360). Each waits its own step overhead; a
  // plain message waits message_overhead.
  Nic::Params p;
  p.address = 0;
  p.mtu_bytes = 1000;
  p.header_bytes = 40;
  p.message_overhead = 700'000;
  p.step_overhead_simple = 2'600'000;
  p.step_overhead_ll = 300'000;
  p.step_overhead_ll128 = 1'100'000;
  struct Case {
    CommProtocol protocol;
    Tick overhead;
    std::uint64_t wire;
  };
  const std::vector<Case> cases = {{CommProtocol::kPlain, 700'000, 1280},
                                   {CommProtocol::kSimple, 2'600'000, 1280},
                                   {CommProtocol::kLL, 300'000, 2520},
                                   {CommProtocol::kLL128, 1'100'000, 1360}};
  std::vector<std::unique_ptr<NicBench>> benches;
  std::vector<Message*> messages;
  for (const Case& c : cases) {
    benches.push_back(std::make_unique<NicBench>("proto" + std::to_string(static_cast<int>(c.protocol)), p,
                                                 std::vector<std::uint64_t>{kGBps}));
    Message* m = message(0, 1, 1200);
    m->protocol = c.protocol;
    benches.back()->npu_out.post(m, kStart);
    messages.push_back(m);
  }
  testutil::run_to_end();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& frames = benches[i]->frames(0);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].bytes, 1200u) << "case " << i;
    EXPECT_EQ(frames[0].wire_bytes, cases[i].wire) << "case " << i;
    EXPECT_EQ(frames[0].head, kStart + cases[i].overhead + kLatency) << "case " << i;
    EXPECT_EQ(benches[i]->npu_out.left(messages[i]), kStart + cases[i].overhead + wire_time(cases[i].wire))
        << "case " << i;
    messages[i]->unref();
  }
}

TEST(NicTiming, InjectionBandwidthBelowTheLinkRatePacesFramesAndAboveItChangesNothing) {
  // Three 2000-byte frames. At 2 GB/s injection (1 us a frame) frame k leaves
  // the NIC over [k, k + 1] us and the 8 GB/s link is held to that pace; at
  // 16 GB/s the link's 250 ns a frame is the pace.
  Nic::Params p;
  p.address = 0;
  p.mtu_bytes = 1000;
  p.segment_bytes = 2000;
  p.injection = Bandwidth::GBps(2);
  NicBench slow("slow", p, {kGBps});
  p.injection = Bandwidth::GBps(16);
  NicBench fast("fast", p, {kGBps});
  Message* ms = message(0, 1, 6000);
  Message* mf = message(0, 1, 6000);
  slow.npu_out.post(ms, kStart);
  fast.npu_out.post(mf, kStart);
  testutil::run_to_end();

  for (auto [bench, per_frame] : {std::pair{&slow, wire_time(2000, 2)}, std::pair{&fast, wire_time(2000)}}) {
    ASSERT_EQ(bench->frames(0).size(), 3u);
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(bench->frames(0)[k].head, kStart + k * per_frame + kLatency) << bench->nic.name() << " frame " << k;
      EXPECT_EQ(bench->frames(0)[k].tail, kStart + (k + 1) * per_frame + kLatency)
          << bench->nic.name() << " frame " << k;
    }
  }
  EXPECT_EQ(slow.npu_out.left(ms), kStart + 3 * wire_time(2000, 2));
  EXPECT_EQ(fast.npu_out.left(mf), kStart + 3 * wire_time(2000));
  ms->unref();
  mf->unref();
}

TEST(NicTiming, InjectionBandwidthIsSharedByAllPorts) {
  // Two ports, a message of 3 frames on each, 2 GB/s injection for the NIC
  // (Ti = 1 us a frame) and 8 GB/s links: frames take turns at the injection
  // rate, A's k-th over [2k, 2k + 1] Ti, B's over [2k + 1, 2k + 2] Ti.
  Nic::Params p;
  p.address = 0;
  p.ports = 2;
  p.mtu_bytes = 1000;
  p.segment_bytes = 2000;
  p.injection = Bandwidth::GBps(2);
  NicBench b("shared", p, {kGBps, kGBps});
  b.nic.forwarder().routes().set(1, {0});
  b.nic.forwarder().routes().set(2, {1});
  Message* a = message(0, 1, 6000);
  Message* c = message(0, 2, 6000);
  b.npu_out.post(a, kStart);
  b.npu_out.post(c, kStart);
  testutil::run_to_end();

  constexpr Tick Ti = wire_time(2000, 2);
  for (unsigned port = 0; port < 2; ++port) {
    ASSERT_EQ(b.frames(port).size(), 3u);
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(b.frames(port)[k].head, kStart + (2 * k + port) * Ti + kLatency) << "port " << port << " frame " << k;
    }
  }
  EXPECT_EQ(b.npu_out.left(a), kStart + 5 * Ti);
  EXPECT_EQ(b.npu_out.left(c), kStart + 6 * Ti);
  a->unref();
  c->unref();
}

TEST(NicTiming, TwoMessagesFromOnePortTakeTurnsFrameByFrame) {
  // A and B, 4 frames each, posted together (A first). A's first frame is
  // granted when it is posted and A goes back into the rotation before B
  // joins it; from then on the port takes the message at the front and puts
  // it back: A0 A1 B0 A2 B1 A3 B2 B3. With T a frame, A has left after 2N - 2
  // = 6 frame times and B after 2N = 8 (whole messages one after the other
  // would give 4 and 8).
  NicBench b("turns", two_packet_frames(), {kGBps});
  Message* a = message(0, 1, 8000);
  Message* c = message(0, 2, 8000);
  b.npu_out.post(a, kStart);
  b.npu_out.post(c, kStart);
  testutil::run_to_end();

  constexpr Tick T = wire_time(2000);
  const std::vector<std::pair<Message*, std::uint32_t>> order = {{a, 0}, {a, 1}, {c, 0}, {a, 2},
                                                                 {c, 1}, {a, 3}, {c, 2}, {c, 3}};
  expect_back_to_back(b, order, kStart, T);
  EXPECT_EQ(b.npu_out.left(a), kStart + 6 * T);
  EXPECT_EQ(b.npu_out.left(c), kStart + 8 * T);
  a->unref();
  c->unref();
}

TEST(NicTiming, AMessageStillInItsOverheadLetsTheOthersSendMeanwhile) {
  // Overhead 1 us, frames of T = 250 ns. A (8 frames) is posted at 0 and
  // sends from 1 us; B (1 frame) is posted at 1.6 us, so it may go at 2.6 us.
  // Until then the port keeps sending A (it does not idle, holding B's turn,
  // through B's overhead): A0..A6 back to back from 1 us, B0 at 2.75 us, A7
  // at 3 us. A has left at 1 us + 9T, B at 1 us + 8T; the port was never idle.
  Nic::Params p = two_packet_frames();
  p.message_overhead = 1'000'000;
  NicBench b("overhead_turns", p, {kGBps});
  Message* a = message(0, 1, 16000);
  Message* c = message(0, 2, 2000);
  b.npu_out.post(a, kStart);
  b.npu_out.post(c, kStart + 1'600'000);
  testutil::run_to_end();

  constexpr Tick T = wire_time(2000);
  std::vector<std::pair<Message*, std::uint32_t>> order;
  for (std::uint32_t k = 0; k < 7; ++k) order.push_back({a, k});
  order.push_back({c, 0});
  order.push_back({a, 7});
  expect_back_to_back(b, order, kStart + p.message_overhead, T);
  EXPECT_EQ(b.npu_out.left(a), kStart + p.message_overhead + 9 * T);
  EXPECT_EQ(b.npu_out.left(c), kStart + p.message_overhead + 8 * T);
  a->unref();
  c->unref();
}

TEST(NicTiming, TheOtherClassSendsWhileTheOneWhoseTurnItIsWaitsOutItsOverhead) {
  // H, an answer of the memory system (the hardware class, no overhead, 8
  // frames of T = 250 ns), sends from 0; B, the NPU's (1 frame, overhead
  // 1 us), is posted at 0.1 us. The classes take turns, but B may not go
  // before 1.1 us: H0..H4 go back to back, B0 at 5T, then H5..H7. H has left
  // at 9T, B at 6T.
  Nic::Params p = two_packet_frames();
  p.message_overhead = 1'000'000;
  NicBench b("class_turns", p, {kGBps});
  Message* h = message(0, 1, 16000);
  h->hardware = true;
  Message* c = message(0, 2, 2000);
  b.npu_out.post(h, kStart);
  b.npu_out.post(c, kStart + 100'000);
  testutil::run_to_end();

  constexpr Tick T = wire_time(2000);
  std::vector<std::pair<Message*, std::uint32_t>> order;
  for (std::uint32_t k = 0; k < 5; ++k) order.push_back({h, k});
  order.push_back({c, 0});
  for (std::uint32_t k = 5; k < 8; ++k) order.push_back({h, k});
  expect_back_to_back(b, order, kStart, T);
  EXPECT_EQ(b.npu_out.left(h), kStart + 9 * T);
  EXPECT_EQ(b.npu_out.left(c), kStart + 6 * T);
  h->unref();
  c->unref();
}

TEST(NicTiming, AQueuesInSwitchMessagesToOneDestinationGoInOrderAndTakeTurnsWithOtherQueues) {
  // A and B, a collective's contributions to one reduction unit (queue 7),
  // and C, another collective's (queue 9), 4 frames each, posted together
  // in the order A, C, B (so B is not simply posted right behind A). B
  // waits behind A, as a channel's steps go in order, while the queues take
  // turns: A0 A1 C0 A2 C1 A3 B0 C2 B1 C3 B2 B3. A has left after 6 frame
  // times, C after 10, B after 12. Messages taking turns one by one would
  // give A0 A1 C0 B0 A2 C1 B1 A3 C2 B2 C3 B3: A and B would both finish
  // late, the convoy that made a pipelined level's pieces all end together.
  NicBench b("queues", two_packet_frames(), {kGBps});
  Message* a = contribution(7);
  Message* second = contribution(7);
  Message* c = contribution(9);
  b.npu_out.post(a, kStart);
  b.npu_out.post(c, kStart);
  b.npu_out.post(second, kStart);
  testutil::run_to_end();

  constexpr Tick T = wire_time(2000);
  expect_frame_order(b, {{a, 0},
                         {a, 1},
                         {c, 0},
                         {a, 2},
                         {c, 1},
                         {a, 3},
                         {second, 0},
                         {c, 2},
                         {second, 1},
                         {c, 3},
                         {second, 2},
                         {second, 3}});
  EXPECT_EQ(b.npu_out.left(a), kStart + 6 * T);
  EXPECT_EQ(b.npu_out.left(c), kStart + 10 * T);
  EXPECT_EQ(b.npu_out.left(second), kStart + 12 * T);
  for (Message* m : {a, second, c}) m->unref();
}

TEST(NicTiming, AQueuesInSwitchMessagesKeepTheirOrderWhenAnotherQueuesIsPostedBetweenThem) {
  // A, B and C, contributions of one collective to one unit (queue 7),
  // posted in that order with X (queue 9) between B and C. B does not wait
  // aside behind A to rejoin the rotation after C: A0 A1 X0 A2 X1 A3 B0 X2
  // B1 X3 B2 B3 C0 C1 C2 C3. (Chained behind A, B rejoined the rotation
  // behind C when A's last frame left, and C went first: members of one
  // reduction could then post their chunks in different orders.)
  NicBench b("order", two_packet_frames(), {kGBps});
  Message* a = contribution(7);
  Message* second = contribution(7);
  Message* x = contribution(9);
  Message* c = contribution(7);
  for (Message* m : {a, second, x, c}) b.npu_out.post(m, kStart);
  testutil::run_to_end();

  expect_frame_order(b, {{a, 0},
                         {a, 1},
                         {x, 0},
                         {a, 2},
                         {x, 1},
                         {a, 3},
                         {second, 0},
                         {x, 2},
                         {second, 1},
                         {x, 3},
                         {second, 2},
                         {second, 3},
                         {c, 0},
                         {c, 1},
                         {c, 2},
                         {c, 3}});
  for (Message* m : {a, second, x, c}) m->unref();
}

TEST(NicTiming, AStripedMessageSpreadsItsFramesOverItsPortsEachTakingTheNextWhenFree) {
  // Two equal ports to the destination, 4 frames: each port takes a frame at
  // once, then the next when its frame has left: port 0 frames 0 and 2, port
  // 1 frames 1 and 3; the message has left after 2 frame times.
  NicBench b("stripe", two_striped_ports(2000), {kGBps, kGBps});
  b.nic.forwarder().routes().set(1, {0, 1});
  Message* m = message(0, 1, 8000);
  b.npu_out.post(m, kStart);
  testutil::run_to_end();

  constexpr Tick T = wire_time(2000);
  for (unsigned port = 0; port < 2; ++port) {
    ASSERT_EQ(b.frames(port).size(), 2u) << "port " << port;
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(b.frames(port)[k].index, 2 * k + port) << "port " << port;
      EXPECT_EQ(b.frames(port)[k].head, kStart + k * T + kLatency) << "port " << port;
    }
  }
  EXPECT_EQ(b.npu_out.left(m), kStart + 2 * T);
  m->unref();
}

// The NIC used to report END_REQ when the frame numbered last had left, at
// 2T/3, while frame 0 was still on port 0 until T.
TEST(NicTiming, AStripedMessageOverUnequalPortsHasLeftWhenItsSlowestFrameHas) {
  // Port 1 is three times faster: port 0 takes frame 0 over [0, T], port 1
  // frames 1 and 2 over [0, T/3] and [T/3, 2T/3]. END_REQ says when the
  // message's last byte has left the NIC (fabric_protocol.h): T, when frame 0
  // is out, not when the frame numbered last is.
  NicBench b("unequal", two_striped_ports(2000), {kGBps, 3 * kGBps});
  b.nic.forwarder().routes().set(1, {0, 1});
  Message* m = message(0, 1, 6000);
  b.npu_out.post(m, kStart);
  testutil::run_to_end();

  constexpr Tick T = wire_time(2000);
  ASSERT_EQ(b.frames(0).size(), 1u);
  ASSERT_EQ(b.frames(1).size(), 2u);
  EXPECT_EQ(b.frames(0)[0].tail, kStart + T + kLatency);
  EXPECT_EQ(b.frames(1)[1].tail, kStart + 2 * wire_time(2000, 3 * kGBps) + kLatency);
  EXPECT_EQ(b.npu_out.left(m), kStart + T);
  m->unref();
}

TEST(NicWindow, AClosedWindowHoldsItsMessageWhenAStripedMessageBehindItWasSentByAnotherPort) {
  // A window transport (no ACKs come back) with room for 2 frames per queue
  // pair. A (8 frames to address 1) goes by port 0 only; once A's window is
  // full, S (1 frame to address 2, striped over ports 1 and 0) is posted:
  // port 1 sends it, and port 0's queue holds A and S's spent entry. A stays
  // at 2 frames until an ACK or the timeout. (The spent entry used to open
  // port 0, which then sent A's third frame past its window.)
  NicBench b("window", two_striped_ports(1000), {kGBps, kGBps});
  Nic::Transport t;
  t.window = true;
  t.window_params.initial_window = 2000;
  t.window_params.rto = 1'000'000'000;  // 1 ms, past the end of the run
  b.nic.set_transport(t);
  b.nic.forwarder().routes().set(1, {0});
  b.nic.forwarder().routes().set(2, {1, 0});
  Message* a = message(0, 1, 8000);
  Message* s = message(0, 2, 1000);
  b.npu_out.post(a, kStart);
  b.npu_out.post(s, kStart + 10 * wire_time(1000));
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_US));

  ASSERT_EQ(b.frames(1).size(), 1u);
  EXPECT_EQ(b.frames(1)[0].msg, s);
  std::size_t of_a = 0;
  for (const auto& f : b.frames(0)) of_a += f.msg == a ? 1 : 0;
  EXPECT_EQ(of_a, 2u) << "A's frames on port 0 with a 2-frame window and no ACK";
}

TEST(NicWindow, AMessageWhoseWindowIsFullDoesNotGoInPlaceOfOneStillInItsOverhead) {
  // A window transport (no ACKs come back) with room for 2 frames per queue
  // pair, overhead 1 us, frames of T = 250 ns. A (8 frames to address 1)
  // sends 2 frames from 1 us and its window is full; B (1 frame to address 2)
  // is posted at 1.6 us and may go at 2.6 us. The port waits for B: A, which
  // could start sooner, has no room. (Choosing by overhead alone once sent A's
  // third frame past its window at 1.6 us.)
  Nic::Params p = two_packet_frames();
  p.message_overhead = 1'000'000;
  NicBench b("window_overhead", p, {kGBps});
  Nic::Transport t;
  t.window = true;
  t.window_params.initial_window = 4000;
  t.window_params.rto = 1'000'000'000;  // 1 ms, past the end of the run
  b.nic.set_transport(t);
  Message* a = message(0, 1, 16000);
  Message* c = message(0, 2, 2000);
  b.npu_out.post(a, kStart);
  b.npu_out.post(c, kStart + 1'600'000);
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_US));

  constexpr Tick T = wire_time(2000);
  expect_frame_order(b, {{a, 0}, {a, 1}, {c, 0}});
  ASSERT_EQ(b.frames(0).size(), 3u);
  EXPECT_EQ(b.frames(0)[1].head, kStart + p.message_overhead + T + kLatency);
  EXPECT_EQ(b.frames(0)[2].head, kStart + 2'600'000 + kLatency) << "B goes when its overhead has passed";
}

TEST(NicTiming, AFramePassingThroughLeavesItsForwardLatencyAfterItsHeadArrives) {
  // A two-port NIC (address 5) on a ring: a frame for address 9 comes in on
  // port 0, its tail 1 us behind its head, and leaves on port 1 (bound
  // straight to a sink) forward_latency after its head came: cut-through. Its
  // input is released when it has left port 1, at its tail.
  constexpr Tick kForward = 250'000;
  constexpr Tick kTailAfter = 1'000'000;
  Nic::Params p;
  p.address = 5;
  p.ports = 2;
  p.forward_latency = kForward;
  MessageSource npu_out("npu_out");
  MessageSink npu_in("npu_in");
  Nic nic("nic", p);
  FrameSource from_left("from_left"), from_right("from_right");
  FrameSink to_left("to_left"), to_right("to_right");
  npu_out.out.bind(nic.in);
  nic.out.bind(npu_in.in);
  from_left.out.bind(nic.rx[0]);
  from_right.out.bind(nic.rx[1]);
  nic.tx[0].bind(to_left.in);
  nic.tx[1].bind(to_right.in);
  nic.forwarder().routes().set(9, {1});
  from_left.send(testutil::make_frame(4096, 9), kStart, kTailAfter);
  testutil::run_to_end();

  ASSERT_EQ(to_right.arrivals().size(), 1u);
  EXPECT_TRUE(to_left.arrivals().empty());
  EXPECT_EQ(to_right.arrivals()[0].head, kStart + kForward);
  EXPECT_EQ(to_right.arrivals()[0].tail, kStart + kTailAfter + kForward);
  EXPECT_EQ(from_left.left()[0], kStart + kTailAfter + kForward);
  EXPECT_EQ(nic.frames_forwarded(), 1u);
}

}  // namespace
