#include "traces/workload/process_groups.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "tlm/json_input.h"

namespace fabricsim {

GroupTable::GroupTable(int npus) : npus_(npus) {
  Group world;
  world.id = 0;
  world.name = "world";
  for (int r = 0; r < npus; ++r) world.ranks.push_back(r);
  groups_.push_back(std::move(world));
  by_name_["world"] = &groups_.front();
}

const Group& GroupTable::add(const std::string& name, std::vector<int> ranks) {
  if (by_name_.count(name)) throw std::runtime_error("process group \"" + name + "\" defined twice");
  if (ranks.empty()) throw std::runtime_error("process group \"" + name + "\" has no members");
  std::vector<bool> seen(static_cast<std::size_t>(npus_), false);
  for (int r : ranks) {
    if (r < 0 || r >= npus_) {
      throw std::runtime_error("process group \"" + name + "\" names rank " + std::to_string(r) +
                               ", but the platform has " + std::to_string(npus_) + " NPUs");
    }
    // A member twice would wait for itself in every collective of the group.
    if (seen[static_cast<std::size_t>(r)]) {
      throw std::runtime_error("process group \"" + name + "\" names rank " + std::to_string(r) +
                               " twice (each rank is a member once)");
    }
    seen[static_cast<std::size_t>(r)] = true;
  }
  Group g;
  g.id = static_cast<std::uint32_t>(groups_.size());
  g.name = name;
  g.ranks = std::move(ranks);
  groups_.push_back(std::move(g));
  by_name_[name] = &groups_.back();
  return groups_.back();
}

const Group* GroupTable::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

void GroupTable::load_json(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "process-group file");
  if (!j.is_object()) throw std::runtime_error(path + ": expected an object {\"<pg_name>\": [ranks...]}");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_array()) throw std::runtime_error(path + ": group \"" + it.key() + "\": expected a list of ranks");
    std::vector<int> ranks;
    for (const auto& v : it.value()) {
      if (!v.is_number_integer()) throw std::runtime_error(path + ": group \"" + it.key() + "\": ranks must be integers");
      // Read wide: rank 2^32 must not wrap to rank 0.
      const bool past = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(npus_);
      const std::int64_t rank = past ? npus_ : v.get<std::int64_t>();
      if (rank < 0 || rank >= npus_) {
        throw std::runtime_error(path + ": group \"" + it.key() + "\": rank " + v.dump() +
                                 " is not an NPU of the platform (0 to " + std::to_string(npus_ - 1) + ")");
      }
      ranks.push_back(static_cast<int>(rank));
    }
    try {
      add(it.key(), std::move(ranks));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(path + ": " + e.what());
    }
  }
}

}  // namespace fabricsim
