#include "platforms/assembly/yaml_input.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "tlm/util/input_file.h"
#include "tlm/util/json_input.h"

namespace fabricsim {

namespace {

std::string show(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

std::string quoted(const std::string& key) {
  return "\"" + key + "\"";
}

/// The scalar as written, for messages (never throws).
std::string written(const YAML::Node& v) {
  return v.IsScalar() ? text_excerpt(v.Scalar()) : std::string(v.IsSequence() ? "a list" : "a mapping");
}

/// Records whether a document has a value, and where its first one is.
class DocumentProbe final : public YAML::EventHandler {
 public:
  bool content = false;
  YAML::Mark first;
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { note(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { note(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    note(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    note(m);
  }
  void OnMapEnd() override {}

 private:
  void note(const YAML::Mark& m) {
    if (!content) content = true, first = m;
  }
};

/// The first YAML document of `text`, and where a second one with a value
/// starts, if there is one. Not YAML::LoadAll: on some malformed input
/// (",to\xfc\xff\xff1", found by fuzzing) its parser yields documents
/// without end, and LoadAll gathers them until memory runs out; here the
/// parser is asked for two at most. Throws YAML::ParserException.
std::pair<YAML::Node, std::optional<YAML::Mark>> first_document(const std::string& text) {
  YAML::Node root = YAML::Load(text);
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentProbe skip, second;
  std::optional<YAML::Mark> next;
  if (parser.HandleNextDocument(skip) && parser.HandleNextDocument(second) && second.content) next = second.first;
  return {root, next};
}

bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t extra = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

}  // namespace

std::string YamlInput::where(const YAML::Node& at) const {
  if (origins_) {
    if (const std::string* flag = origins_->flag_of(at)) return *flag + " (in " + file_ + ")";
  }
  const YAML::Mark m = at.Mark();
  std::ostringstream os;
  os << file_;
  if (m.line >= 0) os << ":" << m.line + 1 << ":" << m.column + 1;
  return os.str();
}

void YamlInput::fail(const YAML::Node& at, const std::string& what) const {
  if (origins_) {
    if (const std::string* flag = origins_->flag_of(at)) throw InputError(*flag + ": " + what + " (in " + file_ + ")");
  }
  throw InputError(where(at) + ": " + what);
}

void YamlInput::fail(const std::string& what) const {
  throw InputError(file_ + ": " + what);
}

void YamlInput::require_map(const YAML::Node& node, const std::string& what) const {
  if (!node.IsMap()) fail(node, what + " must be a mapping (key: value)");
}

void YamlInput::only_keys(const YAML::Node& map, std::initializer_list<const char*> known,
                          const std::string& what) const {
  only_keys(map, std::vector<std::string>(known.begin(), known.end()), what);
}

void YamlInput::only_keys(const YAML::Node& map, const std::vector<std::string>& known, const std::string& what) const {
  require_map(map, what);
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();  // load_yaml_file made keys scalars
    bool ok = false;
    for (const auto& k : known) ok |= key == k;
    if (!ok) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      fail(kv.first, "unknown key \"" + key + "\" in " + what + " (known: " + list + ")");
    }
  }
}

std::optional<double> YamlInput::param(const YAML::Node& map, const ParamInfo& p) const {
  const YAML::Node v = map[p.name];
  // A default-constructed YAML::Node is a defined null: look up only real keys.
  const bool has_legacy = !p.legacy_key.empty() && map[p.legacy_key];
  const YAML::Node legacy = has_legacy ? map[p.legacy_key] : YAML::Node();
  if (v && has_legacy)
    fail(legacy, quoted(p.name) + " and " + quoted(p.legacy_key) + " are the same parameter; give one");
  if (!v && !has_legacy) return std::nullopt;
  if (has_legacy) {
    // Older keys: a bare number in the unit the key names, checked as before.
    const std::string what = quoted(p.legacy_key) + " (" + p.legacy_unit + ")";
    double base = 0;
    if (p.quantity == Quantity::kBytes && p.legacy_scale == 1) {
      base = static_cast<double>(
          count_at(legacy, what, static_cast<std::uint64_t>(p.min), static_cast<std::uint64_t>(p.max)));
    } else {
      // Bandwidths read from 0 first so that 0 can mean "no limit".
      const bool bandwidth = p.quantity == Quantity::kBandwidth;
      const double min = p.min / p.legacy_scale;
      const double x =
          number_at(legacy, what, bandwidth ? 0 : min, p.max / p.legacy_scale, !bandwidth && p.min_exclusive);
      if (bandwidth && !(p.zero_unlimited && x == 0) && x < min) {
        fail(legacy, what + " is " + show(x) + ": it must be >= " + show(min) +
                         (p.zero_unlimited ? " (or 0 for no limit)" : ""));
      }
      base = x * p.legacy_scale;
      if (p.quantity == Quantity::kBytes) base = std::max(p.min, std::round(base));
    }
    return base;
  }
  if (p.quantity == Quantity::kFlag) {
    bool b = false;
    if (!v.IsScalar() || !YAML::convert<bool>::decode(v, b)) fail(v, quoted(p.name) + " must be true or false");
    return b ? 1.0 : 0.0;
  }
  if (!v.IsScalar()) fail(v, quoted(p.name) + " must be a single value, not " + written(v));
  const ParsedQuantity parsed = parse_quantity(v.Scalar(), p.quantity, p.choices);
  if (!parsed.value) fail(v, quoted(p.name) + " is \"" + written(v) + "\": it " + parsed.error);
  if (const auto bad = out_of_range(p, *parsed.value)) fail(v, quoted(p.name) + " " + *bad);
  return *parsed.value;
}

double YamlInput::number_at(const YAML::Node& v, const std::string& what, double min, double max,
                            bool min_exclusive) const {
  if (!v.IsScalar()) fail(v, what + " must be a number, not " + written(v));
  // yaml-cpp reads .nan and .inf as numbers; so does strtod "nan" and "inf".
  const std::string& s = v.Scalar();
  char* end = nullptr;
  errno = 0;
  const double d = s.empty() ? NAN : std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(d) || errno == ERANGE) {
    fail(v, what + " must be a finite number " + (min_exclusive ? "> " : ">= ") + show(min) + " and <= " + show(max) +
                ", not \"" + written(v) + "\"");
  }
  if (d > max || d < min || (min_exclusive && d == min)) {
    fail(v, what + " is " + show(d) + ": it must be " + (min_exclusive ? "> " : ">= ") + show(min) +
                " and <= " + show(max));
  }
  return d;
}

std::uint64_t YamlInput::count_at(const YAML::Node& v, const std::string& what, std::uint64_t min,
                                  std::uint64_t max) const {
  if (!v.IsScalar()) fail(v, what + " must be a whole number, not " + written(v));
  const std::string& s = v.Scalar();
  bool digits = !s.empty();
  for (char c : s) digits &= c >= '0' && c <= '9';
  errno = 0;
  const unsigned long long x = digits ? std::strtoull(s.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE) {
    fail(v, what + " must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", not \"" +
                written(v) + "\"");
  }
  if (x < min || x > max) {
    fail(v, what + " is " + s + ": it must be from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return x;
}

std::uint64_t YamlInput::count(const YAML::Node& map, const char* key, std::uint64_t fallback, std::uint64_t min,
                               std::uint64_t max) const {
  const YAML::Node v = map[key];
  if (!v) return fallback;
  return count_at(v, quoted(key), min, max);
}

std::string YamlInput::text(const YAML::Node& map, const char* key, const std::string& fallback) const {
  const YAML::Node v = map[key];
  if (!v) return fallback;
  if (!v.IsScalar()) fail(v, quoted(key) + " must be a single value");
  return v.Scalar();
}

const YAML::Node YamlInput::required(const YAML::Node& map, const char* key, const std::string& what) const {
  const YAML::Node v = map[key];
  if (!v) fail(map, "missing \"" + std::string(key) + "\" in " + what);
  return v;
}

namespace {

/// Nodes a document may have once its aliases are expanded: nested aliases
/// ("billion laughs") would otherwise take for ever to walk here and in the
/// loader. The largest shipped netlist has a few thousand.
constexpr std::uint64_t kMaxExpandedNodes = 4000000;

void check_document(const YamlInput& in, const YAML::Node& node, int depth, std::uint64_t& visited) {
  if (depth > 64) in.fail(node, "nested more than 64 levels deep");
  if (++visited > kMaxExpandedNodes) {
    in.fail(node, "the document has more than " + std::to_string(kMaxExpandedNodes) +
                      " values once its aliases (*name) are expanded");
  }
  if (node.IsScalar()) {
    if (!valid_utf8(node.Scalar())) in.fail(node, "text that is not UTF-8 (save the file as UTF-8)");
  } else if (node.IsSequence()) {
    for (const auto& v : node) check_document(in, v, depth + 1, visited);
  } else if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) in.fail(kv.first, "a key must be a plain name, not " + written(kv.first));
      check_document(in, kv.first, depth + 1, visited);
      if (!seen.insert(kv.first.Scalar()).second) {
        in.fail(kv.first, "the key \"" + kv.first.Scalar() + "\" appears twice in this mapping");
      }
      check_document(in, kv.second, depth + 1, visited);
    }
  }
}

}  // namespace

YamlOverride parse_override(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError("--set " + text + ": expected PATH=VALUE, e.g. --set fabrics.0.link.bandwidth=\"400 GB/s\"");
  }
  YamlOverride o{text.substr(0, eq), text.substr(eq + 1), ""};
  if (o.path.front() == '.' || o.path.back() == '.' || o.path.find("..") != std::string::npos) {
    throw InputError(o.flag() + ": a path is keys separated by single dots, e.g. fabrics.0.link.bandwidth");
  }
  if (o.value.empty()) throw InputError(o.flag() + ": no value after '='");
  return o;
}

namespace {

YAML::Node load_override_value(const YamlOverride& o) {
  std::pair<YAML::Node, std::optional<YAML::Mark>> documents;
  try {
    documents = first_document(o.value);
  } catch (const YAML::ParserException& e) {
    throw InputError(o.flag() + ": the value is not valid YAML: " + e.msg);
  }
  if (documents.second) throw InputError(o.flag() + ": the value holds several YAML documents (--- or ...); give one");
  YAML::Node value = documents.first;
  if (!value || value.IsNull()) throw InputError(o.flag() + ": no value (null)");
  // The checks a file's values get: UTF-8, no key twice, the depth and
  // alias-expansion bounds (a short value of nested aliases expands to
  // billions of nodes).
  std::uint64_t visited = 0;
  check_document(YamlInput(o.flag() + " (its value)"), value, 0, visited);
  return value;
}

nlohmann::json as_json(const YAML::Node& n) {
  if (n.IsSequence()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& v : n) a.push_back(as_json(v));
    return a;
  }
  if (n.IsMap()) {
    nlohmann::json m = nlohmann::json::object();
    for (const auto& kv : n) m[kv.first.Scalar()] = as_json(kv.second);
    return m;
  }
  const std::string& s = n.Scalar();
  if (n.Tag() != "!" && !s.empty()) {  // unquoted: a number or a boolean if it reads as one
    if (s == "true" || s == "false") return s == "true";
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(s.c_str(), &end);
    if (end == s.c_str() + s.size() && errno == 0) return d;
  }
  return s;
}

}  // namespace

nlohmann::json yaml_value_as_json(const YamlOverride& o) {
  return as_json(load_override_value(o));
}

const std::string* OverrideOrigins::flag_of(const YAML::Node& node) const {
  // Newest first: a later --set of the same path rebinds the node an earlier one recorded.
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    if (it->first.is(node)) return &it->second;
  }
  return nullptr;
}

namespace {

/// Records `node` and everything inside it as made by `flag`.
void record_origin(OverrideOrigins& origins, const YAML::Node& node, const std::string& flag) {
  origins.nodes.emplace_back(node, flag);
  if (node.IsSequence()) {
    for (const auto& v : node) record_origin(origins, v, flag);
  } else if (node.IsMap()) {
    for (const auto& kv : node) {
      record_origin(origins, kv.first, flag);
      record_origin(origins, kv.second, flag);
    }
  }
}

/// The key node under which `map` holds `key` (for errors at the key).
YAML::Node key_node(const YAML::Node& map, const std::string& key) {
  for (const auto& kv : map) {
    if (kv.first.Scalar() == key) return kv.first;
  }
  return YAML::Node();
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    keys.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) return keys;
    start = dot + 1;
  }
}

}  // namespace

namespace {

/// The paths `keys` stands for in `root`: a "*" is every entry of the list
/// it is at (fabrics.*.transport.model: each fabric's).
void expand_wildcards(const YAML::Node& node, const std::vector<std::string>& keys, std::size_t k,
                      std::vector<std::string>& walked, const std::string& flag,
                      std::vector<std::vector<std::string>>& out) {
  if (k == keys.size()) {
    out.push_back(walked);
    return;
  }
  if (keys[k] == "*") {
    if (!node || !node.IsSequence()) {
      std::string at;
      for (const auto& w : walked) at += (at.empty() ? "" : ".") + w;
      throw InputError(flag + ": \"*\" stands for every entry of a list, and " +
                       (at.empty() ? std::string("the top") : "\"" + at + "\"") + " is not a list");
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      walked.push_back(std::to_string(i));
      expand_wildcards(node[i], keys, k + 1, walked, flag, out);
      walked.pop_back();
    }
    return;
  }
  walked.push_back(keys[k]);
  const std::string& key = keys[k];
  const bool numeric = !key.empty() && key.size() < 10 && key.find_first_not_of("0123456789") == std::string::npos;
  if (node && node.IsSequence() && numeric && std::stoul(key) < node.size()) {
    expand_wildcards(node[std::stoul(key)], keys, k + 1, walked, flag, out);
  } else if (node && node.IsMap()) {
    expand_wildcards(node[key], keys, k + 1, walked, flag, out);
  } else {  // not there yet: the rest is made as it is set, and holds no list
    expand_wildcards(YAML::Node(), keys, k + 1, walked, flag, out);
  }
  walked.pop_back();
}

}  // namespace

OverrideOrigins apply_overrides(YAML::Node& root, const std::vector<YamlOverride>& overrides) {
  OverrideOrigins origins;
  for (const YamlOverride& o : overrides) {
    const std::string flag = o.flag();
    const YAML::Node value = load_override_value(o);
    std::vector<std::vector<std::string>> paths;
    std::vector<std::string> walked_keys;
    expand_wildcards(root, split_path(o.path), 0, walked_keys, flag, paths);
    for (const std::vector<std::string>& keys : paths) {
      YAML::Node node = root;
      std::string walked;
      for (std::size_t k = 0; k < keys.size(); ++k) {
        const std::string& key = keys[k];
        const bool last = k + 1 == keys.size();
        const std::string here = walked.empty() ? "the top" : "\"" + walked + "\"";
        if (node.IsSequence()) {
          std::size_t index = 0;
          const bool numeric =
              !key.empty() && key.size() < 10 && key.find_first_not_of("0123456789") == std::string::npos;
          if (numeric) index = std::stoul(key);
          if (!numeric || index >= node.size()) {
            throw InputError(flag + ": " + here + " is a list of " + std::to_string(node.size()) + " entries: \"" +
                             key + "\" must be an index from 0 to " +
                             std::to_string(node.size() == 0 ? 0 : node.size() - 1));
          }
          if (last) {
            node[index] = value;
            record_origin(origins, node[index], flag);
          } else {
            node.reset(node[index]);
          }
        } else if (node.IsMap() || node.IsNull()) {
          if (last) {
            node[key] = value;
            record_origin(origins, node[key], flag);
            origins.nodes.emplace_back(key_node(node, key), flag);
          } else {
            if (!node[key]) {
              node[key] = YAML::Node(YAML::NodeType::Map);
              origins.nodes.emplace_back(key_node(node, key), flag);
            }
            node.reset(node[key]);
          }
        } else {
          throw InputError(flag + ": " + here + " is a value (" + node.Scalar() + "), not a mapping or list with \"" +
                           key + "\" in it");
        }
        walked += (walked.empty() ? "" : ".") + key;
      }
    }
  }
  return origins;
}

std::vector<int> whole_number_list(const YamlInput& in, const YAML::Node& node, const std::string& what, int max) {
  if (!node.IsSequence()) in.fail(node, "\"" + what + "\" must be a list");
  std::vector<int> out;
  for (const auto& v : node) {
    out.push_back(static_cast<int>(in.count_at(v, "an entry of \"" + what + "\"", 0, static_cast<std::uint64_t>(max))));
  }
  return out;
}

YAML::Node load_yaml_file(const std::string& path, const std::string& what) {
  return parse_yaml_text(read_input_file(path, what), path);
}

YAML::Node parse_yaml_text(const std::string& text, const std::string& path) {
  std::pair<YAML::Node, std::optional<YAML::Mark>> documents;
  try {
    documents = first_document(text);
  } catch (const YAML::ParserException& e) {
    std::ostringstream os;
    os << path << ":" << e.mark.line + 1 << ":" << e.mark.column + 1 << ": not valid YAML: " << e.msg;
    throw InputError(os.str());
  }
  if (documents.second) {
    // The first alone was read before: the rest was dropped without a word.
    std::ostringstream os;
    os << path << ":" << documents.second->line + 1
       << ": a second YAML document (after --- or ...): the file holds one; join them or remove the rest";
    throw InputError(os.str());
  }
  YAML::Node root = documents.first;
  if (!root || root.IsNull()) throw InputError(path + ": the file is empty");
  std::uint64_t visited = 0;
  check_document(YamlInput(path), root, 0, visited);
  return root;
}

YamlDocument load_yaml_document(const std::string& path, const std::vector<YamlOverride>& overrides) {
  YAML::Node root = load_yaml_file(path);
  if (overrides.empty()) return {root, YamlInput(path)};
  auto origins = std::make_shared<const OverrideOrigins>(apply_overrides(root, overrides));
  return {root, YamlInput(path, std::move(origins))};
}

std::string file_stem(const std::string& path) {
  const std::string base = path.substr(path.find_last_of('/') + 1);
  return base.substr(0, base.find('.'));
}

}  // namespace fabricsim
