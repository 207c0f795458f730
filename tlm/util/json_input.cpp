#include "tlm/util/json_input.h"

#include <algorithm>
#include <set>
#include <vector>

#include "tlm/util/errors.h"
#include "tlm/util/input_file.h"

namespace fabricsim {

namespace {

/// Where the parser is: one entry per open object or array, with the key
/// (or index) being read in it and, for objects, the keys seen so far.
struct Level {
  bool object = false;
  std::string key;
  std::size_t index = 0;
  std::set<std::string> keys;
};

std::string path_of(const std::vector<Level>& levels) {
  std::string p;
  for (std::size_t i = 0; i + 1 < levels.size(); ++i) {  // the innermost is the object with the repeat
    p += levels[i].object ? "[\"" + levels[i].key + "\"]" : "[" + std::to_string(levels[i].index) + "]";
  }
  return p.empty() ? "the top-level object" : "the object at " + p;
}

}  // namespace

nlohmann::json parse_json_strictly(const std::string& text, const std::string& where) {
  using Event = nlohmann::json::parse_event_t;
  std::vector<Level> levels;
  std::string repeated;
  auto watch = [&](int /*depth*/, Event event, nlohmann::json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (levels.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
          throw InputError(where + ": values nest deeper than " + std::to_string(kMaxJsonDepth) + " levels in " +
                           path_of(levels) + " (a settings file's nest two or three)");
        }
        levels.push_back(Level{event == Event::object_start, "", 0, {}});
        break;
      case Event::key: {
        Level& l = levels.back();
        l.key = parsed.get<std::string>();
        if (!l.keys.insert(l.key).second) {
          throw InputError(where + ": key \"" + l.key + "\" appears twice in " + path_of(levels) +
                           " (give each key once)");
        }
        break;
      }
      case Event::object_end:
      case Event::array_end:
        levels.pop_back();
        [[fallthrough]];
      case Event::value:
        if (!levels.empty() && !levels.back().object) ++levels.back().index;
        break;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, watch);
  } catch (const nlohmann::json::out_of_range& e) {
    // A number past double's range (1e999) comes without a place: the
    // message quotes it, so find it.
    const std::string what = e.what();
    const auto a = what.find('\''), b = what.rfind('\'');
    std::string place;
    if (a != std::string::npos && b > a + 1) {
      const auto at = text.find(what.substr(a + 1, b - a - 1));
      if (at != std::string::npos) {
        const auto line_start = text.rfind('\n', at);
        const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
        const auto column = at - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
        place = " at line " + std::to_string(line) + ", column " + std::to_string(column);
      }
    }
    std::string number = a != std::string::npos && b > a + 1 ? what.substr(a + 1, b - a - 1) : std::string();
    if (number.size() > 40) number = number.substr(0, 40) + "... (" + std::to_string(number.size()) + " digits)";
    throw InputError(where + ": not valid JSON: a number too large for a double (" + number + ")" + place +
                     " (numbers must fit a double)");
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": not valid JSON: " + e.what());
  }
}

std::string text_excerpt(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  return text.substr(0, max) + "... (" + std::to_string(text.size()) + " characters)";
}

std::string json_excerpt(const nlohmann::json& v, std::size_t max) {
  return text_excerpt(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max);
}

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  return parse_json_strictly(read_input_file(path, what), path);
}

}  // namespace fabricsim
