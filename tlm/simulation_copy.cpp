#include "tlm/simulation_copy.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace fabricsim {

namespace {
/// A private description of the read-only regular file behind `fd`, at its
/// offset, or -1 when `fd` is anything else.
int reopen_for_reading(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  struct stat st {};
  if (flags < 0 || (flags & O_ACCMODE) != O_RDONLY || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  const off_t at = ::lseek(fd, 0, SEEK_CUR);
  if (at < 0) return -1;
  const int copy = ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDONLY | O_CLOEXEC);
  if (copy < 0) return -1;
  if (::lseek(copy, at, SEEK_SET) != at) {
    ::close(copy);
    return -1;
  }
  return copy;
}
}  // namespace

void detach_from_parent_files(int keep) {
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) ::_exit(4);
  std::vector<int> fds;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    const int own = ::dirfd(dir);
    while (const dirent* e = ::readdir(dir)) {
      const int fd = std::atoi(e->d_name);
      if (e->d_name[0] != '.' && fd != own && fd != keep && fd != null) fds.push_back(fd);
    }
    ::closedir(dir);
  } else {
    ::_exit(4);
  }
  for (const int fd : fds) {
    const int copy = reopen_for_reading(fd);
    const int with = copy >= 0 ? copy : null;
    if (::dup2(with, fd) < 0 && errno != EBADF) ::_exit(4);
    if (copy >= 0) ::close(copy);
  }
  ::close(null);
}

}  // namespace fabricsim
