#include "traces/model/training_spec.h"

namespace fabricsim {

const ParamTable<TrainingSpec>& TrainingSpec::table() {
  static const auto table =
      ParamTable<TrainingSpec>("training",
                               "how a model is trained: its parallel layout, schedule, batch and "
                               "memory savers, as Megatron-Core runs them")
          .add("tp", Quantity::kCount, &TrainingSpec::tp, "tensor-parallel degree (the GPUs a layer is split over)")
          .range(1, 1 << 12)
          .add("pp", Quantity::kCount, &TrainingSpec::pp, "pipeline-parallel degree (stages)")
          .range(1, 1 << 12)
          .add("dp", Quantity::kCount, &TrainingSpec::dp,
               "data-parallel degree; 0: the GPUs left over (GPUs / (tp x pp x cp))")
          .range(0, 1 << 20)
          .add("cp", Quantity::kCount, &TrainingSpec::cp,
               "context-parallel degree: the sequence split over GPUs, attention as a ring of key/value blocks")
          .range(1, 1 << 12)
          .add("ep", Quantity::kCount, &TrainingSpec::ep,
               "expert-parallel degree: the experts split over this many data-parallel ranks")
          .range(1, 1 << 16)
          .add("vp", Quantity::kCount, &TrainingSpec::vp,
               "model chunks per pipeline rank: the interleaved 1F1B schedule when more than 1")
          .range(1, 1 << 10)
          .add("sp", Quantity::kFlag, &TrainingSpec::sp,
               "sequence parallel: norms and dropout split over the tensor-parallel ranks (all-gather and "
               "reduce-scatter in place of all-reduce)")
          .add("scatter_gather", Quantity::kFlag, &TrainingSpec::scatter_gather,
               "pipeline sends split over the tensor-parallel ranks, gathered after (Megatron's scatter/gather)")
          .choice("schedule", &TrainingSpec::schedule, {"1f1b", "gpipe"},
                  "the pipeline schedule: 1F1B (PipeDream-Flush; interleaved when vp > 1) or GPipe (all "
                  "forwards, then all backwards)")
          .add("seq", Quantity::kCount, &TrainingSpec::seq, "sequence length; 0: the model's")
          .range(0, 1 << 24)
          .add("microbatch", Quantity::kCount, &TrainingSpec::microbatch, "sequences per microbatch")
          .range(1, 1 << 20)
          .add("global_batch", Quantity::kCount, &TrainingSpec::global_batch,
               "sequences per step over all data-parallel ranks; 0: one microbatch per pipeline stage and "
               "data-parallel rank")
          .range(0, 1 << 30)
          .add("steps", Quantity::kCount, &TrainingSpec::steps, "training steps")
          .range(1, 100000)
          .choice("recompute", &TrainingSpec::recompute, {"none", "selective", "full"},
                  "activation recomputation: none; selective (core attention; with fused attention kernels "
                  "nothing runs again, only memory is saved); full (every layer's forward runs again before "
                  "its backward)")
          .add("zero", Quantity::kCount, &TrainingSpec::zero,
               "ZeRO stage: 0 data parallel; 1 optimizer state sharded (Megatron's distributed optimizer); 2 "
               "and gradients; 3 and weights (FSDP)")
          .range(0, 3)
          .add("dp_overlap", Quantity::kFlag, &TrainingSpec::dp_overlap,
               "gradients reduced in buckets while the backward pass runs (else all after it)")
          .add("bucket_params", Quantity::kNumber, &TrainingSpec::bucket_params,
               "parameters per gradient bucket (Megatron's 40 million)")
          .range(1e3, 1e12)
          .choice("dtype", &TrainingSpec::dtype, {"bf16", "fp16"},
                  "weights and activations (mixed precision: fp32 master weights and optimizer state)")
          .choice("grad_dtype", &TrainingSpec::grad_dtype, {"auto", "fp32", "params"},
                  "gradients as accumulated and reduced: auto (fp32 with bf16 weights, as Megatron forces; "
                  "the weights' type with fp16), fp32, or the weights' type")
          .choice("attention", &TrainingSpec::attention, {"cudnn", "flash", "unfused"},
                  "attention's kernels: cuDNN's fused one (as PyTorch's SDPA picks on Hopper), FlashAttention's, or "
                  "unfused as Megatron ran it in 2021 (QK^T by baddbmm, a fused softmax, dropout, then bmm; the "
                  "whole score matrix in memory, no causal saving)")
          .add("dropout", Quantity::kNumber, &TrainingSpec::dropout,
               "attention and hidden dropout probability (Megatron's default 0.1): with unfused attention a "
               "dropout kernel over the scores, and a mask from each bias-dropout-add; 0: none")
          .range(0, 1)
          .choice("framework", &TrainingSpec::framework, {"megatron", "eager"},
                  "how the ops are written: Megatron-Core's fused kernels (bias-GeLU, SwiGLU, bias-dropout-add, "
                  "fused Adam), or PyTorch eager as Hugging Face transformers runs a model (GeLU's tanh form in "
                  "eight kernels, the key/value cache's concatenations, foreach AdamW: the shipped GPT-2 trace)")
          .add("master_weights", Quantity::kFlag, &TrainingSpec::master_weights,
               "fp32 master weights and Adam state (mixed precision); false: the optimizer runs on the weights' "
               "own type (pure bf16, as the shipped GPT-2 trace)")
          .add("vocab_multiple", Quantity::kCount, &TrainingSpec::vocab_multiple,
               "the vocabulary is padded to a multiple of this x tp, as Megatron does (its "
               "make-vocab-size-divisible-by, 128); 1: as the model gives it (Hugging Face)")
          .range(1, 1 << 16)
          .add("memory_reserved", Quantity::kBytes, &TrainingSpec::memory_reserved,
               "memory per GPU outside the model's own: CUDA context, library workspaces, allocator slack "
               "(assumed, not measured)")
          .add("allow_oom", Quantity::kFlag, &TrainingSpec::allow_oom,
               "run a layout that does not fit the GPUs' memory anyway (the report still says by how much)");
  return table;
}

std::uint32_t TrainingSpec::grad_bytes() const {
  switch (grad_dtype) {
    case GradDtype::kFp32:
      return 4;
    case GradDtype::kParams:
      return element_bytes();
    case GradDtype::kAuto:
      break;
  }
  return dtype == Dtype::kBf16 ? 4 : element_bytes();
}

}  // namespace fabricsim
