// The timeline: a Chrome trace-event file (JSON) that ui.perfetto.dev and
// chrome://tracing open. One process per recorded NPU, with tracks for GPU
// and CPU compute, memory operations, send/recv, and each collective with
// its chunks' algorithm phases; one counter track per switch reduction unit
// (slots and buffer in use); with links asked for, one utilization and one
// buffer-occupancy counter per link. Events carry the trace node's id and
// name, bytes and peers. docs/timeline.md says what to expect and how large.
//
// Events are written as they come, to FILE.tmp, which replaces FILE only
// when finish() has written the whole file: an interrupted run leaves no
// truncated timeline behind.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "platforms/assembly/platform.h"
#include "tlm/timeline_sink.h"
#include "tlm/util/output_file.h"

namespace fabricsim {

class Timeline final : public TimelineSink {
 public:
  struct Options {
    std::string path;
    std::vector<int> npus;  // recorded NPUs; empty: all
    Tick from = 0;          // window: only what overlaps [from, to]
    Tick to = kNever;
    bool links = false;  // link utilization and buffer counters
  };

  /// Opens FILE.tmp; throws InputError if it cannot.
  Timeline(const Options& options, const Platform& platform);
  ~Timeline();
  /// Writes the counters and track names, closes the file and puts it in place.
  void finish();
  std::uint64_t events() const { return events_; }
  bool all_npus() const { return options_.npus.empty(); }

  // TimelineSink
  bool records(int npu) const override;
  void slice(int npu, Track track, const std::string& name, Tick start, Tick end, const Args& args) override;
  int open_collective(int npu) override;
  void close_collective(int npu, int lane, const std::string& name, Tick start, Tick end, const Args& args) override;
  void chunk_phase(int npu, int lane, std::uint32_t chunk, const char* phase, Tick start, Tick end) override;
  void unit_occupancy(int unit, Tick when, unsigned slots, std::uint64_t buffer_bytes) override;
  void link_frame(int link, Tick start, Tick end, std::uint64_t buffer_bytes) override;
  void link_queue(int link, Tick when, std::uint64_t queued_bytes, bool marked) override;
  void link_paused(int link, Tick start, Tick end) override;
  void link_drop(int link, Tick when) override;

  /// Parses "0-15", "0,3,8-11" (NPU lists) and "100us:2ms" (windows; units
  /// ns, us, ms, s; no unit: ns; either end may be left out). Throw
  /// InputError naming the option.
  static std::vector<int> parse_npus(const std::string& text, int npus);
  static std::pair<Tick, Tick> parse_window(const std::string& text, const std::string& option = "--timeline-window");

 private:
  struct NpuTracks {
    std::vector<Tick> lane_end[4];                   // per plain track kind: when each lane is free
    std::vector<bool> collective_lane_used;          // lanes of collectives in flight
    std::vector<std::pair<int, std::string>> names;  // tid -> track name, to write at the end
  };
  struct LinkBuckets {
    std::vector<double> busy;           // ps busy per bucket
    std::vector<std::uint64_t> buffer;  // most buffer bytes in use per bucket
    // Ethernet links' congestion, per bucket:
    std::vector<std::uint64_t> queue;  // most bytes a frame found queued at the sender
    std::vector<std::uint64_t> marks;  // frames ECN-marked
    std::vector<std::uint64_t> drops;  // frames dropped
    std::vector<double> paused;        // ps the sender was paused by PFC
    bool used = false;
    bool congestion = false;  // any of the four above recorded
    /// Makes every series at least `n` buckets long.
    void extend(std::size_t n);
  };
  /// The link's buckets, grown to hold [start, end], or null if outside the window.
  LinkBuckets* link_buckets(int link, Tick start, Tick end);
  /// A unit's occupancy, a step function: per bucket its highest value and
  /// the value it ended with (carried over buckets without changes).
  struct UnitBuckets {
    std::vector<std::uint64_t> slots_max, slots_last, buffer_max, buffer_last;
    std::vector<bool> changed;
    bool used = false;
  };
  bool clip(Tick& start, Tick& end) const;
  void write_complete(int pid, int tid, const std::string& name, Tick start, Tick end, const std::string& args);
  void name_track(int npu, int tid, const std::string& name);
  int lane_for(int npu, Track track, Tick start, Tick end);
  void grow_buckets(std::size_t index);
  void write_counter(int pid, const std::string& name, Tick t, const std::string& args);
  std::string args_json(const Args& a) const;

  Options options_;
  const Platform& platform_;
  std::vector<bool> recorded_;
  std::vector<NpuTracks> tracks_;
  std::vector<LinkBuckets> links_;
  std::vector<UnitBuckets> units_;
  Tick bucket_ = 100000;  // link bucket width, doubled as the run grows (at most kBuckets)
  OutputFile file_;
  std::ostream& out_;
  bool first_ = true;
  bool finished_ = false;
  std::uint64_t events_ = 0;
};

}  // namespace fabricsim
