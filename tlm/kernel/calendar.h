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
#include <systemc>
#include <type_traits>
#include <vector>

#include "tlm/kernel/time.h"

namespace fabricsim {

namespace detail {
/// What the calendar keeps of an event: whom, which handler (a function
/// made for it by HandlerOf, which knows the owner's and argument's types)
/// and the argument's bits.
struct CalendarEntry {
  void* owner;
  void (*run)(void* owner, std::uint64_t arg);
  std::uint64_t arg;
};

/// A handler's owner and argument types, and the function the calendar calls.
template <typename Method>
struct HandlerOf;
template <typename C>
struct HandlerOf<void (C::*)()> {
  using Owner = C;
  using Arg = void;
  static constexpr int kArity = 0;
  template <void (C::*Handler)()>
  static void run(void* owner, std::uint64_t) {
    (static_cast<C*>(owner)->*Handler)();
  }
};
template <typename C, typename A>
struct HandlerOf<void (C::*)(A)> {
  static_assert(std::is_pointer_v<A> || std::is_integral_v<A> || std::is_enum_v<A>,
                "a calendar handler's argument is a pointer, an integer or an enum");
  using Owner = C;
  using Arg = A;
  static constexpr int kArity = 1;
  static std::uint64_t pack(A a) {
    if constexpr (std::is_pointer_v<A>) {
      return reinterpret_cast<std::uintptr_t>(a);
    } else {
      return static_cast<std::uint64_t>(a);
    }
  }
  template <void (C::*Handler)(A)>
  static void run(void* owner, std::uint64_t bits) {
    if constexpr (std::is_pointer_v<A>) {
      (static_cast<C*>(owner)->*Handler)(reinterpret_cast<A>(static_cast<std::uintptr_t>(bits)));
    } else {
      (static_cast<C*>(owner)->*Handler)(static_cast<A>(bits));
    }
  }
};
}  // namespace detail

class Calendar : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Calendar);

  /// The simulation's calendar, created the first time a component asks for
  /// it (so models work in foreign platforms without any set-up).
  static Calendar& instance();

  /// Runs `(owner->*Handler)()` at absolute time `when` (>= now). A handler
  /// is a member function of its owner, one per purpose, so each event says
  /// what it is by its name and the compiler checks who receives it:
  ///   calendar_.schedule<&Link::on_wake>(when, this);
  template <auto Handler>
  void schedule(Tick when, typename detail::HandlerOf<decltype(Handler)>::Owner* owner) {
    static_assert(detail::HandlerOf<decltype(Handler)>::kArity == 0, "this handler takes an argument");
    add(when, Entry{owner, &detail::HandlerOf<decltype(Handler)>::template run<Handler>, 0});
  }
  /// Runs `(owner->*Handler)(arg)` at `when`: the argument is a pointer, an
  /// integer or an enum of the handler's own parameter type, kept in the
  /// entry (no allocation) and handed back as that type.
  template <auto Handler>
  void schedule(Tick when, typename detail::HandlerOf<decltype(Handler)>::Owner* owner,
                typename detail::HandlerOf<decltype(Handler)>::Arg arg) {
    using Traits = detail::HandlerOf<decltype(Handler)>;
    static_assert(Traits::kArity == 1, "this handler takes no argument");
    add(when, Entry{owner, &Traits::template run<Handler>, Traits::pack(arg)});
  }
  template <auto Handler, typename... Args>
  void schedule_in(Tick delay, typename detail::HandlerOf<decltype(Handler)>::Owner* owner, Args... args) {
    schedule<Handler>(now_ticks() + delay, owner, args...);
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

  using Entry = detail::CalendarEntry;
  void add(Tick when, const Entry& e);
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
  Bucket* last_ = nullptr;  // the bucket scheduled into last
  std::size_t pending_ = 0;
  std::uint64_t events_run_ = 0;
  Tick wake_at_ = kNever;  // time of the pending kernel notification
  bool draining_ = false;
  std::exception_ptr error_;
  std::function<void()> progress_;
  sc_core::sc_event wake_;
};

}  // namespace fabricsim
