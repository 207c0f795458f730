#include "traces/reader/node_source.h"

namespace fabricsim::traces {

void EtFileSource::index(std::vector<std::uint64_t>& ids) {
  EtReader first(path_);
  std::uint64_t id = 0;
  while (first.next_id(id)) ids.push_back(id);
  lacked_metadata_ = first.lacks_metadata();
}

bool EtFileSource::next(ChakraProtoMsg::Node& node) {
  if (ended_) return false;
  if (!reader_) reader_ = std::make_unique<EtReader>(path_);
  if (reader_->next(node)) return true;
  ended_ = true;
  reader_.reset();  // close the file and free its buffers
  return false;
}

}  // namespace fabricsim::traces
