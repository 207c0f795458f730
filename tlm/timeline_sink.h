// What components tell a timeline recorder (platforms/run/perfetto_timeline.h writes it as
// a Chrome/Perfetto trace). Components hold a pointer that is null unless the
// user asked for a timeline, so recording costs a branch when it is off.
// Times are absolute picoseconds; the recorder clips them to its window.
#pragma once

#include <cstdint>
#include <string>

#include "tlm/kernel/time.h"

namespace fabricsim {

class TimelineSink {
 public:
  /// An NPU's tracks. Overlapping slices of one kind get lanes of their own.
  enum class Track : std::uint8_t { kGpu, kCpu, kMemory, kPointToPoint, kCollective };

  /// What a slice says about itself (unset fields are left out).
  struct Args {
    std::int64_t node = -1;  // Chakra trace node id
    std::uint64_t bytes = 0;
    std::int64_t peer = -1;  // the other NPU
    const char* algorithm = nullptr;
    const std::string* group = nullptr;
    std::uint32_t chunks = 0;
  };

  /// Whether NPU `npu` is in the recorded subset.
  virtual bool records(int npu) const = 0;
  /// An interval on one of an NPU's tracks.
  virtual void slice(int npu, Track track, const std::string& name, Tick start, Tick end, const Args& args) = 0;
  /// A collective starts on an NPU: the lane its slice and its chunks' phases
  /// will use (collectives may overlap).
  virtual int open_collective(int npu) = 0;
  virtual void close_collective(int npu, int lane, const std::string& name, Tick start, Tick end, const Args& args) = 0;
  /// One algorithm phase of one chunk of the collective on `lane`.
  virtual void chunk_phase(int npu, int lane, std::uint32_t chunk, const char* phase, Tick start, Tick end) = 0;
  /// A switch reduction unit's occupancy changed.
  virtual void unit_occupancy(int unit, Tick when, unsigned slots, std::uint64_t buffer_bytes) = 0;
  /// A frame occupied link `link` from `start` to `end`, with `buffer_bytes`
  /// of the receiver's buffer in use once it is in.
  virtual void link_frame(int link, Tick start, Tick end, std::uint64_t buffer_bytes) = 0;
  /// Ethernet links' congestion: a frame joined the sender's queue at `when`
  /// with `queued_bytes` ahead of it, ECN-marked or not; PFC paused the
  /// sender from `start` to `end`; the receiver dropped a frame at `when`.
  virtual void link_queue(int link, Tick when, std::uint64_t queued_bytes, bool marked) = 0;
  virtual void link_paused(int link, Tick start, Tick end) = 0;
  virtual void link_drop(int link, Tick when) = 0;

 protected:
  ~TimelineSink() = default;
};

}  // namespace fabricsim
