// The round rules of a collective's programs, stated once. The engine (in
// simulated time), the in-memory executor (data, no time) and the cost model
// (on paper) each run a member's program through a RoundCursor:
//
//  1. A round starts only once the round before it has ended; starting it
//     posts all its sends at once.
//  2. Each receive takes exactly one message, matched by chunk (the
//     program), sender and tag. A transfer's tag is the round it belongs to
//     unless it names another (Transfer::tag): a receive may name the
//     sender's round.
//  3. A round ends when all its receives have arrived. What else a runner
//     makes a round wait for is its own (the engine: a send-only round's
//     sends leaving, the local reduction); the order above is not.
//
// Where messages wait before their round starts (a mailbox, a map of times)
// is the runner's too: the cursor says which receive a message is for.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "models/collectives/collective.h"

namespace fabricsim {

/// One member's program for one chunk, and where it is in its rounds.
class RoundCursor {
 public:
  RoundCursor() = default;
  explicit RoundCursor(std::unique_ptr<Program> program) : program_(std::move(program)) {}

  const Program& program() const { return *program_; }
  std::uint32_t round() const { return round_; }
  bool finished() const { return round_ >= program_->num_rounds(); }
  /// The current round has started: its sends are posted, its receives awaited.
  bool started() const { return started_; }

  /// Starts the current round (rule 1) and returns it: its sends to post now,
  /// its receives to await.
  const Round& start() {
    program_->round(round_, current_);
    pending_ = static_cast<std::uint32_t>(current_.recvs.size());
    started_ = true;
    return current_;
  }
  const Round& current() const { return current_; }

  /// The tag a transfer of round `round` carries, as a send, or waits for,
  /// as a receive (rule 2).
  static std::uint32_t tag_in(const Transfer& t, std::uint32_t round) {
    return t.tag == Transfer::kSameRound ? round : t.tag;
  }
  std::uint32_t tag(const Transfer& t) const { return tag_in(t, round_); }

  /// The receive of the started round that a message with `tag` from
  /// `sender` is for, if it still waits (rule 2); -1: none.
  int receive_for(std::uint32_t tag, std::uint32_t sender) const {
    if (!started_) return -1;
    for (std::size_t i = 0; i < current_.recvs.size(); ++i) {
      const Transfer& t = current_.recvs[i];
      if (!t.arrived && static_cast<std::uint32_t>(t.peer) == sender && tag_in(t, round_) == tag) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }
  bool waiting(std::size_t i) const { return !current_.recvs[i].arrived; }
  /// Receive i has taken its message.
  void arrive(std::size_t i) {
    current_.recvs[i].arrived = true;
    --pending_;
  }
  /// Receives of the started round still waiting: at 0 it may end (rule 3).
  std::uint32_t pending() const { return pending_; }
  /// Ends the current round: the next one is current, not yet started.
  void next() {
    ++round_;
    started_ = false;
  }

 private:
  std::unique_ptr<Program> program_;
  std::uint32_t round_ = 0;
  std::uint32_t pending_ = 0;
  bool started_ = false;
  Round current_;
};

}  // namespace fabricsim
