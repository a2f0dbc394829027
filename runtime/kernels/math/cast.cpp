// Cast and CastLike between the numeric types, bool, float16 and bfloat16. Float to integer
// truncates toward zero and saturates at the target's range (NaN becomes 0): ONNX leaves
// out-of-range conversions undefined, and C++ makes them UB, so this picks the one defined answer
// that never traps. float16/bfloat16 go through float (exact) when read and are rounded to
// nearest even from double when written (half_float.h). The float8 types (opset 19) go through
// float too, and are written from double with the node's `saturate` (float8.h). Strings convert
// to and from the numeric types (cast_string.h).
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "runtime/kernels/math/cast_string.h"
#include "runtime/kernels/math/elementwise.h"
#include "runtime/kernels/math/half_float.h"
#include "runtime/tensor/float8.h"

namespace sod2::rt::math {
namespace {

template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (kIsFloat<From> && kIsInt<To>) {
    // Compared before converting (no trunc call, so it vectorises): lowest() is exact in
    // float, and max() converts to itself or rounds up to the next power of two; between
    // those bounds the cast truncates in range.
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::lowest());
    constexpr From hi = static_cast<From>(std::numeric_limits<To>::max());
    if (v != v) return 0;
    if (v <= lo) return std::numeric_limits<To>::lowest();
    if (v >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// convert() extended to float16/bfloat16 on either side.
template <class To, class From>
To convert_any(From v) {
  if constexpr (kIsNarrowFloat<From>) {
    const float f = to_float(v);
    if constexpr (kIsNarrowFloat<To>) {
      return narrow_from<To>(f);
    } else {
      return convert<To, float>(f);
    }
  } else if constexpr (kIsNarrowFloat<To>) {
    return narrow_from<To>(static_cast<double>(v));
  } else {
    return convert<To, From>(v);
  }
}

bool castable(DType t) {
  switch (t) {
    case DType::kFloat:
    case DType::kDouble:
    case DType::kInt8:
    case DType::kUint8:
    case DType::kInt16:
    case DType::kUint16:
    case DType::kInt32:
    case DType::kUint32:
    case DType::kInt64:
    case DType::kUint64:
    case DType::kBool:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ: return true;
    default: return false;
  }
}

template <class T>
double to_double(T v) {
  if constexpr (kIsNarrowFloat<T>) {
    return to_float(v);
  } else {
    return static_cast<double>(v);
  }
}

// A cast with a float8 type on either side: float8 inputs widen exactly through a 256-entry
// table, and float8 outputs are rounded once from the double of the input.
Status cast_float8(const char* name, const Tensor& x, Tensor& y, bool saturate, ThreadPool& pool) {
  const int64_t n = x.numel();
  if (is_float8(x.dtype)) {
    float table[256];
    for (int b = 0; b < 256; ++b) table[b] = float8_to_float(x.dtype, static_cast<uint8_t>(b));
    const uint8_t* src = x.as<const uint8_t>();
    if (is_float8(y.dtype)) {
      const DType to = y.dtype;
      run_unary(pool, n, src, y.as<uint8_t>(),
                [&](uint8_t v) { return float8_from_float(to, table[v], saturate); });
      return Status::ok_status();
    }
    return visit_dtype_narrow(name, y.dtype, [&]<class To>(Tag<To>) -> Status {
      run_unary(pool, n, src, y.as<To>(),
                [&](uint8_t v) { return convert_any<To, float>(table[v]); });
      return Status::ok_status();
    });
  }
  const DType to = y.dtype;
  return visit_dtype_narrow(name, x.dtype, [&]<class From>(Tag<From>) -> Status {
    run_unary(pool, n, x.as<const From>(), y.as<uint8_t>(),
              [&](From v) { return float8_from_double(to, to_double(v), saturate); });
    return Status::ok_status();
  });
}

class CastKernel final : public Kernel {
 public:
  // to = kUndefined: CastLike, the target type is input 1's.
  CastKernel(DType to, bool saturate) : to_(to), saturate_(saturate) {}
  bool takes_strings() const override { return true; }

  Status run(KernelContext& ctx) override {
    const char* name = to_ == DType::kUndefined ? "CastLike" : "Cast";
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(name) + ": input is missing");
    DType to = to_;
    if (to == DType::kUndefined) {
      if (!ctx.input(1)) return invalid_argument("CastLike: target_type input is missing");
      to = ctx.input(1)->dtype;
    }
    if (x->dtype == DType::kString || to == DType::kString) {
      const DType other = x->dtype == DType::kString ? to : x->dtype;
      if (!string_castable(other))
        return unsupported(std::string(name) + ": between string and " + dtype_name(other));
      SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, to, x->shape));
      return x->dtype == DType::kString ? cast_from_strings(*x, *y) : cast_to_strings(*x, *y);
    }
    if (!castable(x->dtype)) return unsupported_dtype(name, x->dtype);
    if (!castable(to)) return unsupported_dtype(name, to);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, to, x->shape));
    const int64_t n = x->numel();
    if (n == 0) return Status::ok_status();
    if (to == x->dtype) {
      std::memcpy(y->data, x->data, x->bytes());
      return Status::ok_status();
    }
    if (is_float8(x->dtype) || is_float8(to))
      return cast_float8(name, *x, *y, saturate_, ctx.pool());
    return visit_dtype_narrow(name, x->dtype, [&]<class From>(Tag<From>) -> Status {
      return visit_dtype_narrow(name, to, [&]<class To>(Tag<To>) -> Status {
        run_unary(ctx.pool(), n, x->as<const From>(), y->as<To>(),
                  [](From v) { return convert_any<To, From>(v); });
        return Status::ok_status();
      });
    });
  }

 private:
  DType to_;
  bool saturate_;
};

// Opset 1 names the type with a string ("FLOAT"); later opsets with the TensorProto number.
Status parse_to(const NodeInfo& node, DType* out) {
  const AttrValue* v = node.attrs.find("to");
  if (!v) return invalid_model("Cast: attribute 'to' is missing");
  if (v->kind == AttrValue::Kind::kString) {
    static const std::pair<const char*, DType> kNames[] = {
        {"FLOAT", DType::kFloat},       {"DOUBLE", DType::kDouble}, {"INT8", DType::kInt8},
        {"UINT8", DType::kUint8},       {"INT16", DType::kInt16},   {"UINT16", DType::kUint16},
        {"INT32", DType::kInt32},       {"UINT32", DType::kUint32}, {"INT64", DType::kInt64},
        {"UINT64", DType::kUint64},     {"BOOL", DType::kBool},     {"FLOAT16", DType::kFloat16},
        {"BFLOAT16", DType::kBFloat16}, {"STRING", DType::kString}};
    // Opset 1's names predate float8, so none is listed.
    for (const auto& [name, t] : kNames) {
      if (v->s == name) {
        *out = t;
        return Status::ok_status();
      }
    }
    return invalid_model("Cast: unknown type name '" + v->s + "'");
  }
  if (v->kind != AttrValue::Kind::kInt) return invalid_model("Cast: attribute 'to' is not an int");
  // TensorProto's uint4/int4 (21-22, opset 21), float4 (23, opset 23) and float8e8m0 (24,
  // opset 24) are real types this runtime does not compute with (4-bit constants are widened at
  // import, but a computed 4-bit tensor has no representation here).
  if (v->i >= 21 && v->i <= 24)
    return unsupported("Cast: the 4-bit types and float8e8m0 (TensorProto type " +
                       std::to_string(v->i) + ") are not supported");
  if (v->i < 0 || v->i > 255 || !is_known_dtype(static_cast<uint8_t>(v->i)))
    return invalid_model("Cast: unknown type " + std::to_string(v->i));
  *out = static_cast<DType>(v->i);
  return Status::ok_status();
}

// `saturate` (opset 19; default 1) only matters for float8 outputs.
Expected<bool> parse_saturate(const NodeInfo& node, const char* op) {
  if (node.opset < 19) return true;
  SOD2_ASSIGN_OR_RETURN(const int64_t saturate, node.attrs.get_int("saturate", 1));
  if (saturate != 0 && saturate != 1)
    return invalid_model(std::string(op) + ": attribute 'saturate' must be 0 or 1, got " +
                         std::to_string(saturate));
  return saturate == 1;
}

Expected<std::unique_ptr<Kernel>> cast_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  SOD2_ASSIGN_OR_RETURN(const bool saturate, parse_saturate(node, "Cast"));
  DType to = DType::kUndefined;
  SOD2_RETURN_IF_ERROR(parse_to(node, &to));
  if (!castable(to) && !string_castable(to)) return unsupported_dtype("Cast", to);
  const DType from = node.input_dtypes[0];
  if (from != DType::kUndefined && !castable(from) && !string_castable(from))
    return unsupported_dtype("Cast", from);
  return std::unique_ptr<Kernel>(std::make_unique<CastKernel>(to, saturate));
}

Expected<std::unique_ptr<Kernel>> cast_like_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 2));
  SOD2_ASSIGN_OR_RETURN(const bool saturate, parse_saturate(node, "CastLike"));
  for (DType t : node.input_dtypes)
    if (t != DType::kUndefined && !castable(t) && !string_castable(t))
      return unsupported_dtype("CastLike", t);
  return std::unique_ptr<Kernel>(std::make_unique<CastKernel>(DType::kUndefined, saturate));
}

}  // namespace

void register_cast(KernelRegistry& r) {
  r.add("", "Cast", 1, &cast_factory);
  r.add("", "CastLike", 15, &cast_like_factory);
}

}  // namespace sod2::rt::math
