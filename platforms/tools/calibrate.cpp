#include "platforms/tools/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

#include "tlm/util/errors.h"
#include "tlm/util/input_file.h"

namespace fabricsim {

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

/// "M=2048 N=3072 K=1024" or "M=N=K=4096": a GEMM's dimensions; 0s if absent.
void gemm_dims(const std::string& shape, KernelWork& w) {
  auto value_after = [&](const std::string& key) -> std::uint64_t {
    std::size_t at = 0;
    while ((at = shape.find(key, at)) != std::string::npos) {
      if (at == 0 || shape[at - 1] == ' ') {
        std::size_t p = at + key.size();
        return std::strtoull(shape.c_str() + p, nullptr, 10);
      }
      at += key.size();
    }
    return 0;
  };
  if (const auto all = shape.find("M=N=K="); all != std::string::npos) {
    w.m = w.n = w.k = std::strtoull(shape.c_str() + all + 6, nullptr, 10);
    return;
  }
  w.m = value_after("M="), w.n = value_after("N="), w.k = value_after("K=");
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

/// The CSV's op_class and op (h100-ops.csv's vocabulary), or one of our
/// class names, as a class.
std::optional<KernelClass> csv_class(const std::string& op_class, const std::string& op, const KernelWork& w) {
  const bool backward = op.find("bwd") != std::string::npos || op.find("backward") != std::string::npos;
  if (op_class == "gemm") {
    // bf16 operands: a dimension of a multiple of 8 elements is on 16 bytes.
    const bool aligned = w.m % 8 == 0 && w.n % 8 == 0 && w.k % 8 == 0;
    return aligned ? KernelClass::kGemm : KernelClass::kGemmUnaligned;
  }
  if (op_class == "attention" || op_class == "attention_alt") {
    const bool flash = op.find("flash") != std::string::npos || op.find("efficient") != std::string::npos;
    return backward ? (flash ? KernelClass::kFlashAttentionBackward : KernelClass::kAttentionBackward)
                    : (flash ? KernelClass::kFlashAttentionForward : KernelClass::kAttentionForward);
  }
  if (op_class == "elementwise") {
    if (starts_with(op, "layernorm") || starts_with(op, "rmsnorm") || starts_with(op, "softmax")) {
      return backward ? KernelClass::kNormBackward : KernelClass::kNormForward;
    }
    return KernelClass::kElementwise;
  }
  if (op_class == "copy") return KernelClass::kCopy;
  return kernel_class_from_name(op_class);  // a user's CSV may name our classes
}

double parse_number(const std::string& text, const std::string& where, const char* column, bool positive) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v < 0 || (positive && v == 0)) {
    throw InputError(where + ": " + column + " \"" + text + "\" is not a " + (positive ? "number > 0" : "number >= 0"));
  }
  return v;
}

struct Fold {
  double x = 0;  // arithmetic seconds at full efficiency
  double y = 0;  // memory seconds at the full bandwidth
  double measured = 0;
};

/// The efficiency and floor that minimise the mean |ln(model / measured)|:
/// model = floor + max(x / e, y) (compute classes) or floor + y / e (memory).
KernelClassParams fit(const std::vector<Fold>& rows, bool memory_bound) {
  KernelClassParams best;
  double best_cost = -1;
  // Floors outermost and a strict improvement: of fits equally good (rows
  // of one size cannot tell a floor from an efficiency), the smallest floor.
  for (int fi = 0; fi <= 800; ++fi) {  // 0 to 200 us
    const double floor = fi * 0.25e-6;
    for (int ei = 4; ei <= 400; ++ei) {
      const double e = ei * 0.0025;
      double cost = 0;
      for (const Fold& r : rows) {
        const double t = floor + (memory_bound ? r.y / e : std::max(r.x / e, r.y));
        cost += std::fabs(std::log(t / r.measured));
      }
      if (best_cost < 0 || cost < best_cost - 1e-9) {
        best_cost = cost;
        best.flops_efficiency = memory_bound ? 0 : e;
        best.memory_efficiency = memory_bound ? e : 1;
        best.floor = ns_to_ticks(fi * 250.0);
      }
    }
  }
  return best;
}

KernelClassModel with_class(const CalibrateOptions& o, KernelClass cls, const KernelClassParams& p) {
  ComputeParams params = o.base;
  params.model = ComputeParams::Model::kKernelClasses;
  params.of(cls) = p;
  return KernelClassModel(params, o.peak_flops, o.memory_bandwidth);
}

}  // namespace

std::vector<MeasuredKernel> read_kernel_csv(const std::string& path) {
  std::istringstream in(read_input_file(path, "kernel measurements (CSV)"));
  std::string line;
  std::size_t line_no = 0;
  std::map<std::string, std::size_t> column;
  const char* needed[] = {"op_class", "op", "shape", "flops", "bytes", "measured_us"};
  std::vector<MeasuredKernel> rows;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    const auto f = split_csv_line(line);
    const std::string where = path + ":" + std::to_string(line_no);
    if (column.empty()) {
      for (std::size_t i = 0; i < f.size(); ++i) column[f[i]] = i;
      for (const char* c : needed) {
        if (!column.count(c)) {
          throw InputError(where + ": the header has no \"" + c +
                           "\" column (needed: op_class, op, shape, flops, bytes, measured_us)");
        }
      }
      continue;
    }
    auto field = [&](const char* c) -> std::string {
      const std::size_t i = column[c];
      if (i >= f.size()) throw InputError(where + ": the row has no \"" + c + "\" field");
      return f[i];
    };
    MeasuredKernel k;
    k.where = where;
    k.label = field("op_class") + " " + field("op") + " " + field("shape");
    k.work.flops = parse_number(field("flops"), where, "flops", false);
    k.work.bytes = parse_number(field("bytes"), where, "bytes", false);
    k.measured_us = parse_number(field("measured_us"), where, "measured_us", true);
    gemm_dims(field("shape"), k.work);
    const auto cls = csv_class(field("op_class"), field("op"), k.work);
    if (!cls || *cls == KernelClass::kUnclassified) {
      throw InputError(where + ": op_class \"" + field("op_class") +
                       "\" is not one calibrate knows (gemm, attention, attention_alt, elementwise, copy, or a class "
                       "of npu.compute: gemm, gemm_unaligned, attention_forward, ...)");
    }
    k.work.cls = *cls;
    if ((k.work.cls == KernelClass::kGemm || k.work.cls == KernelClass::kGemmUnaligned) &&
        (k.work.m == 0 || k.work.n == 0 || k.work.k == 0)) {
      throw InputError(where + ": shape \"" + field("shape") + "\" of a GEMM names no M=, N= and K=");
    }
    rows.push_back(std::move(k));
  }
  if (rows.empty()) throw InputError(path + ": no measured kernels (a header line, then one row per kernel)");
  return rows;
}

double geometric_mean_error(const KernelClassModel& model, const std::vector<const MeasuredKernel*>& rows) {
  if (rows.empty()) return 0;
  double sum = 0;
  for (const MeasuredKernel* r : rows) sum += std::fabs(std::log(model.seconds(r->work) / (r->measured_us * 1e-6)));
  return std::exp(sum / static_cast<double>(rows.size())) - 1;
}

Calibration calibrate(const CalibrateOptions& o, const std::vector<MeasuredKernel>& rows) {
  Calibration c;
  c.params = o.base;
  c.params.model = ComputeParams::Model::kKernelClasses;
  std::map<KernelClass, std::vector<const MeasuredKernel*>> by_class;
  for (const auto& r : rows) by_class[r.work.cls].push_back(&r);
  const KernelClassParams unit{1, 1, 0};
  for (const auto& [cls, members] : by_class) {
    const bool memory_bound = memory_bound_class(cls);
    // The model at full efficiency and no floor, arithmetic and memory apart:
    // every candidate's time is floor + max(x / e, y) of these.
    const KernelClassModel full = with_class(o, cls, unit);
    std::vector<Fold> folds;
    for (const MeasuredKernel* r : members) {
      KernelWork arithmetic = r->work, memory = r->work;
      arithmetic.bytes = 0;
      memory.flops = 0;
      folds.push_back({full.seconds(arithmetic), full.seconds(memory), r->measured_us * 1e-6});
    }
    ClassFit f;
    f.cls = cls;
    f.rows = members.size();
    f.params = fit(folds, memory_bound);
    const KernelClassModel fitted = with_class(o, cls, f.params);
    f.error = geometric_mean_error(fitted, members);
    for (const MeasuredKernel* r : members) {
      f.worst = std::max(f.worst, std::fabs(fitted.seconds(r->work) / (r->measured_us * 1e-6) - 1));
    }
    if (members.size() >= 4) {
      // Two folds: even rows fit, odd rows judge, and the other way round.
      double sum = 0;
      for (int hold = 0; hold < 2; ++hold) {
        std::vector<Fold> train;
        std::vector<const MeasuredKernel*> test;
        for (std::size_t i = 0; i < members.size(); ++i) {
          if (static_cast<int>(i % 2) == hold) {
            test.push_back(members[i]);
          } else {
            train.push_back(folds[i]);
          }
        }
        const KernelClassModel m = with_class(o, cls, fit(train, memory_bound));
        for (const MeasuredKernel* r : test) sum += std::fabs(std::log(m.seconds(r->work) / (r->measured_us * 1e-6)));
      }
      f.cross_validated = std::exp(sum / static_cast<double>(members.size())) - 1;
    }
    c.params.of(cls) = f.params;
    c.fits.push_back(f);
  }
  return c;
}

void print_calibration(std::ostream& os, const Calibration& c) {
  os << "| class | rows | flops efficiency | memory efficiency | floor (us) | geo-mean error | worst | "
        "cross-validated |\n|---|---|---|---|---|---|---|---|\n";
  for (const ClassFit& f : c.fits) {
    char line[256];
    std::snprintf(line, sizeof line, "| %s | %zu | %.4g | %.4g | %.2f | %.1f%% | %.1f%% | ", kernel_class_name(f.cls),
                  f.rows, f.params.flops_efficiency, f.params.memory_efficiency, ticks_to_us(f.params.floor),
                  100 * f.error, 100 * f.worst);
    os << line;
    if (f.cross_validated >= 0) {
      std::snprintf(line, sizeof line, "%.1f%% |\n", 100 * f.cross_validated);
      os << line;
    } else {
      os << "- |\n";
    }
  }
}

std::string compute_file_text(const Calibration& c, const CalibrateOptions& o, const std::string& command) {
  std::ostringstream os;
  std::string files;
  for (const auto& f : o.csv) files += (files.empty() ? "" : ", ") + f.substr(f.rfind('/') + 1);
  os << "# The classes of a kernel_classes compute model (npu.compute.classes; docs/compute.md),\n# written by: "
     << command << "\n# Fitted for an NPU of " << o.peak_flops / 1e12 << " TFLOP/s, " << o.memory_bandwidth / 1e9
     << " GB/s, " << o.base.compute_units << " compute units, GEMM tiles";
  for (const auto& t : o.base.gemm_tiles) os << " " << t[0] << "x" << t[1];
  os << ".\n# Each fitted value names its rows and geometric-mean error; cross-validated:\n# fitted on half the rows, "
        "checked on the other half.\n";
  os << "source: \"calibrated on " << files << " (fabricsim calibrate)\"\n";
  for (const ClassFit& f : c.fits) {
    char note[200];
    std::snprintf(note, sizeof note, "calibrated on %s: %zu %s rows, error %.1f%%", files.c_str(), f.rows,
                  kernel_class_name(f.cls), 100 * f.error);
    std::string cv;
    if (f.cross_validated >= 0) {
      char b[64];
      std::snprintf(b, sizeof b, ", cross-validated %.1f%%", 100 * f.cross_validated);
      cv = b;
    }
    const bool memory = memory_bound_class(f.cls);
    os << kernel_class_name(f.cls) << ":\n";
    if (memory) {
      os << "  flops_efficiency: 0          # not timed: the class is bound by its bytes\n";
      os << "  memory_efficiency: " << f.params.memory_efficiency << "   # " << note << cv << "\n";
    } else {
      os << "  flops_efficiency: " << f.params.flops_efficiency << "   # " << note << cv << "\n";
      os << "  memory_efficiency: 1         # not fitted: its bytes at the full memory_bandwidth\n";
    }
    os << "  floor: " << format_quantity(static_cast<double>(f.params.floor), Quantity::kDuration)
       << "   # fitted with the efficiency, same rows\n";
  }
  return os.str();
}

}  // namespace fabricsim
