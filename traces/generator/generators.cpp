#include "traces/generator/generators.h"

#include <stdexcept>

#include "traces/generator/et_writer.h"
#include "traces/reader/et_reader.h"

namespace fabricsim::traces {

std::vector<std::string> write_collective_microbenchmark(const std::string& prefix, int npus, int comm_type,
                                                         std::uint64_t bytes, int iterations) {
  if (npus < 1) throw std::invalid_argument("need at least one NPU");
  if (iterations < 1) throw std::invalid_argument("need at least one iteration");
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
      add_int(n, "comm_size", static_cast<std::int64_t>(bytes));
      w.write(n);
    }
    w.close();
    files.push_back(path);
  }
  return files;
}

}  // namespace fabricsim::traces
