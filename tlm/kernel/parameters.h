// One declaration per parameter.
//
// Each component lists its parameters once, beside its Params struct: name,
// quantity (which fixes the unit), description, accepted range and the key
// older platform files use. The default is the struct's own initializer, so
// there is exactly one. Loaders read every section through the list
// (platforms/parameter_reader.h), `fabricsim params` prints it, and reports
// record the resolved values with it.
//
// Values are held as doubles in base units: bytes/s, picoseconds, bytes,
// FLOP/s, Hz; counts, plain numbers and flags as themselves; a choice as the
// index of its option.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "tlm/kernel/units.h"

namespace fabricsim {

enum class Quantity { kBandwidth, kDuration, kBytes, kCount, kFlopRate, kFrequency, kNumber, kFlag, kChoice };

/// The units a value of `q` may be written in, for messages: "B/s, kB/s, ...".
std::string accepted_units(Quantity q);

/// "400 GB/s", "500 ns", "16 GiB", "989 TFLOP/s", "1 GHz", "64", "true",
/// "pull" -> the value in base units. A bare number is accepted for bytes and
/// counts only. Returns the reason when `text` is not such a value.
struct ParsedQuantity {
  std::optional<double> value;
  std::string error;
};
ParsedQuantity parse_quantity(const std::string& text, Quantity q, const std::vector<std::string>& choices = {});

/// The value written in the largest unit that keeps it at least 1, exactly
/// enough that parse_quantity gives it back.
std::string format_quantity(double value, Quantity q, const std::vector<std::string>& choices = {});

/// What a parameter is, apart from where it is stored.
struct ParamInfo {
  std::string name;  // the key in a platform file: "bandwidth"
  Quantity quantity = Quantity::kNumber;
  std::string description;
  double min = 0, max = 0;           // accepted range, base units
  bool min_exclusive = false;        // (min, max] rather than [min, max]
  bool zero_unlimited = false;       // bandwidths: 0 is also accepted, meaning no limit
  std::string legacy_key;            // the key older files use, a bare number: "bandwidth_GBps"
  double legacy_scale = 1;           // base units per unit of legacy_key
  std::string legacy_unit;           // for messages: "GB/s"
  std::vector<std::string> choices;  // kChoice: the options, in index order
  std::string follows;               // unset, it takes this other parameter's value
};

/// The ranges each quantity may take unless a parameter narrows them
/// (docs/platforms.md, "Limits").
namespace limits {
constexpr double kMaxLatencyNs = 1e9;                        // 1 s for any latency or per-message cost
constexpr double kMinGBps = 1e-6;                            // 1 kB/s
constexpr double kMaxGBps = 1e6;                             // 1 PB/s
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 50;  // 1 PiB for any buffer or size
constexpr std::uint64_t kMaxChunks = 4096;  // pipelined chunks per collective (ASTRA-sim studies use up to 1,024)
constexpr double kMaxCount = 1 << 20;       // channels, slots, streams...
constexpr double kMaxFlops = 1e18;          // 10^6 TFLOP/s
constexpr double kMaxHz = 1e11;             // 100 GHz
}  // namespace limits

/// Sets `p`'s range to its quantity's (limits above).
void default_param_range(ParamInfo& p);

/// Whether `v` lies in the parameter's range; else the message naming it.
std::optional<std::string> out_of_range(const ParamInfo& p, double v);

template <class P>
struct Param {
  ParamInfo info;
  std::function<double(const P&)> get;
  std::function<void(P&, double)> set;
};

namespace param_detail {
// Base-unit conversions for the field types parameters are stored in.
inline double to_base(const Bandwidth& b) {
  return b.bytes_per_ps() * 1e12;
}
inline void from_base(double v, Bandwidth& b) {
  b = Bandwidth::bytes_per_second(v);
}
inline double to_base(bool b) {
  return b ? 1 : 0;
}
inline void from_base(double v, bool& b) {
  b = v != 0;
}
template <class T>
double to_base(const T& x) {
  return static_cast<double>(x);
}
template <class T>
void from_base(double v, T& x) {
  if constexpr (std::is_integral_v<T>) {
    // Saturate: a value past the type (a narrower field following a wider
    // one's default) must not be an out-of-range conversion.
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    x = v >= hi ? std::numeric_limits<T>::max() : v <= lo ? std::numeric_limits<T>::lowest() : static_cast<T>(v);
  } else {
    x = static_cast<T>(v);
  }
}
}  // namespace param_detail

/// A component's parameters, declared in the order they are documented.
template <class P>
class ParamTable {
 public:
  explicit ParamTable(std::string type, std::string description)
      : type_(std::move(type)), description_(std::move(description)) {}

  const std::string& type() const { return type_; }
  const std::string& description() const { return description_; }
  const std::vector<Param<P>>& params() const { return params_; }
  const Param<P>* find(const std::string& name) const {
    for (const auto& p : params_) {
      if (p.info.name == name) return &p;
    }
    return nullptr;
  }

  /// A parameter stored in `field`; its range defaults to the quantity's.
  template <class T>
  ParamTable& add(const char* name, Quantity q, T P::*field, const char* description) {
    Param<P> p;
    p.info.name = name;
    p.info.quantity = q;
    p.info.description = description;
    default_param_range(p.info);
    p.get = [field](const P& s) { return param_detail::to_base(s.*field); };
    p.set = [field](P& s, double v) { param_detail::from_base(v, s.*field); };
    params_.push_back(std::move(p));
    return *this;
  }
  /// A choice among `options`, stored as an enum (or bool) whose values are
  /// the options' indexes.
  template <class T>
  ParamTable& choice(const char* name, T P::*field, std::vector<std::string> options, const char* description) {
    add(name, Quantity::kChoice, field, description);
    params_.back().info.choices = std::move(options);
    params_.back().info.max = static_cast<double>(params_.back().info.choices.size() - 1);
    params_.back().get = [field](const P& s) { return static_cast<double>(static_cast<int>(s.*field)); };
    params_.back().set = [field](P& s, double v) { s.*field = static_cast<T>(static_cast<int>(v)); };
    return *this;
  }
  /// Every parameter of `inner`, stored in `member` of P.
  template <class Q>
  ParamTable& include(Q P::*member, const ParamTable<Q>& inner) {
    for (const Param<Q>& q : inner.params()) {
      Param<P> p;
      p.info = q.info;
      p.get = [member, get = q.get](const P& s) { return get(s.*member); };
      p.set = [member, set = q.set](P& s, double v) { set(s.*member, v); };
      params_.push_back(std::move(p));
    }
    return *this;
  }

  // Modifiers of the parameter declared last.
  ParamTable& range(double min, double max, bool min_exclusive = false) {
    last().min = min;
    last().max = max;
    last().min_exclusive = min_exclusive;
    return *this;
  }
  ParamTable& zero_unlimited() {
    last().zero_unlimited = true;
    return *this;
  }
  /// Older files give it as `key`, a bare number in `unit` (`scale` base units each).
  ParamTable& legacy(const char* key, double scale, const char* unit) {
    last().legacy_key = key;
    last().legacy_scale = scale;
    last().legacy_unit = unit;
    return *this;
  }
  ParamTable& follows(const char* other) {
    last().follows = other;
    return *this;
  }

  /// The declared defaults: a default-constructed P.
  P defaults() const { return P{}; }

 private:
  ParamInfo& last() { return params_.back().info; }

  std::string type_, description_;
  std::vector<Param<P>> params_;
};

/// One row of `fabricsim params`: a parameter and its default, as text.
struct ParamRow {
  std::string name, unit, default_value, range, legacy_key, description;
};

ParamRow param_row(const ParamInfo& p, double default_value);

template <class P>
std::vector<ParamRow> param_rows(const ParamTable<P>& table) {
  const P defaults = table.defaults();
  std::vector<ParamRow> rows;
  for (const auto& p : table.params()) rows.push_back(param_row(p.info, p.get(defaults)));
  return rows;
}

/// name -> value as text ("50 GB/s"), in declaration order.
template <class P>
std::vector<std::pair<std::string, std::string>> param_values(const ParamTable<P>& table, const P& values) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : table.params()) {
    out.emplace_back(p.info.name, format_quantity(p.get(values), p.info.quantity, p.info.choices));
  }
  return out;
}

}  // namespace fabricsim
