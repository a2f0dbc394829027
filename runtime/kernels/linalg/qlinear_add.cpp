// sod2:QAdd: a quantized residual join as one pass, what kernel_fusion.h makes of
// DequantizeLinear(a), DequantizeLinear(b) → Add → (Relu or Clip) → QuantizeLinear, in
// qdq_epilogue.h's QuantizedAdd arithmetic: the same float operations, in the same order, as those
// nodes one by one (this file is built without FMA contraction), so the fused and unfused runs
// give the same bits. Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
// y_zero_point (per tensor; without y_scale, the sum itself as float: a join no QuantizeLinear
// follows); a and b of one shape. Attributes clip_min/clip_max (infinite when absent).
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "runtime/kernels/linalg/quantize.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt::quant {
namespace {

// No restrict on y: QFusedConv's join writes over a. A float Q is the join without a
// QuantizeLinear: the clamped sum itself.
template <class A, class B, class Q>
SOD2_SIMD_INLINE void add_body(const A* a, const B* __restrict b, int64_t n, const QuantizedAdd& p,
                               Q* y) {
  const float as = p.a_scale, bs = p.b_scale, ys = p.y_scale, lo = p.lo, hi = p.hi,
              zpf = static_cast<float>(p.y_zp);
  const int32_t az = p.a_zp, bz = p.b_zp;
  for (int64_t i = 0; i < n; ++i) {
    const float da = static_cast<float>(static_cast<int32_t>(a[i]) - az) * as;
    const float db = static_cast<float>(static_cast<int32_t>(b[i]) - bz) * bs;
    float v = da + db;
    v = std::min(std::max(v, lo), hi);
    if constexpr (std::is_same_v<Q, float>) {
      y[i] = v;
      continue;
    }
    const float qlo = kQMin<Q>, qhi = kQMax<Q>;
    const float u = v / ys;
    float r = round_half_even(u) + zpf;
    r = u != u ? zpf : r;
    r = std::min(std::max(r, qlo), qhi);
    y[i] = static_cast<Q>(static_cast<int32_t>(r));
  }
}

#if SOD2_SIMD_X86
template <class A, class B, class Q>
SOD2_TARGET_AVX2 void add_avx2(const A* a, const B* b, int64_t n, const QuantizedAdd& p, Q* y) {
  add_body(a, b, n, p, y);
}
template <class A, class B, class Q>
SOD2_TARGET_AVX512 void add_avx512(const A* a, const B* b, int64_t n, const QuantizedAdd& p, Q* y) {
  add_body(a, b, n, p, y);
}
#endif

template <class A, class B, class Q>
void add_run(const A* a, const B* b, int64_t n, const QuantizedAdd& p, Q* y) {
#if SOD2_SIMD_X86
  switch (simd::simd_level()) {
    case simd::Level::kAvx512: return add_avx512(a, b, n, p, y);
    case simd::Level::kAvx2: return add_avx2(a, b, n, p, y);
    default: break;
  }
#endif
  add_body(a, b, n, p, y);
}

template <class A, class B>
void add_typed(const QuantizedAdd& p, const void* a, const void* b, int64_t lo, int64_t hi,
               void* y) {
  const A* at = static_cast<const A*>(a) + lo;
  const B* bt = static_cast<const B*>(b) + lo;
  if (p.y_type == DType::kUint8)
    add_run(at, bt, hi - lo, p, static_cast<uint8_t*>(y) + lo);
  else if (p.y_type == DType::kInt8)
    add_run(at, bt, hi - lo, p, static_cast<int8_t*>(y) + lo);
  else
    add_run(at, bt, hi - lo, p, static_cast<float*>(y) + lo);
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
    SOD2_ASSIGN_OR_RETURN(QuantizedAdd p,
                          read_quantized_add(kOp, ctx, a->dtype, 1, b->dtype, 4, 6));
    p.lo = lo_;
    p.hi = hi_;
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, p.y_type, a->shape));
    const int64_t n = y->numel();
    if (n == 0) return Status::ok_status();
    ctx.pool().parallel_for(n, kQuantGrain, [&](int64_t lo, int64_t hi) {
      quantized_add(p, a->data, b->data, lo, hi, y->data);
    });
    return Status::ok_status();
  }

 private:
  float lo_, hi_;
};

}  // namespace

Expected<QuantizedAdd> read_quantized_add(const char* op, KernelContext& ctx, DType a_type,
                                          int a_params, DType b_type, int b_params, int y_params) {
  const Tensor* a_scale = ctx.input(a_params);
  const Tensor* b_scale = ctx.input(b_params);
  const Tensor* y_scale = ctx.input(y_params);
  const Tensor* yzt = ctx.input(y_params + 1);
  if (!a_scale || !b_scale)
    return invalid_argument(std::string(op) + ": the join's a_scale and b_scale are required");
  if (!y_scale && yzt)
    return invalid_argument(std::string(op) + ": the join's y_zero_point comes without y_scale");
  QuantParam as, az, bs, bz, ys, yz;
  SOD2_RETURN_IF_ERROR(
      read_quant_param(op, "a_scale", a_scale, true, DType::kFloat, 1, false, &as));
  SOD2_RETURN_IF_ERROR(
      read_quant_param(op, "b_scale", b_scale, true, DType::kFloat, 1, false, &bs));
  if (const Tensor* t = ctx.input(a_params + 1))
    SOD2_RETURN_IF_ERROR(read_quant_param(op, "a_zero_point", t, false, a_type, 1, false, &az));
  if (const Tensor* t = ctx.input(b_params + 1))
    SOD2_RETURN_IF_ERROR(read_quant_param(op, "b_zero_point", t, false, b_type, 1, false, &bz));
  QuantizedAdd p;
  p.a_type = a_type;
  p.b_type = b_type;
  p.a_scale = as.scale(0);
  p.b_scale = bs.scale(0);
  p.a_zp = az.zero_point(0);
  p.b_zp = bz.zero_point(0);
  // Without y_scale the join ends in float (no QuantizeLinear after it).
  p.y_type = DType::kFloat;
  if (!y_scale) return p;
  SOD2_RETURN_IF_ERROR(
      read_quant_param(op, "y_scale", y_scale, true, DType::kFloat, 1, false, &ys));
  const DType out = yzt ? yzt->dtype : DType::kUint8;
  if (!is_8bit(out)) {
    return unsupported(std::string(op) + ": y_zero_point of type " + dtype_name(out) +
                       " is not supported (uint8 or int8)");
  }
  if (yzt)
    SOD2_RETURN_IF_ERROR(read_quant_param(op, "y_zero_point", yzt, false, out, 1, false, &yz));
  // DequantizeLinear multiplies by any scale; QuantizeLinear divides by y_scale, which must be
  // usable.
  SOD2_RETURN_IF_ERROR(check_scale(op, "y_scale", ys.scale(0), 0));
  p.y_type = out;
  p.y_scale = ys.scale(0);
  p.y_zp = yz.zero_point(0);
  return p;
}

void quantized_add(const QuantizedAdd& p, const void* a, const void* b, int64_t begin, int64_t end,
                   void* y) {
  const bool au = p.a_type == DType::kUint8, bu = p.b_type == DType::kUint8;
  if (au && bu) return add_typed<uint8_t, uint8_t>(p, a, b, begin, end, y);
  if (au) return add_typed<uint8_t, int8_t>(p, a, b, begin, end, y);
  if (bu) return add_typed<int8_t, uint8_t>(p, a, b, begin, end, y);
  add_typed<int8_t, int8_t>(p, a, b, begin, end, y);
}

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
