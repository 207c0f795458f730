#include "traces/reader/op_args.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace fabricsim::traces {

namespace {

// ---- the converter's Python literals: [1, 'cuda:0', [2, 3], True, 0.5] ----

struct Literal {
  enum class Kind { kAtom, kString, kList } kind = Kind::kAtom;
  std::string text;  // an atom's or a string's text
  std::vector<Literal> items;
};

class LiteralParser {
 public:
  explicit LiteralParser(std::string_view s) : s_(s) {}
  std::optional<Literal> parse() {
    auto v = value(0);
    skip();
    if (!v || i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  std::optional<Literal> value(int depth) {
    if (depth > 16) return std::nullopt;  // deeper than any op's arguments
    skip();
    if (i_ >= s_.size()) return std::nullopt;
    Literal v;
    const char c = s_[i_];
    if (c == '[' || c == '(') {
      const char close = c == '[' ? ']' : ')';
      v.kind = Literal::Kind::kList;
      ++i_;
      skip();
      if (i_ < s_.size() && s_[i_] == close) {
        ++i_;
        return v;
      }
      for (;;) {
        auto item = value(depth + 1);
        if (!item) return std::nullopt;
        v.items.push_back(std::move(*item));
        skip();
        if (i_ >= s_.size()) return std::nullopt;
        if (s_[i_] == close) {
          ++i_;
          return v;
        }
        if (s_[i_] != ',') return std::nullopt;
        ++i_;
      }
    }
    if (c == '\'' || c == '"') {
      v.kind = Literal::Kind::kString;
      const std::size_t end = s_.find(c, i_ + 1);
      if (end == std::string_view::npos) return std::nullopt;
      v.text = std::string(s_.substr(i_ + 1, end - i_ - 1));
      i_ = end + 1;
      return v;
    }
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != ']' && s_[i_] != ')') ++i_;
    v.text = std::string(s_.substr(start, i_ - start));
    while (!v.text.empty() && std::isspace(static_cast<unsigned char>(v.text.back()))) v.text.pop_back();
    if (v.text.empty()) return std::nullopt;
    return v;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

std::optional<std::int64_t> integer(const Literal& v) {
  if (v.kind != Literal::Kind::kAtom || v.text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return x;
}

/// [tensor_id, storage_id, offset, numel, elem_bytes, 'device'] with its shape.
std::optional<TensorArg> tensor(const Literal& value, const Literal* shape) {
  if (value.kind != Literal::Kind::kList || value.items.size() != 6 || value.items[5].kind != Literal::Kind::kString) {
    return std::nullopt;
  }
  const auto id = integer(value.items[0]), numel = integer(value.items[3]), elem = integer(value.items[4]);
  if (!id || !numel || !elem || *numel < 0 || *elem <= 0 || *elem > 64) return std::nullopt;
  TensorArg t;
  t.id = *id;
  t.elements = static_cast<std::uint64_t>(*numel);
  t.element_bytes = static_cast<std::uint32_t>(*elem);
  if (shape && shape->kind == Literal::Kind::kList) {
    for (const Literal& d : shape->items) {
      const auto x = integer(d);
      if (!x || *x < 0) return std::nullopt;
      t.shape.push_back(*x);
    }
  }
  return t;
}

}  // namespace

std::optional<std::vector<OpArg>> parse_op_args(std::string_view values, std::string_view shapes) {
  if (values.empty() && shapes.empty()) return std::vector<OpArg>{};
  const auto v = LiteralParser(values).parse();
  const auto s = LiteralParser(shapes).parse();
  if (!v || v->kind != Literal::Kind::kList || (s && s->kind != Literal::Kind::kList)) return std::nullopt;
  std::vector<OpArg> args;
  for (std::size_t i = 0; i < v->items.size(); ++i) {
    const Literal& value = v->items[i];
    const Literal* shape = s && i < s->items.size() ? &s->items[i] : nullptr;
    OpArg a;
    if (auto t = tensor(value, shape)) {
      a.is_tensor = true;
      a.tensors.push_back(std::move(*t));
    } else if (value.kind == Literal::Kind::kList) {  // a list of tensors, or of scalars
      for (std::size_t j = 0; j < value.items.size(); ++j) {
        const Literal* inner =
            shape && shape->kind == Literal::Kind::kList && j < shape->items.size() ? &shape->items[j] : nullptr;
        if (auto t = tensor(value.items[j], inner)) a.tensors.push_back(std::move(*t));
      }
    } else {
      a.scalar = value.text;
    }
    args.push_back(std::move(a));
  }
  return args;
}

std::optional<OpArg> scalar_arg(std::string_view text) {
  // A plain atom reads as its own text; anything else (a quoted string, a
  // list) as the parser reads it, inside a list as the converter writes it.
  const bool plain = !text.empty() && text.find_first_of("[]()'\", \t\n") == std::string_view::npos;
  if (plain) return OpArg{{}, false, std::string(text)};
  auto args = parse_op_args("[" + std::string(text) + "]", "");
  if (!args || args->size() != 1) return std::nullopt;
  return std::move((*args)[0]);
}

}  // namespace fabricsim::traces
