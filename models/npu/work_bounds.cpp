#include "models/npu/work_bounds.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <unistd.h>

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

std::string bytes_text(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / 1073741824.0);
  return buf;
}

}  // namespace

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
  const std::string estimate = std::string(frames) + " frames of " + std::to_string(frame_bytes) +
                               " bytes, roughly " + duration_text(seconds) + " of wall time at " +
                               std::to_string(static_cast<long long>(kFramesPerSecond)) + " frames/s";
  if (!force) {
    if (seconds > kMaxSeconds) {
      throw std::invalid_argument(what + " is about " + estimate + ", past the limit of " +
                                  duration_text(kMaxSeconds) + " (give --force to run it anyway)");
    }
    if (memory_bytes > 0 && e.data_bytes > static_cast<double>(memory_bytes)) {
      throw std::invalid_argument(what + " would hold about " + bytes_text(e.data_bytes) +
                                  " of data buffers (--data), more than this machine's " +
                                  bytes_text(static_cast<double>(memory_bytes)) +
                                  " of memory (give --force to run it anyway)");
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

}  // namespace fabricsim
