#include "tlm/util/output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "tlm/util/errors.h"
#include "tlm/util/interrupt_cleanup.h"

namespace fabricsim {

namespace {
std::string error_text(int err) {
  return std::strerror(err);
}
}  // namespace

OutputFile::OutputFile(const std::string& path, const std::string& what) : path_(path), target_(path), what_(what) {
  if (path.empty()) throw InputError("an empty path given for the " + what);
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;  // follows symlinks
  struct stat link {};
  if (!exists && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    // Renaming onto it would replace the link itself.
    throw InputError(path +
                     ": is a symlink to a file that does not exist; give a path that exists, or a new one, "
                     "for the " +
                     what);
  }
  if (exists && S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory; give a file for the " + what);
  if (exists && S_ISFIFO(st.st_mode)) {
    // Opening a FIFO nobody reads would wait for ever: ask without waiting,
    // and hold that end open until the stream has its own.
    const int probe = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (probe < 0 && errno == ENXIO) {
      throw InputError(path + ": is a FIFO that nothing reads; start its reader first, or give a file for the " + what);
    }
    if (probe < 0) fail(error_text(errno));
    out_.open(path, std::ios::binary | std::ios::out);
    const int err = errno;
    ::close(probe);
    if (!out_) fail(error_text(err));
    return;
  }
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or socket: written in place, never replaced.
    out_.open(path, std::ios::binary | std::ios::out);
    if (!out_) fail(error_text(errno));
    return;
  }
  if (exists) {
    // A symlink (or a chain of them) keeps pointing where it did.
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      target_ = real;
      std::free(real);
    }
  }
  const std::size_t slash = target_.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "." : target_.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? target_ : target_.substr(slash + 1);
  std::string pattern = (slash == std::string::npos ? "" : folder) + "." + base + ".XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  // Made and registered for removal on a signal with the signals held
  // back, so that none lands between the two.
  sigset_t held, saved;
  sigemptyset(&held);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&held, sig);
  ::sigprocmask(SIG_BLOCK, &held, &saved);
  const int fd = ::mkstemp(name.data());
  const int made_errno = errno;
  if (fd >= 0) cleanup_slot_ = interrupt_cleanup::add_temporary(name.data());
  ::sigprocmask(SIG_SETMASK, &saved, nullptr);
  if (fd < 0) fail("no new file can be made in " + folder + ": " + error_text(made_errno));
  // mkstemp makes the file 0600: give it the mode of the file it replaces,
  // or what a new file gets under the umask.
  mode_t mode = 0;
  if (exists) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd, mode);
  ::close(fd);
  temp_ = name.data();
  out_.open(temp_, std::ios::binary | std::ios::out | std::ios::trunc);
  if (!out_) fail(error_text(errno));
}

OutputFile::~OutputFile() {
  if (!committed_ && !temp_.empty()) {
    out_.close();
    std::remove(temp_.c_str());
  }
  interrupt_cleanup::release_temporary(cleanup_slot_);
}

void OutputFile::fail(const std::string& what) {
  if (!temp_.empty()) {
    out_.close();
    std::remove(temp_.c_str());
    temp_.clear();
    interrupt_cleanup::release_temporary(cleanup_slot_);
    cleanup_slot_ = -1;
  }
  throw InputError(path_ + ": cannot write the " + what_ + " (" + what + ")");
}

void OutputFile::commit() {
  out_.flush();
  out_.close();
  if (!out_) fail("the write failed; is the disk full?");
  if (!temp_.empty() && std::rename(temp_.c_str(), target_.c_str()) != 0) {
    fail("it cannot be put in place: " + error_text(errno));
  }
  committed_ = true;
  interrupt_cleanup::release_temporary(cleanup_slot_);
  cleanup_slot_ = -1;
}

void write_output_file(const std::string& path, const std::string& text, const std::string& what) {
  OutputFile out(path, what);
  out.stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  out.commit();
}

void check_direct_output_path(const std::string& path, const std::string& what) {
  if (path.empty()) throw InputError("an empty path given for the " + what);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory; give a file for the " + what);
    if (!S_ISREG(st.st_mode)) {
      throw InputError(path + ": is a FIFO, device or socket; the " + what + " is written in place, so give a file");
    }
    return;
  }
  struct stat link {};
  if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    throw InputError(path +
                     ": is a symlink to a file that does not exist; give a path that exists, or a new one, "
                     "for the " +
                     what);
  }
  const std::size_t slash = path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode)) {
    throw InputError(path + ": its folder " + folder +
                     " does not exist (or is not a folder); make it first, or "
                     "give another path for the " +
                     what);
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    throw InputError(path + ": its folder " + folder + " cannot be written; give another path for the " + what);
  }
}

}  // namespace fabricsim
