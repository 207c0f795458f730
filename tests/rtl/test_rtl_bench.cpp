// The RTL reduction unit's bench: randomized operands (normals, subnormals,
// zeros of both signs, infinities, NaNs, extremes) and randomized
// backpressure on every port, results compared bit for bit with the C++
// reference (tlm/reduction.h), and a checker of the valid/ready protocol on
// every port in every cycle. Plain C++ on the Verilated model: no SystemC.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <sstream>
#include <vector>

#include "Vreduction_unit.h"
#include "rtl/rtl_compare.h"
#include "tlm/reduction.h"
#include "verilated.h"

using namespace fabricsim;

namespace {

// The RTL reads its plusargs (+fault_lane) in an initial block; Verilator
// wants the command line given before that runs. None here: the real unit.
struct BenchContext : VerilatedContext {
  BenchContext() {
    const char* argv[] = {"test_rtl_bench"};
    commandArgs(1, argv);
  }
};

constexpr unsigned K = FABRICSIM_RTL_K;
constexpr unsigned kBeat = FABRICSIM_RTL_W / 8;
constexpr unsigned kLatency = FABRICSIM_RTL_K + FABRICSIM_RTL_OUT_STAGES;

unsigned op_code(ReduceOp op) {
  return op == ReduceOp::kSum ? 0 : op == ReduceOp::kMin ? 1 : 2;
}
unsigned type_code(DataType t) {
  return t == DataType::kFp32 ? 0 : t == DataType::kBf16 ? 1 : 2;
}

/// Random element bits of a type, with the cases arithmetic gets wrong.
std::uint32_t random_fp32(std::mt19937& g) {
  std::uniform_int_distribution<std::uint32_t> bits;
  switch (g() % 10) {
    case 0:
      return bits(g) & 0x807fffffu;  // subnormal (or zero)
    case 1:
      return (bits(g) & 0x80000000u);  // +-0
    case 2:
      return (bits(g) & 0x80000000u) | 0x7f800000u;  // +-inf
    case 3:
      return (bits(g) & 0x80000000u) | 0x7f800000u | (1 + bits(g) % 0x7fffffu);  // NaN
    case 4:
      return (bits(g) & 0x80000000u) | (0x7f000000u + bits(g) % 0x800000u);  // near overflow
    case 5:
      return (bits(g) & 0x80000000u) | ((1 + g() % 3) << 23) | (bits(g) & 0x7fffffu);  // smallest normals
    default: {  // normals of nearby magnitudes, so that sums cancel and round
      const std::uint32_t e = 120 + g() % 16;
      return (bits(g) & 0x80000000u) | (e << 23) | (bits(g) & 0x7fffffu);
    }
  }
}
std::uint16_t random_bf16(std::mt19937& g) {
  return static_cast<std::uint16_t>(random_fp32(g) >> 16);
}

void fill(std::vector<std::uint8_t>& buf, DataType t, std::mt19937& g) {
  for (std::size_t i = 0; i < buf.size(); i += element_bytes(t)) {
    if (t == DataType::kFp32) {
      const std::uint32_t v = random_fp32(g);
      std::memcpy(&buf[i], &v, 4);
    } else if (t == DataType::kBf16) {
      const std::uint16_t v = random_bf16(g);
      std::memcpy(&buf[i], &v, 2);
    } else {
      const std::uint32_t v = g() % 4 == 0 ? (g() % 2 ? 0x7fffffffu : 0x80000000u) : g();
      std::memcpy(&buf[i], &v, 4);
    }
  }
}

struct Case {
  DataType type;
  ReduceOp op;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << to_string(c.op) << "_" << to_string(c.type);
}

/// One clock edge in reset, nothing offered or taken.
void reset(Vreduction_unit& dut) {
  dut.rst_n = 0;
  dut.clk = 0;
  dut.in_valid = 0;
  dut.out_ready = 0;
  dut.eval();
  dut.clk = 1;
  dut.eval();
  dut.rst_n = 1;
}

class Bench : public ::testing::TestWithParam<Case> {};

TEST_P(Bench, RandomOperandsUnderRandomBackpressureMatchTheReference) {
  const Case c = GetParam();
  std::mt19937 g(12345 + 7 * type_code(c.type) + op_code(c.op));
  BenchContext context;
  Vreduction_unit dut(&context);
  reset(dut);

  for (int trial = 0; trial < 12; ++trial) {
    const unsigned n = 1 + g() % K;  // streams taking part
    const unsigned beats = 20 + g() % 40;
    // Each stream's beats, and the reference: a left fold in stream order.
    std::vector<std::vector<std::uint8_t>> stream(n, std::vector<std::uint8_t>(beats * kBeat));
    for (auto& s : stream) fill(s, c.type, g);
    std::vector<std::uint8_t> reference = stream[0];
    for (unsigned k = 1; k < n; ++k) reduce_into(reference.data(), stream[k].data(), reference.size(), c.type, c.op);

    dut.op = static_cast<CData>(op_code(c.op));
    dut.dtype = static_cast<CData>(type_code(c.type));
    dut.n_streams = static_cast<CData>(n);
    std::vector<unsigned> next(n, 0);      // next beat each stream offers
    std::vector<bool> offering(n, false);  // holding a beat until it is taken
    std::vector<std::uint8_t> result;
    bool held = false;  // the output was valid and not taken last cycle
    std::vector<std::uint8_t> held_data(kBeat);
    auto* in = reinterpret_cast<std::uint8_t*>(dut.in_data.data());
    const auto* out = reinterpret_cast<const std::uint8_t*>(dut.out_data.data());
    const unsigned taking = (1u << n) - 1;
    unsigned cycles = 0;
    while (result.size() < beats * kBeat) {
      ASSERT_LT(++cycles, 100000u) << "the unit stopped producing beats";
      // Inputs: a stream that is not offering may start (valid rises when it
      // likes); once offering, it holds its beat until taken.
      unsigned valid = 0;
      for (unsigned k = 0; k < n; ++k) {
        if (!offering[k] && next[k] < beats && g() % 3 != 0) offering[k] = true;
        if (offering[k]) {
          valid |= 1u << k;
          std::memcpy(in + k * kBeat, stream[k].data() + next[k] * kBeat, kBeat);
        }
      }
      for (unsigned k = n; k < K; ++k) {  // streams not taking part: noise
        if (g() % 2) valid |= 1u << k;
        for (unsigned b = 0; b < kBeat; ++b) in[k * kBeat + b] = static_cast<std::uint8_t>(g());
      }
      dut.in_valid = static_cast<CData>(valid);
      dut.out_ready = static_cast<CData>(g() % 4 != 0);
      dut.clk = 0;
      dut.eval();

      // The protocol, this cycle.
      const unsigned ready = dut.in_ready;
      ASSERT_EQ(ready & ~taking, 0u) << "in_ready on a stream not taking part, cycle " << cycles;
      if (ready) {
        ASSERT_EQ(ready, taking) << "in_ready on some taking-part streams but not all, cycle " << cycles;
        ASSERT_EQ(valid & taking, taking) << "a beat taken while a taking-part stream had none, cycle " << cycles;
      }
      if (held) {
        ASSERT_TRUE(dut.out_valid) << "out_valid fell before the beat was taken, cycle " << cycles;
        ASSERT_EQ(std::memcmp(out, held_data.data(), kBeat), 0) << "out_data changed while not taken, cycle " << cycles;
      }
      if (dut.out_valid && dut.out_ready) result.insert(result.end(), out, out + kBeat);
      held = dut.out_valid && !dut.out_ready;
      if (held) std::memcpy(held_data.data(), out, kBeat);
      for (unsigned k = 0; k < n; ++k) {
        if (ready >> k & 1u) {
          offering[k] = false;
          ++next[k];
        }
      }
      dut.clk = 1;
      dut.eval();
    }
    const std::string diff = first_rtl_difference(result.data(), reference.data(), reference.size(), c.type, kBeat);
    EXPECT_EQ(diff, "") << to_string(c.op) << " on " << to_string(c.type) << " of " << n << " streams, trial " << trial;
    // Drain: nothing more comes out.
    dut.in_valid = 0;
    dut.out_ready = 1;
    for (unsigned i = 0; i < kLatency + 2; ++i) {
      dut.clk = 0;
      dut.eval();
      EXPECT_FALSE(dut.out_valid) << "a beat nobody sent";
      dut.clk = 1;
      dut.eval();
    }
  }
  dut.final();
}

std::vector<Case> every_case() {
  std::vector<Case> out;
  for (DataType t : {DataType::kFp32, DataType::kBf16, DataType::kInt32}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) out.push_back({t, op});
  }
  return out;
}
INSTANTIATE_TEST_SUITE_P(Ops, Bench, ::testing::ValuesIn(every_case()), [](const auto& i) {
  return std::string(to_string(i.param.op)) + "_" + to_string(i.param.type);
});

TEST(Pipeline, ABeatComesOutKPlusOutputStagesCyclesAfterItWentInThenOneEachCycle) {
  BenchContext context;
  Vreduction_unit dut(&context);
  reset(dut);
  dut.op = 0;
  dut.dtype = 2;  // int32 sum
  dut.n_streams = K;
  dut.out_ready = 1;
  auto* in = reinterpret_cast<std::uint32_t*>(dut.in_data.data());
  std::vector<unsigned> out_cycles;
  for (unsigned cycle = 0; cycle < 20 + kLatency; ++cycle) {
    const bool feeding = cycle < 20;
    for (unsigned k = 0; k < K; ++k) in[k * (kBeat / 4)] = cycle * 100 + k;
    dut.in_valid = feeding ? static_cast<CData>((1u << K) - 1) : 0;
    dut.clk = 0;
    dut.eval();
    if (dut.out_valid) {
      out_cycles.push_back(cycle);
      // Lane 0 of beat b: the sum over k of (100 b + k).
      const unsigned b = static_cast<unsigned>(out_cycles.size() - 1);
      EXPECT_EQ(reinterpret_cast<const std::uint32_t*>(dut.out_data.data())[0], K * 100 * b + K * (K - 1) / 2);
    }
    dut.clk = 1;
    dut.eval();
  }
  ASSERT_EQ(out_cycles.size(), 20u);
  EXPECT_EQ(out_cycles.front(), kLatency);
  for (std::size_t i = 1; i < out_cycles.size(); ++i) EXPECT_EQ(out_cycles[i], out_cycles[i - 1] + 1);
  dut.final();
}

TEST(Compare, ADifferenceNamesTheBeatTheLaneAndBothValues) {
  std::vector<std::uint8_t> a(4 * kBeat, 0), b(4 * kBeat, 0);
  const float one = 1.0f, other = 1.5f;
  const unsigned element = kBeat / 4 * 2 + 3;  // beat 2, lane 3
  std::memcpy(&a[element * 4], &one, 4);
  std::memcpy(&b[element * 4], &other, 4);
  const std::string diff = first_rtl_difference(a.data(), b.data(), a.size(), DataType::kFp32, kBeat);
  EXPECT_NE(diff.find("beat 2, lane 3"), std::string::npos) << diff;
  EXPECT_NE(diff.find("RTL 1 (0x3f800000)"), std::string::npos) << diff;
  EXPECT_NE(diff.find("reference 1.5 (0x3fc00000)"), std::string::npos) << diff;
  EXPECT_EQ(first_rtl_difference(a.data(), a.data(), a.size(), DataType::kFp32, kBeat), "");
}

}  // namespace
