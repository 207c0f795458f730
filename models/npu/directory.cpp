#include "models/npu/directory.h"

#include <deque>

namespace fabricsim {

int Directory::next_hop(int from, int to) const {
  auto it = towards_.find(to);
  if (it == towards_.end()) {
    if (members_.empty()) {
      for (int r = 0; r < npus(); ++r) {
        for (const Attachment& a : attachments(r)) {
          if (a.fabric >= members_.size()) members_.resize(a.fabric + 1u);
          members_[a.fabric].push_back(r);
        }
      }
    }
    // Breadth-first from the destination: next[r] is r's neighbour one
    // relay closer to `to`.
    std::vector<int> next(static_cast<std::size_t>(npus()), -1);
    next[static_cast<std::size_t>(to)] = to;
    std::deque<int> queue{to};
    while (!queue.empty()) {
      const int v = queue.front();
      queue.pop_front();
      for (const Attachment& a : attachments(v)) {
        for (int u : members_[a.fabric]) {
          if (next[static_cast<std::size_t>(u)] < 0) {
            next[static_cast<std::size_t>(u)] = v;
            queue.push_back(u);
          }
        }
      }
    }
    it = towards_.emplace(to, std::move(next)).first;
  }
  const int hop = it->second[static_cast<std::size_t>(from)];
  if (hop < 0) {
    throw std::runtime_error("NPU " + std::to_string(to) + " cannot be reached from NPU " + std::to_string(from) +
                             " through any fabric");
  }
  return hop;
}

}  // namespace fabricsim
