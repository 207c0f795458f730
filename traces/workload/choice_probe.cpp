#include "traces/workload/choice_probe.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <iostream>
#include <string>
#include <system_error>

#include "tlm/calendar.h"
#include "tlm/simulation_copy.h"

namespace fabricsim {

bool ChoiceProbe::fork_child(std::uint64_t key, std::size_t members, bool* has_time, Tick* time) {
  *has_time = false;
  std::FILE* out = std::tmpfile();
  if (!out) throw std::system_error(errno, std::generic_category(), "a temporary file");
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);  // the child must not write the parent's buffered output again
  std::signal(SIGCHLD, SIG_DFL);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    std::fclose(out);
    throw std::system_error(error, std::generic_category(), "fork");
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a parent killed from outside takes its probes with it
    if (::getppid() != parent) ::_exit(3);
    detach_from_parent_files(::fileno(out));
    Calendar::instance().set_progress_hook(nullptr);
    child_ = Child{out, key, members, now_ticks()};
    return true;
  }
  ++children_run_;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      const int error = errno;
      ::kill(pid, SIGKILL);  // not left running on its own
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      std::fclose(out);
      throw std::system_error(error, std::generic_category(), "waitpid");
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

ChoiceProbe::Shape ChoiceProbe::Shape::of(CollectiveType type, std::uint64_t bytes, int root, bool world,
                                          const Group& group, const CollectiveConfig& config,
                                          const PlatformHints& hints) {
  Shape s;
  s.type = static_cast<int>(type);
  s.bytes = bytes;
  s.root = root;
  s.world = world;
  if (const int d = hints.in_switch_domain(group.ranks); d >= 0) {
    s.in_switch = static_cast<std::size_t>(d) < hints.in_switch_pull.size() && hints.in_switch_pull[d] ? 1 : 0;
  }
  s.offsets.reserve(group.ranks.size());
  for (const int r : group.ranks) s.offsets.push_back(r - group.ranks.front());
  s.nodes = node_offsets(config, group.ranks);
  return s;
}

AlgorithmKind ChoiceProbe::choose(std::uint64_t key, const Group& group, const std::function<Shape()>& shape_of,
                                  const std::function<std::vector<AlgorithmKind>()>& weigh, AlgorithmKind estimated) {
  const std::size_t members = group.ranks.size();
  if (const auto it = open_.find(key); it != open_.end()) {
    const AlgorithmKind a = it->second.algorithm;
    if (++it->second.started >= members) open_.erase(it);
    return a;
  }
  AlgorithmKind pick = estimated;
  const Shape shape = shape_of();
  if (const auto known = by_shape_.find(shape); known != by_shape_.end()) {
    pick = known->second;
  } else if (std::vector<AlgorithmKind> candidates; !in_child() && (candidates = weigh()).size() >= 2) {
    Decision d{group.name, static_cast<CollectiveType>(shape.type), shape.bytes, estimated, {}, {}};
    bool found = false;
    Tick best = 0;
    for (const AlgorithmKind a : candidates) {
      bool has_time = false;
      Tick t = 0;
      try {
        if (fork_child(key, members, &has_time, &t)) {
          pick = a;  // the child: goes on with this candidate
          break;
        }
      } catch (const std::system_error& e) {
        // No copy of the simulation to run it in: the candidates simulated
        // so far decide, else the estimate; the report says why.
        d.failure = std::string(to_string(a)) + ": " + e.what();
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
