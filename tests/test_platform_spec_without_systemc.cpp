// The platform description, and every component's parameters in it, can be
// read without SystemC: a tool that loads, checks or writes platforms
// includes these headers and no simulation kernel.
#include "platforms/assembly/platform_spec.h"

#ifdef SYSTEMC_INCLUDED
#error "platforms/assembly/platform_spec.h includes SystemC"
#endif
#ifdef SC_MODULE_H
#error "platforms/assembly/platform_spec.h includes SystemC"
#endif

#include <gtest/gtest.h>

using namespace fabricsim;

TEST(PlatformSpec, HoldsEveryComponentsParametersWithTheirDefaults) {
  // Compiled with no SystemC header above: the defaults are the components' own.
  PlatformSpec spec;
  EXPECT_EQ(spec.npu.peak_flops, NpuParams{}.peak_flops);
  EXPECT_EQ(LinkParams{}.latency, ns_to_ticks(500));
  EXPECT_EQ(NicParams{}.frame_bytes(), 256u << 10);
  EXPECT_EQ(MemoryParams{}.channels, 16u);
  EXPECT_EQ(PcieSwitchParams{}.gpudirect_rdma, PcieGpuDirect::kOn);
  EXPECT_EQ(CollectiveConfig{}.chunks, 4u);
}
