// A PCIe switch's parameters (PcieSwitch::Params), without SystemC: the
// platform description holds them (platforms/assembly/platform_spec.h).
#pragma once

#include <cstdint>

#include "tlm/kernel/parameters.h"
#include "tlm/kernel/units.h"

namespace fabricsim {

/// Which DMA of a device goes to its GPU's memory directly; the others are
/// staged through host memory (NCCL_NET_GDR_LEVEL, NCCL_NET_GDR_READ).
enum class PcieGpuDirect : std::uint8_t { kOn, kWriteOnly, kOff };

struct PcieSwitchParams {
  unsigned generation = 5;                // PCIe 1.0 to 5.0 (the encoding and rate per lane follow)
  unsigned lanes = 16;                    // x1 ... x32, the devices' and the GPUs' ports
  std::uint64_t max_payload_bytes = 256;  // Max_Payload_Size the devices negotiated
  /// Per TLP: 4DW header with 64-bit addresses (16 B), framing token and
  /// sequence number (4 B), LCRC (4 B); ECRC would add 4 B.
  std::uint64_t tlp_overhead_bytes = 24;
  Tick latency = ns_to_ticks(115);  // through the switch, one way
  unsigned devices_per_switch = 1;  // device/GPU pairs sharing one switch and its uplink
  PcieGpuDirect gpudirect_rdma = PcieGpuDirect::kOn;
  unsigned uplink_lanes = 16;  // the port toward the CPU
  /// Devices bound in a row that are one physical device (a NIC shared by
  /// that many GPUs, each its own function of it): their pairs share the
  /// device's port, one pipe each way. Set by the platform, not a file.
  unsigned devices_per_port = 1;
  Tick host_latency = ns_to_ticks(300);  // root complex and host memory, one access
  /// The data rate of each direction of a port of `port_lanes` lanes (see
  /// the header's comment); of the devices' and GPUs' ports by default.
  Bandwidth data_bandwidth(unsigned port_lanes = 0) const;
  /// Whether reads (sends) and writes (receives) are staged through host memory.
  bool stages_reads() const { return gpudirect_rdma != PcieGpuDirect::kOn; }
  bool stages_writes() const { return gpudirect_rdma == PcieGpuDirect::kOff; }
  /// Whether PCIe has ports of `lanes` lanes: 1, 2, 4, 8, 16 or 32.
  static bool valid_lanes(unsigned lanes);
  /// Whether PCIe allows a Max_Payload_Size of `bytes`: 128 to 4096, a power of two.
  static bool valid_max_payload(std::uint64_t bytes);
  /// Every user-settable parameter, with unit, range and description.
  static const ParamTable<PcieSwitchParams>& table();
};

}  // namespace fabricsim
