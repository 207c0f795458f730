#include "traces/model/resnet.h"

#include <stdexcept>

namespace fabricsim {

std::vector<int> resnet_blocks(std::uint32_t depth) {
  switch (depth) {
    case 50:
      return {3, 4, 6, 3};
    case 101:
      return {3, 4, 23, 3};
    case 152:
      return {3, 8, 36, 3};
    default:
      throw std::invalid_argument("resnet_depth " + std::to_string(depth) + ": 50, 101 or 152");
  }
}

namespace {
/// A convolution's output side: padding k/2, as torchvision pads.
std::uint32_t side_after(std::uint32_t side, std::uint32_t kernel, std::uint32_t stride) {
  return (side + 2 * (kernel / 2) - kernel) / stride + 1;
}
}  // namespace

std::vector<ResnetConv> resnet_convs(const ModelSpec& m) {
  using Role = ResnetConv::Role;
  std::vector<ResnetConv> out;
  std::uint32_t side = m.image_size;
  const std::uint32_t stem_side = side_after(side, 7, 2);
  out.push_back({Role::kStem, 3, 64, 7, 2, side, stem_side});
  side = side_after(stem_side, 3, 2);  // the 3x3 max pool, stride 2
  std::uint32_t channels = 64;
  const std::vector<int> blocks = resnet_blocks(m.resnet_depth);
  for (std::size_t stage = 0; stage < blocks.size(); ++stage) {
    const std::uint32_t width = 64u << stage;
    for (int b = 0; b < blocks[stage]; ++b) {
      const std::uint32_t stride = (b == 0 && stage > 0) ? 2 : 1;
      const std::uint32_t out_side = side_after(side, 3, stride);
      out.push_back({Role::kReduce, channels, width, 1, 1, side, side});
      out.push_back({Role::kSpatial, width, width, 3, stride, side, out_side});
      out.push_back({Role::kExpand, width, 4 * width, 1, 1, out_side, out_side});
      if (b == 0) out.push_back({Role::kShortcut, channels, 4 * width, 1, stride, side, out_side});
      channels = 4 * width;
      side = out_side;
    }
  }
  return out;
}

double resnet_forward_macs(const ModelSpec& m) {
  double macs = static_cast<double>(kResnetFeatures) * m.classes;
  for (const ResnetConv& c : resnet_convs(m)) macs += c.macs();
  return macs;
}

std::uint64_t resnet_params(const ModelSpec& m) {
  std::uint64_t p = static_cast<std::uint64_t>(kResnetFeatures) * m.classes + m.classes;
  for (const ResnetConv& c : resnet_convs(m)) p += c.weights() + 2ull * c.cout;
  return p;
}

double resnet_saved_elements(const ModelSpec& m) {
  const auto convs = resnet_convs(m);
  double e = 3.0 * m.image_size * m.image_size;
  const ResnetConv& stem = convs.front();
  e += 64.0 * side_after(stem.side_out, 3, 2) * side_after(stem.side_out, 3, 2);  // the pooled map
  for (const ResnetConv& c : convs) e += 2.0 * c.cout * c.side_out * c.side_out;
  return e;
}

}  // namespace fabricsim
