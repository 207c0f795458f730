// Opening files the user names as inputs, safely.
//
// A FIFO would block open() or read() forever, a device such as /dev/zero
// never ends, and a directory reads as an error deep in a parser. Every
// reader of user input goes through these, which refuse anything but a
// regular file with one clear message (InputError, exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim {

/// The largest input file read whole (platforms, JSON settings): 256 MiB.
constexpr std::uint64_t kMaxInputFileBytes = std::uint64_t{256} << 20;

/// Throws InputError unless `path` is an existing regular file we can read
/// (after following symlinks). `what` names the role: "platform file".
void require_regular_file(const std::string& path, const std::string& what);

/// Opens it for reading, checked as above, without ever blocking on a FIFO:
/// a file descriptor the caller closes.
int open_input_fd(const std::string& path, const std::string& what);

/// The whole file, checked as above and at most kMaxInputFileBytes long.
/// Recorded in inputs_read().
std::string read_input_file(const std::string& path, const std::string& what);

/// SHA-256 of a file of any size (a trace of gigabytes), read in pieces.
std::string input_file_sha256(const std::string& path, const std::string& what);

/// Every file read whole so far (platforms, settings, spec files), once
/// each, in the order first read: for the provenance of outputs. Traces,
/// streamed, are not among them (their paths are on the command line).
struct InputRecord {
  std::string path;
  std::string what;  // its role: "platform file"
  std::string sha256;
  std::uint64_t bytes = 0;
};
const std::vector<InputRecord>& inputs_read();

}  // namespace fabricsim
