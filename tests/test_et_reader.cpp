// The Chakra reader: the length-delimited format, gzip, attributes whatever
// their value type, and clear errors.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_util.h"
#include "traces/generator/et_writer.h"
#include "traces/reader/et_reader.h"

using namespace fabricsim;
using namespace fabricsim::traces;

namespace {

TEST(EtReader, ReadsMetadataThenNodesOfARealTrace) {
  FABRICSIM_NEEDS_SHARED_DATA();
  EtReader r(testutil::shared_trace("astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce.0.et"));
  EXPECT_EQ(r.metadata().version(), "0.0.4");
  ChakraProtoMsg::Node n;
  ASSERT_TRUE(r.next(n));
  EXPECT_EQ(n.type(), ChakraProtoMsg::COMM_COLL_NODE);
  // comm_type = ALL_REDUCE is 0: the oneof holds its default and is present.
  ASSERT_TRUE(attr_int(n, "comm_type").has_value());
  EXPECT_EQ(*attr_int(n, "comm_type"), 0);
  EXPECT_EQ(*attr_int(n, "comm_size"), 1048576);
  ASSERT_TRUE(attr_bool(n, "is_cpu_op").has_value());
  EXPECT_FALSE(*attr_bool(n, "is_cpu_op"));
  EXPECT_FALSE(r.next(n));
}

TEST(EtReader, AttributesReadWhateverIntegerTypeTheWriterChose) {
  ChakraProtoMsg::Node n;
  auto* a = n.add_attr();
  a->set_name("a32");
  a->set_int32_val(-7);
  a = n.add_attr();
  a->set_name("u64");
  a->set_uint64_val(1ull << 40);
  a = n.add_attr();
  a->set_name("s64");
  a->set_sint64_val(-5);
  a = n.add_attr();
  a->set_name("flag");
  a->set_bool_val(true);
  a = n.add_attr();
  a->set_name("f64");
  a->set_fixed64_val(9);
  a = n.add_attr();
  a->set_name("list");
  a->mutable_uint32_list()->add_values(3);
  a->mutable_uint32_list()->add_values(4);
  a = n.add_attr();
  a->set_name("text");
  a->set_string_val("hello");
  EXPECT_EQ(*attr_int(n, "a32"), -7);
  EXPECT_EQ(*attr_int(n, "u64"), 1ll << 40);
  EXPECT_EQ(*attr_int(n, "s64"), -5);
  EXPECT_EQ(*attr_int(n, "flag"), 1);
  EXPECT_TRUE(*attr_bool(n, "flag"));
  EXPECT_EQ(*attr_int(n, "f64"), 9);
  EXPECT_EQ(*attr_int_list(n, "list"), (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(*attr_string(n, "text"), "hello");
  EXPECT_FALSE(attr_int(n, "text").has_value());
  EXPECT_FALSE(attr_int(n, "absent").has_value());
}

TEST(EtReader, GzipFilesAreReadLikePlainOnes) {
  FABRICSIM_NEEDS_SHARED_DATA();
  EtReader plain(testutil::shared_trace("pytorch/chakra.0.et"));
  EtReader gz(testutil::shared_trace("pytorch/chakra.0.et.gz"));
  EXPECT_FALSE(plain.compressed());
  EXPECT_TRUE(gz.compressed());
  ChakraProtoMsg::Node a, b;
  std::size_t n = 0;
  while (plain.next(a)) {
    ASSERT_TRUE(gz.next(b));
    ASSERT_EQ(a.id(), b.id());
    ++n;
  }
  EXPECT_FALSE(gz.next(b));
  EXPECT_EQ(n, 3664u);
}

TEST(EtReader, WriterAndReaderAgree) {
  const std::string path = testutil::scratch_dir("rw") + "/t.0.et";
  {
    EtWriter w(path);
    for (int i = 0; i < 100; ++i) {
      ChakraProtoMsg::Node n;
      n.set_id(static_cast<std::uint64_t>(1000 + i));
      n.set_type(ChakraProtoMsg::COMP_NODE);
      add_uint(n, "num_ops", static_cast<std::uint64_t>(i));
      w.write(n);
    }
    w.close();
  }
  EtReader r(path);
  std::uint64_t id = 0;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(r.next_id(id));
    EXPECT_EQ(id, static_cast<std::uint64_t>(1000 + i));
  }
  EXPECT_FALSE(r.next_id(id));
}

TEST(EtReader, AMissingFileAndAnEmptyFileAreNamed) {
  try {
    EtReader r("/nonexistent/x.0.et");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.0.et: cannot open the trace"), std::string::npos);
  }
  const std::string empty = testutil::scratch_dir("empty") + "/e.0.et";
  testutil::write_text(empty, "");
  try {
    EtReader r(empty);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("e.0.et: GlobalMetadata: empty file"), std::string::npos) << e.what();
  }
}

TEST(EtReader, ACorruptGzipStreamIsNamed) {
  FABRICSIM_NEEDS_SHARED_DATA();
  const std::string dir = testutil::scratch_dir("badgz");
  std::string bytes = testutil::read_text(testutil::shared_trace("pytorch/chakra.0.et.gz"));
  bytes.resize(bytes.size() / 2);  // cut in the middle of the deflate stream
  testutil::write_text(dir + "/c.0.et.gz", bytes);
  try {
    EtReader r(dir + "/c.0.et.gz");
    ChakraProtoMsg::Node n;
    while (r.next(n)) {
    }
    FAIL() << "read a truncated gzip stream to the end";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("c.0.et.gz: node record"), std::string::npos) << e.what();
  }
}

}  // namespace
