// OneHot: the output is filled with the off value, then each index sets its on value. Indices
// outside [-depth, depth) leave their row all off, as the spec says (not an error).
#include <cstring>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

// Element i of a numeric tensor, truncated to an integer (OneHot accepts any numeric indices).
int64_t load_integral(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::kInt64: return t.as<const int64_t>()[i];
    case DType::kInt32: return t.as<const int32_t>()[i];
    case DType::kInt16: return t.as<const int16_t>()[i];
    case DType::kInt8: return t.as<const int8_t>()[i];
    case DType::kUint8: return t.as<const uint8_t>()[i];
    case DType::kUint16: return t.as<const uint16_t>()[i];
    case DType::kUint32: return t.as<const uint32_t>()[i];
    case DType::kUint64: return static_cast<int64_t>(t.as<const uint64_t>()[i]);
    case DType::kFloat: return static_cast<int64_t>(t.as<const float>()[i]);
    case DType::kDouble: return static_cast<int64_t>(t.as<const double>()[i]);
    default: return 0;
  }
}

bool is_numeric_index(DType t) {
  switch (t) {
    case DType::kInt64:
    case DType::kInt32:
    case DType::kInt16:
    case DType::kInt8:
    case DType::kUint8:
    case DType::kUint16:
    case DType::kUint32:
    case DType::kUint64:
    case DType::kFloat:
    case DType::kDouble: return true;
    default: return false;
  }
}

class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) override {
    const Tensor* indices = ctx.input(0);
    const Tensor* depth_t = ctx.input(1);
    const Tensor* values = ctx.input(2);
    if (!indices || !depth_t || !values) {
      return invalid_argument("OneHot: indices, depth and values are required");
    }
    if (!is_numeric_index(indices->dtype)) {
      return unsupported(std::string("OneHot: indices of type ") + dtype_name(indices->dtype));
    }
    SOD2_RETURN_IF_ERROR(require_fixed_size(values->dtype, "OneHot"));
    if (values->numel() != 2) return invalid_argument("OneHot: values must hold [off, on]");
    SOD2_ASSIGN_OR_RETURN(double depth_v, read_scalar_double(*depth_t, "OneHot", "depth"));
    if (!(depth_v >= 1 && depth_v < 9.0e18)) {
      return invalid_argument("OneHot: depth must be positive, got " + std::to_string(depth_v));
    }
    const auto depth = static_cast<int64_t>(depth_v);
    const Shape& is = indices->shape;
    const int out_rank = is.rank() + 1;
    if (axis_ < -out_rank || axis_ >= out_rank) {
      return invalid_argument("OneHot: axis " + std::to_string(axis_) +
                              " is out of range for output rank " + std::to_string(out_rank));
    }
    const int axis = static_cast<int>(axis_ < 0 ? axis_ + out_rank : axis_);
    int64_t dims[kMaxRank + 1];
    for (int i = 0, j = 0; i < out_rank; ++i) dims[i] = i == axis ? depth : is[j++];
    const size_t elem = dtype_size(values->dtype);
    SOD2_ASSIGN_OR_RETURN(Shape out_shape, checked_shape(dims, out_rank, elem, "OneHot"));
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, values->dtype, out_shape));
    const auto* off = static_cast<const uint8_t*>(values->data);
    const uint8_t* on = off + elem;
    auto* dst = static_cast<uint8_t*>(out->data);
    fill_elements(dst, off, elem, out_shape.numel());
    int64_t inner = 1;
    for (int i = axis; i < is.rank(); ++i) inner *= is[i];
    const int64_t n = indices->numel();
    for (int64_t j = 0; j < n; ++j) {
      int64_t v = load_integral(*indices, j);
      if (v < 0) v += depth;
      if (v < 0 || v >= depth) continue;
      const int64_t o = j / inner, in = j % inner;
      std::memcpy(dst + static_cast<size_t>((o * depth + v) * inner + in) * elem, on, elem);
    }
    return Status::ok_status();
  }

 private:
  int64_t axis_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_one_hot(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", -1));
  return make_kernel<OneHotKernel>(axis);
}

}  // namespace sod2::rt
