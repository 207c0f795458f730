// The protocol checker (tlm/protocol_checker.h) between a test initiator and
// a deliberately wrong target: each rule fires, naming itself; and between
// real components it stays quiet.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <functional>
#include <string>

#include "models/link/link.h"
#include "models/memory/memory.h"
#include "support/frame_harness.h"
#include "tlm/kernel/calendar.h"
#include "tlm/memory_client.h"
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
void elaborate() {
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
}

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

// --- the base protocol -----------------------------------------------------

/// An initiator with a plain simple socket; answers BEGIN_RESP with ACCEPTED.
struct PlainInitiator : sc_core::sc_module {
  SC_HAS_PROCESS(PlainInitiator);
  tlm_utils::simple_initiator_socket<PlainInitiator> socket{"socket"};
  std::function<void(PlainInitiator&)> program;
  std::vector<Tick> responses;
  tlm::tlm_sync_enum on_response = tlm::TLM_ACCEPTED;
  explicit PlainInitiator(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
    socket.register_nb_transport_bw(this, &PlainInitiator::bw);
    SC_THREAD(run);
  }
  void run() {
    if (program) program(*this);
  }
  tlm::tlm_sync_enum bw(tlm::tlm_generic_payload&, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
    if (phase == tlm::BEGIN_RESP) responses.push_back((sc_core::sc_time_stamp() + delay).value());
    return on_response;
  }
  tlm::tlm_sync_enum send(tlm::tlm_generic_payload& gp, tlm::tlm_phase phase) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    return socket->nb_transport_fw(gp, phase, delay);
  }
};

/// A base-protocol target that answers as the test says, and whose
/// b_transport forgets the response status.
struct PlainTarget : sc_core::sc_module {
  tlm_utils::simple_target_socket<PlainTarget> socket{"socket"};
  explicit PlainTarget(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
    socket.register_nb_transport_fw(this, &PlainTarget::fw);
    socket.register_b_transport(this, &PlainTarget::b_transport);
  }
  bool end_req_now = false;  // answer BEGIN_REQ with END_REQ annotated at now, whatever the request's delay
  tlm::tlm_sync_enum fw(tlm::tlm_generic_payload&, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
    if (!end_req_now || phase != tlm::BEGIN_REQ) return tlm::TLM_ACCEPTED;
    phase = tlm::END_REQ;
    delay = sc_core::SC_ZERO_TIME;
    return tlm::TLM_UPDATED;
  }
  void b_transport(tlm::tlm_generic_payload&, sc_core::sc_time&) {}
  tlm::tlm_sync_enum back(tlm::tlm_generic_payload& gp, tlm::tlm_phase phase) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    return socket->nb_transport_bw(gp, phase, delay);
  }
};

std::string base_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sc_core::sc_report& r) {
    EXPECT_STREQ(r.get_msg_type(), BaseProtocolChecker::kReportType);
    return r.get_msg();
  }
  return "";
}

void request(tlm::tlm_generic_payload& gp, tlm::tlm_command command, std::vector<unsigned char>& data) {
  gp.set_command(command);
  gp.set_address(0);
  gp.set_data_ptr(data.data());
  gp.set_data_length(static_cast<unsigned>(data.size()));
  gp.set_streaming_width(static_cast<unsigned>(data.size()));
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

TEST(BaseProtocolChecker, EveryRuleFiresOnAWrongSequenceAndNamesItself) {
  PlainInitiator initiator("initiator");
  BaseProtocolChecker checker("checker");
  PlainTarget target("target");
  initiator.socket.bind(checker.in);
  checker.out.bind(target.socket);
  std::vector<unsigned char> data(64);
  tlm::tlm_generic_payload a, b;
  std::vector<std::string> errors;
  initiator.program = [&](PlainInitiator& i) {
    const auto fires = [&](const std::function<void()>& f) { errors.push_back(base_error_of(f)); };
    request(a, tlm::TLM_WRITE_COMMAND, data);
    request(b, tlm::TLM_READ_COMMAND, data);
    fires([&] { i.send(a, tlm::BEGIN_RESP); });
    a.set_response_status(tlm::TLM_OK_RESPONSE);
    fires([&] { i.send(a, tlm::BEGIN_REQ); });
    a.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    i.send(a, tlm::BEGIN_REQ);  // accepted; no END_REQ yet
    fires([&] { i.send(b, tlm::BEGIN_REQ); });
    target.back(a, tlm::END_REQ);
    fires([&] { i.send(a, tlm::END_RESP); });
    fires([&] { target.back(a, tlm::BEGIN_RESP); });  // status still incomplete
    a.set_response_status(tlm::TLM_OK_RESPONSE);
    target.back(a, tlm::BEGIN_RESP);  // the initiator accepts: END_RESP to come
    i.send(b, tlm::BEGIN_REQ);
    b.set_response_status(tlm::TLM_OK_RESPONSE);
    fires([&] { target.back(b, tlm::BEGIN_RESP); });  // a's response is still open
    i.send(a, tlm::END_RESP);
    target.back(b, tlm::BEGIN_RESP);
    i.send(b, tlm::END_RESP);
    tlm::tlm_generic_payload c;
    request(c, tlm::TLM_READ_COMMAND, data);
    fires([&] {
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      i.socket->b_transport(c, delay);
    });
  };
  sc_core::sc_start();
  const std::vector<std::string> rules = {
      "the forward path carries BEGIN_REQ and END_RESP only",
      "BEGIN_REQ with a response status other than TLM_INCOMPLETE_RESPONSE",
      "(request exclusion)",
      "END_RESP for a transaction with no response",
      "BEGIN_RESP with the response status still TLM_INCOMPLETE_RESPONSE",
      "(response exclusion)",
      "b_transport returned with the response status still TLM_INCOMPLETE_RESPONSE",
  };
  ASSERT_EQ(errors.size(), rules.size());
  for (std::size_t k = 0; k < rules.size(); ++k) {
    EXPECT_NE(errors[k].find(rules[k]), std::string::npos) << "expected: " << rules[k] << "\ngot: " << errors[k];
  }
  EXPECT_EQ(checker.violations(), rules.size());
  EXPECT_EQ(checker.outstanding(), 0u);
}

TEST(BaseProtocolChecker, APhaseAnnotatedBeforeTheTransactionsPreviousOneFires) {
  // BEGIN_REQ annotated 10 ns ahead, answered END_REQ at now: time went back
  // (the bug the NIC bridge once had).
  PlainInitiator initiator("initiator");
  BaseProtocolChecker checker("checker");
  PlainTarget target("target");
  initiator.socket.bind(checker.in);
  checker.out.bind(target.socket);
  target.end_req_now = true;
  std::vector<unsigned char> data(64);
  std::string error;
  initiator.program = [&](PlainInitiator& i) {
    tlm::tlm_generic_payload gp;
    request(gp, tlm::TLM_WRITE_COMMAND, data);
    error = base_error_of([&] {
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_core::sc_time delay(10, sc_core::SC_NS);
      i.socket->nb_transport_fw(gp, phase, delay);
    });
  };
  sc_core::sc_start();
  EXPECT_NE(
      error.find("forward path's return: END_REQ annotated at 0 s, before the transaction's previous phase at 10 ns"),
      std::string::npos)
      << error;
}

/// A plain initiator, a base-protocol checker and one HBM3 stack, bound in
/// a row; the initiator completes every response at once.
struct CheckedHbm {
  PlainInitiator initiator{"initiator"};
  BaseProtocolChecker checker{"checker"};
  Memory hbm{"hbm", Memory::Params{}};
  CheckedHbm() {
    initiator.socket.bind(checker.in);
    checker.out.bind(hbm.in);
    initiator.on_response = tlm::TLM_COMPLETED;
  }
};

TEST(BaseProtocolChecker, OnAMemoryBothTransportsPassUnchanged) {
  // A 64 KiB write by b_transport, then a 64 KiB read by nb_transport, on one
  // HBM3 stack (819 GB/s, 100 ns): each takes 64 KiB / 819 GB/s + 100 ns,
  // with the checker in between.
  CheckedHbm bench;
  PlainInitiator& initiator = bench.initiator;
  BaseProtocolChecker& checker = bench.checker;
  std::vector<unsigned char> data(64 << 10);
  Tick written = 0;
  tlm::tlm_sync_enum read_return = tlm::TLM_ACCEPTED;
  tlm::tlm_generic_payload read;
  initiator.program = [&](PlainInitiator& i) {
    tlm::tlm_generic_payload write;
    request(write, tlm::TLM_WRITE_COMMAND, data);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    i.socket->b_transport(write, delay);
    sc_core::wait(delay);
    written = sc_core::sc_time_stamp().value();
    request(read, tlm::TLM_READ_COMMAND, data);
    read_return = i.send(read, tlm::BEGIN_REQ);
  };
  sc_core::sc_start();
  const double access_ps = 65536.0 / 819.0 * 1000.0 + 100'000.0;
  EXPECT_NEAR(static_cast<double>(written), access_ps, 1.0);
  EXPECT_EQ(read_return, tlm::TLM_UPDATED);  // END_REQ at once
  ASSERT_EQ(initiator.responses.size(), 1u);
  EXPECT_NEAR(static_cast<double>(initiator.responses[0]), 2 * access_ps, 2.0);
  EXPECT_TRUE(read.is_response_ok());
  EXPECT_EQ(checker.transactions(), 2u);
  EXPECT_EQ(checker.violations(), 0u);
  EXPECT_EQ(checker.outstanding(), 0u);
}

}  // namespace

namespace {
/// Streams `left` reads through a MemoryClient, each asked for from inside
/// the previous one's memory_done, as the NIC and the NPU do.
struct ChainedReads : sc_core::sc_module, MemoryClient<int>::Listener {
  MemoryClient<int> client{"client", *this};
  int left = 0;
  std::vector<Tick> done;
  explicit ChainedReads(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
    Calendar::instance().schedule<&ChainedReads::start>(0, this);
  }
  void start() { client.stream(false, 4096, left); }
  void memory_done(int, bool, tlm::tlm_response_status) override {
    done.push_back(now_ticks());
    if (--left > 0) client.stream(false, 4096, left);
  }
};
}  // namespace

TEST(BaseProtocolChecker, ADelayedRequestToAMemoryEndsItsRequestAtItsOwnTime) {
  // A read posted with 10 ns of annotated delay: the memory accepts it at
  // once (TLM_UPDATED, END_REQ), at the request's time, not before it.
  CheckedHbm bench;
  PlainInitiator& initiator = bench.initiator;
  BaseProtocolChecker& checker = bench.checker;
  std::vector<unsigned char> data(4096);
  tlm::tlm_generic_payload read;
  sc_core::sc_time end_req_delay;
  tlm::tlm_sync_enum answer = tlm::TLM_ACCEPTED;
  initiator.program = [&](PlainInitiator& i) {
    request(read, tlm::TLM_READ_COMMAND, data);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    end_req_delay = sc_core::sc_time(10, sc_core::SC_NS);
    answer = i.socket->nb_transport_fw(read, phase, end_req_delay);
  };
  sc_core::sc_start();
  EXPECT_EQ(answer, tlm::TLM_UPDATED);
  EXPECT_EQ(end_req_delay, sc_core::sc_time(10, sc_core::SC_NS));
  EXPECT_EQ(checker.violations(), 0u);
  EXPECT_EQ(checker.outstanding(), 0u);
}

TEST(BaseProtocolChecker, AMemoryClientAskingAgainFromItsCallbackBeginsANewTransaction) {
  // Each read is asked for inside the previous one's BEGIN_RESP: its payload
  // must not be the one whose response is still being answered.
  ChainedReads reads("reads");
  BaseProtocolChecker checker("checker");
  Memory hbm("hbm", Memory::Params{});
  reads.client.socket.bind(checker.in);
  checker.out.bind(hbm.in);
  reads.client.set_window(0, 1 << 20);
  reads.left = 4;
  sc_core::sc_start();
  ASSERT_EQ(reads.done.size(), 4u);
  EXPECT_EQ(checker.transactions(), 4u);
  EXPECT_EQ(checker.violations(), 0u);
  EXPECT_EQ(checker.outstanding(), 0u);
}
