#include "models/collectives/collective.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace fabricsim {

const char* to_string(CollectiveType t) {
  switch (t) {
    case CollectiveType::kAllReduce:
      return "all_reduce";
    case CollectiveType::kReduce:
      return "reduce";
    case CollectiveType::kAllGather:
      return "all_gather";
    case CollectiveType::kGather:
      return "gather";
    case CollectiveType::kScatter:
      return "scatter";
    case CollectiveType::kBroadcast:
      return "broadcast";
    case CollectiveType::kAllToAll:
      return "all_to_all";
    case CollectiveType::kReduceScatter:
      return "reduce_scatter";
    case CollectiveType::kReduceScatterBlock:
      return "reduce_scatter_block";
    case CollectiveType::kBarrier:
      return "barrier";
  }
  return "?";
}

std::optional<CollectiveType> collective_from_chakra(std::int64_t comm_type) {
  if (comm_type < 0 || comm_type > static_cast<std::int64_t>(CollectiveType::kBarrier)) return std::nullopt;
  return static_cast<CollectiveType>(comm_type);  // same numbering as et_def.proto
}

namespace {
std::string squash(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c != '_' && c != '-' && c != ' ') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}
}  // namespace

std::optional<CollectiveType> collective_from_name(const std::string& name) {
  const std::string k = squash(name);
  for (int t = 0; t <= static_cast<int>(CollectiveType::kBarrier); ++t) {
    if (squash(to_string(static_cast<CollectiveType>(t))) == k) return static_cast<CollectiveType>(t);
  }
  if (k == "alltoallv") return CollectiveType::kAllToAll;
  return std::nullopt;
}

const char* to_string(AlgorithmKind a) {
  switch (a) {
    case AlgorithmKind::kRing:
      return "ring";
    case AlgorithmKind::kDirect:
      return "direct";
    case AlgorithmKind::kHalvingDoubling:
      return "halving_doubling";
    case AlgorithmKind::kDoubleBinaryTree:
      return "double_binary_tree";
    case AlgorithmKind::kHierarchical:
      return "hierarchical";
    case AlgorithmKind::kInSwitch:
      return "in_switch";
    case AlgorithmKind::kPat:
      return "pat";
  }
  return "?";
}

std::optional<AlgorithmKind> algorithm_from_name(const std::string& name) {
  const std::string k = squash(name);
  for (int a = 0; a <= static_cast<int>(AlgorithmKind::kPat); ++a) {
    if (squash(to_string(static_cast<AlgorithmKind>(a))) == k) return static_cast<AlgorithmKind>(a);
  }
  return std::nullopt;
}

int Group::index_of(int rank) const {
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] == rank) return static_cast<int>(i);
  }
  return -1;
}

std::uint64_t Segments::total() const {
  std::uint64_t t = 0;
  for (int k = 0; k < n; ++k) t += length(k);
  return t * pieces;
}

Transfer Segments::range(int a, int b) const {
  Transfer t;
  if (b <= a) {
    t.offset = offset(a < n ? a : 0);
    t.length = 0;
    return t;
  }
  t.offset = offset(a);
  if (blocked && pieces > 1) {
    // Segments of several runs interleave: only one fits a transfer.
    if (b - a != 1) throw std::logic_error("a transfer of several segments of strided runs");
    t.length = base;
    t.count = pieces;
    t.stride = piece_stride;
  } else if (blocked) {
    t.length = base;
    t.count = static_cast<std::uint32_t>(b - a);
    t.stride = stride;
  } else {
    t.length = offset(b - 1) + length(b - 1) - offset(a);
  }
  return t;
}

Segments Segments::split(int k, int m, std::uint64_t elem) const {
  Segments s;
  s.n = m;
  const std::uint64_t len = length(k);
  s.first = offset(k);
  const std::uint64_t elems = len / elem;
  s.base = elems / static_cast<std::uint64_t>(m) * elem;
  s.longer = static_cast<std::uint32_t>(elems % static_cast<std::uint64_t>(m));
  s.element = elem;
  s.tail = len % elem;
  return s;
}

std::uint64_t working_bytes(CollectiveType type, std::uint64_t bytes, int) {
  // All-to-all sends from the first half and receives into the second.
  return type == CollectiveType::kAllToAll ? 2 * bytes : bytes;
}

namespace {
/// Byte length of piece i when `len` bytes are cut into `parts` pieces on
/// element boundaries, remainder elements first, stray bytes on the last.
std::uint64_t piece(std::uint64_t len, std::uint64_t parts, std::uint64_t elem, std::uint64_t i) {
  const std::uint64_t elems = len / elem;
  std::uint64_t l = (elems / parts + (i < elems % parts ? 1 : 0)) * elem;
  if (i == parts - 1) l += len % elem;
  return l;
}
std::uint64_t piece_offset(std::uint64_t len, std::uint64_t parts, std::uint64_t elem, std::uint64_t i) {
  const std::uint64_t elems = len / elem;
  return (i * (elems / parts) + std::min(i, elems % parts)) * elem;
}
}  // namespace

Segments chunk_segments(CollectiveType type, std::uint64_t bytes, int n, std::uint32_t chunk, std::uint32_t chunks,
                        unsigned element_size) {
  Segments s;
  s.n = n;
  const auto un = static_cast<std::uint64_t>(n);
  const std::uint64_t elem = element_size;
  switch (type) {
    case CollectiveType::kAllReduce:
    case CollectiveType::kReduce:
    case CollectiveType::kBroadcast:
    case CollectiveType::kBarrier: {
      // Chunk c is a contiguous slice, itself cut into n segments.
      const std::uint64_t len = piece(bytes, chunks, elem, chunk);
      s.first = piece_offset(bytes, chunks, elem, chunk);
      const std::uint64_t elems = len / elem;
      s.base = elems / un * elem;
      s.longer = static_cast<std::uint32_t>(elems % un);
      s.element = elem;
      s.tail = len % elem;
      break;
    }
    default: {
      // Rank k's block is bytes/n; chunk c is the c-th slice of every block.
      const std::uint64_t block = bytes / un;
      s.first = piece_offset(block, chunks, elem, chunk);
      s.blocked = true;
      s.stride = block;
      s.base = piece(block, chunks, elem, chunk);
      break;
    }
  }
  return s;
}

}  // namespace fabricsim
