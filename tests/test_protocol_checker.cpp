// The protocol checker (tlm/protocol_checker.h) between a test initiator and
// a deliberately wrong target: each rule fires, naming itself; and between
// real components it stays quiet.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "models/link/link.h"
#include "support/frame_harness.h"
#include "tlm/protocol_checker.h"

using namespace fabricsim;

namespace {

/// Calls the checker's forward path directly and takes its backward calls.
struct Initiator : sc_core::sc_module {
  FrameInitiatorSocket<Initiator> out{"out"};
  ForwardPath<FrameProtocol> forward{out};
  int end_reqs = 0;
  explicit Initiator(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
    out.register_nb_transport_bw<&Initiator::bw>(this, 0);
  }
  tlm::tlm_sync_enum send(Frame* f, tlm::tlm_phase phase = tlm::BEGIN_REQ) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    return forward(f->payload(), phase, delay);
  }
  tlm::tlm_sync_enum bw(int, tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) {
    ++end_reqs;
    return tlm::TLM_ACCEPTED;
  }
};

/// Answers BEGIN_REQ however the test says; can call END_REQ back later.
struct WrongTarget : sc_core::sc_module {
  FrameTargetSocket<WrongTarget> in{"in"};
  BackwardPath<FrameProtocol> backward{in};
  std::function<tlm::tlm_sync_enum(tlm::tlm_phase&, sc_core::sc_time&)> answer = [](auto&, auto&) {
    return tlm::TLM_ACCEPTED;
  };
  explicit WrongTarget(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
    in.register_nb_transport_fw<&WrongTarget::fw>(this, 0);
  }
  tlm::tlm_sync_enum fw(int, tlm::tlm_generic_payload&, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
    return answer(phase, delay);
  }
  void end_req(Frame* f, tlm::tlm_phase phase = tlm::END_REQ) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    backward(f->payload(), phase, delay);
  }
};

struct Bench {
  Initiator initiator{"initiator"};
  FrameChecker checker{"checker"};
  WrongTarget target{"target"};
  Bench() {
    initiator.out.bind(checker.in);
    checker.out.bind(target.in);
  }
};

/// Runs `f` and returns the protocol error it raised ("" if none).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sc_core::sc_report& r) {
    EXPECT_STREQ(r.get_msg_type(), FrameChecker::kReportType);
    return r.get_msg();
  }
  return "";
}

/// Elaborates (the checker's paths resolve on first use, after binding).
void elaborate() { sc_core::sc_start(sc_core::SC_ZERO_TIME); }

TEST(ProtocolChecker, EveryRuleFiresOnAWrongSequenceAndNamesItself) {
  Bench b;
  elaborate();
  Frame* f = testutil::make_frame(100);

  // END_REQ on the forward path.
  EXPECT_NE(error_of([&] { b.initiator.send(f, tlm::END_REQ); }).find("the forward path carries BEGIN_REQ only"),
            std::string::npos);
  EXPECT_EQ(b.checker.outstanding(), 0u);  // a call that broke a rule was not passed on

  // BEGIN_REQ again before END_REQ.
  b.initiator.send(f);
  EXPECT_NE(error_of([&] { b.initiator.send(f); }).find("whose BEGIN_REQ is still outstanding"), std::string::npos);
  b.target.end_req(f);
  // A second END_REQ for the same frame.
  EXPECT_NE(error_of([&] { b.target.end_req(f); }).find("with no BEGIN_REQ outstanding (a second END_REQ?)"),
            std::string::npos);
  // BEGIN_REQ on the backward path.
  b.initiator.send(f);
  EXPECT_NE(error_of([&] { b.target.end_req(f, tlm::BEGIN_REQ); }).find("the backward path carries END_REQ only"),
            std::string::npos);
  b.target.end_req(f);

  // The target answers TLM_UPDATED with a phase that is not END_REQ.
  b.target.answer = [](tlm::tlm_phase& phase, sc_core::sc_time&) {
    phase = tlm::BEGIN_RESP;
    return tlm::TLM_UPDATED;
  };
  EXPECT_NE(error_of([&] { b.initiator.send(f); }).find("TLM_UPDATED with a phase other than END_REQ"),
            std::string::npos);
  // ... or completes a frame, which gets no END_REQ then.
  b.target.answer = [](tlm::tlm_phase&, sc_core::sc_time&) { return tlm::TLM_COMPLETED; };
  EXPECT_NE(error_of([&] { b.initiator.send(f); }).find("a frame answered TLM_COMPLETED"), std::string::npos);

  // END_REQ annotated before the time its BEGIN_REQ announced.
  b.target.answer = [](tlm::tlm_phase& phase, sc_core::sc_time& delay) {
    phase = tlm::END_REQ;
    delay = sc_core::SC_ZERO_TIME;
    return tlm::TLM_UPDATED;
  };
  EXPECT_NE(error_of([&] {
              tlm::tlm_phase phase = tlm::BEGIN_REQ;
              sc_core::sc_time delay(5, sc_core::SC_NS);
              f->tail = absolute(delay);
              b.initiator.forward(f->payload(), phase, delay);
            }).find("before its BEGIN_REQ's time"),
            std::string::npos);

  // A frame whose tail comes before its head.
  EXPECT_NE(error_of([&] {
              tlm::tlm_phase phase = tlm::BEGIN_REQ;
              sc_core::sc_time delay(5, sc_core::SC_NS);
              f->tail = 0;
              b.initiator.forward(f->payload(), phase, delay);
            }).find("a frame whose tail is before its head"),
            std::string::npos);

  // A payload that is not a frame.
  tlm::tlm_generic_payload foreign;
  EXPECT_NE(error_of([&] {
              tlm::tlm_phase phase = tlm::BEGIN_REQ;
              sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
              b.initiator.forward(foreign, phase, delay);
            }).find("a payload that is not a frame on a frame socket"),
            std::string::npos);
  EXPECT_EQ(b.checker.violations(), 9u);
  f->retire();
  Frame::recycle_retired();
}

TEST(ProtocolChecker, ARightSequencePassesUnchangedAndIsCounted) {
  Bench b;
  elaborate();
  Frame* f = testutil::make_frame(100);
  b.initiator.send(f);  // TLM_ACCEPTED, END_REQ later
  EXPECT_EQ(b.checker.outstanding(), 1u);
  b.target.end_req(f);
  EXPECT_EQ(b.initiator.end_reqs, 1);  // passed through to the initiator
  b.target.answer = [](tlm::tlm_phase& phase, sc_core::sc_time&) {
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
  };
  EXPECT_EQ(b.initiator.send(f), tlm::TLM_UPDATED);
  EXPECT_EQ(b.checker.transactions(), 2u);
  EXPECT_EQ(b.checker.outstanding(), 0u);
  EXPECT_EQ(b.checker.violations(), 0u);
  f->retire();
  Frame::recycle_retired();
}

TEST(ProtocolChecker, OnALinkRunningOutOfCreditsItStaysQuiet) {
  // 20 frames of 1000 bytes offered at once into a link whose far end has
  // room for two and holds each 200 ns, returning its credit later: END_REQs
  // by the backward path, in the return path, and frames waiting for credits,
  // all within the rules. (That the checkers change no time is shown where
  // they sit in test_base_protocol_bridge: its times are the closed forms.)
  testutil::FrameSource source("source", false);
  FrameChecker before("before"), after("after");
  Link::Params lp;
  lp.bandwidth = Bandwidth::GBps(8);
  lp.latency = 300'000;
  lp.buffer_bytes = 2000;
  Link link("link", lp);
  testutil::FrameSink sink("sink", 200'000, testutil::FrameSink::Release::kLater);
  source.out.bind(before.in);
  before.out.bind(link.in);
  link.out.bind(after.in);
  after.out.bind(sink.in);
  for (int i = 0; i < 20; ++i) source.send(testutil::make_frame(1000), 0);
  testutil::run_to_end();
  ASSERT_EQ(sink.arrivals().size(), 20u);
  EXPECT_EQ(before.transactions(), 20u);
  EXPECT_EQ(after.transactions(), 20u);
  EXPECT_EQ(before.violations() + after.violations(), 0u);
  EXPECT_EQ(before.outstanding() + after.outstanding(), 0u);
}

}  // namespace
