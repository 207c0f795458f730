#include "traces/model/model_spec.h"

namespace fabricsim {

const ParamTable<ModelSpec>& ModelSpec::table() {
  static const auto table =
      ParamTable<ModelSpec>("model", "a model: a decoder-only transformer (dense or mixture-of-experts) or a ResNet")
          .choice("kind", &ModelSpec::kind, {"transformer", "resnet"}, "what the model is")
          .add("layers", Quantity::kCount, &ModelSpec::layers, "transformer layers")
          .range(1, 100000)
          .add("hidden", Quantity::kCount, &ModelSpec::hidden, "the hidden size (d_model)")
          .range(1, 1 << 20)
          .add("heads", Quantity::kCount, &ModelSpec::heads, "attention (query) heads")
          .range(1, 1 << 16)
          .add("kv_heads", Quantity::kCount, &ModelSpec::kv_heads,
               "key/value heads (grouped-query attention); 0: as many as heads")
          .range(0, 1 << 16)
          .add("head_dim", Quantity::kCount, &ModelSpec::head_dim, "a head's width; 0: hidden / heads")
          .range(0, 1 << 16)
          .add("ffn_hidden", Quantity::kCount, &ModelSpec::ffn_hidden,
               "the MLP's inner width; 0: 4 x hidden (gelu) or 8/3 x hidden rounded up to 64 (swiglu)")
          .range(0, 1 << 22)
          .add("vocab", Quantity::kCount, &ModelSpec::vocab, "vocabulary size")
          .range(1, 1 << 24)
          .add("seq", Quantity::kCount, &ModelSpec::seq, "the sequence length it is trained at")
          .range(1, 1 << 24)
          .choice("norm", &ModelSpec::norm, {"layernorm", "rmsnorm"}, "the layers' normalization")
          .choice("mlp", &ModelSpec::mlp, {"gelu", "swiglu"},
                  "the MLP: two matrices with GeLU, or three with SwiGLU (gate and up, then down)")
          .choice("position", &ModelSpec::position, {"learned", "rope"},
                  "position embedding: a learned table added to the input, or rotary (applied to q and k)")
          .add("bias", Quantity::kFlag, &ModelSpec::bias, "linear layers carry biases (GPT) or not (Llama)")
          .add("tied_embeddings", Quantity::kFlag, &ModelSpec::tied_embeddings,
               "the LM head reuses the input embedding's weights")
          .add("experts", Quantity::kCount, &ModelSpec::experts, "routed experts per MoE layer; 0: a dense model")
          .range(0, 1 << 16)
          .add("top_k", Quantity::kCount, &ModelSpec::top_k, "routed experts each token goes to")
          .range(1, 1 << 10)
          .add("shared_experts", Quantity::kCount, &ModelSpec::shared_experts,
               "experts every token goes to (DeepSeek's shared experts)")
          .range(0, 1 << 10)
          .add("expert_ffn_hidden", Quantity::kCount, &ModelSpec::expert_ffn_hidden,
               "an expert's inner width; 0: ffn_hidden")
          .range(0, 1 << 22)
          .add("dense_layers", Quantity::kCount, &ModelSpec::dense_layers,
               "MoE models: the first layers keep a dense MLP (DeepSeek's first_k_dense_replace)")
          .range(0, 100000)
          .add("capacity_factor", Quantity::kNumber, &ModelSpec::capacity_factor,
               "MoE: the tokens an expert takes at most, as a multiple of its even share (tokens x top_k / "
               "experts); 0: dropless, every expert its even share")
          .range(0, 1000)
          .add("resnet_depth", Quantity::kCount, &ModelSpec::resnet_depth, "ResNet: 50, 101 or 152 layers")
          .range(18, 200)
          .add("image_size", Quantity::kCount, &ModelSpec::image_size, "ResNet: input images' side, pixels")
          .range(32, 4096)
          .add("classes", Quantity::kCount, &ModelSpec::classes, "ResNet: output classes")
          .range(1, 1 << 20);
  return table;
}

std::uint32_t ModelSpec::ffn() const {
  if (ffn_hidden) return ffn_hidden;
  if (mlp == Mlp::kGelu) return 4 * hidden;
  // Llama's rule: 2/3 of 4h, rounded up to a multiple of 64 (multiple_of).
  const std::uint64_t f = (8ull * hidden / 3 + 63) / 64 * 64;
  return static_cast<std::uint32_t>(f);
}

namespace {
std::uint64_t mlp_params(const ModelSpec& m, std::uint64_t width) {
  const std::uint64_t h = m.hidden;
  const std::uint64_t matrices = m.mlp == ModelSpec::Mlp::kSwiglu ? 3 : 2;
  std::uint64_t p = matrices * h * width;
  if (m.bias) p += (matrices - 1) * width + h;
  return p;
}
}  // namespace

std::uint64_t ModelSpec::layer_params(std::uint32_t layer) const {
  const std::uint64_t h = hidden, q = static_cast<std::uint64_t>(heads) * dhead(),
                      k = static_cast<std::uint64_t>(kv()) * dhead();
  std::uint64_t p = h * (q + 2 * k) + q * h;  // QKV and the output projection
  if (bias) p += q + 2 * k + h;
  p += (norm == Norm::kLayerNorm ? 2 : 1) * 2 * h;  // two norms
  if (moe_layer(layer)) {
    p += h * experts;  // the router
    p += static_cast<std::uint64_t>(experts + shared_experts) * mlp_params(*this, expert_ffn());
  } else {
    p += mlp_params(*this, ffn());
  }
  return p;
}

std::uint64_t ModelSpec::layer_active_params(std::uint32_t layer) const {
  if (!moe_layer(layer)) return layer_params(layer);
  const std::uint64_t all_experts =
      static_cast<std::uint64_t>(experts + shared_experts) * mlp_params(*this, expert_ffn());
  const std::uint64_t active = static_cast<std::uint64_t>(top_k + shared_experts) * mlp_params(*this, expert_ffn());
  return layer_params(layer) - all_experts + active;
}

std::uint64_t ModelSpec::embedding_params() const {
  std::uint64_t p = static_cast<std::uint64_t>(vocab) * hidden;
  if (position == Position::kLearned) p += static_cast<std::uint64_t>(seq) * hidden;
  return p;
}

std::uint64_t ModelSpec::params() const {
  std::uint64_t p = embedding_params() + (norm == Norm::kLayerNorm ? 2 : 1) * static_cast<std::uint64_t>(hidden);
  if (!tied_embeddings) p += static_cast<std::uint64_t>(vocab) * hidden;
  for (std::uint32_t l = 0; l < layers; ++l) p += layer_params(l);
  return p;
}

std::string ModelSpec::invalid() const {
  if (kind == Kind::kResnet) {
    if (resnet_depth != 50 && resnet_depth != 101 && resnet_depth != 152) {
      return "resnet_depth " + std::to_string(resnet_depth) + ": ResNets have 50, 101 or 152 layers here";
    }
    return "";
  }
  if (!head_dim && hidden % heads != 0) {
    return "hidden " + std::to_string(hidden) + " is not a multiple of heads " + std::to_string(heads) +
           ": give head_dim";
  }
  if (heads % kv() != 0) {
    return "heads " + std::to_string(heads) + " is not a multiple of kv_heads " + std::to_string(kv()) +
           " (each key/value head serves a whole group of query heads)";
  }
  if (experts > 0 && top_k > experts) {
    return "top_k " + std::to_string(top_k) + " is more than the " + std::to_string(experts) + " experts";
  }
  if (experts > 0 && dense_layers >= layers) {
    return "dense_layers " + std::to_string(dense_layers) + " leaves none of the " + std::to_string(layers) +
           " layers with experts";
  }
  return "";
}

}  // namespace fabricsim
