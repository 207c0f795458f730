// An op's arguments as a Chakra trace records them. Chakra's PyTorch
// converter writes a COMP node's inputs and outputs as Python literals: per
// argument, a tensor's [tensor_id, storage_id, offset, numel, elem_bytes,
// device] with its shape, a list of them, or a scalar's text. A generator
// run in-process hands the same structure without the text (NodeSource).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricsim::traces {

/// One tensor argument (or result) of an op.
struct TensorArg {
  std::int64_t id = 0;  // the trace's tensor_id: one tensor counted once
  std::vector<std::int64_t> shape;
  std::uint64_t elements = 0;
  std::uint32_t element_bytes = 0;
  std::uint64_t bytes() const { return elements * element_bytes; }
  bool operator==(const TensorArg& o) const {
    return id == o.id && shape == o.shape && elements == o.elements && element_bytes == o.element_bytes;
  }
};

/// One argument as the trace writes it: a tensor, a list of tensors, or a
/// scalar (its text, for flags such as is_causal).
struct OpArg {
  std::vector<TensorArg> tensors;  // one for a tensor, several for a list
  bool is_tensor = false;          // a single tensor
  std::string scalar;              // "True", "1024", ... ; empty for tensors
  bool operator==(const OpArg& o) const {
    return tensors == o.tensors && is_tensor == o.is_tensor && scalar == o.scalar;
  }
};

/// A node's inputs and outputs.
struct OpIo {
  std::vector<OpArg> inputs, outputs;
};

/// The args of a node's inputs or outputs from its `values` and `shapes`
/// strings; nullopt when they are not the literals the converter writes.
std::optional<std::vector<OpArg>> parse_op_args(std::string_view values, std::string_view shapes);

/// A scalar argument written as `text` ("1e-05", "'<None>'", "[0, 0]"), as
/// parse_op_args reads it in a list of values; nullopt where that fails.
std::optional<OpArg> scalar_arg(std::string_view text);

}  // namespace fabricsim::traces
