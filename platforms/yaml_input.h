// Reading YAML input as validated numbers, with errors that say where.
//
// Every number a platform file gives goes through one of these getters: it
// must be finite, in the range its unit allows, and (for whole numbers)
// written as one, so NaN, infinities, wrap-around at 2^32 or 2^64 and
// out-of-range values stop with "file:line:column: what, accepted range"
// (exit 2) instead of becoming a wrong answer.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include <yaml-cpp/yaml.h>

#include "platforms/platform_spec.h"
#include "tlm/errors.h"
#include "tlm/time.h"

namespace fabricsim {

/// The ranges a platform's quantities may take (docs/platforms.md, "Limits").
namespace limits {
constexpr double kMaxLatencyNs = 1e9;      // 1 s for any latency or per-message cost
constexpr double kMinGBps = 1e-6;          // 1 kB/s
constexpr double kMaxGBps = 1e6;           // 1 PB/s
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 50;  // 1 PiB for any buffer or size
constexpr std::uint64_t kMaxChunks = 4096;  // pipelined chunks per collective (ASTRA-sim studies use up to 1,024)
constexpr int kMaxNpus = 1 << 17;          // 131,072 NPUs: past what one machine can hold (docs/performance.md)
}  // namespace limits

class YamlInput {
 public:
  explicit YamlInput(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  /// "file:line:column: what", thrown as InputError.
  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const;
  [[noreturn]] void fail(const std::string& what) const;

  /// Rejects keys of `map` not in `known`; `what` names the section.
  void only_keys(const YAML::Node& map, std::initializer_list<const char*> known, const std::string& what) const;
  void require_map(const YAML::Node& node, const std::string& what) const;

  /// A finite number in [min, max] (or (min, max] when `min_exclusive`).
  double number(const YAML::Node& map, const char* key, double fallback, double min, double max,
                bool min_exclusive = false) const;
  /// A whole number written as digits, in [min, max].
  std::uint64_t count(const YAML::Node& map, const char* key, std::uint64_t fallback, std::uint64_t min = 0,
                      std::uint64_t max = limits::kMaxBytes) const;
  /// A whole number of bytes, in [min, limits::kMaxBytes].
  std::uint64_t bytes(const YAML::Node& map, const char* key, std::uint64_t fallback, std::uint64_t min = 0) const {
    return count(map, key, fallback, min, limits::kMaxBytes);
  }
  /// A latency in ns, in [0, limits::kMaxLatencyNs], as ticks.
  Tick latency_ns(const YAML::Node& map, const char* key, Tick fallback) const;
  /// A bandwidth in GB/s (10^9 bytes/s), in [kMinGBps, kMaxGBps]; with
  /// `zero_unlimited`, 0 also, meaning no limit.
  Bandwidth bandwidth_GBps(const YAML::Node& map, const char* key, Bandwidth fallback,
                           bool zero_unlimited = false) const;
  /// A number at `node` itself (a list entry), as `number` checks it.
  double number_at(const YAML::Node& node, const std::string& what, double min, double max,
                   bool min_exclusive = false) const;
  std::uint64_t count_at(const YAML::Node& node, const std::string& what, std::uint64_t min, std::uint64_t max) const;

  bool flag(const YAML::Node& map, const char* key, bool fallback) const;
  std::string text(const YAML::Node& map, const char* key, const std::string& fallback) const;
  const YAML::Node required(const YAML::Node& map, const char* key, const std::string& what) const;

 private:
  std::string file_;
};

/// Reads and parses a YAML file, refusing what is not a readable regular
/// file, and checks the whole document: keys are scalars, no key appears
/// twice in a mapping, text is UTF-8.
YAML::Node load_yaml_file(const std::string& path);

/// "platforms/dgx_h100.yaml" -> "dgx_h100": a platform's default name.
std::string file_stem(const std::string& path);

/// Runs `read`; yaml-cpp's own conversion errors, should one slip past our
/// checks, become InputError naming the file and place.
template <class F>
auto naming_yaml_errors(const std::string& path, F&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const YAML::Exception& e) {
    std::string where = path;
    if (e.mark.line >= 0) where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    throw InputError(where + ": " + e.msg);
  }
}

}  // namespace fabricsim
