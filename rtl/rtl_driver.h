// Drives the Verilated RTL reduction unit's pins: plain C++, kept apart from
// SystemC (Verilator's headers and SystemC's disagree on sc_time_stamp), so
// the SystemC transactor (rtl_reduction.h) reaches the model only through
// this.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fabricsim {

class RtlDriver {
 public:
  /// `vcd`: a waveform file to dump into, or empty. `plusargs`: what the
  /// RTL's $test$plusargs / $value$plusargs see, each "+name" or
  /// "+name=value" (reduction_unit.sv reads +fault_lane=N).
  RtlDriver(const std::string& vcd, const std::vector<std::string>& plusargs);
  ~RtlDriver();
  RtlDriver(const RtlDriver&) = delete;
  RtlDriver& operator=(const RtlDriver&) = delete;

  static unsigned streams();
  static unsigned beat_bytes();
  static unsigned latency_cycles();

  /// When an operand's bytes reach the unit: its beats arrive evenly from
  /// `first_ps` to `last_ps` (beat b of B at first + (last - first)(b + 1)/B),
  /// and a stream offers a beat (valid) only once it has arrived.
  struct Arrival {
    std::uint64_t first_ps = 0;
    std::uint64_t last_ps = 0;
  };

  /// Streams `n` operands of `bytes` each (null: zeros) through the RTL, one
  /// beat per cycle as their beats arrive (`arrivals`, one per operand, or
  /// null: all there), and writes the combined beats to `result` (if not
  /// null). Cycles start at `start_ps`, each `period_ps` long; while the
  /// pipeline is empty and a beat has yet to arrive the clock stops (no
  /// cycles are spent waiting). The waveform keeps what falls in [vcd_from,
  /// vcd_to]. Returns the time after the last cycle.
  std::uint64_t pass(const std::uint8_t* const* operands, const Arrival* arrivals, unsigned n, std::uint64_t bytes,
                     unsigned op, unsigned dtype, std::uint8_t* result, std::uint64_t start_ps, std::uint64_t period_ps,
                     std::uint64_t vcd_from, std::uint64_t vcd_to);
  std::uint64_t cycles() const { return cycles_; }

 private:
  struct Model;
  std::unique_ptr<Model> model_;
  std::uint64_t cycles_ = 0;
};

}  // namespace fabricsim
