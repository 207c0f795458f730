// What every JSON output says about what made it: fabricsim's version and
// commit, the command line, and each input file with its SHA-256.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_util.h"
#include "tlm/util/sha256.h"

using namespace fabricsim;

namespace {

TEST(Sha256, KnownVectors) {
  // FIPS 180-4 examples: one block, two blocks, and the empty message.
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Provenance, EveryJsonOutputNamesItsInputFilesWithTheirHashes) {
  const std::string dir = testutil::scratch_dir("provenance");
  const std::string platform = "npus: 4\nfabrics:\n  - topology: ring\n    link: { bandwidth: 50 GB/s }\n";
  testutil::write_text(dir + "/p.yaml", platform);
  testutil::write_text(dir + "/s.json", "{\"preferred-dataset-splits\": 2}\n");
  ASSERT_EQ(testutil::run_fabricsim("collbench --quiet --platform " + dir + "/p.yaml --system " + dir +
                                    "/s.json -b 1M -e 1M --json " + dir + "/c.json")
                .exit_code,
            0);
  ASSERT_EQ(
      testutil::run_fabricsim("gen collective --npus 4 --type all_reduce --bytes 1M --out " + dir + "/t").exit_code, 0);
  ASSERT_EQ(testutil::run_fabricsim("run --quiet --platform " + dir + "/p.yaml --workload " + dir + "/t --report " +
                                    dir + "/r.json")
                .exit_code,
            0);
  for (const char* out : {"c.json", "r.json"}) {
    const auto j = nlohmann::json::parse(testutil::read_text(dir + "/" + out));
    const auto& f = j["fabricsim"];
    EXPECT_FALSE(f["version"].get<std::string>().empty()) << out;
    EXPECT_FALSE(f["commit"].get<std::string>().empty()) << out;
    EXPECT_NE(f["command"].get<std::string>().find(dir + "/p.yaml"), std::string::npos) << out;
    bool platform_seen = false;
    for (const auto& in : f["inputs"]) {
      if (in["path"] == dir + "/p.yaml") {
        platform_seen = true;
        EXPECT_EQ(in["sha256"], sha256_hex(platform)) << out;
        EXPECT_EQ(in["bytes"], platform.size()) << out;
        EXPECT_EQ(in["role"], "platform file") << out;
      }
    }
    EXPECT_TRUE(platform_seen) << out << ": " << f.dump();
  }
  const auto c = nlohmann::json::parse(testutil::read_text(dir + "/c.json"));
  bool system_seen = false;
  for (const auto& in : c["fabricsim"]["inputs"]) system_seen |= in["path"] == dir + "/s.json";
  EXPECT_TRUE(system_seen) << c["fabricsim"].dump();
}

}  // namespace
