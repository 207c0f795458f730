// A switch reduction unit's parameters (ReductionUnit::Params), without
// SystemC: the platform description holds them (platforms/assembly/platform_spec.h).
#pragma once

#include <cstdint>

#include "tlm/address.h"
#include "tlm/kernel/parameters.h"
#include "tlm/kernel/units.h"

namespace fabricsim {

/// Every (op, type) pair a unit can reduce (reduction_unit.h: reduction_bit).
constexpr std::uint32_t kAllReductions = (1u << 12) - 1;

struct ReductionUnitParams {
  Address address = kNoAddress;
  std::uint32_t peer_id = 0;                           // how NPUs name this unit in read requests
  Bandwidth throughput = Bandwidth::GBps(1000);        // input bytes combined per second, all streams busy
  unsigned streams = 1;                                // contributions combined in one pass
  Tick latency = ns_to_ticks(100);                     // last contribution done -> result out
  unsigned slots = 256;                                // aggregation slots
  std::uint64_t buffer_bytes = 32ull << 20;            // accumulator memory, shared by the slots
  std::uint64_t multicast_buffer_bytes = 32ull << 20;  // room for frames being copied to several ports
  std::uint32_t supported = kAllReductions;            // (op, type) pairs, see reduction_bit
  // The fabric's packets, for the results of pull requests:
  std::uint64_t mtu_bytes = 4096;
  std::uint64_t header_bytes = 0;
  /// Every user-settable parameter, with unit, range and description.
  static const ParamTable<ReductionUnitParams>& table();
};

}  // namespace fabricsim
