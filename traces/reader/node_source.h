// Where a rank's Chakra nodes come from: a trace file (EtFileSource), or a
// generator that makes them as they are read (traces/model/), so a step of
// thousands of GPUs needs no files and no generation pass. The trace driver
// (traces/workload/trace_workload.h) reads either the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "traces/et_def.pb.h"
#include "traces/reader/et_reader.h"
#include "traces/reader/op_args.h"

namespace fabricsim::traces {

class NodeSource {
 public:
  virtual ~NodeSource() = default;
  /// What messages call it: a file's path, or the generator and its rank.
  virtual const std::string& name() const = 0;
  /// Ids 0 to count-1, each once, where the source knows it (a generator);
  /// nullopt: the reader indexes the ids itself with index().
  virtual std::optional<std::uint64_t> dense_ids() const { return std::nullopt; }
  /// Every node's id, in the source's order (a first pass over a file).
  virtual void index(std::vector<std::uint64_t>& ids) = 0;
  /// The next node; false at the end. Throws TraceError on a bad record.
  virtual bool next(ChakraProtoMsg::Node& node) = 0;
  /// A file that began with a node, not its GlobalMetadata (EtReader).
  virtual bool lacks_metadata() const { return false; }
  /// The inputs and outputs of the node next() gave last, held structured by
  /// a source that leaves its `inputs`/`outputs` text unwritten (a generator
  /// run in-process: writing the literals and parsing them back was half of
  /// a generated step's wall time); exactly what parse_op_args reads from
  /// the text the same source writes to a file. nullptr: read the text.
  virtual const OpIo* structured_io() const { return nullptr; }
};

/// A rank's trace file, read in two passes (ids, then nodes).
class EtFileSource final : public NodeSource {
 public:
  explicit EtFileSource(std::string path) : path_(std::move(path)) {}
  const std::string& name() const override { return path_; }
  void index(std::vector<std::uint64_t>& ids) override;
  bool next(ChakraProtoMsg::Node& node) override;
  bool lacks_metadata() const override { return lacked_metadata_; }

 private:
  std::string path_;
  std::unique_ptr<EtReader> reader_;  // the second pass; closed at the end
  bool lacked_metadata_ = false;
  bool ended_ = false;
};

}  // namespace fabricsim::traces
