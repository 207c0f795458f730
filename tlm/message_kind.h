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

/// How a collective step's receiver learns that its data has arrived, as
/// NCCL's protocols do it (each with its own per-step latency at the NIC,
/// models/nic/nic.h). kPlain: no collective protocol (point-to-point sends,
/// in-switch collectives, memory traffic): the NIC's message overhead.
///   Simple: the data, then a flag after a memory fence: full bandwidth, the
///           highest per-step latency;
///   LL:     a flag in every 8-byte line (4 bytes of data): half the
///           bandwidth, the lowest latency;
///   LL128:  a flag in every 128-byte line (120 bytes of data).
enum class CommProtocol : std::uint8_t { kPlain, kSimple, kLL, kLL128 };
constexpr int kCommProtocols = 4;

/// Of four values, the one that goes with protocol `p` (a parameter kept per
/// protocol: a NIC's step overhead, a collective's launch latency).
template <class T>
constexpr T per_protocol(CommProtocol p, T plain, T simple, T ll, T ll128) {
  return p == CommProtocol::kSimple ? simple : p == CommProtocol::kLL ? ll : p == CommProtocol::kLL128 ? ll128 : plain;
}

/// Bytes a protocol puts on the wire for `payload` bytes of data (before
/// packet headers).
constexpr std::uint64_t protocol_bytes(std::uint64_t payload, CommProtocol p) {
  return p == CommProtocol::kLL      ? (payload + 3) / 4 * 8
         : p == CommProtocol::kLL128 ? (payload + 119) / 120 * 128
                                     : payload;
}

/// How results of switch reductions name their sender (Message::tag.src_rank);
/// read requests from a unit carry the unit's own (negative) peer id.
constexpr std::uint32_t kFromReductionUnit = 0xffffffu;

}  // namespace fabricsim
