#include "platforms/importers/astra_network.h"

#include <cstdint>
#include <vector>

#include "platforms/assembly/topology_generators.h"
#include "platforms/assembly/yaml_input.h"

namespace fabricsim {

bool is_astra_network(const YAML::Node& root) {
  return root.IsMap() && root["topology"] && root["topology"].IsSequence() && root["npus_count"];
}

PlatformSpec read_astra_network(const YamlDocument& doc) {
  const YAML::Node& root = doc.root;
  const YamlInput& in = doc.in;
  const std::string& path = in.file();
  in.only_keys(root, {"topology", "npus_count", "bandwidth", "latency"}, "the ASTRA-sim network file");
  const YAML::Node topo = in.required(root, "topology", "the ASTRA-sim network file");
  const YAML::Node counts = in.required(root, "npus_count", "the ASTRA-sim network file");
  const YAML::Node bws = in.required(root, "bandwidth", "the ASTRA-sim network file");
  const YAML::Node lats = in.required(root, "latency", "the ASTRA-sim network file");
  for (const YAML::Node* n : {&topo, &counts, &bws, &lats}) {
    if (!n->IsSequence()) in.fail(*n, "expected a list with one entry per dimension");
  }
  const std::size_t dims = topo.size();
  if (dims == 0) in.fail(topo, "\"topology\" needs at least one dimension");
  if (counts.size() != dims || bws.size() != dims || lats.size() != dims) {
    in.fail(root, "\"topology\", \"npus_count\", \"bandwidth\" and \"latency\" must have one entry per dimension (" +
                      std::to_string(dims) + ")");
  }
  PlatformSpec spec;
  spec.file = path;
  spec.name = file_stem(path);
  // Ideal endpoints, as ASTRA-sim's analytical network: no headers, no
  // per-message overhead, injection at link speed, buffers that do not bind.
  NicParams nic;
  nic.header_bytes = 0;
  nic.message_overhead = 0;
  nic.injection = Bandwidth::unlimited();
  int npus = 1;
  std::vector<int> counts_v;
  for (std::size_t d = 0; d < dims; ++d) {
    const auto n = static_cast<int>(in.count_at(counts[d], "npus_count", 1, limits::kMaxNpus));
    if (static_cast<std::int64_t>(npus) * n > limits::kMaxNpus) {
      in.fail(counts[d], "npus_count: the dimensions make more than " + std::to_string(limits::kMaxNpus) + " NPUs");
    }
    counts_v.push_back(n);
    npus *= n;
  }
  spec.npus = npus;
  int stride = 1;
  for (std::size_t d = 0; d < dims; ++d) {
    LinkParams link;
    // ASTRA-sim's GB/s are 2^30 bytes per second; its latencies are ns.
    const double bw = in.number_at(bws[d], "bandwidth (GB/s)", limits::kMinGBps, limits::kMaxGBps);
    const double lat = in.number_at(lats[d], "latency (ns)", 0, limits::kMaxLatencyNs);
    link.bandwidth = Bandwidth::GiBps(bw);
    link.latency = ns_to_ticks(lat);
    link.buffer_bytes = 64u << 20;
    if (!topo[d].IsScalar()) in.fail(topo[d], "a topology must be a name (Ring, Switch, FullyConnected)");
    const std::string t = topo[d].Scalar();
    if (t != "Ring" && t != "Switch" && t != "FullyConnected") {
      in.fail(topo[d], "unknown ASTRA-sim topology \"" + t + "\" (known: Ring, Switch, FullyConnected)");
    }
    const int n = counts_v[d];
    if (n > 1) {
      Dimension dim;
      dim.size = n;
      dim.stride = stride;
      // What an NPU sends within the dimension: a ring's two links, a
      // switch's one, a link to each peer of a fully connected group.
      const double links = t == "Ring" ? (n > 2 ? 2 : 1) : t == "Switch" ? 1 : n - 1;
      dim.bandwidth = links * link.bandwidth.bytes_per_ps() * 1e12;
      spec.collectives.dims.push_back(dim);
      spec.hints.shape = t == "Ring" ? "ring" : t == "Switch" ? "switch" : "fully_connected";
    }
    const auto groups = rank_groups(npus, n, stride);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      FabricSpec f;
      if (n == 1) continue;  // a dimension of one NPU has no network
      if (t == "Ring") {
        f = make_ring(groups[g], true, link);
      } else if (t == "Switch") {
        f = make_single_switch(groups[g], link, 0);
      } else {
        f = make_fully_connected(groups[g], link);
      }
      f.name = "dim" + std::to_string(d) + (groups.size() > 1 ? "_" + std::to_string(g) : "");
      f.nic = nic;
      spec.fabrics.push_back(std::move(f));
    }
    stride *= n;
  }
  if (spec.collectives.dims.size() > 1) spec.hints.shape = "multi_dimensional";
  return spec;
}

PlatformSpec load_astra_network(const std::string& path) {
  return naming_yaml_errors(path, [&] { return read_astra_network(load_yaml_document(path, {})); });
}

}  // namespace fabricsim
