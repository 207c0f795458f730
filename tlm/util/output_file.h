// Writing files the user names as outputs, whole or not at all, and never
// harming what the path points at.
//
// - A regular file (or a new path) is written to a unique temporary file
//   beside it and renamed over it by commit(): readers see the old file or
//   the whole new one, two jobs aimed at one path do not clobber each
//   other's temporaries, and nothing partial is left behind, not even when
//   a signal ends the process (tlm/util/interrupt_cleanup.h).
// - A symlink is followed: its target is replaced that way; the link stays.
// - A device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is written in
//   place: it is never replaced by a regular file. A FIFO nobody reads is
//   refused rather than waited on.
// - A directory, and a symlink whose target does not exist, are refused.
// Failures throw InputError naming the path (exit 2).
#pragma once

#include <fstream>
#include <string>

namespace fabricsim {

class OutputFile {
 public:
  /// `what` names the file in messages: "report", "timeline".
  OutputFile(const std::string& path, const std::string& what);
  ~OutputFile();  // removes the temporary unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return out_; }
  /// Flushes and puts the file in place.
  void commit();
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(const std::string& what);
  std::string path_;    // as the user gave it
  std::string target_;  // where it lands (a symlink's target)
  std::string temp_;    // empty: written in place
  std::string what_;
  std::ofstream out_;
  bool committed_ = false;
  int cleanup_slot_ = -1;  // the temporary's slot for removal on a signal (tlm/util/interrupt_cleanup.h)
};

/// Writes `text` to `path` as OutputFile does.
void write_output_file(const std::string& path, const std::string& text, const std::string& what);

/// For a file another library writes itself, in place (an RTL waveform):
/// refuses, with InputError naming the path and the `what`, a directory, a
/// FIFO, device or socket (written to directly they would block or be
/// harmed), a symlink to nothing, and a path whose folder does not exist or
/// is not a folder. A regular file or a new path in a folder passes.
void check_direct_output_path(const std::string& path, const std::string& what);

}  // namespace fabricsim
