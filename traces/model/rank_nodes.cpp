// One rank's training step as Chakra nodes, made as they are read: the
// schedule's units (a chunk's forward or backward for one microbatch, then
// the step's end) are expanded one at a time, so memory holds one unit.
//
// What the nodes say, and why:
//  - every GPU op is a COMP_NODE named as PyTorch's converter names it
//    (aten::mm, aten::_cudnn_attention_forward, ...) with its op_schema and
//    its tensors (ids, shapes, element sizes), and no num_ops: the
//    platform's compute model times it by its class as it times a real
//    trace (traces/workload/kernel_work.h). Fused kernels (bias-GeLU,
//    SwiGLU, bias-dropout-add, the MoE permutations) are written as the one
//    elementwise op they are, with the tensors they read and write.
//  - the GPU runs one stream: each compute node depends on the one before;
//    a blocking collective (tensor parallel, the MoE all-to-alls) is waited
//    on by the compute after it; gradient buckets, the pipeline's sends and
//    the weights' prefetch (ZeRO-3) are not.
//  - each process group's collectives follow one another (an NCCL
//    communicator's stream); groups run side by side.
//  - pipeline receives are posted early (no dependencies): they complete when
//    their message arrives, as a posted irecv does. A unit's first compute
//    waits for the send before it too (Megatron's p2p calls wait on both).
#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

#include "traces/model/node_emitter.h"
#include "traces/model/training_job.h"

namespace fabricsim {

namespace {

using model_nodes::Arg;
using model_nodes::kNone;
using model_nodes::NodeEmitter;
using model_nodes::Tensor;

// The schemas PyTorch writes for the ops the steps use (the parameter names
// matter to the compute model: attention finds query, key and is_causal).
constexpr const char* kMm = "aten::mm(Tensor self, Tensor mat2) -> Tensor";
constexpr const char* kAddmm =
    "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor";
constexpr const char* kBmm = "aten::bmm(Tensor self, Tensor mat2) -> Tensor";
constexpr const char* kLayerNorm =
    "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> "
    "(Tensor, Tensor, Tensor)";
constexpr const char* kLayerNormBackward =
    "aten::native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor "
    "rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)";
constexpr const char* kRmsNorm =
    "aten::_fused_rms_norm(Tensor input, int normalized_shape_ndim, Tensor weight, float eps) -> (Tensor, Tensor)";
constexpr const char* kRmsNormBackward =
    "aten::_fused_rms_norm_backward(Tensor grad_out, Tensor input, int normalized_shape_ndim, Tensor rstd, Tensor "
    "weight, bool[2] output_mask) -> (Tensor, Tensor)";
constexpr const char* kAttentionForward =
    "aten::_cudnn_attention_forward(Tensor query, Tensor key, Tensor value, Tensor? attn_bias, Tensor? cum_seq_q, "
    "Tensor? cum_seq_k, SymInt max_q, SymInt max_k, bool compute_log_sumexp, float dropout_p=0., bool "
    "is_causal=False, bool return_debug_mask=False, *, float? scale=None) -> (Tensor output, Tensor logsumexp, "
    "Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, Tensor philox_seed, Tensor philox_offset, "
    "Tensor debug_attn_mask)";
constexpr const char* kAttentionBackward =
    "aten::_cudnn_attention_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor out, Tensor "
    "logsumexp, Tensor philox_seed, Tensor philox_offset, Tensor attn_bias, Tensor cum_seq_q, Tensor cum_seq_k, "
    "SymInt max_q, SymInt max_k, float dropout_p, bool is_causal, *, float? scale=None) -> (Tensor, Tensor, Tensor)";
constexpr const char* kFlashForward =
    "aten::_flash_attention_forward(Tensor query, Tensor key, Tensor value, Tensor? cum_seq_q, Tensor? cum_seq_k, "
    "SymInt max_q, SymInt max_k, float dropout_p, bool is_causal, bool return_debug_mask, *, float? scale=None, "
    "SymInt? window_size_left=None, SymInt? window_size_right=None, Tensor? seqused_k=None, Tensor? "
    "alibi_slopes=None) -> (Tensor output, Tensor softmax_logsumexp, Tensor rng_state, Tensor unused, Tensor "
    "debug_attn_mask)";
constexpr const char* kFlashBackward =
    "aten::_flash_attention_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor out, Tensor "
    "logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, float dropout_p, bool is_causal, "
    "Tensor rng_state, Tensor unused, *, float? scale=None, SymInt? window_size_left=None, SymInt? "
    "window_size_right=None) -> (Tensor, Tensor, Tensor)";

class RankNodes final : public NodeEmitter {
 public:
  RankNodes(const TrainingJob& job, int rank, OpIoForm form, bool count_only, std::uint64_t count)
      : NodeEmitter(job, rank, form, count_only, count),
        job_(job),
        tr_(job_.training()),
        m_(job_.model()),
        rank_(rank),
        me_(job.coords(rank)) {
    t_ = job.tp();
    tokens_ = static_cast<std::int64_t>(tr_.microbatch) * (job.seq() / job.cp());
    sp_ = tr_.sp && t_ > 1;
    eager_ = tr_.framework == TrainingSpec::Framework::kEager;
    h_ = m_.hidden;
    q_heads_ = static_cast<std::int64_t>(m_.heads / static_cast<std::uint32_t>(t_));
    // What this rank holds beside its layers: the embedding, the LM head,
    // the final norm.
    extra_dense_ = job.local_params(rank).first;
    for (const std::uint32_t l : job.stage_layers(me_.p)) extra_dense_ -= job.layer_params(l).dense;
    kv_heads_ = m_.kv() >= static_cast<std::uint32_t>(t_)
                    ? static_cast<std::int64_t>(m_.kv() / static_cast<std::uint32_t>(t_))
                    : 1;
    dh_ = m_.dhead();
  }

 private:
  // ---- the program ----
  void run_unit(const TrainingJob::Unit& u) override {
    if (u.forward) {
      forward_unit(u.chunk, u.microbatch);
    } else {
      backward_unit(u.chunk, u.microbatch);
    }
  }

  /// Tags: unique per (sender, receiver) among messages that can be in
  /// flight together. A pipeline's: the step (mod 4), direction, boundary
  /// and microbatch; a context ring's also the layer, the pass and the step
  /// of the ring.
  std::int64_t pipeline_tag(bool forward, int boundary, int microbatch) const {
    const std::int64_t stages = static_cast<std::int64_t>(job_.vp()) * job_.pp();
    return (((step_ % 4) * 2 + (forward ? 0 : 1)) * stages + boundary) * job_.microbatches() + microbatch;
  }
  std::int64_t ring_tag(int phase, int layer, int microbatch, int ring_step) const {
    const std::int64_t layers = m_.layers;
    return ((((step_ % 4) * 3 + phase) * layers + layer) * job_.microbatches() + microbatch) * job_.cp() + ring_step;
  }
  // ---- ops ----
  std::int64_t split_tokens() const { return sp_ ? tokens_ / t_ : tokens_; }

  Tensor gemm(const Tensor& a, std::int64_t k, std::int64_t n, bool bias) {
    const Tensor w = tensor({k, n});
    const Tensor out = tensor({a.shape[0], n});
    if (bias) {
      compute("aten::addmm", kAddmm, {Arg::of(tensor({n})), Arg::of(a), Arg::of(w), Arg::value("1"), Arg::value("1")},
              {Arg::of(out)});
    } else {
      compute("aten::mm", kMm, {Arg::of(a), Arg::of(w)}, {Arg::of(out)});
    }
    return out;
  }
  /// A linear layer's backward: the input's gradient [T, k] and the
  /// weight's [k, n] (and the bias's, summed over tokens).
  void gemm_backward(std::int64_t tokens, std::int64_t k, std::int64_t n, bool bias, bool input_grad = true) {
    const Tensor grad = tensor({tokens, n});
    if (input_grad) compute("aten::mm", kMm, {Arg::of(grad), Arg::of(tensor({n, k}))}, {Arg::of(tensor({tokens, k}))});
    compute("aten::mm", kMm, {Arg::of(tensor({k, tokens})), Arg::of(grad)}, {Arg::of(tensor({k, n}))});
    if (bias)
      compute(
          "aten::sum",
          "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
          {Arg::of(grad), Arg::value("[0]"), Arg::value("False")}, {Arg::of(tensor({n}))});
  }
  void norm(std::int64_t tokens) {
    const Tensor x = tensor({tokens, h_});
    if (m_.norm == ModelSpec::Norm::kLayerNorm) {
      compute("aten::native_layer_norm", kLayerNorm,
              {Arg::of(x), Arg::value("[" + std::to_string(h_) + "]"), Arg::of(tensor({h_})), Arg::of(tensor({h_})),
               Arg::value("1e-05")},
              {Arg::of(tensor({tokens, h_})), Arg::of(tensor({tokens, 1}, 4)), Arg::of(tensor({tokens, 1}, 4))});
    } else {
      compute("aten::_fused_rms_norm", kRmsNorm,
              {Arg::of(x), Arg::value("1"), Arg::of(tensor({h_})), Arg::value("1e-05")},
              {Arg::of(tensor({tokens, h_})), Arg::of(tensor({tokens, 1}, 4))});
    }
  }
  void norm_backward(std::int64_t tokens) {
    if (m_.norm == ModelSpec::Norm::kLayerNorm) {
      compute("aten::native_layer_norm_backward", kLayerNormBackward,
              {Arg::of(tensor({tokens, h_})), Arg::of(tensor({tokens, h_})), Arg::value("[" + std::to_string(h_) + "]"),
               Arg::of(tensor({tokens, 1}, 4)), Arg::of(tensor({tokens, 1}, 4)), Arg::of(tensor({h_})),
               Arg::of(tensor({h_})), Arg::value("[True, True, True]")},
              {Arg::of(tensor({tokens, h_})), Arg::of(tensor({h_})), Arg::of(tensor({h_}))});
    } else {
      compute("aten::_fused_rms_norm_backward", kRmsNormBackward,
              {Arg::of(tensor({tokens, h_})), Arg::of(tensor({tokens, h_})), Arg::value("1"),
               Arg::of(tensor({tokens, 1}, 4)), Arg::of(tensor({h_})), Arg::value("[True, True]")},
              {Arg::of(tensor({tokens, h_})), Arg::of(tensor({h_}))});
    }
  }
  /// The residual add (Megatron's fused bias-dropout-add: with dropout it
  /// writes its mask too).
  void residual(std::int64_t tokens, bool backward = false) {
    if (eager_ && backward) {  // the residual's gradient accumulated in place
      elementwise("aten::add_", {tensor({tokens, h_}), tensor({tokens, h_})}, {});
      return;
    }
    std::vector<Tensor> out = {tensor({tokens, h_})};
    if (tr_.dropout > 0) out.push_back(tensor({tokens, h_}, 1));
    elementwise("aten::add", {tensor({tokens, h_}), tensor({tokens, h_})}, out);
  }

  // Tensor-parallel entry and exit of a split block (Megatron's f and g).
  void enter_block() {  // forward: the sequence-parallel input gathered
    if (sp_) blocking(ChakraProtoMsg::ALL_GATHER, static_cast<double>(tokens_ / t_) * h_ * eb_, "tp", "all_gather");
  }
  void leave_block() {  // forward: partial sums reduced (and scattered)
    if (t_ <= 1) return;
    const double bytes = static_cast<double>(tokens_) * h_ * eb_;
    blocking(sp_ ? ChakraProtoMsg::REDUCE_SCATTER : ChakraProtoMsg::ALL_REDUCE, bytes, "tp",
             sp_ ? "reduce_scatter" : "all_reduce");
  }
  void backward_leave_block() {  // backward of g: the gradient gathered (sp), else nothing
    if (sp_)
      blocking(ChakraProtoMsg::ALL_GATHER, static_cast<double>(tokens_ / t_) * h_ * eb_, "tp", "all_gather_grad");
  }
  /// Backward of f: the input gathered again for the weight gradient (sp,
  /// beside the data gradient), then the input's gradient reduced.
  std::uint64_t backward_regather() {
    if (!sp_) return kNone;
    return collective(ChakraProtoMsg::ALL_GATHER, static_cast<double>(tokens_ / t_) * h_ * eb_, "tp", {last_compute_},
                      "all_gather_input");
  }
  void backward_enter_block() {
    if (t_ <= 1) return;
    const double bytes = static_cast<double>(tokens_) * h_ * eb_;
    blocking(sp_ ? ChakraProtoMsg::REDUCE_SCATTER : ChakraProtoMsg::ALL_REDUCE, bytes, "tp",
             sp_ ? "reduce_scatter_grad" : "all_reduce_grad");
  }

  /// Attention as Megatron ran it before fused kernels: the scores whole in
  /// memory, every one computed (no causal saving).
  void unfused_attention(bool backward, std::int64_t kv_seq_block) {
    const std::int64_t b = tr_.microbatch, sq = tokens_ / b, heads = b * q_heads_;
    const Tensor scores = tensor({heads, sq, kv_seq_block});
    const bool dropout = tr_.dropout > 0;
    if (!backward) {
      compute("aten::baddbmm",
              "aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
              {Arg::of(tensor({heads, sq, kv_seq_block})), Arg::of(tensor({heads, sq, dh_})),
               Arg::of(tensor({heads, dh_, kv_seq_block})), Arg::value("0.0"), Arg::value("1.0")},
              {Arg::of(scores)});
      elementwise("aten::_softmax", {scores}, {tensor({heads, sq, kv_seq_block})});  // fused scale, mask and softmax
      if (dropout)
        elementwise("aten::native_dropout", {tensor({heads, sq, kv_seq_block})},
                    {tensor({heads, sq, kv_seq_block}), tensor({heads, sq, kv_seq_block}, 1)});
      compute("aten::bmm", kBmm,
              {Arg::of(tensor({heads, sq, kv_seq_block})), Arg::of(tensor({heads, kv_seq_block, dh_}))},
              {Arg::of(tensor({heads, sq, dh_}))});
      return;
    }
    const Tensor grad = tensor({heads, sq, dh_});
    compute("aten::bmm", kBmm, {Arg::of(grad), Arg::of(tensor({heads, dh_, kv_seq_block}))},
            {Arg::of(tensor({heads, sq, kv_seq_block}))});  // d(probabilities)
    compute("aten::bmm", kBmm, {Arg::of(tensor({heads, kv_seq_block, sq})), Arg::of(grad)},
            {Arg::of(tensor({heads, kv_seq_block, dh_}))});  // dV
    if (dropout)
      elementwise("aten::native_dropout_backward",
                  {tensor({heads, sq, kv_seq_block}), tensor({heads, sq, kv_seq_block}, 1)},
                  {tensor({heads, sq, kv_seq_block})});
    elementwise("aten::_softmax_backward_data", {tensor({heads, sq, kv_seq_block}), tensor({heads, sq, kv_seq_block})},
                {tensor({heads, sq, kv_seq_block})});
    compute("aten::bmm", kBmm,
            {Arg::of(tensor({heads, sq, kv_seq_block})), Arg::of(tensor({heads, kv_seq_block, dh_}))},
            {Arg::of(tensor({heads, sq, dh_}))});  // dQ
    compute("aten::bmm", kBmm, {Arg::of(tensor({heads, kv_seq_block, sq})), Arg::of(tensor({heads, sq, dh_}))},
            {Arg::of(tensor({heads, kv_seq_block, dh_}))});  // dK
  }

  void attention_core(bool backward, std::int64_t kv_seq_block, bool causal) {
    if (tr_.attention == TrainingSpec::Attention::kUnfused) {
      unfused_attention(backward, kv_seq_block);
      return;
    }
    const std::int64_t b = tr_.microbatch, sq = tokens_ / b;
    const Tensor q = tensor({b, q_heads_, sq, dh_}), k = tensor({b, kv_heads_, kv_seq_block, dh_}),
                 v = tensor({b, kv_heads_, kv_seq_block, dh_});
    const bool cudnn = tr_.attention == TrainingSpec::Attention::kCudnn;
    const std::string c = causal ? "True" : "False";
    const std::string scale = std::to_string(1.0 / std::sqrt(static_cast<double>(dh_)));
    if (!backward) {
      const Tensor o = tensor({b, q_heads_, sq, dh_}), lse = tensor({b, q_heads_, sq, 1}, 4);
      if (cudnn) {
        compute("aten::_cudnn_attention_forward", kAttentionForward,
                {Arg::of(q), Arg::of(k), Arg::of(v), Arg::value("'<None>'"), Arg::value("'<None>'"),
                 Arg::value("'<None>'"), Arg::value(std::to_string(sq)), Arg::value(std::to_string(kv_seq_block)),
                 Arg::value("True"), Arg::value("0.0"), Arg::value(c), Arg::value("False"), Arg::value(scale)},
                {Arg::of(o), Arg::of(lse)});
      } else {
        compute("aten::_flash_attention_forward", kFlashForward,
                {Arg::of(tensor({b, sq, q_heads_, dh_})), Arg::of(tensor({b, kv_seq_block, kv_heads_, dh_})),
                 Arg::of(tensor({b, kv_seq_block, kv_heads_, dh_})), Arg::value("'<None>'"), Arg::value("'<None>'"),
                 Arg::value(std::to_string(sq)), Arg::value(std::to_string(kv_seq_block)), Arg::value("0.0"),
                 Arg::value(c), Arg::value("False"), Arg::value(scale)},
                {Arg::of(tensor({b, sq, q_heads_, dh_})), Arg::of(lse)});
      }
      return;
    }
    const Tensor go = tensor({b, q_heads_, sq, dh_}), o = tensor({b, q_heads_, sq, dh_}),
                 lse = tensor({b, q_heads_, sq, 1}, 4);
    const std::vector<Arg> grads = {Arg::of(tensor({b, q_heads_, sq, dh_})),
                                    Arg::of(tensor({b, kv_heads_, kv_seq_block, dh_})),
                                    Arg::of(tensor({b, kv_heads_, kv_seq_block, dh_}))};
    if (cudnn) {
      compute("aten::_cudnn_attention_backward", kAttentionBackward,
              {Arg::of(go), Arg::of(q), Arg::of(k), Arg::of(v), Arg::of(o), Arg::of(lse), Arg::value("'<None>'"),
               Arg::value("'<None>'"), Arg::value("'<None>'"), Arg::value("'<None>'"), Arg::value("'<None>'"),
               Arg::value(std::to_string(sq)), Arg::value(std::to_string(kv_seq_block)), Arg::value("0.0"),
               Arg::value(c), Arg::value(scale)},
              grads);
    } else {
      compute(
          "aten::_flash_attention_backward", kFlashBackward,
          {Arg::of(tensor({b, sq, q_heads_, dh_})), Arg::of(tensor({b, sq, q_heads_, dh_})),
           Arg::of(tensor({b, kv_seq_block, kv_heads_, dh_})), Arg::of(tensor({b, kv_seq_block, kv_heads_, dh_})),
           Arg::of(tensor({b, sq, q_heads_, dh_})), Arg::of(lse), Arg::value("'<None>'"), Arg::value("'<None>'"),
           Arg::value(std::to_string(sq)), Arg::value(std::to_string(kv_seq_block)), Arg::value("0.0"), Arg::value(c)},
          grads);
    }
  }

  /// Attention over the whole sequence: with context parallelism, a ring of
  /// key/value blocks (each step's block from the previous rank while this
  /// rank computes on the one it has; load-balanced causal chunks, so each
  /// step is half a block's work).
  void attention(bool backward, int layer, int chunk, int microbatch, int phase) {
    const int cp = job_.cp();
    const std::int64_t block = tokens_ / tr_.microbatch;
    if (cp == 1) {
      attention_core(backward, block, true);
      return;
    }
    const std::string& pg = group_.at("cp");
    const auto& ranks = group_ranks_.at(pg);
    const int next = ranks[static_cast<std::size_t>((me_.c + 1) % cp)];
    const int prev = ranks[static_cast<std::size_t>((me_.c + cp - 1) % cp)];
    const double kv_bytes = 2.0 * tr_.microbatch * block * kv_heads_ * dh_ * eb_;
    const double bytes = backward ? 2 * kv_bytes : kv_bytes;  // backward: keys and values, and their gradients
    (void)chunk;
    for (int i = 0; i < cp; ++i) {
      if (i > 0) wait(recv(prev, bytes, ring_tag(phase, layer, microbatch, i), pg, "cp_recv_kv"));
      if (i < cp - 1) send(next, bytes, ring_tag(phase, layer, microbatch, i + 1), pg, "cp_send_kv");
      attention_core(backward, block, true);
    }
  }

  void rope(std::int64_t heads) {
    if (m_.position != ModelSpec::Position::kRope) return;
    elementwise("aten::mul", {tensor({tokens_, heads * dh_}), tensor({tokens_ / tr_.microbatch, dh_}, 4)},
                {tensor({tokens_, heads * dh_})});
  }

  std::int64_t mlp_width(bool gate) const { return gate && m_.mlp == ModelSpec::Mlp::kSwiglu ? 2 : 1; }

  /// GeLU's tanh form as PyTorch eager runs it (Hugging Face's gelu_new):
  /// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), one kernel per op.
  void eager_gelu(std::int64_t tokens, std::int64_t width, bool backward) {
    auto one = [&](const char* op) { elementwise(op, {tensor({tokens, width})}, {tensor({tokens, width})}); };
    auto two = [&](const char* op) {
      elementwise(op, {tensor({tokens, width}), tensor({tokens, width})}, {tensor({tokens, width})});
    };
    auto in_place = [&](const char* op) { elementwise(op, {tensor({tokens, width}), tensor({tokens, width})}, {}); };
    if (!backward) {
      one("aten::mul"), one("aten::pow"), one("aten::mul"), two("aten::add"), one("aten::mul"), one("aten::tanh"),
          one("aten::add"), two("aten::mul");
      return;
    }
    two("aten::mul"), two("aten::mul"), two("aten::tanh_backward"), one("aten::mul"), one("aten::mul"),
        one("aten::pow"), one("aten::mul"), two("aten::mul"), in_place("aten::add_"), one("aten::mul"),
        in_place("aten::add_");
  }

  void activation(std::int64_t tokens, std::int64_t width, bool backward) {
    const bool swiglu = m_.mlp == ModelSpec::Mlp::kSwiglu;
    if (eager_) {
      if (!swiglu) return eager_gelu(tokens, width, backward);
      // SiLU of the gate, times the up projection (and their gradients).
      if (!backward) {
        elementwise("aten::silu", {tensor({tokens, width})}, {tensor({tokens, width})});
        elementwise("aten::mul", {tensor({tokens, width}), tensor({tokens, width})}, {tensor({tokens, width})});
      } else {
        elementwise("aten::mul", {tensor({tokens, width}), tensor({tokens, width})}, {tensor({tokens, width})});
        elementwise("aten::mul", {tensor({tokens, width}), tensor({tokens, width})}, {tensor({tokens, width})});
        elementwise("aten::silu_backward", {tensor({tokens, width}), tensor({tokens, width})},
                    {tensor({tokens, width})});
      }
      return;
    }
    if (!backward) {
      // Fused bias-GeLU, or SwiGLU: reads FC1's output, writes the activation.
      elementwise(swiglu ? "aten::mul" : "aten::gelu", {tensor({tokens, width * (swiglu ? 2 : 1)})},
                  {tensor({tokens, width})});
    } else {
      elementwise(swiglu ? "aten::silu_backward" : "aten::gelu_backward",
                  {tensor({tokens, width}), tensor({tokens, width * (swiglu ? 2 : 1)})},
                  {tensor({tokens, width * (swiglu ? 2 : 1)})});
    }
  }

  void dense_mlp(bool backward) {
    const std::int64_t f = m_.ffn() / static_cast<std::uint32_t>(t_), gate = mlp_width(true);
    if (!backward) {
      norm(split_tokens());
      enter_block();
      const Tensor x = tensor({tokens_, h_});
      gemm(x, h_, f * gate, m_.bias);
      activation(tokens_, f, false);
      gemm(tensor({tokens_, f}), f, h_, m_.bias);
      leave_block();
      residual(split_tokens());
      return;
    }
    backward_leave_block();
    gemm_backward(tokens_, f, h_, m_.bias);
    activation(tokens_, f, true);
    wait(backward_regather());
    gemm_backward(tokens_, h_, f * gate, m_.bias);
    backward_enter_block();
    norm_backward(split_tokens());
    residual(split_tokens(), true);
  }

  void moe_mlp(bool backward) {
    const std::int64_t mt = split_tokens(), k = m_.top_k, e = m_.experts, ep = job_.ep();
    const std::int64_t local = e / ep, routed = mt * k;
    // Balanced routing: the ep group's routed tokens spread evenly over the
    // experts (a capacity factor below 1 drops the excess).
    double per_expert = static_cast<double>(routed) * ep / e;
    if (m_.capacity_factor > 0 && m_.capacity_factor < 1) per_expert *= m_.capacity_factor;
    const std::int64_t te = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(per_expert)));
    const std::int64_t f = m_.expert_ffn(), gate = mlp_width(true);
    const double a2a = static_cast<double>(routed) * h_ * eb_;
    auto experts_gemm = [&](std::int64_t kk, std::int64_t nn, bool bwd) {
      if (!bwd) {
        if (local == 1) {
          gemm(tensor({te, kk}), kk, nn, false);
        } else {
          compute("aten::bmm", kBmm, {Arg::of(tensor({local, te, kk})), Arg::of(tensor({local, kk, nn}))},
                  {Arg::of(tensor({local, te, nn}))});
        }
        return;
      }
      if (local == 1) {
        gemm_backward(te, kk, nn, false);
        return;
      }
      compute("aten::bmm", kBmm, {Arg::of(tensor({local, te, nn})), Arg::of(tensor({local, nn, kk}))},
              {Arg::of(tensor({local, te, kk}))});
      compute("aten::bmm", kBmm, {Arg::of(tensor({local, kk, te})), Arg::of(tensor({local, te, nn}))},
              {Arg::of(tensor({local, kk, nn}))});
    };
    const std::int64_t shared = static_cast<std::int64_t>(m_.shared_experts) * f;
    if (!backward) {
      norm(mt);
      gemm(tensor({mt, h_}), h_, e, false);  // the router
      elementwise("aten::_softmax", {tensor({mt, e})}, {tensor({mt, e})});
      elementwise("aten::index_select", {tensor({mt, h_}), tensor({routed}, 8)}, {tensor({routed, h_})});  // permute
      if (ep > 1) blocking(ChakraProtoMsg::ALL_TO_ALL, a2a, "ep", "all_to_all_dispatch");
      experts_gemm(h_, f * gate, false);
      activation(local * te, f, false);
      experts_gemm(f, h_, false);
      if (ep > 1) blocking(ChakraProtoMsg::ALL_TO_ALL, a2a, "ep", "all_to_all_combine");
      elementwise("aten::index_add_", {tensor({mt, h_}), tensor({routed}, 8), tensor({routed, h_})},
                  {tensor({mt, h_})});
      if (shared > 0) {
        gemm(tensor({mt, h_}), h_, shared * gate, false);
        activation(mt, shared, false);
        gemm(tensor({mt, shared}), shared, h_, false);
      }
      residual(mt);
      return;
    }
    if (shared > 0) {
      gemm_backward(mt, shared, h_, false);
      activation(mt, shared, true);
      gemm_backward(mt, h_, shared * gate, false);
    }
    elementwise("aten::index_select", {tensor({mt, h_}), tensor({routed}, 8)}, {tensor({routed, h_})});
    if (ep > 1) blocking(ChakraProtoMsg::ALL_TO_ALL, a2a, "ep", "all_to_all_combine_grad");
    experts_gemm(f, h_, true);
    activation(local * te, f, true);
    experts_gemm(h_, f * gate, true);
    if (ep > 1) blocking(ChakraProtoMsg::ALL_TO_ALL, a2a, "ep", "all_to_all_dispatch_grad");
    elementwise("aten::index_add_", {tensor({mt, h_}), tensor({routed}, 8), tensor({routed, h_})}, {tensor({mt, h_})});
    elementwise("aten::_softmax_backward_data", {tensor({mt, e}), tensor({mt, e})}, {tensor({mt, e})});
    gemm_backward(mt, h_, e, false);
    norm_backward(mt);
    residual(mt, true);
  }

  void attention_block(bool backward, int layer, int chunk, int microbatch, int phase) {
    const std::int64_t q = q_heads_ * dh_, kv = kv_heads_ * dh_;
    if (!backward) {
      norm(split_tokens());
      enter_block();
      gemm(tensor({tokens_, h_}), h_, q + 2 * kv, m_.bias);
      rope(q_heads_ + kv_heads_);
      if (eager_) {
        // The key/value cache (use_cache): each concatenated onto an empty past.
        const std::int64_t b = tr_.microbatch, sq = tokens_ / b;
        for (int i = 0; i < 2; ++i) {
          compute("aten::cat", "aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
                  {Arg{{tensor({0}), tensor({b, kv_heads_, sq, dh_})}, true, ""}, Arg::value("-2")},
                  {Arg::of(tensor({b, kv_heads_, sq, dh_}))});
        }
      }
      attention(false, layer, chunk, microbatch, phase);
      gemm(tensor({tokens_, q}), q, h_, m_.bias);
      leave_block();
      residual(split_tokens());
      return;
    }
    backward_leave_block();
    gemm_backward(tokens_, q, h_, m_.bias);
    attention(true, layer, chunk, microbatch, phase);
    rope(q_heads_ + kv_heads_);
    if (eager_) {
      // The heads' gradients transposed back ([b, s, heads, d]) and joined
      // into the QKV projection's.
      const std::int64_t b = tr_.microbatch, sq = tokens_ / b;
      for (int i = 0; i < 2; ++i) {
        compute(
            "aten::copy_", "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
            {Arg::of(tensor({b, sq, kv_heads_, dh_})), Arg::of(tensor({b, sq, kv_heads_, dh_})), Arg::value("False")},
            {Arg::of(tensor({b, sq, kv_heads_, dh_}))});
      }
      compute("aten::cat", "aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
              {Arg{{tensor({b, sq, q}), tensor({b, sq, kv}), tensor({b, sq, kv})}, true, ""}, Arg::value("2")},
              {Arg::of(tensor({b, sq, q + 2 * kv}))});
    }
    wait(backward_regather());
    gemm_backward(tokens_, h_, q + 2 * kv, m_.bias);
    backward_enter_block();
    norm_backward(split_tokens());
    residual(split_tokens(), true);
  }

  void layer_forward(int layer, int chunk, int microbatch, int phase) {
    zero3_gather(layer);
    attention_block(false, layer, chunk, microbatch, phase);
    if (m_.moe_layer(static_cast<std::uint32_t>(layer))) {
      moe_mlp(false);
    } else {
      dense_mlp(false);
    }
  }
  void layer_backward(int layer, int chunk, int microbatch) {
    zero3_gather(layer);
    if (m_.moe_layer(static_cast<std::uint32_t>(layer))) {
      moe_mlp(true);
    } else {
      dense_mlp(true);
    }
    attention_block(true, layer, chunk, microbatch, 2);
    if (tr_.zero == 3) {
      const auto lp = job_.layer_params(static_cast<std::uint32_t>(layer));
      grad_ids_.push_back(collective(ChakraProtoMsg::REDUCE_SCATTER, lp.dense * tr_.grad_bytes(), "dp", {last_compute_},
                                     "reduce_scatter_grads"));
      if (lp.experts > 0) {
        grad_ids_.push_back(collective(ChakraProtoMsg::REDUCE_SCATTER, lp.experts * tr_.grad_bytes(), "edp",
                                       {last_compute_}, "reduce_scatter_expert_grads"));
      }
    }
  }
  /// ZeRO-3: the layer's weights gathered before it runs (issued one layer
  /// ahead, so it overlaps the layer before).
  void zero3_gather(int layer) {
    if (tr_.zero != 3) return;
    const auto lp = job_.layer_params(static_cast<std::uint32_t>(layer));
    const double shard = static_cast<double>(job_.dp()) * job_.cp();
    std::vector<std::uint64_t> after;
    if (prefetch_from_ != kNone) after.push_back(prefetch_from_);
    wait(collective(ChakraProtoMsg::ALL_GATHER, lp.dense * eb_ / shard, "dp", after, "all_gather_weights"));
    if (lp.experts > 0) {
      const double eshard = static_cast<double>(std::max(1, job_.dp() / job_.ep())) * job_.cp();
      wait(
          collective(ChakraProtoMsg::ALL_GATHER, lp.experts * eb_ / eshard, "edp", after, "all_gather_expert_weights"));
    }
    prefetch_from_ = last_compute_;
  }

  void embedding_forward() {
    const std::int64_t b = tr_.microbatch, s = tokens_ / b,
                       vocab = job_.vocab_padded() / static_cast<std::uint32_t>(t_);
    if (eager_) {  // lookups as gathers, the positions' added
      compute("aten::gather", nullptr,
              {Arg::of(tensor({vocab, h_})), Arg::value("0"), Arg::of(tensor({tokens_, h_}, 8))},
              {Arg::of(tensor({tokens_, h_}))});
      if (m_.position == ModelSpec::Position::kLearned) {
        compute("aten::gather", nullptr, {Arg::of(tensor({s, h_})), Arg::value("0"), Arg::of(tensor({s, h_}, 8))},
                {Arg::of(tensor({s, h_}))});
        elementwise("aten::add", {tensor({b, s, h_}), tensor({1, s, h_})}, {tensor({b, s, h_})});
      }
      leave_block();
      return;
    }
    compute("aten::embedding", nullptr, {Arg::of(tensor({vocab, h_})), Arg::of(tensor({b, s}, 8))},
            {Arg::of(tensor({b, s, h_}))});
    if (m_.position == ModelSpec::Position::kLearned) {
      compute("aten::embedding", nullptr,
              {Arg::of(tensor({static_cast<std::int64_t>(m_.seq), h_})), Arg::of(tensor({s}, 8))},
              {Arg::of(tensor({s, h_}))});
      elementwise("aten::add", {tensor({b, s, h_}), tensor({s, h_})}, {tensor({b, s, h_})});
    }
    leave_block();  // the vocabulary-parallel lookups summed (scattered with sp)
  }
  void embedding_backward() {
    const std::int64_t b = tr_.microbatch, s = tokens_ / b,
                       vocab = job_.vocab_padded() / static_cast<std::uint32_t>(t_);
    backward_leave_block();
    if (eager_ && m_.position == ModelSpec::Position::kLearned) {
      elementwise("aten::sum", {tensor({b, s, h_})}, {tensor({1, s, h_})});  // the positions' gradient over the batch
    }
    compute("aten::embedding_dense_backward", nullptr,
            {Arg::of(tensor({b, s, h_})), Arg::of(tensor({b, s}, 8)), Arg::value(std::to_string(vocab)),
             Arg::value("-1"), Arg::value("False")},
            {Arg::of(tensor({vocab, h_}))});
    if (m_.position == ModelSpec::Position::kLearned) {
      compute("aten::embedding_dense_backward", nullptr,
              {Arg::of(tensor({s, h_})), Arg::of(tensor({s}, 8)), Arg::value(std::to_string(m_.seq)), Arg::value("-1"),
               Arg::value("False")},
              {Arg::of(tensor({static_cast<std::int64_t>(m_.seq), h_}))});
    }
    if (eager_ && m_.tied_embeddings) {
      // The LM head's gradient and the lookup's, added into the tied weight's.
      elementwise("aten::add", {tensor({vocab, h_}), tensor({vocab, h_})}, {tensor({vocab, h_})});
    }
  }
  /// A cast: eager writes it as copy_ into a new tensor, Megatron as _to_copy.
  void copy_cast(const Tensor& from, const Tensor& to) {
    if (eager_) {
      compute("aten::copy_", "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
              {Arg::of(to), Arg::of(from), Arg::value("False")}, {Arg::of(to)});
    } else {
      compute("aten::_to_copy", nullptr, {Arg::of(from)}, {Arg::of(to)});
    }
  }

  void head_forward() {
    const std::int64_t vocab = job_.vocab_padded() / static_cast<std::uint32_t>(t_);
    norm(split_tokens());
    enter_block();
    gemm(tensor({tokens_, h_}), h_, vocab, false);
    // Cross entropy over the vocabulary's split (fp32): the maximum, the sum
    // of exponentials and the target's logit each summed over the tp ranks.
    const double small = static_cast<double>(tokens_) * 4;
    copy_cast(tensor({tokens_, vocab}), tensor({tokens_, vocab}, 4));
    if (t_ > 1) blocking(ChakraProtoMsg::ALL_REDUCE, small, "tp", "all_reduce_logits_max");
    compute("aten::_log_softmax", "aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
            {Arg::of(tensor({tokens_, vocab}, 4)), Arg::value("1"), Arg::value("False")},
            {Arg::of(tensor({tokens_, vocab}, 4))});
    if (t_ > 1) blocking(ChakraProtoMsg::ALL_REDUCE, small, "tp", "all_reduce_logits_sum");
    compute("aten::nll_loss_forward", nullptr,
            {Arg::of(tensor({tokens_, vocab}, 4)), Arg::of(tensor({tokens_}, 8)), Arg::value("'<None>'"),
             Arg::value("1"), Arg::value("-100")},
            {Arg::of(tensor({}, 4)), Arg::of(tensor({}, 4))});
    if (t_ > 1) blocking(ChakraProtoMsg::ALL_REDUCE, small, "tp", "all_reduce_target_logit");
  }
  void head_backward() {
    const std::int64_t vocab = job_.vocab_padded() / static_cast<std::uint32_t>(t_);
    if (eager_) {  // the logits' gradient zeroed before the loss scatters into it
      compute("aten::fill_", nullptr, {Arg::of(tensor({tokens_, vocab}, 4)), Arg::value("0")},
              {Arg::of(tensor({tokens_, vocab}, 4))});
    }
    compute("aten::nll_loss_backward", nullptr,
            {Arg::of(tensor({}, 4)), Arg::of(tensor({tokens_, vocab}, 4)), Arg::of(tensor({tokens_}, 8)),
             Arg::value("'<None>'"), Arg::value("1"), Arg::value("-100"), Arg::of(tensor({}, 4))},
            {Arg::of(tensor({tokens_, vocab}, 4))});
    compute(
        "aten::_log_softmax_backward_data", nullptr,
        {Arg::of(tensor({tokens_, vocab}, 4)), Arg::of(tensor({tokens_, vocab}, 4)), Arg::value("1"), Arg::value("6")},
        {Arg::of(tensor({tokens_, vocab}, 4))});
    copy_cast(tensor({tokens_, vocab}, 4), tensor({tokens_, vocab}));
    wait(backward_regather());
    gemm_backward(tokens_, h_, vocab, false);
    backward_enter_block();
    norm_backward(split_tokens());
  }

  // ---- the pipeline ----
  int stage_rank(int stage) const { return job_.rank_of({me_.t, me_.c, me_.d, stage}); }
  double pipeline_bytes() const {
    const double whole = static_cast<double>(tokens_) * h_ * eb_;
    return (sp_ || (tr_.scatter_gather && t_ > 1)) ? whole / t_ : whole;
  }
  /// A received activation (or gradient) that scatter/gather split over the
  /// tp ranks, gathered back.
  void pipeline_gather() {
    if (t_ > 1 && !sp_ && tr_.scatter_gather) {
      blocking(ChakraProtoMsg::ALL_GATHER, pipeline_bytes(), "ppg", "all_gather_pipeline");
    }
  }

  void forward_unit(int chunk, int microbatch) {
    const int g = chunk * job_.pp() + me_.p, last = job_.vp() * job_.pp() - 1;
    wait(pending_send_);
    pending_send_ = kNone;
    if (g > 0) {
      wait(recv(stage_rank((g - 1) % job_.pp()), pipeline_bytes(), pipeline_tag(true, g - 1, microbatch), "pp",
                "pp_recv_activation"));
      pipeline_gather();
    } else {
      embedding_forward();
    }
    for (int i = 0; i < job_.chunk_layers(g); ++i) {
      layer_forward(job_.first_layer(g) + i, chunk, microbatch, 0);
    }
    if (g == last) {
      head_forward();
    } else {
      pending_send_ = send(stage_rank((g + 1) % job_.pp()), pipeline_bytes(), pipeline_tag(true, g, microbatch), "pp",
                           "pp_send_activation");
    }
  }

  void backward_unit(int chunk, int microbatch) {
    const int g = chunk * job_.pp() + me_.p, last = job_.vp() * job_.pp() - 1;
    wait(pending_send_);
    pending_send_ = kNone;
    if (g == last) {
      head_backward();
    } else {
      wait(recv(stage_rank((g + 1) % job_.pp()), pipeline_bytes(), pipeline_tag(false, g + 1, microbatch), "pp",
                "pp_recv_gradient"));
      pipeline_gather();
    }
    const bool full = tr_.recompute == TrainingSpec::Recompute::kFull;
    const bool last_microbatch = microbatch == job_.microbatches() - 1;
    for (int i = job_.chunk_layers(g) - 1; i >= 0; --i) {
      const int layer = job_.first_layer(g) + i;
      if (full) layer_forward(layer, chunk, microbatch, 1);
      layer_backward(layer, chunk, microbatch);
      if (last_microbatch && tr_.zero < 3) {
        const auto lp = job_.layer_params(static_cast<std::uint32_t>(layer));
        bucket(lp.dense, lp.experts);
      }
    }
    if (g == 0) embedding_backward();
    if (last_microbatch && tr_.zero < 3) {
      // The embedding (stage 0) and the LM head and final norm (the last
      // stage) join the chunk's last bucket; the chunk's buckets all go now.
      if (g == 0 || (g == last && me_.p != 0)) bucket(extra_dense_, 0);
      flush_buckets();
    }
    if (g > 0) {
      pending_send_ = send(stage_rank((g - 1) % job_.pp()), pipeline_bytes(), pipeline_tag(false, g, microbatch), "pp",
                           "pp_send_gradient");
    }
  }

  // ---- data parallel ----
  void bucket(double dense, double experts) {
    bucket_dense_ += dense;
    bucket_experts_ += experts;
    if (tr_.dp_overlap && bucket_dense_ + bucket_experts_ >= tr_.bucket_params) flush_buckets();
  }
  void flush_buckets() {
    if (!tr_.dp_overlap && !end_of_step_) return;  // all after the backward pass
    const ChakraProtoMsg::CollectiveCommType type =
        tr_.zero == 0 ? ChakraProtoMsg::ALL_REDUCE : ChakraProtoMsg::REDUCE_SCATTER;
    if (bucket_dense_ > 0) {
      grad_ids_.push_back(collective(type, bucket_dense_ * tr_.grad_bytes(), "dp", {last_compute_},
                                     tr_.zero == 0 ? "all_reduce_grads" : "reduce_scatter_grads"));
    }
    if (bucket_experts_ > 0) {
      grad_ids_.push_back(collective(type, bucket_experts_ * tr_.grad_bytes(), "edp", {last_compute_},
                                     tr_.zero == 0 ? "all_reduce_expert_grads" : "reduce_scatter_expert_grads"));
    }
    bucket_dense_ = bucket_experts_ = 0;
  }

  /// Adam over the rank's `n` weights (its shard under ZeRO): one fused
  /// kernel, then the fp32 master weights cast back (Megatron); or the
  /// eight foreach kernels of PyTorch's AdamW (eager).
  void optimizer(std::int64_t n) {
    const std::uint32_t state = tr_.master_weights ? 4 : eb_;
    const Tensor p = tensor({n}, state), m = tensor({n}, state), v = tensor({n}, state);
    const Tensor g = tensor({n}, tr_.grad_bytes());
    auto list = [](const Tensor& t) { return Arg{{t}, true, ""}; };
    if (!eager_) {
      compute("aten::_fused_adam_", nullptr, {list(p), list(g), list(m), list(v)},
              {list(tensor({n}, state)), list(tensor({n}, state)), list(tensor({n}, state))});
      if (tr_.master_weights) {
        compute("aten::copy_", nullptr, {Arg::of(tensor({n})), Arg::of(tensor({n}, 4))}, {Arg::of(tensor({n}))});
      }
      return;
    }
    const Tensor s = tensor({n}, state);
    compute("aten::_foreach_mul_", nullptr, {list(p), Arg::value("0.99")}, {});  // weight decay
    compute("aten::_foreach_lerp_", nullptr, {list(m), list(g), Arg::value("0.1")}, {});
    compute("aten::_foreach_mul_", nullptr, {list(v), Arg::value("0.999")}, {});
    compute("aten::_foreach_addcmul_", nullptr, {list(v), list(g), list(g), Arg::value("0.001")}, {});
    compute("aten::_foreach_sqrt", nullptr, {list(v)}, {list(s)});
    compute("aten::_foreach_div_", nullptr, {list(s), Arg::value("[1.0]")}, {});
    compute("aten::_foreach_add_", nullptr, {list(s), Arg::value("1e-08")}, {});
    compute("aten::_foreach_addcdiv_", nullptr, {list(p), list(m), list(s), Arg::value("[-0.001]")}, {});
  }

  void end_of_step() override {
    end_of_step_ = true;
    if (!tr_.dp_overlap) {
      // One bucket at a time after the whole backward pass.
      const auto [dense, experts] = job_.local_params(rank_);
      double left_dense = dense, left_experts = experts;
      while (left_dense + left_experts > 0) {
        const double take_dense = std::min(left_dense, tr_.bucket_params);
        const double take_experts = std::min(left_experts, std::max(0.0, tr_.bucket_params - take_dense));
        bucket_dense_ = take_dense;
        bucket_experts_ = take_experts;
        flush_buckets();
        left_dense -= take_dense;
        left_experts -= take_experts;
      }
    }
    flush_buckets();
    end_of_step_ = false;
    const auto [dense, experts] = job_.local_params(rank_);
    if (tr_.zero == 3 && extra_dense_ > 0) {
      // ZeRO-3 keeps the embedding, LM head and final norm whole; their
      // gradients are scattered once per step.
      grad_ids_.push_back(collective(ChakraProtoMsg::REDUCE_SCATTER, extra_dense_ * tr_.grad_bytes(), "dp",
                                     {last_compute_}, "reduce_scatter_grads"));
    }
    if (job_.pp() > 1 && m_.tied_embeddings && (me_.p == 0 || me_.p == job_.pp() - 1)) {
      const double table = static_cast<double>(job_.vocab_padded()) / t_ * h_;
      grad_ids_.push_back(collective(ChakraProtoMsg::ALL_REDUCE, table * tr_.grad_bytes(), "embd", {last_compute_},
                                     "all_reduce_embedding_grads"));
    }
    for (auto id : grad_ids_) wait(id);
    grad_ids_.clear();
    const double dense_shard = tr_.zero >= 1 ? dense / (static_cast<double>(job_.dp()) * job_.cp()) : dense;
    const double expert_shard =
        tr_.zero >= 1 ? experts / (static_cast<double>(std::max(1, job_.dp() / job_.ep())) * job_.cp()) : experts;
    const auto n = static_cast<std::int64_t>(std::llround(dense_shard + expert_shard));
    if (n > 0) optimizer(n);
    if (tr_.zero >= 1 && tr_.zero < 3) {
      // The updated weights gathered back; the next step waits for them.
      wait(collective(ChakraProtoMsg::ALL_GATHER, dense_shard * eb_, "dp", {last_compute_}, "all_gather_weights"));
      if (experts > 0) {
        wait(collective(ChakraProtoMsg::ALL_GATHER, expert_shard * eb_, "edp", {last_compute_},
                        "all_gather_expert_weights"));
      }
    }
    if (last_step()) {
      // The step's last node: what the run waits on. A wait left for a next
      // step would otherwise not be in the trace at all.
      if (!waits_.empty()) elementwise("aten::fill_", {tensor({1})}, {tensor({1})});
    }
  }

  TrainingJob job_;
  const TrainingSpec& tr_;
  const ModelSpec& m_;
  int rank_;
  RankCoords me_;
  int t_ = 1;
  std::int64_t tokens_ = 0, h_ = 0, q_heads_ = 0, kv_heads_ = 0, dh_ = 0;
  bool sp_ = false;
  bool eager_ = false;

  std::uint64_t pending_send_ = kNone;
  std::uint64_t prefetch_from_ = kNone;
  std::vector<std::uint64_t> grad_ids_;
  double bucket_dense_ = 0, bucket_experts_ = 0;
  double extra_dense_ = 0;  // the embedding, LM head and final norm this rank holds
  bool end_of_step_ = false;
};

}  // namespace

std::unique_ptr<traces::NodeSource> make_resnet_source(const TrainingJob& job, int rank,
                                                       OpIoForm form);  // resnet_nodes.cpp

std::unique_ptr<traces::NodeSource> TrainingJob::source(int rank, OpIoForm form) const {
  if (resnet()) return make_resnet_source(*this, rank, form);
  return model_nodes::counted_source<RankNodes>(*this, rank, form);
}

}  // namespace fabricsim
