// Trace generators: write per-rank Chakra traces for microbenchmarks and
// training steps, in the same format real tools write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::traces {

/// One collective (Chakra comm_type value) of `bytes` (its size as
/// nccl-tests counts it; comm_size records each NPU's input, so an
/// all-gather's is bytes / npus), repeated `iterations` times in a
/// dependency chain. Writes PREFIX.<rank>.et for
/// every rank; returns the files written.
std::vector<std::string> write_collective_microbenchmark(const std::string& prefix, int npus, int comm_type,
                                                         std::uint64_t bytes, int iterations = 1);

/// A pipeline of `stages` NPUs (rank s is stage s) running `microbatches`
/// forward and then backward (GPipe order: backward of the last microbatch
/// first), `compute_us` per microbatch and stage each way, passing `bytes`
/// of activations forward and of gradients back with send/recv.
std::vector<std::string> write_pipeline(const std::string& prefix, int stages, int microbatches, double compute_us,
                                        std::uint64_t bytes);

struct TrainingShape {
  int dp = 1, tp = 1, pp = 1;  // data, tensor and pipeline parallel degrees
  int layers = 4;              // transformer layers (divided between pipeline stages)
  int hidden = 4096;           // model width
  int seq = 2048;              // sequence length
  int batch = 1;               // micro-batch size, in sequences
  int microbatches = 4;        // per step
  int iterations = 1;          // training steps
  int element_bytes = 2;       // bf16
};
/// One transformer training step per iteration with data, tensor and
/// pipeline parallelism. Rank r = tp_index + tp * (pp_index + pp * dp_index).
/// Each layer's forward is a compute node (num_ops and tensor_size from the
/// layer's shape) followed by the two tensor-parallel all-reduces of its
/// activations; backward costs twice the forward; pipeline stages pass
/// activations and gradients with send/recv (GPipe order); each stage ends
/// the step with a data-parallel all-reduce of its gradients. Process groups
/// are named in the nodes (pg_name) and written to PREFIX.comm_groups.json.
std::vector<std::string> write_training_step(const std::string& prefix, const TrainingShape& shape);

/// DLRM (Naumov et al. 2019) as the ASTRA-sim + ns-3 case study sizes it:
/// data-parallel MLPs, model-parallel embedding tables. Defaults are the
/// case study's table.
struct DlrmShape {
  int npus = 128;
  int batch = 512;            // samples per NPU
  int dense_features = 1600;  // the bottom MLP's input
  int sparse_features = 64;   // embedding tables, spread over the NPUs
  int embedding_dim = 64;
  int pooling = 60;       // rows looked up per table and sample
  int bottom_layers = 5;  // hidden layers of the bottom MLP (plus its input and output layers)
  int bottom_width = 1024;
  int top_layers = 10;  // hidden layers of the top MLP (plus its input and output layers)
  int top_width = 2048;
  int element_bytes = 2;  // 16-bit embeddings, activations and gradients
  int iterations = 1;
};
/// Per NPU and iteration: the bottom MLP forward and the embedding lookups
/// (its share of the tables for the whole global batch); the all-to-all
/// that hands each NPU its samples' pooled embeddings (batch x tables x dim
/// elements); the feature interaction and top MLP forward and backward; the
/// all-to-all of the embeddings' gradients and the tables' update; the
/// bottom MLP backward; and an all-reduce of each MLP's gradients as soon as
/// its backward is done (the top one overlaps the bottom's backward). MLP
/// FLOPs are 2 per multiply-add, backward twice forward.
std::vector<std::string> write_dlrm(const std::string& prefix, const DlrmShape& shape);

/// Optimizer-state offloading: per step and NPU a forward and a backward
/// compute node, a data-parallel all-reduce of the gradients, the optimizer
/// state loaded back from remote memory (prefetched during the backward pass),
/// the optimizer update, and the state stored back to remote memory.
std::vector<std::string> write_offload(const std::string& prefix, int npus, int steps, double compute_us,
                                       std::uint64_t gradient_bytes, std::uint64_t state_bytes);

/// A long trace for benchmarks: per rank, `nodes` nodes: chains of compute
/// nodes with an all-reduce of `collective_bytes` every `collective_every`
/// nodes, or, when `independent`, nodes with no dependencies at all (the
/// trace window's worst case: every node could run at once).
std::vector<std::string> write_long_trace(const std::string& prefix, int npus, std::uint64_t nodes,
                                          std::uint64_t collective_every, bool independent = false,
                                          std::uint64_t collective_bytes = 1 << 20);

}  // namespace fabricsim::traces
