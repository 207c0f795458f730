// Topology generators: each returns a fabric over NPUs `first..first+n-1`.
#pragma once

#include "platforms/platform_spec.h"

namespace fabricsim {

FabricSpec make_ring(int n, bool bidirectional, const Link::Params& link);
FabricSpec make_fully_connected(int n, const Link::Params& link);
FabricSpec make_single_switch(int n, const Link::Params& link, Tick switch_latency);

/// Adds NIC nodes for ranks 0..n-1 (node i = rank i) and returns the count.
int add_nics(FabricSpec& f, int n);

}  // namespace fabricsim
