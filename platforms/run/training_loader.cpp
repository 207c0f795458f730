#include "platforms/run/training_loader.h"

#include <sys/statvfs.h>

#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "models/npu/work_bounds.h"
#include "tlm/util/errors.h"
#include "tlm/util/input_file.h"
#include "tlm/util/json_input.h"
#include "traces/generator/et_writer.h"

namespace fabricsim {

// traces/models/*.yaml, compiled in (traces/models/embed.cmake).
const std::map<std::string, std::string>& model_preset_texts();

std::vector<std::string> model_presets() {
  std::vector<std::string> out;
  for (const auto& [name, text] : model_preset_texts()) out.push_back(name);
  return out;
}

bool is_job_override(const YamlOverride& o) {
  return o.path.rfind("model.", 0) == 0 || o.path.rfind("training.", 0) == 0;
}

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string preset_list() {
  std::string out;
  for (const auto& name : model_presets()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

const std::string* preset_text(const std::string& name) {
  const auto& texts = model_preset_texts();
  const auto it = texts.find(name);
  return it == texts.end() ? nullptr : &it->second;
}

}  // namespace

YAML::Node model_from_hf_config(const std::string& text, const std::string& path) {
  const nlohmann::json j = parse_json_strictly(text, path);
  if (!j.is_object()) throw InputError(path + ": a Hugging Face config.json is an object");
  const std::string type =
      j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "";
  auto fail = [&](const std::string& what) { throw InputError(path + ": " + what); };
  // The first of `keys` that is given, as a whole number.
  auto count = [&](std::initializer_list<const char*> keys, bool required) -> std::optional<std::uint64_t> {
    for (const char* k : keys) {
      if (!j.contains(k) || j[k].is_null()) continue;
      const auto& v = j[k];
      if (!v.is_number_integer() &&
          !(v.is_number_float() &&
            v.get<double>() == static_cast<double>(static_cast<std::int64_t>(v.get<double>())))) {
        fail(std::string("\"") + k + "\" is " + json_excerpt(v) + ": a whole number is accepted");
      }
      const double d = v.get<double>();
      if (d < 0) fail(std::string("\"") + k + "\" is " + json_excerpt(v) + ": a whole number >= 0 is accepted");
      return static_cast<std::uint64_t>(d);
    }
    if (required) {
      std::string names;
      for (const char* k : keys) names += (names.empty() ? "\"" : " or \"") + std::string(k) + "\"";
      fail("no " + names + " (model_type \"" + type + "\"): the model's shape cannot be read");
    }
    return std::nullopt;
  };
  auto flag = [&](const char* key, bool otherwise) {
    if (!j.contains(key) || j[key].is_null()) return otherwise;
    if (!j[key].is_boolean())
      fail(std::string("\"") + key + "\" is " + json_excerpt(j[key]) + ": true or false is accepted");
    return j[key].get<bool>();
  };
  if (j.contains("kv_lora_rank") || j.contains("q_lora_rank")) {
    fail(
        "multi-head latent attention (kv_lora_rank, DeepSeek-V2/V3) is not modelled: its projections are not "
        "generated; give a model file with standard attention instead");
  }
  YAML::Node m;
  const bool gpt2 = type == "gpt2" || j.contains("n_embd");
  m["layers"] = *count({"num_hidden_layers", "n_layer", "num_layers"}, true);
  m["hidden"] = *count({"hidden_size", "n_embd", "d_model"}, true);
  m["heads"] = *count({"num_attention_heads", "n_head"}, true);
  if (auto v = count({"num_key_value_heads", "num_kv_heads"}, false)) m["kv_heads"] = *v;
  if (auto v = count({"head_dim"}, false)) m["head_dim"] = *v;
  if (auto v = count({"intermediate_size", "n_inner", "ffn_hidden_size"}, false)) m["ffn_hidden"] = *v;
  m["vocab"] = *count({"vocab_size"}, true);
  if (auto v = count({"max_position_embeddings", "n_positions", "n_ctx"}, false)) m["seq"] = *v;
  // GPT-2 style (LayerNorm, GeLU, learned positions, biases, tied) or
  // Llama style (RMSNorm, SwiGLU, rotary, no biases, untied).
  std::string act;
  for (const char* k : {"hidden_act", "activation_function"}) {
    if (j.contains(k) && j[k].is_string()) act = j[k].get<std::string>();
  }
  const bool swiglu = act == "silu" || act == "swiglu";
  m["mlp"] = swiglu ? "swiglu" : "gelu";
  m["norm"] = j.contains("rms_norm_eps") ? "rmsnorm" : "layernorm";
  m["position"] = gpt2 || j.contains("n_positions") ? "learned" : "rope";
  m["bias"] = gpt2 ? true : flag("attention_bias", false);
  m["tied_embeddings"] = flag("tie_word_embeddings", gpt2);
  if (auto e = count({"num_local_experts", "n_routed_experts", "num_experts"}, false); e && *e > 0) {
    m["experts"] = *e;
    m["top_k"] = *count({"num_experts_per_tok", "moe_topk", "top_k"}, true);
    if (auto v = count({"n_shared_experts"}, false)) m["shared_experts"] = *v;
    if (auto v = count({"moe_intermediate_size"}, false)) m["expert_ffn_hidden"] = *v;
    if (auto v = count({"first_k_dense_replace"}, false)) m["dense_layers"] = *v;
  }
  return m;
}

std::shared_ptr<const TrainingJob> load_training_job(const std::string& model, const std::vector<YamlOverride>& sets,
                                                     int gpus) {
  // The document: {name, model: {...}, training: {...}}.
  std::string where = model;
  YAML::Node root;
  if (model.empty()) throw InputError("--model: give a preset (" + preset_list() + "), a model file or a config.json");
  if (const std::string* text = preset_text(model)) {
    where = "preset " + model + " (traces/models/" + model + ".yaml)";
    root = parse_yaml_text(*text, where);
  } else if (ends_with(model, ".json")) {
    root["name"] = file_stem(model.substr(0, model.size() - 5));
    root["model"] = model_from_hf_config(read_input_file(model, "model file (a Hugging Face config.json)"), model);
  } else if (model.find('/') == std::string::npos && !ends_with(model, ".yaml") && !ends_with(model, ".yml")) {
    throw InputError("--model " + model + ": not a preset (" + preset_list() +
                     "), and not a file (a model file ends in .yaml, a Hugging Face config in .json)");
  } else {
    root = load_yaml_file(model, "model file");
  }
  const auto origins = std::make_shared<const OverrideOrigins>(apply_overrides(root, sets));
  const YamlInput in(where, origins);
  in.require_map(root, "a model file");
  in.only_keys(root, {"name", "source", "model", "training"}, "a model file");
  const std::string name = in.text(root, "name", file_stem(model));
  ModelSpec spec;
  YAML::Node m = in.required(root, "model", "a model file");
  if (m.IsScalar()) {
    // A preset's model, trained as this file says.
    const std::string* text = preset_text(m.Scalar());
    if (!text) in.fail(m, "model \"" + m.Scalar() + "\" is not a preset (" + preset_list() + ")");
    const YAML::Node preset = parse_yaml_text(*text, "preset " + m.Scalar());
    m = preset["model"];
  }
  in.require_map(m, "model");
  read_params(in, m, ModelSpec::table(), spec, "model");
  if (const std::string why = spec.invalid(); !why.empty()) in.fail(m, "model: " + why);
  TrainingSpec training;
  if (const YAML::Node t = root["training"]) {
    in.require_map(t, "training");
    read_params(in, t, TrainingSpec::table(), training, "training");
  }
  try {
    return std::make_shared<const TrainingJob>(spec, training, gpus, name);
  } catch (const std::invalid_argument& e) {
    throw InputError(where + ": " + name + " on " + std::to_string(gpus) + " GPUs: " + e.what());
  }
}

std::string check_job_memory(const TrainingJob& job, const PlatformSpec& spec) {
  std::ostringstream out;
  const double gib = 1073741824.0;
  const double capacity = spec.hbm ? static_cast<double>(spec.hbm->size_bytes) : 0;
  std::string worst;
  double most = 0;
  for (int p = 0; p < job.pp(); ++p) {
    const int rank = job.rank_of({0, 0, 0, p});
    const MemoryEstimate m = job.memory(rank);
    std::ostringstream line;
    line.setf(std::ios::fixed);
    line.precision(1);
    line << "stage " << p << " (rank " << rank << "): " << m.total() / gib << " GiB = weights " << m.weights / gib
         << " + gradients " << m.gradients / gib << " + optimizer " << m.optimizer / gib << " + activations "
         << m.activations / gib << " (" << m.in_flight << " microbatch-chunks in flight) + communication "
         << m.communication / gib << " + reserved " << m.reserved / gib;
    if (job.pp() <= 4 || p == 0 || p == job.pp() - 1) out << "memory: " << line.str() << "\n";
    if (m.total() > most) {
      most = m.total();
      worst = line.str();
    }
  }
  if (capacity <= 0) {
    out << "memory: the platform models no HBM (npu.hbm): not checked\n";
  } else if (most > capacity) {
    std::ostringstream msg;
    msg.setf(std::ios::fixed);
    msg.precision(1);
    msg << job.name() << " does not fit: " << worst << ", more than the " << capacity / gib
        << " GiB of each GPU's HBM (npu.hbm). Shard more (training.tp, pp, zero), recompute (training.recompute: "
           "full), or run it anyway with --set training.allow_oom=true";
    if (!job.training().allow_oom) throw InputError(msg.str());
    out << "warning: " << msg.str() << "\n";
  }
  return out.str();
}

namespace {
std::string gib(double bytes) {  // MiB below a GiB: a small job's estimate stays readable
  if (bytes >= (1ull << 30)) return WorkBounds::gib_text(bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1ull << 20));
  return buf;
}
}  // namespace

double free_space_for(const std::string& prefix) {
  // The folder they go to, or the nearest one above it that exists (the
  // writer makes the rest).
  std::string folder = prefix.find('/') == std::string::npos ? "." : prefix.substr(0, prefix.find_last_of('/') + 1);
  struct statvfs fs {};
  while (::statvfs(folder.c_str(), &fs) != 0 && folder.size() > 1) {
    const std::size_t up = folder.find_last_of('/', folder.size() - 2);
    folder = up == std::string::npos ? "." : folder.substr(0, up + 1);
  }
  if (::statvfs(folder.c_str(), &fs) != 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
}

void write_job_traces(const TrainingJob& job, const std::string& prefix, double limit, bool force, std::ostream& log) {
  // Rank 0's nodes as the writer frames them (a varint length, then the
  // node), and every stage's count from its first rank's counting pass.
  double rank0_bytes = 0, rank0_nodes = 0;
  {
    const auto source = job.source(0, OpIoForm::kText);
    ChakraProtoMsg::Node node;
    while (source->next(node)) {
      const double size = static_cast<double>(node.ByteSizeLong());
      rank0_bytes += size + (size < 128 ? 1 : size < 16384 ? 2 : 3);
      ++rank0_nodes;
    }
  }
  const double per_node = rank0_nodes > 0 ? rank0_bytes / rank0_nodes : 0;
  double bytes = 0;
  const int ranks_per_stage = job.gpus() / job.pp();
  for (int p = 0; p < job.pp(); ++p) {  // stage 0's is rank 0's, counted above
    const double nodes =
        p == 0 ? rank0_nodes
               : static_cast<double>(job.source(job.rank_of({0, 0, 0, p}), OpIoForm::kText)->dense_ids().value_or(0));
    bytes += nodes * per_node * ranks_per_stage;
  }
  const std::string what = std::to_string(job.gpus()) + " traces " + prefix + ".<rank>.et";
  if (const double free = free_space_for(prefix); bytes > free) {
    throw InputError(what + " would take about " + gib(bytes) + ", more than the " + gib(free) +
                     " free where they go (run the step in process with `fabricsim run --model`, which writes "
                     "nothing)");
  }
  if (bytes > limit && !force) {
    throw InputError(what + " would take about " + gib(bytes) + ", past the limit of " + gib(limit) +
                     " (give --force or a larger --limit to write them anyway, or run the step in process with "
                     "`fabricsim run --model`)");
  }
  log << "writing " << what << ", about " << gib(bytes) << "\n";
  for (int r = 0; r < job.gpus(); ++r) {
    traces::EtWriter out(prefix + "." + std::to_string(r) + ".et");
    const auto source = job.source(r, OpIoForm::kText);
    ChakraProtoMsg::Node node;
    while (source->next(node)) out.write(node);
    out.close();
  }
}

}  // namespace fabricsim
