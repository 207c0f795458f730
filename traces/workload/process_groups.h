// Process groups: the sets of ranks collectives run over, from a
// comm-groups file (ASTRA-sim's format) or from a trace's metadata.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/collectives/collective.h"

namespace fabricsim {

/// Process groups: the world, plus any named in a comm-groups file or a
/// trace's metadata. Collectives name theirs with the `pg_name` attribute.
class GroupTable {
 public:
  explicit GroupTable(int npus);
  const Group& world() const { return groups_.front(); }
  const Group& add(const std::string& name, std::vector<int> ranks);
  const Group* find(const std::string& name) const;
  /// Reads ASTRA-sim's comm-groups JSON: {"<pg_name>": [ranks...], ...}.
  /// Throws std::runtime_error naming the file and the problem.
  void load_json(const std::string& path);
  /// A JSON list of ranks, each a whole number, read wide (1.5 is not rank
  /// 1, 2^64-1 not rank -1); std::runtime_error otherwise ("rank 1.5 is not a
  /// whole number from 0 to 3"). For comm-groups files and trace metadata.
  std::vector<std::int64_t> json_ranks(const nlohmann::json& list) const;
  /// Ranks read wide, as this platform's NPUs; std::runtime_error naming the
  /// group and the first that is not one (2^32 must not wrap to rank 0).
  std::vector<int> narrow(const std::string& name, const std::vector<std::int64_t>& wide) const;
  int npus() const { return npus_; }
  /// The job runs on the first `npus` NPUs only (--npus): the world is
  /// they, and groups may name no others. Before any group is added.
  void set_world(int npus);

 private:
  int npus_;
  std::deque<Group> groups_;  // stable addresses
  std::map<std::string, const Group*> by_name_;
};

}  // namespace fabricsim
