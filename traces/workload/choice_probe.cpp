#include "traces/workload/choice_probe.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

#include "tlm/calendar.h"

namespace fabricsim {

namespace {
/// Every descriptor but `keep` now writes to and reads from /dev/null, so
/// that nothing the child does reaches a file the parent writes.
void silence_all_but(int keep) {
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
    ::_exit(4);  // without the list, a descriptor could stay on a user's file
  }
  for (const int fd : fds) {
    if (::dup2(null, fd) < 0 && errno != EBADF) ::_exit(4);
  }
  ::close(null);
}
}  // namespace

bool ChoiceProbe::fork_child(std::uint64_t key, std::size_t members, bool* has_time, Tick* time) {
  *has_time = false;
  std::FILE* out = std::tmpfile();
  if (!out) throw std::runtime_error(std::string("probing the default choice: a temporary file: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);  // the child must not write the parent's buffered output again
  std::signal(SIGCHLD, SIG_DFL);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::fclose(out);
    throw std::runtime_error(std::string("probing the default choice: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a parent killed from outside takes its probes with it
    if (::getppid() != parent) ::_exit(3);
    silence_all_but(::fileno(out));
    Calendar::instance().set_progress_hook(nullptr);
    child_ = Child{out, key, members, now_ticks()};
    return true;
  }
  ++children_run_;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::fclose(out);
      throw std::runtime_error(std::string("probing the default choice: waitpid: ") + std::strerror(errno));
    }
  }
  unsigned long long ticks = 0;
  std::rewind(out);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && std::fscanf(out, "%llu", &ticks) == 1) {
    *has_time = true;
    *time = static_cast<Tick>(ticks);
  }
  std::fclose(out);
  return false;
}

AlgorithmKind ChoiceProbe::choose(std::uint64_t key, const Group& group, CollectiveType type, std::uint64_t bytes,
                                  const std::function<std::vector<AlgorithmKind>()>& weigh, AlgorithmKind estimated) {
  const std::size_t members = group.ranks.size();
  if (const auto it = open_.find(key); it != open_.end()) {
    const AlgorithmKind a = it->second.algorithm;
    if (++it->second.started >= members) open_.erase(it);
    return a;
  }
  AlgorithmKind pick = estimated;
  std::vector<int> offsets;
  offsets.reserve(members);
  for (const int r : group.ranks) offsets.push_back(r - group.ranks.front());
  const Shape shape{static_cast<int>(type), bytes, std::move(offsets)};
  if (const auto known = by_shape_.find(shape); known != by_shape_.end()) {
    pick = known->second;
  } else if (std::vector<AlgorithmKind> candidates; !in_child() && (candidates = weigh()).size() >= 2) {
    Decision d{group.name, type, bytes, estimated, {}};
    bool found = false;
    Tick best = 0;
    for (const AlgorithmKind a : candidates) {
      bool has_time = false;
      Tick t = 0;
      if (fork_child(key, members, &has_time, &t)) {
        pick = a;  // the child: goes on with this candidate
        break;
      }
      d.simulated.emplace_back(a, has_time ? t : kNever);
      if (has_time && (!found || t < best)) {
        found = true;
        best = t;
        pick = a;
      }
    }
    if (!in_child()) {
      if (!found) pick = estimated;  // no candidate ended: the estimate's choice shows why
      d.chosen = pick;
      decisions_.push_back(std::move(d));
      by_shape_.emplace(shape, pick);
    }
  }
  if (members > 1) open_[key] = Decided{pick, 1};
  return pick;
}

void ChoiceProbe::member_done(std::uint64_t key) {
  if (!in_child() || key != child_.key || --child_.remaining > 0) return;
  const unsigned long long elapsed = now_ticks() - child_.start;
  const bool written = std::fprintf(child_.out, "%llu\n", elapsed) > 0 && std::fflush(child_.out) == 0;
  ::_exit(written ? 0 : 3);  // no destructors, no flushing of the parent's buffers
}

void ChoiceProbe::end_child_if_any() const {
  if (in_child()) ::_exit(3);
}

}  // namespace fabricsim
