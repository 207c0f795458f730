// Writes Chakra execution traces in the length-delimited format that
// Chakra's own tools write and read.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "tlm/util/output_file.h"
#include "traces/et_def.pb.h"

namespace fabricsim::traces {

class EtWriter {
 public:
  /// Opens `path` and writes the GlobalMetadata; throws InputError.
  explicit EtWriter(const std::string& path, const std::string& version = "0.0.4");
  /// Without close(), the file is not written at all.
  ~EtWriter();
  EtWriter(const EtWriter&) = delete;
  EtWriter& operator=(const EtWriter&) = delete;
  void write(const ChakraProtoMsg::Node& node);
  /// Finishes the file and puts it in place.
  void close();
  std::uint64_t nodes_written() const { return nodes_; }

 private:
  void write_record(const google::protobuf::MessageLite& msg);
  std::string path_;
  OutputFile file_;  // whole or absent; never replaces a device or a symlink
  std::ostream& out_;
  std::string buffer_;
  std::uint64_t nodes_ = 0;
};

// Attribute helpers for building nodes.
void add_int(ChakraProtoMsg::Node& n, const std::string& name, std::int64_t v);
void add_uint(ChakraProtoMsg::Node& n, const std::string& name, std::uint64_t v);
void add_bool(ChakraProtoMsg::Node& n, const std::string& name, bool v);
void add_string(ChakraProtoMsg::Node& n, const std::string& name, const std::string& v);

}  // namespace fabricsim::traces
