#include "models/flow/flow_fabric.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "tlm/util/errors.h"

namespace fabricsim {

/// One message on its way: its flows, and what waits for it.
struct FlowFabric::Transfer {
  Message* message = nullptr;
  std::uint32_t endpoint = 0;  // the sender's
  std::uint32_t flows_left = 0;
  Tick left_at = 0;              // when its last flow moved its last byte
  Tick arrive_at = 0;            // when that byte reached the destination
  bool sending = false;          // posted and not yet all sent
  Transfer* behind = nullptr;    // the next message of its queue to the same destination
  std::int64_t queue_slot = -1;  // its port's entry in last_posted_, if it is in a queue's order
  bool striped = false;          // spread over its NIC's ports towards the destination
  std::uint16_t port = 0;        // else the one it leaves by
};

FlowFabric::FlowFabric(const sc_core::sc_module_name& name, const Params& params, Graph graph)
    : sc_core::sc_module(name), params_(params), graph_(std::move(graph)) {
  if (params_.nic.mtu_bytes == 0) throw std::invalid_argument(std::string(this->name()) + ": mtu_bytes must be > 0");
  if (params_.queue_pairs == 0) params_.queue_pairs = 1;
  const std::size_t nodes = graph_.nodes.size();
  routes_.resize(nodes);
  endpoint_of_node_.assign(nodes, -1);
  for (std::uint32_t u = 0; u < nodes; ++u) {
    const Graph::Node& n = graph_.nodes[u];
    for (std::uint32_t l : n.ports) {
      if (l >= graph_.links.size() || graph_.links[l].from != u) {
        throw std::invalid_argument(std::string(this->name()) + ": node " + n.name +
                                    " has a port that is not its link");
      }
    }
    if (!n.endpoint) continue;
    if (n.ports.empty()) throw std::invalid_argument(std::string(this->name()) + ": " + n.name + " has no port");
    endpoint_of_node_[u] = static_cast<int>(node_of_endpoint_.size());
    node_of_endpoint_.push_back(u);
    if (n.address >= endpoint_of_address_.size()) endpoint_of_address_.resize(n.address + 1, -1);
    endpoint_of_address_[n.address] = endpoint_of_node_[u];
  }
  const std::size_t endpoints = node_of_endpoint_.size();
  in.init(endpoints);
  out.init(endpoints);
  for (std::size_t e = 0; e < endpoints; ++e) {
    in[e].register_nb_transport_fw<&FlowFabric::in_fw>(this, static_cast<int>(e));
    out[e].register_nb_transport_bw<&FlowFabric::out_bw>(this, static_cast<int>(e));
    to_sender_.emplace_back(in[e]);
    to_receiver_.emplace_back(out[e]);
  }
  // A resource per link direction with a limit, and per NIC injection cap.
  for (const Graph::Link& l : graph_.links) {
    resource_of_link_.push_back(
        l.bandwidth.is_unlimited() ? -1 : static_cast<std::int64_t>(shares_.add_resource(l.bandwidth.bytes_per_ps())));
  }
  for (std::size_t e = 0; e < endpoints; ++e) {
    resource_of_endpoint_.push_back(
        params_.nic.injection.is_unlimited()
            ? -1
            : static_cast<std::int64_t>(shares_.add_resource(params_.nic.injection.bytes_per_ps())));
  }
  for (std::size_t e = 0; e < endpoints; ++e) {
    port_base_.push_back(static_cast<std::uint32_t>(last_posted_.size()));
    last_posted_.resize(last_posted_.size() + graph_.nodes[node_of_endpoint_[e]].ports.size(), nullptr);
  }
  link_stats_.resize(graph_.links.size());
}

FlowFabric::~FlowFabric() {
  for (Transfer* t : free_transfers_) delete t;
}

Tick FlowFabric::dma_time(const Message& m, std::uint32_t endpoint) const {
  if (params_.dma_latency == 0 && params_.dma_rate.is_unlimited()) return 0;
  if (m.kind == MessageKind::kPullRequest || m.bytes == 0) return 0;  // nothing to read or write
  if (!graph_.nodes[node_of_endpoint_[endpoint]].dma) return 0;       // a memory node's NIC has no DMA
  // The NIC streams a frame to the wire as it is read (and writes one as it
  // comes in): only the part of the first (last) frame's transfer its port
  // cannot hide, when memory is slower than the port, adds to the latency.
  const double frame = static_cast<double>(std::min(m.bytes, params_.nic.segment_bytes));
  const Tick read = params_.dma_rate.time_for(frame);
  const Tick wire = graph_.links[graph_.nodes[node_of_endpoint_[endpoint]].ports.front()].bandwidth.time_for(frame);
  return params_.dma_latency + (read > wire ? read - wire : 0);
}

bool FlowFabric::striped(std::uint32_t node, const Message& m) const {
  if (graph_.nodes[node].ports.size() <= 1 || !params_.nic.stripe || m.kind != MessageKind::kUnicast || m.hardware ||
      routes_[node].dimension_order()) {
    return false;
  }
  std::uint16_t count = 0;
  routes_[node].choices(m.dst, &count);
  return count > 1;
}

Tick FlowFabric::link_busy(std::uint32_t link) const {
  return graph_.links[link].bandwidth.time_for(static_cast<double>(link_stats_[link].wire_bytes));
}

tlm::tlm_sync_enum FlowFabric::in_fw(int endpoint, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) throw std::logic_error(std::string(name()) + ": unexpected phase on in");
  Transfer* t;
  if (!free_transfers_.empty()) {
    t = free_transfers_.back();
    free_transfers_.pop_back();
    *t = Transfer{};
  } else {
    t = new Transfer;
  }
  t->message = Message::cast(gp);
  t->endpoint = static_cast<std::uint32_t>(endpoint);
  ++in_flight_;
  if (delay == sc_core::SC_ZERO_TIME) {
    post(t);
  } else {
    calendar_.schedule<&FlowFabric::post>(absolute(delay), this, t);
  }
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum FlowFabric::out_bw(int, tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) {
  throw std::logic_error(std::string(name()) + ": the sink of a message answers TLM_COMPLETED, not through bw");
}

void FlowFabric::post(Transfer* t) {
  Message& m = *t->message;
  m.nic.posted_at = now_ticks();
  if (m.dst >= endpoint_of_address_.size() || endpoint_of_address_[m.dst] < 0) {
    throw std::logic_error(std::string(name()) + ": a message for fabric address " + std::to_string(m.dst) +
                           ", which no endpoint of a flow fabric has (switch reduction units are not modelled as "
                           "flows)");
  }
  if (static_cast<int>(t->endpoint) == endpoint_of_address_[m.dst]) {
    throw std::logic_error(std::string(name()) + ": message addressed to itself");
  }
  ++stats_.messages;
  t->sending = true;
  // A queue's unicast messages to one destination go in order, port by
  // port, as at the NIC (Nic::post): one posted while the one before on its
  // port is still sending starts when that one has left. A striped message
  // takes turns with the others on every port, and orders nothing.
  const std::uint32_t u = node_of_endpoint_[t->endpoint];
  t->striped = striped(u, m);
  t->port = t->striped || graph_.nodes[u].ports.size() == 1 ? 0 : routes_[u].port(m.dst, m.flow);
  if (!m.hardware && m.notice == Message::Notice::kNone && m.kind == MessageKind::kUnicast && !t->striped) {
    const std::size_t slot = port_base_[t->endpoint] + t->port;
    Transfer* last = last_posted_[slot];
    last_posted_[slot] = m.queue != 0 ? t : nullptr;
    t->queue_slot = m.queue != 0 ? static_cast<std::int64_t>(slot) : -1;
    if (last && last->sending && m.queue == last->message->queue && m.dst == last->message->dst) {
      last->behind = t;
      return;
    }
  }
  const Tick ready = ready_at(m) + dma_time(m, t->endpoint);
  if (ready > now_ticks()) {
    calendar_.schedule<&FlowFabric::start>(ready, this, t);
  } else {
    start(t);
  }
}

void FlowFabric::start(Transfer* t) {
  Message& m = *t->message;
  const std::uint32_t u = node_of_endpoint_[t->endpoint];
  const Graph::Node& node = graph_.nodes[u];
  const double wire = static_cast<double>(params_.nic.wire_bytes(m.bytes, m.kind, m.protocol));
  const double payload = m.kind == MessageKind::kPullRequest ? 0.0 : static_cast<double>(m.bytes);
  // A striping NIC spreads a message over every port towards its
  // destination, each taking frames as fast as it sends them: by rate.
  std::uint16_t count = 1;
  const std::uint16_t* ports = &t->port;
  if (t->striped) ports = routes_[u].choices(m.dst, &count);
  // By rate; evenly if a port has no limit (its rate says nothing).
  double sum = 0;
  for (std::uint16_t i = 0; i < count; ++i) {
    const Bandwidth bw = graph_.links[node.ports[ports[i]]].bandwidth;
    sum = bw.is_unlimited() || sum < 0 ? -1 : sum + bw.bytes_per_ps();
  }
  // Queue pairs: frame i goes on queue pair i mod n, each its own flow to
  // ECMP (Nic::queue_pair_flow); a message of fewer frames uses fewer.
  const std::uint64_t frames = std::max<std::uint64_t>(
      1, (m.bytes + params_.nic.segment_bytes - 1) / std::max<std::uint64_t>(1, params_.nic.segment_bytes));
  const std::uint32_t pairs =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(params_.queue_pairs, count == 1 ? frames : 1));
  t->left_at = now_ticks();
  t->arrive_at = now_ticks();
  for (std::uint16_t i = 0; i < count; ++i) {
    const std::uint16_t p = ports[i];
    const double bw = graph_.links[node.ports[p]].bandwidth.bytes_per_ps();
    const double share = sum > 0 ? bw / sum : 1.0 / static_cast<double>(count);
    for (std::uint32_t q = 0; q < pairs; ++q) {
      const std::uint32_t flow = q == 0 ? m.flow : m.flow + q * 0x9e3779b9u;
      add_flow(t, u, p, m.dst, flow, wire * share / pairs, payload * share / pairs);
    }
  }
  if (t->flows_left == 0) sent(t);  // nothing limited its path: gone at once
}

void FlowFabric::add_flow(Transfer* t, std::uint32_t from, std::uint16_t port, Address dst, std::uint32_t flow,
                          double wire, double payload) {
  path_scratch_.clear();
  if (resource_of_endpoint_[t->endpoint] >= 0) {
    path_scratch_.push_back(static_cast<std::uint32_t>(resource_of_endpoint_[t->endpoint]));
  }
  Tick latency = 0;
  std::uint32_t u = from;
  std::uint32_t link = graph_.nodes[u].ports[port];
  for (std::size_t hops = 0;; ++hops) {
    if (hops > graph_.nodes.size()) throw std::logic_error(std::string(name()) + ": a route that loops");
    const Graph::Link& l = graph_.links[link];
    LinkStats& s = link_stats_[link];
    ++s.flows;
    s.payload_bytes += static_cast<std::uint64_t>(std::llround(payload));
    s.wire_bytes += static_cast<std::uint64_t>(std::llround(wire));
    if (resource_of_link_[link] >= 0) {
      const auto r = static_cast<std::uint32_t>(resource_of_link_[link]);
      path_scratch_.push_back(r);
      s.peak_flows = std::max<std::uint32_t>(s.peak_flows, static_cast<std::uint32_t>(shares_.flows_on(r) + 1));
    }
    latency += l.latency;
    u = l.to;
    const Graph::Node& n = graph_.nodes[u];
    if (n.endpoint && n.address == dst) break;
    latency += n.hop_latency;
    link = n.ports[n.ports.size() == 1 ? 0 : routes_[u].port(dst, flow)];
  }
  if (path_scratch_.empty()) {  // no limit on the way: its bytes move at once
    t->arrive_at = std::max(t->arrive_at, now_ticks() + latency);
    return;
  }
  const MaxMinShares::FlowId id = shares_.add_flow(path_scratch_);
  if (id >= flows_.size()) flows_.resize(id + 1);
  FlowState& st = flows_[id];
  st.transfer = t;
  st.remaining = wire;
  st.settled_at = now_ticks();
  st.latency = latency;
  st.live = true;
  ++t->flows_left;
  ++stats_.flows;
  stats_.peak_flows = std::max(stats_.peak_flows, shares_.active_flows());
  request_rebalance();
}

void FlowFabric::request_rebalance() {
  // Every change at one time (or, with a quantum, up to its next boundary)
  // is folded into one recomputation, after the events already due then.
  if (rebalance_pending_) return;
  rebalance_pending_ = true;
  const Tick now = now_ticks();
  const Tick q = params_.quantum;
  calendar_.schedule<&FlowFabric::on_rebalance>(q == 0 || now % q == 0 ? now : (now / q + 1) * q, this);
}

void FlowFabric::on_rebalance() {
  rebalance_pending_ = false;
  if (!shares_.needs_rebalance()) return;
  const Tick now = now_ticks();
  ++stats_.rebalances;
  shares_.rebalance(
      [&](MaxMinShares::FlowId f) {
        FlowState& st = flows_[f];
        st.remaining = std::max(0.0, st.remaining - shares_.rate(f) * static_cast<double>(now - st.settled_at));
        st.settled_at = now;
        ++stats_.flows_recomputed;
      },
      [&](MaxMinShares::FlowId f) {
        FlowState& st = flows_[f];
        const double rate = shares_.rate(f);
        if (!(rate > 0)) throw std::logic_error(std::string(name()) + ": a flow was given no rate");
        ++st.generation;
        const double ps = st.remaining / rate;
        if (!(ps <= static_cast<double>(kMaxTime - now))) {
          throw ModelError(std::string(name()) +
                           ": a flow's rate fell so low that it would end past the largest "
                           "simulated time");
        }
        const Tick done = now + static_cast<Tick>(std::llround(ps));
        calendar_.schedule<&FlowFabric::on_flow_done>(done, this,
                                                      (static_cast<std::uint64_t>(st.generation) << 32) | f);
      });
}

void FlowFabric::on_flow_done(std::uint64_t key) {
  const auto id = static_cast<MaxMinShares::FlowId>(key & 0xffffffffu);
  FlowState& st = flows_[id];
  if (!st.live || st.generation != static_cast<std::uint32_t>(key >> 32)) return;  // its rate changed since
  st.live = false;
  shares_.remove_flow(id);
  request_rebalance();
  Transfer* t = st.transfer;
  const Tick now = now_ticks();
  t->left_at = std::max(t->left_at, now);
  t->arrive_at = std::max(t->arrive_at, now + st.latency);
  if (--t->flows_left == 0) sent(t);
}

void FlowFabric::sent(Transfer* t) {
  Message& m = *t->message;
  t->sending = false;
  t->arrive_at += dma_time(m, static_cast<std::uint32_t>(endpoint_of_address_[m.dst]));  // its last frame written
  m.nic.left_at = t->left_at;
  m.nic.delivered_at = t->arrive_at;
  if (t->queue_slot >= 0 && last_posted_[static_cast<std::size_t>(t->queue_slot)] == t) {
    last_posted_[static_cast<std::size_t>(t->queue_slot)] = nullptr;
  }
  calendar_.schedule<&FlowFabric::deliver>(t->arrive_at, this, t);
  Transfer* next = t->behind;
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_core::sc_time delay = delay_until(t->left_at);
  to_sender_[t->endpoint](m.payload(), phase, delay);
  if (next) {  // after t's END_REQ, as the NIC offers the next message once the last frame is taken
    const Tick ready = ready_at(*next->message) + dma_time(*next->message, next->endpoint);
    if (ready > now_ticks()) {
      calendar_.schedule<&FlowFabric::start>(ready, this, next);
    } else {
      start(next);
    }
  }
}

void FlowFabric::deliver(Transfer* t) {
  Message& m = *t->message;
  const auto to = static_cast<std::size_t>(endpoint_of_address_[m.dst]);
  free_transfers_.push_back(t);
  --in_flight_;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  if (to_receiver_[to](m.payload(), phase, delay) != tlm::TLM_COMPLETED) {
    throw std::logic_error(std::string(name()) + ": the receiver must complete a delivered message at once");
  }
}

std::vector<std::string> FlowFabric::describe_unfinished() const {
  std::vector<std::string> out;
  if (in_flight_ == 0) return out;
  std::ostringstream os;
  os << name() << ": " << in_flight_ << " messages posted and not delivered, " << shares_.active_flows()
     << " flows moving";
  out.push_back(os.str());
  return out;
}

}  // namespace fabricsim
