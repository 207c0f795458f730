// How switches choose among equal-cost ports, without SystemC: the platform
// description names it (platforms/assembly/platform_spec.h).
#pragma once

namespace fabricsim {

/// Which of a destination's equal-cost ports a frame takes.
enum class PortChoice {
  kFlowHash,  // ECMP: a hash of the frame's flow, so a flow keeps one path and its order
  kAdaptive,  // per frame, the port with the least backlog (InfiniBand adaptive routing); ties by flow hash
  kSpray,     // per frame, the ports in turn (packet spraying)
  // One path per destination, fixed by the destination's place in the tree
  // (d-mod-k, as InfiniBand's subnet manager routes a fat tree): the route
  // tables hold that port alone, and a flow keeps its order.
  kDestination,
};

}  // namespace fabricsim
