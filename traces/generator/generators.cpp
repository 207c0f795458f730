#include "traces/generator/generators.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "traces/generator/et_writer.h"
#include "traces/reader/et_reader.h"

namespace fabricsim::traces {

std::vector<std::string> write_collective_microbenchmark(const std::string& prefix, int npus, int comm_type,
                                                         std::uint64_t bytes, int iterations) {
  if (npus < 1) throw std::invalid_argument("need at least one NPU");
  if (iterations < 1) throw std::invalid_argument("need at least one iteration");
  // comm_size is each NPU's input (Chakra's meaning): an all-gather of
  // `bytes`, as nccl-tests sizes it, has each NPU bring bytes / npus.
  std::uint64_t comm_size = bytes;
  if (comm_type == ChakraProtoMsg::ALL_GATHER) {
    if (bytes % static_cast<std::uint64_t>(npus) != 0) {
      throw std::invalid_argument("an all-gather of " + std::to_string(bytes) + " bytes over " + std::to_string(npus) +
                                  " NPUs: the size must be a multiple of the NPUs (each brings size / NPUs)");
    }
    comm_size = bytes / static_cast<std::uint64_t>(npus);
  }
  std::vector<std::string> files;
  for (int r = 0; r < npus; ++r) {
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    EtWriter w(path);
    for (int i = 0; i < iterations; ++i) {
      ChakraProtoMsg::Node n;
      n.set_id(static_cast<std::uint64_t>(i));
      n.set_name(std::string(collective_name(comm_type)) + "_" + std::to_string(i));
      n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
      if (i > 0) n.add_data_deps(static_cast<std::uint64_t>(i - 1));
      add_bool(n, "is_cpu_op", false);
      add_int(n, "comm_type", comm_type);
      add_int(n, "comm_size", static_cast<std::int64_t>(comm_size));
      w.write(n);
    }
    w.close();
    files.push_back(path);
  }
  return files;
}

namespace {

/// Builds one rank's node list, each node depending on the ones named.
class NodeList {
 public:
  explicit NodeList(const std::string& path) : w_(path) {}
  std::uint64_t add(ChakraProtoMsg::Node& n, std::initializer_list<std::int64_t> deps) {
    n.set_id(next_);
    for (std::int64_t d : deps) {
      if (d >= 0) n.add_data_deps(static_cast<std::uint64_t>(d));
    }
    w_.write(n);
    return next_++;
  }
  std::int64_t compute(const std::string& name, double num_ops, std::uint64_t tensor_bytes, double us,
                       std::initializer_list<std::int64_t> deps) {
    ChakraProtoMsg::Node n;
    n.set_name(name);
    n.set_type(ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(static_cast<std::uint64_t>(us));
    add_bool(n, "is_cpu_op", false);
    if (num_ops > 0) add_uint(n, "num_ops", static_cast<std::uint64_t>(num_ops));
    if (tensor_bytes) add_uint(n, "tensor_size", tensor_bytes);
    return static_cast<std::int64_t>(add(n, deps));
  }
  std::int64_t collective(const std::string& name, int comm_type, std::uint64_t bytes, const std::string& pg,
                          std::initializer_list<std::int64_t> deps) {
    ChakraProtoMsg::Node n;
    n.set_name(name);
    n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    add_bool(n, "is_cpu_op", false);
    add_int(n, "comm_type", comm_type);
    add_uint(n, "comm_size", bytes);
    if (!pg.empty()) add_string(n, "pg_name", pg);
    return static_cast<std::int64_t>(add(n, deps));
  }
  /// A process group, as a metadata node (pg_name and ranks), so the trace
  /// runs without a comm-groups file.
  void group(const std::string& name, const std::vector<int>& ranks) {
    ChakraProtoMsg::Node n;
    n.set_name("process_group " + name);
    n.set_type(ChakraProtoMsg::METADATA_NODE);
    add_string(n, "pg_name", name);
    auto* a = n.add_attr();
    a->set_name("ranks");
    for (int r : ranks) a->mutable_int64_list()->add_values(r);
    add(n, {});
  }
  std::int64_t p2p(bool send, const std::string& name, int peer, std::int64_t tag, std::uint64_t bytes,
                   std::initializer_list<std::int64_t> deps) {
    ChakraProtoMsg::Node n;
    n.set_name(name);
    n.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
    add_bool(n, "is_cpu_op", false);
    add_int(n, send ? "comm_dst" : "comm_src", peer);
    add_int(n, "comm_tag", tag);
    add_uint(n, "comm_size", bytes);
    return static_cast<std::int64_t>(add(n, deps));
  }
  void close() { w_.close(); }

 private:
  EtWriter w_;
  std::uint64_t next_ = 0;
};

std::string rank_path(const std::string& prefix, int r) {
  return prefix + "." + std::to_string(r) + ".et";
}

}  // namespace

std::vector<std::string> write_pipeline(const std::string& prefix, int stages, int microbatches, double compute_us,
                                        std::uint64_t bytes) {
  if (stages < 1 || microbatches < 1) throw std::invalid_argument("need at least one stage and one microbatch");
  std::vector<std::string> files;
  for (int s = 0; s < stages; ++s) {
    NodeList t(rank_path(prefix, s));
    std::int64_t last = -1;
    for (int k = 0; k < microbatches; ++k) {
      std::int64_t in = -1;
      if (s > 0) in = t.p2p(false, "recv_activation_" + std::to_string(k), s - 1, k, bytes, {});
      last = t.compute("forward_" + std::to_string(k), 0, 0, compute_us, {last, in});
      if (s < stages - 1) t.p2p(true, "send_activation_" + std::to_string(k), s + 1, k, bytes, {last});
    }
    for (int k = microbatches - 1; k >= 0; --k) {
      std::int64_t in = -1;
      const std::int64_t tag = microbatches + k;
      if (s < stages - 1) in = t.p2p(false, "recv_gradient_" + std::to_string(k), s + 1, tag, bytes, {});
      last = t.compute("backward_" + std::to_string(k), 0, 0, compute_us, {last, in});
      if (s > 0) t.p2p(true, "send_gradient_" + std::to_string(k), s - 1, tag, bytes, {last});
    }
    t.close();
    files.push_back(rank_path(prefix, s));
  }
  return files;
}

std::vector<std::string> write_training_step(const std::string& prefix, const TrainingShape& shape) {
  const TrainingShape& x = shape;
  if (x.dp < 1 || x.tp < 1 || x.pp < 1 || x.layers < x.pp || x.microbatches < 1 || x.iterations < 1) {
    throw std::invalid_argument("bad training shape: degrees >= 1, layers >= pp, microbatches and iterations >= 1");
  }
  const int npus = x.dp * x.tp * x.pp;
  const double h = x.hidden, tokens = static_cast<double>(x.batch) * x.seq;
  const int layers_per_stage = x.layers / x.pp;
  // One layer, one tensor-parallel shard: QKV and output projections (4h^2)
  // and the MLP (8h^2) as matmuls, 2 FLOPs per multiply-add, plus attention
  // scores and values (4 * seq * h per token).
  const double fwd_flops = (24.0 * h * h * tokens + 4.0 * tokens * x.seq * h) / x.tp;
  const double params = 12.0 * h * h / x.tp;  // per layer and shard
  const auto eb = static_cast<std::uint64_t>(x.element_bytes);
  const auto activation = static_cast<std::uint64_t>(tokens * h) * eb;
  const std::uint64_t fwd_bytes =
      static_cast<std::uint64_t>(params) * eb + 10 * activation / static_cast<std::uint64_t>(x.tp);
  const auto grad_bytes = static_cast<std::uint64_t>(params * layers_per_stage) * eb;

  auto tp_group = [&](int d, int p) { return "tp_" + std::to_string(d) + "_" + std::to_string(p); };
  auto dp_group = [&](int t, int p) { return "dp_" + std::to_string(t) + "_" + std::to_string(p); };
  auto rank_of = [&](int t, int p, int d) { return t + x.tp * (p + x.pp * d); };

  auto tp_ranks = [&](int d, int p) {
    std::vector<int> g;
    for (int t = 0; t < x.tp; ++t) g.push_back(rank_of(t, p, d));
    return g;
  };
  auto dp_ranks = [&](int t, int p) {
    std::vector<int> g;
    for (int d = 0; d < x.dp; ++d) g.push_back(rank_of(t, p, d));
    return g;
  };

  std::vector<std::string> files;
  for (int r = 0; r < npus; ++r) {
    const int t = r % x.tp, p = (r / x.tp) % x.pp, d = r / (x.tp * x.pp);
    NodeList list(rank_path(prefix, r));
    if (x.tp > 1) list.group(tp_group(d, p), tp_ranks(d, p));
    if (x.dp > 1) list.group(dp_group(t, p), dp_ranks(t, p));
    std::int64_t last = -1;
    for (int it = 0; it < x.iterations; ++it) {
      const std::string step = "s" + std::to_string(it) + "_";
      const std::int64_t tag_base = static_cast<std::int64_t>(it) * 2 * x.microbatches;
      for (int k = 0; k < x.microbatches; ++k) {
        const std::string mb = step + "mb" + std::to_string(k) + "_";
        std::int64_t in = -1;
        if (p > 0) in = list.p2p(false, mb + "recv_activation", rank_of(t, p - 1, d), tag_base + k, activation, {});
        for (int l = 0; l < layers_per_stage; ++l) {
          const std::string layer = mb + "layer" + std::to_string(p * layers_per_stage + l) + "_";
          last = list.compute(layer + "forward", fwd_flops, fwd_bytes, 0, {last, in});
          in = -1;
          if (x.tp > 1) {
            last = list.collective(layer + "forward_tp_all_reduce_attention", 0, activation, tp_group(d, p), {last});
            last = list.collective(layer + "forward_tp_all_reduce_mlp", 0, activation, tp_group(d, p), {last});
          }
        }
        if (p < x.pp - 1)
          list.p2p(true, mb + "send_activation", rank_of(t, p + 1, d), tag_base + k, activation, {last});
      }
      for (int k = x.microbatches - 1; k >= 0; --k) {
        const std::string mb = step + "mb" + std::to_string(k) + "_";
        const std::int64_t tag = tag_base + x.microbatches + k;
        std::int64_t in = -1;
        if (p < x.pp - 1) in = list.p2p(false, mb + "recv_gradient", rank_of(t, p + 1, d), tag, activation, {});
        for (int l = layers_per_stage - 1; l >= 0; --l) {
          const std::string layer = mb + "layer" + std::to_string(p * layers_per_stage + l) + "_";
          last = list.compute(layer + "backward", 2 * fwd_flops, 2 * fwd_bytes, 0, {last, in});
          in = -1;
          if (x.tp > 1) {
            last = list.collective(layer + "backward_tp_all_reduce_mlp", 0, activation, tp_group(d, p), {last});
            last = list.collective(layer + "backward_tp_all_reduce_attention", 0, activation, tp_group(d, p), {last});
          }
        }
        if (p > 0) list.p2p(true, mb + "send_gradient", rank_of(t, p - 1, d), tag, activation, {last});
      }
      if (x.dp > 1) last = list.collective(step + "dp_all_reduce_gradients", 0, grad_bytes, dp_group(t, p), {last});
      // Adam: about 10 FLOPs per parameter, bound by reading and writing
      // weights, gradients and its two moments.
      last = list.compute(step + "optimizer", 10.0 * params * layers_per_stage, 3 * grad_bytes, 0, {last});
    }
    list.close();
    files.push_back(rank_path(prefix, r));
  }
  // The groups again in ASTRA-sim's comm-groups format (whole or absent),
  // for ASTRA-sim, which does not read them from the traces.
  const std::string json_path = prefix + ".comm_groups.json";
  std::ostringstream json;
  json << "{";
  bool first = true;
  auto group = [&](const std::string& name, const std::vector<int>& ranks) {
    json << (first ? "\n" : ",\n") << "  \"" << name << "\": [";
    for (std::size_t i = 0; i < ranks.size(); ++i) json << (i ? ", " : "") << ranks[i];
    json << "]";
    first = false;
  };
  for (int d = 0; d < x.dp; ++d) {
    for (int p = 0; p < x.pp; ++p) {
      if (x.tp > 1) group(tp_group(d, p), tp_ranks(d, p));
    }
  }
  for (int t = 0; t < x.tp; ++t) {
    for (int p = 0; p < x.pp; ++p) {
      if (x.dp > 1) group(dp_group(t, p), dp_ranks(t, p));
    }
  }
  json << "\n}\n";
  write_output_file(json_path, json.str(), "process groups");
  return files;
}

std::vector<std::string> write_dlrm(const std::string& prefix, const DlrmShape& x) {
  if (x.npus < 1 || x.batch < 1 || x.dense_features < 1 || x.sparse_features < 1 || x.embedding_dim < 1 ||
      x.pooling < 1 || x.bottom_layers < 0 || x.bottom_width < 1 || x.top_layers < 0 || x.top_width < 1 ||
      x.element_bytes < 1 || x.iterations < 1) {
    throw std::invalid_argument("bad DLRM shape: every size must be at least 1 (hidden layers at least 0)");
  }
  const double b = x.batch, d = x.embedding_dim, eb = x.element_bytes;
  // Bottom MLP: dense features -> width, `bottom_layers` x (width -> width), width -> embedding dim.
  const double bottom_params = x.dense_features * static_cast<double>(x.bottom_width) +
                               x.bottom_layers * static_cast<double>(x.bottom_width) * x.bottom_width +
                               static_cast<double>(x.bottom_width) * d;
  // Interaction: pairwise dot products of the (tables + 1) vectors, with the
  // bottom output beside them, feed the top MLP: that input -> width,
  // `top_layers` x (width -> width), width -> 1.
  const double vectors = x.sparse_features + 1.0;
  const double interaction_out = vectors * (vectors - 1) / 2 + d;
  const double top_params =
      interaction_out * x.top_width + x.top_layers * static_cast<double>(x.top_width) * x.top_width + x.top_width;
  const double interaction_flops = 2 * b * vectors * vectors * d;
  // Embeddings: this NPU's share of the lookups for the global batch, which
  // equals the lookups of its own samples in every table.
  const double lookups = b * x.sparse_features * x.pooling;                        // rows read
  const auto pooled = static_cast<std::uint64_t>(b * x.sparse_features * d * eb);  // what the all-to-all moves per NPU
  const auto lookup_bytes = static_cast<std::uint64_t>(lookups * d * eb);
  const auto bottom_bytes = static_cast<std::uint64_t>(bottom_params * eb);
  const auto top_bytes = static_cast<std::uint64_t>(top_params * eb);
  const auto bottom_act =
      static_cast<std::uint64_t>(b * (x.dense_features + (x.bottom_layers + 1.0) * x.bottom_width) * eb);
  const auto top_act = static_cast<std::uint64_t>(b * (interaction_out + (x.top_layers + 1.0) * x.top_width) * eb);

  std::vector<std::string> files;
  for (int r = 0; r < x.npus; ++r) {
    NodeList list(rank_path(prefix, r));
    std::int64_t end = -1;
    for (int it = 0; it < x.iterations; ++it) {
      const std::string i = "iter" + std::to_string(it) + "_";
      const std::int64_t bottom_fwd =
          list.compute(i + "bottom_mlp_forward", 2 * b * bottom_params, bottom_bytes + bottom_act, 0, {end});
      const std::int64_t lookup = list.compute(i + "embedding_lookup", lookups * d, lookup_bytes + pooled, 0, {end});
      const std::int64_t a2a_fwd =
          list.collective(i + "embedding_all_to_all", ChakraProtoMsg::ALL_TO_ALL, pooled, "", {lookup});
      const std::int64_t top_fwd =
          list.compute(i + "interaction_top_mlp_forward", interaction_flops + 2 * b * top_params,
                       top_bytes + top_act + pooled, 0, {bottom_fwd, a2a_fwd});
      const std::int64_t top_bwd =
          list.compute(i + "top_mlp_interaction_backward", 2 * (interaction_flops + 2 * b * top_params),
                       2 * (top_bytes + top_act) + pooled, 0, {top_fwd});
      const std::int64_t ar_top =
          list.collective(i + "top_mlp_all_reduce", ChakraProtoMsg::ALL_REDUCE, top_bytes, "", {top_bwd});
      const std::int64_t a2a_bwd =
          list.collective(i + "embedding_gradient_all_to_all", ChakraProtoMsg::ALL_TO_ALL, pooled, "", {top_bwd});
      const std::int64_t update =
          list.compute(i + "embedding_update", lookups * d, 2 * lookup_bytes + pooled, 0, {a2a_bwd});
      const std::int64_t bottom_bwd = list.compute(i + "bottom_mlp_backward", 2 * 2 * b * bottom_params,
                                                   2 * (bottom_bytes + bottom_act), 0, {top_bwd});
      const std::int64_t ar_bottom =
          list.collective(i + "bottom_mlp_all_reduce", ChakraProtoMsg::ALL_REDUCE, bottom_bytes, "", {bottom_bwd});
      end = list.compute(i + "optimizer", 10 * (bottom_params + top_params), 3 * (bottom_bytes + top_bytes), 0,
                         {ar_top, ar_bottom, update});
    }
    list.close();
    files.push_back(rank_path(prefix, r));
  }
  return files;
}

std::vector<std::string> write_offload(const std::string& prefix, int npus, int steps, double compute_us,
                                       std::uint64_t gradient_bytes, std::uint64_t state_bytes) {
  std::vector<std::string> files;
  for (int r = 0; r < npus; ++r) {
    NodeList t(rank_path(prefix, r));
    std::int64_t last = -1, stored = -1;
    for (int k = 0; k < steps; ++k) {
      const std::string step = "step" + std::to_string(k) + "_";
      const std::int64_t fwd = t.compute(step + "forward", 0, 0, compute_us, {last});
      const std::int64_t bwd = t.compute(step + "backward", 0, 0, 2 * compute_us, {fwd});
      // The state comes back while the backward pass runs (after the last
      // step stored it).
      ChakraProtoMsg::Node load;
      load.set_name(step + "load_optimizer_state");
      load.set_type(ChakraProtoMsg::MEM_LOAD_NODE);
      add_uint(load, "tensor_size", state_bytes);
      const auto ld = static_cast<std::int64_t>(t.add(load, {fwd, stored}));
      const std::int64_t ar = t.collective(step + "all_reduce_gradients", 0, gradient_bytes, "", {bwd});
      const std::int64_t opt = t.compute(step + "optimizer", 0, 0, compute_us / 2, {ar, ld});
      ChakraProtoMsg::Node store;
      store.set_name(step + "store_optimizer_state");
      store.set_type(ChakraProtoMsg::MEM_STORE_NODE);
      add_uint(store, "tensor_size", state_bytes);
      stored = static_cast<std::int64_t>(t.add(store, {opt}));
      last = opt;
    }
    t.close();
    files.push_back(rank_path(prefix, r));
  }
  return files;
}

std::vector<std::string> write_long_trace(const std::string& prefix, int npus, std::uint64_t nodes,
                                          std::uint64_t collective_every, bool independent,
                                          std::uint64_t collective_bytes) {
  std::vector<std::string> files;
  for (int r = 0; r < npus; ++r) {
    NodeList t(rank_path(prefix, r));
    std::int64_t last = -1;
    for (std::uint64_t i = 0; i < nodes; ++i) {
      const std::int64_t after = independent ? -1 : last;
      if (collective_every && i % collective_every == collective_every - 1) {
        last = t.collective("all_reduce_" + std::to_string(i), 0, collective_bytes, "", {after});
      } else {
        last = t.compute("compute_" + std::to_string(i), 1e9, 1 << 20, 10, {after});
      }
    }
    t.close();
    files.push_back(rank_path(prefix, r));
  }
  return files;
}

}  // namespace fabricsim::traces
