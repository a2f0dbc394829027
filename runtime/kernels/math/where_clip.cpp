// Where (a select with three-way broadcasting) and Clip (bounds from attributes before opset 11,
// from optional scalar inputs since). Clip on float16/bfloat16 compares in float.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "runtime/kernels/math/elementwise.h"
#include "runtime/kernels/math/half_float.h"

namespace sod2::rt::math {
namespace {

// Where only moves elements, so it dispatches on element size, not type.
template <class U>
void where_rows(ThreadPool& pool, const BroadcastPlan& plan, const bool* cond, const U* x,
                const U* y, U* out) {
  const int64_t sc = plan.inner_stride(0), sx = plan.inner_stride(1), sy = plan.inner_stride(2);
  pool.parallel_for(plan.numel, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for_each_row(plan, begin, end, [&](int64_t pos, const int64_t* off, int64_t count) {
      const bool* c = cond + off[0];
      const U* a = x + off[1];
      const U* b = y + off[2];
      U* o = out + pos;
      if (sc == 1 && sx == 1 && sy == 1) {
        for (int64_t i = 0; i < count; ++i) o[i] = c[i] ? a[i] : b[i];
      } else {
        for (int64_t i = 0; i < count; ++i) o[i] = c[i * sc] ? a[i * sx] : b[i * sy];
      }
    });
  });
}

class WhereKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* c = ctx.input(0);
    const Tensor* x = ctx.input(1);
    const Tensor* y = ctx.input(2);
    if (!c || !x || !y) return invalid_argument("Where: needs three inputs");
    if (c->dtype != DType::kBool)
      return invalid_argument(std::string("Where: condition should be bool, not ") +
                              dtype_name(c->dtype));
    if (x->dtype != y->dtype) {
      return invalid_argument(std::string("Where: X and Y have different types ") +
                              dtype_name(x->dtype) + " and " + dtype_name(y->dtype));
    }
    const Shape* shapes[3] = {&c->shape, &x->shape, &y->shape};
    Shape out_shape;
    SOD2_RETURN_IF_ERROR(broadcast_shapes("Where", shapes, 3, &out_shape));
    const size_t elem = dtype_size(x->dtype);
    if (elem == 0) return unsupported_dtype("Where", x->dtype);
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, x->dtype, out_shape));
    if (out_shape.numel() == 0) return Status::ok_status();
    const BroadcastPlan plan = plan_broadcast(out_shape, shapes, 3);
    const bool* cond = c->as<const bool>();
    switch (elem) {
      case 1:
        where_rows(ctx.pool(), plan, cond, x->as<const uint8_t>(), y->as<const uint8_t>(),
                   out->as<uint8_t>());
        break;
      case 2:
        where_rows(ctx.pool(), plan, cond, x->as<const uint16_t>(), y->as<const uint16_t>(),
                   out->as<uint16_t>());
        break;
      case 4:
        where_rows(ctx.pool(), plan, cond, x->as<const uint32_t>(), y->as<const uint32_t>(),
                   out->as<uint32_t>());
        break;
      case 8:
        where_rows(ctx.pool(), plan, cond, x->as<const uint64_t>(), y->as<const uint64_t>(),
                   out->as<uint64_t>());
        break;
      default: return unsupported_dtype("Where", x->dtype);
    }
    return Status::ok_status();
  }
};

Expected<std::unique_ptr<Kernel>> where_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 3));
  return std::unique_ptr<Kernel>(std::make_unique<WhereKernel>());
}

// ---- Clip

class ClipKernel final : public Kernel {
 public:
  // from_attrs: opsets 1-10, bounds are the node's min/max attributes.
  ClipKernel(bool from_attrs, float min_attr, float max_attr)
      : from_attrs_(from_attrs), min_attr_(min_attr), max_attr_(max_attr) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("Clip: input is missing");
    return visit_dtype_narrow("Clip", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsNarrowFloat<T>) {
        float lo = -std::numeric_limits<float>::infinity();
        float hi = std::numeric_limits<float>::infinity();
        if (from_attrs_) {
          lo = min_attr_;
          hi = max_attr_;
        } else {
          T bound;
          if (ctx.input(1)) {
            SOD2_RETURN_IF_ERROR(read_bound<T>(ctx.input(1), x->dtype, "min", &bound));
            lo = to_float(bound);
          }
          if (ctx.input(2)) {
            SOD2_RETURN_IF_ERROR(read_bound<T>(ctx.input(2), x->dtype, "max", &bound));
            hi = to_float(bound);
          }
        }
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
        run_unary(ctx.pool(), x->numel(), x->as<const T>(), y->as<T>(), [lo, hi](T v) {
          const float f = to_float(v);
          if (f != f) return v;  // NaN passes through, as in the float loop below
          const float a = f < lo ? lo : f;
          return narrow_from<T>(a > hi ? hi : a);
        });
        return Status::ok_status();
      } else if constexpr (kIsNumeric<T>) {
        T lo = std::numeric_limits<T>::lowest();
        T hi = std::numeric_limits<T>::max();
        if (from_attrs_) {
          if constexpr (!kIsFloat<T>) return unsupported_dtype("Clip (opset < 11)", x->dtype);
          lo = static_cast<T>(min_attr_);
          hi = static_cast<T>(max_attr_);
        } else {
          SOD2_RETURN_IF_ERROR(read_bound<T>(ctx.input(1), x->dtype, "min", &lo));
          SOD2_RETURN_IF_ERROR(read_bound<T>(ctx.input(2), x->dtype, "max", &hi));
        }
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
        // min(max(x, lo), hi): when lo > hi every value becomes hi, as ONNX specifies.
        run_unary(ctx.pool(), x->numel(), x->as<const T>(), y->as<T>(), [lo, hi](T v) {
          const T a = v < lo ? lo : v;
          return a > hi ? hi : a;
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype("Clip", x->dtype);
      }
    });
  }

 private:
  template <class T>
  static Status read_bound(const Tensor* t, DType dtype, const char* what, T* out) {
    if (!t) return Status::ok_status();  // omitted: no bound
    if (t->dtype != dtype) {
      return invalid_argument(std::string("Clip: '") + what + "' has type " + dtype_name(t->dtype) +
                              ", the input " + dtype_name(dtype));
    }
    if (t->numel() != 1) {
      return invalid_argument(std::string("Clip: '") + what + "' should be a scalar, not " +
                              t->shape.to_string());
    }
    *out = *t->as<const T>();
    return Status::ok_status();
  }

  bool from_attrs_;
  float min_attr_, max_attr_;
};

Expected<std::unique_ptr<Kernel>> clip_attrs_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  SOD2_ASSIGN_OR_RETURN(float lo, node.attrs.get_float("min", -std::numeric_limits<float>::max()));
  SOD2_ASSIGN_OR_RETURN(float hi, node.attrs.get_float("max", std::numeric_limits<float>::max()));
  return std::unique_ptr<Kernel>(std::make_unique<ClipKernel>(true, lo, hi));
}

Expected<std::unique_ptr<Kernel>> clip_inputs_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  return std::unique_ptr<Kernel>(std::make_unique<ClipKernel>(false, 0, 0));
}

}  // namespace

void register_where_clip(KernelRegistry& r) {
  r.add("", "Where", 9, &where_factory);
  r.add("", "Clip", 1, &clip_attrs_factory);
  r.add("", "Clip", 11, &clip_inputs_factory);
}

}  // namespace sod2::rt::math
