#include "traces/reader/et_reader.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/wire_format_lite.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tlm/util/errors.h"
#include "tlm/util/input_file.h"

namespace fabricsim::traces {

namespace pbio = google::protobuf::io;
using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;

namespace {
// Protobuf logs why a record does not parse (a string field that is not
// UTF-8...) to stderr on its own: kept instead, for our one message.
std::string& protobuf_complaint() {
  static std::string* text = new std::string();
  return *text;
}
void keep_protobuf_complaint(google::protobuf::LogLevel level, const char*, int, const std::string& message) {
  if (level >= google::protobuf::LOGLEVEL_WARNING) protobuf_complaint() = message;
}
constexpr std::uint32_t kMaxRecordBytes = 1u << 30;
constexpr int kLastKnownNodeType = ChakraProtoMsg::CHECKPOINT_NODE;
}  // namespace

EtReader::EtReader(std::string path) : path_(std::move(path)) {
  static const bool quiet = (google::protobuf::SetLogHandler(&keep_protobuf_complaint), true);
  (void)quiet;
  // A FIFO, device or directory is refused before it can block or never end.
  try {
    fd_ = open_input_fd(path_, "trace");
  } catch (const InputError& e) {
    throw TraceError(e.what());
  }
  // Small blocks: thousands of ranks each keep a reader open.
  file_ = std::make_unique<pbio::FileInputStream>(fd_, 4096);
  file_->SetCloseOnDelete(true);
  in_ = file_.get();
  // Peek at the magic bytes without consuming them.
  const void* data = nullptr;
  int size = 0;
  while (in_->Next(&data, &size) && size == 0) {
  }
  if (size >= 2 && static_cast<const unsigned char*>(data)[0] == 0x1f &&
      static_cast<const unsigned char*>(data)[1] == 0x8b) {
    in_->BackUp(size);
    gzip_ = std::make_unique<pbio::GzipInputStream>(file_.get(), pbio::GzipInputStream::GZIP);
    in_ = gzip_.get();
  } else if (size > 0) {
    in_->BackUp(size);
  }
  std::string first;
  if (read_raw(first) == Read::kEnd) fail("empty file: no GlobalMetadata record");
  // GlobalMetadata's fields are length-delimited (version, attr); a node
  // has its id (field 1) and type (field 3) as varints. A first record with
  // either is a node: the metadata record is missing.
  bool node = false;
  {
    pbio::CodedInputStream cis(reinterpret_cast<const std::uint8_t*>(first.data()), static_cast<int>(first.size()));
    for (std::uint32_t tag; (tag = cis.ReadTag()) != 0;) {
      if (tag == ((1u << 3) | 0u) || tag == ((3u << 3) | 0u)) {
        node = true;
        break;
      }
      if (!google::protobuf::internal::WireFormatLite::SkipField(&cis, tag)) break;
    }
  }
  if (node) {
    lacked_metadata_ = true;
    pending_ = std::make_unique<Node>();
    parse(first, pending_.get());
  } else {
    parse(first, &metadata_);
  }
  records_ = 0;
}

EtReader::Read EtReader::read_raw(std::string& bytes) {
  const void* data = nullptr;
  int size = 0;
  do {
    if (!in_->Next(&data, &size)) {
      if (gzip_) {
        auto* gz = static_cast<pbio::GzipInputStream*>(gzip_.get());
        if (gz->ZlibErrorCode() < 0 && gz->ZlibErrorMessage()) {
          fail(std::string("gzip stream is corrupt: ") + gz->ZlibErrorMessage());
        }
      }
      return Read::kEnd;
    }
  } while (size == 0);
  in_->BackUp(size);
  pbio::CodedInputStream cis(in_);
  std::uint32_t length = 0;
  if (!cis.ReadVarint32(&length)) fail("truncated record length");
  if (length > kMaxRecordBytes) fail("bad record length " + std::to_string(length) + " bytes");
  if (!cis.ReadString(&bytes, static_cast<int>(length))) {
    fail("truncated or malformed record (" + std::to_string(length) + " bytes expected)");
  }
  return Read::kOk;
}

void EtReader::parse(const std::string& bytes, google::protobuf::MessageLite* msg) {
  protobuf_complaint().clear();
  if (!msg->ParseFromString(bytes)) {
    std::string why = protobuf_complaint();
    const auto advice = why.find(" when parsing a protocol buffer");
    if (advice != std::string::npos) why.erase(advice);
    fail("truncated or malformed record (" + std::to_string(bytes.size()) + " bytes)" +
         (why.empty() ? std::string() : ": " + why));
  }
}

EtReader::~EtReader() = default;

void EtReader::fail(const std::string& what) const {
  std::string where = path_;
  if (records_ == 0 && metadata_.ByteSizeLong() == 0) {
    where += ": GlobalMetadata";
  } else {
    where += ": node record " + std::to_string(records_ + 1);
    if (have_last_id_) where += " (after node id " + std::to_string(last_id_) + ")";
  }
  throw TraceError(where + ": " + what);
}

EtReader::Read EtReader::read_record(google::protobuf::MessageLite* msg, std::uint64_t* id_only) {
  // End of file only between records.
  const void* data = nullptr;
  int size = 0;
  do {
    if (!in_->Next(&data, &size)) {
      if (gzip_) {
        auto* gz = static_cast<pbio::GzipInputStream*>(gzip_.get());
        if (gz->ZlibErrorCode() < 0 && gz->ZlibErrorMessage()) {
          fail(std::string("gzip stream is corrupt: ") + gz->ZlibErrorMessage());
        }
      }
      return Read::kEnd;
    }
  } while (size == 0);
  in_->BackUp(size);

  pbio::CodedInputStream cis(in_);
  std::uint32_t length = 0;
  if (!cis.ReadVarint32(&length)) fail("truncated record length");
  if (length > kMaxRecordBytes) fail("bad record length " + std::to_string(length) + " bytes");
  const auto limit = cis.PushLimit(static_cast<int>(length));
  if (id_only) {
    // Node.id is field 1 (varint); skip everything else.
    *id_only = 0;
    for (;;) {
      const std::uint32_t tag = cis.ReadTag();
      if (tag == 0) break;
      if (tag == ((1u << 3) | 0u)) {
        if (!cis.ReadVarint64(id_only)) fail("truncated node id");
      } else if (!google::protobuf::internal::WireFormatLite::SkipField(&cis, tag)) {
        break;
      }
    }
    if (cis.BytesUntilLimit() != 0) fail("truncated or malformed node record");
  } else {
    protobuf_complaint().clear();
    if (!msg->ParseFromCodedStream(&cis) || !cis.ConsumedEntireMessage() || cis.BytesUntilLimit() != 0) {
      std::string why = protobuf_complaint();
      const auto advice = why.find(" when parsing a protocol buffer");  // then advice for the writer's author
      if (advice != std::string::npos) why.erase(advice);
      fail("truncated or malformed record (" + std::to_string(length) + " bytes expected)" +
           (why.empty() ? std::string() : ": " + why));
    }
  }
  cis.PopLimit(limit);
  return Read::kOk;
}

bool EtReader::next(Node& node) {
  node.Clear();
  if (pending_) {
    node.Swap(pending_.get());
    pending_.reset();
  } else if (read_record(&node, nullptr) == Read::kEnd) {
    return false;
  }
  ++records_;
  const int type = node.type();
  // A type past the known ones is a newer writer's: the workload runs it as
  // a no-op and says so. No type at all is a broken record.
  if (type <= ChakraProtoMsg::INVALID_NODE) {
    throw TraceError(path_ + ": node " + std::to_string(node.id()) + " (\"" + node.name() + "\"): node type " +
                     std::to_string(type) + " is not a node type (1 to " + std::to_string(kLastKnownNodeType) +
                     " are known)");
  }
  last_id_ = node.id();
  have_last_id_ = true;
  return true;
}

bool EtReader::next_id(std::uint64_t& id) {
  if (pending_) {
    id = pending_->id();
    pending_.reset();
  } else if (read_record(nullptr, &id) == Read::kEnd) {
    return false;
  }
  ++records_;
  last_id_ = id;
  have_last_id_ = true;
  return true;
}

std::string rank_file(const std::string& prefix, int rank) {
  const std::string plain = prefix + "." + std::to_string(rank) + ".et";
  if (::access(plain.c_str(), F_OK) == 0) return plain;
  const std::string gz = plain + ".gz";
  if (::access(gz.c_str(), F_OK) == 0) return gz;
  return plain;
}

// ---- attributes -------------------------------------------------------------

const AttributeProto* find_attr(const Node& node, std::string_view name) {
  for (const AttributeProto& a : node.attr()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::optional<std::int64_t> attr_int(const Node& node, std::string_view name) {
  const AttributeProto* a = find_attr(node, name);
  if (!a) return std::nullopt;
  switch (a->value_case()) {
    case AttributeProto::kInt32Val:
      return a->int32_val();
    case AttributeProto::kInt64Val:
      return a->int64_val();
    case AttributeProto::kUint32Val:
      return a->uint32_val();
    case AttributeProto::kUint64Val:
      return static_cast<std::int64_t>(a->uint64_val());
    case AttributeProto::kSint32Val:
      return a->sint32_val();
    case AttributeProto::kSint64Val:
      return a->sint64_val();
    case AttributeProto::kFixed32Val:
      return a->fixed32_val();
    case AttributeProto::kFixed64Val:
      return static_cast<std::int64_t>(a->fixed64_val());
    case AttributeProto::kSfixed32Val:
      return a->sfixed32_val();
    case AttributeProto::kSfixed64Val:
      return a->sfixed64_val();
    case AttributeProto::kBoolVal:
      return a->bool_val() ? 1 : 0;
    default:
      return std::nullopt;
  }
}

std::optional<bool> attr_bool(const Node& node, std::string_view name) {
  const auto v = attr_int(node, name);
  if (!v) return std::nullopt;
  return *v != 0;
}

std::optional<double> attr_double(const Node& node, std::string_view name) {
  const AttributeProto* a = find_attr(node, name);
  if (!a) return std::nullopt;
  if (a->value_case() == AttributeProto::kDoubleVal) return a->double_val();
  if (a->value_case() == AttributeProto::kFloatVal) return a->float_val();
  const auto i = attr_int(node, name);
  if (i) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<std::string> attr_string(const Node& node, std::string_view name) {
  const AttributeProto* a = find_attr(node, name);
  if (!a) return std::nullopt;
  if (a->value_case() == AttributeProto::kStringVal) return a->string_val();
  if (a->value_case() == AttributeProto::kBytesVal) return a->bytes_val();
  return std::nullopt;
}

std::optional<std::vector<std::int64_t>> attr_int_list(const Node& node, std::string_view name) {
  const AttributeProto* a = find_attr(node, name);
  if (!a) return std::nullopt;
  std::vector<std::int64_t> out;
  auto take = [&out](const auto& list) {
    for (auto v : list.values()) out.push_back(static_cast<std::int64_t>(v));
  };
  switch (a->value_case()) {
    case AttributeProto::kInt32List:
      take(a->int32_list());
      break;
    case AttributeProto::kInt64List:
      take(a->int64_list());
      break;
    case AttributeProto::kUint32List:
      take(a->uint32_list());
      break;
    case AttributeProto::kUint64List:
      take(a->uint64_list());
      break;
    case AttributeProto::kSint32List:
      take(a->sint32_list());
      break;
    case AttributeProto::kSint64List:
      take(a->sint64_list());
      break;
    case AttributeProto::kFixed32List:
      take(a->fixed32_list());
      break;
    case AttributeProto::kFixed64List:
      take(a->fixed64_list());
      break;
    case AttributeProto::kSfixed32List:
      take(a->sfixed32_list());
      break;
    case AttributeProto::kSfixed64List:
      take(a->sfixed64_list());
      break;
    case AttributeProto::kBoolList:
      take(a->bool_list());
      break;
    default:
      return std::nullopt;
  }
  return out;
}

const char* node_type_name(int type) {
  return ChakraProtoMsg::NodeType_IsValid(type) ? ChakraProtoMsg::NodeType_Name(type).c_str() : "UNKNOWN";
}

const char* collective_name(int comm_type) {
  return ChakraProtoMsg::CollectiveCommType_IsValid(comm_type)
             ? ChakraProtoMsg::CollectiveCommType_Name(comm_type).c_str()
             : "UNKNOWN";
}

}  // namespace fabricsim::traces
