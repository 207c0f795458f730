// The port between a reduction unit and an external ALU that combines a
// slot's contributions in its place (the Verilated RTL unit, rtl/).
//
// The unit calls b_transport on its `alu` socket once per slot, when the
// slot's last contribution is in: the payload (a WRITE) points at the result
// buffer (null when the run carries no data), and its ReductionCommand
// extension names the operands, in the order they must be folded, and when
// each one's bytes reached the unit, so that a streaming ALU may have begun
// on them before the last was in (it keeps its own busy time: the unit does
// not queue slots for it). The delay handed back is when the result is
// complete, from now. The ALU answers TLM_OK_RESPONSE, or
// throws ModelError for an operation or type it cannot do, or a result that
// differs from the reference.
#pragma once

#include <cstdint>
#include <string>
#include <tlm>
#include <vector>

#include "tlm/fabric_protocol.h"

namespace fabricsim {

struct ReductionCommand : tlm::tlm_extension<ReductionCommand> {
  ReduceOp op = ReduceOp::kSum;
  DataType dtype = DataType::kFp32;
  std::vector<const std::uint8_t*> parts;   // the contributions' bytes, fold order (null: timing only)
  std::vector<Tick> first_byte, last_byte;  // when each one's first and last byte reached the unit
  std::size_t count = 0;                    // contributions
  std::uint64_t bytes = 0;                  // per contribution
  std::string what;                         // the slot, for messages

  tlm::tlm_extension_base* clone() const override { return new ReductionCommand(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const ReductionCommand&>(e); }
};

}  // namespace fabricsim
