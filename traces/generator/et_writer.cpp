#include "traces/generator/et_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

namespace fabricsim::traces {

EtWriter::EtWriter(const std::string& path, const std::string& version) : path_(path), tmp_(path + ".tmp") {
  // Written to a temporary name and renamed by close(): a trace is whole or absent.
  // The prefix's folder is made if missing, as a user writing traces expects.
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!folder.empty()) std::filesystem::create_directories(folder, ec);
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    // A bad --out is the user's to fix: reported as bad input.
    throw std::invalid_argument(path + ": cannot write (" + (ec ? ec.message() : std::strerror(errno)) + ")");
  }
  ChakraProtoMsg::GlobalMetadata meta;
  meta.set_version(version);
  write_record(meta);
}

void EtWriter::write_record(const google::protobuf::MessageLite& msg) {
  buffer_.clear();
  {
    google::protobuf::io::StringOutputStream sos(&buffer_);
    google::protobuf::io::CodedOutputStream cos(&sos);
    cos.WriteVarint32(static_cast<std::uint32_t>(msg.ByteSizeLong()));
    msg.SerializeWithCachedSizes(&cos);
  }
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  if (!out_) throw std::runtime_error(path_ + ": write failed");
}

void EtWriter::write(const ChakraProtoMsg::Node& node) {
  write_record(node);
  ++nodes_;
}

void EtWriter::close() {
  out_.close();
  if (!out_) {
    std::remove(tmp_.c_str());
    throw std::runtime_error(path_ + ": write failed");
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_.c_str());
    throw std::runtime_error(path_ + ": cannot put the trace in place");
  }
  closed_ = true;
}

EtWriter::~EtWriter() {
  if (!closed_) {
    out_.close();
    std::remove(tmp_.c_str());
  }
}

void add_int(ChakraProtoMsg::Node& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}
void add_uint(ChakraProtoMsg::Node& n, const std::string& name, std::uint64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_uint64_val(v);
}
void add_bool(ChakraProtoMsg::Node& n, const std::string& name, bool v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_bool_val(v);
}
void add_string(ChakraProtoMsg::Node& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_string_val(v);
}

}  // namespace fabricsim::traces
