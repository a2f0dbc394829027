// MaxUnpool (opsets 9, 11): the partial inverse of MaxPool. Y starts as zeros and each X value is
// written at Y.flat[I] (I as MaxPool's Indices: offsets into the whole flattened tensor) of the
// unpooled shape, per spatial axis (in - 1) * stride + kernel - pad_begin - pad_end. An
// output_shape input enlarges that: as in ONNX's reference, the unpooled tensor sits at the
// start of each axis and the rest is zeros.
#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/linalg_kernels.h"

namespace sod2::rt {
namespace {

class MaxUnpoolKernel final : public Kernel {
 public:
  MaxUnpoolKernel(std::vector<int64_t> kernel, std::vector<int64_t> strides,
                  std::vector<int64_t> pads)
      : kernel_(std::move(kernel)), strides_(std::move(strides)), pads_(std::move(pads)) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* ind = ctx.input(1);
    const Tensor* out_shape_t = ctx.input(2);
    if (!x || !ind) return invalid_argument("MaxUnpool: needs X and I");
    const size_t elem = dtype_size(x->dtype);
    if (elem == 0 || x->dtype == DType::kBool)
      return unsupported(std::string("MaxUnpool: dtype ") + dtype_name(x->dtype) +
                         " of X is not supported");
    if (ind->dtype != DType::kInt64)
      return invalid_argument(std::string("MaxUnpool: I must be int64, got ") +
                              dtype_name(ind->dtype));
    if (!(ind->shape == x->shape))
      return invalid_argument("MaxUnpool: I " + ind->shape.to_string() +
                              " must have the shape of X " + x->shape.to_string());
    const int r = x->shape.rank();
    const size_t n = kernel_.size();
    if (r != static_cast<int>(n) + 2)
      return invalid_argument("MaxUnpool: X " + x->shape.to_string() + " does not match the " +
                              std::to_string(n) + " spatial dims of kernel_shape");
    // The shape the indices refer to: from the window attributes (pads included).
    int64_t inferred[kMaxRank] = {};
    inferred[0] = x->shape[0];
    inferred[1] = x->shape[1];
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = x->shape[static_cast<int>(i) + 2];
      const int64_t s = strides_.empty() ? 1 : strides_[i];
      const int64_t pb = pads_.empty() ? 0 : pads_[i], pe = pads_.empty() ? 0 : pads_[n + i];
      int64_t d = 0;
      if (in > 0 && (__builtin_mul_overflow(in - 1, s, &d) ||
                     __builtin_add_overflow(d, kernel_[i] - pb - pe, &d)))
        return invalid_argument("MaxUnpool: the output size overflows");
      inferred[i + 2] = in > 0 ? d : 0;
      if (inferred[i + 2] < 0)
        return invalid_argument("MaxUnpool: pads leave a negative output size for X " +
                                x->shape.to_string());
    }
    const Shape in_shape(std::span<const int64_t>(inferred, static_cast<size_t>(r)));
    SOD2_RETURN_IF_ERROR(checked_tensor_bytes(x->dtype, in_shape).status());
    // output_shape, when given, holds that shape at its start (ONNX's reference: the rest is
    // zeros), so every dim must be at least the inferred one.
    Shape out_shape = in_shape;
    if (out_shape_t) {
      if (out_shape_t->dtype != DType::kInt64 || out_shape_t->shape.rank() != 1 ||
          out_shape_t->shape[0] != r)
        return invalid_argument("MaxUnpool: output_shape must be an int64 vector of " +
                                std::to_string(r) + " values, got " +
                                out_shape_t->shape.to_string());
      for (int i = 0; i < r; ++i) {
        out_shape[i] = out_shape_t->as<const int64_t>()[i];
        if (out_shape[i] < in_shape[i])
          return invalid_argument("MaxUnpool: output_shape " + out_shape.to_string() +
                                  " is smaller than the unpooled shape " + in_shape.to_string() +
                                  " in dim " + std::to_string(i));
      }
    }
    SOD2_ASSIGN_OR_RETURN(size_t out_bytes, checked_tensor_bytes(x->dtype, out_shape));
    const int64_t total = in_shape.numel();
    const int64_t count = x->numel();
    const int64_t* idx = ind->as<const int64_t>();
    for (int64_t i = 0; i < count; ++i)
      if (idx[i] < 0 || idx[i] >= total)
        return invalid_argument("MaxUnpool: index " + std::to_string(idx[i]) + " at " +
                                std::to_string(i) + " is outside the unpooled shape " +
                                in_shape.to_string() + " of " + std::to_string(total) +
                                " elements");
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, out_shape));
    if (out_bytes > 0) std::memset(y->data, 0, out_bytes);
    const auto* src = static_cast<const uint8_t*>(x->data);
    auto* dst = static_cast<uint8_t*>(y->data);
    const bool same = out_shape == in_shape;
    for (int64_t i = 0; i < count; ++i) {
      int64_t at = idx[i];
      if (!same) {
        // The index's coordinates in the inferred shape, placed in the output.
        int64_t rest = at, off = 0, stride = 1;
        for (int d = r - 1; d >= 0; --d) {
          off += (rest % in_shape[d]) * stride;
          rest /= in_shape[d];
          stride *= out_shape[d];
        }
        at = off;
      }
      std::memcpy(dst + static_cast<size_t>(at) * elem, src + static_cast<size_t>(i) * elem, elem);
    }
    return Status::ok_status();
  }

 private:
  std::vector<int64_t> kernel_, strides_, pads_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_max_unpool(const NodeInfo& node) {
  std::vector<int64_t> kernel, strides, pads;
  SOD2_ATTR(kernel, node.attrs.get_ints("kernel_shape"));
  SOD2_ATTR(strides, node.attrs.get_ints("strides"));
  SOD2_ATTR(pads, node.attrs.get_ints("pads"));
  const size_t n = kernel.size();
  if (n == 0 || n + 2 > static_cast<size_t>(kMaxRank))
    return invalid_model("MaxUnpool: kernel_shape must have 1 to " + std::to_string(kMaxRank - 2) +
                         " values");
  if (!strides.empty() && strides.size() != n)
    return invalid_model("MaxUnpool: strides must have " + std::to_string(n) + " values");
  if (!pads.empty() && pads.size() != 2 * n)
    return invalid_model("MaxUnpool: pads must have " + std::to_string(2 * n) + " values");
  for (int64_t k : kernel)
    if (k < 1 || k > (int64_t{1} << 32))
      return invalid_model("MaxUnpool: kernel_shape values must be positive");
  for (int64_t s : strides)
    if (s < 1 || s > (int64_t{1} << 32))
      return invalid_model("MaxUnpool: strides must be positive");
  for (int64_t p : pads)
    if (p < 0 || p > (int64_t{1} << 32))
      return invalid_model("MaxUnpool: pads must not be negative");
  return std::unique_ptr<Kernel>(
      new MaxUnpoolKernel(std::move(kernel), std::move(strides), std::move(pads)));
}

}  // namespace sod2::rt
