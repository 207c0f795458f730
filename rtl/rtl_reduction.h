// The transactor between a reduction unit's TLM ALU port
// (models/switch/reduction_alu.h) and the pins of the Verilated RTL unit
// (reduction_unit.sv, built with `verilator --cc`).
//
// For each slot the unit hands over, it streams the contributions through
// the RTL beat by beat (contribution k on input stream k; more contributions
// than streams go through again, the partial result on stream 0), each beat
// offered (valid) from when it reached the unit, as a streaming datapath
// sees them. It clocks the model from this one calling process, slot after
// slot in the order the unit hands them over (when their last contribution
// is in), so the RTL may be working on a slot in the recent past, from its
// first contribution on; the clock stops while the pipeline is empty and a
// beat is still to come. It answers with the time the last beat came out. In data mode it checks every element
// against the reference arithmetic (tlm/reduction.h) and throws ModelError
// naming the beat, the lane and both values when they differ. Without data
// it clocks zeros, so the timing and the cost are the same.
//
// A VCD of the RTL's pins can be dumped, bounded to a time window.
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "rtl/rtl_driver.h"
#include "tlm/fabric_protocol.h"
#include "tlm/kernel/time.h"

namespace fabricsim {

class RtlReductionAlu : public sc_core::sc_module {
 public:
  struct Params {
    double clock_MHz = 1000;
    std::string vcd;                    // empty: no waveform
    std::vector<std::string> plusargs;  // "+name[=value]", for the RTL's $value$plusargs
    Tick vcd_from = 0;
    Tick vcd_to = kNever;
  };

  tlm_utils::simple_target_socket<RtlReductionAlu> in;

  RtlReductionAlu(const sc_core::sc_module_name& name, const Params& params);
  ~RtlReductionAlu() override;

  std::uint64_t cycles() const;
  Tick period() const { return period_; }

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  Params params_;
  Tick period_;
  Tick time_ = 0;  // the RTL's own time: the end of its last cycle
  std::unique_ptr<RtlDriver> driver_;
  std::vector<std::uint8_t> scratch_;
};

}  // namespace fabricsim
