#include "traces/workload/kernel_work.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <unordered_set>

namespace fabricsim::traces {

namespace {

std::string base_op(const std::string& op) {
  return op.substr(0, op.find('.'));
}

bool one_of(const std::string& op, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (op == n) return true;
  }
  return false;
}

/// The parameter names of an op schema, in order: "aten::mm(Tensor self,
/// Tensor mat2) -> Tensor" -> {"self", "mat2"}.
std::vector<std::string> schema_params(std::string_view schema) {
  std::vector<std::string> names;
  const std::size_t open = schema.find('(');
  if (open == std::string_view::npos) return names;
  int depth = 0;
  std::string cur;
  auto finish = [&] {
    std::string decl = cur.substr(0, cur.find('='));
    while (!decl.empty() && std::isspace(static_cast<unsigned char>(decl.back()))) decl.pop_back();
    const std::size_t space = decl.find_last_of(" ");
    if (!decl.empty() && decl != "*") names.push_back(space == std::string::npos ? decl : decl.substr(space + 1));
    cur.clear();
  };
  for (std::size_t i = open + 1; i < schema.size(); ++i) {
    const char c = schema[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ')') {
      if (depth == 0) {
        finish();
        break;
      }
      --depth;
    }
    if (c == ',' && depth == 0) {
      finish();
      continue;
    }
    cur += c;
  }
  return names;
}

const TensorArg* single(const std::vector<OpArg>& args, std::size_t i) {
  return i < args.size() && args[i].is_tensor ? &args[i].tensors.front() : nullptr;
}

std::uint64_t product(const std::vector<std::int64_t>& s, std::size_t from, std::size_t to) {
  std::uint64_t p = 1;
  for (std::size_t i = from; i < to && i < s.size(); ++i) p *= static_cast<std::uint64_t>(s[i]);
  return p;
}

/// Reads and writes of an op through memory, each tensor once: an in-place
/// op (name ending in '_') writes its first input when the trace lists no
/// output; copy_/fill_/zero_ only write theirs.
double memory_bytes(const std::string& op, const std::vector<OpArg>& in, const std::vector<OpArg>& out) {
  std::unordered_set<std::int64_t> seen;
  double bytes = 0;
  auto add = [&](const OpArg& a) {
    for (const TensorArg& t : a.tensors) {
      if (seen.insert(t.id).second) bytes += static_cast<double>(t.bytes());
    }
  };
  const bool write_only = one_of(op, {"aten::copy_", "aten::fill_", "aten::zero_"});
  for (std::size_t i = write_only ? 1 : 0; i < in.size(); ++i) add(in[i]);
  bool writes = false;
  for (const OpArg& a : out) writes |= !a.tensors.empty();
  if (writes || write_only) {
    seen.clear();
    for (const OpArg& a : out) add(a);
    if (!writes && !in.empty()) add(in[0]);
  } else if (!op.empty() && op.back() == '_' && !in.empty()) {
    for (const TensorArg& t : in[0].tensors) bytes += static_cast<double>(t.bytes());
  }
  return bytes;
}

std::optional<KernelWork> gemm(const std::string& op, const std::vector<OpArg>& in) {
  std::size_t a = 0, b = 1;
  if (one_of(op, {"aten::addmm", "aten::baddbmm", "aten::addbmm"})) a = 1, b = 2;
  const TensorArg* A = single(in, a);
  const TensorArg* B = single(in, b);
  if (!A || !B || A->shape.empty() || B->shape.empty()) return std::nullopt;
  KernelWork w;
  const auto& sa = A->shape;
  const auto& sb = B->shape;
  if (op == "aten::linear") {  // x[..., k] W[n, k]
    if (sb.size() != 2) return std::nullopt;
    w.m = product(sa, 0, sa.size() - 1), w.k = static_cast<std::uint64_t>(sa.back()),
    w.n = static_cast<std::uint64_t>(sb[0]);
  } else if (sa.size() >= 3 && sb.size() >= 3) {  // batched: [b.., m, k] [b.., k, n]
    w.batch = product(sa, 0, sa.size() - 2);
    w.m = static_cast<std::uint64_t>(sa[sa.size() - 2]), w.k = static_cast<std::uint64_t>(sa.back());
    w.n = static_cast<std::uint64_t>(sb.back());
  } else if (sa.size() >= 2 && sb.size() == 2) {  // [.., m, k] [k, n]: the leading dims fold into m
    w.m = product(sa, 0, sa.size() - 1), w.k = static_cast<std::uint64_t>(sa.back()),
    w.n = static_cast<std::uint64_t>(sb[1]);
  } else {
    return std::nullopt;
  }
  w.flops = 2.0 * static_cast<double>(w.batch) * static_cast<double>(w.m) * static_cast<double>(w.n) *
            static_cast<double>(w.k);
  // Tensor cores need every leading dimension on 16 bytes; otherwise cuBLAS
  // runs an unaligned kernel (an odd vocabulary: 50257).
  const std::uint64_t e = A->element_bytes;
  const bool aligned = (w.m * e) % 16 == 0 && (w.n * e) % 16 == 0 && (w.k * e) % 16 == 0;
  w.cls = aligned ? KernelClass::kGemm : KernelClass::kGemmUnaligned;
  return w;
}

/// A convolution as the implicit GEMM cuDNN runs: one row per output pixel,
/// one column per output channel, weight[1:] (C/groups x kernel) deep.
std::optional<KernelWork> convolution(const std::string& op, const std::vector<OpArg>& in,
                                      const std::vector<OpArg>& out) {
  const bool backward = op == "aten::convolution_backward";
  // convolution(input, weight, ...); convolution_backward(grad_output, input, weight, ...)
  const TensorArg* weight = single(in, backward ? 2 : 1);
  const TensorArg* result = backward ? single(in, 0) : (out.empty() ? nullptr : single(out, 0));
  if (!weight || !result || weight->shape.size() < 3 || result->shape.size() < 3 || weight->shape[0] <= 0) {
    return std::nullopt;
  }
  KernelWork w;
  w.n = static_cast<std::uint64_t>(weight->shape[0]);
  w.k = product(weight->shape, 1, weight->shape.size());
  w.m = product(result->shape, 0, result->shape.size()) / w.n;
  w.batch = backward ? 2 : 1;  // the data gradient and the weight gradient, each a forward's size
  w.flops = 2.0 * static_cast<double>(w.batch) * static_cast<double>(w.m) * static_cast<double>(w.n) *
            static_cast<double>(w.k);
  const std::uint64_t e = weight->element_bytes;
  w.cls = (w.n * e) % 16 == 0 && (w.k * e) % 16 == 0 ? KernelClass::kGemm : KernelClass::kGemmUnaligned;
  return w;
}

std::optional<KernelWork> attention(const std::string& op, std::string_view schema, const std::vector<OpArg>& in) {
  const bool backward = op.find("backward") != std::string::npos;
  const bool cudnn = op.find("cudnn") != std::string::npos;
  // The internal flash/efficient kernels take [batch, seq, heads, dim]; the
  // scaled_dot_product_* ops and cuDNN's, [batch, heads, seq, dim].
  const bool seq_major = op == "aten::_flash_attention_forward" || op == "aten::_flash_attention_backward" ||
                         op == "aten::_efficient_attention_forward" || op == "aten::_efficient_attention_backward";
  const auto names = schema_params(schema);
  auto index_of = [&](const char* name) -> std::optional<std::size_t> {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) return std::nullopt;
    return static_cast<std::size_t>(it - names.begin());
  };
  const auto qi = index_of("query"), ki = index_of("key");
  const TensorArg* q = single(in, qi.value_or(backward ? 1 : 0));
  const TensorArg* k = single(in, ki.value_or(backward ? 2 : 1));
  if (!q || !k || q->shape.size() != 4 || k->shape.size() != 4) return std::nullopt;
  const auto& s = q->shape;
  const double batch = static_cast<double>(s[0]);
  const double heads = static_cast<double>(seq_major ? s[2] : s[1]);
  const double sq = static_cast<double>(seq_major ? s[1] : s[2]);
  const double sk = static_cast<double>(seq_major ? k->shape[1] : k->shape[2]);
  const double d = static_cast<double>(s[3]);
  bool causal = false;
  if (const auto ci = index_of("is_causal"); ci && *ci < in.size()) causal = in[*ci].scalar == "True";
  KernelWork w;
  // Two matmuls forward (QK^T, PV), five backward: 2.5 x the forward.
  w.flops = 4 * batch * heads * sq * sk * d * (causal ? 0.5 : 1) * (backward ? 2.5 : 1);
  w.cls = backward ? (cudnn ? KernelClass::kAttentionBackward : KernelClass::kFlashAttentionBackward)
                   : (cudnn ? KernelClass::kAttentionForward : KernelClass::kFlashAttentionForward);
  return w;
}

std::optional<KernelClass> memory_class(const std::string& op) {
  if (one_of(op, {"aten::native_layer_norm", "aten::_fused_rms_norm", "aten::native_group_norm",
                  "aten::native_batch_norm", "aten::_softmax", "aten::_log_softmax", "aten::_safe_softmax"})) {
    return KernelClass::kNormForward;
  }
  if (one_of(op, {"aten::native_layer_norm_backward", "aten::_fused_rms_norm_backward",
                  "aten::native_group_norm_backward", "aten::native_batch_norm_backward",
                  "aten::_softmax_backward_data", "aten::_log_softmax_backward_data"})) {
    return KernelClass::kNormBackward;
  }
  if (one_of(op, {"aten::copy_", "aten::cat", "aten::clone", "aten::_to_copy", "aten::stack"}))
    return KernelClass::kCopy;
  if (op.rfind("aten::_foreach_", 0) == 0 || op.rfind("aten::_fused_adam", 0) == 0) return KernelClass::kElementwise;
  static const std::unordered_set<std::string> elementwise = {"aten::add",
                                                              "aten::add_",
                                                              "aten::sub",
                                                              "aten::sub_",
                                                              "aten::mul",
                                                              "aten::mul_",
                                                              "aten::div",
                                                              "aten::div_",
                                                              "aten::pow",
                                                              "aten::pow_",
                                                              "aten::neg",
                                                              "aten::abs",
                                                              "aten::exp",
                                                              "aten::log",
                                                              "aten::sqrt",
                                                              "aten::rsqrt",
                                                              "aten::tanh",
                                                              "aten::tanh_backward",
                                                              "aten::gelu",
                                                              "aten::gelu_backward",
                                                              "aten::silu",
                                                              "aten::silu_backward",
                                                              "aten::relu",
                                                              "aten::relu_",
                                                              "aten::threshold_backward",
                                                              "aten::sigmoid",
                                                              "aten::sigmoid_backward",
                                                              "aten::clamp",
                                                              "aten::clamp_",
                                                              "aten::where",
                                                              "aten::masked_fill",
                                                              "aten::masked_fill_",
                                                              "aten::fill_",
                                                              "aten::zero_",
                                                              "aten::addcmul",
                                                              "aten::addcmul_",
                                                              "aten::addcdiv",
                                                              "aten::addcdiv_",
                                                              "aten::lerp",
                                                              "aten::lerp_",
                                                              "aten::sum",
                                                              "aten::mean",
                                                              "aten::amax",
                                                              "aten::max",
                                                              "aten::min",
                                                              "aten::linalg_vector_norm",
                                                              "aten::embedding",
                                                              "aten::embedding_dense_backward",
                                                              "aten::max_pool2d_with_indices",
                                                              "aten::max_pool2d_with_indices_backward",
                                                              "aten::index_select",
                                                              "aten::gather",
                                                              "aten::scatter",
                                                              "aten::scatter_add",
                                                              "aten::index_add_",
                                                              "aten::nll_loss_forward",
                                                              "aten::nll_loss_backward",
                                                              "aten::arange",
                                                              "aten::native_dropout",
                                                              "aten::native_dropout_backward",
                                                              "aten::mse_loss",
                                                              "aten::mse_loss_backward",
                                                              "aten::ones_like",
                                                              "aten::zeros_like",
                                                              "aten::eq",
                                                              "aten::ne",
                                                              "aten::lt",
                                                              "aten::gt",
                                                              "aten::ge",
                                                              "aten::le"};
  if (elementwise.count(op)) return KernelClass::kElementwise;
  return std::nullopt;
}

}  // namespace

std::string op_name(std::string_view op_schema, std::string_view node_name) {
  const std::string_view s = op_schema.empty() ? node_name : op_schema;
  return std::string(s.substr(0, s.find('(')));
}

std::optional<KernelWork> kernel_work(const std::string& full_op, std::string_view schema, const std::vector<OpArg>& in,
                                      const std::vector<OpArg>& out) {
  const std::string op = base_op(full_op);
  std::optional<KernelWork> w;
  if (one_of(op, {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear",
                  "aten::_scaled_mm"})) {
    w = gemm(op, in);
  } else if (one_of(op, {"aten::convolution", "aten::_convolution", "aten::cudnn_convolution",
                         "aten::convolution_backward"})) {
    w = convolution(op, in, out);
  } else if (op.find("attention") != std::string::npos && op.find("aten::_") == 0 &&
             op.find("math") == std::string::npos) {
    w = attention(op, schema, in);
  } else if (const auto cls = memory_class(op)) {
    w = KernelWork{};
    w->cls = *cls;
  }
  if (!w) return std::nullopt;
  w->bytes = memory_bytes(op, in, out);
  if (op == "aten::nll_loss_forward" || op == "aten::nll_loss_backward") {
    // One logit read (forward) or one gradient written (backward; the rest
    // were zeroed by a fill_ of their own) per target, not the whole matrix.
    const bool backward = op == "aten::nll_loss_backward";
    const TensorArg* logits = single(in, backward ? 1 : 0);
    const TensorArg* target = single(in, backward ? 2 : 1);
    if (!logits || !target) return std::nullopt;
    w->bytes = static_cast<double>(target->bytes() + target->elements * logits->element_bytes);
  }
  if (memory_bound_class(w->cls)) {
    // One operation per element written: not timed (these classes are bound
    // by their bytes), but reported.
    for (const OpArg& a : out) {
      for (const TensorArg& t : a.tensors) w->flops += static_cast<double>(t.elements);
    }
  }
  return w;
}

}  // namespace fabricsim::traces
