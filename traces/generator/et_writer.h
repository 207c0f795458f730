// Writes Chakra execution traces in the length-delimited format that
// Chakra's own tools write and read.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "traces/et_def.pb.h"

namespace fabricsim::traces {

class EtWriter {
 public:
  /// Opens `path` and writes the GlobalMetadata; throws std::runtime_error.
  explicit EtWriter(const std::string& path, const std::string& version = "0.0.4");
  void write(const ChakraProtoMsg::Node& node);
  void close();
  std::uint64_t nodes_written() const { return nodes_; }

 private:
  void write_record(const google::protobuf::MessageLite& msg);
  std::string path_;
  std::ofstream out_;
  std::string buffer_;
  std::uint64_t nodes_ = 0;
};

// Attribute helpers for building nodes.
void add_int(ChakraProtoMsg::Node& n, const std::string& name, std::int64_t v);
void add_uint(ChakraProtoMsg::Node& n, const std::string& name, std::uint64_t v);
void add_bool(ChakraProtoMsg::Node& n, const std::string& name, bool v);
void add_string(ChakraProtoMsg::Node& n, const std::string& name, const std::string& v);

}  // namespace fabricsim::traces
