#include "traces/model/training_job.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "traces/model/resnet.h"

namespace fabricsim {

namespace {
[[noreturn]] void refuse(const std::string& what) {
  throw std::invalid_argument(what);
}
std::string str(std::uint64_t v) {
  return std::to_string(v);
}
}  // namespace

TrainingJob::TrainingJob(ModelSpec model, TrainingSpec training, int gpus, std::string name)
    : model_(std::move(model)), training_(training), name_(std::move(name)), gpus_(gpus) {
  if (const std::string why = model_.invalid(); !why.empty()) refuse("the model: " + why);
  const TrainingSpec& t = training_;
  if (resnet()) {
    // A ResNet trains data parallel (DDP), every GPU a whole replica.
    if (t.tp != 1 || t.pp != 1 || t.cp != 1 || t.ep != 1 || t.vp != 1) {
      refuse("a ResNet is generated data parallel only: give tp, pp, cp, ep and vp 1 (it has tp " + str(t.tp) +
             ", pp " + str(t.pp) + ", cp " + str(t.cp) + ", ep " + str(t.ep) + ", vp " + str(t.vp) + ")");
    }
    if (t.zero != 0) refuse("zero " + str(t.zero) + " for a ResNet is not generated: give zero 0 (DDP)");
    if (t.recompute != TrainingSpec::Recompute::kNone)
      refuse("recompute for a ResNet is not generated: give recompute none");
  }

  tp_ = static_cast<int>(t.tp);
  pp_ = static_cast<int>(t.pp);
  cp_ = static_cast<int>(t.cp);
  ep_ = static_cast<int>(t.ep);
  vp_ = static_cast<int>(t.vp);
  seq_ = static_cast<int>(t.seq ? t.seq : model_.seq);
  const long long model_parallel = static_cast<long long>(tp_) * pp_ * cp_;
  if (gpus_ < 1) refuse("no GPUs to run on");
  if (t.dp == 0) {
    if (gpus_ % model_parallel != 0) {
      refuse("tp x pp x cp = " + str(model_parallel) + " does not divide the " + str(gpus_) + " GPUs");
    }
    dp_ = static_cast<int>(gpus_ / model_parallel);
  } else {
    dp_ = static_cast<int>(t.dp);
    if (model_parallel * dp_ != gpus_) {
      refuse("tp x pp x cp x dp = " + str(model_parallel * dp_) + " GPUs, but the job runs on " + str(gpus_) +
             " (give dp 0 to take the GPUs left over, or --npus)");
    }
  }
  if (resnet()) {
    tp_ = pp_ = cp_ = ep_ = vp_ = 1;
    seq_ = 1;  // tokens_per_step counts images
    chunk_start_ = {0, 1};
    vocab_ = 0;
    const std::uint64_t per_replica = static_cast<std::uint64_t>(t.microbatch) * static_cast<std::uint64_t>(dp_);
    const std::uint64_t batch = t.global_batch ? t.global_batch : per_replica;
    if (batch % per_replica != 0) {
      refuse("global_batch " + str(batch) + " is not a whole number of microbatches (" + str(t.microbatch) +
             " images) on each of the " + str(dp_) + " data-parallel ranks");
    }
    m_ = static_cast<int>(batch / per_replica);
    return;
  }
  const std::uint32_t heads = model_.heads, kv = model_.kv();
  if (heads % t.tp != 0) refuse("tp " + str(t.tp) + " does not divide the " + str(heads) + " attention heads");
  if (kv % t.tp != 0 && t.tp % kv != 0) {
    refuse("tp " + str(t.tp) + " and the " + str(kv) + " key/value heads: one must divide the other");
  }
  if (model_.ffn() % t.tp != 0) refuse("tp " + str(t.tp) + " does not divide the MLP's width " + str(model_.ffn()));
  const int chunks = static_cast<int>(t.pp * t.vp);
  if (model_.layers < static_cast<std::uint32_t>(chunks)) {
    refuse("pp x vp = " + str(static_cast<std::uint64_t>(chunks)) + " pipeline chunks for " + str(model_.layers) +
           " layers: each chunk needs one at least");
  }
  {
    const int base = static_cast<int>(model_.layers) / chunks, extra = static_cast<int>(model_.layers) % chunks;
    std::vector<int> size(static_cast<std::size_t>(chunks), base + 1);
    // The chunks with one fewer: from the ends inward.
    for (int k = 0; k < chunks - extra; ++k) {
      const int at = k % 2 == 0 ? k / 2 : chunks - 1 - k / 2;
      size[static_cast<std::size_t>(at)] = base;
    }
    if (extra == 0) std::fill(size.begin(), size.end(), base);
    chunk_start_.assign(1, 0);
    for (int g = 0; g < chunks; ++g) chunk_start_.push_back(chunk_start_.back() + size[static_cast<std::size_t>(g)]);
  }
  if (t.vp > 1 && t.pp < 2) refuse("vp " + str(t.vp) + " (interleaved chunks) needs pp >= 2");
  if (t.vp > 1 && t.schedule == TrainingSpec::Schedule::kGpipe) refuse("GPipe runs one chunk per stage: give vp 1");
  if (seq_ % (t.cp * (t.cp > 1 ? 2 : 1)) != 0) {
    refuse("cp " + str(t.cp) + ": the sequence of " + str(seq_) +
           " splits into 2 x cp chunks (load-balanced causal "
           "attention), which it does not divide into");
  }
  const std::uint32_t local_seq = static_cast<std::uint32_t>(seq_) / t.cp;
  if (t.sp && t.tp > 1 && (local_seq * t.microbatch) % t.tp != 0) {
    refuse("sequence parallel splits the " + str(local_seq * t.microbatch) + " tokens of a microbatch over tp " +
           str(t.tp) + ", which does not divide them");
  }
  if (model_.experts > 0) {
    if (dp_ % ep_ != 0) refuse("ep " + str(t.ep) + " does not divide the data-parallel degree " + str(dp_));
    if (model_.experts % t.ep != 0)
      refuse("ep " + str(t.ep) + " does not divide the " + str(model_.experts) + " experts");
    if (t.tp > 1 && !t.sp) refuse("experts with tp > 1 need sequence parallel (sp: true), as Megatron-Core requires");
  } else if (t.ep > 1) {
    refuse("ep " + str(t.ep) + " for a model without experts");
  }
  if (t.zero == 3 && t.pp > 1) refuse("zero 3 (FSDP) with pipeline parallelism is not generated: give pp 1");
  const std::uint64_t per_replica = static_cast<std::uint64_t>(t.microbatch) * static_cast<std::uint64_t>(dp_);
  const std::uint64_t batch = t.global_batch ? t.global_batch : per_replica * static_cast<std::uint64_t>(pp_);
  if (batch % per_replica != 0) {
    refuse("global_batch " + str(batch) + " is not a whole number of microbatches (" + str(t.microbatch) +
           " sequences) on each of the " + str(dp_) + " data-parallel ranks");
  }
  m_ = static_cast<int>(batch / per_replica);
  if (vp_ > 1 && m_ % pp_ != 0) {
    refuse("the interleaved schedule runs microbatches in groups of pp: " + str(m_) +
           " microbatches per pipeline is not a multiple of pp " + str(pp_));
  }
  const std::uint64_t pad = static_cast<std::uint64_t>(t.vocab_multiple) * t.tp;
  vocab_ = static_cast<std::uint32_t>((model_.vocab + pad - 1) / pad * pad);
}

RankCoords TrainingJob::coords(int rank) const {
  RankCoords c;
  c.t = rank % tp_;
  rank /= tp_;
  c.c = rank % cp_;
  rank /= cp_;
  c.d = rank % dp_;
  c.p = rank / dp_;
  return c;
}

int TrainingJob::rank_of(const RankCoords& c) const {
  return c.t + tp_ * (c.c + cp_ * (c.d + dp_ * c.p));
}

std::vector<std::pair<std::string, std::vector<int>>> TrainingJob::groups_of(int rank) const {
  const RankCoords me = coords(rank);
  std::vector<std::pair<std::string, std::vector<int>>> out;
  auto add = [&](const char* kind, std::vector<int> ranks) {
    if (ranks.size() < 2) return;
    std::sort(ranks.begin(), ranks.end());
    out.emplace_back(std::string(kind) + "_" + std::to_string(ranks.front()), std::move(ranks));
  };
  std::vector<int> g;
  for (int t = 0; t < tp_; ++t) g.push_back(rank_of({t, me.c, me.d, me.p}));
  add("tp", g);
  if (tp_ > 1 && pp_ > 1 && (training_.sp || training_.scatter_gather)) add("ppg", g);  // the pipeline's gathers
  g.clear();
  for (int c = 0; c < cp_; ++c) g.push_back(rank_of({me.t, c, me.d, me.p}));
  add("cp", g);
  g.clear();
  for (int d = 0; d < dp_; ++d) {
    for (int c = 0; c < cp_; ++c) g.push_back(rank_of({me.t, c, d, me.p}));
  }
  add("dp", g);
  if (model_.experts > 0) {
    g.clear();
    const int first = me.d / ep_ * ep_;
    for (int d = first; d < first + ep_; ++d) g.push_back(rank_of({me.t, me.c, d, me.p}));
    add("ep", g);
    g.clear();
    for (int d = me.d % ep_; d < dp_; d += ep_) {
      for (int c = 0; c < cp_; ++c) g.push_back(rank_of({me.t, c, d, me.p}));
    }
    add("edp", g);
  }
  if (pp_ > 1 && model_.tied_embeddings && (me.p == 0 || me.p == pp_ - 1)) {
    add("embd", {rank_of({me.t, me.c, me.d, 0}), rank_of({me.t, me.c, me.d, pp_ - 1})});
  }
  return out;
}

std::vector<TrainingJob::Unit> TrainingJob::schedule(int stage) const {
  std::vector<Unit> out;
  const int m = m_, p = pp_, v = vp_;
  if (training_.schedule == TrainingSpec::Schedule::kGpipe) {
    for (int k = 0; k < m; ++k) out.push_back({true, 0, k});
    for (int k = 0; k < m; ++k) out.push_back({false, 0, k});
    return out;
  }
  if (v == 1) {
    const int warm = std::min(p - stage - 1, m);
    for (int k = 0; k < warm; ++k) out.push_back({true, 0, k});
    for (int i = 0; i < m - warm; ++i) {
      out.push_back({true, 0, warm + i});
      out.push_back({false, 0, i});
    }
    for (int k = m - warm; k < m; ++k) out.push_back({false, 0, k});
    return out;
  }
  // Megatron's interleaved 1F1B: forward k runs chunk (k / p) % v of
  // microbatch (k / pv) p + k % p; backwards take the chunks in reverse.
  const int total = m * v;
  const int warm = std::min((p - stage - 1) * 2 + (v - 1) * p, total);
  auto fwd = [&](int k) { return Unit{true, (k / p) % v, (k / (p * v)) * p + k % p}; };
  auto bwd = [&](int k) { return Unit{false, v - 1 - (k / p) % v, (k / (p * v)) * p + k % p}; };
  for (int k = 0; k < warm; ++k) out.push_back(fwd(k));
  for (int i = 0; i < total - warm; ++i) {
    out.push_back(fwd(warm + i));
    out.push_back(bwd(i));
  }
  for (int k = total - warm; k < total; ++k) out.push_back(bwd(k));
  return out;
}

std::vector<std::uint32_t> TrainingJob::stage_layers(int stage) const {
  std::vector<std::uint32_t> out;
  for (int c = 0; c < vp_; ++c) {
    const int g = c * pp_ + stage;
    for (int l = first_layer(g); l < first_layer(g) + chunk_layers(g); ++l)
      out.push_back(static_cast<std::uint32_t>(l));
  }
  return out;
}

TrainingJob::LayerParams TrainingJob::layer_params(std::uint32_t layer) const {
  const ModelSpec& m = model_;
  const double t = tp_, h = m.hidden, dh = m.dhead();
  const double q = m.heads / t * dh;
  const double kv = (m.kv() >= static_cast<std::uint32_t>(tp_) ? m.kv() / t : 1.0) * dh;
  LayerParams lp;
  lp.dense = h * (q + 2 * kv) + q * h;
  if (m.bias) lp.dense += q + 2 * kv + h;
  lp.dense += (m.norm == ModelSpec::Norm::kLayerNorm ? 2 : 1) * 2 * h;
  const double matrices = m.mlp == ModelSpec::Mlp::kSwiglu ? 3 : 2;
  auto mlp = [&](double width) { return matrices * h * width + (m.bias ? (matrices - 1) * width + h : 0.0); };
  if (m.moe_layer(layer)) {
    lp.dense += h * m.experts;                           // the router, whole on every rank
    lp.dense += m.shared_experts * mlp(m.expert_ffn());  // shared experts, whole on every rank
    lp.experts = static_cast<double>(m.experts) / ep_ * mlp(m.expert_ffn());
  } else {
    lp.dense += mlp(m.ffn() / t);
  }
  return lp;
}

std::pair<double, double> TrainingJob::local_params(int rank) const {
  if (resnet()) return {static_cast<double>(resnet_params(model_)), 0.0};
  const RankCoords me = coords(rank);
  double dense = 0, experts = 0;
  for (const std::uint32_t l : stage_layers(me.p)) {
    const LayerParams lp = layer_params(l);
    dense += lp.dense;
    experts += lp.experts;
  }
  const double h = model_.hidden, table = static_cast<double>(vocab_) / tp_ * h;
  if (me.p == 0) {
    dense += table;
    if (model_.position == ModelSpec::Position::kLearned) dense += static_cast<double>(model_.seq) * h;
  }
  if (me.p == pp_ - 1) {
    dense += (model_.norm == ModelSpec::Norm::kLayerNorm ? 2 : 1) * h;  // the final norm
    if (!model_.tied_embeddings || pp_ > 1) dense += table;             // the LM head's own (or tied) copy
  }
  return {dense, experts};
}

double TrainingJob::tokens_per_step() const {
  return static_cast<double>(m_) * training_.microbatch * dp_ * seq_;
}

namespace {
/// One layer's forward matmul FLOPs per token (Megatron's way: dense
/// attention), whole (before the parallel split).
double layer_forward_flops_per_token(const ModelSpec& m, std::uint32_t layer, double seq) {
  const double h = m.hidden, q = static_cast<double>(m.heads) * m.dhead(), k = static_cast<double>(m.kv()) * m.dhead();
  double f = 2 * h * (q + 2 * k) + 2 * q * h;  // QKV, output projection
  f += 2 * 2 * seq * q;                        // scores and attention over values (dense, as Megatron counts)
  const double matrices = m.mlp == ModelSpec::Mlp::kSwiglu ? 3 : 2;
  if (m.moe_layer(layer)) {
    f += 2 * h * m.experts;  // the router
    f += (m.top_k + m.shared_experts) * matrices * 2 * h * m.expert_ffn();
  } else {
    f += matrices * 2 * h * m.ffn();
  }
  return f;
}
}  // namespace

double TrainingJob::model_flops() const {
  const double tokens = tokens_per_step();
  if (resnet()) return 3 * tokens * 2 * resnet_forward_macs(model_);  // tokens: images
  double layers = 0;
  for (std::uint32_t l = 0; l < model_.layers; ++l) layers += layer_forward_flops_per_token(model_, l, seq_);
  const double head = 2.0 * model_.hidden * vocab_;
  return 3 * tokens * (layers + head);  // forward, and backward twice the forward
}

double TrainingJob::step_flops() const {
  if (resnet()) return model_flops();
  if (training_.recompute != TrainingSpec::Recompute::kFull) return model_flops();
  double layers = 0;
  for (std::uint32_t l = 0; l < model_.layers; ++l) layers += layer_forward_flops_per_token(model_, l, seq_);
  return model_flops() + tokens_per_step() * layers;  // the layers' forward once more; the head is not recomputed
}

double TrainingJob::bubble_fraction() const {
  const double p = pp_, mv = static_cast<double>(m_) * vp_;
  return (p - 1) / (mv + p - 1);
}

CommVolumes TrainingJob::volumes(int rank) const {
  const RankCoords me = coords(rank);
  const TrainingSpec& tr = training_;
  CommVolumes v;
  if (resnet()) {  // DDP: every gradient all-reduced once
    if (dp_ > 1) v.dp = local_params(rank).first * tr.grad_bytes();
    return v;
  }
  const double eb = tr.element_bytes(), t = tp_;
  const double tokens = static_cast<double>(tr.microbatch) * seq_ / cp_;
  const double H = tokens * model_.hidden * eb;  // one activation, whole over the tp ranks
  const double m = m_;
  const bool sp = tr.sp && tp_ > 1;
  const bool full = tr.recompute == TrainingSpec::Recompute::kFull;
  for (int c = 0; c < vp_; ++c) {
    const int g = c * pp_ + me.p;
    for (int i = 0; i < chunk_layers(g); ++i) {
      const auto layer = static_cast<std::uint32_t>(first_layer(g) + i);
      const double blocks = model_.moe_layer(layer) ? 1 : 2;  // tp-split blocks: attention (and a dense MLP)
      if (tp_ > 1) {
        // Per block: forward AR (or AG + RS); backward AR (or AG of the
        // gradient, AG of the input again for the weight gradient, RS).
        const double fwd = sp ? 2 * H : H, bwd = sp ? 3 * H : H;
        v.tp += m * blocks * (fwd * (full ? 2 : 1) + bwd);
      }
      if (model_.moe_layer(layer) && ep_ > 1) {
        const double moe_tokens = sp ? tokens / t : tokens;
        const double a2a = moe_tokens * model_.top_k * model_.hidden * eb;
        v.ep += m * 2 * a2a * (full ? 3 : 2);  // dispatch and combine, forward (twice with recompute) and backward
      }
      if (cp_ > 1) {
        const double kv_heads = model_.kv() >= static_cast<std::uint32_t>(tp_) ? model_.kv() / t : 1.0;
        const double kv = 2 * static_cast<double>(tr.microbatch) * (seq_ / cp_) * kv_heads * model_.dhead() * eb;
        v.cp += m * (cp_ - 1) * kv *
                ((full ? 2 : 1) + 2);  // forward rings; backward sends keys, values and their gradients
      }
    }
    const bool sends_forward = g<vp_ * pp_ - 1, sends_backward = g> 0;
    const double act = (sp || (tr.scatter_gather && tp_ > 1)) ? H / t : H;
    v.pp += m * act * ((sends_forward ? 1 : 0) + (sends_backward ? 1 : 0));
  }
  if (tp_ > 1) {
    if (me.p == 0) v.tp += m * (sp ? H + H : H);  // embedding: forward AR (RS), backward AG with sp
    if (me.p == pp_ - 1) {
      v.tp += m * (sp ? 3 * H : H);  // LM head: AG, then AG again and RS backward; AR without sp
      v.tp += m * 3 * tokens * 4;    // vocabulary-parallel cross entropy: three fp32 ARs
    }
  }
  const auto [dense, experts] = local_params(rank);
  if (dp_ * cp_ > 1) {
    if (tr.zero == 3) {
      // Per layer and microbatch: the weights gathered for the forward (and
      // its recomputation) and the backward; the gradients scattered. The
      // embedding and head stay whole: their gradients scattered once.
      double layers = 0;
      for (const std::uint32_t l : stage_layers(me.p)) layers += layer_params(l).dense;
      v.dp += m * layers * (eb * (full ? 3 : 2) + tr.grad_bytes()) + (dense - layers) * tr.grad_bytes();
    } else {
      v.dp += dense * tr.grad_bytes();
      if (tr.zero >= 1) v.dp += dense * eb;  // the updated weights gathered back
    }
  }
  if (experts > 0 && dp_ / ep_ * cp_ > 1) {
    v.dp += experts * tr.grad_bytes();
    if (tr.zero >= 1) v.dp += experts * eb;
  }
  if (pp_ > 1 && model_.tied_embeddings && (me.p == 0 || me.p == pp_ - 1)) {
    v.embedding = static_cast<double>(vocab_) / tp_ * model_.hidden * tr.grad_bytes();
  }
  return v;
}

double TrainingJob::layer_activation_bytes(std::uint32_t layer) const {
  // What this generator's backward reads of one layer's forward, per
  // microbatch (docs/workload.md, "Memory").
  const TrainingSpec& tr = training_;
  const double eb = tr.element_bytes(), t = tp_, h = model_.hidden, dh = model_.dhead();
  const double tokens = static_cast<double>(tr.microbatch) * seq_ / cp_;
  const bool sp = tr.sp && tp_ > 1;
  const double split = sp ? tokens / t : tokens;                              // tokens a norm or residual holds
  if (tr.recompute == TrainingSpec::Recompute::kFull) return split * h * eb;  // the layer's input only
  const double q = model_.heads / t * dh;
  const double kv = (model_.kv() >= static_cast<std::uint32_t>(tp_) ? model_.kv() / t : 1.0) * dh;
  double b = 0;
  b += 2 * (split * h * eb + split * 8);                 // the norms' inputs and statistics
  b += tokens * h * eb;                                  // the QKV input (gathered)
  b += tokens * (q + 2 * kv) * eb;                       // q, k, v
  b += tokens * q * eb + tokens * model_.heads / t * 4;  // attention's output and log-sum-exp
  if (tr.attention == TrainingSpec::Attention::kUnfused) {
    // The softmax's output (and the dropout's output and mask) per head:
    // Korthikanti et al.'s 5as/h term.
    const double scores = static_cast<double>(tr.microbatch) * (model_.heads / t) * (seq_ / cp_) * (seq_ / cp_);
    b += scores * eb * (tr.dropout > 0 ? 2 : 1) + (tr.dropout > 0 ? scores : 0);
  }
  if (tr.dropout > 0) b += 2 * split;  // the two bias-dropout-adds' masks
  const double matrices = model_.mlp == ModelSpec::Mlp::kSwiglu ? 2 : 1;
  if (model_.moe_layer(layer)) {
    const double mt = split, routed = mt * model_.top_k, f = model_.expert_ffn();
    b += mt * model_.experts * eb;                            // router probabilities
    b += routed * h * eb + routed * f * eb * (matrices + 1);  // permuted tokens, FC1's output, the activation's
    b += mt * model_.shared_experts * f * eb * (matrices + 1);
  } else {
    const double f = model_.ffn() / t;
    b += tokens * h * eb;                   // the FC1 input (gathered)
    b += tokens * f * eb * (matrices + 1);  // FC1's output and the activation's
  }
  return b;
}

std::uint32_t TrainingJob::in_flight(int stage) const {
  int live = 0, most = 0;
  for (const Unit& u : schedule(stage)) {
    live += u.forward ? 1 : -1;
    most = std::max(most, live);
  }
  return static_cast<std::uint32_t>(most);
}

MemoryEstimate TrainingJob::memory(int rank) const {
  const RankCoords me = coords(rank);
  const TrainingSpec& tr = training_;
  MemoryEstimate e;
  if (resnet()) {
    // SGD keeps a momentum per weight, and fp32 master weights with
    // master_weights; one microbatch's activations at a time.
    const double params = static_cast<double>(resnet_params(model_)), eb = tr.element_bytes();
    e.weights = params * eb;
    e.gradients = params * tr.grad_bytes();
    e.optimizer = params * (tr.master_weights ? 8 : eb);
    // Microbatches in flight: 1 under 1F1B, all of them under GPipe.
    e.in_flight = in_flight(0);
    e.activations = resnet_saved_elements(model_) * tr.microbatch * eb * e.in_flight;
    e.communication = static_cast<double>(groups_of(rank).size()) * 16 * 2 * 4 * 1048576.0;
    e.reserved = tr.memory_reserved;
    return e;
  }
  const auto [dense, experts] = local_params(rank);
  const double eb = tr.element_bytes();
  const double shard_dense = dp_ * cp_, shard_experts = std::max(1, dp_ / ep_ * cp_);
  const double weights = dense + experts;
  e.weights = weights * eb;
  e.gradients = weights * tr.grad_bytes();
  e.optimizer =
      (dense / (tr.zero >= 1 ? shard_dense : 1) + experts / (tr.zero >= 1 ? shard_experts : 1)) * tr.optimizer_bytes();
  if (tr.zero >= 2) e.gradients = (dense / shard_dense + experts / shard_experts) * tr.grad_bytes();
  if (tr.zero == 3) {
    // A shard of the weights, and two layers gathered (the running one and
    // the one prefetched).
    const LayerParams lp = layer_params(0);
    e.weights = (dense / shard_dense + experts / shard_experts) * eb + 2 * (lp.dense + lp.experts) * eb;
  }
  e.in_flight = in_flight(me.p);
  const double most = e.in_flight;
  // The stage's largest chunk (the schedule keeps whole chunks in flight).
  double per_chunk = 0;
  for (int c = 0; c < vp_; ++c) {
    const int g = c * pp_ + me.p;
    double chunk = 0;
    for (int l = first_layer(g); l < first_layer(g) + chunk_layers(g); ++l)
      chunk += layer_activation_bytes(static_cast<std::uint32_t>(l));
    per_chunk = std::max(per_chunk, chunk);
  }
  e.activations = per_chunk * most;
  if (tr.recompute == TrainingSpec::Recompute::kFull) {
    // One layer recomputed at a time holds its whole forward again.
    TrainingSpec none = tr;
    none.recompute = TrainingSpec::Recompute::kNone;
    const TrainingJob whole(model_, none, gpus_, name_);
    double largest = 0;
    for (const std::uint32_t l : stage_layers(me.p)) largest = std::max(largest, whole.layer_activation_bytes(l));
    e.activations += largest;
  }
  const double t = tp_;
  const double tokens = static_cast<double>(tr.microbatch) * seq_ / cp_;
  if (me.p == pp_ - 1) {
    // The logits (bf16) and their fp32 log-softmax, kept for the backward.
    e.activations += most * tokens * (static_cast<double>(vocab_) / t) * (eb + 4);
  }
  // NCCL: per process group, 16 channels of NCCL_BUFFSIZE (4 MiB) for the
  // Simple protocol and about as much for LL128 (NCCL's defaults).
  e.communication = static_cast<double>(groups_of(rank).size()) * 16 * 2 * 4 * 1048576.0;
  e.reserved = tr.memory_reserved;
  return e;
}

std::string TrainingJob::describe() const {
  std::ostringstream o;
  if (resnet()) {
    o << (name_.empty() ? "model" : name_) << ": ResNet-" << model_.resnet_depth << ", " << model_.image_size << " x "
      << model_.image_size << " images, " << model_.classes << " classes; " << gpus_ << " GPUs data parallel, " << m_
      << " microbatches of " << training_.microbatch << " images";
    return o.str();
  }
  o << (name_.empty() ? "model" : name_) << ": " << model_.layers << " layers, hidden " << model_.hidden << ", "
    << model_.heads << " heads";
  if (model_.experts) o << ", " << model_.experts << " experts (top " << model_.top_k << ")";
  o << "; " << gpus_ << " GPUs as tp " << tp_ << " x pp " << pp_;
  if (vp_ > 1) o << " (vp " << vp_ << ")";
  if (cp_ > 1) o << " x cp " << cp_;
  o << " x dp " << dp_;
  if (ep_ > 1) o << " (ep " << ep_ << ")";
  o << ", " << m_ << " microbatches of " << training_.microbatch << " x " << seq_ << " tokens";
  return o.str();
}

}  // namespace fabricsim
