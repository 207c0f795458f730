#include "platforms/tools/sweep.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "platforms/assembly/loader.h"
#include "platforms/assembly/yaml_input.h"
#include "platforms/run/simulation.h"
#include "tlm/util/errors.h"
#include "tlm/util/input_file.h"
#include "tlm/util/json_input.h"
#include "tlm/util/output_file.h"
#include "tlm/util/sha256.h"
#include "traces/reader/et_reader.h"

namespace fabricsim {

namespace fs = std::filesystem;

std::string shell_quoted(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-+=/.,:@%") == std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this program's own path (/proc/self/exe): " + ec.message());
  return p.string();
}

namespace {

// --- the spec ----------------------------------------------------------------

/// The axes a spec may name, and the flag each becomes.
struct AxisKind {
  const char* name;
  const char* collbench_flag;  // null: not for collbench
  const char* run_flag;        // null: not for run
  bool file;                   // a path, relative to the spec, hashed
};
constexpr AxisKind kAxes[] = {
    {"platform", "--platform", "--platform", true},
    {"system", "--system", "--system", true},
    {"workload", nullptr, "--workload", true},
    {"generate", nullptr, "--workload", false},
    {"comm_groups", nullptr, "--comm-groups", true},
    {"remote_memory", nullptr, "--remote-memory", true},
    {"op", "--op", nullptr, false},
    {"bytes", "-b", nullptr, false},
    {"algorithm", "--algo", "--algorithm", false},
    {"chunks", "--chunks", "--chunks", false},
    {"levels", "--levels", "--levels", false},
    {"scheduler", "--scheduler", "--scheduler", false},
    {"npus", "--npus", "--npus", false},
    {"stride", "--stride", nullptr, false},
    {"dtype", "--dtype", nullptr, false},
    {"reduction_model", "--reduction-model", "--reduction-model", false},
};

const AxisKind* axis_kind(const std::string& name) {
  for (const auto& a : kAxes) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

std::string axis_names_list() {
  std::string out = "set.PATH";
  for (const auto& a : kAxes) out += std::string(", ") + a.name;
  return out;
}

/// One axis: its name ("algorithm", "set.fabrics.0.link.bandwidth") and
/// values; a group's axes take their values together.
struct Axis {
  std::string name;
  std::vector<std::string> values;
  YAML::Node where;  // its key in the spec, for errors
};
using AxisGroup = std::vector<Axis>;

std::string scalar_text(const YamlInput& in, const YAML::Node& v, const std::string& what) {
  if (!v.IsScalar()) in.fail(v, what + " must be a single value (text or number), not a list or mapping");
  return v.Scalar();
}

/// The axes of a `grid:`/`zip:`/`args:` mapping: plain names, and `set:`
/// with a value-path per key. `lists`: each value is a list of values.
std::vector<Axis> read_axes(const YamlInput& in, const YAML::Node& map, const std::string& what, bool lists) {
  in.require_map(map, what);
  std::vector<Axis> axes;
  const auto values_of = [&](const YAML::Node& v, const std::string& name) {
    std::vector<std::string> values;
    if (!lists) {
      values.push_back(scalar_text(in, v, "\"" + name + "\" in " + what));
      return values;
    }
    if (!v.IsSequence() || v.size() == 0) in.fail(v, "\"" + name + "\" in " + what + " must be a non-empty list");
    for (const auto& x : v) values.push_back(scalar_text(in, x, "an entry of \"" + name + "\""));
    return values;
  };
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (key == "set") {
      in.require_map(kv.second, "\"set\" in " + what);
      for (const auto& s : kv.second) {
        const std::string path = s.first.Scalar();
        try {
          parse_override(path + "=x");
        } catch (const InputError& e) {
          in.fail(s.first, std::string("\"") + path + "\": not a value path (" + e.what() + ")");
        }
        axes.push_back({"set." + path, values_of(s.second, path), s.first});
      }
    } else if (axis_kind(key)) {
      axes.push_back({key, values_of(kv.second, key), kv.first});
    } else {
      in.fail(kv.first, "unknown axis \"" + key + "\" in " + what + " (known: " + axis_names_list() + ")");
    }
  }
  return axes;
}

/// The files a trace prefix names, as the trace reader finds them: ranks
/// 0, 1, ... while PREFIX.<rank>.et (or .et.gz) exists.
std::vector<std::string> trace_files(const std::string& prefix) {
  std::vector<std::string> files;
  for (int rank = 0;; ++rank) {
    const std::string f = traces::rank_file(prefix, rank);
    std::error_code ec;
    if (!fs::is_regular_file(f, ec)) break;
    files.push_back(f);
  }
  return files;
}

/// Splits a `generate:` value ("collective --npus 8 --bytes 1M") into words.
std::vector<std::string> words(const std::string& text) {
  std::istringstream is(text);
  std::vector<std::string> out;
  for (std::string w; is >> w;) out.push_back(w);
  return out;
}

std::string generated_prefix(const std::string& out_dir, const std::string& generate) {
  return out_dir + "/workloads/" + sha256_hex(generate).substr(0, 16) + "/trace";
}

}  // namespace

SweepPlan plan_sweep(const std::string& spec_file, const std::string& out_dir, const nlohmann::json& fabricsim) {
  const YAML::Node root = load_yaml_file(spec_file, "sweep spec");
  const YamlInput in(spec_file);
  in.only_keys(root, {"name", "command", "args", "grid", "zip", "metrics"}, "the sweep spec");
  SweepPlan plan;
  plan.spec_file = spec_file;
  plan.spec_text = read_input_file(spec_file, "sweep spec");
  plan.name = in.text(root, "name", file_stem(spec_file));
  plan.command = in.text(root, "command", "collbench");
  if (plan.command != "collbench" && plan.command != "run") {
    in.fail(root["command"], "\"command\" is \"" + plan.command + "\": it must be collbench or run");
  }
  const fs::path spec_dir = fs::absolute(fs::path(spec_file)).parent_path();
  const std::string abs_out = out_dir.empty() ? "DIR" : fs::absolute(out_dir).lexically_normal().string();

  std::vector<Axis> fixed;
  if (root["args"]) fixed = read_axes(in, root["args"], "\"args\"", false);
  std::vector<AxisGroup> groups;
  if (root["grid"]) {
    for (auto& a : read_axes(in, root["grid"], "\"grid\"", true)) groups.push_back({a});
  }
  if (root["zip"]) {
    if (!root["zip"].IsSequence()) in.fail(root["zip"], "\"zip\" must be a list of mappings of equal-length lists");
    for (const auto& z : root["zip"]) {
      AxisGroup g = read_axes(in, z, "a \"zip\" entry", true);
      if (g.empty()) in.fail(z, "a \"zip\" entry names no axis");
      for (const auto& a : g) {
        if (a.values.size() != g.front().values.size()) {
          in.fail(z, "the lists of a \"zip\" entry go together and must have equal lengths: \"" + g.front().name +
                         "\" has " + std::to_string(g.front().values.size()) + ", \"" + a.name + "\" has " +
                         std::to_string(a.values.size()));
        }
      }
      groups.push_back(std::move(g));
    }
  }
  // Every name once, and each meaningful for the command.
  std::set<std::string> seen;
  const auto check_axis = [&](const Axis& a, const YAML::Node& where) {
    if (!seen.insert(a.name).second) in.fail(where, "\"" + a.name + "\" is given twice (args, grid and zip together)");
    if (a.name.rfind("set.", 0) == 0) return;
    const AxisKind* kind = axis_kind(a.name);
    if (!(plan.command == "collbench" ? kind->collbench_flag : kind->run_flag)) {
      in.fail(where, "\"" + a.name + "\" does not apply to " + plan.command);
    }
  };
  for (const auto& a : fixed) check_axis(a, a.where);
  for (const auto& g : groups) {
    for (const auto& a : g) {
      check_axis(a, a.where);
      plan.axis_names.push_back(a.name);
    }
  }
  if (seen.count("workload") && seen.count("generate")) {
    in.fail(root, "a sweep gives either a workload or generate, not both (both become --workload)");
  }
  if (!seen.count("platform")) in.fail(root, "the sweep spec names no platform (in \"args\" or an axis)");
  if (plan.command == "run" && !seen.count("workload") && !seen.count("generate")) {
    in.fail(root, "a sweep of run names a workload or generate (in \"args\" or an axis)");
  }

  if (root["metrics"]) {
    if (!root["metrics"].IsSequence()) in.fail(root["metrics"], "\"metrics\" must be a list of paths into the result");
    for (const auto& m : root["metrics"]) {
      const std::string path = scalar_text(in, m, "a metric");
      const bool ok =
          !path.empty() && path.front() != '.' && path.back() != '.' && path.find("..") == std::string::npos;
      if (!ok)
        in.fail(m, "\"" + path + "\": a metric is a path into the command's JSON, dot-separated (rows.0.time_us)");
      plan.metrics.push_back(path);
    }
  } else if (plan.command == "collbench") {
    plan.metrics = {"rows.0.algorithm", "rows.0.time_us", "rows.0.algbw_GBps", "rows.0.busbw_GBps"};
  } else {
    plan.metrics = {"sim_time_ns"};
  }

  // Expand: the first group varies slowest.
  std::size_t total = 1;
  for (const auto& g : groups) {
    total *= g.front().values.size();  // each list has at most a million entries: no wrap before the check
    if (total > 1'000'000) in.fail(g.front().where, "the grid has more than 1,000,000 points");
  }
  std::map<std::string, std::string> hash_cache;
  const auto resolve = [&](const std::string& path) {
    return fs::path(path).is_absolute() ? path : (spec_dir / path).lexically_normal().string();
  };
  std::set<std::string> generates;
  for (std::size_t n = 0; n < total; ++n) {
    SweepPoint p;
    p.index = n;
    struct Value {
      std::string name, value;
      YAML::Node where;
    };
    std::vector<Value> values;
    for (const auto& a : fixed) values.push_back({a.name, a.values[0], a.where});
    std::size_t rest = n;
    std::vector<std::size_t> pick(groups.size());
    for (std::size_t g = groups.size(); g-- > 0;) {
      pick[g] = rest % groups[g].front().values.size();
      rest /= groups[g].front().values.size();
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (const auto& a : groups[g]) {
        values.push_back({a.name, a.values[pick[g]], a.where});
        p.axes.emplace_back(a.name, a.values[pick[g]]);
      }
    }
    // Arguments, and the identity: file arguments count by their contents.
    nlohmann::json identity = {{"command", plan.command}, {"fabricsim", fabricsim}, {"args", nlohmann::json::array()}};
    p.args.push_back(plan.command);
    if (plan.command == "collbench") {
      // The sweep runs its points side by side: a point's rows one by one.
      // Not part of the identity: the rows are the same either way.
      p.args.push_back("--jobs");
      p.args.push_back("1");
    }
    const auto add = [&](const std::string& flag, const std::string& value, const std::string& identity_value) {
      p.args.push_back(flag);
      p.args.push_back(value);
      identity["args"].push_back(flag);
      identity["args"].push_back(identity_value);
    };
    for (const auto& [name, value, where] : values) {
      if (name.rfind("set.", 0) == 0) {
        const std::string kv = name.substr(4) + "=" + value;
        add("--set", kv, kv);
        continue;
      }
      const AxisKind* kind = axis_kind(name);
      const std::string flag = plan.command == "collbench" ? kind->collbench_flag : kind->run_flag;
      if (name == "generate") {
        generates.insert(value);
        add(flag, generated_prefix(abs_out, value), "generate:" + value);
        continue;
      }
      if (name == "bytes") {  // one size per point
        add("-b", value, value);
        add("-e", value, value);
        continue;
      }
      if (!kind->file) {
        add(flag, value, value);
        continue;
      }
      const std::string path = resolve(value);
      std::string& hash = hash_cache[path];
      if (hash.empty()) {
        try {
          if (name == "workload") {
            const auto files = trace_files(path);
            if (files.empty()) in.fail(where, "\"" + value + "\": no trace files " + path + ".<rank>.et");
            std::string all;
            for (const auto& f : files)
              all += fs::path(f).filename().string() + ":" + input_file_sha256(f, "trace") + "\n";
            hash = sha256_hex(all);
          } else if (name == "platform") {
            // The platform and every file it names (compute classes): read
            // by the loader, hashed together, so a changed one is a new point.
            const std::size_t before = inputs_read().size();
            load_platform(path);
            std::string all = path + ":" + input_file_sha256(path, "platform file") + "\n";
            for (std::size_t i = before; i < inputs_read().size(); ++i) {
              if (inputs_read()[i].path != path) all += inputs_read()[i].path + ":" + inputs_read()[i].sha256 + "\n";
            }
            hash = sha256_hex(all);
          } else {
            hash = input_file_sha256(path, name + " file");
          }
        } catch (const InputError& e) {
          in.fail(where, std::string("\"") + value + "\" (" + name + "): " + e.what());
        }
      }
      p.inputs[path] = hash;
      add(flag, path, "sha256:" + hash);
    }
    p.id = sha256_hex(identity.dump()).substr(0, 16);
    plan.points.push_back(std::move(p));
  }
  plan.generate.assign(generates.begin(), generates.end());
  return plan;
}

namespace {

// --- the output folder -------------------------------------------------------

std::string point_file(const std::string& dir, const std::string& id) {
  return dir + "/points/" + id + ".json";
}

nlohmann::json manifest_of(const SweepPlan& plan, const nlohmann::json& fabricsim) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : plan.points) {
    nlohmann::json axes = nlohmann::json::object();
    for (const auto& [k, v] : p.axes) axes[k] = v;
    points.push_back({{"index", p.index}, {"id", p.id}, {"axes", axes}, {"args", p.args}, {"inputs", p.inputs}});
  }
  return {{"name", plan.name},       {"spec_file", plan.spec_file}, {"spec_sha256", sha256_hex(plan.spec_text)},
          {"spec", plan.spec_text},  {"fabricsim", fabricsim},      {"command", plan.command},
          {"axes", plan.axis_names}, {"metrics", plan.metrics},     {"generate", plan.generate},
          {"points", points}};
}

/// A sweep folder's manifest, checked to be the shape manifest_of writes
/// (a file edited or cut short, or another tool's JSON, is refused naming
/// it, not read with missing keys).
nlohmann::json read_manifest(const std::string& path) {
  nlohmann::json m = read_json_file(path, "sweep manifest");
  auto strings = [](const nlohmann::json& j) {
    if (!j.is_array()) return false;
    for (const auto& v : j) {
      if (!v.is_string()) return false;
    }
    return true;
  };
  std::string problem;
  if (!m.is_object()) {
    problem = "it is not a JSON object";
  } else if (!m.contains("spec_sha256") || !m["spec_sha256"].is_string() || !m.contains("command") ||
             !m["command"].is_string() || !m.contains("fabricsim")) {
    problem = "it lacks \"spec_sha256\", \"command\" or \"fabricsim\"";
  } else if (!m.contains("axes") || !strings(m["axes"]) || !m.contains("metrics") || !strings(m["metrics"])) {
    problem = "its \"axes\" and \"metrics\" are not lists of names";
  } else if (!m.contains("points") || !m["points"].is_array()) {
    problem = "its \"points\" is not a list";
  } else {
    std::size_t position = 0;
    for (const auto& p : m["points"]) {
      if (!p.is_object() || !p.contains("index") || !p["index"].is_number_unsigned() ||
          p["index"].get<std::size_t>() != position++ || !p.contains("id") || !p["id"].is_string() ||
          !p.contains("axes") || !p["axes"].is_object() || !p.contains("args") || !strings(p["args"])) {
        problem = "a point is not {\"index\" (its place), \"id\", \"axes\", \"args\"}";
        break;
      }
      for (const auto& a : m["axes"]) {
        if (!p["axes"].contains(a.get<std::string>()) || !p["axes"][a.get<std::string>()].is_string()) {
          problem = "point " + p["id"].get<std::string>() + " has no value for axis " + a.get<std::string>();
        }
      }
      if (!problem.empty()) break;
    }
  }
  if (!problem.empty()) {
    throw InputError(path + ": not a sweep manifest as fabricsim sweep writes it (" + problem +
                     "): remove the folder or give another --out");
  }
  return m;
}

/// A value in `j` at a dotted path (rows.0.time_us); null when absent.
const nlohmann::json* at_path(const nlohmann::json& j, const std::string& path) {
  const nlohmann::json* node = &j;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (node->is_object()) {
      const auto it = node->find(key);
      if (it == node->end()) return nullptr;
      node = &*it;
    } else if (node->is_array()) {
      if (key.empty() || key.find_first_not_of("0123456789") != std::string::npos) return nullptr;
      const std::size_t i = std::stoul(key);
      if (i >= node->size()) return nullptr;
      node = &(*node)[i];
    } else {
      return nullptr;
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return node;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string metric_text(const nlohmann::json* v) {
  if (!v || v->is_null()) return "";
  if (v->is_string()) return v->get<std::string>();
  return v->dump();
}

/// Where running points write their result and error output before the
/// point file is made: tmpfs (/dev/shm) when it has room (1 GiB free), since
/// creating and deleting two files per point on a disk file system was most
/// of the driver's cost; otherwise the sweep's points/ folder. Named by the
/// driver's pid; removed when done, and a dead driver's is removed by the
/// next one (a driver killed with SIGKILL cannot clean up).
class Scratch {
 public:
  explicit Scratch(const std::string& dir) {
    for (const std::string& base : {std::string("/dev/shm"), dir + "/points"}) {
      struct statvfs fsinfo {};
      if (base == "/dev/shm" &&
          (::statvfs(base.c_str(), &fsinfo) != 0 || fsinfo.f_bavail * fsinfo.f_frsize < (std::uint64_t{1} << 30))) {
        continue;
      }
      remove_stale(base);
      const std::string t = base + "/.fabricsim-sweep." + std::to_string(::getpid());
      std::error_code ec;
      fs::remove_all(t, ec);
      if (::access(base.c_str(), W_OK) == 0 && fs::create_directory(t, ec)) {
        path_ = t;
        return;
      }
    }
    throw std::runtime_error("cannot make a scratch folder in /dev/shm or " + dir + "/points");
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::string& path() const { return path_; }

 private:
  static void remove_stale(const std::string& base) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(base, ec)) {
      const std::string name = e.path().filename().string();
      const std::string prefix = ".fabricsim-sweep.";
      if (name.rfind(prefix, 0) != 0) continue;
      const std::string pid = name.substr(prefix.size());
      if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) continue;
      if (::kill(static_cast<pid_t>(std::stoi(pid)), 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
    }
  }
  std::string path_;
};

/// A running point: its child process and where its outputs go.
struct Running {
  pid_t pid = -1;
  std::size_t index = 0;
  std::string result_tmp, stderr_tmp;
  std::chrono::steady_clock::time_point start;
};

/// Starts the point's command as a child process of `self`.
Running start_point(const std::string& self, const Scratch& scratch, const nlohmann::json& point,
                    const std::string& command) {
  Running r;
  r.index = point["index"].get<std::size_t>();
  const std::string id = point["id"];
  const std::string tag = id + "." + std::to_string(::getpid()) + "." + std::to_string(r.index);
  r.result_tmp = scratch.path() + "/" + tag + ".json";
  r.stderr_tmp = scratch.path() + "/" + tag + ".err";
  std::vector<std::string> argv = {self};
  for (const auto& a : point["args"]) argv.push_back(a.get<std::string>());
  argv.push_back(command == "collbench" ? "--json" : "--report");
  argv.push_back(r.result_tmp);
  argv.push_back(command == "collbench" ? "-q" : "--quiet");
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  r.start = std::chrono::steady_clock::now();
  // posix_spawn, not fork: no copy of this process's page tables per point
  // (glibc spawns with CLONE_VM), which was most of the driver's own cost.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, r.stderr_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  // The executable this process runs (`self` names it), even if its file
  // was rebuilt meanwhile: a point is computed by the build its id names.
  const int rc = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot run " + self + ": " + std::strerror(rc));
  r.pid = pid;
  return r;
}

/// The last lines of a process's stderr: why it failed.
std::string failure_message(const std::string& stderr_text) {
  std::string s = stderr_text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.size() > 2000) s = "..." + s.substr(s.size() - 2000);
  if (s.rfind("error: ", 0) == 0) s = s.substr(7);  // fabricsim's prefix: the column says as much
  return s;
}

/// Writes the point file of a finished child (status `wait_status`).
void finish_point(const std::string& dir, const nlohmann::json& manifest, const Running& r, int wait_status,
                  const nlohmann::json& fabricsim) {
  const nlohmann::json& point = manifest["points"][r.index];
  int exit_code;
  std::string message;
  if (WIFEXITED(wait_status)) {
    exit_code = WEXITSTATUS(wait_status);
  } else {
    exit_code = 128 + WTERMSIG(wait_status);
    message = std::string("killed by signal ") + std::to_string(WTERMSIG(wait_status));
  }
  std::string err;
  std::error_code ec;
  if (fs::exists(r.stderr_tmp, ec)) {
    std::ifstream f(r.stderr_tmp);
    err.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  if (message.empty()) message = failure_message(err);
  if (exit_code == 127 && message.empty()) message = "could not run " + self_executable();
  nlohmann::json result;
  if (exit_code == 0) {
    try {
      result = read_json_file(r.result_tmp, "point result");
    } catch (const std::exception& e) {
      exit_code = 1;
      message = e.what();
    }
  }
  std::string command = "fabricsim";
  for (const auto& a : point["args"]) command += " " + shell_quoted(a.get<std::string>());
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& m : manifest["metrics"]) {
    const nlohmann::json* v = at_path(result, m.get<std::string>());
    metrics[m.get<std::string>()] = v ? *v : nlohmann::json();
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count();
  nlohmann::ordered_json out = {
      {"id", point["id"]},      {"index", point["index"]},
      {"axes", point["axes"]},  {"status", exit_code == 0 ? "ok" : "failed"},
      {"exit_code", exit_code}, {"message", exit_code == 0 ? "" : message},
      {"command", command},     {"inputs", point.contains("inputs") ? point["inputs"] : nlohmann::json::object()},
      {"fabricsim", fabricsim}, {"wall_s", wall},
      {"metrics", metrics},     {"result", result}};
  write_output_file(point_file(dir, point["id"]), out.dump(1) + "\n", "sweep point");
  fs::remove(r.result_tmp, ec);
  fs::remove(r.stderr_tmp, ec);
}

/// A point's result file, checked for the shape finish_point writes: an
/// object with status "ok" or "failed", a whole exit_code, a message and
/// the metrics; InputError naming the file and what is wrong otherwise.
nlohmann::json read_point(const std::string& path) {
  nlohmann::json p = read_json_file(path, "sweep point");
  const auto wrong = [&](const std::string& what) {
    throw InputError(path + ": " + what +
                     "; a point file is an object with \"status\" (\"ok\" or \"failed\"), "
                     "\"exit_code\", \"message\" and \"metrics\", as fabricsim sweep writes it: delete it, and "
                     "the point runs again");
  };
  if (!p.is_object()) wrong("is " + json_excerpt(p) + ", not an object");
  const auto status = p.find("status");
  if (status == p.end() || !status->is_string() || (*status != "ok" && *status != "failed")) {
    wrong("its \"status\" is " + (status == p.end() ? std::string("missing") : json_excerpt(*status)));
  }
  const auto code = p.find("exit_code");
  if (code == p.end() || !code->is_number_integer()) {
    wrong("its \"exit_code\" is " + (code == p.end() ? std::string("missing") : json_excerpt(*code)));
  }
  const auto message = p.find("message");
  if (message == p.end() || !message->is_string()) {
    wrong("its \"message\" is " + (message == p.end() ? std::string("missing") : json_excerpt(*message)));
  }
  const auto metrics = p.find("metrics");
  if (metrics == p.end() || !metrics->is_object()) {
    wrong("its \"metrics\" is " + (metrics == p.end() ? std::string("missing") : json_excerpt(*metrics)));
  }
  return p;
}

/// Points of the manifest without a point file (and, `retry_failed`, those
/// whose file records a failure).
std::vector<std::size_t> missing_points(const std::string& dir, const nlohmann::json& manifest, bool retry_failed) {
  std::vector<std::size_t> out;
  std::error_code ec;
  for (const auto& p : manifest["points"]) {
    const std::string file = point_file(dir, p["id"]);
    bool run = !fs::exists(file, ec);
    if (!run && retry_failed) run = read_point(file)["status"] != "ok";
    if (run) out.push_back(p["index"].get<std::size_t>());
  }
  return out;
}

/// "0-3,7,9-12": Slurm's array index list.
std::string index_ranges(const std::vector<std::size_t>& indices, std::size_t offset) {
  std::string out;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(indices[i] - offset);
    if (j > i) out += "-" + std::to_string(indices[j] - offset);
    i = j + 1;
  }
  return out;
}

std::string format_seconds(double s) {
  char buf[32];
  if (s < 120) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else if (s < 7200) {
    std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  }
  return buf;
}

volatile std::sig_atomic_t g_stop = 0;

/// While alive, SIGINT and SIGTERM set g_stop (and interrupt waitpid)
/// instead of killing the driver.
class StopOnSignals {
 public:
  StopOnSignals() {
    struct sigaction sa {};
    sa.sa_handler = [](int) { g_stop = 1; };
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: waitpid returns EINTR
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopOnSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

/// Runs the missing points in a pool of `jobs` processes.
int run_local(const std::string& dir, const nlohmann::json& manifest, const std::vector<std::size_t>& todo,
              unsigned jobs, bool progress) {
  const std::string self = self_executable();
  const std::string command = manifest["command"];
  const bool tty = progress && ::isatty(2);
  const auto t0 = std::chrono::steady_clock::now();
  const Scratch scratch(dir);
  std::map<pid_t, Running> running;
  std::size_t next = 0, done = 0, failed = 0, last_shown = 0;
  double busy = 0;
  const auto show = [&](bool final) {
    if (!progress) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double eta = done ? elapsed / static_cast<double>(done) * static_cast<double>(todo.size() - done) : 0;
    // Not on a terminal: a line each tenth, so a log shows progress, not a flood.
    if (!tty && !final && done * 10 / todo.size() == last_shown * 10 / todo.size()) return;
    last_shown = done;
    std::fprintf(stderr, "%s[%zu/%zu] %.0f%%  %s elapsed, ETA %s, %zu failed%s", tty ? "\r" : "", done, todo.size(),
                 100.0 * static_cast<double>(done) / static_cast<double>(todo.size()), format_seconds(elapsed).c_str(),
                 format_seconds(eta).c_str(), failed, tty && !final ? "   " : "\n");
    std::fflush(stderr);
  };
  const auto fill = [&] {
    while (running.size() < jobs && next < todo.size() && !g_stop) {
      Running r = start_point(self, scratch, manifest["points"][todo[next++]], command);
      running.emplace(r.pid, r);
    }
  };
  // SIGINT or SIGTERM, or an error here: the running points are stopped and
  // reaped, never left behind; the finished ones keep their files.
  const StopOnSignals signals;
  const auto stop_children = [&] {
    for (const auto& [pid, r] : running) ::kill(pid, SIGTERM);
    for (const auto& [pid, r] : running) {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    running.clear();
  };
  try {
    while (done < todo.size() && !(g_stop && running.empty())) {
      fill();
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, 0);
      if (pid < 0) {
        if (errno == EINTR) {
          if (g_stop) stop_children();
          continue;
        }
        throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
      }
      const auto it = running.find(pid);
      if (it == running.end()) continue;
      const Running finished = it->second;
      running.erase(it);
      busy += std::chrono::duration<double>(std::chrono::steady_clock::now() - finished.start).count();
      if (g_stop && !WIFEXITED(status)) continue;  // killed with us (Ctrl-C reaches them too): missing, not failed
      fill();                                      // the next point starts before this one's file is written
      finish_point(dir, manifest, finished, status, manifest["fabricsim"]);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
      ++done;
      show(done == todo.size());
    }
  } catch (...) {
    stop_children();
    throw;
  }
  if (g_stop) {
    std::fprintf(stderr, "stopped by a signal after %zu of %zu points; run the same command again to run the rest\n",
                 done, todo.size());
    return 130;
  }
  if (progress) {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rusage self_usage{};
    ::getrusage(RUSAGE_SELF, &self_usage);
    const auto seconds = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
    };
    std::fprintf(stderr,
                 "ran %zu points (%zu failed) in %.2f s with %u processes: points' own time %.2f s in all, "
                 "this driver's CPU %.3f s user + %.3f s system\n",
                 todo.size(), failed, wall, jobs, busy, seconds(self_usage.ru_utime), seconds(self_usage.ru_stime));
  }
  return kExitOk;
}

/// Runs a shell command and returns what it printed, trimmed ("" if it failed).
std::string run_for_output(const std::string& cmd) {
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return "";
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  if (::pclose(pipe) != 0) return "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace

int collect_sweep(const std::string& dir) {
  const nlohmann::json manifest = read_manifest(dir + "/manifest.json");
  std::ostringstream csv;
  csv << "id,status";
  for (const auto& a : manifest["axes"]) csv << "," << csv_cell(a.get<std::string>());
  for (const auto& m : manifest["metrics"]) csv << "," << csv_cell(m.get<std::string>());
  csv << ",exit_code,message\n";
  std::size_t missing = 0, failed = 0;
  std::map<std::string, std::size_t> absent;
  std::error_code ec;
  for (const auto& p : manifest["points"]) {
    const std::string path = point_file(dir, p["id"]);
    csv << p["id"].get<std::string>();
    nlohmann::json point;
    if (!fs::exists(path, ec)) {
      ++missing;
      csv << ",missing";
    } else {
      point = read_point(path);
      csv << "," << point["status"].get<std::string>();
      if (point["status"] != "ok") ++failed;
    }
    for (const auto& a : manifest["axes"]) csv << "," << csv_cell(p["axes"][a.get<std::string>()].get<std::string>());
    for (const auto& m : manifest["metrics"]) {
      const nlohmann::json* v = nullptr;
      if (!point.is_null()) {
        const auto it = point["metrics"].find(m.get<std::string>());
        if (it != point["metrics"].end()) v = &*it;
        if (point["status"] == "ok" && (!v || v->is_null())) ++absent[m.get<std::string>()];
      }
      csv << "," << csv_cell(metric_text(v));
    }
    if (point.is_null()) {
      csv << ",,\n";
    } else {
      csv << "," << point["exit_code"].dump() << "," << csv_cell(point["message"].get<std::string>()) << "\n";
    }
  }
  write_output_file(dir + "/results.csv", csv.str(), "sweep results");
  const std::size_t total = manifest["points"].size();
  std::cout << dir << "/results.csv: " << total - missing << " of " << total << " points";
  if (failed) std::cout << " (" << failed << " failed: see their message column)";
  if (missing) std::cout << "; " << missing << " not run yet";
  std::cout << "\n";
  // Metrics an ok point's result lacks: a misspelt path, not a missing value.
  for (const auto& m : manifest["metrics"]) {
    const std::size_t n = absent[m.get<std::string>()];
    if (n) {
      std::cerr << "warning: metric \"" << m.get<std::string>() << "\" is absent from " << n
                << " ok point(s): is its path right? (docs/sweep.md, metrics)\n";
    }
  }
  return missing + failed == 0 ? kExitOk : kExitSweepIncomplete;
}

int run_sweep_point(const std::string& dir, std::size_t index, const nlohmann::json& fabricsim) {
  const nlohmann::json manifest = read_manifest(dir + "/manifest.json");
  if (manifest["fabricsim"] != fabricsim) {
    // A point's id names the build that computes it: another build's result
    // filed under it would be taken for this one's when the sweep resumes.
    throw InputError(dir + "/manifest.json: the sweep was planned by fabricsim " + manifest["fabricsim"].dump() +
                     "; this is " + fabricsim.dump() +
                     ". Run its points with the build that planned it, or plan the sweep again into a new folder");
  }
  if (index >= manifest["points"].size()) {
    throw InputError(dir + "/manifest.json: no point " + std::to_string(index) + " (the sweep has " +
                     std::to_string(manifest["points"].size()) + ", from 0)");
  }
  const Scratch scratch(dir);
  const Running r = start_point(self_executable(), scratch, manifest["points"][index], manifest["command"]);
  int status = 0;
  while (::waitpid(r.pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  finish_point(dir, manifest, r, status, fabricsim);
  return kExitOk;
}

int run_sweep(const std::string& spec_file, const SweepOptions& o, const nlohmann::json& fabricsim) {
  const std::string& dir = o.out_dir;
  const SweepPlan plan = plan_sweep(spec_file, dir, fabricsim);
  if (o.dry_run) {
    std::cout << plan.points.size() << " points of " << plan.spec_file << " (fabricsim " << plan.command << "):\n";
    for (const auto& p : plan.points) {
      std::cout << p.index << " " << p.id;
      for (const auto& [k, v] : p.axes) std::cout << " " << k << "=" << shell_quoted(v);
      std::cout << "\n";
    }
    return 0;
  }
  const nlohmann::json manifest = manifest_of(plan, fabricsim);  // not for a dry run: a JSON copy of every point
  std::error_code ec;
  fs::create_directories(dir + "/points", ec);
  if (ec) throw InputError(dir + ": cannot make the sweep's folder: " + ec.message());
  const std::string manifest_path = dir + "/manifest.json";
  if (fs::exists(manifest_path, ec)) {
    const nlohmann::json old = read_manifest(manifest_path);
    if (old.value("spec_sha256", "") != manifest["spec_sha256"] || old["points"].size() != manifest["points"].size()) {
      throw InputError(dir + " holds another sweep (" + old.value("spec_file", std::string("?")) +
                       "): give another --out, or remove it");
    }
  }
  write_output_file(manifest_path, manifest.dump(1) + "\n", "sweep manifest");
  // Generated workloads first, once each.
  for (const auto& g : plan.generate) {
    const std::string prefix = generated_prefix(fs::absolute(dir).lexically_normal().string(), g);
    if (!trace_files(prefix).empty()) continue;
    fs::create_directories(fs::path(prefix).parent_path(), ec);
    std::string cmd = shell_quoted(self_executable()) + " gen";
    for (const auto& w : words(g)) cmd += " " + shell_quoted(w);
    cmd += " --out " + shell_quoted(prefix) + " > /dev/null";
    if (std::system(cmd.c_str()) != 0) throw InputError("generate \"" + g + "\": fabricsim gen failed (" + cmd + ")");
  }
  const std::vector<std::size_t> todo = missing_points(dir, manifest, o.retry_failed);
  const std::size_t total = plan.points.size();
  if (o.progress) {
    std::cerr << plan.name << ": " << total << " points, " << total - todo.size() << " already done, " << todo.size()
              << " to run (" << o.backend << ")\n";
  }
  if (o.backend == "print") {
    const std::string self = shell_quoted(self_executable());
    const std::string d = shell_quoted(fs::absolute(dir).lexically_normal().string());
    for (std::size_t i : todo) std::cout << self << " sweep point " << d << " " << i << "\n";
    return todo.empty() ? kExitOk : kExitSweepIncomplete;
  }
  if (o.backend == "slurm") {
    if (todo.empty()) return collect_sweep(dir);
    const std::string abs_dir = fs::absolute(dir).lexically_normal().string();
    fs::create_directories(abs_dir + "/slurm", ec);
    // Slurm caps array indices (MaxArraySize, 1001 by default): one array per
    // thousand points, each with its offset.
    std::vector<std::string> jobs;
    for (std::size_t first = 0; first < todo.size();) {
      const std::size_t offset = todo[first] / 1000 * 1000;
      std::size_t last = first;
      while (last < todo.size() && todo[last] < offset + 1000) ++last;
      const std::vector<std::size_t> part(todo.begin() + static_cast<std::ptrdiff_t>(first),
                                          todo.begin() + static_cast<std::ptrdiff_t>(last));
      const std::string script = abs_dir + "/slurm/array-" + std::to_string(offset) + ".sbatch";
      std::ostringstream s;
      s << "#!/bin/sh\n# fabricsim sweep " << shell_quoted(plan.spec_file) << ": points " << offset
        << " + the array index\n"
        << "#SBATCH --job-name=" << shell_quoted("fabricsim-" + plan.name) << "\n"
        << "#SBATCH --array=" << index_ranges(part, offset) << (o.throttle ? "%" + std::to_string(o.throttle) : "")
        << "\n#SBATCH --output=" << abs_dir << "/slurm/%A_%a.out\n";
      if (!o.partition.empty()) s << "#SBATCH --partition=" << o.partition << "\n";
      if (!o.time_limit.empty()) s << "#SBATCH --time=" << o.time_limit << "\n";
      if (!o.memory.empty()) s << "#SBATCH --mem=" << o.memory << "\n";
      s << "exec " << shell_quoted(self_executable()) << " sweep point " << shell_quoted(abs_dir)
        << " $((SLURM_ARRAY_TASK_ID + " << offset << "))\n";
      write_output_file(script, s.str(), "sbatch script");
      std::string cmd = "sbatch --parsable";
      for (const auto& a : o.sbatch_args) cmd += " " + shell_quoted(a);
      cmd += " " + shell_quoted(script);
      if (o.progress) std::cerr << "+ " << cmd << "\n";
      const std::string job = run_for_output(cmd);
      if (job.empty()) throw InputError("sbatch failed (" + cmd + "); the script is " + script);
      jobs.push_back(job.substr(0, job.find(';')));  // "jobid[;cluster]"
      first = last;
    }
    if (!o.wait) {
      std::cerr << "submitted job(s)";
      for (const auto& j : jobs) std::cerr << " " << j;
      std::cerr << "; when they are done: fabricsim sweep collect " << shell_quoted(dir) << "\n";
      return kExitSweepIncomplete;
    }
    // Every array at once; then one empty job that starts when all of them
    // have ended however they ended (afterany), waited for.
    std::string cmd = "sbatch --parsable --wait --job-name=fabricsim-wait --output=/dev/null --dependency=afterany";
    for (const auto& j : jobs) cmd += ":" + j;
    if (!o.partition.empty()) cmd += " --partition=" + shell_quoted(o.partition);
    cmd += " --wrap true";
    if (o.progress) std::cerr << "+ " << cmd << "\n";
    if (run_for_output(cmd).empty()) throw InputError("sbatch failed to wait for the arrays (" + cmd + ")");
    return collect_sweep(dir);
  }
  unsigned jobs = o.jobs ? o.jobs : std::max(1u, static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN)));
  if (!todo.empty() && run_local(dir, manifest, todo, jobs, o.progress) == kExitInterrupted) return kExitInterrupted;
  return collect_sweep(dir);
}

}  // namespace fabricsim
