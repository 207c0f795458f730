// How long a kernel takes on an NPU: the compute model.
//
// A kernel arrives as KernelWork: its class (GEMM, attention, elementwise,
// ...), its FLOPs and bytes, and for a GEMM its shape. The trace reader
// derives them (traces/workload/kernel_work.h); the NPU asks its model for
// the time. Two models ship:
//   - roofline: max(FLOPs / peak, bytes / memory bandwidth), the bound a
//     kernel cannot beat; what ASTRA-sim's roofline does.
//   - kernel_classes: per class, floor + max(FLOPs / (e_f x peak),
//     bytes / (e_m x bandwidth)), with GEMMs cut into output tiles run in
//     waves over the NPU's compute units (a 2048 x 1024 GEMM fills 64 of an
//     H100's 132 SMs), as cuBLAS runs them. Its coefficients are fitted on
//     measured kernels by `fabricsim calibrate` (docs/compute.md).
// A user plugs in another model through Npu::set_compute_model.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tlm/kernel/parameters.h"
#include "tlm/kernel/units.h"

namespace fabricsim {

/// Kernels that share how they use an NPU: one set of coefficients each.
enum class KernelClass {
  kGemm,                   // matrix multiply, every dimension a multiple of 16 bytes
  kGemmUnaligned,          // a dimension that is not: cuBLAS falls back to a slow kernel
  kAttentionForward,       // fused attention (cuDNN's, PyTorch's default on H100), forward
  kAttentionBackward,      // and backward
  kFlashAttentionForward,  // FlashAttention-2 / memory-efficient backends
  kFlashAttentionBackward,
  kElementwise,  // memory-bound: pointwise ops, reductions, optimizer steps
  kNormForward,  // layer/RMS norm, softmax: a row reduction, then a pass
  kNormBackward,
  kCopy,          // memory to memory (copy_, cat, clone)
  kUnclassified,  // FLOPs and bytes as the trace gave them (num_ops): the plain roofline
};
constexpr std::size_t kKernelClasses = static_cast<std::size_t>(KernelClass::kUnclassified) + 1;

/// "gemm", "attention_forward", ... : the class's key in a platform's npu.compute.
const char* kernel_class_name(KernelClass c);
std::optional<KernelClass> kernel_class_from_name(const std::string& name);
/// Classes whose time is set by their bytes (their FLOPs are not timed).
bool memory_bound_class(KernelClass c);

/// The work of one kernel.
struct KernelWork {
  KernelClass cls = KernelClass::kUnclassified;
  double flops = 0;
  double bytes = 0;  // moved through local memory
  // GEMMs: C[m x n] += A[m x k] B[k x n], `batch` times.
  std::uint64_t m = 0, n = 0, k = 0, batch = 1;
};

/// One class's coefficients.
struct KernelClassParams {
  double flops_efficiency = 1;   // of the NPU's peak FLOP/s; 0: FLOPs not timed
  double memory_efficiency = 1;  // of its memory bandwidth
  Tick floor = 0;                // launch and fill: the time of an empty kernel
  static const ParamTable<KernelClassParams>& table();
};

/// The npu.compute section of a platform.
struct ComputeParams {
  enum class Model { kRoofline, kKernelClasses };
  enum class Host { kRecorded, kFixed };
  Model model = Model::kRoofline;
  double compute_units = 0;  // SMs: GEMM tiles run in waves over them; 0: no wave effects
  std::vector<std::array<std::uint32_t, 2>> gemm_tiles{{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}};
  std::array<KernelClassParams, kKernelClasses> classes{};
  Host host = Host::kRecorded;  // CPU nodes without num_ops: their recorded time, or host_op_time each
  Tick host_op_time = 0;
  std::string source;  // where the coefficients came from, for reports
  /// The scalar settings (model, compute_units, host, host_op_time); the
  /// classes and gemm_tiles are read beside them (platforms/assembly/loader.cpp).
  static const ParamTable<ComputeParams>& table();
  KernelClassParams& of(KernelClass c) { return classes[static_cast<std::size_t>(c)]; }
  const KernelClassParams& of(KernelClass c) const { return classes[static_cast<std::size_t>(c)]; }
};

/// The interface an NPU times its kernels through.
class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  /// The kernel's time alone on the NPU.
  virtual Tick time(const KernelWork& w) const = 0;
  /// Its time apart from streaming its bytes through a modelled memory (the
  /// NPU then takes the longer of this and the memory's own time).
  virtual Tick time_beside_memory(const KernelWork& w) const = 0;
};

/// max(FLOPs / peak, bytes / bandwidth).
class RooflineModel : public ComputeModel {
 public:
  RooflineModel(double peak_flops, double bytes_per_second) : peak_(peak_flops), bandwidth_(bytes_per_second) {}
  Tick time(const KernelWork& w) const override;
  Tick time_beside_memory(const KernelWork& w) const override;

 private:
  double peak_, bandwidth_;
};

/// Per class: floor + max(FLOPs / (e_f x peak), bytes / (e_m x bandwidth));
/// GEMMs in tile waves. Unclassified work gets the plain roofline.
class KernelClassModel : public ComputeModel {
 public:
  KernelClassModel(ComputeParams params, double peak_flops, double bytes_per_second);
  Tick time(const KernelWork& w) const override;
  /// A classified kernel's whole time: its memory term is the sustained rate
  /// measured kernels reach, which a memory streaming at its raw rate lacks.
  /// Unclassified work: its arithmetic, as the roofline's.
  Tick time_beside_memory(const KernelWork& w) const override;
  /// The same, in seconds, without the Tick range check (calibration).
  double seconds(const KernelWork& w) const;
  const ComputeParams& params() const { return params_; }

 private:
  /// A GEMM's arithmetic time at full efficiency: the best tile's waves.
  double gemm_seconds(const KernelWork& w, double flops_per_second) const;

  ComputeParams params_;
  double peak_, bandwidth_;
};

/// The model a platform's npu.compute asks for.
std::shared_ptr<const ComputeModel> make_compute_model(const ComputeParams& params, double peak_flops,
                                                       double bytes_per_second);

}  // namespace fabricsim
