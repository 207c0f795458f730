#include "rtl/rtl_reduction.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "models/switch/reduction_alu.h"
#include "rtl/rtl_compare.h"
#include "tlm/reduction.h"
#include "tlm/util/errors.h"

namespace fabricsim {

namespace {
// reduction_pkg.sv's encodings.
unsigned rtl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return 0;
    case ReduceOp::kMin:
      return 1;
    case ReduceOp::kMax:
      return 2;
  }
  return 0;
}
}  // namespace

RtlReductionAlu::RtlReductionAlu(const sc_core::sc_module_name& name, const Params& params)
    : sc_core::sc_module(name), in("in"), params_(params) {
  if (params_.clock_MHz <= 0) throw std::invalid_argument(std::string(this->name()) + ": clock_MHz must be > 0");
  period_ = static_cast<Tick>(std::llround(1e6 / params_.clock_MHz));
  in.register_b_transport(this, &RtlReductionAlu::b_transport);
  driver_ = std::make_unique<RtlDriver>(params_.vcd, params_.plusargs);
}

RtlReductionAlu::~RtlReductionAlu() = default;

std::uint64_t RtlReductionAlu::cycles() const {
  return driver_->cycles();
}

void RtlReductionAlu::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  auto* cmd = gp.get_extension<ReductionCommand>();
  if (!cmd || cmd->count == 0) throw std::logic_error(std::string(name()) + ": a payload without a ReductionCommand");
  if (cmd->dtype == DataType::kFp16) {
    throw ModelError(std::string(name()) + ": the RTL reduction unit does not support " + to_string(cmd->op) +
                     " on fp16 (it supports sum, min and max on fp32, bf16 and int32); " + cmd->what);
  }
  const unsigned op = rtl_op(cmd->op);
  const unsigned dtype = cmd->dtype == DataType::kFp32 ? 0 : cmd->dtype == DataType::kBf16 ? 1 : 2;
  // The contributions stream in as they arrived: the RTL takes a beat when
  // every stream's has come (and it is done with the slot before).
  const bool timed = cmd->first_byte.size() == cmd->count && cmd->last_byte.size() == cmd->count;
  Tick first = now_ticks() + delay.value();
  if (timed) first = *std::min_element(cmd->first_byte.begin(), cmd->first_byte.end());
  time_ = std::max(time_, first);
  const unsigned streams = RtlDriver::streams();
  std::uint8_t* result = gp.get_data_ptr();
  const bool data = result && cmd->parts.front();
  // Fold in passes of up to kStreams operands, the partial result first.
  std::vector<const std::uint8_t*> operands;
  std::vector<RtlDriver::Arrival> arrivals;
  std::size_t next = 0;
  if (data) scratch_.resize(cmd->bytes);
  while (next < cmd->count) {
    operands.clear();
    arrivals.clear();
    if (next > 0) {
      operands.push_back(data ? result : nullptr);
      arrivals.push_back({time_, time_});
    }
    while (operands.size() < streams && next < cmd->count) {
      operands.push_back(data ? cmd->parts[next] : nullptr);
      arrivals.push_back(timed ? RtlDriver::Arrival{cmd->first_byte[next], cmd->last_byte[next]}
                               : RtlDriver::Arrival{first, first});
      ++next;
    }
    time_ = driver_->pass(operands.data(), arrivals.data(), static_cast<unsigned>(operands.size()), cmd->bytes, op,
                          dtype, data ? scratch_.data() : nullptr, time_, period_, params_.vcd_from, params_.vcd_to);
    if (data) std::memcpy(result, scratch_.data(), cmd->bytes);
  }
  if (data) {
    // Stray bytes past the last whole element come from the last
    // contribution, as in the reference.
    const unsigned eb = element_bytes(cmd->dtype);
    const std::uint64_t whole = cmd->bytes / eb * eb;
    if (whole < cmd->bytes) std::memcpy(result + whole, cmd->parts.back() + whole, cmd->bytes - whole);
    // Bit for bit against the reference model.
    std::vector<std::uint8_t> reference(cmd->parts.front(), cmd->parts.front() + cmd->bytes);
    for (std::size_t i = 1; i < cmd->count; ++i)
      reduce_into(reference.data(), cmd->parts[i], cmd->bytes, cmd->dtype, cmd->op);
    const std::string diff =
        first_rtl_difference(result, reference.data(), cmd->bytes, cmd->dtype, RtlDriver::beat_bytes());
    if (!diff.empty()) {
      throw DataMismatchError(std::string(name()) + ": the RTL result differs from the reference model for " +
                              cmd->what + " (" + to_string(cmd->op) + " on " + to_string(cmd->dtype) + " of " +
                              std::to_string(cmd->count) + " contributions): " + diff);
    }
  }
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  delay = to_sc_time(std::max(time_, now_ticks()) - now_ticks());
}

}  // namespace fabricsim
