// Slice: per sliced axis a start, a count and a step, clamped as ONNX specifies; the result is a
// strided view of the input (negative steps walk backwards) copied by strided_copy.
#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/data_geometry.h"
#include "runtime/kernels/data/factories.h"
#include "runtime/kernels/data/strided_copy.h"

namespace sod2::rt {
namespace {

Status slice(KernelContext& ctx, const Tensor& data, const SliceParams& p) {
  SOD2_RETURN_IF_ERROR(require_fixed_size(data.dtype, "Slice"));
  const Shape& in = data.shape;
  const int rank = in.rank();
  SOD2_ASSIGN_OR_RETURN(SliceGeometry g, resolve_slice(in, p));
  SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data.dtype, g.out));
  if (g.out.numel() == 0) return Status::ok_status();
  int64_t strides[kMaxRank];
  row_major_strides(in, strides);
  StridedView view;
  int64_t offset = 0;
  for (int i = 0; i < rank; ++i) {
    offset += g.first[i] * strides[i];
    // With one element the step is irrelevant (and may be huge): avoid overflowing the product.
    view.push(g.out[i], g.out[i] > 1 ? g.step[i] * strides[i] : 0);
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
    if (!data) return invalid_argument("Slice: data, starts and ends are required");
    SOD2_ASSIGN_OR_RETURN(SliceParams p, read_slice_inputs(ctx));
    return slice(ctx, *data, p);
  }
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_slice_v1(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(SliceParams p, read_slice_attrs(node.attrs));
  return make_kernel<SliceAttrKernel>(p);
}

Expected<std::unique_ptr<Kernel>> make_slice_v10(const NodeInfo& node) {
  return make_kernel<SliceInputKernel>();
}

}  // namespace sod2::rt
