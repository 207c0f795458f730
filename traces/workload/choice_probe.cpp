#include "traces/workload/choice_probe.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <iostream>
#include <string>
#include <system_error>

#include "tlm/kernel/calendar.h"
#include "tlm/util/simulation_copy.h"

namespace fabricsim {

bool ChoiceProbe::start_child(std::uint64_t key, std::size_t members, Started* started) {
  started->out = std::tmpfile();
  if (!started->out) throw std::system_error(errno, std::generic_category(), "a temporary file");
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);  // the child must not write the parent's buffered output again
  std::signal(SIGCHLD, SIG_DFL);
  const pid_t parent = ::getpid();
  started->pid = ::fork();
  if (started->pid < 0) {
    const int error = errno;
    std::fclose(started->out);
    throw std::system_error(error, std::generic_category(), "fork");
  }
  if (started->pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a parent killed from outside takes its probes with it
    if (::getppid() != parent) ::_exit(3);
    detach_from_parent_files(::fileno(started->out));
    Calendar::instance().set_progress_hook(nullptr);
    child_ = Child{started->out, key, members, now_ticks()};
    return true;
  }
  ++children_run_;
  return false;
}

void ChoiceProbe::finish_child(const Started& started, bool* has_time, Tick* time) {
  *has_time = false;
  int status = 0;
  while (::waitpid(started.pid, &status, 0) < 0) {
    if (errno != EINTR) {
      const int error = errno;
      ::kill(started.pid, SIGKILL);  // not left running on its own
      while (::waitpid(started.pid, &status, 0) < 0 && errno == EINTR) {
      }
      std::fclose(started.out);
      throw std::system_error(error, std::generic_category(), "waitpid");
    }
  }
  unsigned long long ticks = 0;
  std::rewind(started.out);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && std::fscanf(started.out, "%llu", &ticks) == 1) {
    *has_time = true;
    *time = static_cast<Tick>(ticks);
  }
  std::fclose(started.out);
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
    // As many copies side by side as this process has CPUs: each is a whole
    // simulation with nothing to share with the others while it runs.
    const std::size_t width = side_by_side_;  // at least 1
    std::vector<std::pair<AlgorithmKind, Started>> running;
    running.reserve(width);  // no allocation between a fork and the record of its child
    for (std::size_t first = 0; first < candidates.size() && d.failure.empty(); first += width) {
      running.clear();
      for (std::size_t i = first; i < std::min(first + width, candidates.size()); ++i) {
        Started started;
        try {
          if (start_child(key, members, &started)) {
            pick = candidates[i];  // the child: goes on with this candidate
            break;
          }
        } catch (const std::system_error& e) {
          // No copy of the simulation to run it in: the candidates simulated
          // so far decide, else the estimate; the report says why.
          d.failure = std::string(to_string(candidates[i])) + ": " + e.what();
          break;
        }
        running.emplace_back(candidates[i], started);
      }
      if (in_child()) break;
      for (const auto& [a, started] : running) {  // every one started is reaped, in candidate order
        bool has_time = false;
        Tick t = 0;
        try {
          finish_child(started, &has_time, &t);
        } catch (const std::system_error& e) {
          if (d.failure.empty()) d.failure = std::string(to_string(a)) + ": " + e.what();
        }
        d.simulated.emplace_back(a, has_time ? t : kNever);
        if (has_time && (!found || t < best)) {
          found = true;
          best = t;
          pick = a;
        }
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
