// Sequences: a sequence fact is category kSequence with one `element` fact that holds for every
// element (merged over them: dims that differ between elements are unknown). The length is not a
// fact; SequenceLength reads it off the producers (SequenceConstruct/Empty/Insert/Erase) and is an
// execution symbol otherwise.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ops/dim_math.h"
#include "core/ops/op_registry.h"
#include "core/sym/ranges.h"

namespace sod2 {
namespace {

using sym::SymExpr;
using MaybeExpr = std::optional<SymExpr>;

Status ok() { return Status::ok_status(); }

// What holds for both a and b: equal dtypes, equal ranks, provably equal dims, equal values.
TensorFact merge(const InferContext& ctx, const TensorFact& a, const TensorFact& b) {
  TensorFact m = TensorFact::unknown(a.dtype == b.dtype ? a.dtype : DataType::kUndefined);
  // A sequence has one element type: a known one names it.
  if (a.dtype == DataType::kUndefined || b.dtype == DataType::kUndefined)
    m.dtype = a.dtype == DataType::kUndefined ? b.dtype : a.dtype;
  if (a.category != b.category) return m;
  m.category = a.category;
  if (a.element && b.element)
    m.element = std::make_shared<const TensorFact>(merge(ctx, *a.element, *b.element));
  if (!a.dims || !b.dims || a.dims->size() != b.dims->size()) return m;
  m.dims = DimList(a.dims->size());
  for (size_t i = 0; i < a.dims->size(); ++i) {
    const Dim &x = (*a.dims)[i], &y = (*b.dims)[i];
    if (x && y && (*x == *y || ctx.prove_eq(*x, *y) == Tri::kTrue)) (*m.dims)[i] = x;
  }
  if (a.value == b.value) m.value = a.value;
  return m;
}

TensorFact sequence_of(std::optional<TensorFact> element) {
  TensorFact s = TensorFact::unknown();
  s.category = TypeCategory::kSequence;
  if (element) {
    s.dtype = element->dtype;
    s.element = std::make_shared<const TensorFact>(std::move(*element));
  }
  return s;
}

TensorFact element_of(const TensorFact& seq) {
  return seq.element ? *seq.element : TensorFact::unknown(seq.dtype);
}

// The number of elements of value `id`, when its producers fix it.
std::optional<int64_t> known_length(const Graph& g, ValueId id, int depth = 0) {
  if (id == kNoValue || depth > 64) return std::nullopt;
  const Value& v = g.value(id);
  if (v.kind == ValueKind::kOuterScope && v.outer_graph)
    return known_length(*v.outer_graph, v.outer_value, depth + 1);
  if (v.producer == kNoNode) return std::nullopt;
  const Node& p = g.node(v.producer);
  if (!p.domain.empty()) return std::nullopt;
  if (p.op_type == "SequenceEmpty") return 0;
  if (p.op_type == "SequenceConstruct") return static_cast<int64_t>(p.inputs.size());
  if (p.inputs.empty()) return std::nullopt;
  const auto n = known_length(g, p.inputs[0], depth + 1);
  if (!n) return std::nullopt;
  if (p.op_type == "SequenceInsert") return *n + 1;
  if (p.op_type == "SequenceErase" && *n > 0) return *n - 1;
  if (p.op_type == "Identity") return n;
  return std::nullopt;
}

std::optional<int64_t> input_length(const InferContext& ctx, size_t i) {
  return ctx.has_input(i) ? known_length(ctx.graph(), ctx.node().inputs[i]) : std::nullopt;
}

Status construct_rule(InferContext& ctx) {
  std::optional<TensorFact> element;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    TensorFact f = ctx.input(i);
    element = element ? merge(ctx, *element, f) : std::move(f);
  }
  ctx.set_output(0, sequence_of(std::move(element)));
  return ok();
}

Status empty_rule(InferContext& ctx) {
  const auto dt = ctx.attr_int("dtype");
  TensorFact element = TensorFact::unknown(DataType::kFloat);
  if (dt)
    element.dtype =
        *dt >= 0 && *dt <= 64
            ? data_type_from_onnx(static_cast<int32_t>(*dt)).value_or(DataType::kUndefined)
            : DataType::kUndefined;
  ctx.set_output(0, sequence_of(std::move(element)));
  return ok();
}

Status insert_rule(InferContext& ctx) {
  const TensorFact &seq = ctx.input(0), &t = ctx.input(1);
  // Inserting into a sequence known to be empty: the new tensor is the only element.
  if (input_length(ctx, 0) == 0)
    ctx.set_output(0, sequence_of(t));
  else
    ctx.set_output(0, sequence_of(merge(ctx, element_of(seq), t)));
  return ok();
}

Status erase_rule(InferContext& ctx) {
  const TensorFact& seq = ctx.input(0);
  ctx.set_output(0, seq.category == TypeCategory::kSequence ? seq : sequence_of(std::nullopt));
  return ok();
}

Status at_rule(InferContext& ctx) {
  TensorFact e = element_of(ctx.input(0));
  ctx.set_output(0, std::move(e));
  return ok();
}

Status length_rule(InferContext& ctx) {
  const auto n = input_length(ctx, 0);
  const SymExpr len = n ? SymExpr(*n) : ctx.execution_symbol("length", 0, sym::kDefaultMaxDim);
  ctx.set_output(0, TensorFact::with_value(DataType::kInt64, {len}, true));
  return ok();
}

// Elements are slices along `axis`: of size 1 (dropped with keepdims=0) without `split`, of the
// split sizes otherwise. The element fact keeps only the dims all elements share.
Status split_to_sequence_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  TensorFact element = TensorFact::unknown(in.dtype);
  if (in.dims) {
    const int64_t axis = ctx.attr_int("axis", 0);
    const auto n = normalize_axis(axis, in.rank());
    if (!n)
      return invalid_model("attribute 'axis' = " + std::to_string(axis) +
                           " is out of range for rank " + std::to_string(in.rank()));
    DimList d = *in.dims;
    const size_t a = static_cast<size_t>(*n);
    if (!ctx.has_input(1)) {
      if (ctx.attr_int("keepdims", 1) != 0)
        d[a] = SymExpr(1);
      else
        d.erase(d.begin() + *n);
    } else {
      const TensorFact& split = ctx.input(1);
      d[a] = std::nullopt;
      if (split.value && split.rank() == 0) {
        // Equal chunks of `s`; the last is shorter unless s divides the dim.
        const SymExpr& s = (*split.value)[0];
        if (in.dims->at(a) && ctx.prove_eq(sym::mod(*(*in.dims)[a], s), 0) == Tri::kTrue) d[a] = s;
      } else if (split.value && !split.value->empty()) {
        bool same = true;
        for (const SymExpr& s : *split.value)
          same = same && ctx.prove_eq(s, (*split.value)[0]) == Tri::kTrue;
        if (same) d[a] = (*split.value)[0];
      }
    }
    element.dims = std::move(d);
  }
  ctx.set_output(0, sequence_of(std::move(element)));
  return ok();
}

// Elements joined along `axis` (new_axis=0) or stacked on a new `axis` (new_axis=1). The joined
// dim is the element count or a sum over elements: known only for a known length and element
// dim, an execution dim otherwise.
Status concat_from_sequence_rule(InferContext& ctx) {
  const TensorFact e = element_of(ctx.input(0));
  TensorFact out = TensorFact::unknown(e.dtype);
  if (e.dims) {
    const bool new_axis = ctx.attr_int("new_axis", 0) != 0;
    const int64_t axis = ctx.attr_int("axis", 0), rank = e.rank() + (new_axis ? 1 : 0);
    const auto n = normalize_axis(axis, rank);
    if (!n)
      return invalid_model("attribute 'axis' = " + std::to_string(axis) +
                           " is out of range for rank " + std::to_string(rank));
    const size_t a = static_cast<size_t>(*n);
    DimList d = *e.dims;
    const auto len = input_length(ctx, 0);
    Dim joined;
    if (len && new_axis)
      joined = SymExpr(*len);
    else if (len && d[a])
      joined = ctx.simplify(*d[a] * SymExpr(*len));
    else
      joined = ctx.execution_dim(0, a, 0, sym::kDefaultMaxDim);
    if (new_axis)
      d.insert(d.begin() + *n, joined);
    else
      d[a] = joined;
    out.dims = std::move(d);
  }
  ctx.set_output(0, std::move(out));
  return ok();
}

// The body's per-element results are not summarised: each output is a sequence of unknowns.
Status sequence_map_rule(InferContext& ctx) {
  for (size_t o = 0; o < ctx.num_outputs(); ++o)
    if (ctx.has_output(o)) ctx.set_output(o, sequence_of(std::nullopt));
  return ok();
}

}  // namespace

void register_sequence_ops(OpRegistry& registry) {
  auto add = [&](const char* op, int64_t since, OpClass c, std::vector<int> value_inputs,
                 ShapeRule rule) {
    registry.add({op, since, c, std::move(value_inputs), rule});
  };
  add("SequenceConstruct", 11, OpClass::kISDOS, {}, construct_rule);
  add("SequenceEmpty", 11, OpClass::kISDOS, {}, empty_rule);
  add("SequenceInsert", 11, OpClass::kISDOS, {}, insert_rule);
  add("SequenceErase", 11, OpClass::kISDOS, {}, erase_rule);
  add("SequenceAt", 11, OpClass::kISDOS, {}, at_rule);
  add("SequenceLength", 11, OpClass::kISDO, {}, length_rule);
  // Element sizes follow the split values; without them, how many elements there are is known
  // only from the data's shape at run time.
  add("SplitToSequence", 11, OpClass::kEDO, {1}, split_to_sequence_rule);
  add("ConcatFromSequence", 11, OpClass::kISDOS, {}, concat_from_sequence_rule);
  add("SequenceMap", 17, OpClass::kEDO, {}, sequence_map_rule);
}

}  // namespace sod2
