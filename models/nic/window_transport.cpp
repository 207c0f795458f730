#include "models/nic/window_transport.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim {

const ParamTable<WindowTransport::Params>& WindowTransport::Params::table() {
  static const auto table =
      ParamTable<WindowTransportParams>("window_transport",
                                        "a window-based reliable transport per queue pair at a NIC (TCP, DCTCP)")
          .add("tcp_initial_window", Quantity::kBytes, &WindowTransportParams::initial_window,
               "the congestion window a queue pair starts with")
          .range(1, static_cast<double>(limits::kMaxBytes))
          .add("tcp_max_window", Quantity::kBytes, &WindowTransportParams::max_window,
               "the receiver's window: the most bytes a queue pair has in flight")
          .range(1, static_cast<double>(limits::kMaxBytes))
          .add("tcp_rto", Quantity::kDuration, &WindowTransportParams::rto,
               "retransmission timeout: frames unacknowledged this long are lost")
          .range(1, 1e15)
          .add("tcp_ack_every", Quantity::kCount, &WindowTransportParams::ack_every,
               "the receiver acknowledges at least every N frames")
          .range(1, 1 << 16)
          .add("tcp_ack_delay", Quantity::kDuration, &WindowTransportParams::ack_delay,
               "and at most this long after the first frame waiting for an ACK arrived")
          .add("dctcp_g", Quantity::kNumber, &WindowTransportParams::dctcp_g,
               "DCTCP: gain of alpha, the fraction of marked bytes")
          .range(0, 1, true);
  return table;
}

WindowTransport::WindowTransport(const Params& params) : params_(params) {
  if (params_.mss == 0) throw std::invalid_argument("a window transport needs a packet size");
}

WindowTransport::QueuePair& WindowTransport::queue_pair(std::uint64_t qp) {
  auto [it, fresh] = queue_pairs_.try_emplace(qp);
  if (fresh) it->second.cwnd = static_cast<double>(std::max(params_.initial_window, params_.mss));
  return it->second;
}

double WindowTransport::window(std::uint64_t qp) const {
  const auto it = queue_pairs_.find(qp);
  return it == queue_pairs_.end() ? static_cast<double>(params_.initial_window) : it->second.cwnd;
}

bool WindowTransport::may_send(std::uint64_t qp, std::uint64_t wire_bytes) {
  QueuePair& q = queue_pair(qp);
  if (q.in_flight == 0) return true;  // a window below one packet still lets one go
  const double limit = std::min(q.cwnd, static_cast<double>(params_.max_window));
  return static_cast<double>(q.in_flight + wire_bytes) <= limit;
}

void WindowTransport::sent(std::uint64_t qp, Message* m, std::uint32_t index, std::uint64_t wire_bytes, unsigned port,
                           Tick now) {
  QueuePair& q = queue_pair(qp);
  q.out.push_back(InFlight{m, index, wire_bytes, q.next_seq++, now, port});
  q.in_flight += wire_bytes;
}

void WindowTransport::lose_all(QueuePair& q, std::vector<Resend>& resend) {
  for (const InFlight& e : q.out) resend.push_back(Resend{e.message, e.index, e.port});
  stats_.retransmissions += q.out.size();
  q.out.clear();
  q.in_flight = 0;
}

void WindowTransport::acknowledged(std::uint64_t qp, const std::vector<Message::Acked>& acks, Tick,
                                   std::vector<Resend>& resend, std::vector<Message*>& completed) {
  QueuePair& q = queue_pair(qp);
  const double mss = static_cast<double>(params_.mss);
  bool any = false;
  std::uint64_t highest = 0;
  for (const Message::Acked& a : acks) {
    auto it = std::find_if(q.out.begin(), q.out.end(),
                           [&](const InFlight& e) { return e.message->id == a.message && e.index == a.index; });
    if (it == q.out.end()) continue;  // already acknowledged (a copy sent again arrived too)
    any = true;
    highest = std::max(highest, it->seq);
    q.in_flight -= it->wire;
    const double bytes = static_cast<double>(it->wire);
    if (q.cwnd < q.ssthresh) {
      q.cwnd += bytes;  // slow start
    } else {
      q.cwnd += mss * bytes / q.cwnd;  // congestion avoidance: one packet per window
    }
    q.acked_bytes += it->wire;
    if (a.ecn) q.marked_bytes += it->wire;
    Message* m = it->message;
    q.out.erase(it);
    if (++m->nic.frames_out == m->nic.frames_total) completed.push_back(m);
  }
  if (!any) return;
  // Links keep order and a queue pair keeps its path: what was sent before
  // an acknowledged frame and is still out was lost.
  bool lost = false;
  std::uint64_t first_lost = 0;
  while (!q.out.empty() && q.out.front().seq < highest) {
    const InFlight& e = q.out.front();
    if (!lost) first_lost = e.seq;
    lost = true;
    resend.push_back(Resend{e.message, e.index, e.port});
    q.in_flight -= e.wire;
    ++stats_.retransmissions;
    ++stats_.fast_retransmits;
    q.out.pop_front();
  }
  if (lost && first_lost >= q.recover_seq) {  // once per window of data
    q.ssthresh = std::max(q.cwnd / 2, 2 * mss);
    q.cwnd = q.ssthresh;
    q.recover_seq = q.next_seq;
    ++stats_.window_cuts;
  }
  if (params_.control == Control::kDctcp && highest >= q.window_end_seq) {
    // A window of data acknowledged: alpha follows the fraction marked, and
    // the window shrinks by alpha/2 if any was.
    const double fraction =
        q.acked_bytes > 0 ? static_cast<double>(q.marked_bytes) / static_cast<double>(q.acked_bytes) : 0;
    q.alpha = (1 - params_.dctcp_g) * q.alpha + params_.dctcp_g * fraction;
    if (q.marked_bytes > 0 && highest >= q.recover_seq) {
      q.cwnd = std::max(mss, q.cwnd * (1 - q.alpha / 2));
      q.ssthresh = q.cwnd;
      q.recover_seq = q.next_seq;
      ++stats_.window_cuts;
    }
    q.acked_bytes = q.marked_bytes = 0;
    q.window_end_seq = q.next_seq;
  }
}

Tick WindowTransport::timeout_at(std::uint64_t qp) const {
  const auto it = queue_pairs_.find(qp);
  if (it == queue_pairs_.end() || it->second.out.empty()) return kNever;
  return it->second.out.front().sent + params_.rto;
}

void WindowTransport::timer(std::uint64_t qp, Tick now, std::vector<Resend>& resend) {
  QueuePair& q = queue_pair(qp);
  if (q.out.empty() || q.out.front().sent + params_.rto > now) return;
  ++stats_.timeouts;
  q.ssthresh = std::max(q.cwnd / 2, 2.0 * static_cast<double>(params_.mss));
  q.cwnd = static_cast<double>(params_.mss);
  q.recover_seq = q.next_seq;
  lose_all(q, resend);
}

void WindowTransport::forget(const Message& m) {
  const auto it = arrived_.find(m.id);
  if (it == arrived_.end()) return;  // one frame, or delivered by count alone
  for (std::size_t i = 0; i < it->second.size(); ++i) {
    if (!it->second[i]) {
      throw std::logic_error("window transport: message " + std::to_string(m.id) + " delivered without its frame " +
                             std::to_string(i));
    }
  }
  arrived_.erase(it);
}

bool WindowTransport::first_arrival(const Message& m, std::uint32_t index, std::uint32_t total) {
  if (m.nic.frames_received >= total) {  // a copy after the message was delivered (and forgotten here)
    ++stats_.duplicates;
    return false;
  }
  std::vector<bool>& seen = arrived_[m.id];
  if (seen.size() < total) seen.resize(total, false);
  if (seen[index]) {
    ++stats_.duplicates;
    return false;
  }
  seen[index] = true;
  return true;
}

}  // namespace fabricsim
