// What does the arithmetic of a switch's reduction unit, by name: the TLM
// model's own ALU ("tlm"), or the Verilated SystemVerilog unit behind the
// unit's ALU port ("rtl"). A platform file picks one per switch
// (`reduction: { model: rtl }`), the command line for all
// (`--reduction-model`).
//
// Adding a model: put it in its own folder as an sc_module with a TLM-2.0
// target socket that takes the unit's ALU transactions
// (models/switch/reduction_alu.h), and add one entry to the list in
// reduction_models.cpp. docs/architecture.md shows a worked example.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/switch/reduction_unit.h"
#include "platforms/assembly/platform_spec.h"

namespace fabricsim {

/// What a model's maker is told about the unit it serves.
struct ReductionModelContext {
  std::string name;           // for the module it makes: the unit's name plus a suffix
  const ReductionSpec& spec;  // the unit's parameters (clock...)
  const RtlOptions& options;  // waveform and plusargs from the command line
  unsigned index;             // how many units of this model were made before this one
};

struct ReductionModel {
  const char* name;
  const char* description;
  /// Operations it has no datapath for: taken out of the unit's supported set,
  /// and refused if a platform file lists them (a bit set of reduction_bit()).
  std::uint32_t unsupported = 0;
  /// Why this build cannot run it (empty when it can).
  std::string unavailable;
  /// Makes what sits behind `unit.alu` and binds it; null when the unit
  /// combines in its own TLM ALU.
  std::unique_ptr<sc_core::sc_module> (*attach)(ReductionUnit& unit, const ReductionModelContext& context) = nullptr;
};

/// Every model, in the order of ReductionSpec::model's values (0: tlm).
const std::vector<ReductionModel>& reduction_models();
/// "tlm, rtl"
std::vector<std::string> reduction_model_names();
/// The model a unit runs.
const ReductionModel& reduction_model(const ReductionSpec& spec);
/// Sets `spec` to the model called `name` and drops the operations it cannot
/// do; false if there is no such model.
bool set_reduction_model(ReductionSpec& spec, const std::string& name);

}  // namespace fabricsim
