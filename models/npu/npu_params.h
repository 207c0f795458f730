// An NPU's parameters (Npu::Params), without SystemC: the platform
// description holds them (platforms/assembly/platform_spec.h).
#pragma once

#include <cstdint>

#include "models/npu/compute_model.h"
#include "tlm/kernel/parameters.h"
#include "tlm/kernel/units.h"

namespace fabricsim {

struct NpuParams {
  double peak_flops = 100e12;                          // dense FLOP/s of the compute engine
  Bandwidth memory_bandwidth = Bandwidth::GBps(2000);  // roofline's local-memory bandwidth
  double cpu_flops = 1e12;                             // CPU ops (is_cpu_op)
  Tick remote_memory_latency = ns_to_ticks(1000);      // stand-in for MEM_LOAD/STORE
  Bandwidth remote_memory_bandwidth = Bandwidth::GBps(50);
  Tick collective_start_overhead = 0;  // per collective (endpoint delay)
  bool no_remote_memory = false;       // MEM nodes are errors (ASTRA-sim's NO_MEMORY_EXPANSION)
  ComputeParams compute;               // npu.compute: the GPU's compute model (models/npu/compute_model.h)
  /// Every user-settable parameter, with unit, range and description.
  static const ParamTable<NpuParams>& table();
};

}  // namespace fabricsim
