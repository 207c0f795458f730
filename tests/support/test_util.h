// Helpers shared by the tests: scratch directories, files, running the
// fabricsim command, and closed forms.
#pragma once

#include <cstdint>
#include <string>

namespace fabricsim::testutil {

/// A fresh directory `name` in this test process's own folder of the
/// system's temp directory (made on first use).
std::string scratch_dir(const std::string& name);
/// That folder if a test has made it, else empty: the test main removes it
/// when every test passed and keeps it, saying where, otherwise.
const std::string& scratch_root_if_made();
void write_text(const std::string& path, const std::string& text);
std::string read_text(const std::string& path);

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
/// Runs the fabricsim binary with `args` (shell-quoted by the caller),
/// under `launcher` if one is given (`taskset -c 0`).
CommandResult run_fabricsim(const std::string& args, const std::string& launcher = "");
/// The fabricsim binary's path, for a test that starts it itself.
std::string fabricsim_binary();

/// Path of a trace folder in ../shared/traces.
std::string shared_trace(const std::string& relative);
/// Whether configure found the shared folder (traces/, reference/).
bool have_shared_data();

/// An ASTRA-sim network file with one dimension.
std::string astra_network(const std::string& dir, const std::string& topology, int npus, double bandwidth_GiBps,
                          double latency_ns);

}  // namespace fabricsim::testutil

/// First statement of a test that reads ../shared: without it (a lone clone of
/// the repository), the test is skipped and says why.
#define FABRICSIM_NEEDS_SHARED_DATA()                                                               \
  if (!::fabricsim::testutil::have_shared_data())                                                   \
  GTEST_SKIP() << "needs the shared folder (traces/, reference/) beside the repository; configure " \
                  "did not find it: set -DFABRICSIM_SHARED_DIR=DIR"
