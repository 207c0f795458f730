// Reads one rank's Chakra execution trace: a varint32 length and a
// GlobalMetadata, then (varint32 length, Node) to the end of the file.
// Gzip-compressed files are recognised by their magic bytes (1f 8b). Nodes are
// streamed one at a time, so memory does not grow with the trace.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "traces/et_def.pb.h"

namespace google::protobuf::io {
class ZeroCopyInputStream;
class FileInputStream;
}  // namespace google::protobuf::io

namespace fabricsim::traces {

/// A malformed or missing trace. what() names the file and, where there is
/// one, the node.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class EtReader {
 public:
  /// Opens `path` and reads its GlobalMetadata; throws TraceError.
  explicit EtReader(std::string path);
  ~EtReader();
  EtReader(const EtReader&) = delete;
  EtReader& operator=(const EtReader&) = delete;

  const std::string& path() const { return path_; }
  bool compressed() const { return gzip_ != nullptr; }
  const ChakraProtoMsg::GlobalMetadata& metadata() const { return metadata_; }
  /// The file began with a node, not the GlobalMetadata record Chakra's
  /// writers put first: that node is read as the first node (it was once
  /// taken for the metadata and lost), and the metadata is empty.
  bool lacks_metadata() const { return lacked_metadata_; }
  /// Reads the next node; false at the end of the file. Throws TraceError on
  /// a truncated or unreadable record, or a node without a type (types
  /// past the known ones are returned: newer writers add them).
  bool next(ChakraProtoMsg::Node& node);
  /// Reads only the next node's id (fast, for indexing); false at the end.
  bool next_id(std::uint64_t& id);
  std::uint64_t records_read() const { return records_; }

 private:
  enum class Read { kOk, kEnd };
  Read read_record(google::protobuf::MessageLite* msg, std::uint64_t* id_only);
  /// The next record's bytes, unparsed.
  Read read_raw(std::string& bytes);
  /// Parses `bytes` into `msg`, or fails naming what protobuf said.
  void parse(const std::string& bytes, google::protobuf::MessageLite* msg);
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  int fd_ = -1;
  std::unique_ptr<google::protobuf::io::FileInputStream> file_;
  std::unique_ptr<google::protobuf::io::ZeroCopyInputStream> gzip_;
  google::protobuf::io::ZeroCopyInputStream* in_ = nullptr;
  ChakraProtoMsg::GlobalMetadata metadata_;
  std::unique_ptr<ChakraProtoMsg::Node> pending_;  // the first record, a node (lacks_metadata)
  bool lacked_metadata_ = false;
  std::uint64_t records_ = 0;  // nodes read so far
  std::uint64_t last_id_ = 0;
  bool have_last_id_ = false;
};

/// The path of rank `rank` for a workload prefix: "<prefix>.<rank>.et", or
/// "<prefix>.<rank>.et.gz" when only that exists.
std::string rank_file(const std::string& prefix, int rank);

// ---- attributes, read by name whatever value type the writer chose --------

const ChakraProtoMsg::AttributeProto* find_attr(const ChakraProtoMsg::Node& node, std::string_view name);
/// Any integer or bool value as an integer; nullopt when absent or not integral.
std::optional<std::int64_t> attr_int(const ChakraProtoMsg::Node& node, std::string_view name);
std::optional<bool> attr_bool(const ChakraProtoMsg::Node& node, std::string_view name);
std::optional<double> attr_double(const ChakraProtoMsg::Node& node, std::string_view name);
std::optional<std::string> attr_string(const ChakraProtoMsg::Node& node, std::string_view name);
/// Integer lists of any integer type (and bool lists), as int64.
std::optional<std::vector<std::int64_t>> attr_int_list(const ChakraProtoMsg::Node& node, std::string_view name);

const char* node_type_name(int type);
const char* collective_name(int comm_type);

}  // namespace fabricsim::traces
