// GoogleTest under SystemC: tests run inside sc_main, as SystemC wants, and
// our main() keeps SystemC's banner out of the output.
#include <gtest/gtest.h>

#include <cstdlib>

#include <systemc>

int sc_main(int argc, char* argv[]) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
