#include "tlm/kernel/calendar.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "tlm/fabric_protocol.h"
#include "tlm/util/errors.h"

namespace fabricsim {

void require_picosecond_resolution() {
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS)) {
    throw std::logic_error("fabricsim needs the SystemC time resolution at 1 ps, found " +
                           sc_core::sc_get_time_resolution().to_string());
  }
}

namespace detail {
bool g_calendar_now_valid = false;
Tick g_calendar_now = 0;
}  // namespace detail

namespace {
Calendar* g_calendar = nullptr;

/// Entries a bucket's loop looks ahead. With a thousand NPUs every event's
/// client and payload are cold in the cache; an event takes about as long as
/// a miss, so asking for the objects of the event a few places ahead lets the
/// misses overlap with the work instead of following one another.
constexpr std::size_t kPrefetchAhead = 4;

/// Starts loading what the entry's event will touch first: its owner and,
/// when the argument is a pooled payload (a message or
/// frame: the common case), the fields that follow the generic payload. An
/// argument that is not a pointer (a port number) makes a prefetch that is
/// dropped: prefetches never fault.
template <typename Entry>
inline void prefetch(const Entry& e) {
  __builtin_prefetch(e.owner);
  // As an integer: the argument may be null or a number.
  const std::uintptr_t fields = static_cast<std::uintptr_t>(e.arg) + sizeof(tlm::tlm_generic_payload);
  __builtin_prefetch(reinterpret_cast<const void*>(fields));
}
}  // namespace

Calendar& Calendar::instance() {
  if (!g_calendar) g_calendar = new Calendar("fabric_calendar");  // lives as long as the kernel
  return *g_calendar;
}

Calendar::Calendar(const sc_core::sc_module_name& name) : sc_core::sc_module(name), index_(1024) {
  require_picosecond_resolution();
  SC_METHOD(drain);
  sensitive << wake_;
  dont_initialize();
}

Calendar::Bucket* Calendar::find_bucket(Tick when) const {
  for (std::size_t i = slot_of(when);; i = (i + 1) & (index_.size() - 1)) {
    if (index_[i].when == when) return index_[i].bucket;
    if (index_[i].when == kNever) return nullptr;
  }
}

void Calendar::index_insert(Tick when, Bucket* b) {
  if (2 * (indexed_ + 1) > index_.size()) {
    std::vector<Slot> old(index_.size() * 2);
    old.swap(index_);
    for (const Slot& s : old) {
      if (s.when == kNever) continue;
      std::size_t i = slot_of(s.when);
      while (index_[i].when != kNever) i = (i + 1) & (index_.size() - 1);
      index_[i] = s;
    }
  }
  std::size_t i = slot_of(when);
  while (index_[i].when != kNever) i = (i + 1) & (index_.size() - 1);
  index_[i] = Slot{when, b};
  ++indexed_;
}

void Calendar::index_erase(Tick when) {
  const std::size_t mask = index_.size() - 1;
  std::size_t i = slot_of(when);
  while (index_[i].when != when) i = (i + 1) & mask;
  // Backward-shift deletion: move later entries of the probe run up into the
  // hole so that lookups never need tombstones.
  for (std::size_t j = (i + 1) & mask; index_[j].when != kNever; j = (j + 1) & mask) {
    const std::size_t home = slot_of(index_[j].when);
    // Does j's entry belong at or before the hole (cyclically in home..j)?
    const bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
    if (movable) {
      index_[i] = index_[j];
      i = j;
    }
  }
  index_[i] = Slot{};
  --indexed_;
}

Calendar::Bucket* Calendar::bucket_for(Tick when) {
  if (last_ && last_->when == when) return last_;
  Bucket* b = find_bucket(when);
  if (!b) {
    if (spare_.empty()) {
      buckets_.push_back(std::make_unique<Bucket>());
      b = buckets_.back().get();
    } else {
      b = spare_.back();
      spare_.pop_back();
    }
    b->when = when;
    index_insert(when, b);
    heap_.push_back(HeapItem{when, b});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  last_ = b;
  return b;
}

void Calendar::add(Tick when, const Entry& e) {
  const Tick now = now_ticks();
  if (when > kMaxTime) {
    if (when == kNever) throw std::logic_error("calendar: event scheduled at no time (kNever)");
    throw ModelError("the simulation passed " + std::to_string(when / 1000000000000ull) +
                     " s, the end of its time range (2^62 ps, about 53 days)");
  }
  if (when < now) {
    throw std::logic_error("calendar: event scheduled in the past (" + std::to_string(when) + " ps < now " +
                           std::to_string(now) + " ps)");
  }
  bucket_for(when)->entries.push_back(e);
  ++pending_;
  // While draining, the loop below picks the entry up itself.
  if (!draining_ && when < wake_at_) {
    wake_at_ = when;
    wake_.notify(to_sc_time(when - now));
  }
}

void Calendar::drain() {
  const Tick now = sc_core::sc_time_stamp().value();
  draining_ = true;
  detail::g_calendar_now = now;
  detail::g_calendar_now_valid = true;
  while (!heap_.empty() && heap_.front().when <= now) {
    Bucket* b = heap_.front().bucket;
    // Entries scheduled for `now` while this bucket runs join its end.
    for (std::size_t i = 0; i < b->entries.size(); ++i) {
      const Entry e = b->entries[i];
      if (i + kPrefetchAhead < b->entries.size()) prefetch(b->entries[i + kPrefetchAhead]);
      --pending_;
      ++events_run_;
      try {
        e.run(e.owner, e.arg);
      } catch (...) {
        error_ = std::current_exception();
        draining_ = false;
        detail::g_calendar_now_valid = false;
        sc_core::sc_stop();
        return;
      }
      if (Frame::any_retired()) Frame::recycle_retired();
      if ((events_run_ & 0xffff) == 0 && progress_) progress_();
    }
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
    index_erase(b->when);
    if (last_ == b) last_ = nullptr;
    b->entries.clear();
    spare_.push_back(b);
  }
  draining_ = false;
  detail::g_calendar_now_valid = false;
  wake_at_ = kNever;
  if (!heap_.empty()) {
    wake_at_ = heap_.front().when;
    wake_.notify(to_sc_time(wake_at_ - now));
  }
}

}  // namespace fabricsim
