// How the bytes of a memory access move in time, for an element between an
// initiator and a memory that passes data on as it arrives (cut-through), as
// a PCIe switch does. An optional extension of a base-protocol payload: an
// element that finds none treats the access as whole, at its request and at
// its response, which is right for an initiator that needs every byte before
// it can go on.
#pragma once

#include <tlm>

#include "tlm/kernel/time.h"

namespace fabricsim {

struct StreamTiming : tlm::tlm_extension<StreamTiming> {
  /// A WRITE, set by the initiator: when its first byte was ready, the rest
  /// arriving until the request's time (a NIC writing a frame that came in
  /// from the wire). kNever: all of it at the request's time.
  /// A READ, set by a streaming element in its response: when the first byte
  /// reached the initiator (the response may come later). kNever: at the
  /// response.
  Tick first_byte = kNever;
  /// A READ: how long the initiator takes to pass the bytes on once it has
  /// the first (a NIC: the frame's time on the wire). The response may then
  /// come as soon as consuming at that pace cannot outrun the data. 0: at the
  /// last byte.
  Tick consume_time = 0;

  tlm::tlm_extension_base* clone() const override { return new StreamTiming(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const StreamTiming&>(e); }
};

}  // namespace fabricsim
