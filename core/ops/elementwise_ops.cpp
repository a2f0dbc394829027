// Elementwise rules: unary ops keep their input's shape, broadcast ops follow numpy's rules, and
// small integer tensors carry their values so that shape arithmetic (Shape → Mul → Reshape)
// resolves. A value is produced only where ONNX arithmetic on that dtype provably yields it:
// integer Div truncates, narrow integers wrap and floats round, so those cases are proved first.
#include <cstdint>
#include <initializer_list>
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
using Values = std::vector<SymExpr>;
using MaybeExpr = std::optional<SymExpr>;

const SymExpr kZero{int64_t{0}};
const SymExpr kOne{int64_t{1}};

MaybeExpr from_tri(Tri t) {
  if (t == Tri::kTrue) return kOne;
  if (t == Tri::kFalse) return kZero;
  return std::nullopt;
}

enum class Sign { kNonNeg, kNonPos, kUnknown };

Sign sign_of(const InferContext& ctx, const SymExpr& e) {
  if (ctx.prove_le(0, e) == Tri::kTrue) return Sign::kNonNeg;
  if (ctx.prove_le(e, 0) == Tri::kTrue) return Sign::kNonPos;
  return Sign::kUnknown;
}

// Truncating division and C fmod from |a| / |b|: Python's floordiv/mod agree with them only on
// known signs, so nothing is said without them.
std::optional<std::pair<SymExpr, SymExpr>> trunc_divmod(const InferContext& ctx, const SymExpr& a,
                                                        const SymExpr& b) {
  const Sign sa = sign_of(ctx, a);
  const bool b_pos = ctx.prove_lt(0, b) == Tri::kTrue, b_neg = ctx.prove_lt(b, 0) == Tri::kTrue;
  if (sa == Sign::kUnknown || (!b_pos && !b_neg)) return std::nullopt;
  const SymExpr abs_a = sa == Sign::kNonNeg ? a : -a, abs_b = b_pos ? b : -b;
  const SymExpr q = sym::floordiv(abs_a, abs_b), r = sym::mod(abs_a, abs_b);
  return std::pair{(sa == Sign::kNonNeg) == b_pos ? q : -q, sa == Sign::kNonNeg ? r : -r};
}

bool integral_type(DataType dt) { return is_integer_type(dt) || dt == DataType::kBool; }

// Values of a fact with dims `dims` computed elementwise from `in` (each holding 1 or n values),
// each result simplified and checked to fit `out_dt`.
std::optional<Values> values_of(InferContext& ctx, const std::vector<const TensorFact*>& in,
                                const DimList& dims, DataType out_dt, const ValueFn& fn) {
  if (!tracks_values(dims)) return std::nullopt;
  const size_t n = dims.empty() ? 1 : static_cast<size_t>(*dims[0]->constant_value());
  for (const TensorFact* f : in)
    if (!f->value || (f->value->size() != 1 && f->value->size() != n)) return std::nullopt;
  return elementwise_values(in, dims, [&](const Values& args) -> MaybeExpr {
    const MaybeExpr r = fn(args);
    if (!r) return std::nullopt;
    SymExpr s = ctx.simplify(*r);
    if (!representable(ctx, out_dt, s)) return std::nullopt;
    return s;
  });
}

Status ok() { return Status::ok_status(); }

// ---- unary ops ----

enum class Un { kPlain, kNeg, kAbs, kSign, kRelu, kIntegral, kNot, kNeverSpecial };

MaybeExpr unary_value(const InferContext& ctx, Un op, const SymExpr& x) {
  switch (op) {
    case Un::kNeg: return -x;
    case Un::kAbs:
      switch (sign_of(ctx, x)) {
        case Sign::kNonNeg: return x;
        case Sign::kNonPos: return -x;
        case Sign::kUnknown: return std::nullopt;
      }
      return std::nullopt;
    case Un::kSign:
      if (ctx.prove_lt(0, x) == Tri::kTrue) return kOne;
      if (ctx.prove_lt(x, 0) == Tri::kTrue) return SymExpr(-1);
      if (ctx.prove_eq(x, 0) == Tri::kTrue) return kZero;
      return std::nullopt;
    case Un::kRelu: return sym::max(x, kZero);
    // Ceil/Floor/Round of a tracked (hence integral) value is the value itself.
    case Un::kIntegral: return x;
    case Un::kNot: return kOne - x;
    // Tracked values are finite integers: IsNaN and IsInf are false on them.
    case Un::kNeverSpecial: return kZero;
    case Un::kPlain: return std::nullopt;
  }
  return std::nullopt;
}

template <Un op, bool to_bool = false>
Status unary_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  TensorFact out = in;
  out.value.reset();
  if (to_bool) out.dtype = DataType::kBool;
  if (op != Un::kPlain && in.dims)
    out.value = values_of(ctx, {&in}, *in.dims, out.dtype,
                          [&](const Values& a) { return unary_value(ctx, op, a[0]); });
  ctx.set_output(0, std::move(out));
  return ok();
}

Status identity_rule(InferContext& ctx) {
  ctx.set_output(0, ctx.input(0));  // values, sequences and optionals pass through unchanged
  return ok();
}

// Softmax, LogSoftmax, Hardmax: the axis default moved from 1 to -1 at opset 13; before that the
// input was coerced to 2-D at `axis`, which also admits axis == rank.
Status softmax_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  const bool v13 = ctx.opset() >= 13;
  const int64_t axis = ctx.attr_int("axis", v13 ? -1 : 1);
  if (in.dims && !normalize_axis(axis, in.rank() + (v13 ? 0 : 1)))
    return invalid_model("attribute 'axis' = " + std::to_string(axis) +
                         " is out of range for rank " + std::to_string(in.rank()));
  same_shape_as_input(ctx);
  return ok();
}

Status cumsum_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  const auto axis = ctx.input_ints(1);
  if (x.dims && axis && axis->size() == 1 && !normalize_axis((*axis)[0], x.rank()))
    return invalid_model("input 'axis' = " + std::to_string((*axis)[0]) +
                         " is out of range for rank " + std::to_string(x.rank()));
  TensorFact out = x;
  out.value.reset();
  if (x.value && x.rank() == 1 && axis && tracks_values(*x.dims)) {
    const bool exclusive = ctx.attr_int("exclusive", 0) != 0,
               reverse = ctx.attr_int("reverse", 0) != 0;
    const Values& v = *x.value;
    Values acc(v.size());
    SymExpr run = kZero;
    bool fits = true;
    for (size_t k = 0; k < v.size(); ++k) {
      const size_t i = reverse ? v.size() - 1 - k : k;
      if (exclusive) acc[i] = run;
      run = ctx.simplify(run + v[i]);
      if (!exclusive) acc[i] = run;
      fits = fits && representable(ctx, x.dtype, acc[i]);
    }
    if (fits) out.value = std::move(acc);
  }
  ctx.set_output(0, std::move(out));
  return ok();
}

Status trilu_rule(InferContext& ctx) {
  if (ctx.input(0).dims && ctx.input(0).rank() < 2)
    return invalid_model("Trilu needs an input of rank >= 2, got rank " +
                         std::to_string(ctx.input(0).rank()));
  same_shape_as_input(ctx);
  return ok();
}

Status det_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  TensorFact out = TensorFact::unknown(x.dtype);
  if (x.dims) {
    const DimList& d = *x.dims;
    if (d.size() < 2)
      return invalid_model("Det needs square matrices [*, M, M], got rank " +
                           std::to_string(d.size()));
    const Dim &m = d[d.size() - 2], &n = d[d.size() - 1];
    if (m && n && !(*m == *n)) ctx.require_equal(*m, *n, "Det needs square matrices");
    out.dims = DimList(d.begin(), d.end() - 2);
  }
  ctx.set_output(0, std::move(out));
  return ok();
}

// ---- Cast, CastLike, Clip, Dropout, PRelu ----

std::optional<DataType> dtype_from_name(const std::string& name) {
  static const std::pair<const char*, DataType> kNames[] = {{"FLOAT", DataType::kFloat},
                                                            {"UINT8", DataType::kUint8},
                                                            {"INT8", DataType::kInt8},
                                                            {"UINT16", DataType::kUint16},
                                                            {"INT16", DataType::kInt16},
                                                            {"INT32", DataType::kInt32},
                                                            {"INT64", DataType::kInt64},
                                                            {"STRING", DataType::kString},
                                                            {"BOOL", DataType::kBool},
                                                            {"FLOAT16", DataType::kFloat16},
                                                            {"DOUBLE", DataType::kDouble},
                                                            {"UINT32", DataType::kUint32},
                                                            {"UINT64", DataType::kUint64},
                                                            {"COMPLEX64", DataType::kComplex64},
                                                            {"COMPLEX128", DataType::kComplex128},
                                                            {"BFLOAT16", DataType::kBFloat16}};
  for (const auto& [n, dt] : kNames)
    if (name == n) return dt;
  return std::nullopt;
}

// A tracked value converted to `to`: exact conversions only (tracked float values are integral,
// so float → int truncation is exact too); bool is whether the value is provably non-zero.
MaybeExpr cast_value(const InferContext& ctx, DataType from, DataType to, const SymExpr& v) {
  if (!exact_integer_range(from)) return std::nullopt;
  if (to == DataType::kBool) {
    const MaybeExpr z = from_tri(ctx.prove_eq(v, 0));
    return z ? MaybeExpr(kOne - *z) : std::nullopt;
  }
  if (!representable(ctx, to, v)) return std::nullopt;
  return v;
}

Status cast_to(InferContext& ctx, std::optional<DataType> to) {
  const TensorFact& in = ctx.input(0);
  TensorFact out = in;
  out.value.reset();
  out.dtype = to.value_or(DataType::kUndefined);
  if (to && in.dims)
    out.value = values_of(ctx, {&in}, *in.dims, *to,
                          [&](const Values& a) { return cast_value(ctx, in.dtype, *to, a[0]); });
  ctx.set_output(0, std::move(out));
  return ok();
}

Status cast_rule(InferContext& ctx) {
  std::optional<DataType> to;
  if (const auto i = ctx.attr_int("to")) {
    if (*i >= 0 && *i <= INT32_MAX) to = data_type_from_onnx(static_cast<int32_t>(*i));
  } else if (const auto s = ctx.attr_string("to")) {
    to = dtype_from_name(*s);  // Cast-1 names the type
  } else {
    return invalid_model("Cast needs the attribute 'to'");
  }
  if (!to || *to == DataType::kUndefined)
    return invalid_model("attribute 'to' of Cast is not a known element type");
  return cast_to(ctx, to);
}

Status cast_like_rule(InferContext& ctx) {
  const DataType dt = ctx.input(1).dtype;
  return cast_to(ctx, dt == DataType::kUndefined ? std::nullopt : std::optional(dt));
}

// A scalar bound of Clip: from the min/max attributes (floats) before opset 11, from optional
// inputs after. `absent` when there is none; nullopt when it exists but is not a known integer.
struct Bound {
  bool absent = true;
  MaybeExpr value;
};

Bound clip_bound(const InferContext& ctx, const char* attr, size_t input) {
  Bound b;
  if (ctx.opset() < 11) {
    const auto f = ctx.attr_float(attr);
    if (!f) return b;
    b.absent = false;
    const auto i = static_cast<int64_t>(*f);
    if (*f > -1e15f && *f < 1e15f && static_cast<float>(i) == *f) b.value = SymExpr(i);
    return b;
  }
  if (!ctx.has_input(input)) return b;
  b.absent = false;
  b.value = input_scalar(ctx, input);
  return b;
}

Status clip_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  TensorFact out = x;
  out.value.reset();
  const Bound lo = clip_bound(ctx, "min", 1), hi = clip_bound(ctx, "max", 2);
  if (x.dims && (lo.absent || lo.value) && (hi.absent || hi.value))
    out.value = values_of(ctx, {&x}, *x.dims, x.dtype, [&](const Values& a) {
      SymExpr v = a[0];
      if (lo.value) v = sym::max(v, *lo.value);
      if (hi.value) v = sym::min(v, *hi.value);
      return MaybeExpr(v);
    });
  ctx.set_output(0, std::move(out));
  return ok();
}

Status dropout_rule(InferContext& ctx) {
  same_shape_as_input(ctx, 0, 0);
  // The mask was of the input's type until opset 10, bool since.
  if (ctx.has_output(1))
    same_shape_as_input(ctx, 0, 1,
                        ctx.opset() >= 10 ? std::optional(DataType::kBool) : std::nullopt);
  return ok();
}

// PRelu's slope broadcasts onto X (unidirectionally from opset 7): the output is X's shape, and a
// slope dim >= 2 both names and constrains X's dim.
Status prelu_rule(InferContext& ctx) {
  const TensorFact &x = ctx.input(0), &slope = ctx.input(1);
  TensorFact out = x;
  out.value.reset();
  if (ctx.opset() >= 7 && out.dims && slope.dims && slope.rank() <= x.rank()) {
    const size_t offset = out.dims->size() - slope.dims->size();
    for (size_t i = 0; i < slope.dims->size(); ++i) {
      const Dim& s = (*slope.dims)[i];
      Dim& d = (*out.dims)[offset + i];
      if (!s || ctx.prove_le(2, *s) != Tri::kTrue) continue;
      if (!d)
        d = s;
      else if (!(*d == *s))
        ctx.require_equal(*d, *s, "PRelu slope must broadcast to X");
    }
  }
  ctx.set_output(0, std::move(out));
  return ok();
}

// ---- broadcast ops ----

enum class Bin {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kBitShift,
  kAnd,
  kOr,
  kXor,
  kEqual,
  kLess,
  kGreater,
  kLessOrEqual,
  kGreaterOrEqual,  // comparisons last
};

constexpr bool is_comparison(Bin op) { return op >= Bin::kEqual; }

MaybeExpr logic_value(Bin op, const SymExpr& a, const SymExpr& b) {
  const auto ca = a.constant_value(), cb = b.constant_value();
  if (ca && cb) {
    const bool x = *ca != 0, y = *cb != 0;
    const bool r = op == Bin::kAnd ? (x && y) : op == Bin::kOr ? (x || y) : (x != y);
    return r ? kOne : kZero;
  }
  // One known side decides, or passes the other (a 0/1 value) through.
  const auto c = ca ? ca : cb;
  if (!c) return std::nullopt;
  const SymExpr& other = ca ? b : a;
  if (op == Bin::kAnd) return *c ? other : kZero;
  if (op == Bin::kOr) return *c ? kOne : other;
  return *c ? kOne - other : other;
}

MaybeExpr binary_value(const InferContext& ctx, Bin op, DataType dt, const SymExpr& a,
                       const SymExpr& b) {
  switch (op) {
    case Bin::kAdd: return a + b;
    case Bin::kSub: return a - b;
    case Bin::kMul: return a * b;
    case Bin::kDiv: {
      if (integral_type(dt)) {
        const auto qr = trunc_divmod(ctx, a, b);
        return qr ? MaybeExpr(qr->first) : std::nullopt;
      }
      // Float division of integral values is integral only where it is exact.
      if (ctx.prove_eq(b, 0) != Tri::kFalse || ctx.prove_eq(sym::mod(a, b), 0) != Tri::kTrue)
        return std::nullopt;
      return sym::floordiv(a, b);
    }
    case Bin::kMod: {
      // fmod=0 (integers only) is Python's mod; fmod=1 is C's fmod, sign of the dividend.
      if (ctx.attr_int("fmod", 0) == 0)
        return integral_type(dt) && ctx.prove_eq(b, 0) == Tri::kFalse ? MaybeExpr(sym::mod(a, b))
                                                                      : std::nullopt;
      const auto qr = trunc_divmod(ctx, a, b);
      return qr ? MaybeExpr(qr->second) : std::nullopt;
    }
    case Bin::kPow: {
      const auto k = b.constant_value();
      if (!k || *k < 0 || *k > 62) return std::nullopt;
      return sym::pow(a, static_cast<uint32_t>(*k));
    }
    case Bin::kBitShift: {
      const auto k = b.constant_value();
      if (!k || *k < 0 || *k > 62) return std::nullopt;
      const SymExpr scale(int64_t{1} << *k);
      if (ctx.attr_string("direction") == "LEFT") return a * scale;
      if (ctx.attr_string("direction") == "RIGHT" && sign_of(ctx, a) == Sign::kNonNeg)
        return sym::floordiv(a, scale);
      return std::nullopt;
    }
    case Bin::kAnd:
    case Bin::kOr:
    case Bin::kXor: return logic_value(op, a, b);
    case Bin::kEqual: return from_tri(ctx.prove_eq(a, b));
    case Bin::kLess: return from_tri(ctx.prove_lt(a, b));
    case Bin::kGreater: return from_tri(ctx.prove_lt(b, a));
    case Bin::kLessOrEqual: return from_tri(ctx.prove_le(a, b));
    case Bin::kGreaterOrEqual: return from_tri(ctx.prove_le(b, a));
  }
  return std::nullopt;
}

template <Bin op>
Status binary_rule(InferContext& ctx) {
  const TensorFact &a = ctx.input(0), &b = ctx.input(1);
  TensorFact out;
  // Pow's exponent may have another type; every other op has one T for both operands.
  const DataType in_dt = a.dtype != DataType::kUndefined || op == Bin::kPow ? a.dtype : b.dtype;
  out.dtype = is_comparison(op) ? DataType::kBool : in_dt;
  // Before opset 7 B was broadcast onto A (attributes broadcast/axis): the result is A's shape.
  if (ctx.opset() < 7 && op != Bin::kMod && op != Bin::kBitShift && op != Bin::kLessOrEqual &&
      op != Bin::kGreaterOrEqual) {
    out.dims = a.dims;
    if (out.dims && b.dims && b.dims->size() == out.dims->size() &&
        ctx.attr_int("broadcast", 0) == 0)
      for (size_t i = 0; i < out.dims->size(); ++i)
        if (!(*out.dims)[i]) (*out.dims)[i] = (*b.dims)[i];
  } else {
    out.dims = broadcast_shapes(ctx, {&a, &b});
  }
  if (out.dims)
    out.value = values_of(ctx, {&a, &b}, *out.dims, out.dtype, [&](const Values& v) {
      return binary_value(ctx, op, in_dt, v[0], v[1]);
    });
  ctx.set_output(0, std::move(out));
  return ok();
}

// BitwiseAnd/Or/Xor (opset 18): numpy broadcasting, the operands' integer type, no value rules.
Status bitwise_rule(InferContext& ctx) {
  const TensorFact &a = ctx.input(0), &b = ctx.input(1);
  TensorFact out;
  out.dtype = a.dtype != DataType::kUndefined ? a.dtype : b.dtype;
  out.dims = broadcast_shapes(ctx, {&a, &b});
  ctx.set_output(0, std::move(out));
  return ok();
}

enum class Var { kMax, kMin, kSum, kMean };

template <Var op>
Status variadic_rule(InferContext& ctx) {
  std::vector<const TensorFact*> in;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) in.push_back(&ctx.input(i));
  TensorFact out;
  for (const TensorFact* f : in)
    if (out.dtype == DataType::kUndefined) out.dtype = f->dtype;
  if (in.empty()) {
    ctx.set_output(0, std::move(out));
    return ok();
  }
  if (ctx.opset() >= 8) {
    out.dims = broadcast_shapes(ctx, in);
  } else {
    // Before opset 8 all inputs had one shape: any known dim is the dim.
    for (const TensorFact* f : in) {
      if (!f->dims) continue;
      if (!out.dims) out.dims = DimList(f->dims->size());
      if (f->dims->size() != out.dims->size()) continue;
      for (size_t i = 0; i < out.dims->size(); ++i)
        if (!(*out.dims)[i]) (*out.dims)[i] = (*f->dims)[i];
    }
  }
  if (out.dims && op != Var::kMean)  // Mean is float-only and rarely exact
    out.value = values_of(ctx, in, *out.dims, out.dtype, [&](const Values& v) -> MaybeExpr {
      if (op == Var::kMax) return sym::max(v);
      if (op == Var::kMin) return sym::min(v);
      SymExpr s = kZero;
      for (const SymExpr& x : v) s = s + x;
      return s;
    });
  ctx.set_output(0, std::move(out));
  return ok();
}

// Where(cond, X, Y): a constant (or provably 0/1) condition selects values from X or Y.
Status where_rule(InferContext& ctx) {
  const TensorFact &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  TensorFact out;
  out.dtype = x.dtype != DataType::kUndefined ? x.dtype : y.dtype;
  out.dims = broadcast_shapes(ctx, {&c, &x, &y});
  if (out.dims && tracks_values(*out.dims) && c.value) {
    const size_t n = out.dims->empty() ? 1 : static_cast<size_t>(*(*out.dims)[0]->constant_value());
    Values v;
    auto pick = [&](const TensorFact& f, size_t i) -> MaybeExpr {
      if (!f.value || (f.value->size() != 1 && f.value->size() != n)) return std::nullopt;
      return (*f.value)[f.value->size() == 1 ? 0 : i];
    };
    for (size_t i = 0; i < n; ++i) {
      const MaybeExpr cond = pick(c, i);
      const Tri zero = cond ? ctx.prove_eq(*cond, 0) : Tri::kUnknown;
      const MaybeExpr chosen = zero == Tri::kFalse  ? pick(x, i)
                               : zero == Tri::kTrue ? pick(y, i)
                                                    : std::nullopt;
      if (!chosen) break;
      v.push_back(*chosen);
    }
    if (v.size() == n) out.value = std::move(v);
  }
  ctx.set_output(0, std::move(out));
  return ok();
}

void add(OpRegistry& r, const char* op, std::initializer_list<int64_t> versions, ShapeRule rule) {
  for (int64_t v : versions) r.add({op, v, OpClass::kISDOS, {}, rule});
}

}  // namespace

void register_elementwise_ops(OpRegistry& registry) {
  OpRegistry& r = registry;
  // Same-shape unary ops without value rules.
  constexpr auto plain = unary_rule<Un::kPlain>;
  for (auto [op, since] : std::initializer_list<std::pair<const char*, int64_t>>{
           {"Acos", 7},        {"Acosh", 9},      {"Asin", 7},      {"Asinh", 9},
           {"Atan", 7},        {"Atanh", 9},      {"Celu", 12},     {"Cos", 7},
           {"Cosh", 9},        {"Elu", 1},        {"Erf", 9},       {"Exp", 1},
           {"HardSigmoid", 1}, {"HardSwish", 14}, {"LeakyRelu", 1}, {"Log", 1},
           {"Reciprocal", 1},  {"Selu", 1},       {"Shrink", 9},    {"Sigmoid", 1},
           {"Sin", 7},         {"Sinh", 9},       {"Softplus", 1},  {"Softsign", 1},
           {"Sqrt", 1},        {"Tan", 7},        {"Tanh", 1},      {"ThresholdedRelu", 10}})
    add(r, op, {since}, plain);
  // Opsets 18-20: Mish, BitwiseNot, Gelu (approximate none/tanh).
  add(r, "Mish", {18}, plain);
  add(r, "Gelu", {20}, plain);
  add(r, "BitwiseNot", {18}, plain);
  add(r, "BitwiseAnd", {18}, bitwise_rule);
  add(r, "BitwiseOr", {18}, bitwise_rule);
  add(r, "BitwiseXor", {18}, bitwise_rule);
  add(r, "Abs", {1}, unary_rule<Un::kAbs>);
  add(r, "Neg", {1}, unary_rule<Un::kNeg>);
  add(r, "Sign", {9}, unary_rule<Un::kSign>);
  add(r, "Relu", {1}, unary_rule<Un::kRelu>);
  add(r, "Ceil", {1}, unary_rule<Un::kIntegral>);
  add(r, "Floor", {1}, unary_rule<Un::kIntegral>);
  add(r, "Round", {11}, unary_rule<Un::kIntegral>);
  add(r, "Not", {1}, unary_rule<Un::kNot, true>);
  add(r, "IsInf", {10}, unary_rule<Un::kNeverSpecial, true>);
  add(r, "IsNaN", {9}, unary_rule<Un::kNeverSpecial, true>);
  add(r, "Identity", {1}, identity_rule);
  add(r, "Softmax", {1, 13}, softmax_rule);
  add(r, "LogSoftmax", {1, 13}, softmax_rule);
  add(r, "Hardmax", {1, 13}, softmax_rule);
  add(r, "CumSum", {11}, cumsum_rule);
  add(r, "Trilu", {14}, trilu_rule);
  add(r, "Det", {11}, det_rule);
  add(r, "Cast", {1, 6, 19}, cast_rule);  // `to` was a type name before 6; saturate from 19
  add(r, "CastLike", {15, 19}, cast_like_rule);
  add(r, "Clip", {1, 11}, clip_rule);            // min/max attributes until 11, inputs since
  add(r, "Dropout", {1, 10, 12}, dropout_rule);  // mask bool from 10; ratio input from 12
  add(r, "PRelu", {1, 7}, prelu_rule);           // unidirectional broadcasting from 7
  // Legacy broadcasting (attribute `broadcast`) until opset 7, numpy broadcasting since.
  add(r, "Add", {1, 7}, binary_rule<Bin::kAdd>);
  add(r, "Sub", {1, 7}, binary_rule<Bin::kSub>);
  add(r, "Mul", {1, 7}, binary_rule<Bin::kMul>);
  add(r, "Div", {1, 7}, binary_rule<Bin::kDiv>);
  add(r, "Pow", {1, 7}, binary_rule<Bin::kPow>);
  add(r, "And", {1, 7}, binary_rule<Bin::kAnd>);
  add(r, "Or", {1, 7}, binary_rule<Bin::kOr>);
  add(r, "Xor", {1, 7}, binary_rule<Bin::kXor>);
  add(r, "Equal", {1, 7}, binary_rule<Bin::kEqual>);
  add(r, "Less", {1, 7}, binary_rule<Bin::kLess>);
  add(r, "Greater", {1, 7}, binary_rule<Bin::kGreater>);
  add(r, "LessOrEqual", {12}, binary_rule<Bin::kLessOrEqual>);
  add(r, "GreaterOrEqual", {12}, binary_rule<Bin::kGreaterOrEqual>);
  add(r, "Mod", {10}, binary_rule<Bin::kMod>);
  add(r, "BitShift", {11}, binary_rule<Bin::kBitShift>);
  // All inputs of one shape until opset 8, broadcasting since.
  add(r, "Max", {1, 8}, variadic_rule<Var::kMax>);
  add(r, "Min", {1, 8}, variadic_rule<Var::kMin>);
  add(r, "Sum", {1, 8}, variadic_rule<Var::kSum>);
  add(r, "Mean", {1, 8}, variadic_rule<Var::kMean>);
  add(r, "Where", {9}, where_rule);
}

}  // namespace sod2
