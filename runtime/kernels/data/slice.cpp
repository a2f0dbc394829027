// Slice: per sliced axis a start, a count and a step, clamped as ONNX specifies; the result is a
// strided view of the input (negative steps walk backwards) copied by strided_copy.
#include <algorithm>
#include <limits>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"
#include "runtime/kernels/data/strided_copy.h"

namespace sod2::rt {
namespace {

struct SliceParams {
  int count = 0;  // number of sliced axes
  int64_t starts[kMaxRank], ends[kMaxRank], axes[kMaxRank], steps[kMaxRank];
};

// The first index and the number of elements ONNX's clamping gives for one axis.
void clamp_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t* first,
                int64_t* count) {
  if (dim == 0) {
    *first = 0;
    *count = 0;
    return;
  }
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    *first = start;
    *count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    *first = start;
    // -step cannot overflow: steps are clamped to >= -INT64_MAX.
    *count = start > end ? (start - end - 1) / -step + 1 : 0;
  }
}

Status slice(KernelContext& ctx, const Tensor& data, const SliceParams& p) {
  SOD2_RETURN_IF_ERROR(require_fixed_size(data.dtype, "Slice"));
  const Shape& in = data.shape;
  const int rank = in.rank();
  int64_t first[kMaxRank] = {}, step[kMaxRank], strides[kMaxRank];
  Shape out_shape = in;
  for (int i = 0; i < rank; ++i) step[i] = 1;
  bool seen[kMaxRank] = {};
  for (int k = 0; k < p.count; ++k) {
    SOD2_ASSIGN_OR_RETURN(int a, normalize_axis(p.axes[k], rank, "Slice"));
    if (seen[a])
      return invalid_argument("Slice: axis " + std::to_string(p.axes[k]) + " is repeated");
    seen[a] = true;
    if (p.steps[k] == 0) return invalid_argument("Slice: step is 0");
    step[a] = std::max(p.steps[k], -std::numeric_limits<int64_t>::max());
    clamp_axis(in[a], p.starts[k], p.ends[k], step[a], &first[a], &out_shape[a]);
  }
  SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data.dtype, out_shape));
  if (out_shape.numel() == 0) return Status::ok_status();
  row_major_strides(in, strides);
  StridedView view;
  int64_t offset = 0;
  for (int i = 0; i < rank; ++i) {
    offset += first[i] * strides[i];
    // With one element the step is irrelevant (and may be huge): avoid overflowing the product.
    view.push(out_shape[i], out_shape[i] > 1 ? step[i] * strides[i] : 0);
  }
  const size_t elem = dtype_size(data.dtype);
  strided_copy(ctx.pool(), out->data,
               static_cast<const uint8_t*>(data.data) + offset * static_cast<int64_t>(elem), elem,
               view);
  return Status::ok_status();
}

// Slice-1: starts, ends and axes are attributes; steps are 1.
class SliceAttrKernel final : public Kernel {
 public:
  explicit SliceAttrKernel(const SliceParams& p) : params_(p) {}
  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("Slice: missing input");
    return slice(ctx, *data, params_);
  }

 private:
  SliceParams params_;
};

// Slice-10+: starts, ends, axes and steps are inputs 1..4.
class SliceInputKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    const Tensor* starts = ctx.input(1);
    const Tensor* ends = ctx.input(2);
    if (!data || !starts || !ends)
      return invalid_argument("Slice: data, starts and ends are required");
    SliceParams p;
    SOD2_ASSIGN_OR_RETURN(p.count, read_int_list(*starts, p.starts, kMaxRank, "Slice", "starts"));
    SOD2_ASSIGN_OR_RETURN(int n_ends, read_int_list(*ends, p.ends, kMaxRank, "Slice", "ends"));
    if (n_ends != p.count) {
      return invalid_argument("Slice: " + std::to_string(p.count) + " starts but " +
                              std::to_string(n_ends) + " ends");
    }
    if (const Tensor* axes = ctx.input(3)) {
      SOD2_ASSIGN_OR_RETURN(int n, read_int_list(*axes, p.axes, kMaxRank, "Slice", "axes"));
      if (n != p.count) return invalid_argument("Slice: axes and starts differ in length");
    } else {
      for (int k = 0; k < p.count; ++k) p.axes[k] = k;
    }
    if (const Tensor* steps = ctx.input(4)) {
      SOD2_ASSIGN_OR_RETURN(int n, read_int_list(*steps, p.steps, kMaxRank, "Slice", "steps"));
      if (n != p.count) return invalid_argument("Slice: steps and starts differ in length");
    } else {
      for (int k = 0; k < p.count; ++k) p.steps[k] = 1;
    }
    return slice(ctx, *data, p);
  }
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_slice_v1(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> starts, node.attrs.get_ints("starts"));
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> ends, node.attrs.get_ints("ends"));
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> axes, node.attrs.get_ints("axes"));
  if (starts.size() != ends.size() || (!axes.empty() && axes.size() != starts.size())) {
    return invalid_model("Slice: starts, ends and axes differ in length");
  }
  if (starts.size() > static_cast<size_t>(kMaxRank)) return invalid_model("Slice: too many axes");
  SliceParams p;
  p.count = static_cast<int>(starts.size());
  for (int k = 0; k < p.count; ++k) {
    p.starts[k] = starts[static_cast<size_t>(k)];
    p.ends[k] = ends[static_cast<size_t>(k)];
    p.axes[k] = axes.empty() ? k : axes[static_cast<size_t>(k)];
    p.steps[k] = 1;
  }
  return make_kernel<SliceAttrKernel>(p);
}

Expected<std::unique_ptr<Kernel>> make_slice_v10(const NodeInfo& node) {
  return make_kernel<SliceInputKernel>();
}

}  // namespace sod2::rt
