#include "platforms/yaml_input.h"

#include <fstream>
#include <sstream>

namespace fabricsim {

void YamlInput::fail(const YAML::Node& at, const std::string& what) const {
  const YAML::Mark m = at.Mark();
  std::ostringstream os;
  os << file_;
  if (m.line >= 0) os << ":" << m.line + 1 << ":" << m.column + 1;
  os << ": " << what;
  throw InputError(os.str());
}

void YamlInput::fail(const std::string& what) const { throw InputError(file_ + ": " + what); }

void YamlInput::require_map(const YAML::Node& node, const std::string& what) const {
  if (!node.IsMap()) fail(node, what + " must be a mapping (key: value)");
}

void YamlInput::only_keys(const YAML::Node& map, std::initializer_list<const char*> known, const std::string& what) const {
  require_map(map, what);
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    bool ok = false;
    for (const char* k : known) ok |= key == k;
    if (!ok) {
      std::string list;
      for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
      fail(kv.first, "unknown key \"" + key + "\" in " + what + " (known: " + list + ")");
    }
  }
}

double YamlInput::number(const YAML::Node& map, const char* key, double fallback, bool positive) const {
  const YAML::Node v = map[key];
  if (!v) return fallback;
  double d = 0;
  try {
    d = v.as<double>();
  } catch (const YAML::Exception&) {
    fail(v, std::string("\"") + key + "\" must be a number, not \"" + v.as<std::string>("?") + "\"");
  }
  if (d < 0 || (positive && d == 0)) fail(v, std::string("\"") + key + "\" must be " + (positive ? "> 0" : ">= 0"));
  return d;
}

std::uint64_t YamlInput::count(const YAML::Node& map, const char* key, std::uint64_t fallback) const {
  const YAML::Node v = map[key];
  if (!v) return fallback;
  long long x = 0;
  try {
    x = v.as<long long>();
  } catch (const YAML::Exception&) {
    fail(v, std::string("\"") + key + "\" must be a whole number, not \"" + v.as<std::string>("?") + "\"");
  }
  if (x < 0) fail(v, std::string("\"") + key + "\" must be >= 0");
  return static_cast<std::uint64_t>(x);
}

bool YamlInput::flag(const YAML::Node& map, const char* key, bool fallback) const {
  const YAML::Node v = map[key];
  if (!v) return fallback;
  try {
    return v.as<bool>();
  } catch (const YAML::Exception&) {
    fail(v, std::string("\"") + key + "\" must be true or false");
  }
}

std::string YamlInput::text(const YAML::Node& map, const char* key, const std::string& fallback) const {
  const YAML::Node v = map[key];
  if (!v) return fallback;
  if (!v.IsScalar()) fail(v, std::string("\"") + key + "\" must be a single value");
  return v.as<std::string>();
}

const YAML::Node YamlInput::required(const YAML::Node& map, const char* key, const std::string& what) const {
  const YAML::Node v = map[key];
  if (!v) fail(map, "missing \"" + std::string(key) + "\" in " + what);
  return v;
}

YAML::Node load_yaml_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file");
  try {
    YAML::Node root = YAML::Load(in);
    if (!root || root.IsNull()) throw InputError(path + ": the file is empty");
    return root;
  } catch (const YAML::ParserException& e) {
    std::ostringstream os;
    os << path << ":" << e.mark.line + 1 << ":" << e.mark.column + 1 << ": not valid YAML: " << e.msg;
    throw InputError(os.str());
  }
}

}  // namespace fabricsim
