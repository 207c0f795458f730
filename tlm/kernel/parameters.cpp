#include "tlm/kernel/parameters.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace fabricsim {

namespace {

struct UnitScale {
  const char* name;
  double scale;  // base units per one of it
};

// The units each quantity may be written in; the first of each list is the
// one format_quantity prefers, largest first.
const std::vector<UnitScale>& units_of(Quantity q) {
  static const std::vector<UnitScale> none;
  static const std::vector<UnitScale> bandwidth = {{"PB/s", 1e15},
                                                   {"TB/s", 1e12},
                                                   {"GB/s", 1e9},
                                                   {"MB/s", 1e6},
                                                   {"kB/s", 1e3},
                                                   {"B/s", 1},
                                                   {"TiB/s", 1099511627776.0},
                                                   {"GiB/s", 1073741824.0},
                                                   {"MiB/s", 1048576.0},
                                                   {"KiB/s", 1024.0},
                                                   {"Tb/s", 1e12 / 8},
                                                   {"Gb/s", 1e9 / 8},
                                                   {"Mb/s", 1e6 / 8},
                                                   {"kb/s", 1e3 / 8}};
  static const std::vector<UnitScale> duration = {{"s", 1e12}, {"ms", 1e9}, {"us", 1e6}, {"ns", 1e3}, {"ps", 1}};
  static const std::vector<UnitScale> bytes = {{"PiB", 1125899906842624.0},
                                               {"TiB", 1099511627776.0},
                                               {"GiB", 1073741824.0},
                                               {"MiB", 1048576.0},
                                               {"KiB", 1024.0},
                                               {"B", 1},
                                               {"PB", 1e15},
                                               {"TB", 1e12},
                                               {"GB", 1e9},
                                               {"MB", 1e6},
                                               {"kB", 1e3}};
  static const std::vector<UnitScale> flops = {
      {"PFLOP/s", 1e15}, {"TFLOP/s", 1e12}, {"GFLOP/s", 1e9}, {"MFLOP/s", 1e6}, {"FLOP/s", 1}};
  static const std::vector<UnitScale> frequency = {{"GHz", 1e9}, {"MHz", 1e6}, {"kHz", 1e3}, {"Hz", 1}};
  switch (q) {
    case Quantity::kBandwidth:
      return bandwidth;
    case Quantity::kDuration:
      return duration;
    case Quantity::kBytes:
      return bytes;
    case Quantity::kFlopRate:
      return flops;
    case Quantity::kFrequency:
      return frequency;
    default:
      return none;
  }
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

/// A finite decimal number, the whole of `s`.
std::optional<double> plain_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(s.c_str(), &end);
  if (*end != '\0' || !std::isfinite(d) || errno == ERANGE) return std::nullopt;
  // strtod also reads "nan", "inf" and hex; a platform file means decimal.
  for (char c : s) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) {
      return std::nullopt;
    }
  }
  return d;
}

std::string show(double d, int digits = 15) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, d);
  return buf;
}

const char* quantity_name(Quantity q) {
  switch (q) {
    case Quantity::kBandwidth:
      return "a bandwidth";
    case Quantity::kDuration:
      return "a duration";
    case Quantity::kBytes:
      return "a size in bytes";
    case Quantity::kCount:
      return "a whole number";
    case Quantity::kFlopRate:
      return "a compute rate";
    case Quantity::kFrequency:
      return "a frequency";
    case Quantity::kNumber:
      return "a number";
    case Quantity::kFlag:
      return "true or false";
    case Quantity::kChoice:
      return "one of the options";
  }
  return "a value";
}

const char* example(Quantity q) {
  switch (q) {
    case Quantity::kBandwidth:
      return "400 GB/s";
    case Quantity::kDuration:
      return "500 ns";
    case Quantity::kBytes:
      return "16 GiB";
    case Quantity::kFlopRate:
      return "989 TFLOP/s";
    case Quantity::kFrequency:
      return "1.5 GHz";
    default:
      return "";
  }
}

}  // namespace

std::string accepted_units(Quantity q) {
  std::string out;
  for (const UnitScale& u : units_of(q)) out += std::string(out.empty() ? "" : ", ") + u.name;
  return out;
}

ParsedQuantity parse_quantity(const std::string& raw, Quantity q, const std::vector<std::string>& choices) {
  const std::string text = trim(raw);
  ParsedQuantity r;
  if (q == Quantity::kFlag) {
    if (text == "true") r.value = 1;
    if (text == "false") r.value = 0;
    if (!r.value) r.error = "must be true or false";
    return r;
  }
  if (q == Quantity::kChoice) {
    std::string list;
    for (std::size_t i = 0; i < choices.size(); ++i) {
      if (text == choices[i]) r.value = static_cast<double>(i);
      list += (i ? ", " : "") + choices[i];
    }
    if (!r.value) r.error = "must be one of " + list;
    return r;
  }
  if (q == Quantity::kCount) {
    bool digits = !text.empty() && text.size() <= 19;
    for (char c : text) digits &= c >= '0' && c <= '9';
    if (digits) {
      r.value = static_cast<double>(std::strtoull(text.c_str(), nullptr, 10));
    } else {
      r.error = "must be a whole number";
    }
    return r;
  }
  if (q == Quantity::kBandwidth && text == "unlimited") {
    r.value = 0;
    return r;
  }
  // A number, then (after optional spaces) a unit.
  std::size_t split = 0;
  while (split < text.size() && (std::isdigit(static_cast<unsigned char>(text[split])) || text[split] == '.' ||
                                 text[split] == '-' || text[split] == '+' ||
                                 ((text[split] == 'e' || text[split] == 'E') && split > 0 && split + 1 < text.size() &&
                                  (std::isdigit(static_cast<unsigned char>(text[split + 1])) ||
                                   text[split + 1] == '-' || text[split + 1] == '+')))) {
    ++split;
  }
  const std::optional<double> number = plain_number(text.substr(0, split));
  const std::string unit = trim(text.substr(split));
  const auto& units = units_of(q);
  const std::string accepted = units.empty() ? "" : " (" + accepted_units(q) + "), e.g. \"" + example(q) + "\"";
  if (!number) {
    r.error = units.empty() ? "must be a finite number" : std::string("must be a number and a unit") + accepted;
    return r;
  }
  if (unit.empty()) {
    // Zero needs no unit; bytes may be counted bare.
    if (q == Quantity::kNumber || q == Quantity::kBytes || *number == 0) {
      r.value = *number;
    } else {
      r.error = std::string("needs a unit") + accepted;
    }
  } else {
    for (const UnitScale& u : units) {
      if (unit == u.name) r.value = *number * u.scale;
    }
    if (!r.value) {
      r.error = units.empty() ? "must be a number without a unit"
                              : "has unit \"" + unit + "\", not a unit of " + quantity_name(q) + accepted;
      return r;
    }
  }
  if (q == Quantity::kBytes && *r.value != std::floor(*r.value)) {
    r.error = "is not a whole number of bytes";
    r.value.reset();
  }
  return r;
}

std::string format_quantity(double value, Quantity q, const std::vector<std::string>& choices) {
  switch (q) {
    case Quantity::kFlag:
      return value != 0 ? "true" : "false";
    case Quantity::kChoice: {
      const auto i = static_cast<std::size_t>(value);
      return i < choices.size() ? choices[i] : show(value);
    }
    case Quantity::kCount:
    case Quantity::kNumber:
      return show(value);
    case Quantity::kBandwidth:
      if (value == 0) return "unlimited";
      break;
    default:
      break;
  }
  if (value == 0) return "0";
  const auto& units = units_of(q);
  if (q == Quantity::kBytes) {
    // The largest binary unit that divides it; else bytes.
    for (const UnitScale& u : units) {
      if (u.scale == 1) break;
      if (std::fmod(value, u.scale) == 0) return show(value / u.scale) + " " + u.name;
    }
    return show(value) + " B";
  }
  // The largest unit in which it is at least 1; bandwidths in the decimal
  // units datasheets quote, up to GB/s.
  for (const UnitScale& u : units) {
    if (q == Quantity::kBandwidth && (u.scale > 1e9 || u.scale != std::pow(10.0, std::round(std::log10(u.scale))))) {
      continue;
    }
    if (std::fabs(value) >= u.scale || u.scale == 1) return show(value / u.scale) + " " + u.name;
  }
  return show(value);
}

void default_param_range(ParamInfo& p) {
  switch (p.quantity) {
    case Quantity::kBandwidth:
      p.min = limits::kMinGBps * 1e9;
      p.max = limits::kMaxGBps * 1e9;
      break;
    case Quantity::kDuration:
      p.min = 0;
      p.max = limits::kMaxLatencyNs * 1e3;
      break;
    case Quantity::kBytes:
      p.min = 0;
      p.max = static_cast<double>(limits::kMaxBytes);
      break;
    case Quantity::kCount:
      p.min = 0;
      p.max = limits::kMaxCount;
      break;
    case Quantity::kFlopRate:
      p.min = 0;
      p.max = limits::kMaxFlops;
      p.min_exclusive = true;
      break;
    case Quantity::kFrequency:
      p.min = 1e3;
      p.max = limits::kMaxHz;
      break;
    case Quantity::kNumber:
      p.min = -1e300;
      p.max = 1e300;
      break;
    case Quantity::kFlag:
    case Quantity::kChoice:
      p.min = 0;
      p.max = 1;
      break;
  }
}

std::optional<std::string> out_of_range(const ParamInfo& p, double v) {
  if (p.zero_unlimited && v == 0) return std::nullopt;
  const bool low = p.min_exclusive ? v <= p.min : v < p.min;
  if (!low && v <= p.max) return std::nullopt;
  std::string range = (p.min_exclusive ? "above " : "from ") + format_quantity(p.min, p.quantity, p.choices) + " to " +
                      format_quantity(p.max, p.quantity, p.choices);
  if (p.zero_unlimited) range += ", or 0 for no limit";
  return "is " + format_quantity(v, p.quantity, p.choices) + ": it must be " + range;
}

ParamRow param_row(const ParamInfo& p, double default_value) {
  ParamRow row;
  row.name = p.name;
  switch (p.quantity) {
    case Quantity::kChoice: {
      for (const auto& c : p.choices) row.unit += (row.unit.empty() ? "" : "|") + c;
      break;
    }
    case Quantity::kFlag:
      row.unit = "true|false";
      break;
    case Quantity::kCount:
      row.unit = "count";
      break;
    case Quantity::kNumber:
      row.unit = "number";
      break;
    case Quantity::kBandwidth:
      row.unit = "GB/s";
      break;
    case Quantity::kDuration:
      row.unit = "ns";
      break;
    case Quantity::kBytes:
      row.unit = "bytes";
      break;
    case Quantity::kFlopRate:
      row.unit = "FLOP/s";
      break;
    case Quantity::kFrequency:
      row.unit = "Hz";
      break;
  }
  row.default_value = format_quantity(default_value, p.quantity, p.choices);
  if (!p.follows.empty()) row.default_value = "= " + p.follows;
  if (p.quantity != Quantity::kChoice && p.quantity != Quantity::kFlag) {
    row.range = (p.min_exclusive ? "(" : "[") + format_quantity(p.min, p.quantity, p.choices) + ", " +
                format_quantity(p.max, p.quantity, p.choices) + "]";
    if (p.zero_unlimited) row.range += " or unlimited";
  }
  row.legacy_key = p.legacy_key;
  row.description = p.description;
  return row;
}

}  // namespace fabricsim
