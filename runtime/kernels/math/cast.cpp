// Cast and CastLike between the numeric types, bool, float16 and bfloat16. Float to integer
// truncates toward zero and saturates at the target's range (NaN becomes 0): ONNX leaves
// out-of-range conversions undefined, and C++ makes them UB, so this picks the one defined answer
// that never traps. float16/bfloat16 go through float (exact) when read and are rounded to
// nearest even from double when written (half_float.h). Strings convert to and from the numeric
// types (cast_string.h).
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "runtime/kernels/math/cast_string.h"
#include "runtime/kernels/math/elementwise.h"
#include "runtime/kernels/math/half_float.h"

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
    case DType::kBFloat16: return true;
    default: return false;
  }
}

class CastKernel final : public Kernel {
 public:
  // to = kUndefined: CastLike, the target type is input 1's.
  explicit CastKernel(DType to) : to_(to) {}
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
    for (const auto& [name, t] : kNames) {
      if (v->s == name) {
        *out = t;
        return Status::ok_status();
      }
    }
    return invalid_model("Cast: unknown type name '" + v->s + "'");
  }
  if (v->kind != AttrValue::Kind::kInt) return invalid_model("Cast: attribute 'to' is not an int");
  // TensorProto's float8 (17-20, opset 19), uint4/int4 (21-22, opset 21), float4 (23, opset 23)
  // and float8e8m0 (24, opset 24) are real types this runtime does not compute with.
  if (v->i >= 17 && v->i <= 24)
    return unsupported("Cast: the 8-bit and 4-bit types (TensorProto type " + std::to_string(v->i) +
                       ") are not supported");
  if (v->i < 0 || v->i > 255 || !is_known_dtype(static_cast<uint8_t>(v->i)))
    return invalid_model("Cast: unknown type " + std::to_string(v->i));
  *out = static_cast<DType>(v->i);
  return Status::ok_status();
}

Expected<std::unique_ptr<Kernel>> cast_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  DType to = DType::kUndefined;
  SOD2_RETURN_IF_ERROR(parse_to(node, &to));
  if (!castable(to) && !string_castable(to)) return unsupported_dtype("Cast", to);
  const DType from = node.input_dtypes[0];
  if (from != DType::kUndefined && !castable(from) && !string_castable(from))
    return unsupported_dtype("Cast", from);
  return std::unique_ptr<Kernel>(std::make_unique<CastKernel>(to));
}

Expected<std::unique_ptr<Kernel>> cast_like_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 2));
  for (DType t : node.input_dtypes)
    if (t != DType::kUndefined && !castable(t) && !string_castable(t))
      return unsupported_dtype("CastLike", t);
  return std::unique_ptr<Kernel>(std::make_unique<CastKernel>(DType::kUndefined));
}

}  // namespace

void register_cast(KernelRegistry& r) {
  r.add("", "Cast", 1, &cast_factory);
  r.add("", "CastLike", 15, &cast_like_factory);
}

}  // namespace sod2::rt::math
