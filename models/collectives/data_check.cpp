#include "models/collectives/data_check.h"

#include <cstring>
#include <sstream>

#include "tlm/reduction.h"

namespace fabricsim {

namespace {

std::int64_t amplitude(int n, DataType type) {
  std::int64_t exact = 1ll << 24;
  if (type == DataType::kFp16) exact = 1ll << 11;
  if (type == DataType::kBf16) exact = 1ll << 8;
  std::int64_t a = exact / std::max(1, n);
  if (a > 30) a = 30;
  if (a < 1) a = 1;
  return a;
}

void write_element(std::uint8_t* p, std::int64_t v, DataType type) {
  switch (type) {
    case DataType::kFp32: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case DataType::kInt32: {
      const auto i = static_cast<std::int32_t>(v);
      std::memcpy(p, &i, 4);
      break;
    }
    case DataType::kFp16: {
      const std::uint16_t h = float_to_half(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case DataType::kBf16: {
      const std::uint16_t h = float_to_bf16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    }
  }
}

/// What should be at element i of this NPU's working buffer at the end, or
/// false when the collective leaves that element undefined.
bool expected(const CollectiveRun& run, std::uint64_t i, std::int64_t& out) {
  const CollectiveSpec& s = run.spec;
  const auto& ranks = s.group->ranks;
  const int n = static_cast<int>(ranks.size());
  const unsigned eb = element_bytes(s.dtype);
  const std::uint64_t byte = i * eb;
  const std::uint64_t block = s.bytes / static_cast<std::uint64_t>(n);
  const auto me = static_cast<std::uint64_t>(run.me);
  const int root_rank = ranks[static_cast<std::size_t>(s.root)];
  auto all_reduced = [&](std::uint64_t idx) {
    std::int64_t v = pattern_value(ranks[0], idx, n, s.dtype);
    for (int k = 1; k < n; ++k)
      v = combine<std::int64_t>(v, pattern_value(ranks[static_cast<std::size_t>(k)], idx, n, s.dtype), s.op);
    return v;
  };
  const bool in_my_block = block > 0 && byte / block == me && byte < s.bytes;
  switch (s.type) {
    case CollectiveType::kAllReduce:
      out = all_reduced(i);
      return true;
    case CollectiveType::kReduce:
      if (run.me != s.root) return false;
      out = all_reduced(i);
      return true;
    case CollectiveType::kBroadcast:
      out = pattern_value(root_rank, i, n, s.dtype);
      return true;
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
      if (!in_my_block) return false;
      out = all_reduced(i);
      return true;
    case CollectiveType::kAllGather:
    case CollectiveType::kGather: {
      if (s.type == CollectiveType::kGather && run.me != s.root) return false;
      if (block == 0 || byte >= block * static_cast<std::uint64_t>(n)) return false;
      out = pattern_value(ranks[byte / block], i, n, s.dtype);
      return true;
    }
    case CollectiveType::kScatter:
      if (!in_my_block) return false;
      out = pattern_value(root_rank, i, n, s.dtype);
      return true;
    case CollectiveType::kAllToAll: {
      if (byte < s.bytes || block == 0) return false;  // the send half, or nothing to check
      const std::uint64_t j = (byte - s.bytes) / block, o = (byte - s.bytes) % block;
      if (j >= static_cast<std::uint64_t>(n)) return false;
      if (s.sizes && o >= (*s.sizes)[j][me]) return false;  // all-to-all-v: beyond what j sent me
      out = pattern_value(ranks[j], (me * block + o) / eb, n, s.dtype);
      return true;
    }
    case CollectiveType::kBarrier:
      return false;
  }
  return false;
}

}  // namespace

std::int64_t pattern_value(int rank, std::uint64_t index, int n, DataType type) {
  const std::int64_t a = amplitude(n, type);
  const std::uint64_t h = (static_cast<std::uint64_t>(rank) * 2654435761u + index * 40503u + 12345u) % 1000003u;
  return static_cast<std::int64_t>(h % static_cast<std::uint64_t>(2 * a + 1)) - a;
}

void init_collective_data(CollectiveRun& run) {
  const CollectiveSpec& s = run.spec;
  const int n = static_cast<int>(s.group->ranks.size());
  const unsigned eb = element_bytes(s.dtype);
  if (s.bytes % eb != 0) {
    throw std::invalid_argument("data mode needs a whole number of " + std::string(to_string(s.dtype)) + " elements; " +
                                std::to_string(s.bytes) + " bytes is not");
  }
  run.data.assign(working_bytes(s.type, s.bytes, n), 0xcd);
  const int rank = s.group->ranks[static_cast<std::size_t>(run.me)];
  const std::uint64_t elems = s.bytes / eb;
  const std::uint64_t block = s.bytes / static_cast<std::uint64_t>(n);
  const auto me = static_cast<std::uint64_t>(run.me);
  for (std::uint64_t i = 0; i < elems; ++i) {
    const std::uint64_t byte = i * eb;
    const bool mine = block > 0 && byte / block == me;
    switch (s.type) {
      case CollectiveType::kAllGather:
      case CollectiveType::kGather:
        if (!mine) continue;  // only my own block holds data at the start
        break;
      case CollectiveType::kBroadcast:
      case CollectiveType::kScatter:
        if (run.me != s.root) continue;  // only the root has data
        break;
      default:
        break;
    }
    write_element(run.data.data() + byte, pattern_value(rank, i, n, s.dtype), s.dtype);
  }
  if (s.type == CollectiveType::kAllToAll && s.algorithm == AlgorithmKind::kHierarchical) {
    // A phase per dimension works in place in the receive half (hierarchical.cpp),
    // which starts as a local copy of the send half (no simulated time).
    std::memcpy(run.data.data() + s.bytes, run.data.data(), s.bytes);
  } else if (s.type == CollectiveType::kAllToAll && block > 0) {
    // An NPU's block for itself does not cross the fabric: a local copy
    // (taking no simulated time).
    const std::uint64_t own = s.sizes ? (*s.sizes)[me][me] : block;
    if (own > 0) std::memcpy(run.data.data() + s.bytes + me * block, run.data.data() + me * block, own);
  }
}

void check_collective_data(CollectiveRun& run) {
  const CollectiveSpec& s = run.spec;
  const unsigned eb = element_bytes(s.dtype);
  const std::uint64_t elems = run.data.size() / eb;
  std::uint8_t want[4];
  for (std::uint64_t i = 0; i < elems; ++i) {
    std::int64_t v = 0;
    if (!expected(run, i, v)) continue;
    write_element(want, v, s.dtype);
    if (std::memcmp(want, run.data.data() + i * eb, eb) != 0) {
      std::ostringstream os;
      os << to_string(s.type) << " \"" << s.name << "\": NPU " << s.group->ranks[static_cast<std::size_t>(run.me)]
         << ", offset " << i * eb << " (element " << i << "): expected " << element_text(want, 0, s.dtype) << ", got "
         << element_text(run.data.data(), i, s.dtype);
      run.data_error = os.str();
      return;
    }
  }
}

}  // namespace fabricsim
