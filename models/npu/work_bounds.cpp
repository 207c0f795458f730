#include "models/npu/work_bounds.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace fabricsim {

namespace {

std::string duration_text(double seconds) {
  char buf[64];
  if (seconds < 10) {
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  } else if (seconds < 120) {
    std::snprintf(buf, sizeof buf, "%.0f s", seconds);
  } else if (seconds < 7200) {
    std::snprintf(buf, sizeof buf, "%.0f minutes", seconds / 60);
  } else if (seconds < 172800) {
    std::snprintf(buf, sizeof buf, "%.0f hours", seconds / 3600);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f days", seconds / 86400);
  }
  return buf;
}

}  // namespace

std::string WorkBounds::gib_text(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / 1073741824.0);
  return buf;
}

WorkBounds::Estimate WorkBounds::message(std::uint64_t bytes) const {
  Estimate e;
  e.messages = 1;
  e.frames = std::max(
      1.0, std::ceil(static_cast<double>(bytes) / static_cast<double>(std::max<std::uint64_t>(1, frame_bytes))));
  e.frame_seconds = e.frames * seconds_per_frame;
  return e;
}

double WorkBounds::seconds(const Estimate& e) const {
  const double cache = 1 + platform_bytes / kCacheBytes;
  return kStartSeconds + kBuildSecondsPerByte * platform_bytes +
         cache * (e.messages * seconds_per_message + e.frame_seconds + e.operations * kSecondsPerOperation);
}

double WorkBounds::memory(const Estimate& e) const {
  return kBaseBytes + platform_bytes + e.peak_messages * kBytesPerMessageInFlight +
         e.chunk_states * kBytesPerChunkState + e.held_nodes * kBytesPerHeldNode + e.data_bytes;
}

nlohmann::ordered_json WorkBounds::json(const Estimate& e) const {
  return {{"messages", e.messages},           {"frames", e.frames},
          {"frame_seconds", e.frame_seconds}, {"operations", e.operations},
          {"peak_messages", e.peak_messages}, {"chunk_states", e.chunk_states},
          {"held_nodes", e.held_nodes},       {"data_bytes", e.data_bytes},
          {"platform_bytes", platform_bytes}, {"wall_seconds", seconds(e)},
          {"memory_bytes", memory(e)}};
}

std::string WorkBounds::describe(const Estimate& e) const {
  char buf[256];
  const double mib = memory(e) / 1048576.0;
  if (frame_bytes == std::numeric_limits<std::uint64_t>::max()) {  // every fabric runs as flows
    std::snprintf(buf, sizeof buf, "%.3g messages (as flows), %.3g operations: about ", e.messages, e.operations);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g messages (%.3g frames), %.3g operations: about ", e.messages, e.frames,
                  e.operations);
  }
  std::string text = buf;
  if (mib < 10240) {
    std::snprintf(buf, sizeof buf, "%.0f MiB", mib);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f GiB", mib / 1024);
  }
  return text + duration_text(seconds(e)) + " of wall time and " + buf + " of memory";
}

std::string WorkBounds::check(const Estimate& e, const std::string& what) const {
  const std::string estimate = describe(e);
  if (!force) {
    if (seconds(e) > kMaxSeconds) {
      throw std::invalid_argument(what + " is " + estimate + ", past the limit of " + duration_text(kMaxSeconds) +
                                  " of wall time (give --force to run it anyway)");
    }
    const double bytes = memory(e);
    if (memory_bytes > 0 && bytes > static_cast<double>(memory_bytes)) {
      std::string held;
      if (e.data_bytes > 0.25 * bytes) held = ", " + gib_text(e.data_bytes) + " of it data buffers (--data)";
      throw std::invalid_argument(what + " is " + estimate + held + ", more than the " +
                                  gib_text(static_cast<double>(memory_bytes)) + " of " + memory_limit +
                                  " (give --force to run it anyway)");
    }
  }
  if (seconds(e) > kWarnSeconds) return what + " is " + estimate;
  return "";
}

std::uint64_t WorkBounds::physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

namespace {

/// A cgroup limit file's value: bytes, or 0 for none ("max", v1's
/// unlimited 2^63 rounded to pages, or no such file).
std::uint64_t cgroup_limit(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str() || v >= (1ull << 62)) return 0;
  return v;
}

std::uint64_t env_megabytes(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(v, &end, 10);
  if (end == v || mb == 0 || mb >= (1ull << 40)) return 0;
  return static_cast<std::uint64_t>(mb) << 20;
}

}  // namespace

WorkBounds::MemoryLimit WorkBounds::usable_memory() {
  MemoryLimit out{physical_memory(), "this machine's memory"};
  auto take = [&out](std::uint64_t bytes, const std::string& what) {
    if (bytes > 0 && (out.bytes == 0 || bytes < out.bytes)) out = {bytes, what};
  };
  struct rlimit r {};
  if (::getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
    take(static_cast<std::uint64_t>(r.rlim_cur), "the address-space limit (ulimit -v)");
  }
  if (::getrlimit(RLIMIT_DATA, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
    take(static_cast<std::uint64_t>(r.rlim_cur), "the data-segment limit (ulimit -d)");
  }
  // The process's cgroups (/proc/self/cgroup: "0::/path" for v2,
  // "N:memory:/path" for v1), at their path under the mount and, where a
  // container sees its own cgroup as the root, at the mount's root.
  std::ifstream groups("/proc/self/cgroup");
  for (std::string line; std::getline(groups, line);) {
    const auto a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    // The limit may sit on any ancestor (Slurm's job_N/step_M/task_K,
    // systemd's slices): every level from the cgroup up to the mount's root.
    const bool v2 = controllers.empty();
    if (!v2 && ("," + controllers + ",").find(",memory,") == std::string::npos) continue;
    const std::string mount = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    const std::string file = v2 ? "/memory.max" : "/memory.limit_in_bytes";
    const std::string what = v2 ? "its cgroup's memory.max" : "its cgroup's memory limit";
    for (std::string level = path;; level = level.substr(0, level.find_last_of('/'))) {
      take(cgroup_limit(mount + level + file), what);
      if (level.empty() || level == "/") break;
    }
  }
  take(env_megabytes("SLURM_MEM_PER_NODE"), "the Slurm allocation (SLURM_MEM_PER_NODE)");
  if (const std::uint64_t per_cpu = env_megabytes("SLURM_MEM_PER_CPU")) {
    const char* cpus = std::getenv("SLURM_CPUS_ON_NODE");
    const unsigned long n = cpus ? std::strtoul(cpus, nullptr, 10) : 1;
    take(per_cpu * std::max(1ul, n), "the Slurm allocation (SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE)");
  }
  return out;
}

}  // namespace fabricsim
