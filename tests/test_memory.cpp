// The memory models as a foreign virtual platform uses them: a plain
// tlm_utils::simple_initiator_socket, b_transport and nb_transport, data and
// timing.
#include <gtest/gtest.h>
#include <tlm_utils/peq_with_get.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <functional>
#include <vector>

#include "models/memory/memory.h"

using namespace fabricsim;

namespace {

// A foreign initiator: one SC_THREAD running a test script.
struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> socket;
  std::function<void(Initiator&)> script;
  std::vector<std::pair<tlm::tlm_generic_payload*, sc_core::sc_time>> responses;
  SC_HAS_PROCESS(Initiator);
  explicit Initiator(const sc_core::sc_module_name& n) : sc_core::sc_module(n), socket("socket") {
    socket.register_nb_transport_bw(this, &Initiator::nb_bw);
    SC_THREAD(run);
  }
  void run() { script(*this); }
  tlm::tlm_sync_enum nb_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
    EXPECT_EQ(phase, tlm::BEGIN_RESP);
    responses.emplace_back(&gp, sc_core::sc_time_stamp() + delay);
    phase = tlm::END_RESP;
    return tlm::TLM_COMPLETED;
  }
  // Posts a non-blocking request now.
  void post(tlm::tlm_generic_payload& gp) {
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const auto r = socket->nb_transport_fw(gp, phase, delay);
    ASSERT_TRUE(r == tlm::TLM_UPDATED || r == tlm::TLM_ACCEPTED || r == tlm::TLM_COMPLETED);
  }
};

void setup(tlm::tlm_generic_payload& gp, tlm::tlm_command cmd, std::uint64_t a, std::uint64_t n, unsigned char* data) {
  gp.set_command(cmd);
  gp.set_address(a);
  gp.set_data_length(static_cast<unsigned>(n));
  gp.set_streaming_width(static_cast<unsigned>(n));
  gp.set_data_ptr(data);
  gp.set_byte_enable_ptr(nullptr);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

Memory::Params hbm3_stack() {
  Memory::Params p;  // 16 channels, 819 GB/s, 100 ns
  p.size_bytes = 16ull << 30;
  p.store_data = true;
  return p;
}

Memory::Params cxl_pool() {
  Memory::Params p;
  p.base = 1ull << 40;
  p.size_bytes = 256ull << 30;
  p.channels = 8;
  p.bandwidth = Bandwidth::GBps(8 * p.channels);
  p.latency = ns_to_ticks(600);
  p.store_data = true;
  return p;
}

class BothMemories : public ::testing::TestWithParam<bool> {};

TEST_P(BothMemories, BlockingWritesAndReadsKeepDataAndTakeLatencyPlusSizeOverBandwidth) {
  const Memory::Params p = GetParam() ? cxl_pool() : hbm3_stack();
  Memory mem("mem", p);
  Initiator cpu("cpu");
  cpu.socket.bind(mem.in);
  cpu.script = [&](Initiator& self) {
    const std::uint64_t n = 1 << 20;
    std::vector<unsigned char> out(n), back(n, 0);
    for (std::uint64_t i = 0; i < n; ++i) out[i] = static_cast<unsigned char>(i * 7 + 3);
    tlm::tlm_generic_payload gp;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    setup(gp, tlm::TLM_WRITE_COMMAND, p.base + 4096 + 100, n, out.data());
    self.socket->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    const double expected_ns = ticks_to_ns(p.latency) + n / p.bandwidth.GBps_value();
    EXPECT_NEAR(delay.to_seconds() * 1e9, expected_ns, 0.01 * expected_ns);
    sc_core::wait(delay);
    delay = sc_core::SC_ZERO_TIME;
    setup(gp, tlm::TLM_READ_COMMAND, p.base + 4096 + 100, n, back.data());
    self.socket->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(out, back);
  };
  sc_core::sc_start();
  EXPECT_EQ(mem.stats().bytes_written, 1u << 20);
  EXPECT_EQ(mem.stats().bytes_read, 1u << 20);
}

INSTANTIATE_TEST_SUITE_P(HbmAndPool, BothMemories, ::testing::Values(false, true),
                         [](const auto& i) { return i.param ? "pool" : "hbm3"; });

TEST(Memory, OneLargeReadTakesLatencyPlusSizeOverTheFullBandwidth) {
  Memory mem("mem", hbm3_stack());
  Initiator cpu("cpu");
  cpu.socket.bind(mem.in);
  tlm::tlm_generic_payload gp;
  const std::uint64_t n = 256ull << 20;
  cpu.script = [&](Initiator& self) {
    setup(gp, tlm::TLM_READ_COMMAND, 0, n, nullptr);  // timing only
    self.post(gp);
  };
  sc_core::sc_start();
  ASSERT_EQ(cpu.responses.size(), 1u);
  const double expected_ns = 100 + n / 819.0;
  EXPECT_NEAR(cpu.responses[0].second.to_seconds() * 1e9, expected_ns, 0.01 * expected_ns);
  EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
}

TEST(Memory, ConcurrentReadersShareTheBandwidth) {
  Memory mem("mem", hbm3_stack());
  Initiator cpu("cpu");
  cpu.socket.bind(mem.in);
  const int N = 4;
  const std::uint64_t n = 64ull << 20;
  std::vector<tlm::tlm_generic_payload> gps(N);
  cpu.script = [&](Initiator& self) {
    for (int i = 0; i < N; ++i) {
      setup(gps[static_cast<std::size_t>(i)], tlm::TLM_READ_COMMAND, static_cast<std::uint64_t>(i) * n, n, nullptr);
      self.post(gps[static_cast<std::size_t>(i)]);
    }
  };
  sc_core::sc_start();
  ASSERT_EQ(cpu.responses.size(), static_cast<std::size_t>(N));
  const double together_ns = 100 + N * n / 819.0;
  for (const auto& r : cpu.responses) EXPECT_NEAR(r.second.to_seconds() * 1e9, together_ns, 0.01 * together_ns);
}

TEST(Memory, InterleavingSpreadsASequentialStreamOverAllChannels) {
  // The same bytes twice: one sequential request uses all 16 channels; as
  // many interleave-sized requests that all fall on channel 0 it uses one.
  Memory::Params p = hbm3_stack();
  Memory mem("mem", p);
  EXPECT_EQ(mem.channel_bytes(0, 16 * 256), std::vector<std::uint64_t>(16, 256));
  EXPECT_EQ(mem.channel_bytes(100, 256)[0], 156u);
  EXPECT_EQ(mem.channel_bytes(100, 256)[1], 100u);
  Initiator cpu("cpu");
  cpu.socket.bind(mem.in);
  const int pieces = 256;
  std::vector<tlm::tlm_generic_payload> strided(pieces);
  tlm::tlm_generic_payload sequential;
  cpu.script = [&](Initiator& self) {
    setup(sequential, tlm::TLM_READ_COMMAND, 1ull << 30, pieces * 256, nullptr);
    self.post(sequential);
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
    for (int i = 0; i < pieces; ++i) {
      setup(strided[static_cast<std::size_t>(i)], tlm::TLM_READ_COMMAND, static_cast<std::uint64_t>(i) * 16 * 256, 256,
            nullptr);
      self.post(strided[static_cast<std::size_t>(i)]);
    }
  };
  sc_core::sc_start();
  ASSERT_EQ(cpu.responses.size(), static_cast<std::size_t>(pieces + 1));
  const double channel_GBps = 819.0 / 16;
  EXPECT_NEAR(cpu.responses[0].second.to_seconds() * 1e9, 100 + pieces * 256 / 819.0, 0.01);
  const double last = cpu.responses.back().second.to_seconds() * 1e9;
  EXPECT_NEAR(last, 1000 + 100 + pieces * 256 / channel_GBps, 0.01 * (pieces * 256 / channel_GBps));
}

TEST(Memory, OutOfRangeAndUnsupportedRequestsGetErrorResponses) {
  Memory mem("mem", cxl_pool());
  Initiator cpu("cpu");
  cpu.socket.bind(mem.in);
  cpu.script = [&](Initiator& self) {
    unsigned char buf[64] = {};
    tlm::tlm_generic_payload gp;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    setup(gp, tlm::TLM_READ_COMMAND, 0, 64, buf);  // below the pool's base
    self.socket->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    setup(gp, tlm::TLM_WRITE_COMMAND, (1ull << 40) + (256ull << 30) - 32, 64, buf);  // runs past the end
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    EXPECT_EQ(self.socket->nb_transport_fw(gp, phase, delay), tlm::TLM_COMPLETED);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    unsigned char be[64] = {0xff};
    setup(gp, tlm::TLM_READ_COMMAND, 1ull << 40, 64, buf);
    gp.set_byte_enable_ptr(be);
    gp.set_byte_enable_length(64);
    self.socket->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  };
  sc_core::sc_start();
  EXPECT_EQ(mem.stats().errors, 3u);
}

TEST(Memory, GrantsDirectMemoryAccessToStoredPages) {
  Memory mem("mem", hbm3_stack());
  Initiator cpu("cpu");
  cpu.socket.bind(mem.in);
  cpu.script = [&](Initiator& self) {
    unsigned char word[4] = {1, 2, 3, 4};
    tlm::tlm_generic_payload gp;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    setup(gp, tlm::TLM_WRITE_COMMAND, 8192 + 8, 4, word);
    self.socket->b_transport(gp, delay);
    tlm::tlm_dmi dmi;
    setup(gp, tlm::TLM_READ_COMMAND, 8192 + 8, 4, nullptr);
    ASSERT_TRUE(self.socket->get_direct_mem_ptr(gp, dmi));
    EXPECT_EQ(dmi.get_start_address(), 8192u);
    EXPECT_EQ(dmi.get_end_address(), 8192u + 4095);
    EXPECT_EQ(dmi.get_dmi_ptr()[8 + 2], 3);
  };
  sc_core::sc_start();
}

}  // namespace
