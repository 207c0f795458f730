// Process groups: the sets of ranks collectives run over, from a
// comm-groups file (ASTRA-sim's format) or from a trace's metadata.
#pragma once

#include <deque>
#include <map>
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
  int npus() const { return npus_; }

 private:
  int npus_;
  std::deque<Group> groups_;  // stable addresses
  std::map<std::string, const Group*> by_name_;
};

}  // namespace fabricsim
