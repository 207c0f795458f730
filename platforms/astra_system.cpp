#include "platforms/astra_system.h"

#include <fstream>

#include <nlohmann/json.hpp>

namespace fabricsim {

namespace {

/// ASTRA-sim's algorithm names; "one*" runs the algorithm over all
/// dimensions as one.
bool astra_algorithm(const std::string& name, AlgorithmKind& out, bool& flat) {
  std::string n = name;
  flat = false;
  if (n.rfind("one", 0) == 0 && n.size() > 3) {
    flat = true;
    n = n.substr(3);
    n[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(n[0])));
  }
  if (n == "ring") out = AlgorithmKind::kRing;
  else if (n == "direct") out = AlgorithmKind::kDirect;
  else if (n == "halvingDoubling") out = AlgorithmKind::kHalvingDoubling;
  else if (n == "doubleBinaryTree") out = AlgorithmKind::kDoubleBinaryTree;
  else return false;
  return true;
}

}  // namespace

void apply_astra_system(const std::string& path, PlatformSpec& spec, std::vector<std::string>& notes) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open system file");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw InputError(path + ": expected a JSON object of settings");
  auto fail = [&](const std::string& key, const std::string& what) { throw InputError(path + ": \"" + key + "\": " + what); };
  auto number = [&](const std::string& key) {
    const auto& v = j[key];
    if (!v.is_number()) fail(key, "must be a number");
    const double d = v.get<double>();
    if (d < 0) fail(key, "must be >= 0");
    return d;
  };

  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "scheduling-policy") {
      const std::string p = it.value().is_string() ? it.value().get<std::string>() : "";
      if (p == "LIFO") spec.collectives.policy = SchedulingPolicy::kLifo;
      else if (p == "FIFO") spec.collectives.policy = SchedulingPolicy::kFifo;
      else fail(key, "must be \"LIFO\" or \"FIFO\"");
    } else if (key == "endpoint-delay") {
      // Per message, at the sending end (ns).
      const Tick t = ns_to_ticks(number(key));
      for (auto& f : spec.fabrics) f.nic.message_overhead = t;
    } else if (key == "active-chunks-per-dimension") {
      spec.collectives.active_chunks = static_cast<std::uint32_t>(number(key));
    } else if (key == "preferred-dataset-splits") {
      const double s = number(key);
      if (s < 1) fail(key, "must be >= 1");
      spec.collectives.chunks = static_cast<std::uint32_t>(s);
    } else if (key == "local-mem-bw") {
      const double gbps = number(key);
      if (gbps <= 0) fail(key, "must be > 0");
      spec.npu.memory_bandwidth = Bandwidth::GBps(gbps);
      spec.collectives.local_reduce = Bandwidth::GBps(gbps);
    } else if (key == "peak-perf") {
      const double tflops = number(key);
      if (tflops <= 0) fail(key, "must be > 0");
      spec.npu.peak_flops = tflops * 1e12;
    } else if (key == "roofline-enabled") {
      spec.roofline = number(key) != 0;
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
        if (!v.is_string() || !astra_algorithm(v.get<std::string>(), a, one)) {
          fail(key, "unknown algorithm " + v.dump() +
                        " (known: ring, direct, halvingDoubling, doubleBinaryTree, and their one* forms)");
        }
        flat |= one;
        per_dim.push_back(a);
      }
      auto& dims = spec.collectives.dims;
      if (!flat && dims.size() > 1 && *type == CollectiveType::kAllReduce) {
        if (per_dim.size() != dims.size()) {
          fail(key, "lists " + std::to_string(per_dim.size()) + " algorithms for a platform of " +
                        std::to_string(dims.size()) + " dimensions");
        }
        for (std::size_t d = 0; d < dims.size(); ++d) dims[d].algorithm = per_dim[d];
        spec.collectives.algorithm[static_cast<int>(*type)] = AlgorithmKind::kHierarchical;
      } else {
        if (dims.size() > 1 && !flat && per_dim.size() > 1) {
          notes.push_back(path + ": \"" + key + "\": per-dimension phases are modeled for all-reduce only; " +
                          to_string(*type) + " runs " + to_string(per_dim.front()) + " over all NPUs");
        }
        spec.collectives.algorithm[static_cast<int>(*type)] = per_dim.front();
      }
    } else {
      notes.push_back(path + ": \"" + key + "\" is not modeled; ignored");
    }
  }
}

}  // namespace fabricsim
