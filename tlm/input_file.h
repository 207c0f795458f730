// Opening files the user names as inputs, safely.
//
// A FIFO would block open() or read() forever, a device such as /dev/zero
// never ends, and a directory reads as an error deep in a parser. Every
// reader of user input goes through these, which refuse anything but a
// regular file with one clear message (InputError, exit 2).
#pragma once

#include <cstdint>
#include <string>

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
std::string read_input_file(const std::string& path, const std::string& what);

}  // namespace fabricsim
