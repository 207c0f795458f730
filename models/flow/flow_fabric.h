// A whole fabric as flows: the flow-level model that stands in for a
// fabric's NICs, links and switches when its platform asks for it
// (`transport: { model: flow }`, docs/flow-model.md).
//
// A message posted by an NPU (or a memory node) waits out its NIC's
// software overhead, as with packets, and then becomes a flow of its wire
// bytes (headers and protocol flags counted as the NIC counts them) along
// the path the fabric's routing tables give it: the same tables, salts and
// flow hashes as the packet model's switches, so the same links. A striping
// NIC splits it over its ports towards the destination by their rates, and
// queue pairs (transport.queue_pairs) each take their share of it as NCCL's
// do. Flows share every link direction, and each NIC's injection bandwidth,
// by max-min fairness (max_min_shares.h), recomputed when a flow starts or
// ends. A message has left its NIC when its last flow has moved its bytes;
// it arrives the path's latency later: every link's latency and every hop
// latency on the way (cut-through, as with packets). A queue's unicast
// messages to one destination go in order, as at the NIC.
//
// What this leaves out, by design: frames and their credits, buffers and
// queues (no head-of-line blocking, no backpressure), PFC pauses, ECN
// marks, DCQCN and window transports, drops, adaptive routing and spraying
// (flows keep their hashed path), DMA through HBM and PCIe, and switch
// reduction units. Where these matter, the packet model is the reference:
// docs/validation.md has the two side by side.
//
// Sockets: in[e] takes the messages of endpoint e (a NIC or a memory node)
// from its NPU or memory controller, out[e] hands it those addressed to it,
// the same conversation as a Nic's in and out (tlm/fabric_protocol.h).
// Statistics: stats(), link_stats(l) per link direction.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "models/flow/max_min_shares.h"
#include "models/nic/nic.h"
#include "tlm/fabric_protocol.h"
#include "tlm/kernel/calendar.h"
#include "tlm/routing_table.h"

namespace fabricsim {

class FlowFabric : public sc_core::sc_module {
 public:
  /// The fabric as the builder gives it: nodes, and links one per direction.
  struct Graph {
    struct Node {
      std::string name;
      Address address = kNoAddress;
      bool endpoint = false;             // a NIC or memory node: messages start and end here
      bool dma = false;                  // an NPU's NIC: it reads and writes its memory (Params::dma_latency)
      Tick hop_latency = 0;              // head in to head out, for traffic passing through
      std::vector<std::uint32_t> ports;  // port p leaves by link ports[p]
    };
    struct Link {
      std::uint32_t from = 0, to = 0;  // node indexes
      Bandwidth bandwidth;
      Tick latency = 0;
      std::string name;
    };
    std::vector<Node> nodes;
    std::vector<Link> links;
  };
  struct Params {
    Nic::Params nic;                // every endpoint's: overheads, packets, striping, injection
    std::uint32_t queue_pairs = 1;  // per connection (transport.queue_pairs)
    /// The NICs' DMA, as fixed costs per message (0: no memory behind the
    /// NICs): the path's latency before the message's bytes start and
    /// after they arrive, and the part of a frame's transfer at `dma_rate`
    /// the port cannot hide when memory is the slower.
    Tick dma_latency = 0;
    Bandwidth dma_rate = Bandwidth::unlimited();
    /// Rates are recomputed at most once per quantum, on its boundaries
    /// (0: whenever a flow starts or ends). A flow that starts in between
    /// moves nothing until the next boundary, and one that ends leaves its
    /// share idle until then: each start and end is late by less than a
    /// quantum, and a thousand flows ending at a thousand times cost one
    /// recomputation per quantum instead of a thousand.
    Tick quantum = 0;
  };
  struct LinkStats {
    std::uint64_t flows = 0;  // flows that crossed it
    std::uint64_t payload_bytes = 0;
    std::uint64_t wire_bytes = 0;
    std::uint32_t peak_flows = 0;  // most flows sharing it at once
  };
  struct Stats {
    std::uint64_t messages = 0;
    std::uint64_t flows = 0;
    std::uint64_t rebalances = 0;        // max-min recomputations
    std::uint64_t flows_recomputed = 0;  // their flows, summed
    std::size_t peak_flows = 0;          // most flows active at once
  };

  sc_core::sc_vector<MessageTargetSocket<FlowFabric>> in;      // per endpoint, messages to send
  sc_core::sc_vector<MessageInitiatorSocket<FlowFabric>> out;  // per endpoint, messages arrived

  FlowFabric(const sc_core::sc_module_name& name, const Params& params, Graph graph);
  ~FlowFabric() override;

  /// Node `node`'s routing table, for the builder to fill (nodes with more
  /// than one port; the others have one way out).
  RoutingTable& routes(std::uint32_t node) { return routes_[node]; }
  const RoutingTable& routes(std::uint32_t node) const { return routes_[node]; }
  /// The endpoint index (in[], out[]) of node `node`, or -1.
  int endpoint_of_node(std::uint32_t node) const { return endpoint_of_node_[node]; }
  const Graph& graph() const { return graph_; }
  const Params& params() const { return params_; }
  const Stats& stats() const { return stats_; }
  const LinkStats& link_stats(std::uint32_t link) const { return link_stats_[link]; }
  /// Time link `link` spent moving its wire bytes at full rate.
  Tick link_busy(std::uint32_t link) const;
  /// Messages posted and not yet delivered, for reports on a stuck run.
  std::size_t messages_in_flight() const { return in_flight_; }
  std::vector<std::string> describe_unfinished() const;

 private:
  struct Transfer;
  struct FlowState {
    Transfer* transfer = nullptr;
    double remaining = 0;          // wire bytes still to move
    Tick settled_at = 0;           // when `remaining` was last brought up to date
    Tick latency = 0;              // of its path
    std::uint32_t generation = 0;  // its completion event's: older ones are stale
    bool live = false;
  };

  tlm::tlm_sync_enum in_fw(int endpoint, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum out_bw(int endpoint, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  // Calendar events.
  void post(Transfer* t);                // the message reaches its NIC
  void start(Transfer* t);               // past its overhead (and its queue's message ahead): its flows begin
  void on_rebalance();                   // flows began or ended at this time: new rates
  void on_flow_done(std::uint64_t key);  // (generation << 32) | flow: it has moved its last byte
  void deliver(Transfer* t);             // its last byte has arrived

  void request_rebalance();
  /// The message has left its NIC: tell its sender, start the one queued behind.
  void sent(Transfer* t);
  /// Adds a flow of `wire` bytes from node `from` out of `port` to `dst`.
  void add_flow(Transfer* t, std::uint32_t from, std::uint16_t port, Address dst, std::uint32_t flow, double wire,
                double payload);
  Tick ready_at(const Message& m) const {
    return m.nic.posted_at + (m.hardware ? 0 : params_.nic.overhead(m.protocol));
  }
  /// What reading (writing) the first (last) frame of `m` from (to) the
  /// memory behind `endpoint` adds to its time.
  Tick dma_time(const Message& m, std::uint32_t endpoint) const;
  /// Whether node `node`'s NIC spreads `m` over several ports.
  bool striped(std::uint32_t node, const Message& m) const;

  Params params_;
  Graph graph_;
  Calendar& calendar_ = Calendar::instance();
  MaxMinShares shares_;
  std::vector<std::int64_t> resource_of_link_;      // per link: its resource (-1: unlimited)
  std::vector<std::int64_t> resource_of_endpoint_;  // per endpoint: its injection cap (-1: none)
  std::vector<RoutingTable> routes_;
  std::vector<int> endpoint_of_node_;
  std::vector<std::uint32_t> node_of_endpoint_;
  std::vector<int> endpoint_of_address_;
  std::vector<Transfer*> last_posted_;    // per endpoint port: its queue's message still sending
  std::vector<std::uint32_t> port_base_;  // per endpoint: its first port's entry in last_posted_
  std::vector<BackwardPath<MessageProtocol>> to_sender_;
  std::vector<ForwardPath<MessageProtocol>> to_receiver_;
  std::vector<FlowState> flows_;  // by MaxMinShares::FlowId
  std::vector<LinkStats> link_stats_;
  std::vector<std::uint32_t> path_scratch_;
  std::vector<Transfer*> free_transfers_;
  std::size_t in_flight_ = 0;
  bool rebalance_pending_ = false;
  Stats stats_;
};

}  // namespace fabricsim
