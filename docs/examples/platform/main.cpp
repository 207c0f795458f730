// A small SystemC platform of a user's own, built against an installed
// fabricsim: its own CPU-like initiator with plain TLM-2.0 sockets, one of
// fabricsim's HBM stacks, and two NICs on a fabric of two switches.
//
//   cpu --b_transport--> hbm                      (write 64 KiB, read it back)
//   cpu --b_transport--> bridge0 -> nic0 -> switch0 -> switch1 -> nic1
//                                                        -> bridge1 -> accelerator
//
// Protocol checkers sit on every socket pair, fabric and base protocol. The
// run prints each time beside its closed form and checks the bytes that
// arrive; it exits 0 only if everything agrees ("result: ok").
#include <fabricsim/models/link/link.h>
#include <fabricsim/models/memory/memory.h>
#include <fabricsim/models/nic/base_protocol_bridge.h>
#include <fabricsim/models/nic/nic.h>
#include <fabricsim/models/switch/switch.h>
#include <fabricsim/tlm/kernel/calendar.h>
#include <fabricsim/tlm/protocol_checker.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

using fabricsim::Tick;

namespace {

constexpr std::size_t kBytes = 64 << 10;
constexpr double kHbmGBps = 819;  // one HBM3 stack (fabricsim's default)
constexpr double kHbmLatencyPs = 100e3;
constexpr double kLinkGBps = 50;           // 400 Gb/s
constexpr Tick kLinkLatency = 200'000;     // 200 ns
constexpr Tick kHopLatency = 100'000;      // 100 ns per switch
constexpr Tick kSendOverhead = 1'000'000;  // 1 us per message at the NIC

/// The user's own initiator: writes a block to memory, reads it back, and
/// sends it to the accelerator behind NIC 1.
struct Cpu : sc_core::sc_module {
  SC_HAS_PROCESS(Cpu);
  tlm_utils::simple_initiator_socket<Cpu> to_memory{"to_memory"};
  tlm_utils::simple_initiator_socket<Cpu> to_nic{"to_nic"};
  std::vector<unsigned char> block, readback;
  Tick written = 0, read = 0, sent = 0;
  bool ok = true;

  explicit Cpu(const sc_core::sc_module_name& n) : sc_core::sc_module(n), block(kBytes), readback(kBytes) {
    for (std::size_t i = 0; i < kBytes; ++i) block[i] = static_cast<unsigned char>(i * 31 + 7);
    SC_THREAD(run);
  }
  Tick access(tlm_utils::simple_initiator_socket<Cpu>& socket, tlm::tlm_command command, std::uint64_t address,
              std::vector<unsigned char>& data) {
    tlm::tlm_generic_payload gp;
    gp.set_command(command);
    gp.set_address(address);
    gp.set_data_ptr(data.data());
    gp.set_data_length(static_cast<unsigned>(data.size()));
    gp.set_streaming_width(static_cast<unsigned>(data.size()));
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(gp, delay);
    if (!gp.is_response_ok()) {
      std::printf("%s: %s\n", name(), gp.get_response_string().c_str());
      ok = false;
    }
    wait(delay);
    return sc_core::sc_time_stamp().value();
  }
  void run() {
    written = access(to_memory, tlm::TLM_WRITE_COMMAND, 0, block);
    read = access(to_memory, tlm::TLM_READ_COMMAND, 0, readback);
    // NIC 1 is fabric Address 1: the top 32 bits; 0x1000 arrives with it.
    sent = access(to_nic, tlm::TLM_WRITE_COMMAND, (std::uint64_t{1} << 32) | 0x1000, readback);
  }
};

/// What sits behind NIC 1: takes the writes its bridge delivers.
struct Accelerator : sc_core::sc_module {
  tlm_utils::simple_target_socket<Accelerator> in{"in"};
  std::vector<unsigned char> received;
  std::uint64_t address = 0;
  Tick arrived = 0;
  explicit Accelerator(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
    in.register_b_transport(this, &Accelerator::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    received.assign(gp.get_data_ptr(), gp.get_data_ptr() + gp.get_data_length());
    address = gp.get_address();
    arrived = (sc_core::sc_time_stamp() + delay).value();
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

/// A link from `from` to `to`, with a protocol checker on each end.
struct CheckedLink {
  fabricsim::FrameChecker before, after;
  fabricsim::Link link;
  CheckedLink(const std::string& name, const fabricsim::Link::Params& p)
      : before((name + "_in").c_str()), after((name + "_out").c_str()), link(name.c_str(), p) {
    before.out.bind(link.in);
    link.out.bind(after.in);
  }
  template <typename Out, typename In>
  void connect(Out& from, In& to) {
    from.bind(before.in);
    after.out.bind(to);
  }
  bool clean() const {
    return before.violations() + after.violations() + before.outstanding() + after.outstanding() == 0;
  }
};

bool report(const char* what, Tick model, double closed_form) {
  const bool same = std::fabs(static_cast<double>(model) - closed_form) <= 1.0;
  std::printf("%-34s %14.3f ns %14.3f ns  %s\n", what, static_cast<double>(model) / 1e3, closed_form / 1e3,
              same ? "same" : "DIFFERENT");
  return same;
}

}  // namespace

int sc_main(int, char*[]) {
  using namespace fabricsim;
  Memory::Params hbm_params;
  hbm_params.store_data = true;
  Memory hbm("hbm", hbm_params);

  Nic::Params nic_params;
  nic_params.message_overhead = kSendOverhead;
  nic_params.address = 0;
  Nic nic0("nic0", nic_params);
  nic_params.address = 1;
  Nic nic1("nic1", nic_params);
  BaseProtocolBridge bridge0("bridge0", 0), bridge1("bridge1", 1);

  Switch::Params switch_params;
  switch_params.ports = 2;
  switch_params.hop_latency = kHopLatency;
  Switch switch0("switch0", switch_params), switch1("switch1", switch_params);
  // Port 0 faces Address 0's side, port 1 Address 1's.
  for (Switch* s : {&switch0, &switch1}) {
    s->forwarder().routes().set(0, {0});
    s->forwarder().routes().set(1, {1});
    s->forwarder().set_lookahead(kLinkLatency);
  }

  Link::Params link_params;
  link_params.bandwidth = Bandwidth::GBps(kLinkGBps);
  link_params.latency = kLinkLatency;
  std::vector<std::unique_ptr<CheckedLink>> links;
  auto link = [&](const std::string& name, auto& from, auto& to) {
    links.push_back(std::make_unique<CheckedLink>(name, link_params));
    links.back()->connect(from, to);
  };
  link("nic0_to_switch0", nic0.tx[0], switch0.rx[0]);
  link("switch0_to_nic0", switch0.tx[0], nic0.rx[0]);
  link("switch0_to_switch1", switch0.tx[1], switch1.rx[0]);
  link("switch1_to_switch0", switch1.tx[0], switch0.rx[1]);
  link("switch1_to_nic1", switch1.tx[1], nic1.rx[0]);
  link("nic1_to_switch1", nic1.tx[0], switch1.rx[1]);

  // Bridge and NIC, each way through a message-protocol checker.
  MessageChecker bridge0_to_nic0("bridge0_to_nic0"), nic0_to_bridge0("nic0_to_bridge0"),
      bridge1_to_nic1("bridge1_to_nic1"), nic1_to_bridge1("nic1_to_bridge1");
  bridge0.to_nic.bind(bridge0_to_nic0.in);
  bridge0_to_nic0.out.bind(nic0.in);
  nic0.out.bind(nic0_to_bridge0.in);
  nic0_to_bridge0.out.bind(bridge0.from_nic);
  bridge1.to_nic.bind(bridge1_to_nic1.in);
  bridge1_to_nic1.out.bind(nic1.in);
  nic1.out.bind(nic1_to_bridge1.in);
  nic1_to_bridge1.out.bind(bridge1.from_nic);
  // Only Address 1 is at the other end: a write to any other is refused
  // (TLM_ADDRESS_ERROR_RESPONSE) instead of stopping the fabric.
  bridge0.set_destinations([](Address a) { return a == 1; });
  bridge1.set_destinations([](Address a) { return a == 0; });

  // The plain TLM-2.0 side, each socket pair through a base-protocol checker.
  Cpu cpu("cpu");
  Accelerator accelerator("accelerator");
  BaseProtocolChecker cpu_to_hbm("cpu_to_hbm"), cpu_to_nic("cpu_to_nic"), nic_to_accelerator("nic_to_accelerator");
  cpu.to_memory.bind(cpu_to_hbm.in);
  cpu_to_hbm.out.bind(hbm.in);
  cpu.to_nic.bind(cpu_to_nic.in);
  cpu_to_nic.out.bind(bridge0.from_initiator);
  bridge1.to_target.bind(nic_to_accelerator.in);
  nic_to_accelerator.out.bind(accelerator.in);

  sc_core::sc_start();
  // A model error inside the fabric (a message to an Address no endpoint has)
  // stops the simulation and is kept here.
  if (auto e = Calendar::instance().take_error()) std::rethrow_exception(e);

  // Closed forms, in ps: HBM moves the block at its full bandwidth (spread
  // over all channels), then its latency; the NIC waits its overhead, then
  // serializes the message (one frame), which cuts through two switches.
  const double hbm_access = kBytes / kHbmGBps * 1e3 + kHbmLatencyPs;
  const double serialize = kBytes / kLinkGBps * 1e3;
  const double left = 2 * hbm_access + kSendOverhead + serialize;
  const double arrived = left + 3.0 * kLinkLatency + 2.0 * kHopLatency;

  std::printf("%-34s %17s %17s\n", "what", "model", "closed form");
  bool ok = cpu.ok;
  ok &= report("HBM write of 64 KiB done", cpu.written, hbm_access);
  ok &= report("HBM read back done", cpu.read, 2 * hbm_access);
  ok &= report("message has left NIC 0", cpu.sent, left);
  ok &= report("message written to the accelerator", accelerator.arrived, arrived);
  const bool same_bytes = accelerator.received == cpu.block;
  std::printf("bytes delivered: %zu, %s the ones written to HBM; address 0x%llx\n", accelerator.received.size(),
              same_bytes ? "same as" : "NOT the same as", static_cast<unsigned long long>(accelerator.address));
  ok &= same_bytes && accelerator.address == 0x1000;  // from Address 0, at the sender's offset
  for (const auto& l : links) ok &= l->clean();
  for (const auto* c : {&cpu_to_hbm, &cpu_to_nic, &nic_to_accelerator}) {
    ok &= c->violations() == 0 && c->outstanding() == 0 && c->transactions() > 0;
  }
  for (const auto* c : {&bridge0_to_nic0, &nic0_to_bridge0, &bridge1_to_nic1, &nic1_to_bridge1}) {
    ok &= c->violations() == 0 && c->outstanding() == 0;
  }
  std::printf("protocol checkers: %s\n", ok ? "no violations" : "see above");
  std::printf("result: %s\n", ok ? "ok" : "MISMATCH");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
