// One event calendar for the whole fabric.
//
// Thousands of modules each waking on an sc_event spend their time in the
// SystemC kernel's event queue (measured: 400-700 ns per wake-up at 1,024
// NPUs). Instead, fabric components put their timed work into this one
// calendar, drained by a single SC_METHOD that the kernel wakes once per
// distinct timestamp. Each entry runs at exactly its time, with
// sc_time_stamp() equal to that time, so components interoperate with
// ordinary SystemC processes and the results do not depend on how events are
// grouped. Entries at equal times run in the order they were scheduled, which
// makes every run deterministic.
//
// Entries are kept in one bucket per distinct time (a FIFO), and the buckets
// in a binary heap by time. Collectives move in lockstep, so thousands of
// entries share a few timestamps: scheduling is a lookup and an append, and
// draining walks a bucket in order. On big indirect fabrics times spread out
// (millions of buckets of a few entries each), so the lookup is an
// open-addressing table and the heap holds each bucket's time beside it:
// neither chases pointers.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include <systemc>

#include "tlm/time.h"

namespace fabricsim {

class Calendar : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Calendar);
  /// Anything that schedules work implements this; `kind` and `arg` are the
  /// client's own, handed back unchanged.
  class Client {
   public:
    virtual void on_calendar(std::uint32_t kind, void* arg) = 0;

   protected:
    ~Client() = default;
  };

  /// The simulation's calendar, created the first time a component asks for
  /// it (so models work in foreign platforms without any set-up).
  static Calendar& instance();

  /// Runs `client->on_calendar(kind, arg)` at absolute time `when` (>= now).
  void schedule(Tick when, Client* client, std::uint32_t kind, void* arg = nullptr);
  void schedule_in(Tick delay, Client* client, std::uint32_t kind, void* arg = nullptr) {
    schedule(now_ticks() + delay, client, kind, arg);
  }

  std::uint64_t events_run() const { return events_run_; }
  /// Calls `hook` every 2^16 events (cheap enough to look at a clock there):
  /// progress reports on long runs. Null: none.
  void set_progress_hook(std::function<void()> hook) { progress_ = std::move(hook); }
  /// An exception thrown by a client stops the simulation (sc_stop) and is
  /// kept here for the driver to rethrow after sc_start() returns: SystemC
  /// would otherwise turn it into a generic report.
  bool has_error() const { return error_ != nullptr; }
  std::exception_ptr take_error() {
    std::exception_ptr e = error_;
    error_ = nullptr;
    return e;
  }
  std::size_t pending() const { return pending_; }

 private:
  explicit Calendar(const sc_core::sc_module_name& name);
  void drain();

  struct Entry {
    Client* client;
    void* arg;
    std::uint32_t kind;
  };
  struct Bucket {
    Tick when = 0;
    std::vector<Entry> entries;
  };
  struct HeapItem {
    Tick when;
    Bucket* bucket;
  };
  static bool later(const HeapItem& a, const HeapItem& b) { return a.when > b.when; }
  Bucket* bucket_for(Tick when);

  /// Buckets by time: open addressing with linear probing, at most half full.
  struct Slot {
    Tick when = kNever;  // kNever: empty
    Bucket* bucket = nullptr;
  };
  std::size_t slot_of(Tick when) const {
    return static_cast<std::size_t>((when * 0x9E3779B97F4A7C15ull) >> 32) & (index_.size() - 1);
  }
  Bucket* find_bucket(Tick when) const;
  void index_insert(Tick when, Bucket* b);
  void index_erase(Tick when);

  std::vector<HeapItem> heap_;  // buckets by time (min-heap)
  std::vector<Slot> index_;
  std::size_t indexed_ = 0;
  std::vector<std::unique_ptr<Bucket>> buckets_;  // owner
  std::vector<Bucket*> spare_;
  Bucket* last_ = nullptr;                        // the bucket scheduled into last
  std::size_t pending_ = 0;
  std::uint64_t events_run_ = 0;
  Tick wake_at_ = kNever;  // time of the pending kernel notification
  bool draining_ = false;
  std::exception_ptr error_;
  std::function<void()> progress_;
  sc_core::sc_event wake_;
};

}  // namespace fabricsim
