#include <gtest/gtest.h>

#include <vector>

#include "tlm/calendar.h"

using namespace fabricsim;

namespace {
struct Recorder : Calendar::Client {
  std::vector<std::pair<Tick, std::uint32_t>> seen;
  void on_calendar(std::uint32_t kind, void*) override {
    seen.emplace_back(now_ticks(), kind);
    if (kind == 1) Calendar::instance().schedule(now_ticks(), this, 3);  // same time, runs after 2
  }
};
}  // namespace

TEST(Calendar, RunsEntriesAtTheirTimeInScheduleOrder) {
  Recorder r;
  Calendar& cal = Calendar::instance();
  cal.schedule(5000, &r, 2);
  cal.schedule(1000, &r, 1);
  cal.schedule(1000, &r, 2);
  sc_core::sc_start();
  ASSERT_EQ(r.seen.size(), 4u);
  EXPECT_EQ(r.seen[0], std::make_pair(Tick{1000}, 1u));
  EXPECT_EQ(r.seen[1], std::make_pair(Tick{1000}, 2u));
  EXPECT_EQ(r.seen[2], std::make_pair(Tick{1000}, 3u));
  EXPECT_EQ(r.seen[3], std::make_pair(Tick{5000}, 2u));
  EXPECT_EQ(cal.events_run(), 4u);
}
