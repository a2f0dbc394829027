// CumSum along an axis given as a scalar input, with `exclusive` (each output leaves out its own
// element) and `reverse` (sums run from the end). Rows of the [outer, n, inner] view are added
// whole, so the inner loop vectorises across `inner`.
#include <algorithm>
#include <memory>
#include <string>

#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

template <class T>
T cum_add(T a, T b) {
  if constexpr (kIsInt<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));  // wraps, no UB
  } else {
    return a + b;
  }
}

class CumSumKernel final : public Kernel {
 public:
  CumSumKernel(bool exclusive, bool reverse) : exclusive_(exclusive), reverse_(reverse) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("CumSum: input is missing");
    int64_t axis_value = 0;
    SOD2_RETURN_IF_ERROR(read_scalar_int("CumSum", "axis", ctx.input(1), &axis_value));
    const int rank = x->shape.rank();
    if (rank == 0) return invalid_argument("CumSum: input must have at least one dim");
    int axis = 0;
    SOD2_RETURN_IF_ERROR(normalize_axis("CumSum", axis_value, rank, &axis));
    const int64_t outer = dims_product(x->shape, 0, axis);
    const int64_t n = x->shape[axis];
    const int64_t inner = dims_product(x->shape, axis + 1, rank);
    return visit_dtype("CumSum", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsNumeric<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
        if (x->numel() == 0) return Status::ok_status();
        const T* in = x->as<const T>();
        T* out = y->as<T>();
        const bool exclusive = exclusive_, reverse = reverse_;
        const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / (n * inner));
        ctx.pool().parallel_for(outer, grain, [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o) {
            const T* src = in + o * n * inner;
            T* dst = out + o * n * inner;
            // Visit positions along the axis in summation order; `prev` is the previous
            // output row (null at the start).
            const T* prev_src = nullptr;
            T* prev_dst = nullptr;
            for (int64_t step = 0; step < n; ++step) {
              const int64_t i = reverse ? n - 1 - step : step;
              const T* s = src + i * inner;
              T* d = dst + i * inner;
              if (!prev_dst) {
                for (int64_t j = 0; j < inner; ++j) d[j] = exclusive ? T(0) : s[j];
              } else if (exclusive) {
                for (int64_t j = 0; j < inner; ++j) d[j] = cum_add(prev_dst[j], prev_src[j]);
              } else {
                for (int64_t j = 0; j < inner; ++j) d[j] = cum_add(prev_dst[j], s[j]);
              }
              prev_src = s;
              prev_dst = d;
            }
          }
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype("CumSum", x->dtype);
      }
    });
  }

 private:
  bool exclusive_, reverse_;
};

Expected<std::unique_ptr<Kernel>> cumsum_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 2));
  SOD2_ASSIGN_OR_RETURN(int64_t exclusive, node.attrs.get_int("exclusive", 0));
  SOD2_ASSIGN_OR_RETURN(int64_t reverse, node.attrs.get_int("reverse", 0));
  return std::unique_ptr<Kernel>(std::make_unique<CumSumKernel>(exclusive != 0, reverse != 0));
}

}  // namespace

void register_cumsum(KernelRegistry& r) { r.add("", "CumSum", 11, &cumsum_factory); }

}  // namespace sod2::rt::math
