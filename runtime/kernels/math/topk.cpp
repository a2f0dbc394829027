// TopK: the k largest (or smallest) elements along an axis with their int64 indices, sorted,
// equal values ordered by lower index. k is an attribute in opset 1 and an input from 10;
// `largest` and `sorted` arrived in 11 (their defaults give the older behaviour). Results are
// always sorted, which `sorted=0` (order unspecified) allows.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

class TopKKernel final : public Kernel {
 public:
  TopKKernel(int64_t axis, int64_t k_attr, bool k_input, bool largest)
      : axis_(axis), k_attr_(k_attr), k_input_(k_input), largest_(largest) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("TopK: input is missing");
    const int rank = x->shape.rank();
    if (rank == 0) return invalid_argument("TopK: input must have at least one dim");
    int axis = 0;
    SOD2_RETURN_IF_ERROR(normalize_axis("TopK", axis_, rank, &axis));
    int64_t k = k_attr_;
    if (k_input_) SOD2_RETURN_IF_ERROR(read_scalar_int("TopK", "K", ctx.input(1), &k));
    const int64_t n = x->shape[axis];
    if (k < 0 || k > n) {
      return invalid_argument("TopK: k = " + std::to_string(k) + " is outside [0, " +
                              std::to_string(n) + "] for axis " + std::to_string(axis) + " of " +
                              x->shape.to_string());
    }
    Shape out_shape = x->shape;
    out_shape[axis] = k;
    const int64_t outer = dims_product(x->shape, 0, axis);
    const int64_t inner = dims_product(x->shape, axis + 1, rank);
    return visit_dtype("TopK", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsNumeric<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * values, ctx.output(0, x->dtype, out_shape));
        SOD2_ASSIGN_OR_RETURN(Tensor * indices, ctx.output(1, DType::kInt64, out_shape));
        const int64_t rows = outer * inner;
        if (rows == 0 || k == 0) return Status::ok_status();
        // Tasks own a scratch row each: parallel_for hands each call a range of tasks, and
        // the call works through them one after another in its first task's row.
        const int64_t tasks = std::min<int64_t>(rows, ctx.pool().num_threads() * 4);
        using Item = std::pair<T, int64_t>;
        SOD2_ASSIGN_OR_RETURN(void* scratch,
                              ctx.scratch(sizeof(Item) * static_cast<size_t>(n * tasks)));
        Item* items = static_cast<Item*>(scratch);
        const T* in = x->as<const T>();
        T* vout = values->as<T>();
        int64_t* iout = indices->as<int64_t>();
        const bool largest = largest_;
        auto before = [largest](const Item& a, const Item& b) {
          if (a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
          return a.second < b.second;
        };
        const int64_t per_task = (rows + tasks - 1) / tasks;
        ctx.pool().parallel_for(tasks, 1, [&](int64_t tb, int64_t te) {
          Item* buf = items + tb * n;
          const int64_t row_end = std::min(rows, te * per_task);
          for (int64_t row = tb * per_task; row < row_end; ++row) {
            const T* p = in + (row / inner) * n * inner + (row % inner);
            for (int64_t i = 0; i < n; ++i) buf[i] = Item(p[i * inner], i);
            if (k < n) {
              std::partial_sort(buf, buf + k, buf + n, before);
            } else {
              std::sort(buf, buf + n, before);
            }
            const int64_t base = (row / inner) * k * inner + (row % inner);
            for (int64_t i = 0; i < k; ++i) {
              vout[base + i * inner] = buf[i].first;
              iout[base + i * inner] = buf[i].second;
            }
          }
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype("TopK", x->dtype);
      }
    });
  }

 private:
  int64_t axis_, k_attr_;
  bool k_input_, largest_;
};

template <bool kKInput>
Expected<std::unique_ptr<Kernel>> topk_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, kKInput ? 2 : 1));
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", -1));
  SOD2_ASSIGN_OR_RETURN(int64_t k, node.attrs.get_int("k", -1));
  SOD2_ASSIGN_OR_RETURN(int64_t largest, node.attrs.get_int("largest", 1));
  if (!kKInput && k < 0) return invalid_model("TopK: attribute 'k' is missing");
  return std::unique_ptr<Kernel>(std::make_unique<TopKKernel>(axis, k, kKInput, largest != 0));
}

}  // namespace

void register_topk(KernelRegistry& r) {
  r.add("", "TopK", 1, &topk_factory<false>);
  r.add("", "TopK", 10, &topk_factory<true>);
}

}  // namespace sod2::rt::math
