// ArgMax and ArgMin along one axis: int64 indices, keepdims, and select_last_index (opset 12)
// choosing the last of equal extremes instead of the first.
#include <algorithm>
#include <memory>
#include <string>

#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

template <bool kMax>
class ArgReduceKernel final : public Kernel {
 public:
  ArgReduceKernel(int64_t axis, bool keepdims, bool last)
      : axis_(axis), keepdims_(keepdims), select_last_(last) {}

  Status run(KernelContext& ctx) override {
    const char* name = kMax ? "ArgMax" : "ArgMin";
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(name) + ": input is missing");
    const int rank = x->shape.rank();
    int axis = 0;
    SOD2_RETURN_IF_ERROR(normalize_axis(name, axis_, std::max(rank, 1), &axis));
    const int64_t n = rank > 0 ? x->shape[axis] : 1;
    const int64_t outer = dims_product(x->shape, 0, std::min(axis, rank));
    const int64_t inner = dims_product(x->shape, std::min(axis + 1, rank), rank);
    Shape out_shape;
    for (int i = 0; i < rank; ++i) {
      if (i != axis) {
        out_shape.push_back(x->shape[i]);
      } else if (keepdims_) {
        out_shape.push_back(1);
      }
    }
    if (n == 0 && outer * inner > 0) {
      return invalid_argument(std::string(name) + ": axis " + std::to_string(axis) + " of shape " +
                              x->shape.to_string() + " is empty");
    }
    return visit_dtype(name, x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsNumeric<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kInt64, out_shape));
        if (outer * inner == 0) return Status::ok_status();
        const T* in = x->as<const T>();
        int64_t* out = y->as<int64_t>();
        const bool last = select_last_;
        const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / n);
        // Outputs in order; each walks its strided run along the axis.
        ctx.pool().parallel_for(outer * inner, grain, [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o) {
            const T* p = in + (o / inner) * n * inner + (o % inner);
            T best = p[0];
            int64_t best_i = 0;
            for (int64_t i = 1; i < n; ++i) {
              const T v = p[i * inner];
              const bool better =
                  kMax ? (v > best || (last && v == best)) : (v < best || (last && v == best));
              if (better) {
                best = v;
                best_i = i;
              }
            }
            out[o] = best_i;
          }
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype(name, x->dtype);
      }
    });
  }

 private:
  int64_t axis_;
  bool keepdims_, select_last_;
};

template <bool kMax>
Expected<std::unique_ptr<Kernel>> arg_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 0));
  SOD2_ASSIGN_OR_RETURN(int64_t keepdims, node.attrs.get_int("keepdims", 1));
  SOD2_ASSIGN_OR_RETURN(int64_t last, node.attrs.get_int("select_last_index", 0));
  return std::unique_ptr<Kernel>(
      std::make_unique<ArgReduceKernel<kMax>>(axis, keepdims != 0, last != 0));
}

}  // namespace

void register_arg_reduce(KernelRegistry& r) {
  r.add("", "ArgMax", 1, &arg_factory<true>);
  r.add("", "ArgMin", 1, &arg_factory<false>);
}

}  // namespace sod2::rt::math
