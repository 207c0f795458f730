// What a fabric message asks of the fabric besides delivery. Apart from
// fabric_protocol.h, and free of SystemC, so that the collective library's
// programs (models/collectives/) can name it without the fabric.
#pragma once

#include <cstdint>

namespace fabricsim {

/// What a message asks of the fabric besides delivery.
/// The kinds other than kUnicast are addressed to a switch reduction unit
/// (models/switch/reduction_unit.h), or made by one.
enum class MessageKind : std::uint8_t {
  kUnicast,        // deliver to `dst`
  kReduce,         // a contribution to an in-switch reduction, combined with the group's others
  kPullRequest,    // asks for a reduction (NVLS multimem.ld_reduce): header-only packets
  kMulticast,      // data for every member of the group, on its way up to the tree's root
  kMulticastDown,  // the same, on its way down from the root to the members
  kResult,         // a reduction's result, on its way down a tree of units
};

/// How results of switch reductions name their sender (Message::tag.src_rank);
/// read requests from a unit carry the unit's own (negative) peer id.
constexpr std::uint32_t kFromReductionUnit = 0xffffffu;

}  // namespace fabricsim
