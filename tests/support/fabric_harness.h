// Runs point-to-point transfers on a platform built from YAML text, without
// traces: each transfer posts a send on its source and a receive on its
// destination at its start time, and the harness records when the receive
// completed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "platforms/assembly/loader.h"
#include "platforms/assembly/platform.h"

namespace fabricsim::testutil {

struct Flow {
  int src = 0;
  int dst = 0;
  std::uint64_t bytes = 0;
  Tick start = 0;
};

struct TransferRun {
  std::unique_ptr<Platform> platform;
  std::vector<Tick> done;  // per transfer: when its receive completed (kNever if never)
  std::string stuck;       // links with frames still waiting, if any
};

/// Builds the platform in `yaml` and runs `transfers` to the end; with
/// `sample`, stops every `sample_every` to call it (to watch rates and queues).
TransferRun run_transfers(const std::string& yaml, const std::vector<Flow>& transfers, Tick sample_every = 0,
                          const std::function<void(const Platform&)>& sample = {});

/// A platform file from YAML text, in a scratch folder.
/// Writes `yaml` to a file called `name` in a scratch folder; its path.
std::string platform_file(const std::string& yaml, const std::string& name = "platform.yaml");

/// Collectives with NCCL's base latencies (tuning.cc, ring): 8.4, 6.6 and
/// 14 us for Simple, LL and LL128.
inline CollectiveConfig nccl_launch_latencies() {
  CollectiveConfig c;
  c.launch_simple = 8'400'000;
  c.launch_ll = 6'600'000;
  c.launch_ll128 = 14'000'000;
  return c;
}

}  // namespace fabricsim::testutil
