// Compress: keeps the slices along an axis (or the elements of the flattened input) whose
// condition is true. The output size depends on the condition, so it is counted first.
#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

class CompressKernel final : public Kernel {
 public:
  CompressKernel(bool has_axis, int64_t axis) : has_axis_(has_axis), axis_(axis) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    const Tensor* cond = ctx.input(1);
    if (!data || !cond) return invalid_argument("Compress: input and condition are required");
    SOD2_RETURN_IF_ERROR(require_fixed_size(data->dtype, "Compress"));
    if (cond->dtype != DType::kBool || cond->shape.rank() != 1) {
      return invalid_argument("Compress: condition must be a 1-D bool tensor");
    }
    const Shape& in = data->shape;
    int axis = 0;
    int64_t outer = 1, dim = in.numel(), inner = 1;
    if (has_axis_) {
      SOD2_ASSIGN_OR_RETURN(axis, normalize_axis(axis_, in.rank(), "Compress"));
      dim = in[axis];
      for (int i = 0; i < axis; ++i) outer *= in[i];
      for (int i = axis + 1; i < in.rank(); ++i) inner *= in[i];
    }
    const auto* c = cond->as<const uint8_t>();
    const int64_t len = cond->numel();
    int64_t kept = 0;
    for (int64_t i = 0; i < len; ++i) {
      if (!c[i]) continue;
      if (i >= dim) {
        return invalid_argument("Compress: condition selects index " + std::to_string(i) +
                                " of an axis of size " + std::to_string(dim));
      }
      ++kept;
    }
    Shape out_shape;
    if (has_axis_) {
      out_shape = in;
      out_shape[axis] = kept;
    } else {
      out_shape = Shape{kept};
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data->dtype, out_shape));
    if (out_shape.numel() == 0) return Status::ok_status();
    const size_t block = static_cast<size_t>(inner) * dtype_size(data->dtype);
    const auto* src = static_cast<const uint8_t*>(data->data);
    auto* dst = static_cast<uint8_t*>(out->data);
    const int64_t scan = std::min(len, dim);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < scan; ++i) {
        if (!c[i]) continue;
        std::memcpy(dst, src + static_cast<size_t>(o * dim + i) * block, block);
        dst += block;
      }
    }
    return Status::ok_status();
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_compress(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 0));
  return make_kernel<CompressKernel>(node.attrs.has("axis"), axis);
}

}  // namespace sod2::rt
