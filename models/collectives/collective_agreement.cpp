#include "models/collectives/collective_agreement.h"

#include <sstream>
#include <stdexcept>

#include "tlm/reduction.h"

namespace fabricsim {

namespace {

bool rooted(CollectiveType t) {
  return t == CollectiveType::kReduce || t == CollectiveType::kGather || t == CollectiveType::kScatter ||
         t == CollectiveType::kBroadcast;
}

bool reduces(CollectiveType t) {
  return t == CollectiveType::kAllReduce || t == CollectiveType::kReduce || t == CollectiveType::kReduceScatter ||
         t == CollectiveType::kReduceScatterBlock;
}

}  // namespace

CollectiveAgreement::Call CollectiveAgreement::call_of(const CollectiveSpec& spec, int rank) {
  Call c;
  c.rank = rank;
  c.node_id = spec.node_id;
  c.name = spec.name;
  c.type = spec.type;
  c.bytes = spec.bytes;
  c.root = spec.root;
  c.dtype = spec.dtype;
  c.op = spec.op;
  return c;
}

std::string CollectiveAgreement::difference(const CollectiveSpec& spec, int rank, const Call& first,
                                            std::uint64_t seq) {
  std::string field, mine, theirs;
  auto differs = [&](const char* what, const std::string& x, const std::string& y) {
    if (!field.empty() || x == y) return;
    field = what;
    mine = x;
    theirs = y;
  };
  differs("type", to_string(spec.type), to_string(first.type));
  if (spec.type == first.type) {
    if (spec.type != CollectiveType::kBarrier) {
      differs("size", std::to_string(spec.bytes) + " bytes", std::to_string(first.bytes) + " bytes");
    }
    if (rooted(spec.type)) {
      differs("root", "group member " + std::to_string(spec.root), "group member " + std::to_string(first.root));
    }
    if (reduces(spec.type)) {
      differs("data type", to_string(spec.dtype), to_string(first.dtype));
      differs("reduction", to_string(spec.op), to_string(first.op));
    }
  }
  if (field.empty()) return "";
  std::ostringstream os;
  os << "collective " << seq << " of group \"" << spec.group->name << "\" differs between its members in its " << field
     << ": NPU " << rank << " asks for " << mine << " (" << to_string(spec.type) << " \"" << spec.name << "\", node "
     << spec.node_id << "), NPU " << first.rank << " for " << theirs << " (" << to_string(first.type) << " \""
     << first.name << "\", node " << first.node_id << ")";
  return os.str();
}

void CollectiveAgreement::check(std::uint64_t key, std::uint64_t seq, const CollectiveSpec& spec, int rank) {
  auto [it, first] = open_.try_emplace(key);
  Entry& e = it->second;
  if (first) e.first = call_of(spec, rank);
  const std::string mismatch = first ? std::string() : difference(spec, rank, e.first, seq);
  if (++e.started == spec.group->ranks.size()) open_.erase(it);
  if (!mismatch.empty()) throw std::invalid_argument(mismatch);
}

}  // namespace fabricsim
