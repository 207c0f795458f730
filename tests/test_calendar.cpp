#include <gtest/gtest.h>

#include <vector>

#include "tlm/kernel/calendar.h"

using namespace fabricsim;

namespace {
struct Recorder {
  std::vector<std::pair<Tick, std::uint32_t>> seen;
  void record(std::uint32_t kind) {
    seen.emplace_back(now_ticks(), kind);
    if (kind == 1) Calendar::instance().schedule<&Recorder::record>(now_ticks(), this, 3);  // same time, runs after 2
  }
};
}  // namespace

TEST(Calendar, RunsEntriesAtTheirTimeInScheduleOrder) {
  Recorder r;
  Calendar& cal = Calendar::instance();
  cal.schedule<&Recorder::record>(5000, &r, 2);
  cal.schedule<&Recorder::record>(1000, &r, 1);
  cal.schedule<&Recorder::record>(1000, &r, 2);
  sc_core::sc_start();
  ASSERT_EQ(r.seen.size(), 4u);
  EXPECT_EQ(r.seen[0], std::make_pair(Tick{1000}, 1u));
  EXPECT_EQ(r.seen[1], std::make_pair(Tick{1000}, 2u));
  EXPECT_EQ(r.seen[2], std::make_pair(Tick{1000}, 3u));
  EXPECT_EQ(r.seen[3], std::make_pair(Tick{5000}, 2u));
  EXPECT_EQ(cal.events_run(), 4u);
}

namespace {
// Schedules entries at scattered times, some from inside earlier entries, and
// records the order they run in.
struct Scatter {
  struct Seen {
    Tick when;
    std::uint64_t seq;  // schedule order
  };
  std::vector<Seen> seen;
  std::vector<std::uint64_t> seq_of;  // by arg
  std::uint64_t next_seq = 0;
  std::uint32_t rng = 12345;
  std::uint32_t random() {
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
  }
  void add(Tick when) {
    seq_of.push_back(next_seq++);
    Calendar::instance().schedule<&Scatter::ran>(when, this, seq_of.size() - 1);
  }
  void ran(std::size_t index) {
    seen.push_back({now_ticks(), seq_of[index]});
    if (seen.size() < 60000) {
      add(now_ticks() + random() % 5000);  // often a time already pending, sometimes now
      if (random() % 4 == 0) add(now_ticks() + 1 + random() % 200000);
    }
  }
};
}  // namespace

TEST(Calendar, ManyScatteredTimesRunInTimeThenScheduleOrder) {
  Scatter s;
  for (int i = 0; i < 20000; ++i) s.add(s.random() % 3000000);  // thousands of distinct times
  sc_core::sc_start();
  ASSERT_GE(s.seen.size(), 60000u);
  EXPECT_EQ(s.seen.size(), s.next_seq);  // every entry ran, once
  for (std::size_t i = 1; i < s.seen.size(); ++i) {
    const auto& a = s.seen[i - 1];
    const auto& b = s.seen[i];
    ASSERT_TRUE(a.when < b.when || (a.when == b.when && a.seq < b.seq))
        << "entry " << i << ": (" << b.when << " ps, #" << b.seq << ") ran after (" << a.when << " ps, #" << a.seq
        << ")";
  }
  EXPECT_EQ(Calendar::instance().pending(), 0u);
}

TEST(Calendar, RefusesEntriesInThePastOrAtNoTime) {
  Recorder r;
  EXPECT_THROW(Calendar::instance().schedule<&Recorder::record>(kNever, &r, 1), std::logic_error);
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_NS));
  EXPECT_THROW(Calendar::instance().schedule<&Recorder::record>(5000, &r, 1), std::logic_error);
}

namespace {
// One handler per purpose, each with the argument's own type.
enum class Colour : std::uint8_t { kRed = 1, kBlue = 200 };
struct Typed {
  struct Thing {
    int value;
  };
  std::vector<std::string> seen;
  void nothing() { seen.push_back("nothing at " + std::to_string(now_ticks())); }
  void thing(Thing* t) { seen.push_back("thing " + std::to_string(t->value)); }
  void colour(Colour c) { seen.push_back("colour " + std::to_string(static_cast<int>(c))); }
  void big(std::uint64_t v) { seen.push_back("big " + std::to_string(v)); }
  void negative(std::int32_t v) { seen.push_back("negative " + std::to_string(v)); }
};
}  // namespace

TEST(Calendar, HandsEachHandlerItsArgumentAsItsOwnType) {
  Typed t;
  Typed::Thing thing{42};
  Calendar& cal = Calendar::instance();
  cal.schedule<&Typed::big>(100, &t, ~std::uint64_t{0});
  cal.schedule<&Typed::thing>(200, &t, &thing);
  cal.schedule<&Typed::colour>(300, &t, Colour::kBlue);
  cal.schedule<&Typed::negative>(400, &t, -7);
  cal.schedule_in<&Typed::nothing>(500, &t);
  sc_core::sc_start();
  const std::vector<std::string> expected = {"big 18446744073709551615", "thing 42", "colour 200", "negative -7",
                                             "nothing at 500"};
  EXPECT_EQ(t.seen, expected);
}
