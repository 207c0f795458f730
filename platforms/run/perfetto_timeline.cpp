#include "platforms/run/perfetto_timeline.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fabricsim {

namespace {

constexpr int kUnitsPid = 1000000;
constexpr int kLinksPid = 1000001;
constexpr std::size_t kBuckets = 1024;  // counter buckets per link or unit: the run in 1,024 steps at most
constexpr int kLanes = 9;               // lanes per plain track kind (more overlap shares the last)

// Track ids within an NPU's process.
int track_base(TimelineSink::Track t) {
  switch (t) {
    case TimelineSink::Track::kGpu:
      return 10;
    case TimelineSink::Track::kCpu:
      return 20;
    case TimelineSink::Track::kMemory:
      return 30;
    case TimelineSink::Track::kPointToPoint:
      return 40;
    case TimelineSink::Track::kCollective:
      break;
  }
  return 1000;
}
const char* track_name(TimelineSink::Track t) {
  switch (t) {
    case TimelineSink::Track::kGpu:
      return "GPU compute";
    case TimelineSink::Track::kCpu:
      return "CPU compute";
    case TimelineSink::Track::kMemory:
      return "memory";
    case TimelineSink::Track::kPointToPoint:
      return "send/recv";
    case TimelineSink::Track::kCollective:
      break;
  }
  return "collectives";
}
int collective_tid(int lane) {
  return 1000 + lane * 100;
}
int chunk_tid(int lane, std::uint32_t chunk) {
  return collective_tid(lane) + 1 + static_cast<int>(std::min<std::uint32_t>(chunk, 98));
}

/// `s` as the inside of a JSON string: nlohmann's escaping (bytes that are
/// not UTF-8 become U+FFFD). Events themselves are streamed, not built as one
/// document, so a timeline of millions of events needs no more memory than one.
std::string escape(const std::string& s) {
  const std::string quoted = nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

std::string us(Tick t) {  // trace-event times are microseconds
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(t) / 1e6);
  return buf;
}

Tick parse_time(const std::string& text, const std::string& what) {
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw InputError(what + ": \"" + text + "\" is not a time (examples: 250us, 3ms, 1500000)");
  }
  const std::string unit = text.substr(pos);
  double scale = 1e3;  // ns
  if (unit == "" || unit == "ns") {
    scale = 1e3;
  } else if (unit == "us") {
    scale = 1e6;
  } else if (unit == "ms") {
    scale = 1e9;
  } else if (unit == "s") {
    scale = 1e12;
  } else {
    throw InputError(what + ": unknown time unit \"" + unit + "\" (ns, us, ms, s)");
  }
  if (v < 0) throw InputError(what + ": a time cannot be negative");
  // NaN compares false with everything and fell through to llround (a
  // window that kept nothing); past 2^63 ps the conversion wraps.
  if (!std::isfinite(v) || v * scale >= 9.2e18) {
    throw InputError(what + ": \"" + text + "\" is not a finite time below 106 days (examples: 250us, 3ms, 1500000)");
  }
  return static_cast<Tick>(std::llround(v * scale));
}

}  // namespace

std::vector<int> Timeline::parse_npus(const std::string& text, int npus) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto dash = item.find('-');
    int lo = 0, hi = 0;
    try {
      std::size_t used = 0;
      lo = std::stoi(item.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? item.size() : dash)) throw std::invalid_argument(item);
      hi = lo;
      if (dash != std::string::npos) {
        hi = std::stoi(item.substr(dash + 1), &used);
        if (used != item.size() - dash - 1) throw std::invalid_argument(item);
      }
    } catch (const std::exception&) {
      throw InputError("--timeline-npus " + text + ": \"" + item + "\" is not an NPU or a range (examples: 3, 0-15)");
    }
    if (lo > hi) {
      throw InputError("--timeline-npus " + text + ": " + item + " runs backwards; give the lower NPU first (" +
                       std::to_string(hi) + "-" + std::to_string(lo) + ")");
    }
    if (lo < 0 || hi >= npus) {
      throw InputError("--timeline-npus " + text + ": " + item + " is outside the platform's NPUs 0-" +
                       std::to_string(npus - 1));
    }
    for (int r = lo; r <= hi; ++r) out.push_back(r);
  }
  if (out.empty()) throw InputError("--timeline-npus " + text + ": no NPUs given");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::pair<Tick, Tick> Timeline::parse_window(const std::string& text, const std::string& option) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw InputError(option + " " + text + ": give START:END (for example 1ms:3ms)");
  const std::string a = text.substr(0, colon), b = text.substr(colon + 1);
  const Tick from = a.empty() ? 0 : parse_time(a, option);
  const Tick to = b.empty() ? kNever : parse_time(b, option);
  if (to <= from) throw InputError(option + " " + text + ": the end must come after the start");
  return {from, to};
}

Timeline::Timeline(const Options& options, const Platform& platform)
    : options_(options), platform_(platform), file_(options_.path, "timeline"), out_(file_.stream()) {
  recorded_.assign(static_cast<std::size_t>(platform.npus()), options_.npus.empty());
  for (int r : options_.npus) recorded_.at(static_cast<std::size_t>(r)) = true;
  tracks_.resize(static_cast<std::size_t>(platform.npus()));
  links_.resize(platform.links().size());
  units_.resize(platform.units().size());
  out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
}

Timeline::~Timeline() = default;  // an unfinished timeline's temporary goes with file_

bool Timeline::records(int npu) const {
  return npu >= 0 && static_cast<std::size_t>(npu) < recorded_.size() && recorded_[static_cast<std::size_t>(npu)];
}

bool Timeline::clip(Tick& start, Tick& end) const {
  if (end < options_.from || start > options_.to) return false;
  start = std::max(start, options_.from);
  end = std::min(end, options_.to);
  return true;
}

void Timeline::write_complete(int pid, int tid, const std::string& name, Tick start, Tick end,
                              const std::string& args) {
  out_ << (first_ ? "" : ",\n") << "{\"ph\":\"X\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"name\":\""
       << escape(name) << "\",\"ts\":" << us(start) << ",\"dur\":" << us(end - start);
  if (!args.empty()) out_ << ",\"args\":{" << args << "}";
  out_ << "}";
  first_ = false;
  ++events_;
}

void Timeline::name_track(int npu, int tid, const std::string& name) {
  auto& names = tracks_[static_cast<std::size_t>(npu)].names;
  for (const auto& [t, n] : names) {
    if (t == tid) return;
  }
  names.emplace_back(tid, name);
}

std::string Timeline::args_json(const Args& a) const {
  std::string s;
  const auto add = [&s](const std::string& kv) { s += (s.empty() ? "" : ",") + kv; };
  if (a.node >= 0) add("\"node\":" + std::to_string(a.node));
  if (a.bytes) add("\"bytes\":" + std::to_string(a.bytes));
  if (a.peer >= 0) add("\"peer\":" + std::to_string(a.peer));
  if (a.algorithm) add(std::string("\"algorithm\":\"") + a.algorithm + "\"");
  if (a.group) add("\"group\":\"" + escape(*a.group) + "\"");
  if (a.chunks) add("\"chunks\":" + std::to_string(a.chunks));
  return s;
}

int Timeline::lane_for(int npu, Track track, Tick start, Tick end) {
  // Slices come in the order they end, so a lane's last end is its latest:
  // a slice fits the first lane that is free by its start.
  auto& lanes = tracks_[static_cast<std::size_t>(npu)].lane_end[static_cast<int>(track)];
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    if (lanes[i] <= start) {
      lanes[i] = end;
      return static_cast<int>(i);
    }
  }
  if (lanes.size() < static_cast<std::size_t>(kLanes)) {
    lanes.push_back(end);
    return static_cast<int>(lanes.size() - 1);
  }
  lanes.back() = std::max(lanes.back(), end);
  return kLanes - 1;
}

void Timeline::slice(int npu, Track track, const std::string& name, Tick start, Tick end, const Args& args) {
  if (!records(npu) || !clip(start, end)) return;
  const int lane = lane_for(npu, track, start, end);
  const int tid = track_base(track) + lane;
  name_track(npu, tid, std::string(track_name(track)) + (lane ? " (" + std::to_string(lane + 1) + ")" : ""));
  write_complete(npu, tid, name, start, end, args_json(args));
}

int Timeline::open_collective(int npu) {
  auto& used = tracks_[static_cast<std::size_t>(npu)].collective_lane_used;
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (!used[i]) {
      used[i] = true;
      return static_cast<int>(i);
    }
  }
  used.push_back(true);
  return static_cast<int>(used.size() - 1);
}

void Timeline::close_collective(int npu, int lane, const std::string& name, Tick start, Tick end, const Args& args) {
  tracks_[static_cast<std::size_t>(npu)].collective_lane_used.at(static_cast<std::size_t>(lane)) = false;
  if (!clip(start, end)) return;
  name_track(npu, collective_tid(lane), lane ? "collectives (" + std::to_string(lane + 1) + ")" : "collectives");
  write_complete(npu, collective_tid(lane), name, start, end, args_json(args));
}

void Timeline::chunk_phase(int npu, int lane, std::uint32_t chunk, const char* phase, Tick start, Tick end) {
  if (!clip(start, end)) return;
  const int tid = chunk_tid(lane, chunk);
  name_track(npu, tid,
             (lane ? "  collectives (" + std::to_string(lane + 1) + ") " : "  ") + std::string("chunk ") +
                 std::to_string(chunk));
  write_complete(npu, tid, phase, start, end, "\"chunk\":" + std::to_string(chunk));
}

void Timeline::unit_occupancy(int unit, Tick when, unsigned slots, std::uint64_t buffer_bytes) {
  if (when < options_.from || when > options_.to) return;
  grow_buckets(static_cast<std::size_t>(when / bucket_));
  UnitBuckets& u = units_.at(static_cast<std::size_t>(unit));
  u.used = true;
  const std::size_t b = static_cast<std::size_t>(when / bucket_);
  if (u.changed.size() <= b) {
    u.slots_max.resize(b + 1, 0);
    u.slots_last.resize(b + 1, 0);
    u.buffer_max.resize(b + 1, 0);
    u.buffer_last.resize(b + 1, 0);
    u.changed.resize(b + 1, false);
  }
  u.slots_max[b] = std::max<std::uint64_t>(u.slots_max[b], slots);
  u.buffer_max[b] = std::max(u.buffer_max[b], buffer_bytes);
  u.slots_last[b] = slots;
  u.buffer_last[b] = buffer_bytes;
  u.changed[b] = true;
}

void Timeline::grow_buckets(std::size_t index) {
  // Keep at most kBuckets per link: widen the buckets, merging pairs.
  while (index >= kBuckets) {
    for (auto& u : units_) {
      const std::size_t half = (u.changed.size() + 1) / 2;
      for (std::size_t i = 0; i < half; ++i) {
        const std::size_t a = 2 * i, b = 2 * i + 1;
        const bool hb = b < u.changed.size() && u.changed[b];
        u.slots_max[i] = std::max(u.slots_max[a], b < u.changed.size() ? u.slots_max[b] : 0);
        u.buffer_max[i] = std::max(u.buffer_max[a], b < u.changed.size() ? u.buffer_max[b] : 0);
        u.slots_last[i] = hb ? u.slots_last[b] : u.slots_last[a];
        u.buffer_last[i] = hb ? u.buffer_last[b] : u.buffer_last[a];
        u.changed[i] = u.changed[a] || hb;
      }
      u.slots_max.resize(half);
      u.slots_last.resize(half);
      u.buffer_max.resize(half);
      u.buffer_last.resize(half);
      u.changed.resize(half);
    }
    for (auto& l : links_) {
      const std::size_t half = (l.busy.size() + 1) / 2;
      for (std::size_t i = 0; i < half; ++i) {
        const std::size_t a = 2 * i, b = 2 * i + 1;
        const bool hb = b < l.busy.size();
        l.busy[i] = l.busy[a] + (hb ? l.busy[b] : 0.0);
        l.buffer[i] = std::max(l.buffer[a], hb ? l.buffer[b] : 0);
        l.queue[i] = std::max(l.queue[a], hb ? l.queue[b] : 0);
        l.marks[i] = l.marks[a] + (hb ? l.marks[b] : 0);
        l.drops[i] = l.drops[a] + (hb ? l.drops[b] : 0);
        l.paused[i] = l.paused[a] + (hb ? l.paused[b] : 0.0);
      }
      l.busy.resize(half);
      l.buffer.resize(half);
      l.queue.resize(half);
      l.marks.resize(half);
      l.drops.resize(half);
      l.paused.resize(half);
    }
    bucket_ *= 2;
    index /= 2;
  }
}

void Timeline::LinkBuckets::extend(std::size_t n) {
  if (busy.size() >= n) return;
  busy.resize(n, 0.0);
  buffer.resize(n, 0);
  queue.resize(n, 0);
  marks.resize(n, 0);
  drops.resize(n, 0);
  paused.resize(n, 0.0);
}

Timeline::LinkBuckets* Timeline::link_buckets(int link, Tick start, Tick end) {
  if (!clip(start, end)) return nullptr;
  grow_buckets(static_cast<std::size_t>(end / bucket_));
  LinkBuckets& l = links_.at(static_cast<std::size_t>(link));
  l.used = true;
  l.extend(static_cast<std::size_t>(end / bucket_) + 1);
  return &l;
}

/// Adds the part of [start, end] in each bucket of width `bucket` to `per_bucket`.
static void spread(std::vector<double>& per_bucket, Tick start, Tick end, Tick bucket) {
  for (std::size_t b = static_cast<std::size_t>(start / bucket); b <= static_cast<std::size_t>(end / bucket); ++b) {
    const Tick lo = std::max<Tick>(start, b * bucket), hi = std::min<Tick>(end, (b + 1) * bucket);
    if (hi > lo) per_bucket[b] += static_cast<double>(hi - lo);
  }
}

void Timeline::link_frame(int link, Tick start, Tick end, std::uint64_t buffer_bytes) {
  LinkBuckets* l = link_buckets(link, start, end);
  if (!l) return;
  const std::size_t first = static_cast<std::size_t>(start / bucket_);
  l->buffer[first] = std::max(l->buffer[first], buffer_bytes);
  spread(l->busy, start, end, bucket_);
}

void Timeline::link_queue(int link, Tick when, std::uint64_t queued_bytes, bool marked) {
  LinkBuckets* l = link_buckets(link, when, when);
  if (!l) return;
  l->congestion = true;
  const std::size_t b = static_cast<std::size_t>(when / bucket_);
  l->queue[b] = std::max(l->queue[b], queued_bytes);
  l->marks[b] += marked ? 1 : 0;
}

void Timeline::link_paused(int link, Tick start, Tick end) {
  LinkBuckets* l = link_buckets(link, start, end);
  if (!l) return;
  l->congestion = true;
  spread(l->paused, start, end, bucket_);
}

void Timeline::link_drop(int link, Tick when) {
  LinkBuckets* l = link_buckets(link, when, when);
  if (!l) return;
  l->congestion = true;
  ++l->drops[static_cast<std::size_t>(when / bucket_)];
}

void Timeline::write_counter(int pid, const std::string& name, Tick t, const std::string& args) {
  out_ << (first_ ? "" : ",\n") << "{\"ph\":\"C\",\"pid\":" << pid << ",\"name\":\"" << name << "\",\"ts\":" << us(t)
       << ",\"args\":{" << args << "}}";
  first_ = false;
  ++events_;
}

void Timeline::finish() {
  // Reduction units: the most slots and buffer bytes in use in each bucket
  // (a change's own bucket shows its peak; quiet buckets keep the last value).
  const auto units = platform_.units();
  for (std::size_t i = 0; i < units_.size(); ++i) {
    const UnitBuckets& u = units_[i];
    if (!u.used) continue;
    const std::string name = escape(units[i]->name());
    std::uint64_t slots = 0, buffer = 0, shown_slots = ~0ull, shown_buffer = ~0ull;
    for (std::size_t b = 0; b <= u.changed.size(); ++b) {
      const Tick t = std::max<Tick>(b * bucket_, options_.from);
      if (t > options_.to) break;
      std::uint64_t s_peak = slots, b_peak = buffer;
      if (b < u.changed.size() && u.changed[b]) {
        s_peak = std::max(slots, u.slots_max[b]);
        b_peak = std::max(buffer, u.buffer_max[b]);
        slots = u.slots_last[b];
        buffer = u.buffer_last[b];
      }
      if (s_peak != shown_slots || b_peak != shown_buffer) {
        write_counter(kUnitsPid, name + " slots", t,
                      "\"slots\":" + std::to_string(s_peak) + ",\"buffer_bytes\":" + std::to_string(b_peak));
        shown_slots = s_peak;
        shown_buffer = b_peak;
      }
    }
  }
  // Link counters: utilization and buffer occupancy per bucket, written when
  // they change.
  const auto links = platform_.links();
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const LinkBuckets& l = links_[i];
    if (!l.used) continue;
    const std::string name = escape(links[i]->link->name());
    double last_util = -1;
    std::uint64_t last_buffer = ~0ull;
    std::string last_congestion;
    for (std::size_t b = 0; b <= l.busy.size(); ++b) {
      const double util = b < l.busy.size() ? l.busy[b] / static_cast<double>(bucket_) : 0.0;
      const std::uint64_t buffer = b < l.buffer.size() ? l.buffer[b] : 0;
      const Tick t = std::max<Tick>(b * bucket_, options_.from);
      if (t > options_.to) break;
      if (util != last_util) {
        std::ostringstream busy;  // the stream's default format, as the other counters' numbers
        busy << "\"busy\":" << util;
        write_counter(kLinksPid, name + " utilization", t, busy.str());
        last_util = util;
      }
      if (buffer != last_buffer) {
        write_counter(kLinksPid, name + " buffer", t, "\"bytes\":" + std::to_string(buffer));
        last_buffer = buffer;
      }
      if (!l.congestion) continue;
      // Ethernet: the deepest queue a frame found, frames marked and dropped,
      // and the share of the bucket the sender was paused.
      const bool in = b < l.busy.size();
      std::ostringstream args;
      args << "\"queue_bytes\":" << (in ? l.queue[b] : 0) << ",\"ecn_marks\":" << (in ? l.marks[b] : 0)
           << ",\"drops\":" << (in ? l.drops[b] : 0)
           << ",\"paused\":" << (in ? l.paused[b] / static_cast<double>(bucket_) : 0.0);
      if (args.str() != last_congestion) {
        write_counter(kLinksPid, name + " congestion", t, args.str());
        last_congestion = args.str();
      }
    }
  }
  // Names and order of processes and tracks.
  const auto meta = [this](int pid, int tid, const char* what, const std::string& key, const std::string& value) {
    out_ << (first_ ? "" : ",\n") << "{\"ph\":\"M\",\"pid\":" << pid;
    if (tid >= 0) out_ << ",\"tid\":" << tid;
    out_ << ",\"name\":\"" << what << "\",\"args\":{\"" << key << "\":" << value << "}}";
    first_ = false;
  };
  for (int r = 0; r < static_cast<int>(recorded_.size()); ++r) {
    if (!recorded_[static_cast<std::size_t>(r)]) continue;
    meta(r, -1, "process_name", "name", "\"NPU " + std::to_string(r) + "\"");
    meta(r, -1, "process_sort_index", "sort_index", std::to_string(r));
    for (const auto& [tid, name] : tracks_[static_cast<std::size_t>(r)].names) {
      meta(r, tid, "thread_name", "name", "\"" + escape(name) + "\"");
      meta(r, tid, "thread_sort_index", "sort_index", std::to_string(tid));
    }
  }
  if (!platform_.units().empty()) {
    meta(kUnitsPid, -1, "process_name", "name", "\"switch reduction units\"");
    meta(kUnitsPid, -1, "process_sort_index", "sort_index", std::to_string(kUnitsPid));
  }
  if (options_.links) {
    meta(kLinksPid, -1, "process_name", "name", "\"links (busy share per " + us(bucket_) + " us)\"");
    meta(kLinksPid, -1, "process_sort_index", "sort_index", std::to_string(kLinksPid));
  }
  out_ << "\n]}\n";
  file_.commit();
  finished_ = true;
}

}  // namespace fabricsim
