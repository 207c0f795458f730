// libFuzzer target: the Chakra ET reader on arbitrary bytes (plain and
// gzip), with every attribute accessor the workload uses.
#include "fuzz_input.h"
#include "tlm/util/errors.h"
#include "traces/reader/et_reader.h"

using namespace fabricsim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = fuzz::write_input(data, size, ".et");
  try {
    traces::EtReader reader(path);
    ChakraProtoMsg::Node node;
    for (int i = 0; i < 100000 && reader.next(node); ++i) {
      (void)traces::node_type_name(node.type());
      for (const char* name : {"num_ops", "tensor_size", "comm_type", "comm_size", "comm_src", "comm_dst", "comm_tag",
                               "root", "pg_name", "is_cpu_op"}) {
        (void)traces::attr_int(node, name);
        (void)traces::attr_double(node, name);
        (void)traces::attr_string(node, name);
        (void)traces::attr_int_list(node, name);
      }
    }
  } catch (const traces::TraceError&) {
  } catch (const InputError&) {
  }
  return 0;
}
