// Reading a training job: the model (a shipped preset, a model file or a
// Hugging Face config.json) and how it is trained (the file's `training:`
// section and --set training.KEY=VALUE), checked against the GPUs it runs on.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "platforms/assembly/yaml_input.h"
#include "traces/model/training_job.h"

namespace fabricsim {

/// The shipped model presets (traces/models/*.yaml), by name.
std::vector<std::string> model_presets();

/// Whether an override is the job's (model.* or training.*), not the platform's.
bool is_job_override(const YamlOverride& o);

/// `model` is a preset's name, a model file (YAML: name, model, training) or
/// a Hugging Face config.json; `sets` are the job's overrides (model.KEY,
/// training.KEY). InputError (exit 2) naming the file, the key and what is
/// accepted for anything that cannot be read or laid out on `gpus` GPUs.
std::shared_ptr<const TrainingJob> load_training_job(const std::string& model, const std::vector<YamlOverride>& sets,
                                                     int gpus);

/// Each pipeline stage's memory on the platform's GPUs, as lines for the
/// console; InputError (exit 2) with the numbers where a stage does not fit
/// the NPU's HBM, unless training.allow_oom.
std::string check_job_memory(const TrainingJob& job, const PlatformSpec& spec);

/// Writes each rank's step as PREFIX.<rank>.et (`gen model`). The bytes are
/// estimated first, from rank 0's nodes as written and each pipeline
/// stage's node count, and printed; past the free space of the folder they
/// go to, or past `limit` bytes unless `force`, InputError (exit 2) with
/// the numbers and nothing written.
constexpr double kMaxTraceBytes = 64.0 * (1ull << 30);  // gen --limit's default
/// Bytes free where traces with this prefix go (its folder, or the nearest
/// one above that exists); infinity when unknown.
double free_space_for(const std::string& prefix);
void write_job_traces(const TrainingJob& job, const std::string& prefix, double limit, bool force, std::ostream& log);

/// A Hugging Face config.json as a model section (the keys of ModelSpec's
/// table), for the file `path` names in messages.
YAML::Node model_from_hf_config(const std::string& text, const std::string& path);

}  // namespace fabricsim
