#include "models/nic/dcqcn.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim {

const ParamTable<Dcqcn::Params>& Dcqcn::Params::table() {
  static const auto table =
      ParamTable<DcqcnParams>("dcqcn", "DCQCN rate control of each queue pair at a RoCE NIC (Zhu et al., SIGCOMM 2015)")
          .add("dcqcn_g", Quantity::kNumber, &DcqcnParams::g, "gain of the congestion estimate alpha")
          .range(0, 1, true)
          .add("dcqcn_cnp_interval", Quantity::kDuration, &DcqcnParams::cnp_interval,
               "a receiving NIC sends at most one CNP per queue pair per interval")
          .add("dcqcn_alpha_period", Quantity::kDuration, &DcqcnParams::alpha_period,
               "alpha decays by (1 - g) once per period without a CNP")
          .range(1, 1e15)
          .add("dcqcn_rate_timer", Quantity::kDuration, &DcqcnParams::rate_timer, "T: a rate-increase step per period")
          .range(1, 1e15)
          .add("dcqcn_byte_counter", Quantity::kBytes, &DcqcnParams::byte_counter,
               "B: a rate-increase step per B bytes sent")
          .range(1, static_cast<double>(limits::kMaxBytes))
          .add("dcqcn_fast_recovery", Quantity::kCount, &DcqcnParams::fast_recovery,
               "F: steps of fast recovery (halving the gap to the target) before the rate rises additively")
          .range(0, 1000)
          .add("dcqcn_rate_ai", Quantity::kBandwidth, &DcqcnParams::rate_ai,
               "additive increase of the target rate per step")
          .add("dcqcn_rate_hai", Quantity::kBandwidth, &DcqcnParams::rate_hai,
               "hyper increase of the target rate per step")
          .add("dcqcn_min_rate", Quantity::kBandwidth, &DcqcnParams::min_rate,
               "the lowest rate a queue pair is cut to");
  return table;
}

Dcqcn::Dcqcn(const Params& params, Bandwidth line_rate) : params_(params), line_(line_rate.bytes_per_ps()) {
  if (!(line_ > 0)) throw std::invalid_argument("DCQCN needs a finite line rate");
}

Dcqcn::QueuePair& Dcqcn::queue_pair(std::uint64_t qp) {
  auto [it, fresh] = queue_pairs_.try_emplace(qp);
  if (fresh) {
    it->second.rc = it->second.rt = line_;
    it->second.alpha = 1;  // the paper's initial value
  }
  return it->second;
}

void Dcqcn::increase(QueuePair& q, bool by_timer) {
  (by_timer ? q.timer_steps : q.byte_steps) += 1;
  const std::uint32_t f = params_.fast_recovery;
  if (q.timer_steps > f && q.byte_steps > f) {
    const double i = static_cast<double>(std::min(q.timer_steps, q.byte_steps) - f);
    q.rt += i * params_.rate_hai.bytes_per_ps();
  } else if (q.timer_steps > f || q.byte_steps > f) {
    q.rt += params_.rate_ai.bytes_per_ps();
  }  // else fast recovery: the target stays
  q.rt = std::min(q.rt, line_);
  q.rc = (q.rt + q.rc) / 2;
  if (line_ - q.rc < 1e-9 * line_) {  // back at line rate: timers no longer matter
    q.rc = q.rt = line_;
    q.cut = false;
  }
}

void Dcqcn::catch_up(QueuePair& q, Tick now) {
  if (now >= q.alpha_due && q.alpha_due > 0) {
    const Tick periods = (now - q.alpha_due) / params_.alpha_period + 1;
    q.alpha *= std::pow(1 - params_.g, static_cast<double>(periods));
    q.alpha_due += periods * params_.alpha_period;
  }
  while (q.cut && now >= q.timer_due) {
    q.timer_due += params_.rate_timer;
    increase(q, true);
  }
}

Tick Dcqcn::pace(std::uint64_t qp, std::uint64_t wire_bytes, Tick ready) {
  QueuePair& q = queue_pair(qp);
  const Tick start = std::max(ready, q.next_start);
  catch_up(q, start);
  q.next_start = start + static_cast<Tick>(static_cast<double>(wire_bytes) / q.rc);
  if (q.cut) {
    q.bytes += wire_bytes;
    while (q.cut && q.bytes >= params_.byte_counter) {
      q.bytes -= params_.byte_counter;
      increase(q, false);
    }
  }
  return start;
}

Tick Dcqcn::next_start(std::uint64_t qp) const {
  const auto it = queue_pairs_.find(qp);
  return it == queue_pairs_.end() ? 0 : it->second.next_start;
}

void Dcqcn::notified(std::uint64_t qp, Tick now) {
  ++stats_.cnps_received;
  QueuePair& q = queue_pair(qp);
  catch_up(q, now);
  q.rt = q.rc;
  q.rc = std::max(params_.min_rate.bytes_per_ps(), q.rc * (1 - q.alpha / 2));
  q.alpha = (1 - params_.g) * q.alpha + params_.g;
  q.alpha_due = now + params_.alpha_period;
  q.timer_due = now + params_.rate_timer;
  q.bytes = 0;
  q.timer_steps = q.byte_steps = 0;
  q.cut = true;
  const double rate = q.rc * 1e12;
  stats_.lowest_rate = stats_.lowest_rate == 0 ? rate : std::min(stats_.lowest_rate, rate);
}

bool Dcqcn::should_notify(std::uint64_t qp, Tick now) {
  auto [it, fresh] = last_cnp_.try_emplace(qp, now);
  if (!fresh) {
    if (now - it->second < params_.cnp_interval) return false;
    it->second = now;
  }
  ++stats_.cnps_sent;
  return true;
}

double Dcqcn::rate(std::uint64_t qp) const {
  const auto it = queue_pairs_.find(qp);
  return (it == queue_pairs_.end() ? line_ : it->second.rc) * 1e12;
}

}  // namespace fabricsim
