// Paths between sockets: straight to a tagged socket's callback, through the
// interface to any other TLM-2.0 socket.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tlm/fabric_protocol.h"

using namespace fabricsim;

namespace {

struct Call {
  int tag;
  sc_core::sc_time delay;
};

// Two tagged target sockets and two tagged initiator sockets, each recording
// what reaches it.
struct Tagged : sc_core::sc_module {
  sc_core::sc_vector<FrameTargetSocket<Tagged>> in;
  sc_core::sc_vector<FrameInitiatorSocket<Tagged>> out;
  std::vector<Call> fw_calls, bw_calls;

  explicit Tagged(const sc_core::sc_module_name& n) : sc_core::sc_module(n), in("in", 2), out("out", 2) {
    for (int i = 0; i < 2; ++i) {
      in[i].register_nb_transport_fw<&Tagged::fw>(this, 10 + i);
      out[i].register_nb_transport_bw<&Tagged::bw>(this, 20 + i);
    }
  }
  tlm::tlm_sync_enum fw(int tag, tlm::tlm_generic_payload&, tlm::tlm_phase& phase, sc_core::sc_time& t) {
    fw_calls.push_back({tag, t});
    phase = tlm::END_REQ;
    t += sc_core::sc_time(1, sc_core::SC_NS);
    return tlm::TLM_UPDATED;
  }
  tlm::tlm_sync_enum bw(int tag, tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time& t) {
    bw_calls.push_back({tag, t});
    return tlm::TLM_ACCEPTED;
  }
};

// A foreign pair: tlm_utils simple sockets speaking the frame protocol.
struct Foreign : sc_core::sc_module {
  tlm_utils::simple_target_socket<Foreign, 64, FrameProtocol> in;
  tlm_utils::simple_initiator_socket<Foreign, 64, FrameProtocol> out;
  int fw_calls = 0, bw_calls = 0;

  explicit Foreign(const sc_core::sc_module_name& n) : sc_core::sc_module(n), in("in"), out("out") {
    in.register_nb_transport_fw(this, &Foreign::fw);
    out.register_nb_transport_bw(this, &Foreign::bw);
  }
  tlm::tlm_sync_enum fw(tlm::tlm_generic_payload&, tlm::tlm_phase& phase, sc_core::sc_time&) {
    ++fw_calls;
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
  }
  tlm::tlm_sync_enum bw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) {
    ++bw_calls;
    return tlm::TLM_ACCEPTED;
  }
};

}  // namespace

TEST(Sockets, PathsReachTaggedCallbacksWithTheirTags) {
  Tagged a("a"), b("b");
  a.out[0].bind(b.in[1]);
  a.out[1].bind(b.in[0]);
  b.out[0].bind(a.in[0]);  // leave nothing unbound
  b.out[1].bind(a.in[1]);
  ForwardPath<FrameProtocol> to_b1(a.out[0]), to_b0(a.out[1]);
  BackwardPath<FrameProtocol> back_to_a0(b.in[1]);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate: bind the ports

  tlm::tlm_generic_payload gp;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time t(5, sc_core::SC_NS);
  EXPECT_EQ(to_b1(gp, phase, t), tlm::TLM_UPDATED);
  EXPECT_EQ(phase, tlm::END_REQ);
  EXPECT_EQ(t, sc_core::sc_time(6, sc_core::SC_NS));  // the callee's answer comes back
  phase = tlm::BEGIN_REQ;
  to_b0(gp, phase, t);
  phase = tlm::END_REQ;
  back_to_a0(gp, phase, t);

  ASSERT_EQ(b.fw_calls.size(), 2u);
  EXPECT_EQ(b.fw_calls[0].tag, 11);
  EXPECT_EQ(b.fw_calls[0].delay, sc_core::sc_time(5, sc_core::SC_NS));
  EXPECT_EQ(b.fw_calls[1].tag, 10);
  ASSERT_EQ(a.bw_calls.size(), 1u);
  EXPECT_EQ(a.bw_calls[0].tag, 20);
  EXPECT_TRUE(a.fw_calls.empty());
  EXPECT_TRUE(b.bw_calls.empty());
}

TEST(Sockets, PathsReachForeignSocketsThroughTheirInterface) {
  Tagged ours("ours");
  Foreign theirs("theirs");
  ours.out[0].bind(theirs.in);
  theirs.out.bind(ours.in[0]);
  ours.out[1].bind(ours.in[1]);  // leave nothing unbound
  ForwardPath<FrameProtocol> to_theirs(ours.out[0]);
  BackwardPath<FrameProtocol> back_to_theirs(ours.in[0]);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);

  tlm::tlm_generic_payload gp;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time t = sc_core::SC_ZERO_TIME;
  EXPECT_EQ(to_theirs(gp, phase, t), tlm::TLM_UPDATED);
  EXPECT_EQ(to_theirs(gp, phase, t), tlm::TLM_UPDATED);  // resolved once, called again
  phase = tlm::END_REQ;
  EXPECT_EQ(back_to_theirs(gp, phase, t), tlm::TLM_ACCEPTED);
  EXPECT_EQ(theirs.fw_calls, 2);
  EXPECT_EQ(theirs.bw_calls, 1);
  // And the foreign initiator reaches our callback through the socket itself,
  // with a frame; a payload that is not one is refused there.
  phase = tlm::BEGIN_REQ;
  t = sc_core::sc_time(3, sc_core::SC_NS);
  Frame* f = Frame::allocate();
  EXPECT_EQ(theirs.out->nb_transport_fw(f->payload(), phase, t), tlm::TLM_UPDATED);
  ASSERT_EQ(ours.fw_calls.size(), 1u);
  EXPECT_EQ(ours.fw_calls[0].tag, 10);
  phase = tlm::BEGIN_REQ;
  EXPECT_EQ(theirs.out->nb_transport_fw(gp, phase, t), tlm::TLM_COMPLETED);
  EXPECT_EQ(gp.get_response_status(), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(ours.fw_calls.size(), 1u);
  f->retire();  // back to its pool
  Frame::recycle_retired();
}
