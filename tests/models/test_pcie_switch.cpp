// The PCIe switch between a DMA master and a memory: each timing rule of
// pcie_switch.h against its closed form, to the picosecond, first with a
// plain base-protocol initiator, then with a NIC reading its frames through
// it (cut-through: the wire does not wait for a frame's last byte when the
// PCIe path is the faster).
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/link/link.h"
#include "models/memory/memory.h"
#include "models/nic/nic.h"
#include "models/pcie/pcie_switch.h"
#include "support/frame_harness.h"
#include "tlm/stream_timing.h"

using namespace fabricsim;

namespace {

constexpr Tick kPcieLatency = 20'000;  // 20 ns each way
constexpr Tick kMemLatency = 100'000;  // 100 ns

/// One channel at 1,000 GB/s: a lone request of n bytes takes 100 ns + n ps.
Memory::Params fast_memory() {
  Memory::Params p;
  p.size_bytes = 1ull << 30;
  p.channels = 1;
  p.bandwidth = Bandwidth::GBps(1000);
  p.latency = kMemLatency;
  p.store_data = true;
  return p;
}
Tick memory_time(std::uint64_t bytes) {
  return kMemLatency + bytes;
}

/// PCIe 3.0, no TLP overhead, so the rate is lanes x 8 GT/s x 128/130 / 8.
PcieSwitch::Params gen3(unsigned lanes, std::uint64_t max_payload = 256) {
  PcieSwitch::Params p;
  p.generation = 3;
  p.lanes = lanes;
  p.max_payload_bytes = max_payload;
  p.tlp_overhead_bytes = 0;
  p.latency = kPcieLatency;
  return p;
}
/// Time for `bytes` through a PCIe 3.0 x`lanes` pipe, worked out here, not by the model.
Tick gen3_time(std::uint64_t bytes, unsigned lanes) {
  const double bytes_per_ps = lanes * 8e9 * 128 / 130 / 8 * 1e-12;
  return static_cast<Tick>(std::llround(static_cast<double>(bytes) / bytes_per_ps));
}

// A foreign initiator: one SC_THREAD running a test script, recording when
// each response came.
struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> socket;
  std::function<void(Initiator&)> script;
  std::vector<std::pair<tlm::tlm_generic_payload*, Tick>> responses;
  /// Answer BEGIN_RESP with TLM_ACCEPTED and send END_RESP this long after
  /// (0: complete it at once).
  Tick end_response_after = 0;
  sc_core::sc_event_queue end_response;
  std::vector<tlm::tlm_generic_payload*> to_end;
  SC_HAS_PROCESS(Initiator);
  explicit Initiator(const sc_core::sc_module_name& n) : sc_core::sc_module(n), socket("socket") {
    socket.register_nb_transport_bw(this, &Initiator::nb_bw);
    SC_THREAD(run);
    SC_METHOD(send_end_response);
    sensitive << end_response;
    dont_initialize();
  }
  void run() { script(*this); }
  void send_end_response() {
    tlm::tlm_phase phase = tlm::END_RESP;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    tlm::tlm_generic_payload* gp = to_end.front();
    to_end.erase(to_end.begin());
    EXPECT_EQ(socket->nb_transport_fw(*gp, phase, delay), tlm::TLM_COMPLETED);
  }
  tlm::tlm_sync_enum nb_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
    EXPECT_EQ(phase, tlm::BEGIN_RESP);
    responses.emplace_back(&gp, now_ticks() + delay.value());
    if (end_response_after > 0) {
      to_end.push_back(&gp);
      end_response.notify(sc_core::sc_time(static_cast<double>(end_response_after), sc_core::SC_PS));
      return tlm::TLM_ACCEPTED;
    }
    phase = tlm::END_RESP;
    return tlm::TLM_COMPLETED;
  }
  void post(tlm::tlm_generic_payload& gp) {
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const auto r = socket->nb_transport_fw(gp, phase, delay);
    ASSERT_EQ(r, tlm::TLM_UPDATED);
    ASSERT_EQ(phase, tlm::END_REQ);
  }
  Tick response_of(const tlm::tlm_generic_payload& gp) const {
    for (const auto& [g, t] : responses) {
      if (g == &gp) return t;
    }
    return kNever;
  }
};

void setup(tlm::tlm_generic_payload& gp, tlm::tlm_command cmd, std::uint64_t a, std::uint64_t n,
           unsigned char* data = nullptr) {
  gp.set_command(cmd);
  gp.set_address(a);
  gp.set_data_length(static_cast<unsigned>(n));
  gp.set_streaming_width(static_cast<unsigned>(n));
  gp.set_data_ptr(data);
  gp.set_byte_enable_ptr(nullptr);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

/// An initiator, the switch and the memory, bound in that order.
struct Bench {
  Initiator device{"device"};
  PcieSwitch pcie;
  Memory memory{"memory", fast_memory()};
  explicit Bench(const PcieSwitch::Params& p) : pcie("pcie", p) {
    device.socket.bind(pcie.from_devices);
    pcie.to_memory.bind(memory.in);
  }
};

/// One access of n bytes at `address`, posted alone at t = 0: when it was answered.
Tick answered_alone(Bench& b, tlm::tlm_generic_payload& gp, tlm::tlm_command cmd, std::uint64_t address,
                    std::uint64_t n) {
  b.device.script = [&gp, cmd, address, n](Initiator& self) {
    setup(gp, cmd, address, n);
    self.post(gp);
  };
  testutil::run_to_end();
  return b.device.response_of(gp);
}

}  // namespace

TEST(PcieSwitchParams, TheDataRateIsLanesTimesTheEncodedLaneRateLessTheTlpOverhead) {
  PcieSwitch::Params p;  // defaults: 5.0 x16, 256-byte payloads, 24 bytes a TLP
  EXPECT_NEAR(p.data_bandwidth().GBps_value(), 16 * 32.0 * 128 / 130 / 8 * 256 / 280, 1e-9);
  p.generation = 4;
  EXPECT_NEAR(p.data_bandwidth().GBps_value(), 16 * 16.0 * 128 / 130 / 8 * 256 / 280, 1e-9);
  p.generation = 2;  // 8b/10b
  p.lanes = 8;
  p.max_payload_bytes = 512;
  p.tlp_overhead_bytes = 28;
  EXPECT_NEAR(p.data_bandwidth().GBps_value(), 8 * 5.0 * 8 / 10 / 8 * 512 / 540, 1e-9);
}

TEST(PcieSwitchParams, ALaneCountOrPayloadPcieDoesNotHaveIsRefusedNamingIt) {
  PcieSwitch::Params p;
  p.lanes = 12;
  try {
    PcieSwitch s("bad_lanes", p);
    FAIL() << "12 lanes accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("12 lanes"), std::string::npos) << e.what();
  }
  p.lanes = 16;
  p.max_payload_bytes = 384;
  EXPECT_THROW(PcieSwitch("bad_payload", p), std::invalid_argument);
  p.max_payload_bytes = 256;
  p.generation = 6;
  EXPECT_THROW(PcieSwitch("bad_generation", p), std::invalid_argument);
}

TEST(PcieSwitch, AReadWithoutStreamTimingIsAnsweredWhenItsLastByteIsIn) {
  // Request across (20 ns), the memory (100 ns + n ps), n bytes through the
  // x8 pipe, back across (20 ns).
  Bench b(gen3(8));
  const std::uint64_t n = 64 << 10;
  tlm::tlm_generic_payload gp;
  EXPECT_EQ(answered_alone(b, gp, tlm::TLM_READ_COMMAND, 4096, n),
            kPcieLatency + memory_time(n) + gen3_time(n, 8) + kPcieLatency);
  EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(b.pcie.stats().reads, 1u);
  EXPECT_EQ(b.pcie.stats().bytes_to_device, n);
  EXPECT_EQ(b.pcie.stats().busy_to_device, gen3_time(n, 8));
}

TEST(PcieSwitch, AStreamingReadIsAnsweredAsEarlyAsConsumingAtItsPaceCannotOutrunTheBytes) {
  // Two reads at once of n bytes each, x8 (7.88 GB/s): the memory answers both
  // at 20 ns + 100 ns + 2n ps, then the pipe carries the first and the second.
  // The first consumes slower than the pipe (at 4 GB/s): answered when its
  // first 256-byte TLP is in. The second consumes faster (at 32 GB/s):
  // answered so that its last byte is in just as it is used.
  Bench b(gen3(8));
  const std::uint64_t n = 64 << 10;
  tlm::tlm_generic_payload slow, fast;
  StreamTiming slow_timing, fast_timing;
  slow_timing.consume_time = n * 1000 / 4;
  fast_timing.consume_time = n * 1000 / 32;
  b.device.script = [&](Initiator& self) {
    setup(slow, tlm::TLM_READ_COMMAND, 0, n);
    setup(fast, tlm::TLM_READ_COMMAND, 1 << 20, n);
    slow.set_extension(&slow_timing);
    fast.set_extension(&fast_timing);
    self.post(slow);
    self.post(fast);
  };
  testutil::run_to_end();
  slow.clear_extension(&slow_timing);
  fast.clear_extension(&fast_timing);
  const Tick memory_done = kPcieLatency + kMemLatency + 2 * n;
  EXPECT_EQ(b.device.response_of(slow), memory_done + gen3_time(256, 8) + kPcieLatency);
  const Tick fast_last_in = memory_done + gen3_time(n, 8) + gen3_time(n, 8) + kPcieLatency;
  EXPECT_EQ(b.device.response_of(fast), fast_last_in - fast_timing.consume_time);
}

TEST(PcieSwitch, ReadsAtOnceLeaveThePipeOneAfterAnother) {
  Bench b(gen3(4));
  const std::uint64_t n = 16 << 10;
  std::vector<tlm::tlm_generic_payload> gps(4);
  b.device.script = [&](Initiator& self) {
    for (std::size_t k = 0; k < gps.size(); ++k) {
      setup(gps[k], tlm::TLM_READ_COMMAND, k * n, n);
      self.post(gps[k]);
    }
  };
  testutil::run_to_end();
  const Tick memory_done = kPcieLatency + kMemLatency + 4 * n;  // the channel shared by all four
  for (std::size_t k = 0; k < gps.size(); ++k) {
    EXPECT_EQ(b.device.response_of(gps[k]), memory_done + (k + 1) * gen3_time(n, 4) + kPcieLatency) << "read " << k;
  }
}

TEST(PcieSwitch, AStreamingWriteTakesThePipeFromItsFirstByteAndEndsOneTlpAfterItsLast) {
  // n bytes came in over 10 us, slower than the x16 pipe: the pipe carried
  // them as they came, so at the request (its last byte) only the last
  // 256-byte TLP is left. Without StreamTiming the whole write starts then.
  const std::uint64_t n = 64 << 10;
  const Tick at = 20'000'000;  // 20 us
  Bench streamed(gen3(16));
  tlm::tlm_generic_payload gp;
  StreamTiming timing;
  timing.first_byte = at - 10'000'000;
  streamed.device.script = [&](Initiator& self) {
    sc_core::wait(sc_core::sc_time(static_cast<double>(at), sc_core::SC_PS));
    setup(gp, tlm::TLM_WRITE_COMMAND, 0, n);
    gp.set_extension(&timing);
    self.post(gp);
  };
  testutil::run_to_end();
  gp.clear_extension(&timing);
  EXPECT_EQ(streamed.device.response_of(gp), at + gen3_time(256, 16) + kPcieLatency + memory_time(n));
  EXPECT_EQ(streamed.pcie.stats().bytes_to_memory, n);
  EXPECT_EQ(streamed.pcie.stats().writes, 1u);
}

TEST(PcieSwitch, AWriteWithoutStreamTimingTakesThePipeWholeFromItsRequest) {
  const std::uint64_t n = 64 << 10;
  Bench b(gen3(16));
  tlm::tlm_generic_payload gp;
  EXPECT_EQ(answered_alone(b, gp, tlm::TLM_WRITE_COMMAND, 0, n), gen3_time(n, 16) + kPcieLatency + memory_time(n));
}

constexpr Tick kHostLatency = 300'000;  // 300 ns into host memory and out

PcieSwitch::Params staged(unsigned lanes, PcieSwitch::GpuDirect mode = PcieSwitch::GpuDirect::kOff) {
  PcieSwitch::Params p = gen3(lanes);
  p.gpudirect_rdma = mode;
  p.uplink_lanes = lanes;
  p.host_latency = kHostLatency;
  return p;
}

/// A lone staged read of n bytes, its uplink as wide as its ports (below).
Tick staged_read_time(std::uint64_t n, unsigned lanes) {
  return kPcieLatency + memory_time(n) + gen3_time(256, lanes) + kPcieLatency + kHostLatency + gen3_time(n, lanes) +
         kPcieLatency;
}

TEST(PcieSwitch, AStagedReadGoesUpToHostMemoryAndBackCutThrough) {
  // Request across (20 ns), the GPU's memory (100 ns + n ps); its copy up
  // the GPU's port and the uplink (one pipe's time, cut-through) and across
  // (20 ns); host memory (300 ns) from its first 256-byte TLP; the uplink
  // back and the device's port, ending no earlier than the last byte came
  // in plus 300 ns; across (20 ns).
  Bench b(staged(8));
  const std::uint64_t n = 64 << 10;
  tlm::tlm_generic_payload gp;
  EXPECT_EQ(answered_alone(b, gp, tlm::TLM_READ_COMMAND, 4096, n), staged_read_time(n, 8));
  EXPECT_EQ(b.pcie.stats().bytes_via_host, n);
  EXPECT_EQ(b.pcie.stats().busy_to_host, gen3_time(n, 8));
  EXPECT_EQ(b.pcie.stats().busy_from_host, gen3_time(n, 8));
}

TEST(PcieSwitch, AStagedWriteGoesThroughHostMemoryThenIntoTheGpu) {
  Bench b(staged(16));
  const std::uint64_t n = 64 << 10;
  tlm::tlm_generic_payload gp;
  EXPECT_EQ(answered_alone(b, gp, tlm::TLM_WRITE_COMMAND, 0, n),
            gen3_time(256, 16) + kPcieLatency + kHostLatency + gen3_time(n, 16) + kPcieLatency + memory_time(n));
  EXPECT_EQ(b.pcie.stats().bytes_via_host, n);
}

TEST(PcieSwitch, WriteOnlyGpuDirectStagesReadsAndWritesStraightToTheGpu) {
  Bench b(staged(16, PcieSwitch::GpuDirect::kWriteOnly));
  const std::uint64_t n = 64 << 10;
  tlm::tlm_generic_payload write, read;
  b.device.script = [&](Initiator& self) {
    setup(write, tlm::TLM_WRITE_COMMAND, 0, n);
    self.post(write);
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_US));
    setup(read, tlm::TLM_READ_COMMAND, 1 << 20, n);
    self.post(read);
  };
  testutil::run_to_end();
  EXPECT_EQ(b.device.response_of(write), gen3_time(n, 16) + kPcieLatency + memory_time(n));
  EXPECT_EQ(b.device.response_of(read), 100'000'000 + staged_read_time(n, 16));
  EXPECT_EQ(b.pcie.stats().bytes_via_host, n);
}

/// Two devices, each with its own memory, on one switch.
struct TwoPairBench {
  Initiator device0{"device0"}, device1{"device1"};
  PcieSwitch pcie;
  Memory memory0{"memory0", fast_memory()}, memory1{"memory1", fast_memory()};
  explicit TwoPairBench(PcieSwitch::Params p) : pcie("pcie", (p.devices_per_switch = 2, p)) {
    device0.socket.bind(pcie.from_devices);
    pcie.to_memory.bind(memory0.in);
    device1.socket.bind(pcie.from_devices);
    pcie.to_memory.bind(memory1.in);
  }
};

/// Both devices read n bytes at once, each from its own GPU: when each is answered.
std::pair<Tick, Tick> two_reads_at_once(const PcieSwitch::Params& p, std::uint64_t n) {
  TwoPairBench b(p);
  tlm::tlm_generic_payload gp0, gp1;
  b.device0.script = [&](Initiator& self) {
    setup(gp0, tlm::TLM_READ_COMMAND, 0, n);
    self.post(gp0);
  };
  b.device1.script = [&](Initiator& self) {
    setup(gp1, tlm::TLM_READ_COMMAND, 0, n);
    self.post(gp1);
  };
  testutil::run_to_end();
  const Tick t0 = b.device0.response_of(gp0), t1 = b.device1.response_of(gp1);
  return {std::min(t0, t1), std::max(t0, t1)};
}

TEST(PcieSwitch, PairsOnASwitchDoNotShareTheirPortsWithGpuDirect) {
  const std::uint64_t n = 64 << 10;
  const auto [first, second] = two_reads_at_once(gen3(8), n);
  EXPECT_EQ(first, kPcieLatency + memory_time(n) + gen3_time(n, 8) + kPcieLatency);
  EXPECT_EQ(second, first);
}

TEST(PcieSwitch, StagedPairsOnASwitchTakeItsUplinkInTurn) {
  // Both copies take the one uplink: the second comes one copy's time later.
  const std::uint64_t n = 64 << 10;
  const auto [first, second] = two_reads_at_once(staged(8), n);
  EXPECT_EQ(first, staged_read_time(n, 8));
  EXPECT_EQ(second, first + gen3_time(n, 8));
}

TEST(PcieSwitch, MoreDevicesThanDevicesPerSwitchAreRefused) {
  Initiator device0{"device0"}, device1{"device1"};
  PcieSwitch pcie("pcie", gen3(8));  // devices_per_switch 1
  Memory memory0{"memory0", fast_memory()}, memory1{"memory1", fast_memory()};
  device0.socket.bind(pcie.from_devices);
  pcie.to_memory.bind(memory0.in);
  device1.socket.bind(pcie.from_devices);
  pcie.to_memory.bind(memory1.in);
  device0.script = device1.script = [](Initiator&) {};
  try {
    testutil::run_to_end();
    FAIL() << "two devices on a switch of one accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("bound to 2 devices, more than devices_per_switch (1)"), std::string::npos)
        << e.what();
  }
}

TEST(PcieSwitch, ADeviceWithoutAMemoryIsRefused) {
  Initiator device0{"device0"}, device1{"device1"};
  PcieSwitch::Params p = gen3(8);
  p.devices_per_switch = 2;
  PcieSwitch pcie("pcie", p);
  Memory memory0{"memory0", fast_memory()};
  device0.socket.bind(pcie.from_devices);
  pcie.to_memory.bind(memory0.in);
  device1.socket.bind(pcie.from_devices);
  device0.script = device1.script = [](Initiator&) {};
  try {
    testutil::run_to_end();
    FAIL() << "two devices and one memory accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("bound to 2 devices and 1 memories"), std::string::npos) << e.what();
  }
}

TEST(PcieSwitch, AnAccessTheMemoryRefusesComesBackWithItsErrorAfterCrossingTwice) {
  Bench b(gen3(16));
  tlm::tlm_generic_payload gp;
  const Tick answered = answered_alone(b, gp, tlm::TLM_READ_COMMAND, 2ull << 30, 4096);  // past the 1 GiB memory
  EXPECT_EQ(gp.get_response_status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(answered, 2 * kPcieLatency);
  EXPECT_EQ(b.pcie.stats().errors, 1u);
  EXPECT_EQ(b.pcie.stats().bytes_to_device, 0u);
}

TEST(PcieSwitch, ADeviceThatEndsItsResponsesLateGetsTheNextOnlyAfterItsEndResp) {
  // Two reads answered 508 ns apart (x4, 2,000 bytes each); the device
  // takes 2 us to end each response, so the second waits for the first's END_RESP.
  Bench b(gen3(4));
  b.device.end_response_after = 2'000'000;
  std::vector<tlm::tlm_generic_payload> gps(2);
  b.device.script = [&](Initiator& self) {
    for (std::size_t k = 0; k < gps.size(); ++k) {
      setup(gps[k], tlm::TLM_READ_COMMAND, k * 4096, 2000);
      self.post(gps[k]);
    }
  };
  testutil::run_to_end();
  const Tick first = kPcieLatency + kMemLatency + 2 * 2000 + gen3_time(2000, 4) + kPcieLatency;
  EXPECT_EQ(b.device.response_of(gps[0]), first);
  EXPECT_EQ(b.device.response_of(gps[1]), first + 2'000'000);
}

TEST(PcieSwitch, ACommandThatMovesNoDataCrossesBothWaysAndTakesNoPipe) {
  Bench b(gen3(4));
  tlm::tlm_generic_payload gp;
  const Tick answered = answered_alone(b, gp, tlm::TLM_IGNORE_COMMAND, 0, 64 << 10);
  EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(answered, 2 * kPcieLatency);
  EXPECT_EQ(b.pcie.stats().reads + b.pcie.stats().writes, 0u);
  EXPECT_EQ(b.pcie.stats().busy_to_device + b.pcie.stats().busy_to_memory, 0u);
}

TEST(PcieSwitch, BlockingAccessesKeepTheDataAndPayThePathDebugPassesAndDmiIsRefused) {
  Bench b(gen3(16));
  const std::uint64_t n = 4096;
  std::vector<unsigned char> out(n), back(n, 0), peek(16, 0);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<unsigned char>(i * 13 + 1);
  b.device.script = [&](Initiator& self) {
    tlm::tlm_generic_payload gp;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    setup(gp, tlm::TLM_WRITE_COMMAND, 8192, n, out.data());
    self.socket->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(delay.value(), gen3_time(n, 16) + kPcieLatency + memory_time(n));
    sc_core::wait(delay);
    const Tick start = now_ticks();
    delay = sc_core::SC_ZERO_TIME;
    setup(gp, tlm::TLM_READ_COMMAND, 8192, n, back.data());
    self.socket->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(delay.value(), kPcieLatency + memory_time(n) + gen3_time(n, 16) + kPcieLatency);
    EXPECT_EQ(now_ticks(), start);
    setup(gp, tlm::TLM_READ_COMMAND, 8192, peek.size(), peek.data());
    EXPECT_EQ(self.socket->transport_dbg(gp), peek.size());
    tlm::tlm_dmi dmi;
    EXPECT_FALSE(self.socket->get_direct_mem_ptr(gp, dmi));
  };
  testutil::run_to_end();
  EXPECT_EQ(out, back);
  EXPECT_TRUE(std::equal(peek.begin(), peek.end(), out.begin()));
}

// ---------------------------------------------------------------------------
// A NIC reading its frames through the switch.

namespace {

constexpr std::uint64_t kLinkGBps = 8;  // 250 ns a 2,000-byte frame
constexpr Tick kLinkLatency = 300'000;
constexpr Tick kStart = 1'000'000;

/// A one-port NIC at address 0 sending 2,000-byte frames (no headers), one
/// frame read ahead, its DMA through a PCIe switch to the memory; its port
/// a link of 8 GB/s to a sink.
struct NicOverPcie {
  testutil::MessageSource npu_out;
  testutil::MessageSink npu_in;
  Nic nic;
  PcieSwitch pcie;
  Memory memory;
  Link link;
  testutil::FrameSink sink;
  testutil::FrameSource input;

  static Nic::Params nic_params() {
    Nic::Params p;
    p.address = 0;
    p.mtu_bytes = 1000;
    p.segment_bytes = 2000;
    p.read_ahead_bytes = 2000;
    return p;
  }
  static Link::Params link_params() {
    Link::Params p;
    p.bandwidth = Bandwidth::GBps(kLinkGBps);
    p.latency = kLinkLatency;
    return p;
  }
  NicOverPcie(const std::string& name, const PcieSwitch::Params& pcie_params)
      : npu_out((name + "_npu_out").c_str()),
        npu_in((name + "_npu_in").c_str()),
        nic((name + "_nic").c_str(), nic_params()),
        pcie((name + "_pcie").c_str(), pcie_params),
        memory((name + "_memory").c_str(), fast_memory()),
        link((name + "_link").c_str(), link_params()),
        sink((name + "_sink").c_str()),
        input((name + "_input").c_str(), false) {
    npu_out.out.bind(nic.in);
    nic.out.bind(npu_in.in);
    nic.tx[0].bind(link.in);
    link.out.bind(sink.in);
    input.out.bind(nic.rx[0]);
    nic.dma.socket.bind(pcie.from_devices);
    pcie.to_memory.bind(memory.in);
    nic.dma.set_window(0, 1 << 20);
    nic.set_line_rate(Bandwidth::GBps(kLinkGBps));
  }
};

Message* message(std::uint64_t bytes) {
  Message* m = Message::allocate();
  m->src = 0;
  m->dst = 1;
  m->bytes = bytes;
  return m;
}

/// A message of `frames` 2,000-byte frames from NPU 1 to the NIC under test.
Message* incoming(std::uint32_t frames) {
  Message* m = Message::allocate();
  m->src = 1;
  m->dst = 0;
  m->bytes = frames * 2000;
  m->nic.frames_total = frames;
  return m;
}

/// Frame `index` (2,000 bytes) of `m`, as the wire brings it to the NIC.
Frame* incoming_frame(Message* m, std::uint32_t index) {
  Frame* f = testutil::make_frame(2000, 0);
  f->msg = m;
  f->src = 1;
  f->index = index;
  f->offset = index * 2000;
  f->last = index + 1 == m->nic.frames_total;
  return f;
}

}  // namespace

TEST(PcieSwitchUnderANic, FasterThanTheWireItAddsLatencyOnlyAndTheFramesGoBackToBack) {
  // x16 (15.75 GB/s) against the 8 GB/s wire: frame 0 may leave once its
  // first TLP is in (20 + 100 + 2 ns to the memory and back, 20 ns, 16 ns for
  // 256 bytes), not once all 2,000 bytes are (127 ns); each next frame is
  // read while the one before is on the wire (250 ns), so they go back to back.
  NicOverPcie b("fast", gen3(16));
  Message* m = message(8000);
  b.npu_out.post(m, kStart);
  testutil::run_to_end();
  const Tick frame = 2000 * 1000 / kLinkGBps;
  const Tick first = kStart + kPcieLatency + memory_time(2000) + gen3_time(256, 16) + kPcieLatency;
  ASSERT_EQ(b.sink.arrivals().size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(b.sink.arrivals()[k].head, first + k * frame + kLinkLatency) << "frame " << k;
  }
  EXPECT_EQ(b.npu_out.left(m), first + 4 * frame);
  EXPECT_EQ(b.pcie.stats().bytes_to_device, 8000u);
  for (const auto& a : b.sink.arrivals()) EXPECT_EQ(a.spread, 0u) << "a frame sent as its bytes came";
  m->unref();
}

TEST(PcieSwitchUnderANic, SlowerThanTheWireItPacesTheFramesAndEachEndsAsItsLastByteComesIn) {
  // x4 (3.94 GB/s, 508 ns a frame) against the 8 GB/s wire: frame k's bytes
  // come over [s + k T, s + (k + 1) T] (s: the memory has the first frame) and
  // it leaves in the 250 ns before its last byte is in, plus the way back.
  NicOverPcie b("slow", gen3(4));
  Message* m = message(8000);
  b.npu_out.post(m, kStart);
  testutil::run_to_end();
  const Tick frame = 2000 * 1000 / kLinkGBps;
  const Tick T = gen3_time(2000, 4);
  const Tick s = kStart + kPcieLatency + memory_time(2000);
  ASSERT_EQ(b.sink.arrivals().size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(b.sink.arrivals()[k].tail, s + (k + 1) * T + kPcieLatency + kLinkLatency) << "frame " << k;
    EXPECT_EQ(b.sink.arrivals()[k].head, s + (k + 1) * T + kPcieLatency - frame + kLinkLatency) << "frame " << k;
    // Its first TLP was in at s + k T + 16 ns + 20 ns, when the port was
    // free (frame k - 1 left at s + k T + 20 ns): packet by packet it would
    // have started then, so it carries the difference for the receiver.
    EXPECT_EQ(b.sink.arrivals()[k].spread, T - frame - gen3_time(256, 4)) << "frame " << k;
  }
  m->unref();
}

TEST(PcieSwitchUnderANic, ReceivedFramesAreWrittenThroughItFromTheirFirstByte) {
  // Four 2,000-byte frames come in back to back at 8 GB/s from kStart, each
  // written through x4 (3.94 GB/s, 508 ns a frame): the pipe takes frame 0
  // from its head, so frame k is through at kStart + (k + 1) T, and the
  // message is in when frame 3's write is done in memory, 20 ns + 102 ns later.
  NicOverPcie b("receive", gen3(4));
  Message* m = incoming(4);
  const Tick frame = 2000 * 1000 / kLinkGBps;
  for (std::uint32_t k = 0; k < 4; ++k) b.input.send(incoming_frame(m, k), kStart + k * frame, frame);
  testutil::run_to_end();
  ASSERT_EQ(b.npu_in.delivered().size(), 1u);
  EXPECT_EQ(b.npu_in.delivered()[0].second, kStart + 4 * gen3_time(2000, 4) + kPcieLatency + memory_time(2000));
  EXPECT_EQ(b.pcie.stats().bytes_to_memory, 8000u);
  m->unref();
}

TEST(PcieSwitchUnderANic, AReceivedFrameSentWholeAfterItsBytesTrickledInIsWrittenFromItsSpread) {
  // One 2,000-byte frame whose head arrives at kStart and tail 250 ns later,
  // having trickled in at its sender from 600 ns before its head (spread):
  // the x4 pipe (508 ns for it) takes it from kStart - 600 ns, so it is
  // through one TLP (65 ns) after its tail, not 508 ns after its head.
  NicOverPcie b("spread", gen3(4));
  Message* m = incoming(1);
  const Tick frame = 2000 * 1000 / kLinkGBps;
  Frame* f = incoming_frame(m, 0);
  f->spread = 600'000;
  b.input.send(f, kStart, frame);
  // A frame whose bytes began only 100 ns before its head: the pipe, taking
  // it from then, is through at kStart - 100 ns + 508 ns, after its tail.
  Message* m2 = incoming(1);
  Frame* g = incoming_frame(m2, 0);
  g->spread = 100'000;
  const Tick later = 10'000'000;
  b.input.send(g, later, frame);
  testutil::run_to_end();
  ASSERT_EQ(b.npu_in.delivered().size(), 2u);
  EXPECT_EQ(b.npu_in.delivered()[0].second, kStart + frame + gen3_time(256, 4) + kPcieLatency + memory_time(2000));
  EXPECT_EQ(b.npu_in.delivered()[1].second, later - 100'000 + gen3_time(2000, 4) + kPcieLatency + memory_time(2000));
  m->unref();
  m2->unref();
}
