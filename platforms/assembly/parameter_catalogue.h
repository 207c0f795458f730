// Every parameter a platform file can set, by component type: what
// `fabricsim params` prints and what reports record as resolved values. The
// parameters themselves are declared by their components (Params::table());
// this file only says where in a platform file each section is written.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "platforms/assembly/platform_spec.h"
#include "tlm/kernel/parameters.h"

namespace fabricsim {

/// A switch's reduction unit as a platform gives it: the unit's parameters
/// and how the platform runs it (protocol, pipelining, TLM or RTL).
const ParamTable<ReductionSpec>& reduction_spec_table();
/// The `npu` section: the NPU's parameters and the workload's window.
const ParamTable<PlatformSpec>& npu_section_table();
/// A fabric's `transport` section.
const ParamTable<TransportSpec>& transport_spec_table();

struct ParamSection {
  std::string type;  // "link"
  std::string description;
  std::vector<std::string> written_at;  // where in a platform file: "fabrics[].link"
  std::vector<ParamRow> rows;
};

/// Every component type's parameters, in the order a platform file has them.
std::vector<ParamSection> parameter_catalogue();
/// A generated training step's parameters (run --model, gen model): the
/// model and how it is trained, written in a model file or set by --set.
std::vector<ParamSection> workload_parameter_catalogue();

/// The parameters `spec` resolved to, as text with units ("50 GB/s"), for
/// reports: the NPU, the collectives, the HBM, and per fabric its NIC, each
/// distinct link, switch and reduction-unit setting, and its memories.
nlohmann::ordered_json resolved_parameters(const PlatformSpec& spec);

}  // namespace fabricsim
