#include "tlm/util/simulation_copy.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace fabricsim {

namespace {
bool read_only_regular_file(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  struct stat st {};
  return flags >= 0 && (flags & O_ACCMODE) == O_RDONLY && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/// A private description of the file behind `fd`, at its offset; the child
/// exits where it cannot make one (at /dev/null instead, a trace would
/// seem to end there, and the copy would time a shorter workload).
int reopen_for_reading(int fd) {
  const off_t at = ::lseek(fd, 0, SEEK_CUR);
  const int copy = at < 0 ? -1 : ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDONLY | O_CLOEXEC);
  if (copy < 0 || ::lseek(copy, at, SEEK_SET) != at) ::_exit(4);
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
    const int copy = read_only_regular_file(fd) ? reopen_for_reading(fd) : -1;
    const int with = copy >= 0 ? copy : null;
    if (::dup2(with, fd) < 0 && errno != EBADF) ::_exit(4);
    if (copy >= 0) ::close(copy);
  }
  ::close(null);
}

unsigned cpus_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<unsigned>(online) : 1u;
}

}  // namespace fabricsim
