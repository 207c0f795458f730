// The hot-path queues against std::deque, under random operations that wrap
// the ring around, grow it onto the heap, and erase and insert in the middle.
#include <gtest/gtest.h>

#include <deque>

#include "tlm/kernel/fifo.h"

using namespace fabricsim;

namespace {
template <typename Queue>
void compare(const Queue& q, const std::deque<int>& ref, int step) {
  ASSERT_EQ(q.size(), ref.size()) << "after step " << step;
  for (std::size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(q[i], ref[i]) << "element " << i << " after step " << step;
}
}  // namespace

TEST(InlineRing, BehavesAsADequeThroughWrapsAndGrowth) {
  InlineRing<int, 4> q;
  std::deque<int> ref;
  std::uint32_t rng = 7;
  std::size_t largest = 0;
  for (int step = 0; step < 20000; ++step) {
    rng = rng * 1664525u + 1013904223u;
    const unsigned op = (rng >> 24) % 8;
    const int v = step;
    // Pushes outnumber pops early on so that the ring grows well past 4.
    if (op < 3 || ref.empty() || (step < 2000 && op < 5)) {
      q.push_back(v);
      ref.push_back(v);
    } else if (op < 5) {
      q.pop_front();
      ref.pop_front();
    } else if (op == 5) {
      const std::size_t i = (rng >> 8) % ref.size();
      q.erase(i);
      ref.erase(ref.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (op == 6) {
      const std::size_t i = (rng >> 8) % (ref.size() + 1);
      q.insert(i, v);
      ref.insert(ref.begin() + static_cast<std::ptrdiff_t>(i), v);
    } else {
      q.pop_back();
      ref.pop_back();
    }
    largest = std::max(largest, ref.size());
    compare(q, ref, step);
    if (!ref.empty()) {
      ASSERT_EQ(q.front(), ref.front());
      ASSERT_EQ(q.back(), ref.back());
    }
  }
  EXPECT_GT(largest, 64u);  // it did grow onto the heap, several times
}

TEST(Fifo, BehavesAsADequeWithEraseInTheMiddle) {
  Fifo<int> q;
  std::deque<int> ref;
  std::uint32_t rng = 11;
  for (int step = 0; step < 20000; ++step) {
    rng = rng * 1664525u + 1013904223u;
    const unsigned op = (rng >> 24) % 5;
    if (op < 2 || ref.empty()) {
      q.push_back(step);
      ref.push_back(step);
    } else if (op < 4) {
      q.pop_front();
      ref.pop_front();
    } else {
      const std::size_t i = (rng >> 8) % ref.size();
      q.erase(i);
      ref.erase(ref.begin() + static_cast<std::ptrdiff_t>(i));
    }
    compare(q, ref, step);
  }
}
