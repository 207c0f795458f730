#include "platforms/importers/astra_system.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "platforms/assembly/topology_generators.h"
#include "platforms/assembly/yaml_input.h"
#include "tlm/util/json_input.h"
#include "traces/reader/et_reader.h"

namespace fabricsim {

namespace {

/// ASTRA-sim's algorithm names; "one*" runs the algorithm over all
/// dimensions as one; "directN" (and "oneDirectN") is direct with at most N
/// peers at once (`window`; 0 for the other names).
bool astra_algorithm(const std::string& name, AlgorithmKind& out, bool& flat, std::uint32_t& window) {
  std::string n = name;
  flat = false;
  window = 0;
  if (n.rfind("one", 0) == 0 && n.size() > 3) {
    flat = true;
    n = n.substr(3);
    n[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(n[0])));
  }
  if (n.size() > 6 && n.rfind("direct", 0) == 0) {
    const std::string digits = n.substr(6);
    if (digits.size() > 7 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
    window = static_cast<std::uint32_t>(std::stoul(digits));
    if (window == 0) return false;
    n = "direct";
  }
  if (n == "ring")
    out = AlgorithmKind::kRing;
  else if (n == "direct")
    out = AlgorithmKind::kDirect;
  else if (n == "halvingDoubling")
    out = AlgorithmKind::kHalvingDoubling;
  else if (n == "doubleBinaryTree")
    out = AlgorithmKind::kDoubleBinaryTree;
  // ASTRA-sim never released its in-switch collectives; fabricsim's name
  // for them, in ASTRA-sim's spelling too.
  else if (n == "inSwitch" || n == "in_switch")
    out = AlgorithmKind::kInSwitch;
  else
    return false;
  return true;
}

/// Per message, at the sending end.
void set_endpoint_delay(PlatformSpec& spec, Tick t) {
  for (auto& f : spec.fabrics) {
    f.nic.message_overhead = t;  // and every protocol's step, which ASTRA-sim does not tell apart
    f.nic.step_overhead_simple = f.nic.step_overhead_ll = f.nic.step_overhead_ll128 = t;
  }
}

/// ASTRA-sim admits k chunks into each dimension's queue, across
/// collectives. Here: k into each level's reduce-scatter and all-gather of a
/// hierarchical collective (ASTRA-sim's two share one queue), and k per
/// dimension on an NPU in all (so a collective run flat over several
/// dimensions has k x D in flight where ASTRA-sim has k). On one dimension
/// the two are the same.
void set_active_chunks_per_dimension(PlatformSpec& spec, std::uint32_t k) {
  std::uint32_t dims = 0;
  for (const Dimension& d : spec.collectives.dims) dims += d.size > 1 ? 1 : 0;
  spec.collectives.chunks_per_stage = k;
  spec.collectives.active_chunks = k * std::max(1u, dims);
}

/// A JSON file whose top level is an object, read through the input checks.
nlohmann::json read_json_object(const std::string& path, const std::string& what) {
  nlohmann::json j = read_json_file(path, what);
  if (!j.is_object()) throw InputError(path + ": expected a JSON object of settings");
  return j;
}

}  // namespace

void apply_astra_system(const std::string& path, PlatformSpec& spec, std::vector<std::string>& notes,
                        const std::vector<YamlOverride>& overrides) {
  nlohmann::json j = read_json_object(path, "ASTRA-sim system file");
  std::map<std::string, std::string> set_by;  // key -> the --set flag that gave it
  for (const YamlOverride& o : overrides) {
    if (o.path.find('.') != std::string::npos) {
      throw InputError(o.flag() + ": the system file's keys are at its top level (--set system.KEY=VALUE)");
    }
    j[o.path] = yaml_value_as_json(o);
    set_by[o.path] = o.flag();
  }
  auto fail = [&](const std::string& key, const std::string& what) {
    const auto it = set_by.find(key);
    if (it != set_by.end()) throw InputError(it->second + ": " + what + " (in " + path + ")");
    throw InputError(path + ": \"" + key + "\": " + what);
  };
  // A finite number in [0, max]: JSON has no NaN, but 1e999 parses as infinity.
  auto number = [&](const std::string& key, double max = 1e15) {
    const auto& v = j[key];
    if (!v.is_number()) fail(key, "must be a number, not " + json_excerpt(v));
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0 || d > max)
      fail(key, "is " + json_excerpt(v) + ": it must be from 0 to " + std::to_string(static_cast<long long>(max)));
    return d;
  };
  auto whole = [&](const std::string& key, double max) {
    const double d = number(key, max);
    if (d != std::floor(d)) fail(key, "must be a whole number, not " + json_excerpt(j[key]));
    return d;
  };

  std::optional<std::string> direct_window_from;  // the key that set the direct window
  // ASTRA-sim's defaults for what a file leaves out (its Sys constructor):
  // every level of an all-reduce all-reduces the whole chunk ("baseline"),
  // one chunk in flight per dimension. A collective is cut into exactly its
  // preferred-dataset-splits. Each only where the platform or --set left
  // fabricsim's own default. (Its 10 ns endpoint-delay default is not
  // taken: ASTRA-sim charges it on its memory bus, which custom collectives
  // bypass, and here it would fall on every message.)
  const CollectiveConfig ours;
  auto& c = spec.collectives;
  if (c.level_data == ours.level_data) c.level_data = LevelData::kWhole;
  if (c.chunks_per_stage == ours.chunks_per_stage && c.active_chunks == ours.active_chunks) {
    set_active_chunks_per_dimension(spec, 1);
  }
  if (c.pipeline_chunk == ours.pipeline_chunk) c.pipeline_chunk = 0;
  c.subgroups_ring = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "scheduling-policy") {
      const std::string p = it.value().is_string() ? it.value().get<std::string>() : "";
      if (p == "LIFO")
        spec.collectives.policy = SchedulingPolicy::kLifo;
      else if (p == "FIFO")
        spec.collectives.policy = SchedulingPolicy::kFifo;
      // EXPLICIT: by each collective node's comm_priority, highest first,
      // ties in issue order (ASTRA-sim's Sys::get_priority and insert_stream).
      else if (p == "EXPLICIT")
        spec.collectives.policy = SchedulingPolicy::kPriority;
      else
        fail(key, "must be \"LIFO\", \"FIFO\" or \"EXPLICIT\", not " + json_excerpt(it.value()));
    } else if (key == "endpoint-delay") {
      set_endpoint_delay(spec, ns_to_ticks(number(key, limits::kMaxLatencyNs)));
    } else if (key == "active-chunks-per-dimension") {
      const double k = whole(key, limits::kMaxChunks);
      if (k < 1) fail(key, "must be >= 1 (with 0, ASTRA-sim would never start a chunk)");
      set_active_chunks_per_dimension(spec, static_cast<std::uint32_t>(k));
    } else if (key == "preferred-dataset-splits") {
      const double s = whole(key, limits::kMaxChunks);
      if (s < 1) fail(key, "must be >= 1");
      spec.collectives.chunks = static_cast<std::uint32_t>(s);
    } else if (key == "local-mem-bw") {
      const double gbps = number(key, limits::kMaxGBps);
      if (gbps < limits::kMinGBps) fail(key, "must be > 0");
      // A memory bandwidth (ASTRA-sim's Sys reads it as 10^9 bytes/s): a
      // local reduction reads both operands and writes the sum, three passes.
      spec.npu.memory_bandwidth = Bandwidth::GBps(gbps);
      spec.collectives.local_reduce = Bandwidth::GBps(gbps / 3);
    } else if (key == "peak-perf") {
      const double tflops = number(key, 1e6);
      if (tflops <= 0) fail(key, "must be > 0");
      spec.npu.peak_flops = tflops * 1e12;
    } else if (key == "roofline-enabled") {
      spec.roofline = number(key) != 0;
    } else if (key.size() > 22 && key.compare(key.size() - 22, 22, "-implementation-custom") == 0) {
      // A Chakra trace per rank runs as the collective (ASTRA-sim's collective
      // API); its path is relative to where the command runs, as ASTRA-sim's.
      const std::string type_name = key.substr(0, key.size() - 22);
      const auto type = collective_from_name(type_name);
      if (!type) fail(key, "names no collective fabricsim knows (\"" + type_name + "\")");
      const auto& v = it.value();
      if (!v.is_array() || v.size() != 1 || !v[0].is_string()) {
        fail(key, "must list one Chakra trace prefix (one dimension), not " + json_excerpt(v));
      }
      const std::string prefix = v[0].get<std::string>();
      const std::string first = traces::rank_file(prefix, 0);
      if (struct stat st{}; ::stat(first.c_str(), &st) != 0) {
        fail(key, "names the trace " + prefix + ", but " + first +
                      " is not there (paths are relative to the directory fabricsim runs in)");
      }
      spec.custom_collectives[*type] = prefix;
    } else if (key.size() > 15 && key.compare(key.size() - 15, 15, "-implementation") == 0) {
      const std::string type_name = key.substr(0, key.size() - 15);
      const auto type = collective_from_name(type_name);
      if (!type) {
        notes.push_back(path + ": \"" + key + "\" is not modeled (no such collective here); ignored");
        continue;
      }
      if (!it.value().is_array() || it.value().empty()) fail(key, "must be a non-empty list of algorithm names");
      std::vector<AlgorithmKind> per_dim;
      bool flat = false;
      for (const auto& v : it.value()) {
        AlgorithmKind a;
        bool one = false;
        std::uint32_t window = 0;
        if (!v.is_string() || !astra_algorithm(v.get<std::string>(), a, one, window)) {
          fail(key, "unknown algorithm " + json_excerpt(v) +
                        " (known: ring, direct, directN for N > 0, halvingDoubling, doubleBinaryTree, inSwitch, and "
                        "their one* forms)");
        }
        if (a == AlgorithmKind::kDirect) {
          // One window for every direct collective here; ASTRA-sim's is per
          // type and dimension.
          if (direct_window_from && window != spec.collectives.direct_window) {
            fail(key, "gives direct " +
                          (window ? std::to_string(window) + " peers at once" : std::string("all peers at once")) +
                          " where " + *direct_window_from + " gives " +
                          (spec.collectives.direct_window ? std::to_string(spec.collectives.direct_window)
                                                          : std::string("all")) +
                          ": fabricsim models one window for every direct collective");
          }
          spec.collectives.direct_window = window;
          direct_window_from = "\"" + key + "\"";
        }
        flat |= one;
        per_dim.push_back(a);
      }
      auto& dims = spec.collectives.dims;
      const bool phased = *type == CollectiveType::kAllReduce || *type == CollectiveType::kReduceScatter ||
                          *type == CollectiveType::kAllGather || *type == CollectiveType::kAllToAll;
      if (!flat && dims.size() > 1 && phased) {
        // A phase per dimension, each with its own algorithm (ASTRA-sim's
        // generate_collective); all-reduce's are the platform's levels.
        if (per_dim.size() != dims.size()) {
          fail(key, "lists " + std::to_string(per_dim.size()) + " algorithms for a platform of " +
                        std::to_string(dims.size()) + " dimensions");
        }
        auto& levels =
            *type == CollectiveType::kAllReduce ? dims : spec.collectives.dims_by_type[static_cast<int>(*type)];
        if (*type != CollectiveType::kAllReduce) levels = dims;
        for (std::size_t d = 0; d < dims.size(); ++d) {
          levels[d].algorithm = per_dim[d];
          levels[d].named = true;
          if (*type != CollectiveType::kAllReduce && dims[d].size > 1 && per_dim[d] != AlgorithmKind::kRing &&
              per_dim[d] != AlgorithmKind::kDirect) {
            fail(key, std::string("dimension ") + std::to_string(d) + " runs " + to_string(per_dim[d]) + "; " +
                          to_string(*type) + " phases per dimension are modeled with ring and direct only");
          }
          // All-to-all phases work in place: a direct window takes its peers
          // in pairs, so it must be even (hierarchical.cpp).
          const std::uint32_t window = spec.collectives.direct_window;
          if (*type == CollectiveType::kAllToAll && dims[d].size > 1 && per_dim[d] == AlgorithmKind::kDirect &&
              window % 2 == 1 && window < static_cast<std::uint32_t>(dims[d].size - 1)) {
            fail(key, "dimension " + std::to_string(d) + " runs direct with a window of " + std::to_string(window) +
                          " peers; an all_to_all phase per dimension works in place and takes its peers in pairs, "
                          "so its window must be even (or reach all " +
                          std::to_string(dims[d].size - 1) + " peers)");
          }
        }
        spec.collectives.algorithm[static_cast<int>(*type)] = AlgorithmKind::kHierarchical;
      } else {
        if (dims.size() > 1 && !flat && per_dim.size() > 1) {
          notes.push_back(path + ": \"" + key + "\": per-dimension phases are not modeled for " + to_string(*type) +
                          "; it runs " + to_string(per_dim.front()) + " over all NPUs");
        }
        spec.collectives.algorithm[static_cast<int>(*type)] = per_dim.front();
      }
    } else if (key == "collective-optimization") {
      const std::string v = it.value().is_string() ? it.value().get<std::string>() : "";
      if (v != "baseline" && v != "localBWAware") fail(key, "must be \"baseline\" or \"localBWAware\"");
      // localBWAware: each dimension reduce-scatters the part the one before
      // left, the last all-reduces it, and all-gathers come back down.
      spec.collectives.level_data = v == "localBWAware" ? LevelData::kPart : LevelData::kWhole;
    } else if (key == "intra-dimension-scheduling" || key == "inter-dimension-scheduling") {
      // fabricsim schedules chunks in order within a dimension and takes the
      // dimensions in ascending order: ASTRA-sim's FIFO and baseline/ascending.
      const std::string v = it.value().is_string() ? it.value().get<std::string>() : json_excerpt(it.value());
      const bool intra = key == "intra-dimension-scheduling";
      if (!intra && (v == "themis" || v == "Themis")) {
        spec.collectives.dimension_order = LevelOrder::kThemis;
        continue;
      }
      const bool ours = intra ? v == "FIFO" : (v == "baseline" || v == "ascending" || v == "Ascending");
      if (!ours && (intra || spec.collectives.dims.size() > 1)) {
        fail(key, v + " is not modeled (fabricsim runs " +
                      (intra ? "FIFO" : "baseline, dimensions in ascending order, or themis") + ")");
      }
    } else if (key == "L" || key == "o" || key == "g" || key == "G" || key == "model-shared-bus" ||
               key == "replay-only" || key == "local-reduction-delay") {
      // The LogGP memory bus between NPU and memory and ASTRA-sim's own
      // replay switches: their defaults change nothing, other values would.
      const double zero_default = key == "local-reduction-delay" ? 1 : 0;
      if (!it.value().is_number() || it.value().get<double>() != zero_default) {
        fail(key, "only its default, " + std::to_string(static_cast<int>(zero_default)) +
                      ", is modeled (ASTRA-sim's memory bus and replay switches are not), not " +
                      json_excerpt(it.value()));
      }
    } else if (key == "boost-mode" || key == "trace-enabled") {
      // Simulation shortcuts and outputs of ASTRA-sim: no time changes.
    } else if (set_by.count(key)) {
      fail(key,
           "\"" + key +
               "\" is not an ASTRA-sim system key fabricsim knows (known: scheduling-policy, "
               "endpoint-delay, active-chunks-per-dimension, preferred-dataset-splits, local-mem-bw, peak-perf, "
               "roofline-enabled, TYPE-implementation, TYPE-implementation-custom, collective-optimization, "
               "intra-dimension-scheduling, inter-dimension-scheduling, L, o, g, G, model-shared-bus, replay-only, "
               "local-reduction-delay, boost-mode, trace-enabled)");
    } else {
      notes.push_back(path + ": \"" + key +
                      "\" is not an ASTRA-sim system key fabricsim knows; ignored, as ASTRA-sim ignores it");
    }
  }
}

void apply_astra_remote_memory(const std::string& path, PlatformSpec& spec, std::vector<std::string>& notes) {
  const nlohmann::json j = read_json_object(path, "ASTRA-sim remote-memory file");
  auto fail = [&](const std::string& key, const std::string& what) {
    throw InputError(path + ": \"" + key + "\": " + what);
  };
  auto number = [&](const std::string& key, double fallback, double max) {
    if (!j.contains(key)) return fallback;
    const auto& v = j[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() > max) {
      fail(key,
           "is " + json_excerpt(v) + ": it must be a number from 0 to " + std::to_string(static_cast<long long>(max)));
    }
    return v.get<double>();
  };
  auto whole = [&](const std::string& key, double max, double fallback) {  // 4.9 NPUs must not be read as 4
    const double d = number(key, fallback, max);
    if (d != std::floor(d)) fail(key, "must be a whole number, not " + json_excerpt(j[key]));
    return d;
  };
  for (auto it = j.begin(); it != j.end(); ++it) {
    static const char* known[] = {"memory-type", "remote-mem-latency", "remote-mem-bw", "num-nodes",
                                  "num-npus-per-node"};
    if (std::find(std::begin(known), std::end(known), it.key()) == std::end(known)) {
      notes.push_back(path + ": \"" + it.key() + "\" is not modeled; ignored");
    }
  }
  if (j.contains("memory-type") && !j["memory-type"].is_string()) fail("memory-type", "must be a name");
  const std::string type = j.contains("memory-type") ? j["memory-type"].get<std::string>() : "NO_MEMORY_EXPANSION";
  if (type == "NO_MEMORY_EXPANSION") {
    spec.npu.no_remote_memory = true;
    return;
  }
  const double latency = number("remote-mem-latency", 0, limits::kMaxLatencyNs);
  const double bw = number("remote-mem-bw", 0, limits::kMaxGBps);
  if (bw < limits::kMinGBps) fail("remote-mem-bw", "must be > 0 for " + type);
  std::vector<std::vector<int>> served;  // per memory
  if (type == "PER_NPU_MEMORY_EXPANSION") {
    for (int r = 0; r < spec.npus; ++r) served.push_back({r});
  } else if (type == "PER_NODE_MEMORY_EXPANSION") {
    const int per_node = static_cast<int>(whole("num-npus-per-node", limits::kMaxNpus, 0));
    if (per_node < 1) fail("num-npus-per-node", "must be >= 1 for PER_NODE_MEMORY_EXPANSION");
    const int nodes = static_cast<int>(whole("num-nodes", limits::kMaxNpus, spec.npus / per_node));
    if (static_cast<std::int64_t>(nodes) * per_node != spec.npus) {
      fail("num-nodes", std::to_string(nodes) + " nodes of " + std::to_string(per_node) +
                            " NPUs do not make the platform's " + std::to_string(spec.npus));
    }
    for (int n = 0; n < nodes; ++n) {
      served.emplace_back();
      for (int k = 0; k < per_node; ++k) served.back().push_back(n * per_node + k);
    }
  } else if (type == "MEMORY_POOL") {
    served.emplace_back();
    for (int r = 0; r < spec.npus; ++r) served.back().push_back(r);
  } else {
    fail("memory-type",
         "unknown type \"" + type +
             "\" (NO_MEMORY_EXPANSION, PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION, MEMORY_POOL)");
  }
  // Links that do not limit: no bandwidth bound, no latency.
  LinkParams ideal;
  ideal.bandwidth = Bandwidth::unlimited();
  ideal.latency = 0;
  ideal.buffer_bytes = 1ull << 30;
  std::vector<int> all(static_cast<std::size_t>(spec.npus));
  for (int r = 0; r < spec.npus; ++r) all[static_cast<std::size_t>(r)] = r;
  FabricSpec f = make_single_switch(all, ideal, 0);
  f.name = "remote_memory";
  f.nic.header_bytes = 0;
  f.nic.message_overhead = 0;
  f.nic.injection = Bandwidth::unlimited();
  std::vector<MemorySpec> memories;
  for (std::size_t k = 0; k < served.size(); ++k) {
    MemorySpec m;
    m.name = "remote_memory" + std::to_string(k);
    m.memory.size_bytes = 1ull << 40;
    m.memory.channels = 1;
    m.memory.bandwidth = Bandwidth::GBps(bw);  // ASTRA-sim's bytes per ns, one channel
    m.memory.latency = ns_to_ticks(latency);
    m.serves = served[k];
    memories.push_back(std::move(m));
  }
  attach_memories(f, std::move(memories), ideal);
  spec.fabrics.push_back(std::move(f));
}

}  // namespace fabricsim
