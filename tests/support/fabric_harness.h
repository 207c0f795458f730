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

/// npu0 -100-> sw0 -50-> sw1 -200-> sw2 -100-> npu1 (GB/s; latencies 100,
/// 200, 300, 400 ns), switch hops 50 ns, 64-byte headers on 4 KiB packets:
/// one path whose closed form the packet and flow models must both meet.
inline constexpr const char* kFourHops = R"(
npus: 2
nic: { mtu_bytes: 4096, header_bytes: 64 }
fabrics:
  - topology: netlist
    switch: { latency_ns: 50 }
    switches: [ {name: sw0}, {name: sw1}, {name: sw2} ]
    links:
      - { from: npu0, to: sw0, bandwidth_GBps: 100, latency_ns: 100 }
      - { from: sw0, to: sw1, bandwidth_GBps: 50, latency_ns: 200 }
      - { from: sw1, to: sw2, bandwidth_GBps: 200, latency_ns: 300 }
      - { from: sw2, to: npu1, bandwidth_GBps: 100, latency_ns: 400 }
)";

/// Two switches joined by one 100 GB/s link, NPUs 0 and 1 on the left, 2
/// and 3 on the right (100 GB/s, 500 ns everywhere, no headers): flows from
/// the left to the right share the middle link.
inline constexpr const char* kDumbbell = R"(
npus: 4
nic: { mtu_bytes: 4096, header_bytes: 0 }
fabrics:
  - topology: netlist
    switches: [ {name: left}, {name: right} ]
    links:
      - { from: npu0, to: left, bandwidth_GBps: 100, latency_ns: 500 }
      - { from: npu1, to: left, bandwidth_GBps: 100, latency_ns: 500 }
      - { from: left, to: right, bandwidth_GBps: 100, latency_ns: 500 }
      - { from: right, to: npu2, bandwidth_GBps: 100, latency_ns: 500 }
      - { from: right, to: npu3, bandwidth_GBps: 100, latency_ns: 500 }
)";

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
