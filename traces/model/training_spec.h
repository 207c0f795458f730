// How a model is trained: its parallel layout, schedule, batch and memory
// savers, as Megatron-Core and PyTorch run them. Declared once in its table
// (`fabricsim params training`); a model file's `training:` section, a
// preset's, and `--set training.KEY=VALUE` all go through it.
#pragma once

#include <cstdint>
#include <string>

#include "tlm/kernel/parameters.h"

namespace fabricsim {

struct TrainingSpec {
  enum class Schedule : std::uint8_t { k1f1b, kGpipe };
  enum class Recompute : std::uint8_t { kNone, kSelective, kFull };
  enum class Dtype : std::uint8_t { kBf16, kFp16 };
  enum class GradDtype : std::uint8_t { kAuto, kFp32, kParams };
  enum class Attention : std::uint8_t { kCudnn, kFlash, kUnfused };
  enum class Framework : std::uint8_t { kMegatron, kEager };

  std::uint32_t tp = 1;        // tensor parallel
  std::uint32_t pp = 1;        // pipeline parallel
  std::uint32_t dp = 0;        // data parallel; 0: the GPUs left (GPUs / (tp pp cp))
  std::uint32_t cp = 1;        // context parallel (ring attention)
  std::uint32_t ep = 1;        // expert parallel, within data parallel
  std::uint32_t vp = 1;        // model chunks per pipeline rank (interleaved 1F1B when > 1)
  bool sp = false;             // sequence parallel with tp
  bool scatter_gather = true;  // pipeline sends split over the tp ranks (Megatron's scatter/gather)
  Schedule schedule = Schedule::k1f1b;
  std::uint32_t seq = 0;           // 0: the model's
  std::uint32_t microbatch = 1;    // sequences per microbatch
  std::uint32_t global_batch = 0;  // sequences per step; 0: one microbatch per pipeline stage and data-parallel rank
  std::uint32_t steps = 1;
  Recompute recompute = Recompute::kNone;
  std::uint32_t zero = 0;  // 0: DDP; 1: optimizer state sharded (Megatron's distributed optimizer); 2: and gradients;
                           // 3: and weights (FSDP)
  bool dp_overlap = true;  // gradient reduction in buckets during the backward pass
  double bucket_params = 40e6;  // parameters per gradient bucket
  Dtype dtype = Dtype::kBf16;
  GradDtype grad_dtype = GradDtype::kAuto;
  Attention attention = Attention::kCudnn;
  double dropout = 0;                          // attention and hidden dropout probability (Megatron's default is 0.1)
  Framework framework = Framework::kMegatron;  // how ops are fused
  bool master_weights = true;  // fp32 master weights and Adam state; false: the optimizer runs on the weights' type
  std::uint32_t vocab_multiple =
      128;  // the vocabulary padded to a multiple of this x tp (Megatron's make-vocab-size-divisible-by)
  double memory_reserved = 2.0 * (1ull << 30);  // bytes per GPU outside the model's own (CUDA context, workspaces)
  bool allow_oom = false;                       // run a layout that does not fit the GPU's memory anyway

  static const ParamTable<TrainingSpec>& table();

  std::uint32_t element_bytes() const { return 2; }
  /// Bytes per parameter of the optimizer's state: fp32 master weights and
  /// two moments (12), or two moments in the weights' type.
  std::uint32_t optimizer_bytes() const { return master_weights ? 12 : 2 * element_bytes(); }
  /// Gradients are reduced in fp32 with bf16 weights (Megatron forces it),
  /// in the weights' type with fp16 unless asked.
  std::uint32_t grad_bytes() const;
};

}  // namespace fabricsim
