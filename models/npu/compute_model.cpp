#include "models/npu/compute_model.h"

#include <algorithm>
#include <cmath>

namespace fabricsim {

namespace {

constexpr const char* kClassNames[kKernelClasses] = {"gemm",
                                                     "gemm_unaligned",
                                                     "attention_forward",
                                                     "attention_backward",
                                                     "flash_attention_forward",
                                                     "flash_attention_backward",
                                                     "elementwise",
                                                     "norm_forward",
                                                     "norm_backward",
                                                     "copy",
                                                     "unclassified"};

Tick seconds_to_ticks(double s, const char* what) {
  return checked_ticks(s * 1e12, what);
}

}  // namespace

const char* kernel_class_name(KernelClass c) {
  return kClassNames[static_cast<std::size_t>(c)];
}

std::optional<KernelClass> kernel_class_from_name(const std::string& name) {
  for (std::size_t i = 0; i < kKernelClasses; ++i) {
    if (name == kClassNames[i]) return static_cast<KernelClass>(i);
  }
  return std::nullopt;
}

bool memory_bound_class(KernelClass c) {
  return c == KernelClass::kElementwise || c == KernelClass::kNormForward || c == KernelClass::kNormBackward ||
         c == KernelClass::kCopy;
}

const ParamTable<KernelClassParams>& KernelClassParams::table() {
  static const auto table =
      ParamTable<KernelClassParams>("kernel_class", "one class of kernels in npu.compute (docs/compute.md)")
          .add("flops_efficiency", Quantity::kNumber, &KernelClassParams::flops_efficiency,
               "fraction of peak_flops the class sustains; 0: its FLOPs are not timed")
          .range(0, 1)
          .add("memory_efficiency", Quantity::kNumber, &KernelClassParams::memory_efficiency,
               "fraction of memory_bandwidth the class sustains")
          .range(0, 1, true)
          .add("floor", Quantity::kDuration, &KernelClassParams::floor,
               "time of an empty kernel of the class (launch, fill and drain)");
  return table;
}

const ParamTable<ComputeParams>& ComputeParams::table() {
  static const auto table =
      ParamTable<ComputeParams>("npu.compute", "the GPU's compute model (docs/compute.md)")
          .choice("model", &ComputeParams::model, {"roofline", "kernel_classes"},
                  "roofline: max(FLOPs / peak, bytes / bandwidth); kernel_classes: per-class efficiencies and floors, "
                  "GEMMs in tile waves, ops timed from their shapes")
          .add("compute_units", Quantity::kCount, &ComputeParams::compute_units,
               "units GEMM tiles are spread over (SMs); 0: no wave effects")
          .range(0, 1 << 20)
          .choice("host", &ComputeParams::host, {"recorded", "fixed"},
                  "CPU nodes without num_ops: their recorded duration, or host_op_time each")
          .add("host_op_time", Quantity::kDuration, &ComputeParams::host_op_time, "a CPU node's time when host: fixed");
  return table;
}

Tick RooflineModel::time(const KernelWork& w) const {
  const double memory = bandwidth_ > 0 ? w.bytes / bandwidth_ : 0;
  return std::max(time_beside_memory(w), seconds_to_ticks(memory, "a compute node's memory time"));
}

Tick RooflineModel::time_beside_memory(const KernelWork& w) const {
  return peak_ > 0 ? seconds_to_ticks(w.flops / peak_, "a compute node") : 0;
}

KernelClassModel::KernelClassModel(ComputeParams params, double peak_flops, double bytes_per_second)
    : params_(std::move(params)), peak_(peak_flops), bandwidth_(bytes_per_second) {}

double KernelClassModel::gemm_seconds(const KernelWork& w, double flops_per_second) const {
  const double units = params_.compute_units;
  if (units < 1 || w.m == 0 || w.n == 0 || w.k == 0 || params_.gemm_tiles.empty()) return w.flops / flops_per_second;
  // Each unit computes one output tile at a time: a tile of tm x tn takes
  // 2 tm tn k FLOPs at the unit's share of the rate, and the tiles run in
  // waves of `units`. cuBLAS picks the tile that finishes first.
  double best = 0;
  bool first = true;
  for (const auto& [tm, tn] : params_.gemm_tiles) {
    const double tiles = std::ceil(static_cast<double>(w.m) / tm) * std::ceil(static_cast<double>(w.n) / tn) *
                         static_cast<double>(w.batch);
    const double waves = std::ceil(tiles / units);
    const double t = waves * 2.0 * tm * tn * static_cast<double>(w.k) / (flops_per_second / units);
    if (first || t < best) best = t;
    first = false;
  }
  return best;
}

double KernelClassModel::seconds(const KernelWork& w) const {
  const KernelClassParams& c = params_.of(w.cls);
  double arithmetic = 0;
  if (c.flops_efficiency > 0 && peak_ > 0) {
    const double rate = c.flops_efficiency * peak_;
    const bool gemm = w.cls == KernelClass::kGemm || w.cls == KernelClass::kGemmUnaligned;
    arithmetic = gemm ? gemm_seconds(w, rate) : w.flops / rate;
  }
  const double memory = bandwidth_ > 0 ? w.bytes / (c.memory_efficiency * bandwidth_) : 0;
  return ticks_to_ns(c.floor) * 1e-9 + std::max(arithmetic, memory);
}

Tick KernelClassModel::time(const KernelWork& w) const {
  return seconds_to_ticks(seconds(w), "a compute node");
}

Tick KernelClassModel::time_beside_memory(const KernelWork& w) const {
  if (w.cls != KernelClass::kUnclassified) return time(w);
  KernelWork arithmetic = w;
  arithmetic.bytes = 0;
  return time(arithmetic);
}

std::shared_ptr<const ComputeModel> make_compute_model(const ComputeParams& params, double peak_flops,
                                                       double bytes_per_second) {
  if (params.model == ComputeParams::Model::kRoofline) {
    return std::make_shared<RooflineModel>(peak_flops, bytes_per_second);
  }
  return std::make_shared<KernelClassModel>(params, peak_flops, bytes_per_second);
}

}  // namespace fabricsim
