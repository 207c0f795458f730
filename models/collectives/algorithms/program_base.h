// What every algorithm's program shares: its spec, the group's size and my
// index, and the transfers it is built from. Each algorithm lives in its own
// file beside this one and is registered in make_program.cpp.
#pragma once

#include <memory>
#include <string>

#include "models/collectives/collective.h"

namespace fabricsim::algorithms {

inline int mod(int a, int n) {
  return ((a % n) + n) % n;
}

/// ProgramSpec::variant of the double binary tree: the whole chunk down one
/// tree, A for even chunks, B for odd.
constexpr int kTreeByChunk = 2;

/// Throws std::invalid_argument: "the <algorithm> algorithm does not apply to
/// <type>: <why>".
[[noreturn]] void not_applicable(const ProgramSpec& s, const std::string& why = "");

class ProgramBase : public Program {
 public:
  explicit ProgramBase(const ProgramSpec& s)
      : spec_(s), n_(static_cast<int>(s.ranks->size())), me_(s.node_size > 0 ? place_of(s.me) : s.me) {}

 protected:
  /// With ProgramSpec::node_size set, the program works in places along its
  /// channel's ring: place q is group index member(q), and segment q is
  /// member(q)'s block, so every member still ends with its own. Computed,
  /// not stored (a 1,024-NPU ring in many channels adds up).
  int member(int place) const {
    const int q = mod(place, n_), g = spec_.node_size;
    if (g == 0) return q;
    const int node = q / g, k = q % g, c = static_cast<int>(spec_.channel);
    return node * g + (node % 2 == 0 ? mod(c + k, g) : mod(c - 1 - k, g));
  }
  int place_of(int index) const {
    const int g = spec_.node_size, node = index / g, l = index % g, c = static_cast<int>(spec_.channel);
    return node * g + (node % 2 == 0 ? mod(l - c, g) : mod(c - 1 - l, g));
  }
  int rank(int place) const { return (*spec_.ranks)[static_cast<std::size_t>(member(place))]; }
  Transfer piece(int peer_place, int a, int b, bool reduce = false) const {
    Transfer t = spec_.node_size == 0 || (a == 0 && b == n_) ? spec_.segments.range(a, b) : member_block(a, b);
    t.peer = rank(peer_place);
    t.reduce = reduce;
    return t;
  }
  /// Segment a, the block of the member at place a (a ring in channels);
  /// out of line, to keep the common path of piece() small.
  Transfer member_block(int a, int b) const;
  Transfer whole(int peer_index, bool reduce = false) const { return piece(peer_index, 0, n_, reduce); }
  Transfer nothing(int peer_index) const {
    Transfer t;
    t.peer = rank(peer_index);
    return t;
  }

  ProgramSpec spec_;
  int n_;
  int me_;
};

// One factory per algorithm (its own file), each throwing
// std::invalid_argument when the algorithm does not apply to the spec.
std::unique_ptr<Program> make_ring(const ProgramSpec& spec);
std::unique_ptr<Program> make_direct(const ProgramSpec& spec);
std::unique_ptr<Program> make_halving_doubling(const ProgramSpec& spec);
std::unique_ptr<Program> make_double_binary_tree(const ProgramSpec& spec);
std::unique_ptr<Program> make_hierarchical(const ProgramSpec& spec);
std::unique_ptr<Program> make_in_switch(const ProgramSpec& spec);
std::unique_ptr<Program> make_pat(const ProgramSpec& spec);

/// Themis's order of the levels for each of `chunks` chunks (Rashidi et al.,
/// ISCA 2022): chunk by chunk, the dimension with the least load so far takes
/// the first, largest reduce-scatter, the next least loaded the second... A
/// dimension's load is the time its stages take, data x (n-1)/n over its
/// bandwidth, reduce-scatter and all-gather. It depends on the chunk index
/// alone, so every member computes the same orders. A double binary tree
/// only runs as the last level: with one, the order stays ascending. When
/// every level all-reduces the whole chunk (LevelData::kWhole), the data
/// does not shrink from level to level.
std::vector<std::vector<std::size_t>> themis_level_orders(const std::vector<Dimension>& dims, std::uint32_t chunks,
                                                          LevelData level_data = LevelData::kPart);

}  // namespace fabricsim::algorithms
