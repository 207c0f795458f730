// Reading JSON settings files (ASTRA-sim's system and remote-memory files,
// process-group files) as strictly as our YAML: a key given twice in one
// object is refused instead of one of its values being silently dropped.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace fabricsim {

/// How deep values may nest in a settings file: theirs nest two or three
/// levels; deeper is refused before anything (a message echoing the value,
/// the value's own destruction) walks it recursively.
constexpr int kMaxJsonDepth = 64;

/// Parses `text`; throws InputError naming `where` (a file, or a file and a
/// node) for malformed JSON, a number out of double's range, a key repeated
/// within one object (with the path to that object), or values nested
/// deeper than kMaxJsonDepth.
nlohmann::json parse_json_strictly(const std::string& text, const std::string& where);

/// `v` as JSON text for a message, cut to about `max` characters ("..."
/// marks the cut): a message quotes what it refuses, not all of it.
std::string json_excerpt(const nlohmann::json& v, std::size_t max = 80);
/// Text as messages quote it: whole up to `max` characters, else its start
/// and its length ("xxx... (60000 characters)"), so a 60 KB value written
/// by mistake does not become a 60 KB message.
std::string text_excerpt(const std::string& text, std::size_t max = 80);

/// The whole of `path` (a regular file, tlm/util/input_file.h), parsed as above.
nlohmann::json read_json_file(const std::string& path, const std::string& what);

}  // namespace fabricsim
