// Reading JSON settings files (ASTRA-sim's system and remote-memory files,
// process-group files) as strictly as our YAML: a key given twice in one
// object is refused instead of one of its values being silently dropped.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fabricsim {

/// Parses `text`; throws InputError naming `where` (a file, or a file and a
/// node) for malformed JSON, a number out of double's range, or a key
/// repeated within one object (with the path to that object).
nlohmann::json parse_json_strictly(const std::string& text, const std::string& where);

/// The whole of `path` (a regular file, tlm/input_file.h), parsed as above.
nlohmann::json read_json_file(const std::string& path, const std::string& what);

}  // namespace fabricsim
