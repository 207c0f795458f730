// Small helpers for reading YAML input with errors that say where.
#pragma once

#include <initializer_list>
#include <string>

#include <yaml-cpp/yaml.h>

#include "platforms/platform_spec.h"

namespace fabricsim {

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

  double number(const YAML::Node& map, const char* key, double fallback, bool positive = false) const;
  std::uint64_t count(const YAML::Node& map, const char* key, std::uint64_t fallback) const;
  bool flag(const YAML::Node& map, const char* key, bool fallback) const;
  std::string text(const YAML::Node& map, const char* key, const std::string& fallback) const;
  const YAML::Node required(const YAML::Node& map, const char* key, const std::string& what) const;

 private:
  std::string file_;
};

YAML::Node load_yaml_file(const std::string& path);

}  // namespace fabricsim
