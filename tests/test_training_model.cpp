// The model-level workload generator (traces/model/, `run --model`): its
// steps against their closed forms (Megatron's equation 3 for the FLOPs, the
// bytes of every kind of communication, the pipeline's bubble), its memory
// estimate and refusals, the in-process nodes against the same nodes as
// trace files, and its GPT-2 against the real H100 trace it describes.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "platforms/run/training_loader.h"
#include "support/test_util.h"
#include "traces/model/resnet.h"
#include "traces/workload/kernel_work.h"

using namespace fabricsim;

namespace {

const std::string kPlatforms = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/";

/// A small GPT: every closed form applies to it exactly.
std::string small_gpt(const std::string& training, const std::string& model_extra = "") {
  return "name: small\nmodel:\n  layers: 8\n  hidden: 512\n  heads: 8\n  vocab: 2048\n  seq: 256\n" + model_extra +
         "training:\n" + training;
}

std::shared_ptr<const TrainingJob> job_of(const std::string& yaml, int gpus, const std::string& name = "job") {
  const std::string path = testutil::scratch_dir("training-" + name) + "/m.yaml";
  testutil::write_text(path, yaml);
  return load_training_job(path, {}, gpus);
}

/// Each rank's nodes, parsed as the simulator reads them.
template <class F>
void for_each_node(const TrainingJob& job, int rank, F&& f) {
  const auto source = job.source(rank, OpIoForm::kText);
  ChakraProtoMsg::Node n;
  while (source->next(n)) f(n);
}

const ChakraProtoMsg::AttributeProto* attr(const ChakraProtoMsg::Node& n, const std::string& name) {
  for (const auto& a : n.attr()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

/// The FLOPs of a step's GEMMs (and batched GEMMs) as the compute model
/// reads them off the nodes, over every rank.
double gemm_flops(const TrainingJob& job) {
  double flops = 0;
  for (int r = 0; r < job.gpus(); ++r) {
    for_each_node(job, r, [&](const ChakraProtoMsg::Node& n) {
      if (n.type() != ChakraProtoMsg::COMP_NODE) return;
      const auto* schema = attr(n, "op_schema");
      const std::string op = traces::op_name(schema ? schema->string_val() : "", n.name());
      const auto in = traces::parse_op_args(n.inputs().values(), n.inputs().shapes());
      const auto out = traces::parse_op_args(n.outputs().values(), n.outputs().shapes());
      ASSERT_TRUE(in && out) << n.name();
      const auto w = traces::kernel_work(op, schema ? schema->string_val() : "", *in, *out);
      ASSERT_TRUE(w) << "the compute model does not know " << op;
      if (w->cls == KernelClass::kGemm || w->cls == KernelClass::kGemmUnaligned) flops += w->flops;
    });
  }
  return flops;
}

TEST(TrainingFlops, AStepWithFullRecomputationCountsMegatronsEquationThree) {
  // Unfused attention (every score computed, as Megatron's equation counts
  // them) so that the GEMMs are all the FLOPs: tp 2 x pp 2 x dp 2, two
  // microbatches of 2 sequences per replica, full recomputation.
  const auto job = job_of(small_gpt("  tp: 2\n  pp: 2\n  microbatch: 2\n  global_batch: 8\n  recompute: full\n"
                                    "  attention: unfused\n  vocab_multiple: 1\n"),
                          8, "eq3");
  const double B = 8, s = 256, l = 8, h = 512, V = 2048;
  const double eq3 = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  EXPECT_NEAR(job->step_flops(), eq3, 1e-9 * eq3);
  EXPECT_NEAR(gemm_flops(*job), eq3, 1e-3 * eq3);
}

TEST(TrainingFlops, AStepWithoutRecomputationCountsThreeForwards) {
  const auto job = job_of(small_gpt("  tp: 2\n  pp: 2\n  microbatch: 2\n  global_batch: 8\n  attention: unfused\n"
                                    "  vocab_multiple: 1\n"),
                          8, "6nd");
  const double B = 8, s = 256, l = 8, h = 512, V = 2048;
  const double closed = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(job->model_flops(), closed, 1e-9 * closed);
  EXPECT_NEAR(gemm_flops(*job), closed, 1e-3 * closed);
}

TEST(TrainingFlops, GroupedQueriesSwigluAndExpertsMatchTheGeneralForm) {
  // Llama's shape with experts, as the generator's nodes give it against
  // TrainingJob::model_flops (3 x every matmul a token passes through).
  const auto job = job_of(small_gpt("  tp: 2\n  sp: true\n  ep: 2\n  microbatch: 1\n  global_batch: 4\n"
                                    "  attention: unfused\n  vocab_multiple: 1\n",
                                    "  kv_heads: 2\n  mlp: swiglu\n  norm: rmsnorm\n  position: rope\n  bias: false\n"
                                    "  tied_embeddings: false\n  experts: 4\n  top_k: 2\n  ffn_hidden: 1024\n"),
                          8, "moe");
  EXPECT_NEAR(gemm_flops(*job), job->model_flops(), 2e-3 * job->model_flops());
}

/// The bytes of each kind of communication on `rank`, as the nodes carry
/// them: a collective's whole buffer (an all-gather's shard x the group),
/// a send's size; kinds by process group as the report names them.
std::map<std::string, double> node_volumes(const TrainingJob& job, int rank) {
  std::map<std::string, std::size_t> group_size;
  for (const auto& [name, ranks] : job.groups_of(rank)) group_size[name] = ranks.size();
  std::map<std::string, double> v;
  for_each_node(job, rank, [&](const ChakraProtoMsg::Node& n) {
    const auto* pg = attr(n, "pg_name");
    const auto* size = attr(n, "comm_size");
    if (!pg || !size) return;
    const std::string name = pg->string_val();
    std::string kind = name.substr(0, name.find('_'));
    if (kind == "ppg") kind = "pp";
    if (kind == "edp") kind = "dp";
    if (kind == "embd") kind = "embedding";
    double bytes = static_cast<double>(size->uint64_val());
    if (n.type() == ChakraProtoMsg::COMM_RECV_NODE) return;  // the sender counts it
    if (n.type() == ChakraProtoMsg::COMM_COLL_NODE && attr(n, "comm_type")->int64_val() == ChakraProtoMsg::ALL_GATHER) {
      if (name.rfind("ppg", 0) == 0) return;  // the pipeline's gathers: counted by the sends
      bytes *= static_cast<double>(group_size.at(name));
    }
    v[kind] += bytes;
  });
  return v;
}

void expect_volumes(const TrainingJob& job, const std::string& what) {
  for (int r = 0; r < job.gpus(); ++r) {
    const auto nodes = node_volumes(job, r);
    const CommVolumes f = job.volumes(r);
    const std::map<std::string, double> formula = {{"tp", f.tp}, {"pp", f.pp}, {"dp", f.dp},
                                                   {"ep", f.ep}, {"cp", f.cp}, {"embedding", f.embedding}};
    for (const auto& [kind, bytes] : formula) {
      const double got = nodes.count(kind) ? nodes.at(kind) : 0;
      EXPECT_NEAR(got, bytes, 1e-3 * bytes + 1) << what << ", rank " << r << ", " << kind;
    }
    for (const auto& [kind, bytes] : nodes) EXPECT_TRUE(formula.count(kind)) << what << ": unexpected kind " << kind;
  }
}

TEST(TrainingComm, EachKindsBytesAreItsFormula) {
  // Tensor parallel with and without sequence parallelism, pipelines with
  // scatter/gather and interleaving, data parallel with ZeRO 0 and 1.
  expect_volumes(*job_of(small_gpt("  tp: 2\n  pp: 2\n  microbatch: 1\n  global_batch: 8\n"), 8, "a"),
                 "tp 2 pp 2, all-reduce");
  expect_volumes(*job_of(small_gpt("  tp: 2\n  pp: 2\n  vp: 2\n  sp: true\n  zero: 1\n  microbatch: 1\n"
                                   "  global_batch: 8\n  recompute: full\n"),
                         8, "b"),
                 "tp 2 sp, pp 2 vp 2, zero 1, recompute");
  expect_volumes(*job_of(small_gpt("  tp: 2\n  pp: 2\n  dp_overlap: false\n  grad_dtype: params\n  microbatch: 2\n"
                                   "  global_batch: 8\n  bucket_params: 100000\n"),
                         8, "c"),
                 "gradients after the backward pass, in buckets");
}

TEST(TrainingComm, ExpertContextAndShardedLayoutsToo) {
  expect_volumes(*job_of(small_gpt("  tp: 2\n  sp: true\n  ep: 2\n  microbatch: 1\n  global_batch: 4\n",
                                   "  experts: 4\n  top_k: 2\n"),
                         8, "moe"),
                 "experts over ep 2");
  expect_volumes(*job_of(small_gpt("  cp: 2\n  tp: 2\n  microbatch: 1\n  global_batch: 4\n"), 8, "cp"),
                 "context parallel 2");
  expect_volumes(*job_of(small_gpt("  zero: 3\n  microbatch: 1\n  global_batch: 8\n  recompute: full\n"), 4, "z3"),
                 "zero 3");
}

/// A platform whose communication is free (a million GB/s, no latency, no
/// overheads) and whose memory-bound kernels take no time: a step is its
/// GEMMs and attention alone.
std::string free_communication_platform(const std::string& dir) {
  const std::string path = dir + "/free.yaml";
  testutil::write_text(path, R"(npus: 8
npu:
  peak_flops: 1 TFLOP/s
  memory_bandwidth: 1000000 GB/s
  compute:
    model: kernel_classes
    classes:
      gemm: { flops_efficiency: 1, floor: 0 us }
      gemm_unaligned: { flops_efficiency: 1, floor: 0 us }
      attention_forward: { flops_efficiency: 1, floor: 0 us }
      attention_backward: { flops_efficiency: 1, floor: 0 us }
nic: { message_overhead: 0 us, segment: 1 MiB, mtu: 64 KiB, header: 0 }
fabrics:
  - topology: switch
    link: { bandwidth: 1000000 GB/s, latency: 0 ns, buffer: 4 MiB }
    switch: { latency: 0 ns }
)");
  return path;
}

nlohmann::json run_step(const std::string& platform, const std::string& model, const std::string& sets,
                        const std::string& dir) {
  const auto r = testutil::run_fabricsim("run --quiet --platform " + platform + " --model " + model + " " + sets +
                                         " --report " + dir + "/r.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(testutil::read_text(dir + "/r.json"));
}

TEST(TrainingSchedule, WithFreeCommunicationTheBubbleIsItsClosedForm) {
  const std::string dir = testutil::scratch_dir("bubble");
  const std::string platform = free_communication_platform(dir);
  testutil::write_text(dir + "/m.yaml",
                       "name: bubble\nmodel:\n  layers: 16\n  hidden: 1024\n  heads: 8\n  vocab: 8\n  seq: 512\n"
                       "training:\n  pp: 4\n  microbatch: 1\n  vocab_multiple: 1\n");
  struct Case {
    std::string sets;
    double closed;
  };
  // p = 4 on 4 GPUs (no data parallelism: its gradients' reduction would
  // add to the step), m = 8 or 16 microbatches.
  const std::vector<Case> cases = {
      {"--npus 4 --set training.global_batch=8", 3.0 / (8 + 3)},                                // 1F1B
      {"--npus 4 --set training.global_batch=8 --set training.schedule=gpipe", 3.0 / (8 + 3)},  // GPipe
      {"--npus 4 --set training.global_batch=8 --set training.vp=2", 3.0 / (2 * 8 + 3)},        // interleaved
      {"--npus 4 --set training.global_batch=16 --set training.vp=4", 3.0 / (4 * 16 + 3)},
  };
  for (const auto& c : cases) {
    const auto j = run_step(platform, dir + "/m.yaml", c.sets, dir);
    const auto& step = j["step"];
    EXPECT_NEAR(step["bubble_closed_form"].get<double>(), c.closed, 1e-12) << c.sets;
    // The busiest stage (the last: it also runs the LM head) idles the
    // bubble's share of the step; the others a little more (the head's time).
    EXPECT_NEAR(step["gpu_idle_fraction"]["min"].get<double>(), c.closed, 1e-3 * c.closed) << c.sets;
    EXPECT_NEAR(step["gpu_idle_fraction"]["max"].get<double>(), c.closed, 1e-2 * c.closed) << c.sets;
  }
}

TEST(TrainingRun, InProcessNodesAndTheirTraceFilesRunTheSame) {
  const std::string dir = testutil::scratch_dir("in-process");
  testutil::write_text(dir + "/m.yaml", small_gpt("  tp: 2\n  pp: 2\n  microbatch: 1\n  global_batch: 8\n  zero: 1\n"));
  const std::string dgx = kPlatforms + "dgx_h100.yaml";
  auto g = testutil::run_fabricsim("gen model --model " + dir + "/m.yaml --npus 8 --out " + dir + "/t");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  auto a = testutil::run_fabricsim("run --quiet --platform " + dgx + " --model " + dir + "/m.yaml --report " + dir +
                                   "/a.json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  // Generated traces run as --model runs them: each group's collectives in
  // their order, groups side by side (no cap across groups).
  auto b = testutil::run_fabricsim("run --quiet --platform " + dgx + " --workload " + dir +
                                   "/t --set npu.max_collectives_in_flight=0 --report " + dir + "/b.json");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto ja = nlohmann::json::parse(testutil::read_text(dir + "/a.json"));
  const auto jb = nlohmann::json::parse(testutil::read_text(dir + "/b.json"));
  EXPECT_EQ(ja["sim_time_ns"], jb["sim_time_ns"]);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(ja["npus"][r]["gpu_busy_ns"], jb["npus"][r]["gpu_busy_ns"]) << r;
  // The step report: what the job moved and computed.
  const auto& step = ja["step"];
  EXPECT_EQ(step["gpus"], 8);
  EXPECT_NEAR(step["tokens_per_step"].get<double>(), 8.0 * 256, 1e-9);
  EXPECT_GT(step["exposed_comm_by_kind"]["tp"]["mean_ns"].get<double>(), 0);
  EXPECT_GT(step["exposed_comm_by_kind"]["dp"]["mean_ns"].get<double>(), 0);
  const double mfu = step["mfu"].get<double>();
  EXPECT_NEAR(mfu, step["model_flops"].get<double>() / (step["step_time_ns"].get<double>() * 1e-9 * 8 * 989e12), 1e-9);
}

TEST(TrainingRun, HeldArgsAreWhatTheirTextReadsBackAs) {
  // A step run in-process hands each GPU op's args held (no text written
  // and parsed back); traces written to files carry the text. Both must be
  // one reading of every op of every kind of layer, or in-process steps
  // and their trace files would be timed apart. The estimate's survey
  // reads the same nodes without args.
  struct Case {
    std::string name, yaml;
    int gpus;
  };
  const std::vector<Case> cases = {
      {"vp",
       small_gpt("  tp: 2\n  pp: 2\n  vp: 2\n  sp: true\n  zero: 1\n  microbatch: 1\n  global_batch: 8\n"
                 "  dropout: 0.1\n  attention: unfused\n"),
       8},
      {"moe",
       small_gpt("  tp: 2\n  sp: true\n  ep: 2\n  microbatch: 1\n  global_batch: 4\n  attention: flash\n",
                 "  kv_heads: 2\n  mlp: swiglu\n  norm: rmsnorm\n  position: rope\n  bias: false\n"
                 "  tied_embeddings: false\n  experts: 4\n  top_k: 2\n  ffn_hidden: 1024\n"),
       8},
      {"cp", small_gpt("  cp: 2\n  tp: 2\n  microbatch: 1\n  global_batch: 4\n  recompute: selective\n"), 8},
      {"z3", small_gpt("  zero: 3\n  microbatch: 1\n  global_batch: 8\n  recompute: full\n"), 4},
      {"eager", small_gpt("  framework: eager\n  microbatch: 2\n  global_batch: 2\n"), 1},
      {"resnet", "name: r50\nmodel: {kind: resnet, resnet_depth: 50}\ntraining: {microbatch: 2, global_batch: 8}\n", 4},
  };
  for (const Case& c : cases) {
    const auto job = job_of(c.yaml, c.gpus, "held-" + c.name);
    for (int rank : {0, c.gpus - 1}) {
      const auto text = job->source(rank, OpIoForm::kText), held = job->source(rank, OpIoForm::kStructured),
                 bare = job->source(rank, OpIoForm::kOmitted);
      ChakraProtoMsg::Node a, b, o;
      std::size_t ops = 0;
      while (text->next(a)) {
        ASSERT_TRUE(held->next(b) && bare->next(o)) << c.name;
        const std::string where =
            c.name + " rank " + std::to_string(rank) + " node " + std::to_string(a.id()) + " " + a.name();
        if (a.type() == ChakraProtoMsg::COMP_NODE) {
          const traces::OpIo* io = held->structured_io();
          ASSERT_NE(io, nullptr) << where;
          const auto in = traces::parse_op_args(a.inputs().values(), a.inputs().shapes());
          const auto out = traces::parse_op_args(a.outputs().values(), a.outputs().shapes());
          ASSERT_TRUE(in && out) << where;
          EXPECT_TRUE(*in == io->inputs) << where;
          EXPECT_TRUE(*out == io->outputs) << where;
          EXPECT_FALSE(b.has_inputs() || b.has_outputs() || o.has_inputs() || o.has_outputs()) << where;
          EXPECT_EQ(bare->structured_io(), nullptr) << where;
          *b.mutable_inputs() = *o.mutable_inputs() = a.inputs();
          *b.mutable_outputs() = *o.mutable_outputs() = a.outputs();
          ++ops;
        } else {
          EXPECT_EQ(held->structured_io(), nullptr) << where;
        }
        EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString()) << where;  // nothing else differs
        EXPECT_EQ(a.SerializeAsString(), o.SerializeAsString()) << where;
      }
      EXPECT_FALSE(held->next(b) || bare->next(o)) << c.name;
      EXPECT_GT(ops, 20u) << c.name;
    }
  }
}

TEST(TrainingRun, AReportListsTheFirstCollectivesAndCountsEveryOneByKind) {
  // A step of thousands of GPUs runs millions of collectives: the report
  // lists the first of each NPU's and sums every one by kind.
  const std::string dir = testutil::scratch_dir("listed");
  testutil::write_text(dir + "/m.yaml", small_gpt("  tp: 2\n  pp: 2\n  microbatch: 1\n  global_batch: 8\n"));
  const std::string run = "run --platform " + kPlatforms + "dgx_h100.yaml --model " + dir + "/m.yaml --report ";
  auto a = testutil::run_fabricsim(run + dir + "/a.json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out.find("collectives listed"), std::string::npos) << a.out;
  auto b = testutil::run_fabricsim(run + dir + "/b.json --report-collectives 3");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto ja = nlohmann::json::parse(testutil::read_text(dir + "/a.json"));
  const auto jb = nlohmann::json::parse(testutil::read_text(dir + "/b.json"));
  std::uint64_t run_total = 0;
  for (int r = 0; r < 8; ++r) {
    const auto& all = ja["npus"][r];
    const auto& cut = jb["npus"][r];
    const std::size_t n = all["collectives"].size();
    ASSERT_GT(n, 3u) << r;
    run_total += n;
    EXPECT_EQ(all["collectives_run"], n);
    EXPECT_FALSE(all.contains("collectives_unlisted"));
    ASSERT_EQ(cut["collectives"].size(), 3u);
    EXPECT_EQ(cut["collectives_run"], n);
    EXPECT_EQ(cut["collectives_unlisted"], n - 3);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(cut["collectives"][i], all["collectives"][i]) << r;
    // Each kind's count and durations, from the whole list.
    struct Kind {
      std::uint64_t count = 0;
      double total = 0, shortest = 1e300, longest = 0;
    };
    std::map<std::string, Kind> kinds;
    for (auto c : all["collectives"]) {
      const double took = c["end_ns"].get<double>() - c["start_ns"].get<double>();
      for (const char* k : {"node_id", "start_ns", "end_ns"}) c.erase(k);
      Kind& k = kinds[c.dump()];
      ++k.count;
      k.total += took;
      k.shortest = std::min(k.shortest, took);
      k.longest = std::max(k.longest, took);
    }
    ASSERT_EQ(cut["collective_summary"].size(), kinds.size()) << r;
    for (auto s : cut["collective_summary"]) {
      const std::uint64_t count = s["count"];
      const double total = s["total_ns"], shortest = s["shortest_ns"], longest = s["longest_ns"];
      for (const char* k : {"count", "total_ns", "shortest_ns", "longest_ns"}) s.erase(k);
      ASSERT_TRUE(kinds.count(s.dump())) << s.dump();
      const Kind& k = kinds[s.dump()];
      EXPECT_EQ(count, k.count) << s.dump();
      EXPECT_NEAR(total, k.total, 1e-6 * k.total + 1e-3) << s.dump();
      EXPECT_NEAR(shortest, k.shortest, 1e-3) << s.dump();
      EXPECT_NEAR(longest, k.longest, 1e-3) << s.dump();
    }
    EXPECT_EQ(all["collective_summary"], cut["collective_summary"]) << r;
  }
  EXPECT_NE(b.out.find("report: 24 of " + std::to_string(run_total) + " collectives listed"), std::string::npos)
      << b.out;
}

TEST(TrainingMemory, EachGpusShareIsItsBytesPerParameter) {
  // zero 0: 2 (bf16 weights) + 4 (fp32 gradients) + 12 (fp32 master and
  // Adam's moments) bytes a weight; zero 1: the 12 over the dp ranks.
  const auto z0 = job_of(small_gpt("  tp: 2\n  microbatch: 1\n  global_batch: 4\n"), 8, "mem0");
  const auto z1 = job_of(small_gpt("  tp: 2\n  microbatch: 1\n  global_batch: 4\n  zero: 1\n"), 8, "mem1");
  const double p = z0->local_params(0).first;
  EXPECT_NEAR(z0->memory(0).weights + z0->memory(0).gradients + z0->memory(0).optimizer, 18 * p, 1e-6 * p);
  EXPECT_NEAR(z1->memory(0).optimizer, 12 * p / 4, 1e-6 * p);
  // 1F1B keeps p - stage microbatches in flight.
  const auto pipe = job_of(small_gpt("  pp: 4\n  microbatch: 1\n  global_batch: 16\n"), 4, "mem2");
  for (int s = 0; s < 4; ++s) EXPECT_EQ(pipe->memory(s).in_flight, static_cast<std::uint32_t>(4 - s)) << s;
}

TEST(TrainingInput, ALayoutThatDoesNotFitIsRefusedWithItsNumbers) {
  const std::string dgx = kPlatforms + "dgx_h100.yaml";
  auto r =
      testutil::run_fabricsim("run --quiet --platform " + dgx + " --model llama3-70b --set training.global_batch=8");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("llama3-70b does not fit: stage 0 (rank 0):"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than the 80.0 GiB of each GPU's HBM"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("training.allow_oom=true"), std::string::npos) << r.err;
}

TEST(TrainingInput, TracesPastTheirLimitAreRefusedBeforeAnyIsWritten) {
  // 8 traces of about 32 MiB against a 16 MiB --limit (the default, 64 GiB,
  // refuses the 1T row's 68 GiB; a test of it would write 68 GiB wherever
  // the bound broke): refused with the estimate and nothing left; under the
  // limit it says what it writes, within 10% of what it wrote.
  const std::string dir = testutil::scratch_dir("gen-model-bound");
  const std::string gen = "gen model --model megatron-1.7b --npus 8 --set training.global_batch=64 --out " + dir;
  auto r = testutil::run_fabricsim(gen + "/big --limit 16M");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("8 traces " + dir + "/big.<rank>.et would take about 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("past the limit of 16.0 MiB (give --force"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  r = testutil::run_fabricsim(gen + "/small");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.out.find("about ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::size_t used = 0;
  double estimate = std::stod(r.out.substr(at + 6), &used);
  ASSERT_EQ(r.out.substr(at + 6 + used, 4), " MiB") << r.out;
  estimate *= 1 << 20;
  double written = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) written += static_cast<double>(e.file_size());
  EXPECT_GT(written, 8 << 20);
  EXPECT_NEAR(estimate, written, 0.1 * written) << r.out;
}

TEST(TrainingInput, ImpossibleLayoutsAndBadModelsAreRefusedNamingWhat) {
  const std::string dir = testutil::scratch_dir("training-bad");
  const std::string dgx = kPlatforms + "dgx_h100.yaml";
  struct Case {
    std::string model, sets, what;
  };
  testutil::write_text(dir + "/m.yaml", small_gpt("  microbatch: 1\n"));
  testutil::write_text(dir + "/typo.yaml", small_gpt("  microbatchs: 1\n"));
  testutil::write_text(dir + "/mla.json", R"({"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61,
    "num_attention_heads": 128, "vocab_size": 129280, "kv_lora_rank": 512})");
  const std::vector<Case> cases = {
      {"nosuch", "", "--model nosuch: not a preset (deepseek-moe-16b, gpt2-h100-trace"},
      {dir + "/m.yaml", "--npus 6 --set training.tp=3", "tp 3 does not divide the 8 attention heads"},
      {dir + "/m.yaml", "--set training.pp=8 --set training.vp=2", "16 pipeline chunks for 8 layers"},
      {dir + "/m.yaml", "--set training.tp=3", "tp x pp x cp = 3 does not divide the 8 GPUs"},
      {dir + "/m.yaml", "--set training.tp=2 --set training.dp=2", "tp x pp x cp x dp = 4 GPUs, but the job runs on 8"},
      {dir + "/m.yaml", "--set training.global_batch=12", "global_batch 12 is not a whole number of microbatches"},
      {dir + "/m.yaml", "--set training.ep=2", "ep 2 for a model without experts"},
      {dir + "/m.yaml", "--set training.pp=2 --set training.vp=2 --set training.global_batch=12",
       "3 microbatches per pipeline is not a multiple of pp 2"},
      {dir + "/m.yaml", "--set training.tp=0", "training.tp"},
      {dir + "/typo.yaml", "", "typo.yaml:"},
      {dir + "/mla.json", "", "multi-head latent attention"},
  };
  for (const auto& c : cases) {
    const auto r = testutil::run_fabricsim("run --quiet --platform " + dgx + " --model " + c.model + " " + c.sets);
    EXPECT_EQ(r.exit_code, 2) << c.model << " " << c.sets << ": " << r.err;
    EXPECT_NE(r.err.find(c.what), std::string::npos) << c.sets << ": " << r.err;
  }
  // A job's key without a job.
  const auto r =
      testutil::run_fabricsim("run --quiet --platform " + dgx + " --workload " + dir + "/none --set training.tp=2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("sets a key of the training job, and no --model is given"), std::string::npos) << r.err;
}

TEST(TrainingInput, AHuggingFaceConfigReadsAsItsModel) {
  const YAML::Node m = model_from_hf_config(R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
    "max_position_embeddings": 8192, "rms_norm_eps": 1e-05, "hidden_act": "silu", "tie_word_embeddings": false})",
                                            "config.json");
  EXPECT_EQ(m["layers"].as<int>(), 32);
  EXPECT_EQ(m["kv_heads"].as<int>(), 8);
  EXPECT_EQ(m["ffn_hidden"].as<int>(), 14336);
  EXPECT_EQ(m["mlp"].as<std::string>(), "swiglu");
  EXPECT_EQ(m["norm"].as<std::string>(), "rmsnorm");
  EXPECT_EQ(m["position"].as<std::string>(), "rope");
  EXPECT_FALSE(m["tied_embeddings"].as<bool>());
  const YAML::Node gpt2 = model_from_hf_config(
      R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024})",
      "gpt2.json");
  EXPECT_EQ(gpt2["position"].as<std::string>(), "learned");
  EXPECT_TRUE(gpt2["tied_embeddings"].as<bool>());
  EXPECT_TRUE(gpt2["bias"].as<bool>());
  try {
    model_from_hf_config(R"({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 10})",
                         "short.json");
    ADD_FAILURE() << "a config without its layers accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("short.json: no \"num_hidden_layers\" or \"n_layer\""), std::string::npos)
        << e.what();
  }
}

TEST(ResnetShape, WeightsAndMultiplyAddsAreTorchvisions) {
  // torchvision's published figures for its v1.5 ResNets at 224 x 224:
  // weights and multiply-adds ("GFLOPS" in its model table).
  struct Row {
    std::uint32_t depth;
    std::uint64_t params;
    double gmacs;
  };
  for (const Row& row : {Row{50, 25557032, 4.09}, Row{101, 44549160, 7.80}, Row{152, 60192808, 11.51}}) {
    ModelSpec m;
    m.kind = ModelSpec::Kind::kResnet;
    m.resnet_depth = row.depth;
    EXPECT_EQ(resnet_params(m), row.params) << row.depth;
    EXPECT_NEAR(resnet_forward_macs(m) / 1e9, row.gmacs, 0.005) << row.depth;
  }
}

TEST(ResnetStep, ItsConvolutionsAreItsFlopsAndItsBucketsItsGradients) {
  // ResNet-50 on 4 GPUs, two microbatches of 8: the compute model reads
  // 3 x 2 x multiply-adds x images off the convolutions and the classifier,
  // and the gradient buckets (in the last microbatch only, DDP's no_sync
  // before it) carry every weight's fp32 gradient once.
  const auto job = job_of(
      "name: r50\nmodel: {kind: resnet, resnet_depth: 50}\n"
      "training: {microbatch: 8, global_batch: 64, grad_dtype: fp32, bucket_params: 1000000}\n",
      4, "resnet");
  EXPECT_EQ(job->microbatches(), 2);
  const double flops = 3 * 2 * resnet_forward_macs(job->model()) * 64;
  EXPECT_NEAR(job->model_flops(), flops, 1e-9 * flops);
  EXPECT_NEAR(gemm_flops(*job), flops, 1e-6 * flops);
  EXPECT_NEAR(job->volumes(0).dp, 25557032.0 * 4, 1);
  expect_volumes(*job, "resnet50 dp 4");
  // Buckets of a million weights or more, each launched as the last
  // microbatch's backward fills it: none before its loss's backward.
  std::vector<double> buckets;
  int losses = 0;
  for_each_node(*job, 0, [&](const ChakraProtoMsg::Node& n) {
    if (n.name() == "aten::nll_loss_backward") ++losses;
    if (n.type() != ChakraProtoMsg::COMM_COLL_NODE) return;
    EXPECT_EQ(losses, 2) << "a bucket reduced in the first microbatch";
    buckets.push_back(static_cast<double>(attr(n, "comm_size")->uint64_val()));
  });
  ASSERT_GE(buckets.size(), 10u);
  for (std::size_t i = 0; i + 1 < buckets.size(); ++i) EXPECT_GE(buckets[i], 4e6) << "bucket " << i;
  // The ops between the GEMMs, per microbatch: a batch norm per
  // convolution (53), a ReLU per convolution that is not an expand or a
  // shortcut plus one per block (17 + 32 = 49), a residual add per block
  // (16), and their backwards; the block inputs' two gradients summed (16).
  std::map<std::string, int> ops;
  for_each_node(*job, 0, [&](const ChakraProtoMsg::Node& n) {
    if (n.type() == ChakraProtoMsg::COMP_NODE) ++ops[n.name()];
  });
  const std::map<std::string, int> expected = {{"aten::native_batch_norm", 53},
                                               {"aten::native_batch_norm_backward", 53},
                                               {"aten::relu_", 49},
                                               {"aten::threshold_backward", 49},
                                               {"aten::add_", 16},
                                               {"aten::add", 16},
                                               {"aten::convolution", 53},
                                               {"aten::convolution_backward", 53},
                                               {"aten::max_pool2d_with_indices", 1},
                                               {"aten::max_pool2d_with_indices_backward", 1}};
  for (const auto& [op, per_microbatch] : expected) EXPECT_EQ(ops[op], 2 * per_microbatch) << op;
  // One microbatch's maps in memory at a time; GPipe holds both.
  EXPECT_EQ(job->memory(0).in_flight, 1u);
  const auto gpipe = job_of(
      "name: r50\nmodel: {kind: resnet, resnet_depth: 50}\n"
      "training: {microbatch: 8, global_batch: 64, schedule: gpipe}\n",
      4, "resnet-gpipe");
  EXPECT_EQ(gpipe->memory(0).in_flight, 2u);
  EXPECT_NEAR(gpipe->memory(0).activations, 2 * job->memory(0).activations, 1);
}

TEST(ResnetInput, ModelParallelLayoutsAndOversizedBatchesAreRefused) {
  const std::string dgx = kPlatforms + "dgx_h100.yaml";
  auto r = testutil::run_fabricsim("run --quiet --platform " + dgx + " --model resnet50 --set training.tp=2");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("a ResNet is generated data parallel only: give tp, pp, cp, ep and vp 1 (it has tp 2"),
            std::string::npos)
      << r.err;
  // 45 MB of activations per image in fp16: 2,048 images is 92 GB.
  r = testutil::run_fabricsim("run --quiet --platform " + dgx + " --model resnet50 --set training.microbatch=2048");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("resnet50 does not fit"), std::string::npos) << r.err;
}

TEST(TrainingValidation, TheGeneratedGpt2IsTheRealH100TracesStep) {
  FABRICSIM_NEEDS_SHARED_DATA();
  // The same ops as the real trace's (shapes, dtypes): the compute model
  // gives the GEMMs, attention and norms the very time it gives the trace's
  // own; the whole step's GPU time is within 10% of the recorded one
  // (docs/validation.md has the table per class).
  const std::string dir = testutil::scratch_dir("gpt2-trace");
  const std::string dgx = kPlatforms + "dgx_h100.yaml";
  auto g = testutil::run_fabricsim("run --quiet --platform " + dgx + " --npus 1 --model gpt2-h100-trace --report " +
                                   dir + "/g.json");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const std::string trace = testutil::shared_trace("pytorch-h100/gpt2");
  auto m = testutil::run_fabricsim("run --quiet --platform " + dgx + " --npus 1 --workload " + trace + " --report " +
                                   dir + "/m.json");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  auto rec = testutil::run_fabricsim("run --quiet --replay --platform " + dgx + " --npus 1 --workload " + trace +
                                     " --report " + dir + "/r.json");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const auto gen = nlohmann::json::parse(testutil::read_text(dir + "/g.json"))["npus"][0]["gpu_by_class"];
  const auto modelled = nlohmann::json::parse(testutil::read_text(dir + "/m.json"))["npus"][0]["gpu_by_class"];
  for (const char* cls :
       {"gemm", "gemm_unaligned", "attention_forward", "attention_backward", "norm_forward", "norm_backward"}) {
    EXPECT_NEAR(gen[cls]["busy_ns"].get<double>(), modelled[cls]["busy_ns"].get<double>(),
                1e-3 * modelled[cls]["busy_ns"].get<double>())
        << cls;
    EXPECT_EQ(gen[cls]["kernels"], modelled[cls]["kernels"]) << cls;
  }
  const double generated = nlohmann::json::parse(testutil::read_text(dir + "/g.json"))["npus"][0]["gpu_busy_ns"];
  const double recorded = nlohmann::json::parse(testutil::read_text(dir + "/r.json"))["npus"][0]["gpu_busy_ns"];
  EXPECT_NEAR(generated / recorded, 1.0, 0.10) << generated << " against " << recorded;
}

}  // namespace
