// A model as an architect describes it: a decoder-only transformer (dense or
// mixture-of-experts; GPT, Llama, Mixtral, DeepSeek shapes) or a CNN
// (ResNet). Every field is a parameter declared once in its table
// (`fabricsim params model`); model files, Hugging Face config.json files and
// the shipped presets (traces/models/) all fill it through that table.
#pragma once

#include <cstdint>
#include <string>

#include "tlm/kernel/parameters.h"

namespace fabricsim {

struct ModelSpec {
  enum class Kind : std::uint8_t { kTransformer, kResnet };
  enum class Norm : std::uint8_t { kLayerNorm, kRmsNorm };
  enum class Mlp : std::uint8_t { kGelu, kSwiglu };
  enum class Position : std::uint8_t { kLearned, kRope };

  Kind kind = Kind::kTransformer;
  // A transformer.
  std::uint32_t layers = 24;
  std::uint32_t hidden = 2048;
  std::uint32_t heads = 16;
  std::uint32_t kv_heads = 0;    // grouped-query attention: key/value heads; 0: as many as heads
  std::uint32_t head_dim = 0;    // 0: hidden / heads
  std::uint32_t ffn_hidden = 0;  // the MLP's inner width; 0: 4 x hidden (gelu), 8/3 x hidden rounded up to 64 (swiglu)
  std::uint32_t vocab = 51200;
  std::uint32_t seq = 2048;  // the context it is trained at (a training run may give its own)
  Norm norm = Norm::kLayerNorm;
  Mlp mlp = Mlp::kGelu;
  Position position = Position::kLearned;
  bool bias = true;             // linear layers carry biases (GPT) or not (Llama)
  bool tied_embeddings = true;  // the LM head reuses the input embedding
  // Mixture of experts (experts = 0: dense).
  std::uint32_t experts = 0;            // routed experts per MoE layer
  std::uint32_t top_k = 2;              // experts each token goes to
  std::uint32_t shared_experts = 0;     // experts every token goes to (DeepSeek)
  std::uint32_t expert_ffn_hidden = 0;  // an expert's inner width; 0: ffn_hidden
  std::uint32_t dense_layers = 0;       // the first layers keep a dense MLP (DeepSeek's first_k_dense_replace)
  double capacity_factor = 0;           // tokens an expert takes at most, x its even share; 0: dropless
  // A ResNet (kind resnet).
  std::uint32_t resnet_depth = 50;  // 50, 101 or 152
  std::uint32_t image_size = 224;
  std::uint32_t classes = 1000;

  static const ParamTable<ModelSpec>& table();

  // Derived shapes.
  std::uint32_t kv() const { return kv_heads ? kv_heads : heads; }
  std::uint32_t dhead() const { return head_dim ? head_dim : hidden / heads; }
  std::uint32_t ffn() const;
  std::uint32_t expert_ffn() const { return expert_ffn_hidden ? expert_ffn_hidden : ffn(); }
  bool moe_layer(std::uint32_t layer) const { return experts > 0 && layer >= dense_layers; }
  /// Weights of one layer (whole, before any parallel split), the
  /// embedding, and the model.
  std::uint64_t layer_params(std::uint32_t layer) const;
  std::uint64_t embedding_params() const;
  std::uint64_t params() const;
  /// Weights a token passes through in one layer (MoE: the experts it goes
  /// to, not all of them).
  std::uint64_t layer_active_params(std::uint32_t layer) const;
  /// Why the model cannot be built as given ("" when it can).
  std::string invalid() const;
};

}  // namespace fabricsim
