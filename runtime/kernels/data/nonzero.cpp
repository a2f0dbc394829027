// NonZero: the output size depends on the values, so the kernel counts first, then asks for an
// int64 [rank, count] output and writes the coordinates in row-major order.
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

// Whether an element is nonzero, from its bits: for floating types the sign bit is masked so
// that -0.0 counts as zero (NaN counts as nonzero, as in numpy).
template <typename Bits>
int64_t count_nonzero(const Bits* p, int64_t n, Bits mask) {
  int64_t c = 0;
  for (int64_t i = 0; i < n; ++i) c += (p[i] & mask) != 0;
  return c;
}

template <typename Bits>
void write_coords(const Bits* p, const Shape& shape, Bits mask, int64_t count, int64_t* out) {
  const int rank = shape.rank();
  int64_t idx[kMaxRank] = {};
  const int64_t n = shape.numel();
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    if ((p[i] & mask) != 0) {
      for (int d = 0; d < rank; ++d) out[d * count + k] = idx[d];
      ++k;
    }
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

template <typename Bits>
Status nonzero(KernelContext& ctx, const Tensor& data, Bits mask) {
  // A scalar is treated as a 1-element vector, as numpy's nonzero did and ORT does.
  const Shape shape = data.shape.rank() == 0 ? Shape{1} : data.shape;
  const auto* p = static_cast<const Bits*>(data.data);
  const int64_t count = count_nonzero(p, data.numel(), mask);
  SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, DType::kInt64, Shape{shape.rank(), count}));
  if (count > 0) write_coords(p, shape, mask, count, out->as<int64_t>());
  return Status::ok_status();
}

class NonZeroKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("NonZero: missing input");
    switch (data->dtype) {
      case DType::kFloat: return nonzero<uint32_t>(ctx, *data, 0x7fffffffu);
      case DType::kDouble: return nonzero<uint64_t>(ctx, *data, 0x7fffffffffffffffull);
      case DType::kFloat16:
      case DType::kBFloat16: return nonzero<uint16_t>(ctx, *data, 0x7fff);
      default: break;
    }
    // Their zeros and NaNs differ by type (-0 is 0x80 in two of them, NaN in the others), and
    // ONNX's NonZero does not take them.
    if (is_float8(data->dtype))
      return unsupported(std::string("NonZero: element type ") + dtype_name(data->dtype) +
                         " is not supported");
    switch (dtype_size(data->dtype)) {
      case 1: return nonzero<uint8_t>(ctx, *data, 0xff);
      case 2: return nonzero<uint16_t>(ctx, *data, 0xffff);
      case 4: return nonzero<uint32_t>(ctx, *data, 0xffffffffu);
      case 8: return nonzero<uint64_t>(ctx, *data, ~0ull);
      default: return unsupported(std::string("NonZero: type ") + dtype_name(data->dtype));
    }
  }
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_nonzero(const NodeInfo& node) {
  return make_kernel<NonZeroKernel>();
}

}  // namespace sod2::rt
