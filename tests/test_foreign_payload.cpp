// A payload that is not one of ours (a plain tlm_generic_payload, as a
// foreign model would send) on any fabric socket is answered with
// TLM_GENERIC_ERROR_RESPONSE and completed: never cast to a Message or Frame.
#include <gtest/gtest.h>

#include <functional>

#include "models/link/link.h"
#include "models/memory/memory_endpoint.h"
#include "models/nic/nic.h"
#include "models/switch/reduction_unit.h"
#include "models/switch/switch.h"

using namespace fabricsim;

namespace {

template <class Protocol>
tlm::tlm_sync_enum send_foreign(tlm::tlm_fw_transport_if<Protocol>& target, tlm::tlm_generic_payload& gp) {
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  return target.nb_transport_fw(gp, phase, delay);
}

TEST(ForeignPayloads, EveryFabricTargetAnswersWithAnErrorResponse) {
  Link link("link", Link::Params{});
  Switch::Params sp;
  sp.ports = 2;
  Switch sw("switch", sp);
  Nic::Params np;
  np.address = 0;
  Nic nic("nic", np);
  AggregationManager manager;
  ReductionUnit unit("unit", ReductionUnit::Params{}, manager);
  MemoryEndpoint endpoint("endpoint", 1);

  struct Target {
    const char* what;
    std::function<tlm::tlm_sync_enum(tlm::tlm_generic_payload&)> send;
  };
  const std::vector<Target> targets = {
      {"link.in", [&](auto& gp) { return send_foreign<FrameProtocol>(link.in, gp); }},
      {"switch.rx[0]", [&](auto& gp) { return send_foreign<FrameProtocol>(sw.rx[0], gp); }},
      {"nic.rx[0]", [&](auto& gp) { return send_foreign<FrameProtocol>(nic.rx[0], gp); }},
      {"nic.in", [&](auto& gp) { return send_foreign<MessageProtocol>(nic.in, gp); }},
      {"unit.in", [&](auto& gp) { return send_foreign<FrameProtocol>(unit.in, gp); }},
      {"endpoint.from_nic", [&](auto& gp) { return send_foreign<MessageProtocol>(endpoint.from_nic, gp); }},
  };
  for (const auto& t : targets) {
    tlm::tlm_generic_payload gp;
    EXPECT_EQ(t.send(gp), tlm::TLM_COMPLETED) << t.what;
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_GENERIC_ERROR_RESPONSE) << t.what;
  }
  // Ours are recognised, and only as what they are.
  Message* m = Message::allocate();
  Frame* f = Frame::allocate();
  EXPECT_EQ(Message::of(m->payload()), m);
  EXPECT_EQ(Frame::of(f->payload()), f);
  EXPECT_EQ(Frame::of(m->payload()), nullptr);
  EXPECT_EQ(Message::of(f->payload()), nullptr);
  // A copy made by a foreign model is not one of ours either.
  tlm::tlm_generic_payload copy;
  copy.deep_copy_from(f->payload());
  EXPECT_EQ(Frame::of(copy), nullptr);
  m->unref();  // back to their pools
  f->retire();
  Frame::recycle_retired();
}

}  // namespace
