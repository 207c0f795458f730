#include "tlm/util/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <unordered_set>

#include "tlm/util/errors.h"
#include "tlm/util/sha256.h"

namespace fabricsim {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// Opens without blocking (a FIFO would wait for a writer), then checks.
int open_regular(const std::string& path, const std::string& what, struct stat& st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    throw InputError(path + ": cannot open the " + what + " (" + std::strerror(errno) + ")");
  }
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string kind = ::fstat(fd, &st) == 0 ? kind_of(st.st_mode) : "unreadable";
    ::close(fd);
    throw InputError(path + ": the " + what + " is " + kind + "; give a regular file");
  }
  return fd;
}

}  // namespace

int open_input_fd(const std::string& path, const std::string& what) {
  struct stat st {};
  const int fd = open_regular(path, what, st);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

void require_regular_file(const std::string& path, const std::string& what) {
  struct stat st {};
  ::close(open_regular(path, what, st));
}

namespace {
std::vector<InputRecord> g_inputs;
std::unordered_set<std::string> g_input_paths;  // g_inputs' paths: a sweep reads thousands of files

void record_input(const std::string& path, const std::string& what, const std::string& text) {
  if (!g_input_paths.insert(path).second) return;
  g_inputs.push_back({path, what, sha256_hex(text), text.size()});
}
}  // namespace

namespace {
/// Reads an open file to its end in pieces, handing each to `piece`; closes it.
void read_pieces(int fd, const std::string& path, const std::string& what,
                 const std::function<void(const char*, std::size_t)>& piece) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw InputError(path + ": cannot read the " + what + " (" + std::strerror(err) + ")");
    }
    if (n == 0) break;
    try {
      piece(buf, static_cast<std::size_t>(n));
    } catch (...) {
      ::close(fd);
      throw;
    }
  }
  ::close(fd);
}
}  // namespace

std::string read_input_file(const std::string& path, const std::string& what) {
  struct stat st {};
  const int fd = open_regular(path, what, st);
  if (static_cast<std::uint64_t>(st.st_size) > kMaxInputFileBytes) {
    ::close(fd);
    throw InputError(path + ": the " + what + " is " + std::to_string(st.st_size) + " bytes, more than the " +
                     std::to_string(kMaxInputFileBytes >> 20) + " MiB a " + what + " may be");
  }
  std::string text;
  read_pieces(fd, path, what, [&](const char* data, std::size_t n) {
    text.append(data, n);
    if (text.size() > kMaxInputFileBytes) {  // grew while we read
      throw InputError(path + ": the " + what + " is more than " + std::to_string(kMaxInputFileBytes >> 20) + " MiB");
    }
  });
  record_input(path, what, text);
  return text;
}

std::string input_file_sha256(const std::string& path, const std::string& what) {
  Sha256 hash;
  read_pieces(open_input_fd(path, what), path, what, [&](const char* data, std::size_t n) { hash.update(data, n); });
  return hash.hex();
}

const std::vector<InputRecord>& inputs_read() {
  return g_inputs;
}

}  // namespace fabricsim
