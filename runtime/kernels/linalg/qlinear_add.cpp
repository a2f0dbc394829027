// sod2:QAdd: a quantized residual join as one pass, what kernel_fusion.h makes of
// DequantizeLinear(a), DequantizeLinear(b) → Add → (Relu or Clip) → QuantizeLinear:
//
//   y = saturate(round_half_even(clip((a - a_zp) * a_scale + (b - b_zp) * b_scale) / y_scale)
//                + y_zp)
//
// in the same float operations, in the same order, as those nodes one by one (this file is built
// without FMA contraction), so the fused and unfused runs give the same bits. Inputs: a, a_scale,
// a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point (per tensor); a and b of one
// shape. Attributes clip_min/clip_max (infinite when absent).
#include <limits>
#include <memory>
#include <string>

#include "runtime/kernels/linalg/quantize.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt::quant {
namespace {

struct AddParams {
  float as, bs, ys, lo, hi, zpf, qlo, qhi;
  int32_t az, bz;
};

template <class A, class B, class Q>
SOD2_SIMD_INLINE void add_body(const A* __restrict a, const B* __restrict b, int64_t n,
                               const AddParams& p, Q* __restrict y) {
  const float as = p.as, bs = p.bs, ys = p.ys, lo = p.lo, hi = p.hi, zpf = p.zpf, qlo = p.qlo,
              qhi = p.qhi;
  const int32_t az = p.az, bz = p.bz;
  for (int64_t i = 0; i < n; ++i) {
    const float da = static_cast<float>(static_cast<int32_t>(a[i]) - az) * as;
    const float db = static_cast<float>(static_cast<int32_t>(b[i]) - bz) * bs;
    float v = da + db;
    v = std::min(std::max(v, lo), hi);
    float r = round_half_even(v / ys) + zpf;
    r = std::min(std::max(r, qlo), qhi);
    y[i] = static_cast<Q>(static_cast<int32_t>(r));
  }
}

#if SOD2_SIMD_X86
template <class A, class B, class Q>
SOD2_TARGET_AVX2 void add_avx2(const A* a, const B* b, int64_t n, const AddParams& p, Q* y) {
  add_body(a, b, n, p, y);
}
template <class A, class B, class Q>
SOD2_TARGET_AVX512 void add_avx512(const A* a, const B* b, int64_t n, const AddParams& p, Q* y) {
  add_body(a, b, n, p, y);
}
#endif

template <class A, class B, class Q>
void add_run(const A* a, const B* b, int64_t n, const AddParams& p, Q* y) {
#if SOD2_SIMD_X86
  switch (simd::simd_level()) {
    case simd::Level::kAvx512: return add_avx512(a, b, n, p, y);
    case simd::Level::kAvx2: return add_avx2(a, b, n, p, y);
    default: break;
  }
#endif
  add_body(a, b, n, p, y);
}

class QAddKernel final : public Kernel {
 public:
  QAddKernel(float lo, float hi) : lo_(lo), hi_(hi) {}

  Status run(KernelContext& ctx) override {
    constexpr const char* kOp = "QAdd";
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(3);
    SOD2_RETURN_IF_ERROR(require_8bit(kOp, "a", a));
    SOD2_RETURN_IF_ERROR(require_8bit(kOp, "b", b));
    if (a->shape != b->shape) {
      return invalid_argument(std::string(kOp) + ": a " + a->shape.to_string() + " and b " +
                              b->shape.to_string() + " differ in shape");
    }
    if (!ctx.input(1) || !ctx.input(4) || !ctx.input(6))
      return invalid_argument("QAdd: a_scale, b_scale and y_scale are required");
    QuantParam as, az, bs, bz, ys, yz;
    SOD2_RETURN_IF_ERROR(
        read_quant_param(kOp, "a_scale", ctx.input(1), true, DType::kFloat, 1, false, &as));
    SOD2_RETURN_IF_ERROR(
        read_quant_param(kOp, "b_scale", ctx.input(4), true, DType::kFloat, 1, false, &bs));
    SOD2_RETURN_IF_ERROR(
        read_quant_param(kOp, "y_scale", ctx.input(6), true, DType::kFloat, 1, false, &ys));
    if (ctx.input(2))
      SOD2_RETURN_IF_ERROR(
          read_quant_param(kOp, "a_zero_point", ctx.input(2), false, a->dtype, 1, false, &az));
    if (ctx.input(5))
      SOD2_RETURN_IF_ERROR(
          read_quant_param(kOp, "b_zero_point", ctx.input(5), false, b->dtype, 1, false, &bz));
    const Tensor* yzt = ctx.input(7);
    const DType out = yzt ? yzt->dtype : DType::kUint8;
    if (!is_8bit(out)) {
      return unsupported(std::string(kOp) + ": y_zero_point of type " + dtype_name(out) +
                         " is not supported (uint8 or int8)");
    }
    if (yzt)
      SOD2_RETURN_IF_ERROR(read_quant_param(kOp, "y_zero_point", yzt, false, out, 1, false, &yz));
    // DequantizeLinear multiplies by any scale; QuantizeLinear divides by y_scale, which must be
    // usable.
    SOD2_RETURN_IF_ERROR(check_scale(kOp, "y_scale", ys.scale(0), 0));
    AddParams p;
    p.as = as.scale(0);
    p.bs = bs.scale(0);
    p.ys = ys.scale(0);
    p.az = az.zero_point(0);
    p.bz = bz.zero_point(0);
    p.lo = lo_;
    p.hi = hi_;
    p.zpf = static_cast<float>(yz.zero_point(0));
    p.qlo = out == DType::kUint8 ? kQMin<uint8_t> : kQMin<int8_t>;
    p.qhi = out == DType::kUint8 ? kQMax<uint8_t> : kQMax<int8_t>;
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, out, a->shape));
    const int64_t n = y->numel();
    if (n == 0) return Status::ok_status();
    ctx.pool().parallel_for(n, kQuantGrain,
                            [&](int64_t lo, int64_t hi) { dispatch(*a, *b, lo, hi, p, y); });
    return Status::ok_status();
  }

 private:
  template <class A, class B>
  static void typed(const Tensor& a, const Tensor& b, int64_t lo, int64_t hi, const AddParams& p,
                    Tensor* y) {
    if (y->dtype == DType::kUint8)
      add_run(a.as<const A>() + lo, b.as<const B>() + lo, hi - lo, p, y->as<uint8_t>() + lo);
    else
      add_run(a.as<const A>() + lo, b.as<const B>() + lo, hi - lo, p, y->as<int8_t>() + lo);
  }
  static void dispatch(const Tensor& a, const Tensor& b, int64_t lo, int64_t hi, const AddParams& p,
                       Tensor* y) {
    const bool au = a.dtype == DType::kUint8, bu = b.dtype == DType::kUint8;
    if (au && bu) return typed<uint8_t, uint8_t>(a, b, lo, hi, p, y);
    if (au) return typed<uint8_t, int8_t>(a, b, lo, hi, p, y);
    if (bu) return typed<int8_t, uint8_t>(a, b, lo, hi, p, y);
    typed<int8_t, int8_t>(a, b, lo, hi, p, y);
  }

  float lo_, hi_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_qadd(const NodeInfo& node) {
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  SOD2_ASSIGN_OR_RETURN(lo, node.attrs.get_float("clip_min", lo));
  SOD2_ASSIGN_OR_RETURN(hi, node.attrs.get_float("clip_max", hi));
  if (std::isnan(lo) || std::isnan(hi) || lo > hi)
    return invalid_model("QAdd: clip_min " + std::to_string(lo) + " and clip_max " +
                         std::to_string(hi) + " are not a range");
  return std::unique_ptr<Kernel>(std::make_unique<QAddKernel>(lo, hi));
}

}  // namespace sod2::rt::quant
