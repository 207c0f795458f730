#include "traces/workload/process_groups.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tlm/util/json_input.h"

namespace fabricsim {

GroupTable::GroupTable(int npus) : npus_(npus) {
  Group world;
  world.id = 0;
  world.name = "world";
  for (int r = 0; r < npus; ++r) world.ranks.push_back(r);
  groups_.push_back(std::move(world));
  by_name_["world"] = &groups_.front();
}

void GroupTable::set_world(int npus) {
  if (groups_.size() != 1) throw std::logic_error("GroupTable::set_world after groups were added");
  npus_ = npus;
  Group& world = groups_.front();
  world.ranks.clear();
  for (int r = 0; r < npus; ++r) world.ranks.push_back(r);
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

std::vector<std::int64_t> GroupTable::json_ranks(const nlohmann::json& list) const {
  if (!list.is_array()) throw std::runtime_error("expected a list of ranks, not " + json_excerpt(list));
  std::vector<std::int64_t> wide;
  for (const auto& v : list) {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > 0x7fffffffffffffffull)) {
      throw std::runtime_error("rank " + json_excerpt(v) + " is not a whole number from 0 to " +
                               std::to_string(npus_ - 1));
    }
    wide.push_back(v.get<std::int64_t>());
  }
  return wide;
}

std::vector<int> GroupTable::narrow(const std::string& name, const std::vector<std::int64_t>& wide) const {
  std::vector<int> ranks;
  for (const std::int64_t r : wide) {
    if (r < 0 || r >= npus_) {
      throw std::runtime_error("process group \"" + name + "\" names rank " + std::to_string(r) +
                               ", but the platform has " + std::to_string(npus_) + " NPUs");
    }
    ranks.push_back(static_cast<int>(r));
  }
  return ranks;
}

void GroupTable::load_json(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "process-group file");
  if (!j.is_object()) throw std::runtime_error(path + ": expected an object {\"<pg_name>\": [ranks...]}");
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::vector<std::int64_t> wide;
    try {
      wide = json_ranks(it.value());
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(path + ": group \"" + it.key() + "\": " + e.what());
    }
    try {
      add(it.key(), narrow(it.key(), wide));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(path + ": " + e.what());
    }
  }
}

}  // namespace fabricsim
