// Integer matrix products (opset 10): MatMulInteger (int32 outputs) and its requantizing form
// QLinearMatMul (uint8/int8 outputs, quantize.h's requantize()); the convolutions are in
// qlinear_conv.cpp. Reference implementations: operands are centred on their zero points into
// int16 (values of [-255, 255]), products summed modulo 2^32 (int32 wrap-around, without
// undefined behaviour), then written or requantized. A fast int8 path can replace the loops
// while keeping these semantics.
//
// Zero points and scales: A's per tensor or per row ([M], or [..., M, 1] matching A's batch
// dims), B's per tensor or per column ([N], or [..., 1, N]).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/int8_gemm.h"
#include "runtime/kernels/linalg/matmul_plan.h"
#include "runtime/kernels/linalg/quantize.h"

namespace sod2::rt::quant {
namespace {

// ---- MatMul -----------------------------------------------------------------------------------

// A per-row (A) or per-column (B) parameter: one value, one per row/column shared by all
// matrices, or one per row/column of each of the operand's matrices.
struct LineParam {
  QuantParam q;
  enum Kind : uint8_t { kOne, kShared, kPerMatrix } kind = kOne;
  int64_t len = 1;  // rows (A) or columns (B) per matrix

  int64_t index(int64_t mat, int64_t i) const {
    return kind == kOne ? 0 : kind == kShared ? i : mat * len + i;
  }
  float scale(int64_t mat, int64_t i) const { return q.scale(index(mat, i)); }
  int32_t zero_point(int64_t mat, int64_t i) const { return q.zero_point(index(mat, i)); }
};

Status line_param(const char* op, const char* what, const Tensor* t, const Shape& operand,
                  bool rows, DType want, LineParam* out) {
  if (!t) return Status::ok_status();  // absent: zero point 0 / scale 1
  if (t->dtype != want) {
    return invalid_argument(std::string(op) + ": " + what + " is " + dtype_name(t->dtype) +
                            ", expected " + dtype_name(want));
  }
  out->q.t = t;
  if (t->numel() == 1) return Status::ok_status();
  const int r = operand.rank();
  const int64_t len = r < 2 ? 1 : rows ? operand[r - 2] : operand[r - 1];
  out->len = len;
  out->q.count = t->numel();
  if (r >= 2 && t->shape.rank() == 1 && t->shape[0] == len) {
    out->kind = LineParam::kShared;
    return Status::ok_status();
  }
  bool full = r >= 2 && t->shape.rank() == r;
  for (int i = 0; full && i < r - 2; ++i) full = t->shape[i] == operand[i];
  if (full) {
    full = rows ? t->shape[r - 2] == len && t->shape[r - 1] == 1
                : t->shape[r - 2] == 1 && t->shape[r - 1] == len;
  }
  if (full) {
    out->kind = LineParam::kPerMatrix;
    return Status::ok_status();
  }
  return invalid_argument(std::string(op) + ": " + what + " must hold one value, or one per " +
                          (rows ? "row" : "column") + " of " + operand.to_string() + ", got " +
                          t->shape.to_string());
}

// Scalar-only parameter (y_scale, y_zero_point).
Status one_value(const char* op, const char* what, const Tensor* t, DType want, QuantParam* out) {
  if (!t) return Status::ok_status();
  return read_quant_param(op, what, t, want == DType::kFloat, want, 1, false, out);
}

// Centres an operand on its zero point into int16: out[e] = x[e] - zp(matrix, row or column).
void center_operand(const Tensor& x, const LineParam& zp, int64_t rows, int64_t cols, bool by_row,
                    int16_t* out) {
  const int64_t per_mat = rows * cols;
  const int64_t n = x.numel();
  for (int64_t e = 0; e < n; ++e) {
    const int64_t mat = per_mat ? e / per_mat : 0;
    const int64_t within = per_mat ? e % per_mat : 0;
    const int64_t line = by_row ? within / cols : within % cols;
    out[e] = static_cast<int16_t>(load8(x, e) - zp.zero_point(mat, line));
  }
}

// MatMulInteger (requant = false) and QLinearMatMul (requant = true).
class IntMatMulKernel final : public Kernel {
 public:
  explicit IntMatMulKernel(bool requant) : requant_(requant) {}

  Status run(KernelContext& ctx) override {
    const char* op = requant_ ? "QLinearMatMul" : "MatMulInteger";
    // Input slots: MatMulInteger A, B, a_zp, b_zp; QLinearMatMul a, a_s, a_zp, b, b_s, b_zp,
    // y_s, y_zp.
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(requant_ ? 3 : 1);
    SOD2_RETURN_IF_ERROR(require_8bit(op, "A", a));
    SOD2_RETURN_IF_ERROR(require_8bit(op, "B", b));
    SOD2_ASSIGN_OR_RETURN(MatMulPlan p, plan_matmul(op, a->shape, b->shape));
    LineParam a_zp, b_zp, a_scale, b_scale;
    QuantParam y_scale, y_zp;
    SOD2_RETURN_IF_ERROR(
        line_param(op, "a_zero_point", ctx.input(2), a->shape, true, a->dtype, &a_zp));
    SOD2_RETURN_IF_ERROR(line_param(op, "b_zero_point", ctx.input(requant_ ? 5 : 3), b->shape,
                                    false, b->dtype, &b_zp));
    DType out_type = DType::kInt32;
    if (requant_) {
      if (!ctx.input(1) || !ctx.input(4) || !ctx.input(6))
        return invalid_argument("QLinearMatMul: a_scale, b_scale and y_scale are required");
      SOD2_RETURN_IF_ERROR(
          line_param(op, "a_scale", ctx.input(1), a->shape, true, DType::kFloat, &a_scale));
      SOD2_RETURN_IF_ERROR(
          line_param(op, "b_scale", ctx.input(4), b->shape, false, DType::kFloat, &b_scale));
      const Tensor* yz = ctx.input(7);
      out_type = yz ? yz->dtype : a->dtype;
      if (!is_8bit(out_type)) {
        return unsupported(std::string(op) + ": y_zero_point of type " + dtype_name(out_type) +
                           " is not supported (uint8 or int8)");
      }
      SOD2_RETURN_IF_ERROR(one_value(op, "y_scale", ctx.input(6), DType::kFloat, &y_scale));
      SOD2_RETURN_IF_ERROR(one_value(op, "y_zero_point", yz, out_type, &y_zp));
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, out_type, p.out));
    if (y->numel() == 0) return Status::ok_status();
    if (fast_path_fits(*b, a_zp, b_zp, a_scale, b_scale))
      return fast(ctx, p, *a, *b, a_zp.zero_point(0, 0), b_scale, a_scale.scale(0, 0),
                  y_scale.scale(0), y_zp.zero_point(0), y);
    const int64_t rows = p.batches * p.m;
    const int64_t slots = slot_count(ctx.pool(), rows);
    const size_t a_bytes = static_cast<size_t>(a->numel()) * 2,
                 b_bytes = static_cast<size_t>(b->numel()) * 2;
    const size_t acc_bytes = static_cast<size_t>(slots * p.n) * 4;
    SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(a_bytes + b_bytes + acc_bytes + 128));
    auto* a16 = static_cast<int16_t*>(mem);
    auto* b16 =
        reinterpret_cast<int16_t*>(static_cast<char*>(mem) + ((a_bytes + 63) & ~size_t{63}));
    auto* accs =
        reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(b16) + ((b_bytes + 63) & ~size_t{63}));
    // A's rows hold K values, B's rows N (1-D operands are one matrix row / column).
    center_operand(*a, a_zp, p.m, p.k, true, a16);
    center_operand(*b, b_zp, p.k, p.n, false, b16);
    for_slots(ctx.pool(), rows, slots, [&](int64_t r, int64_t slot) {
      int64_t a_mat = 0, b_mat = 0;
      p.matrices(r / p.m, &a_mat, &b_mat);
      const int64_t i = r % p.m;
      uint32_t* acc = accs + slot * p.n;
      dot_row(a16 + (a_mat * p.m + i) * p.k, b16 + b_mat * p.k * p.n, p.k, p.n, p.n, acc);
      if (!requant_) {
        int32_t* out = y->as<int32_t>() + r * p.n;
        for (int64_t j = 0; j < p.n; ++j) out[j] = static_cast<int32_t>(acc[j]);
        return;
      }
      const float as = a_scale.scale(a_mat, i), ys = y_scale.scale(0);
      const int32_t yz = y_zp.zero_point(0);
      if (out_type == DType::kUint8) {
        uint8_t* out = y->as<uint8_t>() + r * p.n;
        for (int64_t j = 0; j < p.n; ++j)
          out[j] = requantize<uint8_t>(static_cast<int32_t>(acc[j]),
                                       requantize_multiplier(as, b_scale.scale(b_mat, j), ys), yz);
      } else {
        int8_t* out = y->as<int8_t>() + r * p.n;
        for (int64_t j = 0; j < p.n; ++j)
          out[j] = requantize<int8_t>(static_cast<int32_t>(acc[j]),
                                      requantize_multiplier(as, b_scale.scale(b_mat, j), ys), yz);
      }
    });
    return Status::ok_status();
  }

 private:
  // int8 B with zero point 0, per-tensor A zero point and scale (what quantisers write): the
  // product runs on int8_gemm.h's igemm_rows.
  bool fast_path_fits(const Tensor& b, const LineParam& a_zp, const LineParam& b_zp,
                      const LineParam& a_scale, const LineParam& b_scale) const {
    if (b.dtype != DType::kInt8 || a_zp.kind != LineParam::kOne) return false;
    if (requant_ && (a_scale.kind != LineParam::kOne || b_scale.kind == LineParam::kPerMatrix))
      return false;
    if (b_zp.q.t)
      for (int64_t i = 0; i < b_zp.q.count; ++i)
        if (b_zp.q.zero_point(i) != 0) return false;
    return true;
  }

  Status fast(KernelContext& ctx, const MatMulPlan& p, const Tensor& a, const Tensor& b,
              int32_t a_zero, const LineParam& b_scale, float a_scale, float y_scale,
              int32_t y_zero, Tensor* y) const {
    // Blocks of rows over the threads worth waking (an int8 multiply-add is about a quarter of
    // a float one).
    const int64_t threads = parallel_parts(
        ctx.pool(), static_cast<double>(p.batches) * p.m * p.n * std::max<int64_t>(p.k, 1) / 4);
    const int64_t blocks =
        std::max<int64_t>(1, std::min(p.m, (threads + p.batches - 1) / p.batches));
    const int64_t jobs = p.batches * blocks;
    const int64_t slots = std::min(threads, jobs);
    const int64_t block_rows = (p.m + blocks - 1) / blocks;
    // QLinearMatMul: per slot the block's int32 sums and the per-column multipliers.
    const size_t acc_bytes =
        requant_ ? (static_cast<size_t>(block_rows * p.n) * 4 + 63) & ~size_t{63} : 0;
    const size_t mult_bytes = requant_ ? (static_cast<size_t>(p.n) * 4 + 63) & ~size_t{63} : 0;
    SOD2_ASSIGN_OR_RETURN(void* mem,
                          ctx.scratch(acc_bytes * static_cast<size_t>(slots) + mult_bytes + 64));
    auto* mult =
        reinterpret_cast<float*>(static_cast<char*>(mem) + acc_bytes * static_cast<size_t>(slots));
    if (requant_) {
      for (int64_t j = 0; j < p.n; ++j)
        mult[j] = requantize_multiplier(a_scale, b_scale.scale(0, j), y_scale);
    }
    for_slots(ctx.pool(), jobs, slots, [&](int64_t job, int64_t slot) {
      const int64_t batch = job / blocks, blk = job % blocks;
      const int64_t r0 = blk * block_rows, r1 = std::min(p.m, r0 + block_rows);
      if (r0 >= r1) return;
      int64_t a_mat = 0, b_mat = 0;
      p.matrices(batch, &a_mat, &b_mat);
      const int64_t a_off = (a_mat * p.m + r0) * p.k;
      const int8_t* bm = b.as<const int8_t>() + b_mat * p.k * p.n;
      int32_t* c = requant_ ? reinterpret_cast<int32_t*>(static_cast<char*>(mem) +
                                                         acc_bytes * static_cast<size_t>(slot))
                            : y->as<int32_t>() + (batch * p.m + r0) * p.n;
      if (a.dtype == DType::kUint8)
        igemm_rows(r1 - r0, p.n, p.k, a.as<const uint8_t>() + a_off, p.k, a_zero, bm, p.n, c, p.n);
      else
        igemm_rows(r1 - r0, p.n, p.k, a.as<const int8_t>() + a_off, p.k, a_zero, bm, p.n, c, p.n);
      if (!requant_) return;
      const int64_t count = (r1 - r0) * p.n, y_off = (batch * p.m + r0) * p.n;
      for (int64_t e = 0; e < count; ++e) {
        const int64_t j = e % p.n;
        if (y->dtype == DType::kUint8)
          y->as<uint8_t>()[y_off + e] = requantize<uint8_t>(c[e], mult[j], y_zero);
        else
          y->as<int8_t>()[y_off + e] = requantize<int8_t>(c[e], mult[j], y_zero);
      }
    });
    return Status::ok_status();
  }

  bool requant_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_matmul_integer(const NodeInfo& node) {
  (void)node;
  return std::unique_ptr<Kernel>(std::make_unique<IntMatMulKernel>(false));
}
Expected<std::unique_ptr<Kernel>> make_qlinear_matmul(const NodeInfo& node) {
  (void)node;
  return std::unique_ptr<Kernel>(std::make_unique<IntMatMulKernel>(true));
}

}  // namespace sod2::rt::quant
