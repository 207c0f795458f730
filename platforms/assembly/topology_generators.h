// Topology generators. Each makes one fabric over the NPUs `ranks` (NIC i,
// at fabric address i, belongs to rank ranks[i]); the loader replicates a
// generator over groups of NPUs for multi-dimensional platforms.
#pragma once

#include <string>
#include <vector>

#include "platforms/assembly/platform_spec.h"

namespace fabricsim {

std::vector<int> iota_ranks(int n, int first = 0);

/// A NIC node per rank, named npu<rank>, with fabric addresses 0, 1, ...
/// in the order given: every fabric starts with these.
void add_nics(FabricSpec& f, const std::vector<int>& ranks);

FabricSpec make_ring(const std::vector<int>& ranks, bool bidirectional, const LinkParams& link);
FabricSpec make_fully_connected(const std::vector<int>& ranks, const LinkParams& link);
FabricSpec make_single_switch(const std::vector<int>& ranks, const LinkParams& link, Tick switch_latency);
/// Several switches, each joined to every NPU by `lanes[j]` links of `link`
/// bonded into one (a DGX H100: 4 NVSwitches, 5+4+4+5 NVLinks per GPU).
FabricSpec make_switch_planes(const std::vector<int>& ranks, const std::vector<int>& lanes, const LinkParams& link,
                              Tick switch_latency);
/// 2-D or 3-D torus (wrap = true) or mesh (wrap = false); ranks.size() must
/// equal the product of dims, laid out x fastest.
FabricSpec make_torus(const std::vector<int>& ranks, const std::vector<int>& dims, bool wrap, const LinkParams& link);

struct FatTreeShape {
  int levels = 2;       // 2: leaf-spine; 3: leaf-aggregation-core in pods
  int leaf_down = 16;   // NPUs per leaf switch
  int leaf_up = 16;     // up links per leaf (leaf_down / leaf_up = oversubscription)
  int pod_leaves = 16;  // 3 levels: leaves per pod
  int agg_up = 16;      // 3 levels: up links per aggregation switch
  int rails = 1;        // > 1: rail-optimized, NPU k of every group of `rails` on rail k
};
/// Leaf-spine (2 levels) or pods with a core (3 levels). Leaf j of a 2-level
/// tree has one link to each of the leaf_up spines; in 3 levels each leaf has
/// one link to each of the pod's leaf_up aggregation switches, and
/// aggregation switch j of every pod one link to each of the core switches
/// j*agg_up .. j*agg_up+agg_up-1.
FabricSpec make_fat_tree(const std::vector<int>& ranks, const FatTreeShape& shape, const LinkParams& link,
                         const LinkParams& uplink, Tick switch_latency);

/// Adds memory nodes to a fabric: each joined to the fabric's one switch by
/// `link` (its address follows the NICs'). Throws for fabrics without exactly
/// one switch.
void attach_memories(FabricSpec& f, std::vector<MemorySpec> memories, const LinkParams& link);

/// NICs shared by `per_nic` NPUs each: `f` was made over one NPU of each
/// group (the first); each of its NIC nodes becomes the shared NIC's own
/// switching (a switch node `nic<a>` keeping the NIC's links, no latency of
/// its own), and every NPU of the group gets a NIC node of its own (its
/// function of the NIC: queues, DMA, overheads) joined to it by `inner`.
/// `ranks` are the fabric's NPUs in order; group k is ranks[k x per_nic ..].
/// Addresses become the port's times per_nic plus the NPU's place in the group.
void share_nics(FabricSpec& f, const std::vector<int>& ranks, int per_nic, const LinkParams& inner);

/// The groups of a dimension: `size` ranks `stride` apart, as ASTRA-sim
/// builds multi-dimensional networks (dimension 0 groups consecutive ranks).
std::vector<std::vector<int>> rank_groups(int npus, int size, int stride);

/// Bisection bandwidth (bytes per second, one direction): the smallest total
/// bandwidth of links whose removal separates NICs at addresses [0, n/2) from
/// those at [n/2, n) (a max-flow over the fabric graph).
double bisection_bandwidth(const FabricSpec& f);

}  // namespace fabricsim
