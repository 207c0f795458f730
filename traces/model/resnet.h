// A ResNet's shape as torchvision builds it (He et al. 2016, "v1.5": the
// bottleneck's stride on its 3x3 convolution): the convolutions in forward
// order with their channels and feature-map sides, from which the FLOPs,
// the weights, the activations and the generated nodes all follow.
#pragma once

#include <cstdint>
#include <vector>

#include "traces/model/model_spec.h"

namespace fabricsim {

struct ResnetConv {
  enum class Role : std::uint8_t { kStem, kReduce, kSpatial, kExpand, kShortcut };
  Role role;
  std::uint32_t cin, cout, kernel, stride;
  std::uint32_t side_in, side_out;  // the feature map's height (= width) before and after
  /// Multiply-accumulates per image.
  double macs() const { return static_cast<double>(side_out) * side_out * cout * cin * kernel * kernel; }
  std::uint64_t weights() const { return static_cast<std::uint64_t>(cout) * cin * kernel * kernel; }
};

/// The convolutions in forward order: the 7x7 stem, then each bottleneck's
/// 1x1 reduce, 3x3 and 1x1 expand, followed, in a stage's first block, by
/// the shortcut's 1x1 projection. Every convolution is followed by a batch
/// norm; ReLU follows all but the expand and the shortcut (the block's
/// ReLU follows its residual add).
std::vector<ResnetConv> resnet_convs(const ModelSpec& m);

/// Bottleneck blocks per stage (torchvision's): 50 {3, 4, 6, 3},
/// 101 {3, 4, 23, 3}, 152 {3, 8, 36, 3}.
std::vector<int> resnet_blocks(std::uint32_t depth);

/// The channels into the classifier: the last stage's 4 x 512.
constexpr std::uint32_t kResnetFeatures = 2048;

/// Multiply-accumulates of one image's forward pass (convolutions and the
/// classifier; torchvision gives 4.09 G for ResNet-50 at 224 x 224).
double resnet_forward_macs(const ModelSpec& m);
/// Weights: convolutions, batch norms' scale and shift, the classifier.
std::uint64_t resnet_params(const ModelSpec& m);
/// Elements one image keeps for the backward pass: each convolution's
/// output (the batch norm's saved input) and the batch norm's (the ReLU's
/// saved output, or the residual sum's), the image, and the stem's pooled
/// map.
double resnet_saved_elements(const ModelSpec& m);

}  // namespace fabricsim
