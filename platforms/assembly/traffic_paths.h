// The paths messages take on a built platform, for the default choices' cost
// model (models/collectives/cost_model.h): it follows the routing tables the
// builder installed, splitting a message over the ports a striping NIC or an
// equal-cost switch would use.
#pragma once

#include <cstdint>
#include <vector>

#include "models/collectives/cost_model.h"
#include "models/npu/directory.h"
#include "platforms/assembly/platform_spec.h"
#include "platforms/assembly/routing.h"

namespace fabricsim {

class PlatformPaths final : public TrafficPaths {
 public:
  /// One built fabric: its spec, the routing table of each node (null for
  /// nodes bound straight to a switch) and its port map.
  struct Fabric {
    const FabricSpec* spec = nullptr;
    std::vector<const RoutingTable*> routes;
    std::vector<std::vector<PortInfo>> ports;
    const FabricCosts* costs = nullptr;
  };
  PlatformPaths(const Directory& directory, std::vector<Fabric> fabrics);

  int path(int from, int to, std::vector<Use>& out) const override;
  std::size_t links() const override { return rates_.size(); }
  double rate(std::uint32_t link) const override { return rates_[link]; }
  const FabricCosts& costs(int from, int to) const override;

 private:
  /// Within fabric `fi`, from node `u` to the node at `dst`, carrying
  /// `share` of a message of `flow` (which picks among equal-cost ports, as
  /// the NICs and switches do).
  int walk(std::size_t fi, int u, Address dst, std::uint32_t flow, double share, std::vector<Use>& out,
           int depth) const;

  const Directory& directory_;
  std::vector<Fabric> fabrics_;
  std::vector<std::uint32_t> first_link_;       // per fabric: id of its edge 0's a-to-b direction
  std::vector<std::vector<int>> node_of_rank_;  // per fabric: rank -> its NIC's node (-1: not on it)
  std::vector<double> rates_;                   // per link id
  FabricCosts unknown_;
};

}  // namespace fabricsim
