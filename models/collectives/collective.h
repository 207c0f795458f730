// Collectives as an NPU's communication library sees them: a type, a size, a
// group of ranks, and an algorithm that turns the collective into rounds of
// messages between the group's members.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tlm/message_kind.h"

namespace fabricsim {

enum class CollectiveType : std::uint8_t {
  kAllReduce,
  kReduce,
  kAllGather,
  kGather,
  kScatter,
  kBroadcast,
  kAllToAll,
  kReduceScatter,
  kReduceScatterBlock,
  kBarrier,
};
const char* to_string(CollectiveType t);
/// Chakra's CollectiveCommType value -> our type.
std::optional<CollectiveType> collective_from_chakra(std::int64_t comm_type);
/// "all_reduce", "allreduce", "ALL_REDUCE"... -> type.
std::optional<CollectiveType> collective_from_name(const std::string& name);

enum class AlgorithmKind : std::uint8_t {
  kRing,
  kDirect,
  kHalvingDoubling,
  kDoubleBinaryTree,
  kHierarchical,
  kInSwitch,
  kPat
};
const char* to_string(AlgorithmKind a);
std::optional<AlgorithmKind> algorithm_from_name(const std::string& name);
/// Whether `a` can run one level of a hierarchical collective (every
/// algorithm but hierarchical itself; a double binary tree only as the top
/// level, which hierarchical refuses otherwise).
inline bool runs_a_level(AlgorithmKind a) {
  return a != AlgorithmKind::kHierarchical && a != AlgorithmKind::kPat;
}

/// What each level of a hierarchical all-reduce works on: the part the
/// level below left this NPU (reduce-scatter going up, all-gather coming
/// down: NCCL's form, ASTRA-sim's localBWAware), or the whole chunk,
/// all-reduced at every level in turn (ASTRA-sim's baseline).
enum class LevelData : std::uint8_t { kPart, kWhole };

/// A set of ranks that run collectives together. Index i of `ranks` is the
/// member's position in the group.
struct Group {
  std::uint32_t id = 0;
  std::string name;
  std::vector<int> ranks;
  int index_of(int rank) const;
};

/// One message of a round, seen from one NPU: `count` pieces of `length`
/// bytes, `stride` apart, starting at `offset` in the working buffer (one
/// message per partner per round, even when its bytes are not contiguous).
struct Transfer {
  int peer = 0;              // global rank of the other side
  std::uint64_t offset = 0;  // into the working buffer
  std::uint64_t length = 0;  // bytes per piece
  std::uint32_t count = 1;   // pieces
  std::uint64_t stride = 0;  // between pieces
  bool reduce = false;       // receive side: combine with what is there, else copy
  /// Matches a send to its receive (with the chunk and the sender): by
  /// default the round it is sent in. A receive names the sender's round.
  std::uint32_t tag = kSameRound;
  static constexpr std::uint32_t kSameRound = 0xffffffffu;
  bool arrived = false;  // receive side: matched (RoundCursor::arrive)
  // In-switch algorithms (sends to a switch reduction unit):
  MessageKind kind = MessageKind::kUnicast;
  std::int32_t target = -1;  // group index of the member that gets a reduction's result; -1: all
  std::uint64_t group = 0;   // the group's key at the units
  std::uint64_t bytes() const { return length * count; }
};

/// The sender that receives name for results of switch reduction units
/// (Transfer::peer of such receives; models/switch/reduction_unit.h).
constexpr int kReductionUnitPeer = static_cast<int>(kFromReductionUnit);

/// What the platform offers a group for in-switch collectives, as one member
/// sees it.
struct InSwitchPlan {
  std::uint64_t group = 0;                 // the group's key at the units
  std::vector<int> units;                  // per stripe: the unit this member sends to (a negative peer id)
  std::vector<std::uint64_t> weights;      // per stripe: its share of the bytes (the same on every member)
  bool pull = false;                       // NVLS-style all-reduce and reduce-scatter (members pull reduced ranges)
  std::uint64_t pipeline_bytes = 1 << 20;  // pull all-reduce: pieces in which pulls and multicasts overlap
  std::uint32_t pipeline_depth = 4;        // pieces whose reads are in flight at once
};
class InSwitchResolver {
 public:
  /// The plan for member `me` of `ranks`; throws std::invalid_argument
  /// naming why the group cannot use switch reduction units.
  virtual InSwitchPlan in_switch_plan(const std::vector<int>& ranks, int me) = 0;

 protected:
  ~InSwitchResolver() = default;
};

/// A round's transfers: most rounds have one or two, kept inline so a round
/// touches no memory beyond its chunk's state (this is on every message's
/// path).
class TransferList {
 public:
  void clear() {
    size_ = 0;
    more_.clear();
  }
  void push_back(const Transfer& t) {
    if (size_ < kInline) {
      inline_[size_] = t;
    } else {
      more_.push_back(t);
    }
    ++size_;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Transfer& operator[](std::size_t i) { return i < kInline ? inline_[i] : more_[i - kInline]; }
  const Transfer& operator[](std::size_t i) const { return i < kInline ? inline_[i] : more_[i - kInline]; }

  template <typename List, typename T>
  class Iter {
   public:
    Iter(List* l, std::size_t i) : l_(l), i_(i) {}
    T& operator*() const { return (*l_)[i_]; }
    T* operator->() const { return &(*l_)[i_]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iter& o) const { return i_ != o.i_; }

   private:
    List* l_;
    std::size_t i_;
  };
  Iter<TransferList, Transfer> begin() { return {this, 0}; }
  Iter<TransferList, Transfer> end() { return {this, size_}; }
  Iter<const TransferList, const Transfer> begin() const { return {this, 0}; }
  Iter<const TransferList, const Transfer> end() const { return {this, size_}; }

 private:
  static constexpr std::size_t kInline = 2;
  Transfer inline_[kInline];
  std::size_t size_ = 0;
  std::vector<Transfer> more_;
};

/// A round: its sends are posted when it starts; it ends when all its receives
/// have arrived. The next round starts when this one has ended. A receive is
/// matched to the send with the same chunk, sender and tag (Transfer::tag).
/// Every runner applies these rules through one class (round_cursor.h).
struct Round {
  TransferList sends;
  TransferList recvs;
  void clear() {
    sends.clear();
    recvs.clear();
  }
};

/// Where segment k (0..n-1) of one chunk lies in the working buffer. A
/// collective over n ranks cuts every chunk into n segments: an all-reduce
/// chunk is one contiguous range cut on element boundaries (the first
/// `longer` segments one element longer, stray bytes on the last); a
/// gather/scatter-type chunk is the same slice of every rank's block
/// (`stride` apart). Computed, not stored: 1,024 ranks x many chunks add up.
struct Segments {
  int n = 1;
  std::uint64_t first = 0;
  bool blocked = false;  // block layout (`stride` apart) or contiguous
  std::uint64_t stride = 0;
  std::uint64_t base = 0;
  std::uint32_t longer = 0;
  std::uint64_t element = 0;
  std::uint64_t tail = 0;
  /// Block layout only: each segment is `pieces` runs of `base` bytes,
  /// `piece_stride` apart (a level of a hierarchical reduce-scatter or
  /// all-gather works on every block whose lower coordinates are this
  /// NPU's). Such segments go one per transfer.
  std::uint32_t pieces = 1;
  std::uint64_t piece_stride = 0;

  std::uint64_t offset(int k) const {
    const auto uk = static_cast<std::uint64_t>(k);
    if (blocked) return first + uk * stride;
    return first + uk * base + std::min<std::uint64_t>(uk, longer) * element;
  }
  std::uint64_t length(int k) const {
    if (blocked) return base;
    return base + (static_cast<std::uint32_t>(k) < longer ? element : 0) + (k == n - 1 ? tail : 0);
  }
  std::uint64_t total() const;
  /// Segments [a, b) as one transfer's layout (peer and reduce left unset).
  Transfer range(int a, int b) const;
  /// The contiguous sub-layout of segment k, cut into m segments.
  Segments split(int k, int m, std::uint64_t element) const;
};

/// The rounds one NPU runs for one chunk of one collective.
class Program {
 public:
  virtual ~Program() = default;
  virtual std::uint32_t num_rounds() const = 0;
  virtual void round(std::uint32_t r, Round& out) const = 0;
  /// The algorithm phase round `r` belongs to, for timelines ("reduce-scatter",
  /// "all-gather", ...). Consecutive rounds of one phase share the pointer's text.
  virtual const char* phase(std::uint32_t r) const = 0;
  /// Programs whose rounds fall into stages that use different resources
  /// (a hierarchical all-reduce: each level's reduce-scatter and all-gather)
  /// say so here; the engine then lets chunks overlap stage by stage, a
  /// limited number per stage, entering each in chunk order
  /// (CollectiveConfig::chunks_per_stage).
  virtual std::uint32_t stages() const { return 1; }
  virtual std::uint32_t stage(std::uint32_t /*r*/) const { return 0; }
  /// How many chunks may be in stage `s` at once, where the program itself
  /// bounds it (0: no bound of its own; chunks_per_stage still applies).
  /// A pulled in-switch program bounds the pieces its collective has in
  /// flight to the fabric's pipeline_depth: each chunk beyond holds more of
  /// the units' slots waiting on reads, and the reads and the multicasts
  /// then take turns instead of overlapping.
  virtual std::uint32_t stage_limit(std::uint32_t /*s*/) const { return 0; }
};

/// A dimension of a multi-dimensional platform: groups of `size` NPUs
/// `stride` apart (ASTRA-sim's layout: dimension 0 groups consecutive NPUs).
struct Dimension {
  int size = 1;
  int stride = 1;
  AlgorithmKind algorithm = AlgorithmKind::kRing;  // used within the dimension
  /// The platform file, a system file or the command line named the
  /// algorithm; otherwise the default choice may pick another for the level.
  bool named = false;
  /// Bytes per second an NPU sends within the dimension (its links
  /// together), for Themis's load estimate; 0: unknown (counted equal).
  double bandwidth = 0;
};

/// The top level of a hierarchical collective: the last dimension of more
/// than one NPU (dims.size() when there is none).
std::size_t top_level(const std::vector<Dimension>& dims);
/// Why the levels cannot run a hierarchical all-reduce ("" when they can):
/// a double binary tree has no reduce-scatter, so it runs only as the top
/// level (the last dimension of more than one NPU).
std::string hierarchical_levels_problem(const std::vector<Dimension>& dims);

/// What a program is built from.
struct ProgramSpec {
  CollectiveType type = CollectiveType::kAllReduce;
  AlgorithmKind algorithm = AlgorithmKind::kRing;
  const std::vector<int>* ranks = nullptr;       // the group, in order (shared, not copied)
  int me = 0;                                    // my index in `ranks`
  int root = 0;                                  // index in `ranks`, for rooted collectives
  Segments segments;                             // this chunk's layout
  std::uint64_t recv_base = 0;                   // all-to-all: where the receive half starts
  std::uint64_t element = 4;                     // element size, for splitting segments
  const std::vector<Dimension>* dims = nullptr;  // hierarchical: the platform's dimensions
  int variant = 0;                               // double binary tree: which of the two trees
  /// all-to-all-v: bytes(from, to) by group index (nullptr: even blocks);
  /// blocks are `segments.stride` apart and chunk `chunk` of `chunks` takes
  /// its share of every pair's bytes.
  const std::vector<std::vector<std::uint64_t>>* sizes = nullptr;
  std::uint32_t chunk = 0;
  std::uint32_t chunks = 1;
  InSwitchResolver* in_switch = nullptr;    // in-switch: the platform's reduction units
  bool themis = false;                      // hierarchical: Themis orders each chunk's dimensions
  std::vector<std::size_t> level_order;     // hierarchical: the dimensions in this chunk's order; empty: ascending
  LevelData level_data = LevelData::kPart;  // hierarchical all-reduce: what each level works on
  /// Direct: peers a member sends to (and hears from) per round; 0: all at
  /// once (ASTRA-sim's windowed direct, `directN`).
  std::uint32_t direct_window = 0;
  /// Hierarchical all-to-all phases work in place in the receive half,
  /// with the send half this many bytes below their slots as scratch (a
  /// ring relays through it; direct windows take peers in pairs). 0: not
  /// in place.
  std::uint64_t scratch_below = 0;
  /// Ring over a group that holds `node_size` members in each of its nodes
  /// (the platform's first dimension), consecutive in the group and at the
  /// same places in every node, one of several channels: channel `channel`'s
  /// ring takes each node's members from the one `channel` places along,
  /// the odd nodes in reverse, so that it crosses between nodes on one rail
  /// and the channels cross on different rails. With an odd number of
  /// nodes the crossing from the last node back to the first goes from
  /// place c - 1 to place c, off its rail (no order avoids one such hop).
  /// 0: group order.
  int node_size = 0;
  std::uint32_t channel = 0;
};

/// Builds the program, or throws std::invalid_argument naming why the
/// algorithm does not apply.
std::unique_ptr<Program> make_program(const ProgramSpec& spec);

/// A whole collective as its programs see it: the same on every member.
struct ProgramPlan {
  CollectiveType type = CollectiveType::kAllReduce;
  AlgorithmKind algorithm = AlgorithmKind::kRing;
  const std::vector<int>* ranks = nullptr;  // the group, in order
  int root = 0;                             // index in `ranks`
  std::uint64_t bytes = 0;                  // the collective's size (the buffer layout: working_bytes)
  std::uint32_t chunks = 1;                 // pipelined chunks
  std::uint32_t channels = 1;               // NCCL's channels: rings side by side (effective_channels)
  unsigned element = 4;                     // element size in bytes
  const std::vector<Dimension>* dims = nullptr;
  const std::vector<std::vector<std::uint64_t>>* sizes = nullptr;  // all-to-all-v
  InSwitchResolver* in_switch = nullptr;
  bool themis = false;  // hierarchical: each chunk's dimensions in Themis's order
  LevelData level_data = LevelData::kPart;
  std::uint32_t direct_window = 0;  // direct: peers per round; 0: all at once
};

/// The channels the plan runs in: `channels` for a ring all-reduce,
/// reduce-scatter or all-gather over the whole platform of several nodes
/// (the platform's first dimension), each channel's ring entering each node
/// at a different NPU; 1 for anything else.
std::uint32_t effective_channels(const ProgramPlan& plan);

/// Member `me`'s programs for the plan, one per pipelined chunk and channel
/// (two per for the double binary tree, one per tree). A message's chunk tag
/// is its program's index here. Throws std::invalid_argument when the
/// algorithm does not apply.
std::vector<std::unique_ptr<Program>> make_programs(const ProgramPlan& plan, int me);

/// Size of the working buffer for a collective of `bytes` over n ranks, and
/// the segment layout of chunk c of `chunks`.
std::uint64_t working_bytes(CollectiveType type, std::uint64_t bytes, int n);
Segments chunk_segments(CollectiveType type, std::uint64_t bytes, int n, std::uint32_t chunk, std::uint32_t chunks,
                        unsigned element_size);

}  // namespace fabricsim
