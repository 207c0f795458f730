// Trace generators: write per-rank Chakra traces for microbenchmarks and
// training steps, in the same format real tools write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::traces {

/// One collective (Chakra comm_type value) of `bytes` per rank, repeated
/// `iterations` times in a dependency chain. Writes PREFIX.<rank>.et for
/// every rank; returns the files written.
std::vector<std::string> write_collective_microbenchmark(const std::string& prefix, int npus, int comm_type,
                                                         std::uint64_t bytes, int iterations = 1);

}  // namespace fabricsim::traces
