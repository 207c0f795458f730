// Helpers shared by the tests: scratch directories, files, running the
// fabricsim command, and closed forms.
#pragma once

#include <cstdint>
#include <string>

namespace fabricsim::testutil {

/// A fresh directory for one test, under the build tree's temp area.
std::string scratch_dir(const std::string& name);
void write_text(const std::string& path, const std::string& text);
std::string read_text(const std::string& path);

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
/// Runs the fabricsim binary with `args` (shell-quoted by the caller).
CommandResult run_fabricsim(const std::string& args);

/// Path of a trace folder in ../shared/traces.
std::string shared_trace(const std::string& relative);

/// An ASTRA-sim network file with one dimension.
std::string astra_network(const std::string& dir, const std::string& topology, int npus, double bandwidth_GiBps,
                          double latency_ns);

}  // namespace fabricsim::testutil
