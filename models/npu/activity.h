// Where an NPU's time went. Counts of running compute, communication and
// memory operations change at discrete times; between changes the elapsed
// time is booked to every category that applies.
#pragma once

#include "tlm/kernel/time.h"

namespace fabricsim {

struct ActivityTotals {
  Tick compute = 0;         // some compute running (GPU or CPU)
  Tick communication = 0;   // some collective or send/recv in flight
  Tick exposed_comm = 0;    // communication in flight and no compute running
  Tick memory = 0;          // some remote memory operation in flight
  Tick exposed_memory = 0;  // memory in flight, no compute and no communication
  Tick idle = 0;            // nothing at all, before the NPU finished
};

class ActivityTracker {
 public:
  enum Kind { kCompute, kComm, kMemory };
  void begin(Kind k, Tick now) {
    settle(now);
    ++count_[k];
  }
  void end(Kind k, Tick now) {
    settle(now);
    --count_[k];
  }
  void finish(Tick now) { settle(now); }
  const ActivityTotals& totals() const { return totals_; }

 private:
  void settle(Tick now) {
    const Tick dt = now - last_;
    last_ = now;
    if (dt == 0) return;
    const bool c = count_[kCompute] > 0, m = count_[kComm] > 0, r = count_[kMemory] > 0;
    if (c) totals_.compute += dt;
    if (m) totals_.communication += dt;
    if (m && !c) totals_.exposed_comm += dt;
    if (r) totals_.memory += dt;
    if (r && !c && !m) totals_.exposed_memory += dt;
    if (!c && !m && !r) totals_.idle += dt;
  }
  int count_[3] = {0, 0, 0};
  Tick last_ = 0;
  ActivityTotals totals_;
};

}  // namespace fabricsim
