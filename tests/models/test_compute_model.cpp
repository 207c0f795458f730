// The compute model (models/npu/compute_model.h), the ops it reads from
// PyTorch traces (traces/workload/kernel_work.h) and its calibration on the
// measured H100 kernels of ../shared/reference/h100-ops.csv.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

#include "platforms/assembly/loader.h"
#include "platforms/tools/calibrate.h"
#include "support/test_util.h"
#include "traces/workload/kernel_work.h"

using namespace fabricsim;

namespace {

const std::string kH100Ops = testutil::shared_trace("../reference/h100-ops.csv");

ComputeParams one_class(KernelClass cls, KernelClassParams p, double units = 0) {
  ComputeParams c;
  c.model = ComputeParams::Model::kKernelClasses;
  c.compute_units = units;
  c.gemm_tiles = {{256, 128}};
  c.of(cls) = p;
  return c;
}

TEST(ComputeModel, GemmTilesRunInWavesOverTheComputeUnits) {
  // 2048 x 1024 output in 256 x 128 tiles: 64 tiles, one wave on 132 units;
  // 3000 x 1024: 12 x 8 = 96 tiles, still one; 4096 x 2048: 256 tiles, two.
  const double peak = 1000e12, e = 0.5, units = 132;
  const KernelClassModel m(one_class(KernelClass::kGemm, {e, 1, ns_to_ticks(4000)}, units), peak, 1e18);
  auto gemm = [](std::uint64_t mm, std::uint64_t n, std::uint64_t k) {
    KernelWork w;
    w.cls = KernelClass::kGemm;
    w.m = mm, w.n = n, w.k = k;
    w.flops = 2.0 * mm * n * k;
    return w;
  };
  const double wave = 2.0 * 256 * 128 * 1024 / (e * peak / units);  // one tile's time, k = 1024
  EXPECT_NEAR(m.seconds(gemm(2048, 1024, 1024)), 4e-6 + wave, 1e-12);
  EXPECT_NEAR(m.seconds(gemm(3000, 1024, 1024)), 4e-6 + wave, 1e-12);
  EXPECT_NEAR(m.seconds(gemm(4096, 2048, 1024)), 4e-6 + 2 * wave, 1e-12);
  // Without units, the plain rate.
  const KernelClassModel flat(one_class(KernelClass::kGemm, {e, 1, 0}), peak, 1e18);
  EXPECT_NEAR(flat.seconds(gemm(2048, 1024, 1024)), 2.0 * 2048 * 1024 * 1024 / (e * peak), 1e-15);
}

TEST(ComputeModel, MemoryClassesTakeFloorPlusBytesAtTheirEfficiency) {
  const KernelClassModel m(one_class(KernelClass::kNormForward, {0, 0.5, ns_to_ticks(3000)}), 1e15, 2e12);
  KernelWork w;
  w.cls = KernelClass::kNormForward;
  w.flops = 1e15;  // not timed
  w.bytes = 1e9;
  EXPECT_NEAR(m.seconds(w), 3e-6 + 1e9 / (0.5 * 2e12), 1e-12);
}

TEST(ComputeModel, UnclassifiedWorkIsThePlainRoofline) {
  ComputeParams c;
  c.model = ComputeParams::Model::kKernelClasses;
  const auto m = make_compute_model(c, 100e12, 1e12);
  const RooflineModel r(100e12, 1e12);
  KernelWork w;
  w.flops = 3e12, w.bytes = 1e9;  // 30 ms of arithmetic, 1 ms of memory
  EXPECT_EQ(m->time(w), r.time(w));
  EXPECT_EQ(m->time(w), ns_to_ticks(30e6));
  EXPECT_EQ(m->time_beside_memory(w), r.time_beside_memory(w));
}

// ---- ops from PyTorch traces -------------------------------------------

std::vector<traces::OpArg> args(const std::string& values, const std::string& shapes) {
  auto a = traces::parse_op_args(values, shapes);
  EXPECT_TRUE(a) << values;
  return a.value_or(std::vector<traces::OpArg>{});
}

TEST(KernelWork, MmAndAddmmReadTheirShapes) {
  const auto in =
      args("[[1, 2, 0, 8388608, 2, 'cuda:0'], [3, 4, 0, 3145728, 2, 'cuda:0']]", "[[8192, 1024], [1024, 3072]]");
  const auto out = args("[[5, 6, 0, 25165824, 2, 'cuda:0']]", "[[8192, 3072]]");
  const auto w = traces::kernel_work("aten::mm", "aten::mm(Tensor self, Tensor mat2) -> Tensor", in, out);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->cls, KernelClass::kGemm);
  EXPECT_EQ(w->m, 8192u);
  EXPECT_EQ(w->n, 3072u);
  EXPECT_EQ(w->k, 1024u);
  EXPECT_DOUBLE_EQ(w->flops, 2.0 * 8192 * 3072 * 1024);
  EXPECT_DOUBLE_EQ(w->bytes, 2.0 * (8388608 + 3145728 + 25165824));
  // addmm: bias first; a vocabulary of 50257 is not on 16 bytes.
  const auto in2 = args(
      "[[7, 8, 0, 50257, 2, 'cuda:0'], [1, 2, 0, 8388608, 2, 'cuda:0'], [3, 4, 0, 51463168, 2, "
      "'cuda:0'], 1, 1]",
      "[[50257], [8192, 1024], [1024, 50257], [], []]");
  const auto w2 = traces::kernel_work("aten::addmm", "", in2, out);
  ASSERT_TRUE(w2);
  EXPECT_EQ(w2->cls, KernelClass::kGemmUnaligned);
  EXPECT_EQ(w2->n, 50257u);
}

TEST(KernelWork, AttentionReadsCausalFromTheSchema) {
  const std::string q = "[1, 1, 0, 8388608, 2, 'cuda:0']";
  const std::string schema =
      "aten::_cudnn_attention_forward(Tensor query, Tensor key, Tensor value, Tensor? attn_bias, Tensor? cum_seq_q, "
      "Tensor? cum_seq_k, SymInt max_q, SymInt max_k, bool compute_log_sumexp, float dropout_p=0., bool "
      "is_causal=False, bool return_debug_mask=False, *, float? scale=None) -> (Tensor, Tensor)";
  const std::string shapes =
      "[[8, 16, 1024, 64], [8, 16, 1024, 64], [8, 16, 1024, 64], [], [], [], [], [], [], [], "
      "[], [], []]";
  auto run = [&](const char* causal) {
    const auto in = args("[" + q + ", " + q + ", " + q + ", '<None>', '<None>', '<None>', 1024, 1024, True, 0.0, " +
                             causal + ", False, 0.125]",
                         shapes);
    return traces::kernel_work("aten::_cudnn_attention_forward", schema, in, {});
  };
  const auto causal = run("True"), full = run("False");
  ASSERT_TRUE(causal && full);
  EXPECT_EQ(causal->cls, KernelClass::kAttentionForward);
  EXPECT_DOUBLE_EQ(full->flops, 4.0 * 8 * 16 * 1024 * 1024 * 64);
  EXPECT_DOUBLE_EQ(causal->flops, full->flops / 2);
}

TEST(KernelWork, InPlaceOpsWriteTheirFirstInputAndCopiesDoNotReadTheirDestination) {
  const std::string a = "[1, 1, 0, 1000, 2, 'cuda:0']", b = "[2, 2, 0, 1000, 2, 'cuda:0']";
  // add_(self, other): reads both, writes self.
  const auto add =
      traces::kernel_work("aten::add_.Tensor", "", args("[" + a + ", " + b + ", 1]", "[[1000], [1000], []]"),
                          args("[" + a + "]", "[[1000]]"));
  ASSERT_TRUE(add);
  EXPECT_EQ(add->cls, KernelClass::kElementwise);
  EXPECT_DOUBLE_EQ(add->bytes, 6000);
  // copy_(self, src): reads src, writes self.
  const auto copy =
      traces::kernel_work("aten::copy_", "", args("[" + a + ", " + b + ", False]", "[[1000], [1000], []]"),
                          args("[" + a + "]", "[[1000]]"));
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->cls, KernelClass::kCopy);
  EXPECT_DOUBLE_EQ(copy->bytes, 4000);
  // A _foreach_ op on a list, in place, with no outputs listed.
  const auto fe = traces::kernel_work("aten::_foreach_mul_.Scalar", "",
                                      args("[[" + a + ", " + b + "], 0.5]", "[[[1000], [1000]], []]"), {});
  ASSERT_TRUE(fe);
  EXPECT_DOUBLE_EQ(fe->bytes, 8000);
}

TEST(KernelWork, AConvolutionIsItsImplicitGemm) {
  // input [8, 64, 56, 56], weight [128, 64, 3, 3], output [8, 128, 56, 56]:
  // m = 8 x 56 x 56 pixels, n = 128 channels, k = 64 x 3 x 3.
  const auto in = args(
      "[[1, 1, 0, 1605632, 2, 'cuda:0'], [2, 2, 0, 73728, 2, 'cuda:0'], '<None>', [1, 1], [1, 1], "
      "[1, 1], False, [0, 0], 1]",
      "[[8, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], [], [], []]");
  const auto out = args("[[3, 3, 0, 3211264, 2, 'cuda:0']]", "[[8, 128, 56, 56]]");
  const auto w = traces::kernel_work("aten::convolution", "", in, out);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->cls, KernelClass::kGemm);
  EXPECT_EQ(w->m, 8u * 56 * 56);
  EXPECT_EQ(w->n, 128u);
  EXPECT_EQ(w->k, 64u * 9);
  EXPECT_DOUBLE_EQ(w->flops, 2.0 * 8 * 56 * 56 * 128 * 64 * 9);
}

TEST(KernelWork, NllLossTouchesOneLogitPerTarget) {
  // nll_loss_backward(grad_output, self [8192 x 50257 fp32], target [8192 int64], ...):
  // one gradient written per target, not the matrix.
  const auto in = args(
      "[[1, 1, 0, 1, 4, 'cuda:0'], [2, 2, 0, 411705344, 4, 'cuda:0'], [3, 3, 0, 8192, 8, 'cuda:0'], "
      "'<None>', 1, -100, [4, 4, 0, 1, 4, 'cuda:0']]",
      "[[], [8192, 50257], [8192], [], [], [], []]");
  const auto out = args("[[5, 2, 0, 411705344, 4, 'cuda:0']]", "[[8192, 50257]]");
  const auto w = traces::kernel_work("aten::nll_loss_backward", "", in, out);
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->bytes, 8192.0 * 8 + 8192.0 * 4);
}

TEST(KernelWork, UnknownOpsAndUnreadableTensorsAreNotGuessed) {
  EXPECT_FALSE(traces::kernel_work("aten::some_new_op", "", {}, {}));
  EXPECT_FALSE(traces::parse_op_args("[[1, 2, 0, 10, 2, 'cuda:0'", "[[10]]"));
  const auto in = args("[[1, 2, 0, 10, 2, 'cuda:0']]", "[[10]]");
  EXPECT_FALSE(traces::kernel_work("aten::mm", "", in, {}));  // one operand
}

// ---- calibration on the measured H100 kernels ---------------------------

TEST(Calibration, ShippedH100ModelMeetsItsBoundsOnH100Ops) {
  FABRICSIM_NEEDS_SHARED_DATA();
  // The bounds of issue 18: GEMM and attention classes within 10%
  // (geometric mean), elementwise, norms and copies within 15%.
  const PlatformSpec spec = load_platform(std::string(FABRICSIM_SOURCE_DIR) + "/platforms/dgx_h100.yaml");
  ASSERT_EQ(spec.npu.compute.model, ComputeParams::Model::kKernelClasses);
  const KernelClassModel model(spec.npu.compute, spec.npu.peak_flops, spec.npu.memory_bandwidth.bytes_per_ps() * 1e12);
  const auto rows = read_kernel_csv(kH100Ops);
  ASSERT_EQ(rows.size(), 220u);
  std::map<KernelClass, std::vector<const MeasuredKernel*>> by_class;
  for (const auto& r : rows) by_class[r.work.cls].push_back(&r);
  ASSERT_EQ(by_class.size(), 9u);  // every class but gemm_unaligned has rows
  for (const auto& [cls, members] : by_class) {
    const double bound = memory_bound_class(cls) ? 0.15 : 0.10;
    EXPECT_LE(geometric_mean_error(model, members), bound) << kernel_class_name(cls);
  }
}

TEST(Calibration, RecoversTheCoefficientsThatMadeItsRows) {
  // Rows made by a known model come back with its coefficients.
  CalibrateOptions o;
  o.peak_flops = 1000e12;
  o.memory_bandwidth = 3e12;
  o.base = one_class(KernelClass::kGemm, {1, 1, 0}, 132);
  ComputeParams truth = o.base;
  truth.of(KernelClass::kGemm) = {0.7, 1, ns_to_ticks(5000)};
  truth.of(KernelClass::kElementwise) = {0, 0.9, ns_to_ticks(6000)};
  const KernelClassModel made(truth, o.peak_flops, o.memory_bandwidth);
  std::vector<MeasuredKernel> rows;
  for (std::uint64_t s : {1024, 2048, 3072, 4096, 8192}) {
    MeasuredKernel g;
    g.work.cls = KernelClass::kGemm;
    g.work.m = s, g.work.n = 2 * s, g.work.k = 1024;
    g.work.flops = 2.0 * s * 2 * s * 1024;
    g.measured_us = made.seconds(g.work) * 1e6;
    rows.push_back(g);
    MeasuredKernel e;
    e.work.cls = KernelClass::kElementwise;
    e.work.bytes = s * 1e5;
    e.measured_us = made.seconds(e.work) * 1e6;
    rows.push_back(e);
  }
  const Calibration c = calibrate(o, rows);
  EXPECT_NEAR(c.params.of(KernelClass::kGemm).flops_efficiency, 0.7, 1e-9);
  EXPECT_EQ(c.params.of(KernelClass::kGemm).floor, ns_to_ticks(5000));
  EXPECT_NEAR(c.params.of(KernelClass::kElementwise).memory_efficiency, 0.9, 1e-9);
  EXPECT_EQ(c.params.of(KernelClass::kElementwise).floor, ns_to_ticks(6000));
  for (const ClassFit& f : c.fits) EXPECT_LT(f.error, 1e-6) << kernel_class_name(f.cls);
}

TEST(Calibration, ABadRowIsNamedWithFileAndLine) {
  const std::string dir = testutil::scratch_dir("calibrate-bad");
  const std::string csv = dir + "/bad.csv";
  std::ofstream(csv) << "op_class,op,shape,flops,bytes,measured_us\ngemm,x,M=8 N=8 K=8,1024,384,-3\n";
  try {
    read_kernel_csv(csv);
    FAIL() << "accepted a negative time";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(csv + ":2: measured_us \"-3\""), std::string::npos) << e.what();
  }
}

}  // namespace
