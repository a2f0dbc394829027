// StringConcat (elementwise, numpy broadcasting) and StringSplit (opset 20). StringSplit follows
// Python's str.split: without a delimiter, runs of whitespace separate and leading/trailing
// whitespace is dropped; with one, every occurrence separates (empty pieces kept). `maxsplit`
// bounds the splits, the rest staying in the last piece; Y is padded with "" to the most pieces.
#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/math/broadcast.h"
#include "runtime/kernels/strings/string_kernels.h"

namespace sod2::rt {
namespace {

class StringConcatKernel final : public Kernel {
 public:
  bool takes_strings() const override { return true; }
  Status run(KernelContext& ctx) override {
    const Tensor *x = ctx.input(0), *y = ctx.input(1);
    if (!x || !y || x->dtype != DType::kString || y->dtype != DType::kString)
      return invalid_argument("StringConcat: both inputs must be string tensors");
    Shape shape;
    SOD2_RETURN_IF_ERROR(math::broadcast_shapes("StringConcat", x->shape, y->shape, &shape));
    SOD2_ASSIGN_OR_RETURN(Tensor * z, ctx.output(0, DType::kString, shape));
    const Shape* ins[2] = {&x->shape, &y->shape};
    const math::BroadcastPlan plan = math::plan_broadcast(shape, ins, 2);
    const auto* a = x->as<const std::string>();
    const auto* b = y->as<const std::string>();
    auto* out = z->as<std::string>();
    math::for_each_row(plan, 0, shape.numel(), [&](int64_t o, const int64_t* off, int64_t n) {
      const int64_t sa = plan.inner_stride(0), sb = plan.inner_stride(1);
      for (int64_t i = 0; i < n; ++i) out[o + i] = a[off[0] + i * sa] + b[off[1] + i * sb];
    });
    return Status::ok_status();
  }
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// The pieces of `s` (views into it).
std::vector<std::string_view> split(std::string_view s, const std::string& delimiter,
                                    int64_t maxsplit) {
  std::vector<std::string_view> pieces;
  int64_t splits = 0;
  if (delimiter.empty()) {
    size_t i = 0;
    while (true) {
      while (i < s.size() && is_space(s[i])) ++i;
      if (i == s.size()) break;
      if (maxsplit >= 0 && splits == maxsplit) {
        size_t end = s.size();
        while (end > i && is_space(s[end - 1])) --end;
        pieces.push_back(s.substr(i, end - i));
        break;
      }
      size_t j = i;
      while (j < s.size() && !is_space(s[j])) ++j;
      pieces.push_back(s.substr(i, j - i));
      ++splits;
      i = j;
    }
    return pieces;
  }
  size_t start = 0;
  while (maxsplit < 0 || splits < maxsplit) {
    const size_t at = s.find(delimiter, start);
    if (at == std::string_view::npos) break;
    pieces.push_back(s.substr(start, at - start));
    start = at + delimiter.size();
    ++splits;
  }
  pieces.push_back(s.substr(start));
  return pieces;
}

class StringSplitKernel final : public Kernel {
 public:
  StringSplitKernel(std::string delimiter, int64_t maxsplit)
      : delimiter_(std::move(delimiter)), maxsplit_(maxsplit) {}
  bool takes_strings() const override { return true; }

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x || x->dtype != DType::kString)
      return invalid_argument("StringSplit: input must be a string tensor");
    if (x->shape.rank() + 1 > kMaxRank)
      return unsupported("StringSplit: input rank " + std::to_string(x->shape.rank()) +
                         " is too high");
    const int64_t n = x->numel();
    const auto* in = x->as<const std::string>();
    std::vector<std::vector<std::string_view>> pieces(static_cast<size_t>(n));
    int64_t most = 0;
    for (int64_t i = 0; i < n; ++i) {
      pieces[static_cast<size_t>(i)] = split(in[i], delimiter_, maxsplit_);
      most = std::max<int64_t>(most, static_cast<int64_t>(pieces[static_cast<size_t>(i)].size()));
    }
    Shape yshape = x->shape;
    yshape.push_back(most);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kString, yshape));
    SOD2_ASSIGN_OR_RETURN(Tensor * z, ctx.output(1, DType::kInt64, x->shape));
    auto* out = y->as<std::string>();
    for (int64_t i = 0; i < n; ++i) {
      const auto& p = pieces[static_cast<size_t>(i)];
      z->as<int64_t>()[i] = static_cast<int64_t>(p.size());
      for (int64_t k = 0; k < most; ++k)
        out[i * most + k] = k < static_cast<int64_t>(p.size()) ? std::string(p[k]) : std::string();
    }
    return Status::ok_status();
  }

 private:
  std::string delimiter_;
  int64_t maxsplit_;
};

Expected<std::unique_ptr<Kernel>> make_concat(const NodeInfo&) {
  return std::unique_ptr<Kernel>(std::make_unique<StringConcatKernel>());
}

Expected<std::unique_ptr<Kernel>> make_split(const NodeInfo& node) {
  std::string delimiter;
  if (const AttrValue* a = node.attrs.find("delimiter")) {
    if (a->kind != AttrValue::Kind::kString)
      return invalid_model("StringSplit: delimiter must be a string");
    delimiter = a->s;
  }
  SOD2_ASSIGN_OR_RETURN(const int64_t maxsplit, node.attrs.get_int("maxsplit", -1));
  if (node.attrs.has("maxsplit") && maxsplit < 0)
    return invalid_model("StringSplit: maxsplit must be positive, got " + std::to_string(maxsplit));
  return std::unique_ptr<Kernel>(std::make_unique<StringSplitKernel>(delimiter, maxsplit));
}

}  // namespace

void register_string_concat_split(KernelRegistry& r) {
  r.add("", "StringConcat", 20, make_concat);
  r.add("", "StringSplit", 20, make_split);
}

}  // namespace sod2::rt
