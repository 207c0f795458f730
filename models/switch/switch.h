// A switch: any number of ports, a routing table filled by the platform
// builder, a per-hop latency, and cut-through forwarding (a frame's head
// leaves before its tail has arrived). Each port's input buffer is the
// receive buffer of the link that feeds it, with credit flow control; output
// ports serve frames first come, first served. Nothing is dropped, and frames
// of one flow follow one path in order.
#pragma once

#include "tlm/frame_router.h"
#include "tlm/parameters.h"

namespace fabricsim {

class Switch : public FrameRouter {
 public:
  struct Params {
    unsigned ports = 8;
    Tick hop_latency = 0;  // head arrival to head departure
    static const ParamTable<Params>& table() {
      static const auto table =
          ParamTable<Params>("switch", "a switch: cut-through, credit flow control, first come first served per output")
              .add("latency", Quantity::kDuration, &Params::hop_latency, "head arrival to head departure")
              .legacy("latency_ns", 1e3, "ns");
      return table;
    }
  };

  Switch(const sc_core::sc_module_name& name, const Params& params)
      : FrameRouter(name, params.ports, params.hop_latency), params_(params) {}

  const Params& params() const { return params_; }

 private:
  bool is_local(const Frame&) const override { return false; }
  Tick receive_local(Frame*) override { return kNever; }
  void frame_sent(unsigned, Frame*, Tick) override {}
  void on_event(std::uint32_t, void*) override {}

  Params params_;
};

}  // namespace fabricsim
