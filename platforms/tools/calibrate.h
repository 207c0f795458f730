// `fabricsim calibrate`: fits the kernel_classes compute model
// (models/npu/compute_model.h) to measured kernels.
//
// The measurements are a CSV in the format of ../shared/reference/h100-ops.csv:
// op_class, op, shape, flops, bytes, measured_us (other columns ignored).
// Each row becomes the KernelWork the model times; per class, the fit picks
// the efficiency and floor that minimise the mean |ln(model / measured)|
// (the geometric-mean error), on a grid fine enough that its step moves the
// error by less than 0.1%. A two-fold cross-validation (fit on half the
// rows, check the other half) says how well it holds on shapes it has not
// seen. The result is a compute file a platform names in npu.compute.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "models/npu/compute_model.h"

namespace fabricsim {

/// One measured kernel.
struct MeasuredKernel {
  KernelWork work;
  double measured_us = 0;
  std::string label;  // "gemm qkv_fwd h=1024 T=2048 ..."
  std::string where;  // "file:line"
};

/// Reads a measurement CSV; throws InputError naming the file, line, column
/// and value for a row it cannot use.
std::vector<MeasuredKernel> read_kernel_csv(const std::string& path);

/// exp(mean |ln(model / measured)|) - 1 over `rows` (0 when empty).
double geometric_mean_error(const KernelClassModel& model, const std::vector<const MeasuredKernel*>& rows);

struct ClassFit {
  KernelClass cls = KernelClass::kUnclassified;
  std::size_t rows = 0;
  KernelClassParams params;
  double error = 0;             // geometric-mean error on all its rows
  double worst = 0;             // largest |model / measured - 1|
  double cross_validated = -1;  // two-fold; -1 with fewer than 4 rows
};

struct CalibrateOptions {
  std::vector<std::string> csv;
  double peak_flops = 0;        // the NPU's (from the platform)
  double memory_bandwidth = 0;  // bytes/s
  ComputeParams base;           // compute_units, gemm_tiles, host: kept as given
};

struct Calibration {
  ComputeParams params;        // base with the fitted classes, model kernel_classes
  std::vector<ClassFit> fits;  // the classes the CSV has rows of
};

Calibration calibrate(const CalibrateOptions& options, const std::vector<MeasuredKernel>& rows);

/// The per-class table: class, rows, efficiency, floor, error, worst, cross-validated.
void print_calibration(std::ostream& os, const Calibration& c);
/// The compute file: every value with its source on its line.
std::string compute_file_text(const Calibration& c, const CalibrateOptions& options, const std::string& command);

}  // namespace fabricsim
