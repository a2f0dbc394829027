#include "core/ops/infer_context.h"

#include <algorithm>

#include "core/sym/prover.h"

namespace sod2 {
namespace {

const Attribute* find_attr(const Node& node, std::string_view name, AttributeType type) {
  const Attribute* a = node.attribute(name);
  return a && a->type == type ? a : nullptr;
}

Tri to_tri(sym::Proof p) {
  switch (p) {
    case sym::Proof::kTrue: return Tri::kTrue;
    case sym::Proof::kFalse: return Tri::kFalse;
    default: return Tri::kUnknown;
  }
}

}  // namespace

std::optional<int64_t> InferContext::attr_int(std::string_view name) const {
  const Attribute* a = find_attr(node(), name, AttributeType::kInt);
  return a ? std::optional<int64_t>(a->i) : std::nullopt;
}

int64_t InferContext::attr_int(std::string_view name, int64_t fallback) const {
  return attr_int(name).value_or(fallback);
}

std::optional<float> InferContext::attr_float(std::string_view name) const {
  const Attribute* a = find_attr(node(), name, AttributeType::kFloat);
  return a ? std::optional<float>(a->f) : std::nullopt;
}

std::optional<std::vector<int64_t>> InferContext::attr_ints(std::string_view name) const {
  const Attribute* a = find_attr(node(), name, AttributeType::kInts);
  return a ? std::optional<std::vector<int64_t>>(a->ints) : std::nullopt;
}

std::optional<std::vector<float>> InferContext::attr_floats(std::string_view name) const {
  const Attribute* a = find_attr(node(), name, AttributeType::kFloats);
  return a ? std::optional<std::vector<float>>(a->floats) : std::nullopt;
}

std::optional<std::string> InferContext::attr_string(std::string_view name) const {
  const Attribute* a = find_attr(node(), name, AttributeType::kString);
  return a ? std::optional<std::string>(a->s) : std::nullopt;
}

const Tensor* InferContext::attr_tensor(std::string_view name) const {
  const Attribute* a = node().attribute(name);
  if (!a || (a->type != AttributeType::kTensor && a->type != AttributeType::kSparseTensor))
    return nullptr;
  return &a->t;
}

const Graph* InferContext::attr_graph(std::string_view name) const {
  const Attribute* a = find_attr(node(), name, AttributeType::kGraph);
  return a ? a->g.get() : nullptr;
}

std::optional<std::vector<int64_t>> InferContext::input_ints(size_t i) const {
  if (!has_input(i)) return std::nullopt;
  // Lists (axes, steps, splits) are 1-D; a value of higher rank there is not one.
  const TensorFact& f = input(i);
  if (f.dims && f.dims->size() > 1) return std::nullopt;
  return f.int_values();
}

namespace {
// The upper end of `bound` as a constant range's hi: no bound past kDefaultMaxDim.
int64_t constant_upper(const InferContext& ctx, const std::optional<sym::SymExpr>& bound) {
  if (!bound) return sym::kDefaultMaxDim;
  return std::min<int64_t>(sym::bounds(*bound, ctx.ranges()).hi, sym::kDefaultMaxDim);
}
}  // namespace

sym::SymExpr InferContext::bounded_execution_dim(size_t output, size_t dim, int64_t lo,
                                                 const std::optional<sym::SymExpr>& bound) {
  const sym::SymExpr e = execution_dim(output, dim, lo, constant_upper(*this, bound));
  if (bound) bound_execution(e, simplify(*bound));
  return e;
}

sym::SymExpr InferContext::bounded_execution_symbol(std::string_view suffix, int64_t lo,
                                                    const std::optional<sym::SymExpr>& bound) {
  const sym::SymExpr e = execution_symbol(suffix, lo, constant_upper(*this, bound));
  if (bound) bound_execution(e, simplify(*bound));
  return e;
}

Tri InferContext::prove_eq(const sym::SymExpr& a, const sym::SymExpr& b) const {
  return to_tri(sym::prove_eq(a, b, ranges()));
}

Tri InferContext::prove_le(const sym::SymExpr& a, const sym::SymExpr& b) const {
  return to_tri(sym::prove_le(a, b, ranges()));
}

Tri InferContext::prove_lt(const sym::SymExpr& a, const sym::SymExpr& b) const {
  return to_tri(sym::prove_lt(a, b, ranges()));
}

}  // namespace sod2
