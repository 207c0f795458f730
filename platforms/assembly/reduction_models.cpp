#include "platforms/assembly/reduction_models.h"

#ifdef FABRICSIM_HAVE_RTL
#include "rtl/rtl_reduction.h"
#endif

namespace fabricsim {

namespace {

std::uint32_t fp16_operations() {
  std::uint32_t bits = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) bits |= reduction_bit(op, DataType::kFp16);
  return bits;
}

#ifdef FABRICSIM_HAVE_RTL
std::unique_ptr<sc_core::sc_module> attach_rtl(ReductionUnit& unit, const ReductionModelContext& c) {
  RtlReductionAlu::Params p;
  p.clock_MHz = c.spec.clock_hz / 1e6;
  p.plusargs = c.options.plusargs;
  if (!c.options.vcd.empty()) {
    // One waveform per RTL unit: the first takes the name given, the others
    // the unit's name before the extension.
    p.vcd = c.options.vcd;
    if (c.index > 0) {
      const auto dot = p.vcd.rfind('.');
      const std::string stem = dot == std::string::npos ? p.vcd : p.vcd.substr(0, dot);
      p.vcd = stem + "." + std::string(unit.name()) + (dot == std::string::npos ? "" : p.vcd.substr(dot));
    }
    p.vcd_from = c.options.vcd_from;
    p.vcd_to = c.options.vcd_to;
  }
  auto alu = std::make_unique<RtlReductionAlu>(c.name.c_str(), p);
  unit.alu.bind(alu->in);
  return alu;
}
#endif

std::vector<ReductionModel> make_models() {
  std::vector<ReductionModel> models;
  models.push_back(
      ReductionModel{"tlm", "the TLM model: timing from its parameters, arithmetic in C++", 0, {}, nullptr});
  // The RTL (rtl/reduction_pkg.sv) has no fp16 datapath.
#ifdef FABRICSIM_HAVE_RTL
  models.push_back(ReductionModel{"rtl",
                                  "the Verilated SystemVerilog unit (rtl/) combines the slots, cycle by cycle",
                                  fp16_operations(),
                                  {},
                                  &attach_rtl});
#else
  models.push_back(ReductionModel{"rtl", "the Verilated SystemVerilog unit (rtl/) combines the slots, cycle by cycle",
                                  fp16_operations(),
                                  "this build has none: build with Verilator installed (-DFABRICSIM_RTL=ON)", nullptr});
#endif
  return models;
}

}  // namespace

const std::vector<ReductionModel>& reduction_models() {
  static const std::vector<ReductionModel> models = make_models();
  return models;
}

std::vector<std::string> reduction_model_names() {
  std::vector<std::string> names;
  for (const auto& m : reduction_models()) names.emplace_back(m.name);
  return names;
}

const ReductionModel& reduction_model(const ReductionSpec& spec) {
  return reduction_models().at(spec.model);
}

bool set_reduction_model(ReductionSpec& spec, const std::string& name) {
  const auto& models = reduction_models();
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (name == models[i].name) {
      spec.model = static_cast<unsigned>(i);
      spec.unit.supported &= ~models[i].unsupported;
      return true;
    }
  }
  return false;
}

}  // namespace fabricsim
