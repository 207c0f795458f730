// A foreign model's plain TLM-2.0 sockets (tlm_utils' simple sockets) bound
// to a memory and, through BaseProtocolBridge, to a NIC: two NICs joined by a
// link each way (8 GB/s, 300 ns), with protocol checkers on the fabric
// sockets. Times against closed forms, to the picosecond.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstring>
#include <vector>

#include "models/link/link.h"
#include "models/memory/memory.h"
#include "models/nic/base_protocol_bridge.h"
#include "models/nic/nic.h"
#include "support/frame_harness.h"
#include "tlm/protocol_checker.h"

using namespace fabricsim;

namespace {

constexpr Tick kOverhead = 1'000'000;  // 1 us per message at the NIC
constexpr Tick kLatency = 300'000;     // 300 ns per link
constexpr double kGBps = 8;            // 125 ps a byte

/// Receives what a bridge delivers: when, at which address, which bytes.
struct Receiver : sc_core::sc_module {
  tlm_utils::simple_target_socket<Receiver> in{"in"};
  struct Write {
    Tick at;
    std::uint64_t address;
    std::vector<unsigned char> data;
  };
  std::vector<Write> writes;
  explicit Receiver(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
    in.register_b_transport(this, &Receiver::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    writes.push_back({(sc_core::sc_time_stamp() + delay).value(),
                      gp.get_address(),
                      {gp.get_data_ptr(), gp.get_data_ptr() + gp.get_data_length()}});
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

/// NIC 0 and NIC 1, each behind a bridge, a link each way; checkers on every
/// fabric socket pair.
struct TwoNics {
  Nic nic0, nic1;
  BaseProtocolBridge bridge0, bridge1;
  Link link01, link10;
  FrameChecker tx0, rx1, tx1, rx0;
  MessageChecker in0, out1, in1, out0;
  BaseProtocolChecker deliver0, deliver1;  // bridge -> receiver
  Receiver receiver0, receiver1;

  static Nic::Params nic_params(Address a) {
    Nic::Params p;
    p.address = a;
    p.message_overhead = kOverhead;
    return p;
  }
  static Link::Params link_params() {
    Link::Params p;
    p.bandwidth = Bandwidth::GBps(kGBps);
    p.latency = kLatency;
    return p;
  }
  TwoNics()
      : nic0("nic0", nic_params(0)),
        nic1("nic1", nic_params(1)),
        bridge0("bridge0", 0),
        bridge1("bridge1", 1),
        link01("link01", link_params()),
        link10("link10", link_params()),
        tx0("tx0"),
        rx1("rx1"),
        tx1("tx1"),
        rx0("rx0"),
        in0("in0"),
        out1("out1"),
        in1("in1"),
        out0("out0"),
        deliver0("deliver0"),
        deliver1("deliver1"),
        receiver0("receiver0"),
        receiver1("receiver1") {
    bridge0.to_nic.bind(in0.in);
    in0.out.bind(nic0.in);
    nic0.out.bind(out0.in);
    out0.out.bind(bridge0.from_nic);
    bridge1.to_nic.bind(in1.in);
    in1.out.bind(nic1.in);
    nic1.out.bind(out1.in);
    out1.out.bind(bridge1.from_nic);
    nic0.tx[0].bind(tx0.in);
    tx0.out.bind(link01.in);
    link01.out.bind(rx1.in);
    rx1.out.bind(nic1.rx[0]);
    nic1.tx[0].bind(tx1.in);
    tx1.out.bind(link10.in);
    link10.out.bind(rx0.in);
    rx0.out.bind(nic0.rx[0]);
    bridge0.to_target.bind(deliver0.in);
    deliver0.out.bind(receiver0.in);
    bridge1.to_target.bind(deliver1.in);
    deliver1.out.bind(receiver1.in);
  }
  void expect_clean() const {
    for (const auto* c : {&tx0, &rx1, &tx1, &rx0}) {
      EXPECT_EQ(c->violations(), 0u) << c->name();
      EXPECT_EQ(c->outstanding(), 0u) << c->name();
    }
    for (const auto* c : {&in0, &out1, &in1, &out0}) {
      EXPECT_EQ(c->violations(), 0u) << c->name();
      EXPECT_EQ(c->outstanding(), 0u) << c->name();
    }
    for (const auto* c : {&deliver0, &deliver1}) {
      EXPECT_EQ(c->violations(), 0u) << c->name();
      EXPECT_EQ(c->outstanding(), 0u) << c->name();
    }
  }
};

/// The closed form of one message of `bytes` (one frame) posted at `t`:
/// it has left NIC 0 after the overhead and its serialization, and is at
/// NIC 1 a link latency later.
constexpr Tick left_at(Tick t, std::uint64_t bytes) {
  return t + kOverhead + bytes * 125;
}
constexpr Tick arrives_at(Tick t, std::uint64_t bytes) {
  return left_at(t, bytes) + kLatency;
}

/// A CPU-like initiator: plain simple sockets, one to the memory, one to the
/// bridge, run by a thread.
struct Cpu : sc_core::sc_module {
  SC_HAS_PROCESS(Cpu);
  tlm_utils::simple_initiator_socket<Cpu> to_memory{"to_memory"};
  tlm_utils::simple_initiator_socket<Cpu> to_nic{"to_nic"};
  std::function<void(Cpu&)> program;
  // Non-blocking responses: when each BEGIN_RESP came.
  std::vector<Tick> responses;
  explicit Cpu(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
    SC_THREAD(run);
    to_nic.register_nb_transport_bw(this, &Cpu::nb_transport_bw);
  }
  void run() { program(*this); }
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
    EXPECT_EQ(phase, tlm::BEGIN_RESP);
    responses.push_back((sc_core::sc_time_stamp() + delay).value());
    return tlm::TLM_ACCEPTED;  // END_RESP comes when the program sends it
  }
  /// A write of `data` at `address` by b_transport; returns when it returned.
  Tick write(tlm_utils::simple_initiator_socket<Cpu>& socket, std::uint64_t address, std::vector<unsigned char>& data,
             tlm::tlm_response_status* status = nullptr) {
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(address);
    gp.set_data_ptr(data.data());
    gp.set_data_length(static_cast<unsigned>(data.size()));
    gp.set_streaming_width(static_cast<unsigned>(data.size()));
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(gp, delay);
    if (status) *status = gp.get_response_status();
    wait(delay);
    return sc_core::sc_time_stamp().value();
  }
};

std::vector<unsigned char> pattern(std::size_t n, unsigned char seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(seed + i * 7);
  return v;
}

TEST(BaseProtocolBridge, ASimpleInitiatorSocketWritesToAMemoryAndSendsThroughANicAtTheClosedForms) {
  TwoNics net;
  Memory::Params mp;  // one HBM3 stack: 819 GB/s over 16 channels, 256 B interleave, 100 ns
  Memory hbm("hbm", mp);
  Cpu cpu("cpu");
  cpu.to_memory.bind(hbm.in);
  BaseProtocolChecker face("face");
  cpu.to_nic.bind(face.in);
  face.out.bind(net.bridge0.from_initiator);

  std::vector<unsigned char> block = pattern(64 << 10, 3), message = pattern(10000, 11);
  Tick memory_done = 0, message_left = 0;
  tlm::tlm_response_status memory_status = tlm::TLM_INCOMPLETE_RESPONSE, send_status = tlm::TLM_INCOMPLETE_RESPONSE;
  cpu.program = [&](Cpu& c) {
    memory_done = c.write(c.to_memory, 0, block, &memory_status);
    // To NIC 1 (Address 1 in the top 32 bits), at offset 0x40 there.
    message_left = c.write(c.to_nic, (std::uint64_t{1} << 32) | 0x40, message, &send_status);
  };
  testutil::run_to_end();

  // 64 KiB spread evenly over 16 channels: 64 KiB at 819 GB/s, then 100 ns.
  EXPECT_EQ(memory_status, tlm::TLM_OK_RESPONSE);
  const double memory_ps = 65536.0 / 819.0 * 1000.0 + 100'000.0;
  EXPECT_NEAR(static_cast<double>(memory_done), memory_ps, 1.0);

  const Tick posted = memory_done;
  EXPECT_EQ(send_status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(message_left, left_at(posted, 10000));
  ASSERT_EQ(net.receiver1.writes.size(), 1u);
  const auto& w = net.receiver1.writes[0];
  EXPECT_EQ(w.at, arrives_at(posted, 10000));
  EXPECT_EQ(w.address, 0x40u);  // from Address 0, at the sender's offset
  EXPECT_EQ(w.data, message);
  EXPECT_TRUE(net.receiver0.writes.empty());
  EXPECT_EQ(net.bridge0.stats().messages_sent, 1u);
  EXPECT_EQ(net.bridge1.stats().bytes_received, 10000u);
  net.expect_clean();
}

TEST(BaseProtocolBridge, NonBlockingWritesGetEndReqAtOnceAndBeginRespWhenTheirMessageHasLeftOneAtATime) {
  TwoNics net;
  Cpu cpu("cpu");
  Memory hbm("hbm", Memory::Params{});
  cpu.to_memory.bind(hbm.in);
  BaseProtocolChecker face("face");
  cpu.to_nic.bind(face.in);
  face.out.bind(net.bridge1.from_initiator);

  std::vector<unsigned char> a = pattern(4000, 1), b = pattern(2000, 2);
  tlm::tlm_generic_payload gp_a, gp_b;
  std::vector<tlm::tlm_sync_enum> returns;
  std::vector<tlm::tlm_phase> phases;
  std::vector<tlm::tlm_sync_enum> end_resp_returns;
  std::vector<Tick> delays;
  cpu.program = [&](Cpu& c) {
    for (auto [gp, data] : {std::pair{&gp_a, &a}, std::pair{&gp_b, &b}}) {
      gp->set_command(tlm::TLM_WRITE_COMMAND);
      gp->set_address(0);  // to NIC 0
      gp->set_data_ptr(data->data());
      gp->set_data_length(static_cast<unsigned>(data->size()));
      gp->set_streaming_width(static_cast<unsigned>(data->size()));
      gp->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      // b is annotated 300 ns ahead: posted then, and its END_REQ keeps that time.
      sc_core::sc_time delay = gp == &gp_b ? sc_core::sc_time(300, sc_core::SC_NS) : sc_core::SC_ZERO_TIME;
      returns.push_back(c.to_nic->nb_transport_fw(*gp, phase, delay));
      phases.push_back(phase);
      delays.push_back(delay.value());
    }
    // a's BEGIN_RESP comes at 1.5 us; its END_RESP, sent at 2.5 us, lets b's
    // (ready at 1.75 us) come then: one response at a time.
    for (auto* gp : {&gp_a, &gp_b}) {
      sc_core::wait(sc_core::sc_time(2500, sc_core::SC_NS) - sc_core::sc_time_stamp() +
                    sc_core::sc_time(gp == &gp_b ? 1000 : 0, sc_core::SC_NS));
      tlm::tlm_phase phase = tlm::END_RESP;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      end_resp_returns.push_back(c.to_nic->nb_transport_fw(*gp, phase, delay));
    }
  };
  testutil::run_to_end();

  EXPECT_EQ(returns, (std::vector<tlm::tlm_sync_enum>{tlm::TLM_UPDATED, tlm::TLM_UPDATED}));
  EXPECT_EQ(phases, (std::vector<tlm::tlm_phase>{tlm::END_REQ, tlm::END_REQ}));
  EXPECT_EQ(delays, (std::vector<Tick>{0, 300'000}));  // END_REQ at each request's own time
  // Both posted at 0: a waits its overhead and goes out; b's frame starts when
  // a's has left (one frame at a time per port), its overhead long over. b's
  // response waits for a's END_RESP at 2.5 us.
  ASSERT_EQ(left_at(0, 4000), 1'500'000u);
  EXPECT_EQ(cpu.responses, (std::vector<Tick>{left_at(0, 4000), 2'500'000}));
  EXPECT_EQ(end_resp_returns, (std::vector<tlm::tlm_sync_enum>{tlm::TLM_COMPLETED, tlm::TLM_COMPLETED}));
  ASSERT_EQ(net.receiver0.writes.size(), 2u);
  EXPECT_EQ(net.receiver0.writes[0].at, arrives_at(0, 4000));
  EXPECT_EQ(net.receiver0.writes[1].at, left_at(0, 4000) + 2000 * 125 + kLatency);
  EXPECT_EQ(net.receiver0.writes[1].address, std::uint64_t{1} << 32);  // from Address 1
  EXPECT_EQ(net.receiver0.writes[1].data, b);
  EXPECT_EQ(face.violations(), 0u);
  EXPECT_EQ(face.outstanding(), 0u);
  net.expect_clean();
}

TEST(BaseProtocolBridge, WritesItCannotSendAreRefusedWithTheBaseProtocolsStatuses) {
  TwoNics net;
  Cpu cpu("cpu");
  Memory hbm("hbm", Memory::Params{});
  cpu.to_memory.bind(hbm.in);
  cpu.to_nic.bind(net.bridge0.from_initiator);
  net.bridge0.set_destinations([](Address a) { return a == 1; });  // the only other endpoint
  std::vector<tlm::tlm_response_status> statuses;
  cpu.program = [&](Cpu& c) {
    std::vector<unsigned char> data = pattern(64, 5), none;
    tlm::tlm_response_status s;
    c.write(c.to_nic, 0, data, &s);  // to itself
    statuses.push_back(s);
    c.write(c.to_nic, std::uint64_t{1} << 32, none, &s);  // no bytes
    statuses.push_back(s);
    c.write(c.to_nic, std::uint64_t{7} << 32, data, &s);  // no such endpoint (set_destinations)
    statuses.push_back(s);
    tlm::tlm_generic_payload odd;
    unsigned char enables[64] = {};
    for (int k = 0; k < 2; ++k) {
      odd.set_command(tlm::TLM_WRITE_COMMAND);
      odd.set_address(std::uint64_t{1} << 32);
      odd.set_data_ptr(data.data());
      odd.set_data_length(64);
      odd.set_streaming_width(k == 0 ? 64 : 8);             // a burst narrower than the data
      odd.set_byte_enable_ptr(k == 0 ? enables : nullptr);  // byte enables
      odd.set_byte_enable_length(k == 0 ? 64 : 0);
      odd.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      c.to_nic->b_transport(odd, delay);
      statuses.push_back(odd.get_response_status());
    }
    tlm::tlm_generic_payload read;
    read.set_command(tlm::TLM_READ_COMMAND);
    read.set_address(std::uint64_t{1} << 32);
    read.set_data_ptr(data.data());
    read.set_data_length(64);
    read.set_streaming_width(64);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    c.to_nic->b_transport(read, delay);
    statuses.push_back(read.get_response_status());
  };
  testutil::run_to_end();
  EXPECT_EQ(statuses,
            (std::vector<tlm::tlm_response_status>{tlm::TLM_ADDRESS_ERROR_RESPONSE, tlm::TLM_GENERIC_ERROR_RESPONSE,
                                                   tlm::TLM_ADDRESS_ERROR_RESPONSE, tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE,
                                                   tlm::TLM_BURST_ERROR_RESPONSE, tlm::TLM_COMMAND_ERROR_RESPONSE}));
  EXPECT_EQ(net.bridge0.stats().refused, 6u);
  EXPECT_EQ(net.bridge0.stats().messages_sent, 0u);
  EXPECT_TRUE(net.receiver1.writes.empty());
}

}  // namespace
