// Trilu (keep the upper or lower triangle of the last two dims) and EyeLike (ones on a diagonal).
#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(bool upper) : upper_(upper) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("Trilu: missing input");
    SOD2_RETURN_IF_ERROR(require_fixed_size(data->dtype, "Trilu"));
    const Shape& s = data->shape;
    if (s.rank() < 2)
      return invalid_argument("Trilu: input must have rank >= 2, got " + s.to_string());
    int64_t k = 0;
    if (const Tensor* kt = ctx.input(1)) {
      SOD2_ASSIGN_OR_RETURN(k, read_scalar_int(*kt, "Trilu", "k"));
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data->dtype, s));
    const int64_t rows = s[s.rank() - 2], cols = s[s.rank() - 1];
    if (s.numel() == 0) return Status::ok_status();
    k = std::clamp<int64_t>(k, -rows - 1, cols + 1);  // beyond this every row is all or nothing
    const int64_t mats = s.numel() / (rows * cols);
    const size_t elem = dtype_size(data->dtype);
    const auto* src = static_cast<const uint8_t*>(data->data);
    auto* dst = static_cast<uint8_t*>(out->data);
    // Row i keeps columns j with j - i >= k (upper) or j - i <= k (lower): one kept run per row.
    ctx.pool().parallel_for(
        mats * rows, std::max<int64_t>(1, 4096 / cols), [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const int64_t i = r % rows;
            const int64_t split = std::clamp<int64_t>(upper_ ? i + k : i + k + 1, 0, cols);
            const int64_t keep_lo = upper_ ? split : 0, keep_hi = upper_ ? cols : split;
            const size_t row = static_cast<size_t>(r * cols) * elem;
            std::memset(dst + row, 0, static_cast<size_t>(cols) * elem);
            if (keep_hi > keep_lo) {
              std::memcpy(dst + row + static_cast<size_t>(keep_lo) * elem,
                          src + row + static_cast<size_t>(keep_lo) * elem,
                          static_cast<size_t>(keep_hi - keep_lo) * elem);
            }
          }
        });
    return Status::ok_status();
  }

 private:
  bool upper_;
};

class EyeLikeKernel final : public Kernel {
 public:
  EyeLikeKernel(DType dtype, int64_t k) : dtype_(dtype), k_(k) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("EyeLike: missing input");
    const Shape& s = data->shape;
    if (s.rank() != 2) return invalid_argument("EyeLike: input must be 2-D, got " + s.to_string());
    const DType dtype = dtype_ == DType::kUndefined ? data->dtype : dtype_;
    alignas(8) uint8_t one[8] = {};
    SOD2_RETURN_IF_ERROR(store_scalar(dtype, 1.0, one));
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, dtype, s));
    const size_t elem = dtype_size(dtype);
    auto* dst = static_cast<uint8_t*>(out->data);
    if (s.numel() == 0) return Status::ok_status();
    std::memset(dst, 0, out->bytes());
    for (int64_t i = 0; i < s[0]; ++i) {
      const int64_t j = i + k_;
      if (j >= 0 && j < s[1])
        std::memcpy(dst + static_cast<size_t>(i * s[1] + j) * elem, one, elem);
    }
    return Status::ok_status();
  }

 private:
  DType dtype_;
  int64_t k_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_trilu(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t upper, node.attrs.get_int("upper", 1));
  return make_kernel<TriluKernel>(upper != 0);
}

Expected<std::unique_ptr<Kernel>> make_eye_like(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t dtype, node.attrs.get_int("dtype", 0));
  SOD2_ASSIGN_OR_RETURN(int64_t k, node.attrs.get_int("k", 0));
  if (dtype < 0 || dtype > 255 || !is_known_dtype(static_cast<uint8_t>(dtype)) ||
      (dtype != 0 && dtype_size(static_cast<DType>(dtype)) == 0)) {
    return unsupported("EyeLike: dtype " + std::to_string(dtype));
  }
  return make_kernel<EyeLikeKernel>(static_cast<DType>(dtype), k);
}

}  // namespace sod2::rt
