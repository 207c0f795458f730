#include "models/npu/work_bounds.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fabricsim {

namespace {

std::string duration_text(double seconds) {
  char buf[64];
  if (seconds < 120) {
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

WorkBounds::Estimate WorkBounds::collective(CollectiveType type, std::uint64_t bytes, std::size_t members,
                                            bool data) const {
  Estimate e;
  const double n = static_cast<double>(members);
  const double factor = type == CollectiveType::kAllReduce ? 2 : type == CollectiveType::kBarrier ? 0 : 1;
  const double wire = factor * static_cast<double>(bytes) * std::max(0.0, n - 1);
  e.frames = std::ceil(wire / static_cast<double>(std::max<std::uint64_t>(1, frame_bytes))) + n;
  if (data) e.data_bytes = 3 * static_cast<double>(bytes) * n;
  return e;
}

WorkBounds::Estimate WorkBounds::message(std::uint64_t bytes) const {
  Estimate e;
  e.frames = std::ceil(static_cast<double>(bytes) / static_cast<double>(std::max<std::uint64_t>(1, frame_bytes))) + 1;
  return e;
}

std::string WorkBounds::check(const Estimate& e, const std::string& what) const {
  const double seconds = e.frames / kFramesPerSecond;
  char frames[32];
  std::snprintf(frames, sizeof frames, "%.3g", e.frames);
  const std::string estimate = std::string(frames) + " frames of " + std::to_string(frame_bytes) + " bytes, roughly " +
                               duration_text(seconds) + " of wall time at " +
                               std::to_string(static_cast<long long>(kFramesPerSecond)) + " frames/s";
  if (!force) {
    if (seconds > kMaxSeconds) {
      throw std::invalid_argument(what + " is about " + estimate + ", past the limit of " + duration_text(kMaxSeconds) +
                                  " (give --force to run it anyway)");
    }
    if (memory_bytes > 0 && e.data_bytes > static_cast<double>(memory_bytes)) {
      throw std::invalid_argument(
          what + " would hold about " + gib_text(e.data_bytes) + " of data buffers (--data), more than the " +
          gib_text(static_cast<double>(memory_bytes)) + " of " + memory_limit + " (give --force to run it anyway)");
    }
  }
  if (seconds > kWarnSeconds) return what + " is about " + estimate;
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
