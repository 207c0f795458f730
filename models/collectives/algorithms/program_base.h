// What every algorithm's program shares: its spec, the group's size and my
// index, and the transfers it is built from. Each algorithm lives in its own
// file beside this one and is registered in make_program.cpp.
#pragma once

#include <memory>
#include <string>

#include "models/collectives/collective.h"

namespace fabricsim::algorithms {

inline int mod(int a, int n) { return ((a % n) + n) % n; }

/// ProgramSpec::variant of the double binary tree: the whole chunk down one
/// tree, A for even chunks, B for odd.
constexpr int kTreeByChunk = 2;

/// Throws std::invalid_argument: "the <algorithm> algorithm does not apply to
/// <type>: <why>".
[[noreturn]] void not_applicable(const ProgramSpec& s, const std::string& why = "");

class ProgramBase : public Program {
 public:
  explicit ProgramBase(const ProgramSpec& s) : spec_(s), n_(static_cast<int>(s.ranks->size())), me_(s.me) {}

 protected:
  int rank(int index) const { return (*spec_.ranks)[static_cast<std::size_t>(mod(index, n_))]; }
  Transfer piece(int peer_index, int a, int b, bool reduce = false) const {
    Transfer t = spec_.segments.range(a, b);
    t.peer = rank(peer_index);
    t.reduce = reduce;
    return t;
  }
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
