#include "platforms/assembly/traffic_paths.h"

#include <algorithm>
#include <stdexcept>

#include "tlm/routing_table.h"

namespace fabricsim {

PlatformPaths::PlatformPaths(const Directory& directory, std::vector<Fabric> fabrics)
    : directory_(directory), fabrics_(std::move(fabrics)) {
  for (const Fabric& f : fabrics_) {
    first_link_.push_back(static_cast<std::uint32_t>(rates_.size()));
    std::vector<int> nodes(static_cast<std::size_t>(directory.npus()), -1);
    if (f.spec) {
      const double mtu = static_cast<double>(f.spec->nic.mtu_bytes);
      const double payload = mtu / (mtu + static_cast<double>(f.spec->nic.header_bytes));
      for (const FabricEdge& e : f.spec->edges) {
        const double r = e.link.bandwidth.is_unlimited() ? 1e30 : e.link.bandwidth.bytes_per_ps() * 1e12 * payload;
        rates_.push_back(r);  // a to b
        rates_.push_back(r);  // b to a
      }
      for (std::size_t u = 0; u < f.spec->nodes.size(); ++u) {
        const FabricNode& n = f.spec->nodes[u];
        if (n.kind == FabricNode::Kind::kNic && n.npu >= 0 && n.npu < directory.npus()) {
          nodes[static_cast<std::size_t>(n.npu)] = static_cast<int>(u);
        }
      }
    }
    node_of_rank_.push_back(std::move(nodes));
  }
}

const FabricCosts& PlatformPaths::costs(int from, int to) const {
  if (!directory_.connected(from, to)) return costs(from, directory_.next_hop(from, to));
  const auto fi = directory_.route(from, to).fabric;
  return fabrics_[fi].costs ? *fabrics_[fi].costs : unknown_;
}

int PlatformPaths::path(int from, int to, std::vector<Use>& out) const {
  if (from == to) return 0;
  if (!directory_.connected(from, to)) {  // relayed by an NPU on the way
    const int via = directory_.next_hop(from, to);
    return path(from, via, out) + path(via, to, out);
  }
  const PeerRoute route = directory_.route(from, to);
  const int u = node_of_rank_[route.fabric][static_cast<std::size_t>(from)];
  if (u < 0) return 0;
  // The flow an NPU gives its messages to `to` (Npu::new_message).
  const std::uint32_t flow = static_cast<std::uint32_t>(from) * 0x10001u + static_cast<std::uint32_t>(to);
  return walk(route.fabric, u, route.address, flow, 1.0, out, 0);
}

int PlatformPaths::walk(std::size_t fi, int u, Address dst, std::uint32_t flow, double share, std::vector<Use>& out,
                        int depth) const {
  const Fabric& f = fabrics_[fi];
  const FabricNode& node = f.spec->nodes[static_cast<std::size_t>(u)];
  if (node.address == dst && depth > 0) return 0;
  if (depth > static_cast<int>(f.spec->nodes.size())) throw std::logic_error("a route that loops");
  const RoutingTable* r = f.routes[static_cast<std::size_t>(u)];
  if (!r) return 0;
  // A striping NIC spreads a message over every port towards its
  // destination; anything else takes the one its flow hashes to.
  std::vector<std::uint16_t> ports;
  if (f.ports[static_cast<std::size_t>(u)].size() == 1) {
    ports = {0};
  } else if (depth == 0 && f.spec->nic.stripe) {
    ports = r->ports(dst);
  }
  if (ports.empty()) ports = {r->port(dst, flow)};
  // A stripe splits by the links' rates (each port takes frames as fast as
  // it sends them).
  const auto& pm = f.ports[static_cast<std::size_t>(u)];
  const auto link_of = [&](std::uint16_t p) {
    const PortInfo& pi = pm[p];
    const FabricEdge& e = f.spec->edges[static_cast<std::size_t>(pi.edge)];
    return first_link_[fi] + 2 * static_cast<std::uint32_t>(pi.edge) + (e.a == u ? 0u : 1u);
  };
  double sum = 0;
  for (std::uint16_t p : ports) sum += rates_[link_of(p)];
  int longest = 0;
  for (std::uint16_t p : ports) {
    const std::uint32_t link = link_of(p);
    const double s = share * rates_[link] / sum;
    out.push_back(Use{link, s, depth == 0});
    longest = std::max(longest, 1 + walk(fi, pm[p].peer, dst, flow, s, out, depth + 1));
  }
  return longest;
}

}  // namespace fabricsim
