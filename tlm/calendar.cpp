#include "tlm/calendar.h"

#include "tlm/fabric_protocol.h"

#include <algorithm>
#include <stdexcept>
#include <string>

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
}

Calendar& Calendar::instance() {
  if (!g_calendar) g_calendar = new Calendar("fabric_calendar");  // lives as long as the kernel
  return *g_calendar;
}

Calendar::Calendar(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
  require_picosecond_resolution();
  by_time_.reserve(1024);
  SC_METHOD(drain);
  sensitive << wake_;
  dont_initialize();
}

Calendar::Bucket* Calendar::bucket_for(Tick when) {
  if (last_ && last_->when == when) return last_;
  auto it = by_time_.find(when);
  Bucket* b;
  if (it != by_time_.end()) {
    b = it->second;
  } else {
    if (spare_.empty()) {
      buckets_.push_back(std::make_unique<Bucket>());
      b = buckets_.back().get();
    } else {
      b = spare_.back();
      spare_.pop_back();
    }
    b->when = when;
    by_time_.emplace(when, b);
    heap_.push_back(b);
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  last_ = b;
  return b;
}

void Calendar::schedule(Tick when, Client* client, std::uint32_t kind, void* arg) {
  const Tick now = now_ticks();
  if (when < now) {
    throw std::logic_error("calendar: event scheduled in the past (" + std::to_string(when) +
                           " ps < now " + std::to_string(now) + " ps)");
  }
  bucket_for(when)->entries.push_back(Entry{client, arg, kind});
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
  while (!heap_.empty() && heap_.front()->when <= now) {
    Bucket* b = heap_.front();
    // Entries scheduled for `now` while this bucket runs join its end.
    for (std::size_t i = 0; i < b->entries.size(); ++i) {
      const Entry e = b->entries[i];
      --pending_;
      ++events_run_;
      try {
        e.client->on_calendar(e.kind, e.arg);
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
    by_time_.erase(b->when);
    if (last_ == b) last_ = nullptr;
    b->entries.clear();
    spare_.push_back(b);
  }
  draining_ = false;
  detail::g_calendar_now_valid = false;
  wake_at_ = kNever;
  if (!heap_.empty()) {
    wake_at_ = heap_.front()->when;
    wake_.notify(to_sc_time(wake_at_ - now));
  }
}

}  // namespace fabricsim
