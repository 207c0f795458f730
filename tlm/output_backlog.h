// What an output port already has to send ahead of a new frame, as time: the
// measure by which adaptive routing (a switch picking, per packet, the least
// loaded of its equal-cost ports, as InfiniBand's adaptive routing does)
// compares ports. Links implement it; forwarders only read it.
#pragma once

#include "tlm/kernel/time.h"

namespace fabricsim {

class OutputBacklog {
 public:
  /// Time from `at` until a frame offered at `at` could start sending:
  /// what is being sent and what waits ahead of it.
  virtual Tick backlog(Tick at) const = 0;

 protected:
  ~OutputBacklog() = default;
};

}  // namespace fabricsim
