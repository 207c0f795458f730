#include "traces/generator/et_writer.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace fabricsim::traces {

namespace {
/// The prefix's folder is made if missing, as a user writing traces expects.
const std::string& with_folder(const std::string& path) {
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!folder.empty()) std::filesystem::create_directories(folder, ec);
  return path;
}
}  // namespace

namespace {
EtWriter::Count* counting = nullptr;
}  // namespace

EtWriter::Count::Count(double l) : limit(l) {
  counting = this;
}
EtWriter::Count::~Count() {
  counting = nullptr;
}

EtWriter::EtWriter(const std::string& path, const std::string& version) : path_(path), count_(counting) {
  if (count_) {
    count_->files += 1;
  } else {
    file_ = std::make_unique<OutputFile>(with_folder(path), "trace");
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
  if (count_) {
    count_->bytes += static_cast<double>(buffer_.size());
    if (count_->bytes > count_->limit) throw Count::PastLimit{};
    return;
  }
  std::ostream& out = file_->stream();
  out.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  if (!out) throw std::runtime_error(path_ + ": write failed");
}

void EtWriter::write(const ChakraProtoMsg::Node& node) {
  write_record(node);
  ++nodes_;
}

void EtWriter::close() {
  if (file_) file_->commit();
}

EtWriter::~EtWriter() = default;  // without close(), file_ removes what was written

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
