// Reading YAML input as validated numbers, with errors that say where.
//
// Every number a platform file gives goes through one of these getters: it
// must be finite, in the range its unit allows, and (for whole numbers)
// written as one, so NaN, infinities, wrap-around at 2^32 or 2^64 and
// out-of-range values stop with "file:line:column: what, accepted range"
// (exit 2) instead of becoming a wrong answer.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "platforms/assembly/platform_spec.h"
#include "tlm/kernel/parameters.h"
#include "tlm/kernel/time.h"
#include "tlm/util/errors.h"
#include "tlm/util/json_input.h"

namespace fabricsim {

/// The ranges a platform's quantities may take (docs/platforms.md, "Limits");
/// those of parameters are in tlm/kernel/parameters.h.
namespace limits {
constexpr int kMaxNpus = 1 << 17;  // 131,072 NPUs: past what one machine can hold (docs/performance.md)
}  // namespace limits

/// A value given on the command line in place of a file's (`--set
/// PATH=VALUE`): PATH is the keys from the top, dot-separated, with list
/// entries by their index (fabrics.0.link.bandwidth); VALUE is YAML (400 GB/s,
/// [ring, in_switch]).
struct YamlOverride {
  std::string path;
  std::string value;
  std::string scope;  // "system." for the system file's (the flag's prefix)
  std::string flag() const { return "--set " + scope + path + "=" + text_excerpt(value); }
};
/// "PATH=VALUE" as an override; InputError naming the flag when malformed.
YamlOverride parse_override(const std::string& text);

/// An override's value (YAML) as JSON, for the JSON settings files: numbers,
/// true/false, text, lists and mappings. InputError naming the flag when it
/// is not valid YAML.
nlohmann::json yaml_value_as_json(const YamlOverride& o);

/// The nodes overrides put into a document, each with the flag that put it
/// there: an error at one of them names the flag instead of a line.
struct OverrideOrigins {
  std::vector<std::pair<YAML::Node, std::string>> nodes;
  const std::string* flag_of(const YAML::Node& node) const;
};

/// Applies `overrides` to `root`, in order, before the document is read, so a
/// value gets exactly the checks the file would give it. A path through a
/// missing key makes the mappings it needs (unknown names are refused by the
/// reader); a list index must exist.
OverrideOrigins apply_overrides(YAML::Node& root, const std::vector<YamlOverride>& overrides);

class YamlInput {
 public:
  explicit YamlInput(std::string file, std::shared_ptr<const OverrideOrigins> origins = nullptr)
      : file_(std::move(file)), origins_(std::move(origins)) {}
  const std::string& file() const { return file_; }

  /// "file:line:column: what", thrown as InputError.
  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const;
  /// Where a node was written: "file:line:column", or the --set flag that gave it.
  std::string where(const YAML::Node& at) const;
  [[noreturn]] void fail(const std::string& what) const;

  /// Rejects keys of `map` not in `known`; `what` names the section.
  void only_keys(const YAML::Node& map, std::initializer_list<const char*> known, const std::string& what) const;
  void only_keys(const YAML::Node& map, const std::vector<std::string>& known, const std::string& what) const;
  void require_map(const YAML::Node& node, const std::string& what) const;

  /// A whole number written as digits, in [min, max].
  std::uint64_t count(const YAML::Node& map, const char* key, std::uint64_t fallback, std::uint64_t min = 0,
                      std::uint64_t max = limits::kMaxBytes) const;
  /// A number at `node` itself (a list entry), as `number` checks it.
  double number_at(const YAML::Node& node, const std::string& what, double min, double max,
                   bool min_exclusive = false) const;
  std::uint64_t count_at(const YAML::Node& node, const std::string& what, std::uint64_t min, std::uint64_t max) const;

  /// The parameter `p`, if `map` gives it under its name ("400 GB/s") or its
  /// legacy key (a bare number in the legacy unit), in base units and in
  /// range. Giving both is refused.
  std::optional<double> param(const YAML::Node& map, const ParamInfo& p) const;

  std::string text(const YAML::Node& map, const char* key, const std::string& fallback) const;
  const YAML::Node required(const YAML::Node& map, const char* key, const std::string& what) const;

 private:
  std::string file_;
  std::shared_ptr<const OverrideOrigins> origins_;
};

/// A list of whole numbers from 0 to `max` (`what` names it in messages).
std::vector<int> whole_number_list(const YamlInput& in, const YAML::Node& node, const std::string& what, int max);

/// Reads the parameters of `table` that `map` gives into `values` (the rest
/// keep theirs), after refusing keys that are neither its parameters, their
/// legacy keys, nor `other_keys`. `what` names the section in messages.
template <class P>
void read_params(const YamlInput& in, const YAML::Node& map, const ParamTable<P>& table, P& values,
                 const std::string& what, const std::vector<std::string>& other_keys = {}) {
  std::vector<std::string> known = other_keys;
  for (const auto& p : table.params()) {
    known.push_back(p.info.name);
    if (!p.info.legacy_key.empty()) known.push_back(p.info.legacy_key);
  }
  in.only_keys(map, known, what);
  std::vector<const Param<P>*> unset;
  for (const auto& p : table.params()) {
    if (const auto v = in.param(map, p.info)) {
      p.set(values, *v);
    } else if (!p.info.follows.empty()) {
      unset.push_back(&p);
    }
  }
  for (const Param<P>* p : unset) p->set(values, table.find(p->info.follows)->get(values));
}

/// Reads and parses a YAML file, refusing what is not a readable regular
/// file, and checks the whole document: keys are scalars, no key appears
/// twice in a mapping, text is UTF-8.
YAML::Node load_yaml_file(const std::string& path, const std::string& what = "platform file");
/// The same checks on YAML text already read (`path` names it in messages).
YAML::Node parse_yaml_text(const std::string& text, const std::string& path);

/// A YAML file with command-line overrides applied, and the input that reads
/// it (an error at an overridden value names the flag).
struct YamlDocument {
  YAML::Node root;
  YamlInput in;
};
YamlDocument load_yaml_document(const std::string& path, const std::vector<YamlOverride>& overrides);

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
