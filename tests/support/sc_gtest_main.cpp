// GoogleTest under SystemC: tests run inside sc_main, as SystemC wants, and
// our main() keeps SystemC's banner out of the output.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <system_error>
#include <systemc>

#include "support/test_util.h"

int sc_main(int argc, char* argv[]) {
  testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  // Scratch files are worth keeping only to look into a failure.
  const std::string& scratch = fabricsim::testutil::scratch_root_if_made();
  if (!scratch.empty()) {
    std::error_code ec;
    if (result == 0)
      std::filesystem::remove_all(scratch, ec);
    else
      std::cerr << "scratch files kept in " << scratch << "\n";
  }
  return result;
}

int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
