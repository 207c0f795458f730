#include "support/test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fabricsim::testutil {

namespace fs = std::filesystem;

namespace {
std::string made_root;  // empty until a test asks for scratch space

const std::string& scratch_root() {
  // A unique name, not only the PID: a folder kept after a failure must not
  // be removed by a later process that gets the same PID.
  if (made_root.empty()) {
    std::string name =
        (fs::temp_directory_path() / ("fabricsim-test-" + std::to_string(::getpid()) + "-XXXXXX")).string();
    if (!::mkdtemp(name.data())) throw std::runtime_error("cannot create a scratch folder from " + name);
    made_root = name;
  }
  return made_root;
}
}  // namespace

const std::string& scratch_root_if_made() {
  return made_root;
}

std::string scratch_dir(const std::string& name) {
  const fs::path dir = fs::path(scratch_root()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string fabricsim_binary() {
  return FABRICSIM_BINARY;
}

CommandResult run_fabricsim(const std::string& args, const std::string& launcher) {
  const std::string dir = scratch_dir("cmd");
  const std::string out = dir + "/out.txt", err = dir + "/err.txt";
  const std::string cmd =
      (launcher.empty() ? "" : launcher + " ") + std::string(FABRICSIM_BINARY) + " " + args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

std::string shared_trace(const std::string& relative) {
  return std::string(FABRICSIM_SHARED_TRACES) + "/" + relative;
}
bool have_shared_data() {
  return FABRICSIM_SHARED_TRACES[0] != '\0';
}

std::string astra_network(const std::string& dir, const std::string& topology, int npus, double bandwidth_GiBps,
                          double latency_ns) {
  const std::string path = dir + "/network.yml";
  std::ostringstream os;
  os << "topology: [ " << topology << " ]\nnpus_count: [ " << npus << " ]\nbandwidth: [ " << bandwidth_GiBps
     << " ]\nlatency: [ " << latency_ns << " ]\n";
  write_text(path, os.str());
  return path;
}

}  // namespace fabricsim::testutil
