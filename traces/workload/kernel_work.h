// What a PyTorch kernel does, from the op and the tensors a Chakra trace
// records for it: its class, FLOPs, bytes and, for a GEMM, its shape.
//
// Chakra's PyTorch converter writes COMP nodes with an `op_schema` attribute
// ("aten::mm(Tensor self, Tensor mat2) -> Tensor") and, per input and output,
// the tensors' values ([tensor_id, storage_id, offset, numel, elem_bytes,
// device]) and shapes, as Python literals. No num_ops, no tensor_size: the
// op and the shapes are all there is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/npu/compute_model.h"
#include "traces/reader/op_args.h"

namespace fabricsim::traces {

/// The op a node runs: its op_schema's name ("aten::mm"), else its name.
std::string op_name(std::string_view op_schema, std::string_view node_name);

/// The kernel work of `op` with these inputs and outputs (schema: the
/// op_schema text, for named flags); nullopt when the op is not one the
/// model knows, or its tensors do not say enough.
std::optional<KernelWork> kernel_work(const std::string& op, std::string_view schema, const std::vector<OpArg>& in,
                                      const std::vector<OpArg>& out);

}  // namespace fabricsim::traces
