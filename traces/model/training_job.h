// One training job: a model, how it is trained, and the GPUs it runs on.
// It lays the ranks out as Megatron-Core does (tensor parallel fastest, then
// context, data and pipeline parallel), makes each rank's step as the Chakra
// nodes PyTorch's converter would write (every op with its shapes and dtype,
// so the platform's compute model times it as it times a real trace), and
// gives the closed forms the nodes are checked against: FLOPs (Megatron's
// equation 3), bytes per kind of communication, the pipeline's bubble, and
// each GPU's memory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "traces/model/model_spec.h"
#include "traces/model/training_spec.h"
#include "traces/reader/node_source.h"

namespace fabricsim {

/// A rank's place in the layout.
/// How a generated node carries a GPU op's inputs and outputs: as the text
/// Chakra's converter writes (traces written to files), held structured
/// beside the node (NodeSource::structured_io; steps run in-process), or
/// not at all (a pass that reads only the step's communication and counts
/// its operations: the resource estimate's survey).
enum class OpIoForm { kText, kStructured, kOmitted };

struct RankCoords {
  int t = 0;  // tensor-parallel rank
  int c = 0;  // context-parallel rank
  int d = 0;  // data-parallel rank
  int p = 0;  // pipeline stage
};

/// What a GPU holds, in bytes (docs/workload.md, "Memory").
struct MemoryEstimate {
  double weights = 0;           // the weights in the training dtype (ZeRO-3: a shard and the layers gathered)
  double gradients = 0;         // accumulated gradients (grad_dtype; ZeRO-2 and 3: a shard)
  double optimizer = 0;         // fp32 master weights and Adam's two moments (ZeRO >= 1: a shard)
  double activations = 0;       // kept for the backward pass, at the most microbatches in flight
  double communication = 0;     // NCCL's buffers, per process group
  double reserved = 0;          // training.memory_reserved
  std::uint32_t in_flight = 0;  // the most microbatch-chunks in flight (the schedule's)
  double total() const { return weights + gradients + optimizer + activations + communication + reserved; }
};

/// Bytes one rank's step moves, per kind, by formula (what the comm nodes'
/// sizes must add up to).
struct CommVolumes {
  double tp = 0, pp = 0, dp = 0, ep = 0, cp = 0, embedding = 0;
};

class TrainingJob {
 public:
  /// Throws std::invalid_argument naming what cannot be laid out.
  TrainingJob(ModelSpec model, TrainingSpec training, int gpus, std::string name = "");

  const ModelSpec& model() const { return model_; }
  const TrainingSpec& training() const { return training_; }
  const std::string& name() const { return name_; }
  bool resnet() const { return model_.kind == ModelSpec::Kind::kResnet; }
  /// What tokens_per_step counts: "tokens", or "images" for a ResNet.
  const char* samples() const { return resnet() ? "images" : "tokens"; }
  int gpus() const { return gpus_; }
  int tp() const { return tp_; }
  int pp() const { return pp_; }
  int dp() const { return dp_; }
  int cp() const { return cp_; }
  int ep() const { return ep_; }
  int vp() const { return vp_; }
  int microbatches() const { return m_; }  // per pipeline per step
  int seq() const { return seq_; }
  std::uint32_t vocab_padded() const { return vocab_; }
  /// Pipeline chunk g (stage g % pp, chunk g / pp of that stage's vp)
  /// holds layers first_layer(g) to first_layer(g) + chunk_layers(g) - 1.
  /// The layers split evenly; where they do not, the first and last chunks
  /// (which also hold the embedding and the LM head) take one fewer, then
  /// the second and second-last..., as Llama 3 split 126 layers over 16
  /// stages (7, 8, ..., 8, 7).
  int first_layer(int g) const { return chunk_start_[static_cast<std::size_t>(g)]; }
  int chunk_layers(int g) const {
    return chunk_start_[static_cast<std::size_t>(g) + 1] - chunk_start_[static_cast<std::size_t>(g)];
  }
  /// Every layer of a pipeline stage, its chunks in order.
  std::vector<std::uint32_t> stage_layers(int stage) const;

  RankCoords coords(int rank) const;
  int rank_of(const RankCoords& c) const;

  /// The process groups `rank` belongs to, by name (ranks ascending):
  /// tp_*, cp_*, dp_* (gradients), edp_* (experts' gradients), ep_*, embd_*.
  std::vector<std::pair<std::string, std::vector<int>>> groups_of(int rank) const;

  /// The rank's nodes, made as they are read (ids 0 to n-1), their GPU ops'
  /// args written as Chakra's text (for files) or held structured (runs).
  std::unique_ptr<traces::NodeSource> source(int rank, OpIoForm form) const;

  // ---- closed forms ----
  /// Model FLOPs of one step as Megatron counts them (every matmul, dense
  /// attention; full recomputation counted as run): its equation 3 for a
  /// GPT with full recomputation, 72 B s l h^2 (1 + s/6h + V/12lh) without.
  double step_flops() const;
  /// The same without the recomputed forward: what MFU counts.
  double model_flops() const;
  /// The pipeline's bubble with free communication: (p - 1) / (v m + p - 1).
  double bubble_fraction() const;
  CommVolumes volumes(int rank) const;
  MemoryEstimate memory(int rank) const;
  /// Weights on `rank` (its stage's layers, its share of split matrices and
  /// experts, its embeddings): {dense, experts}.
  std::pair<double, double> local_params(int rank) const;
  /// Tokens (a ResNet's images) per step over all data-parallel replicas.
  double tokens_per_step() const;
  std::string describe() const;

  // Pieces the node stream and the closed forms share.
  struct LayerParams {
    double dense = 0, experts = 0;  // this TP rank's share
  };
  LayerParams layer_params(std::uint32_t layer) const;
  /// Bytes one layer keeps for the backward pass, per microbatch.
  double layer_activation_bytes(std::uint32_t layer) const;
  /// The schedule of one pipeline rank: (forward?, chunk, microbatch) in order.
  struct Unit {
    bool forward;
    int chunk, microbatch;
  };
  std::vector<Unit> schedule(int stage) const;
  /// Microbatch-chunks a stage keeps in flight: its schedule's most
  /// forwards not yet matched by their backward.
  std::uint32_t in_flight(int stage) const;

 private:
  ModelSpec model_;
  TrainingSpec training_;
  std::string name_;
  int gpus_, tp_, pp_, dp_, cp_, ep_, vp_, m_, seq_;
  std::uint32_t vocab_;
  std::vector<int> chunk_start_;  // pp x vp + 1 entries
};

}  // namespace fabricsim
