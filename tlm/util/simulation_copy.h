// A forked copy of a running simulation (the default choice's probes, in a
// trace replay or a collbench row) shares the parent's open file
// descriptions: its reads would move the parent's offsets and its writes
// would land in the parent's files. One call at the start of the child
// cuts it loose.
#pragma once

namespace fabricsim {

/// In a child just forked: every descriptor but `keep` stops reaching what
/// the parent uses. A regular file open for reading only (a trace the
/// workload reads on) is opened again, privately, at the same offset, so the
/// copy can read on; every other descriptor (output files, waveforms,
/// terminals, pipes) points at /dev/null. Where it cannot, the child exits
/// with status 4 (a descriptor left on a user's file would be worse).
void detach_from_parent_files(int keep);

/// The CPUs this process may run on (a Slurm or taskset allocation, not the
/// whole machine; at least 1): how many copies can run side by side.
unsigned cpus_available();

}  // namespace fabricsim
