// What an interrupted command leaves behind: nothing of its own. On SIGINT,
// SIGTERM or SIGHUP the temporaries of outputs not yet in place (OutputFile)
// are removed, then the process ends by the same signal, so a shell sees
// 128 + N. (The children it forked, collbench's rows and the default
// choice's probes, die with it: they ask for PR_SET_PDEATHSIG.) Only
// async-signal-safe calls run in the handler: the paths are kept in fixed
// slots, each tagged with the process that made it, so a forked child never
// removes its parent's files.
#pragma once

namespace fabricsim::interrupt_cleanup {

/// Installs the handler (once; later calls do nothing). `fabricsim` calls it
/// first thing; `sweep` replaces it while it runs its own.
void install();

/// A temporary to remove if a signal ends the process; the slot to release
/// once it is renamed or removed, or -1 when every slot is taken (it is then
/// not cleaned up; the others still are).
int add_temporary(const char* path);
void release_temporary(int slot);

}  // namespace fabricsim::interrupt_cleanup
