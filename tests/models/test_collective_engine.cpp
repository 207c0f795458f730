// The collective engine alone, on hosts with no NIC, link or switch: each
// host's messages leave one after another on a wire of its own (bytes at
// kGBps) and arrive a fixed latency later. The engine's timing must then be
// what the round rules give (round_cursor.h) to the picosecond, its data the
// reduction of every member's, including when members start apart and
// messages arrive before the round that takes them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "support/frame_harness.h"
#include "tlm/kernel/calendar.h"

using namespace fabricsim;

namespace {

constexpr std::uint64_t kGBps = 8;    // 125 ps a byte: whole ticks
constexpr Tick kLatency = 1'000'000;  // 1 us

constexpr Tick wire_time(std::uint64_t bytes) {
  return bytes * 1000 / kGBps;
}

/// One member: an engine, and a wire in place of its NIC.
class WireHost final : public CollectiveEngine::Host {
 public:
  WireHost(int rank, const CollectiveConfig& config, std::vector<WireHost*>& hosts)
      : rank_(rank), hosts_(hosts), engine_(*this, config) {}

  /// Starts `spec` at `when`.
  void start_at(const CollectiveSpec& spec, Tick when) {
    spec_ = spec;
    Calendar::instance().schedule<&WireHost::begin>(when, this);
  }
  Tick finished() const { return finished_; }
  const std::string& data_error() const { return data_error_; }
  bool done() const { return done_; }

  int rank() const override { return rank_; }
  Message* new_message(int peer, std::uint64_t bytes) override {
    Message* m = Message::allocate();
    m->ref();  // one for the sender (its engine drops it once told the message has left), one for the receiver
    m->dst = static_cast<Address>(peer);
    m->bytes = bytes;
    m->tag.src_rank = static_cast<std::uint32_t>(rank_);
    return m;
  }
  void post(Message* m) override {
    wire_free_ = std::max(now_ticks(), wire_free_) + wire_time(m->bytes);
    Calendar::instance().schedule<&WireHost::on_left>(wire_free_, this, m);
    Calendar::instance().schedule<&WireHost::on_arrival>(wire_free_ + kLatency, hosts_[m->dst], m);
  }
  void collective_done(CollectiveRun& run) override {
    done_ = true;
    finished_ = run.finished;
    data_error_ = run.data_error;
  }

 private:
  void begin() { engine_.start(spec_, nullptr); }
  void on_left(Message* m) { m->sender.owner->message_left(*m, now_ticks()); }
  void on_arrival(Message* m) { engine_.on_message(m); }

  int rank_;
  std::vector<WireHost*>& hosts_;
  CollectiveEngine engine_;
  CollectiveSpec spec_;
  Tick wire_free_ = 0;
  Tick finished_ = 0;
  bool done_ = false;
  std::string data_error_;
};

/// When each member's ring all-reduce of `bytes` ends, members starting at
/// `start`, by the round rules on these wires: round r of member i posts its
/// send to i+1 when it starts (leaving after i's earlier sends), and ends
/// when i-1's send of round r has arrived; a member is done when its last
/// round has ended and its last send has left.
std::vector<Tick> ring_all_reduce_ends(const std::vector<Tick>& start, std::uint64_t bytes) {
  const int n = static_cast<int>(start.size());
  const Tick wire = wire_time(bytes / static_cast<std::uint64_t>(n));
  std::vector<Tick> round_start = start, wire_free(start.size(), 0), arrival(start.size());
  for (int r = 0; r < 2 * (n - 1); ++r) {
    for (int i = 0; i < n; ++i) {
      wire_free[i] = std::max(round_start[i], wire_free[i]) + wire;
      arrival[(i + 1) % n] = wire_free[i] + kLatency;
    }
    for (int i = 0; i < n; ++i) round_start[i] = std::max(round_start[i], arrival[i]);
  }
  for (int i = 0; i < n; ++i) round_start[i] = std::max(round_start[i], wire_free[i]);
  return round_start;
}

/// Runs a ring all-reduce of `bytes` with data over members starting at `start`.
std::vector<WireHost*> run_ring_all_reduce(const std::vector<Tick>& start, std::uint64_t bytes) {
  static CollectiveConfig config;  // outlives the hosts, which the test leaks with the simulation
  config.chunks = 1;
  config.data = true;
  static Group group;
  group.name = "world";
  std::vector<WireHost*>* hosts = new std::vector<WireHost*>();
  for (std::size_t r = 0; r < start.size(); ++r) {
    group.ranks.push_back(static_cast<int>(r));
    hosts->push_back(new WireHost(static_cast<int>(r), config, *hosts));
  }
  CollectiveSpec spec;
  spec.type = CollectiveType::kAllReduce;
  spec.bytes = bytes;
  spec.group = &group;
  spec.algorithm = AlgorithmKind::kRing;
  spec.chunks = 1;
  spec.data = true;
  spec.name = "ring";
  for (std::size_t r = 0; r < start.size(); ++r) (*hosts)[r]->start_at(spec, start[r]);
  testutil::run_to_end();
  return *hosts;
}

}  // namespace

TEST(CollectiveEngine, ARingAllReduceOnBareWiresTakesItsRoundsAndReducesTheData) {
  // Four members, the third starting 300 us after the others: its left
  // neighbour's messages arrive before the rounds that take them and wait.
  const std::uint64_t bytes = 4u << 20;
  const std::vector<Tick> start = {0, 0, 300'000'000, 0};
  const auto hosts = run_ring_all_reduce(start, bytes);
  const auto expected = ring_all_reduce_ends(start, bytes);
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    ASSERT_TRUE(hosts[r]->done()) << "member " << r << " never finished";
    EXPECT_EQ(hosts[r]->finished(), expected[r]) << "member " << r;
    EXPECT_EQ(hosts[r]->data_error(), "") << "member " << r;
  }
  // Had they started together: 2 (n - 1) rounds of a segment's wire time and the latency.
  EXPECT_EQ(ring_all_reduce_ends({0, 0, 0, 0}, bytes)[0], 6 * (wire_time(bytes / 4) + kLatency));
  EXPECT_GT(expected[0], 6 * (wire_time(bytes / 4) + kLatency));  // the late member held the others up
}
