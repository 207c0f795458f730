#include "tlm/util/interrupt_cleanup.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <initializer_list>

namespace fabricsim::interrupt_cleanup {

namespace {

constexpr int kPathSlots = 128;           // outputs open at once (a run has a few; gen one per rank at a time)
constexpr std::size_t kPathBytes = 4096;  // PATH_MAX

struct PathSlot {
  std::atomic<pid_t> owner{0};  // 0: free; else the process whose temporary it is
  char path[kPathBytes];
};

PathSlot g_paths[kPathSlots];
static_assert(std::atomic<pid_t>::is_always_lock_free, "the handler reads the slots' owners");
std::atomic<bool> g_installed{false};

void on_signal(int sig) {
  const pid_t me = ::getpid();
  for (auto& s : g_paths) {
    if (s.owner.load() == me) ::unlink(s.path);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
}

}  // namespace

void install() {
  if (g_installed.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, sig);  // one cleanup at a time
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // as nohup or a background job asked: leave it ignored
    ::sigaction(sig, &sa, nullptr);
  }
}

int add_temporary(const char* path) {
  if (std::strlen(path) >= kPathBytes) return -1;
  const pid_t me = ::getpid();
  for (int i = 0; i < kPathSlots; ++i) {
    pid_t free_owner = g_paths[i].owner.load();
    // A slot of another process (copied at a fork) is free here; one being
    // claimed (-1) is not.
    if (free_owner == me || free_owner == -1) continue;
    // Write the path while the slot is marked as no one's, then claim it.
    if (!g_paths[i].owner.compare_exchange_strong(free_owner, -1)) continue;
    std::strcpy(g_paths[i].path, path);
    g_paths[i].owner.store(me);
    return i;
  }
  return -1;
}

void release_temporary(int slot) {
  if (slot >= 0 && slot < kPathSlots) g_paths[slot].owner.store(0);
}

}  // namespace fabricsim::interrupt_cleanup
