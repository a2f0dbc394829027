// Max, Min, Sum and Mean over n inputs with numpy broadcasting. The output is the broadcast of
// all inputs; it is computed as a fold, out = f(in0, in1), then out = f(out, in_k): out already
// has the full shape, so each later step is an in-place binary op on the output. float16 and
// bfloat16 compute each step in float and round the result back (half_float.h).
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/kernels/math/elementwise.h"
#include "runtime/kernels/math/half_float.h"

namespace sod2::rt::math {
namespace {

const char* fold_name(Fold f) {
  switch (f) {
    case Fold::kMax: return "Max";
    case Fold::kMin: return "Min";
    case Fold::kSum: return "Sum";
    case Fold::kMean: return "Mean";
  }
  return "?";
}

template <class T>
inline constexpr bool kVariadicType = kIsFloat<T> || kIsInt<T> || kIsNarrowFloat<T>;

// fold_step on any supported type, float16/bfloat16 through float.
template <Fold F, class T>
T fold_any(T a, T b) {
  if constexpr (kIsNarrowFloat<T>) {
    return narrow_from<T>(fold_step<F, float>(to_float(a), to_float(b)));
  } else {
    return fold_step<F, T>(a, b);
  }
}

template <Fold F>
class VariadicKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const char* name = fold_name(F);
    const size_t n = ctx.num_inputs();
    if (n == 0) return invalid_argument(std::string(name) + ": needs at least one input");
    const Shape* shapes[16];
    if (n > 16) return unsupported(std::string(name) + ": more than 16 inputs");
    for (size_t i = 0; i < n; ++i) {
      const Tensor* t = ctx.input(i);
      if (!t)
        return invalid_argument(std::string(name) + ": input " + std::to_string(i) + " is missing");
      if (t->dtype != ctx.input(0)->dtype) {
        return invalid_argument(std::string(name) + ": inputs have different types " +
                                dtype_name(ctx.input(0)->dtype) + " and " + dtype_name(t->dtype));
      }
      shapes[i] = &t->shape;
    }
    Shape out_shape;
    SOD2_RETURN_IF_ERROR(broadcast_shapes(name, shapes, static_cast<int>(n), &out_shape));
    const DType dtype = ctx.input(0)->dtype;
    return visit_dtype_narrow(name, dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kVariadicType<T> && (F != Fold::kMean || !kIsInt<T>)) {
        SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, dtype, out_shape));
        if (out_shape.numel() == 0) return Status::ok_status();
        T* y = out->as<T>();
        auto step = [](T a, T b) { return fold_any<F, T>(a, b); };
        if (n == 1) {
          // One input broadcasts to itself.
          std::memcpy(y, ctx.input(0)->data, out->bytes());
        } else {
          const Shape* pair[2] = {shapes[0], shapes[1]};
          BroadcastPlan plan = plan_broadcast(out_shape, pair, 2);
          run_binary(ctx.pool(), plan, ctx.input(0)->as<const T>(), ctx.input(1)->as<const T>(), y,
                     step);
          for (size_t i = 2; i < n; ++i) {
            const Shape* next[2] = {&out_shape, shapes[i]};
            plan = plan_broadcast(out_shape, next, 2);
            run_binary(ctx.pool(), plan, static_cast<const T*>(y), ctx.input(i)->as<const T>(), y,
                       step);
          }
        }
        if constexpr (F == Fold::kMean && kIsNarrowFloat<T>) {
          const float count = static_cast<float>(n);
          run_unary(ctx.pool(), out_shape.numel(), static_cast<const T*>(y), y,
                    [count](T v) { return narrow_from<T>(to_float(v) / count); });
        } else if constexpr (F == Fold::kMean) {
          const T count = static_cast<T>(n);
          run_unary(ctx.pool(), out_shape.numel(), static_cast<const T*>(y), y,
                    [count](T v) { return v / count; });
        }
        return Status::ok_status();
      } else {
        return unsupported_dtype(name, dtype);
      }
    });
  }
};

template <Fold F>
Expected<std::unique_ptr<Kernel>> variadic_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  return std::unique_ptr<Kernel>(std::make_unique<VariadicKernel<F>>());
}

}  // namespace

void register_variadic(KernelRegistry& r) {
  // Broadcasting came with opset 8; earlier opsets required equal shapes, a special case.
  r.add("", "Max", 1, &variadic_factory<Fold::kMax>);
  r.add("", "Min", 1, &variadic_factory<Fold::kMin>);
  r.add("", "Sum", 1, &variadic_factory<Fold::kSum>);
  r.add("", "Mean", 1, &variadic_factory<Fold::kMean>);
}

}  // namespace sod2::rt::math
