#include "models/memory/memory.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace fabricsim {

namespace {
constexpr std::uint64_t kPageBytes = 4096;
}  // namespace

const ParamTable<Memory::Params>& Memory::Params::table() {
  static const auto table =
      ParamTable<MemoryParams>("memory",
                               "a memory (HBM or pooled): channels interleaved by address, each serving its bytes at "
                               "its share of the bandwidth")
          .add("size", Quantity::kBytes, &MemoryParams::size_bytes, "capacity; accesses past it are errors")
          .range(1, static_cast<double>(limits::kMaxBytes))
          .legacy("size_GiB", 1073741824.0, "GiB")
          .add("channels", Quantity::kCount, &MemoryParams::channels, "independent channels, each bandwidth / channels")
          .range(1, 1 << 16)
          .add("bandwidth", Quantity::kBandwidth, &MemoryParams::bandwidth, "all channels together")
          .legacy("bandwidth_GBps", 1e9, "GB/s")
          .add("latency", Quantity::kDuration, &MemoryParams::latency, "request to first byte")
          .legacy("latency_ns", 1e3, "ns")
          .add("interleave", Quantity::kBytes, &MemoryParams::interleave_bytes, "consecutive bytes on one channel")
          .range(1, static_cast<double>(limits::kMaxBytes))
          .legacy("interleave_bytes", 1, "bytes");
  return table;
}

Memory::Memory(const sc_core::sc_module_name& name, const Params& params)
    : sc_core::sc_module(name), in("in"), params_(params) {
  if (params_.channels == 0) throw std::invalid_argument(std::string(this->name()) + ": a memory needs channels");
  if (params_.interleave_bytes == 0)
    throw std::invalid_argument(std::string(this->name()) + ": interleave_bytes must be > 0");
  if (params_.bandwidth.is_unlimited()) {
    throw std::invalid_argument(std::string(this->name()) + ": channel bandwidth must be > 0");
  }
  channel_bandwidth_ = params_.channel_bandwidth();
  in.register_b_transport(this, &Memory::b_transport);
  in.register_nb_transport_fw(this, &Memory::nb_transport_fw);
  in.register_get_direct_mem_ptr(this, &Memory::get_direct_mem_ptr);
  in.register_transport_dbg(this, &Memory::transport_dbg);
}

std::vector<std::uint64_t> Memory::channel_bytes(std::uint64_t address, std::uint64_t length) const {
  const std::uint64_t C = params_.channels, I = params_.interleave_bytes;
  std::vector<std::uint64_t> out(C, 0);
  std::uint64_t o = address - params_.base;
  std::uint64_t left = length;
  // Up to the next interleave boundary.
  if (o % I) {
    const std::uint64_t n = std::min(left, I - o % I);
    out[(o / I) % C] += n;
    o += n;
    left -= n;
  }
  // Whole interleave units: full rounds over every channel, then the rest.
  const std::uint64_t units = left / I;
  const std::uint64_t first = (o / I) % C;
  for (std::uint64_t c = 0; c < C; ++c) out[c] += units / C * I;
  for (std::uint64_t k = 0; k < units % C; ++k) out[(first + k) % C] += I;
  o += units * I;
  left -= units * I;
  if (left) out[(o / I) % C] += left;
  return out;
}

bool Memory::check(tlm::tlm_generic_payload& gp) {
  const auto cmd = gp.get_command();
  if (cmd != tlm::TLM_READ_COMMAND && cmd != tlm::TLM_WRITE_COMMAND) {
    if (cmd == tlm::TLM_IGNORE_COMMAND) {
      gp.set_response_status(tlm::TLM_OK_RESPONSE);
    } else {
      gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    }
    return false;
  }
  const std::uint64_t a = gp.get_address(), n = gp.get_data_length();
  if (a < params_.base || n > params_.size_bytes || a - params_.base > params_.size_bytes - n) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    ++stats_.errors;
    return false;
  }
  if (gp.get_byte_enable_ptr()) {
    gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    ++stats_.errors;
    return false;
  }
  if (gp.get_streaming_width() && gp.get_streaming_width() < n) {
    gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    ++stats_.errors;
    return false;
  }
  return true;
}

std::uint8_t* Memory::page(std::uint64_t offset) {
  auto& p = pages_[offset / kPageBytes];
  if (!p) {
    p.reset(new std::uint8_t[kPageBytes]);
    std::memset(p.get(), 0, kPageBytes);
  }
  return p.get();
}

void Memory::copy_data(tlm::tlm_generic_payload& gp) {
  const std::uint64_t n = gp.get_data_length();
  if (gp.get_command() == tlm::TLM_READ_COMMAND) {
    stats_.bytes_read += n;
    ++stats_.reads;
  } else {
    stats_.bytes_written += n;
    ++stats_.writes;
  }
  unsigned char* data = gp.get_data_ptr();
  if (!params_.store_data || !data) return;  // timing only
  std::uint64_t o = gp.get_address() - params_.base;
  std::uint64_t done = 0;
  while (done < n) {
    const std::uint64_t in_page = std::min(n - done, kPageBytes - o % kPageBytes);
    std::uint8_t* p = page(o) + o % kPageBytes;
    if (gp.get_command() == tlm::TLM_READ_COMMAND) {
      std::memcpy(data + done, p, in_page);
    } else {
      std::memcpy(p, data + done, in_page);
    }
    done += in_page;
    o += in_page;
  }
}

Memory::Request* Memory::begin(tlm::tlm_generic_payload& gp, int initiator, bool blocking) {
  advance();
  if (gp.get_data_length() == 0) {  // nothing to move: only the latency
    if (blocking) return nullptr;
    std::unique_ptr<Request> r = new_request();
    r->gp = &gp;
    r->initiator = initiator;
    calendar_.schedule<&Memory::respond>(now_ticks() + params_.latency, this, r.release());
    return nullptr;
  }
  std::unique_ptr<Request> r = new_request();
  r->gp = &gp;
  r->initiator = initiator;
  r->blocking = blocking;
  const std::uint64_t n = gp.get_data_length();
  r->remaining = static_cast<double>(n);
  const auto per_channel = channel_bytes(gp.get_address(), n);
  r->share.reserve(per_channel.size());
  for (unsigned c = 0; c < per_channel.size(); ++c) {
    if (per_channel[c]) r->share.emplace_back(c, static_cast<double>(per_channel[c]) / static_cast<double>(n));
  }
  Request* raw = r.get();
  active_.push_back(std::move(r));
  share_bandwidth();
  return raw;
}

std::unique_ptr<Memory::Request> Memory::new_request() {
  if (spare_.empty()) return std::make_unique<Request>();
  std::unique_ptr<Request> r = std::move(spare_.back());
  spare_.pop_back();
  r->share.clear();  // keeps its room: the next request spans as many channels
  r->remaining = r->rate = 0;
  r->blocking = false;
  return r;
}

void Memory::share_bandwidth() {
  const double channel = channel_bandwidth_.bytes_per_ps();
  if (active_.size() == 1) {
    // Alone (the usual case): the fullest channel sets the rate, as one
    // round of the filling below would, to the bit.
    Request& r = *active_.front();
    r.rate = std::numeric_limits<double>::infinity();
    for (const auto& [c, f] : r.share) r.rate = std::min(r.rate, channel / f);
    if (!std::isfinite(r.rate)) r.rate = 0;
  } else {
    fill_shares(channel);
  }
  schedule_completion();
}

void Memory::fill_shares(double channel) {
  // Progressive filling: raise every unfrozen request's rate together until
  // some channel is full; freeze the requests on full channels; repeat.
  // The scratch vectors live in the memory: this runs at every request's
  // start and end.
  std::vector<double>& capacity = fill_capacity_;
  std::vector<double>& load = fill_load_;
  std::vector<char>& frozen = fill_frozen_;
  std::vector<char>& full = fill_full_;
  capacity.assign(params_.channels, channel);
  load.resize(params_.channels);
  full.resize(params_.channels);
  frozen.assign(active_.size(), 0);
  for (auto& r : active_) r->rate = 0;
  for (;;) {
    std::fill(load.begin(), load.end(), 0.0);
    bool any = false;
    for (std::size_t i = 0; i < active_.size(); ++i) {
      if (frozen[i]) continue;
      any = true;
      for (const auto& [c, f] : active_[i]->share) load[c] += f;
    }
    if (!any) break;
    double step = std::numeric_limits<double>::infinity();
    for (unsigned c = 0; c < params_.channels; ++c) {
      if (load[c] > 0) step = std::min(step, capacity[c] / load[c]);
    }
    if (!std::isfinite(step)) break;
    for (std::size_t i = 0; i < active_.size(); ++i) {
      if (!frozen[i]) active_[i]->rate += step;
    }
    bool any_full = false;
    for (unsigned c = 0; c < params_.channels; ++c) {
      capacity[c] -= step * load[c];
      full[c] = load[c] > 0 && capacity[c] <= channel * 1e-9;
      any_full |= full[c] != 0;
    }
    if (!any_full) break;
    // Freeze every request with bytes on a full channel.
    bool froze = false;
    for (std::size_t i = 0; i < active_.size(); ++i) {
      if (frozen[i]) continue;
      for (const auto& sh : active_[i]->share) {
        if (full[sh.first]) {
          frozen[i] = 1;
          froze = true;
          break;
        }
      }
    }
    if (!froze) break;
  }
}

void Memory::schedule_completion() {
  // Schedule the next completion; earlier-scheduled ones are now stale.
  ++generation_;
  double soonest = std::numeric_limits<double>::infinity();
  for (const auto& r : active_) {
    if (r->rate > 0) soonest = std::min(soonest, r->remaining / r->rate);
  }
  if (std::isfinite(soonest)) {
    const auto dt = static_cast<Tick>(std::ceil(std::max(0.0, soonest)));
    calendar_.schedule<&Memory::on_completion>(now_ticks() + dt, this, generation_);
  }
}

void Memory::advance() {
  const Tick now = now_ticks();
  const Tick dt = now - last_;
  last_ = now;
  if (active_.empty()) return;
  stats_.busy += dt;
  bool finished = false;
  for (auto& r : active_) {
    r->remaining -= r->rate * static_cast<double>(dt);
    finished |= r->remaining <= 0.5;
  }
  if (!finished) return;
  for (std::size_t i = 0; i < active_.size();) {
    if (active_[i]->remaining > 0.5) {
      ++i;
      continue;
    }
    std::unique_ptr<Request> r = std::move(active_[i]);
    active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(i));
    if (r->blocking) {
      spare_.push_back(std::move(r));  // answered when it was made
    } else {
      calendar_.schedule<&Memory::respond>(now + params_.latency, this, r.release());
    }
  }
  share_bandwidth();
}

void Memory::respond(Request* r) {
  std::unique_ptr<Request> owned(r);
  tlm::tlm_generic_payload& gp = *r->gp;
  copy_data(gp);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  tlm::tlm_phase phase = tlm::BEGIN_RESP;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  in[static_cast<unsigned>(r->initiator)]->nb_transport_bw(gp, phase, delay);
  // Whatever the initiator answers (TLM_COMPLETED, END_RESP, or END_RESP
  // later through fw), the transaction is over for the memory.
  spare_.push_back(std::move(owned));
}

void Memory::on_completion(std::uint64_t generation) {
  if (generation == generation_) advance();
}

void Memory::on_delayed_start(Delayed* d) {
  std::unique_ptr<Delayed> owned(d);
  begin(*d->gp, d->initiator, false);
}

void Memory::b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  if (!check(gp)) return;
  // Answer now, as if nothing arrived after this request.
  Request* r = begin(gp, id, true);
  const double ps = r && r->rate > 0 ? r->remaining / r->rate : 0.0;
  delay += to_sc_time(static_cast<Tick>(std::ceil(ps)) + params_.latency);
  copy_data(gp);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

tlm::tlm_sync_enum Memory::nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                           sc_core::sc_time& delay) {
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  if (phase != tlm::BEGIN_REQ) {
    SC_REPORT_ERROR(name(), "unexpected phase on the base protocol");
    return tlm::TLM_COMPLETED;
  }
  if (!check(gp)) return tlm::TLM_COMPLETED;  // early completion with the error status
  if (delay == sc_core::SC_ZERO_TIME) {
    begin(gp, id, false);
  } else {
    calendar_.schedule<&Memory::on_delayed_start>(now_ticks() + delay.value(), this, new Delayed{&gp, id});
  }
  // Accepted as it arrives (requests queue inside): END_REQ at the request's
  // own time, `delay` as it came (never before the BEGIN_REQ it answers).
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

bool Memory::get_direct_mem_ptr(int, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
  const std::uint64_t a = gp.get_address();
  if (!params_.store_data || a < params_.base || a - params_.base >= params_.size_bytes) return false;
  // One page at a time: storage is allocated page by page.
  const std::uint64_t o = (a - params_.base) / kPageBytes * kPageBytes;
  dmi.set_dmi_ptr(page(o));
  dmi.set_start_address(params_.base + o);
  dmi.set_end_address(params_.base + std::min(o + kPageBytes, params_.size_bytes) - 1);
  dmi.allow_read_write();
  const sc_core::sc_time per_access =
      to_sc_time(params_.latency + channel_bandwidth_.time_for(static_cast<double>(params_.interleave_bytes)));
  dmi.set_read_latency(per_access);
  dmi.set_write_latency(per_access);
  return true;
}

unsigned int Memory::transport_dbg(int, tlm::tlm_generic_payload& gp) {
  if (!check(gp)) return 0;
  const auto saved = stats_;
  copy_data(gp);
  stats_ = saved;  // debug accesses are not traffic
  return static_cast<unsigned>(gp.get_data_length());
}

}  // namespace fabricsim
