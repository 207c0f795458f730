// Routing tables for a fabric, computed once by the builder.
//
// - Shortest path (explicit netlists, fully connected): breadth-first search
//   from every destination; among equal next hops the lowest port wins, so
//   each destination has one path.
// - Up/down (switch-based: single switch, fat trees, hierarchies): shortest
//   paths, which in a Clos network go up to a common ancestor and down again;
//   all equal-cost up ports are kept and a flow hash picks one per flow.
// - Dimension order (rings, tori, meshes): correct the first dimension whose
//   coordinate differs, the shorter way round on a torus (ties go the positive
//   way); with bubble flow control on each ring this is deadlock-free.
// NICs forward traffic for others only on fabrics without switches.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "platforms/assembly/platform_spec.h"
#include "tlm/routing_table.h"

namespace fabricsim {

/// Port p of node u: the edge it belongs to and the node at its other end.
struct PortInfo {
  int edge;
  int peer;
};
std::vector<std::vector<PortInfo>> port_map(const FabricSpec& f);

/// The dimension-order rule of a fabric made by a ring/torus/mesh generator.
DimensionOrder dimension_order_of(const FabricSpec& f);
/// For node u of such a fabric: port towards -1 and +1 in each dimension.
std::vector<std::array<int, 2>> dimension_ports(const FabricSpec& f, const std::vector<std::vector<PortInfo>>& ports,
                                                int u);

/// Receives, for node u and a destination's fabric address, the ports of u
/// that lead there; destinations come in increasing address order.
using RouteSink = std::function<void(int node, Address address, const std::vector<std::uint16_t>& ports)>;

/// Computes every node's routes and hands them to `sink` (tables are not
/// held here: at thousands of NPUs they are the builder's largest cost).
/// Throws InputError if some NIC cannot reach some other NIC.
void compute_routes(const FabricSpec& f, const std::vector<std::vector<PortInfo>>& ports, const RouteSink& sink);

/// Hop counts (links crossed) between every pair of NICs, by address,
/// following the routes. For tests and reports.
std::vector<std::vector<int>> route_hops(const FabricSpec& f);

}  // namespace fabricsim
