#include "rtl/rtl_driver.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "Vreduction_unit.h"
#include "tlm/util/errors.h"
#include "verilated.h"
#include "verilated_vcd_c.h"

namespace fabricsim {

struct RtlDriver::Model {
  VerilatedContext context;
  std::unique_ptr<Vreduction_unit> dut;
  VerilatedVcdC vcd;
  bool tracing = false;
};

unsigned RtlDriver::streams() {
  return FABRICSIM_RTL_K;
}
unsigned RtlDriver::beat_bytes() {
  return FABRICSIM_RTL_W / 8;
}
unsigned RtlDriver::latency_cycles() {
  return FABRICSIM_RTL_K + FABRICSIM_RTL_OUT_STAGES;
}

RtlDriver::RtlDriver(const std::string& vcd, const std::vector<std::string>& plusargs)
    : model_(std::make_unique<Model>()) {
  Model& m = *model_;
  // Before the model exists: its initial blocks read them at the first eval.
  std::vector<const char*> argv{"fabricsim"};
  for (const auto& a : plusargs) argv.push_back(a.c_str());
  m.context.commandArgs(static_cast<int>(argv.size()), argv.data());
  if (!vcd.empty()) m.context.traceEverOn(true);
  m.dut = std::make_unique<Vreduction_unit>(&m.context, "rtl");
  if (!vcd.empty()) {
    m.dut->trace(&m.vcd, 99);
    m.vcd.set_time_unit("1ps");
    m.vcd.set_time_resolution("1ps");
    m.vcd.open(vcd.c_str());
    if (!m.vcd.isOpen()) throw InputError(vcd + ": cannot write the waveform there (--vcd)");
    m.tracing = true;
  }
  // Reset, then idle with the output always taken.
  m.dut->clk = 0;
  m.dut->rst_n = 0;
  m.dut->in_valid = 0;
  m.dut->out_ready = 1;
  m.dut->eval();
  m.dut->clk = 1;
  m.dut->eval();
  m.dut->clk = 0;
  m.dut->rst_n = 1;
  m.dut->eval();
}

RtlDriver::~RtlDriver() {
  if (model_->tracing) model_->vcd.close();
  model_->dut->final();
}

std::uint64_t RtlDriver::pass(const std::uint8_t* const* operands, const Arrival* arrivals, unsigned n,
                              std::uint64_t bytes, unsigned op, unsigned dtype, std::uint8_t* result,
                              std::uint64_t start_ps, std::uint64_t period_ps, std::uint64_t vcd_from,
                              std::uint64_t vcd_to) {
  Model& m = *model_;
  Vreduction_unit& dut = *m.dut;
  const std::uint64_t beat = beat_bytes();
  const std::uint64_t beats = std::max<std::uint64_t>(1, (bytes + beat - 1) / beat);
  dut.op = static_cast<CData>(op);
  dut.dtype = static_cast<CData>(dtype);
  dut.n_streams = static_cast<CData>(n);
  dut.out_ready = 1;
  auto* in = reinterpret_cast<std::uint8_t*>(dut.in_data.data());
  const auto* out = reinterpret_cast<const std::uint8_t*>(dut.out_data.data());
  std::uint64_t sent = 0, received = 0, t = start_ps;
  const auto dump = [&](std::uint64_t at) {
    if (!m.tracing || at < vcd_from) return;
    if (at > vcd_to) {  // past the window: the file is complete
      m.vcd.close();
      m.tracing = false;
      return;
    }
    m.vcd.dump(at);
  };
  // When beat b of operand k has arrived.
  const auto arrived_at = [&](unsigned k, std::uint64_t b) -> std::uint64_t {
    if (!arrivals) return 0;
    const Arrival& a = arrivals[k];
    if (a.last_ps <= a.first_ps) return a.last_ps;
    return a.first_ps + (a.last_ps - a.first_ps) * (b + 1) / beats;
  };
  while (received < beats) {
    std::uint32_t valid = 0;
    std::uint64_t next_arrival = 0;  // the latest of the next beat's arrivals
    if (sent < beats) {
      for (unsigned k = 0; k < n; ++k) {
        const std::uint64_t at = arrived_at(k, sent);
        if (at <= t) valid |= 1u << k;
        next_arrival = std::max(next_arrival, at);
      }
      if (sent == received && next_arrival > t) {
        // Nothing in the pipeline and a beat still on its way: the clock
        // stops until it is in, on the cycle grid.
        t += (next_arrival - t + period_ps - 1) / period_ps * period_ps;
        continue;
      }
    }
    // Offer the next beat on every stream where it has arrived.
    if (sent < beats) {
      const std::uint64_t at = sent * beat, len = std::min(beat, bytes - std::min(bytes, at));
      for (unsigned k = 0; k < n; ++k) {
        std::uint8_t* lane = in + k * beat;
        std::uint64_t copied = 0;
        if (operands[k] && len) {
          std::memcpy(lane, operands[k] + at, len);
          copied = len;
        }
        std::memset(lane + copied, 0, beat - copied);
      }
      dut.in_valid = static_cast<std::remove_reference_t<decltype(dut.in_valid)>>(valid);
    } else {
      dut.in_valid = 0;
    }
    dut.clk = 0;
    dut.eval();  // the falling edge, and this cycle's in_ready and output beat
    dump(t);
    const bool taken = dut.in_ready != 0;
    if (dut.out_valid) {
      const std::uint64_t at = received * beat, len = std::min(beat, bytes - std::min(bytes, at));
      if (result && len) std::memcpy(result + at, out, len);
      ++received;
    }
    if (taken) ++sent;
    dut.clk = 1;
    dut.eval();
    dump(t + period_ps / 2);
    t += period_ps;
    ++cycles_;
  }
  return t;
}

}  // namespace fabricsim
