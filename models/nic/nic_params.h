// A NIC's parameters (Nic::Params), without SystemC: the platform
// description holds them (platforms/assembly/platform_spec.h).
#pragma once

#include <algorithm>
#include <cstdint>

#include "tlm/address.h"
#include "tlm/kernel/parameters.h"
#include "tlm/kernel/units.h"
#include "tlm/message_kind.h"

namespace fabricsim {

struct NicParams {
  Address address = kNoAddress;
  unsigned ports = 1;
  std::uint64_t mtu_bytes = 4096;           // payload bytes per packet
  std::uint64_t header_bytes = 0;           // added on the wire per packet
  std::uint64_t segment_bytes = 256 << 10;  // most message bytes per frame
  Bandwidth injection = Bandwidth::unlimited();
  Tick message_overhead = 0;  // per message, before its first frame leaves
  Tick forward_latency = 0;   // for frames passing through to other NPUs
  /// Spread each message's frames over every port that leads to its
  /// destination, each port taking the next frame when it is free (as a
  /// GPU spreads traffic over its NVLinks). Frames may then arrive out of
  /// order; messages are reassembled by count.
  bool stripe = false;
  /// Bytes of frames a port reads from the NPU's memory ahead of the wire
  /// (outstanding DMA reads); 0: unset, which a platform derives from its
  /// port's rate and DMA path (derived_read_ahead) and a NIC built alone
  /// takes as one segment. 32 bits, in stripe's padding: a larger Params
  /// moved the NIC's hot fields and cost 8% on the 1,024-NPU runs.
  std::uint32_t read_ahead_bytes = 0;
  /// Per message of a collective step, by its protocol (Message::protocol:
  /// Simple, LL, LL128), in place of message_overhead: the step's
  /// synchronization. Last, away from the hot fields above.
  Tick step_overhead_simple = 0;
  Tick step_overhead_ll = 0;
  Tick step_overhead_ll128 = 0;
  /// What a message of protocol `p` waits before its first frame leaves.
  Tick overhead(CommProtocol p) const {
    return per_protocol(p, message_overhead, step_overhead_simple, step_overhead_ll, step_overhead_ll128);
  }
  /// The message bytes a frame carries: segment_bytes in whole packets,
  /// at least one.
  std::uint64_t frame_bytes() const {
    const std::uint64_t segment = std::max(segment_bytes, mtu_bytes);
    return segment - segment % mtu_bytes;
  }
  /// Bytes on the wire for `bytes` of payload: packets of mtu_bytes, a
  /// header each.
  std::uint64_t wire_bytes(std::uint64_t bytes) const {
    const std::uint64_t packets = std::max<std::uint64_t>(1, (bytes + mtu_bytes - 1) / mtu_bytes);
    return bytes + packets * header_bytes;
  }
  /// Wire bytes of a run of `bytes` of a message of `kind` and `protocol`:
  /// a pull request names the bytes it asks for, its packets are headers
  /// only; LL and LL128 put their flags on the wire with the data.
  std::uint64_t wire_bytes(std::uint64_t bytes, MessageKind kind, CommProtocol protocol) const {
    if (kind == MessageKind::kPullRequest) return wire_bytes(bytes) - bytes;
    if (protocol == CommProtocol::kLL || protocol == CommProtocol::kLL128) {
      return wire_bytes(protocol_bytes(bytes, protocol));
    }
    return wire_bytes(bytes);
  }
  /// The read-ahead that keeps a port of `port_rate` busy when each DMA read
  /// answers `path_latency` after it is asked and moves its bytes at
  /// `read_rate` (Little's law: rate x (latency + a frame's read) bytes in
  /// flight, the rate the slower of the port and the read), in whole frames
  /// of `segment` bytes, at least one and at most 16. A frame read ahead is claimed by its port, so no deeper than
  /// that: on a striped message the ports' last frames would come out unevenly. NCCL never holds it back: its proxy
  /// keeps NCCL_STEPS (8) steps of a channel posted, a ConnectX reads with many requests outstanding, and SMs copying
  /// over NVLink keep many loads in flight.
  static std::uint32_t derived_read_ahead(Bandwidth port_rate, Tick path_latency, Bandwidth read_rate,
                                          std::uint64_t segment);
  /// Every user-settable parameter, with unit, range and description.
  static const ParamTable<NicParams>& table();
};

}  // namespace fabricsim
