// Writes Chakra execution traces in the length-delimited format that
// Chakra's own tools write and read.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "tlm/util/output_file.h"
#include "traces/et_def.pb.h"

namespace fabricsim::traces {

class EtWriter {
 public:
  /// Opens `path` and writes the GlobalMetadata; throws InputError.
  explicit EtWriter(const std::string& path, const std::string& version = "0.0.4");
  /// While a Count lives, writers open no file: they add the bytes they
  /// would write to it, and throw Count::PastLimit once it passes `limit`
  /// (a generator's counting pass, bounded in time as in size).
  struct Count {
    explicit Count(double limit);
    ~Count();
    Count(const Count&) = delete;
    Count& operator=(const Count&) = delete;
    double bytes = 0;
    double files = 0;
    double limit;
    struct PastLimit {};
  };
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
  Count* count_;                      // counting, not writing (Count)
  std::unique_ptr<OutputFile> file_;  // whole or absent; never replaces a device or a symlink
  std::string buffer_;
  std::uint64_t nodes_ = 0;
};

// Attribute helpers for building nodes.
void add_int(ChakraProtoMsg::Node& n, const std::string& name, std::int64_t v);
void add_uint(ChakraProtoMsg::Node& n, const std::string& name, std::uint64_t v);
void add_bool(ChakraProtoMsg::Node& n, const std::string& name, bool v);
void add_string(ChakraProtoMsg::Node& n, const std::string& name, const std::string& v);

}  // namespace fabricsim::traces
