// Unique (opset 11): the distinct elements (no axis) or distinct slices along `axis`, sorted
// ascending (slices lexicographically, as numpy.unique) or in order of first occurrence, with
// the first-occurrence indices, the inverse indices and the counts. The output size depends on
// the values (EDO): the kernel sorts a permutation in scratch, counts the groups, then asks for
// its outputs. Without an axis the input is treated as [1, numel, 1], so both forms share one
// path. NaNs compare equal to each other and above every number.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

template <typename T>
bool elem_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename T>
bool elem_equal(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  }
  return a == b;
}

// The [outer, count, inner] view of the input: slice k holds x[o, k, i] for all (o, i).
struct SliceView {
  int64_t outer = 1, count = 0, inner = 1;
};

// -1, 0 or 1: slice a against slice b in row-major (o, i) order.
template <typename T>
int compare_slices(const T* x, const SliceView& v, int64_t a, int64_t b) {
  if (a == b) return 0;
  for (int64_t o = 0; o < v.outer; ++o) {
    const T* pa = x + (o * v.count + a) * v.inner;
    const T* pb = x + (o * v.count + b) * v.inner;
    for (int64_t i = 0; i < v.inner; ++i) {
      if (elem_equal(pa[i], pb[i])) continue;
      return elem_less(pa[i], pb[i]) ? -1 : 1;
    }
  }
  return 0;
}

class UniqueKernel final : public Kernel {
 public:
  UniqueKernel(bool has_axis, int64_t axis, bool sorted, size_t num_outputs)
      : has_axis_(has_axis), axis_(axis), sorted_(sorted), num_outputs_(num_outputs) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("Unique: missing input X");
    switch (x->dtype) {
      case DType::kFloat: return run_typed<float>(ctx, *x);
      case DType::kDouble: return run_typed<double>(ctx, *x);
      case DType::kInt8: return run_typed<int8_t>(ctx, *x);
      case DType::kUint8: return run_typed<uint8_t>(ctx, *x);
      case DType::kBool: return run_typed<uint8_t>(ctx, *x);
      case DType::kInt16: return run_typed<int16_t>(ctx, *x);
      case DType::kUint16: return run_typed<uint16_t>(ctx, *x);
      case DType::kInt32: return run_typed<int32_t>(ctx, *x);
      case DType::kUint32: return run_typed<uint32_t>(ctx, *x);
      case DType::kInt64: return run_typed<int64_t>(ctx, *x);
      case DType::kUint64: return run_typed<uint64_t>(ctx, *x);
      default:
        return unsupported(std::string("Unique: input type ") + dtype_name(x->dtype) +
                           " is not supported");
    }
  }

 private:
  template <typename T>
  Status run_typed(KernelContext& ctx, const Tensor& x) {
    const Shape& s = x.shape;
    SliceView v;
    int axis = -1;
    if (has_axis_) {
      SOD2_ASSIGN_OR_RETURN(axis, normalize_axis(axis_, s.rank(), "Unique"));
      for (int d = 0; d < axis; ++d) v.outer *= s[d];
      v.count = s[axis];
      for (int d = axis + 1; d < s.rank(); ++d) v.inner *= s[d];
    } else {
      v.count = x.numel();
    }
    const T* data = x.as<const T>();
    const int64_t n = v.count;

    // Scratch: the sorted permutation, per group its first index, count and output position, and
    // per slice its group.
    // Checked: with an axis, n is one dim of a possibly empty tensor and may be huge.
    SOD2_ASSIGN_OR_RETURN(const size_t bytes, checked_tensor_bytes(DType::kInt64, Shape{n, 5}));
    SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(bytes > 0 ? bytes : sizeof(int64_t)));
    int64_t* perm = static_cast<int64_t*>(mem);
    int64_t* first = perm + n;
    int64_t* counts = first + n;
    int64_t* group_of = counts + n;
    int64_t* position = group_of + n;
    for (int64_t i = 0; i < n; ++i) perm[i] = i;
    // Ties broken by index, so each group starts with its first occurrence.
    std::sort(perm, perm + n, [&](int64_t a, int64_t b) {
      const int c = compare_slices(data, v, a, b);
      return c != 0 ? c < 0 : a < b;
    });
    int64_t groups = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (i == 0 || compare_slices(data, v, perm[i - 1], perm[i]) != 0) {
        first[groups] = perm[i];
        counts[groups] = 0;
        ++groups;
      }
      ++counts[groups - 1];
      group_of[perm[i]] = groups - 1;
    }
    // Output position of each group: sorted order as is, otherwise by first occurrence. perm is
    // reused for the position -> group map.
    int64_t* order = perm;
    for (int64_t g = 0; g < groups; ++g) order[g] = g;
    if (!sorted_)
      std::sort(order, order + groups, [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    for (int64_t p = 0; p < groups; ++p) position[order[p]] = p;

    Shape y_shape;
    if (has_axis_) {
      y_shape = s;
      y_shape[axis] = groups;
    } else {
      y_shape = Shape{groups};
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x.dtype, y_shape));
    T* out = y->as<T>();
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t p = 0; p < groups; ++p)
        std::memcpy(out + (o * groups + p) * v.inner, data + (o * n + first[order[p]]) * v.inner,
                    static_cast<size_t>(v.inner) * sizeof(T));
    if (num_outputs_ > 1) {
      SOD2_ASSIGN_OR_RETURN(Tensor * t, ctx.output(1, DType::kInt64, Shape{groups}));
      for (int64_t p = 0; p < groups; ++p) t->as<int64_t>()[p] = first[order[p]];
    }
    if (num_outputs_ > 2) {
      SOD2_ASSIGN_OR_RETURN(Tensor * t, ctx.output(2, DType::kInt64, Shape{n}));
      for (int64_t i = 0; i < n; ++i) t->as<int64_t>()[i] = position[group_of[i]];
    }
    if (num_outputs_ > 3) {
      SOD2_ASSIGN_OR_RETURN(Tensor * t, ctx.output(3, DType::kInt64, Shape{groups}));
      for (int64_t p = 0; p < groups; ++p) t->as<int64_t>()[p] = counts[order[p]];
    }
    return Status::ok_status();
  }

  bool has_axis_;
  int64_t axis_;
  bool sorted_;
  size_t num_outputs_;
};

}  // namespace

KernelOr make_unique(const NodeInfo& node) {
  const bool has_axis = node.attrs.has("axis");
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 0));
  SOD2_ASSIGN_OR_RETURN(int64_t sorted, node.attrs.get_int("sorted", 1));
  return make_kernel<UniqueKernel>(has_axis, axis, sorted != 0, node.num_outputs);
}

}  // namespace sod2::rt
