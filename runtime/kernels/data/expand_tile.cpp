// Expand (broadcast to a shape) and Tile (repeat along each axis): both are strided views of the
// input, with stride 0 where values repeat.
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"
#include "runtime/kernels/data/strided_copy.h"

namespace sod2::rt {
namespace {

class ExpandKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    const Tensor* shape = ctx.input(1);
    if (!data || !shape) return invalid_argument("Expand: input and shape are required");
    SOD2_RETURN_IF_ERROR(require_fixed_size(data->dtype, "Expand"));
    int64_t target[kMaxRank];
    SOD2_ASSIGN_OR_RETURN(int n, read_int_list(*shape, target, kMaxRank, "Expand", "shape"));
    const Shape& in = data->shape;
    const int rank = std::max(n, in.rank());
    int64_t in_strides[kMaxRank], dims[kMaxRank];
    row_major_strides(in, in_strides);
    StridedView view;
    for (int i = 0; i < rank; ++i) {
      const int ii = i - (rank - in.rank());  // input dim aligned to the right
      const int si = i - (rank - n);
      const int64_t a = ii >= 0 ? in[ii] : 1;
      const int64_t b = si >= 0 ? target[si] : 1;
      if (a != b && a != 1 && b != 1) {
        return invalid_argument("Expand: input shape " + in.to_string() +
                                " cannot broadcast to the requested shape at dim " +
                                std::to_string(i) + " (" + std::to_string(a) + " vs " +
                                std::to_string(b) + ")");
      }
      dims[i] = a == 1 ? b : a;
      view.push(dims[i], ii >= 0 && a != 1 ? in_strides[ii] : 0);
    }
    const size_t elem = dtype_size(data->dtype);
    SOD2_ASSIGN_OR_RETURN(Shape out_shape, checked_shape(dims, rank, elem, "Expand"));
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data->dtype, out_shape));
    strided_copy(ctx.pool(), out->data, data->data, elem, view);
    return Status::ok_status();
  }
};

class TileKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    const Tensor* repeats = ctx.input(1);
    if (!data || !repeats) return invalid_argument("Tile: input and repeats are required");
    SOD2_RETURN_IF_ERROR(require_fixed_size(data->dtype, "Tile"));
    int64_t reps[kMaxRank];
    SOD2_ASSIGN_OR_RETURN(int n, read_int_list(*repeats, reps, kMaxRank, "Tile", "repeats"));
    const Shape& in = data->shape;
    if (n != in.rank()) {
      return invalid_argument("Tile: " + std::to_string(n) + " repeats for an input of rank " +
                              std::to_string(in.rank()));
    }
    int64_t in_strides[kMaxRank], dims[kMaxRank];
    row_major_strides(in, in_strides);
    StridedView view;  // each dim becomes (repeat, dim): the outer one re-reads the same data
    for (int i = 0; i < n; ++i) {
      if (reps[i] < 0)
        return invalid_argument("Tile: repeat " + std::to_string(reps[i]) + " is negative");
      if (!mul_fits(in[i], reps[i], &dims[i])) return invalid_argument("Tile: result is too large");
      view.push(reps[i], 0);
      view.push(in[i], in_strides[i]);
    }
    const size_t elem = dtype_size(data->dtype);
    SOD2_ASSIGN_OR_RETURN(Shape out_shape, checked_shape(dims, n, elem, "Tile"));
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data->dtype, out_shape));
    strided_copy(ctx.pool(), out->data, data->data, elem, view);
    return Status::ok_status();
  }
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_expand(const NodeInfo& node) {
  return make_kernel<ExpandKernel>();
}

Expected<std::unique_ptr<Kernel>> make_tile(const NodeInfo& node) {
  return make_kernel<TileKernel>();
}

}  // namespace sod2::rt
