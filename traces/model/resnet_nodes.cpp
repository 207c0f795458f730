// One rank's ResNet training step as Chakra nodes, data parallel as
// PyTorch's DistributedDataParallel runs it: each microbatch's forward and
// backward on the GPU's stream, the gradients all-reduced in buckets as the
// last microbatch's backward produces them (DDP's no_sync before it), then
// SGD with momentum. Every convolution, batch norm, ReLU, pooling and the
// classifier is written as the converter writes it, NCHW, so the platform's
// compute model times each by its class (a convolution as cuDNN's implicit
// GEMM: traces/workload/kernel_work.cpp).
#include "traces/model/node_emitter.h"
#include "traces/model/resnet.h"
#include "traces/model/training_job.h"

namespace fabricsim {

namespace {

using model_nodes::Arg;
using model_nodes::kNone;
using model_nodes::NodeEmitter;
using model_nodes::Tensor;

constexpr const char* kConvolution =
    "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] "
    "dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor";
constexpr const char* kConvolutionBackward =
    "aten::convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] "
    "stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] "
    "output_mask) -> (Tensor, Tensor, Tensor)";
constexpr const char* kBatchNorm =
    "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)";
constexpr const char* kBatchNormBackward =
    "aten::native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, Tensor? "
    "running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> (Tensor, "
    "Tensor, Tensor)";
constexpr const char* kAddmm =
    "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor";
constexpr const char* kMm = "aten::mm(Tensor self, Tensor mat2) -> Tensor";

class ResnetNodes final : public NodeEmitter {
 public:
  ResnetNodes(const TrainingJob& job, int rank, OpIoForm form, bool count_only, std::uint64_t count)
      : NodeEmitter(job, rank, form, count_only, count),
        job_(job),
        tr_(job_.training()),
        m_(job_.model()),
        convs_(resnet_convs(m_)),
        b_(tr_.microbatch) {}

 private:
  void run_unit(const TrainingJob::Unit& u) override {
    if (u.forward) {
      forward();
    } else {
      backward(u.microbatch == job_.microbatches() - 1);
    }
  }

  Tensor map(std::uint32_t channels, std::uint32_t side) { return tensor({b_, channels, side, side}); }
  static std::string ints(std::uint32_t v) { return "[" + std::to_string(v) + ", " + std::to_string(v) + "]"; }

  void conv(const ResnetConv& c) {
    compute("aten::convolution", kConvolution,
            {Arg::of(map(c.cin, c.side_in)), Arg::of(tensor({c.cout, c.cin, c.kernel, c.kernel})), Arg::value("None"),
             Arg::value(ints(c.stride)), Arg::value(ints(c.kernel / 2)), Arg::value("[1, 1]"), Arg::value("False"),
             Arg::value("[0, 0]"), Arg::value("1")},
            {Arg::of(map(c.cout, c.side_out))});
  }
  void conv_backward(const ResnetConv& c) {
    // The stem's input is the image: no gradient for it, the weight's only.
    const bool input_grad = c.role != ResnetConv::Role::kStem;
    compute("aten::convolution_backward", kConvolutionBackward,
            {Arg::of(map(c.cout, c.side_out)), Arg::of(map(c.cin, c.side_in)),
             Arg::of(tensor({c.cout, c.cin, c.kernel, c.kernel})), Arg::value("None"), Arg::value(ints(c.stride)),
             Arg::value(ints(c.kernel / 2)), Arg::value("[1, 1]"), Arg::value("False"), Arg::value("[0, 0]"),
             Arg::value("1"), Arg::value(input_grad ? "[True, True, False]" : "[False, True, False]")},
            {Arg::of(map(c.cin, c.side_in)), Arg::of(tensor({c.cout, c.cin, c.kernel, c.kernel}))});
  }
  void batch_norm(std::uint32_t channels, std::uint32_t side) {
    const Tensor stat = tensor({channels}, 4);
    compute("aten::native_batch_norm", kBatchNorm,
            {Arg::of(map(channels, side)), Arg::of(stat), Arg::of(stat), Arg::of(stat), Arg::of(stat),
             Arg::value("True"), Arg::value("0.1"), Arg::value("1e-05")},
            {Arg::of(map(channels, side)), Arg::of(tensor({channels}, 4)), Arg::of(tensor({channels}, 4))});
  }
  void batch_norm_backward(std::uint32_t channels, std::uint32_t side) {
    const Tensor stat = tensor({channels}, 4);
    compute("aten::native_batch_norm_backward", kBatchNormBackward,
            {Arg::of(map(channels, side)), Arg::of(map(channels, side)), Arg::of(stat), Arg::of(stat), Arg::of(stat),
             Arg::of(stat), Arg::of(stat), Arg::value("True"), Arg::value("1e-05"), Arg::value("[True, True, True]")},
            {Arg::of(map(channels, side)), Arg::of(tensor({channels}, 4)), Arg::of(tensor({channels}, 4))});
  }
  void relu(std::uint32_t channels, std::uint32_t side) {
    const Tensor x = map(channels, side);
    elementwise("aten::relu_", {x}, {x});
  }
  void relu_backward(std::uint32_t channels, std::uint32_t side) {
    elementwise("aten::threshold_backward", {map(channels, side), map(channels, side)}, {map(channels, side)});
  }
  static bool has_relu(const ResnetConv& c) {
    return c.role != ResnetConv::Role::kExpand && c.role != ResnetConv::Role::kShortcut;
  }

  void forward() {
    const ResnetConv& stem = convs_.front();
    conv(stem);
    batch_norm(stem.cout, stem.side_out);
    relu(stem.cout, stem.side_out);
    const std::uint32_t pooled = convs_[1].side_in;
    compute("aten::max_pool2d_with_indices", nullptr,
            {Arg::of(map(stem.cout, stem.side_out)), Arg::value("[3, 3]"), Arg::value("[2, 2]"), Arg::value("[1, 1]")},
            {Arg::of(map(stem.cout, pooled)), Arg::of(tensor({b_, stem.cout, pooled, pooled}, 8))});
    for (std::size_t i = 1; i < convs_.size(); ++i) {
      const ResnetConv& c = convs_[i];
      conv(c);
      batch_norm(c.cout, c.side_out);
      if (has_relu(c)) relu(c.cout, c.side_out);
      const bool block_ends = c.role == ResnetConv::Role::kShortcut ||
                              (c.role == ResnetConv::Role::kExpand &&
                               (i + 1 == convs_.size() || convs_[i + 1].role != ResnetConv::Role::kShortcut));
      if (block_ends) {  // the residual add, then the block's ReLU
        const Tensor x = map(c.cout, c.side_out);
        elementwise("aten::add_", {x, map(c.cout, c.side_out)}, {x});
        relu(c.cout, c.side_out);
      }
    }
    const std::uint32_t side = convs_.back().side_out;
    compute("aten::mean", nullptr, {Arg::of(map(kResnetFeatures, side)), Arg::value("[-1, -2]"), Arg::value("True")},
            {Arg::of(tensor({b_, kResnetFeatures, 1, 1}))});
    compute("aten::addmm", kAddmm,
            {Arg::of(tensor({m_.classes})), Arg::of(tensor({b_, kResnetFeatures})),
             Arg::of(tensor({kResnetFeatures, m_.classes})), Arg::value("1"), Arg::value("1")},
            {Arg::of(tensor({b_, m_.classes}))});
    elementwise("aten::_log_softmax", {tensor({b_, m_.classes}, 4)}, {tensor({b_, m_.classes}, 4)});
    elementwise("aten::nll_loss_forward", {tensor({b_, m_.classes}, 4), tensor({b_}, 8)},
                {tensor({}, 4), tensor({}, 4)});
  }

  void backward(bool last_microbatch) {
    reduce_now_ = last_microbatch;
    elementwise("aten::nll_loss_backward", {tensor({}, 4), tensor({b_, m_.classes}, 4), tensor({b_}, 8)},
                {tensor({b_, m_.classes}, 4)});
    elementwise("aten::_log_softmax_backward_data", {tensor({b_, m_.classes}, 4), tensor({b_, m_.classes}, 4)},
                {tensor({b_, m_.classes})});
    // The classifier: the input's gradient, the weight's and the bias's.
    const Tensor grad = tensor({b_, m_.classes});
    compute("aten::mm", kMm, {Arg::of(grad), Arg::of(tensor({m_.classes, kResnetFeatures}))},
            {Arg::of(tensor({b_, kResnetFeatures}))});
    compute("aten::mm", kMm, {Arg::of(tensor({m_.classes, b_})), Arg::of(tensor({b_, kResnetFeatures}))},
            {Arg::of(tensor({m_.classes, kResnetFeatures}))});
    compute("aten::sum", nullptr, {Arg::of(grad), Arg::value("[0]"), Arg::value("True")},
            {Arg::of(tensor({m_.classes}))});
    gradients_ready(static_cast<double>(kResnetFeatures) * m_.classes + m_.classes);
    const std::uint32_t side = convs_.back().side_out;
    // The mean's backward: the gradient spread over the map.
    elementwise("aten::div", {tensor({b_, kResnetFeatures, 1, 1})}, {map(kResnetFeatures, side)});
    for (std::size_t i = convs_.size(); i-- > 1;) {
      const ResnetConv& c = convs_[i];
      const bool block_ends = c.role == ResnetConv::Role::kShortcut ||
                              (c.role == ResnetConv::Role::kExpand &&
                               (i + 1 == convs_.size() || convs_[i + 1].role != ResnetConv::Role::kShortcut));
      if (block_ends) relu_backward(c.cout, c.side_out);
      if (has_relu(c)) relu_backward(c.cout, c.side_out);
      batch_norm_backward(c.cout, c.side_out);
      conv_backward(c);
      gradients_ready(static_cast<double>(c.weights()) + 2.0 * c.cout);
      if (c.role == ResnetConv::Role::kReduce) {
        // The block's input took two gradients (the main path's and the
        // shortcut's): summed.
        elementwise("aten::add", {map(c.cin, c.side_in), map(c.cin, c.side_in)}, {map(c.cin, c.side_in)});
      }
    }
    const ResnetConv& stem = convs_.front();
    const std::uint32_t pooled = convs_[1].side_in;
    compute("aten::max_pool2d_with_indices_backward", nullptr,
            {Arg::of(map(stem.cout, pooled)), Arg::of(map(stem.cout, stem.side_out)),
             Arg::of(tensor({b_, stem.cout, pooled, pooled}, 8))},
            {Arg::of(map(stem.cout, stem.side_out))});
    relu_backward(stem.cout, stem.side_out);
    batch_norm_backward(stem.cout, stem.side_out);
    conv_backward(stem);
    gradients_ready(static_cast<double>(stem.weights()) + 2.0 * stem.cout);
    if (reduce_now_) flush();
  }

  /// DDP: a bucket is all-reduced when the backward pass has filled it
  /// (in the last microbatch; the ones before accumulate under no_sync).
  void gradients_ready(double params) {
    if (!reduce_now_ || !tr_.dp_overlap) return;
    bucket_ += params;
    if (bucket_ >= tr_.bucket_params) flush();
  }
  void flush() {
    if (bucket_ > 0)
      last_grads_ =
          collective(ChakraProtoMsg::ALL_REDUCE, bucket_ * tr_.grad_bytes(), "dp", {last_compute_}, "all_reduce_grads");
    bucket_ = 0;
  }

  /// SGD with momentum and weight decay over every weight, as PyTorch's
  /// foreach implementation runs it (on fp32 master weights, then cast back,
  /// with master_weights).
  void end_of_step() override {
    const double params = static_cast<double>(job_.local_params(0).first);
    if (!tr_.dp_overlap) {
      for (double left = params; left > 0; left -= tr_.bucket_params) {
        bucket_ = std::min(left, tr_.bucket_params);
        flush();
      }
    }
    wait(last_grads_);
    const auto n = static_cast<std::int64_t>(params);
    const std::uint32_t state = tr_.master_weights ? 4 : eb_;
    auto list = [](const Tensor& t) { return Arg{{t}, true, ""}; };
    const Tensor p = tensor({n}, state), g = tensor({n}, tr_.grad_bytes()), v = tensor({n}, state);
    compute("aten::_foreach_add_", nullptr, {list(g), list(p), Arg::value("0.0001")}, {});  // weight decay
    compute("aten::_foreach_mul_", nullptr, {list(v), Arg::value("0.9")}, {});              // momentum
    compute("aten::_foreach_add_", nullptr, {list(v), list(g)}, {});
    compute("aten::_foreach_add_", nullptr, {list(p), list(v), Arg::value("-0.1")}, {});
    if (tr_.master_weights) {
      compute("aten::copy_", nullptr, {Arg::of(tensor({n})), Arg::of(tensor({n}, 4))}, {Arg::of(tensor({n}))});
    }
    last_grads_ = kNone;
  }

  TrainingJob job_;
  const TrainingSpec& tr_;
  const ModelSpec& m_;
  std::vector<ResnetConv> convs_;
  std::int64_t b_;
  bool reduce_now_ = false;
  double bucket_ = 0;
  std::uint64_t last_grads_ = kNone;
};

}  // namespace

std::unique_ptr<traces::NodeSource> make_resnet_source(const TrainingJob& job, int rank, OpIoForm form) {
  return model_nodes::counted_source<ResnetNodes>(job, rank, form);
}

}  // namespace fabricsim
