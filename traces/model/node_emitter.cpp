#include "traces/model/node_emitter.h"

#include <stdexcept>

namespace fabricsim::model_nodes {

namespace {

const char* type_name(std::uint32_t element_bytes) {
  switch (element_bytes) {
    case 4:
      return "Tensor(float)";
    case 8:
      return "Tensor(long int)";
    case 1:
      return "Tensor(bool)";
    default:
      return "Tensor(c10::BFloat16)";
  }
}

void append_tensor(std::string& v, std::string& s, const Tensor& t) {
  v += '[';
  v += std::to_string(t.id);
  v += ", ";
  v += std::to_string(t.id);
  v += ", 0, ";
  v += std::to_string(static_cast<std::uint64_t>(t.elements()));
  v += ", ";
  v += std::to_string(t.element_bytes);
  v += ", 'cuda:0']";
  s += '[';
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(t.shape[i]);
  }
  s += ']';
}

}  // namespace

void write_io(ChakraProtoMsg::IOInfo* io, const std::vector<Arg>& args) {
  std::string v = "[", s = "[", ty = "[";
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i) v += ", ", s += ", ", ty += ", ";
    const Arg& a = args[i];
    if (!a.list && a.tensors.size() == 1) {
      append_tensor(v, s, a.tensors[0]);
      ty += '\'';
      ty += type_name(a.tensors[0].element_bytes);
      ty += '\'';
    } else if (a.list) {
      v += '[', s += '[';
      ty += "'GenericList[";
      for (std::size_t j = 0; j < a.tensors.size(); ++j) {
        if (j) v += ", ", s += ", ", ty += ",";
        append_tensor(v, s, a.tensors[j]);
        ty += type_name(a.tensors[j].element_bytes);
      }
      v += ']', s += ']';
      ty += "]'";
    } else {
      v += a.scalar;
      s += "[]";
      ty += "'Scalar'";
    }
  }
  v += ']', s += ']', ty += ']';
  io->set_values(std::move(v));
  io->set_shapes(std::move(s));
  io->set_types(std::move(ty));
}

std::vector<traces::OpArg> op_args(const std::vector<Arg>& args) {
  // As write_io writes them and parse_op_args reads them back.
  auto tensor = [](const Tensor& t) {
    return traces::TensorArg{t.id, t.shape, static_cast<std::uint64_t>(t.elements()), t.element_bytes};
  };
  std::vector<traces::OpArg> out;
  out.reserve(args.size());
  for (const Arg& a : args) {
    traces::OpArg o;
    if (!a.list && a.tensors.size() == 1) {
      o.is_tensor = true;
      o.tensors.push_back(tensor(a.tensors[0]));
    } else if (a.list) {
      for (const Tensor& t : a.tensors) o.tensors.push_back(tensor(t));
    } else {
      auto s = traces::scalar_arg(a.scalar);
      if (!s) throw std::logic_error("a generated op's scalar argument does not read back: " + a.scalar);
      o = std::move(*s);
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace fabricsim::model_nodes
