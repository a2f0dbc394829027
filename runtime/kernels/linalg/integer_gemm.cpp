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
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/epilogue.h"
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

// sod2:QFusedMatMul, a QDQ MatMul/Gemm group (core/package/kernel_fusion.h): QLinearMatMul's
// inputs (a per tensor; b a 2-D int8 matrix, zero point 0, scales per tensor or per column;
// [N, K] with trans_b) plus an int32 bias of scale a_scale * b_scale (slot 8), then the
// QFusedConv epilogue: a clamp [clip_min, clip_max] or a float activation, requantized with
// y_scale and y_zero_point, or written as float when they are absent.
class QFusedMatMulKernel final : public Kernel {
 public:
  QFusedMatMulKernel(bool trans_b, float lo, float hi, EpilogueRun activation, bool float_out,
                     bool constant_b)
      : trans_b_(trans_b),
        lo_(lo),
        hi_(hi),
        activation_(activation),
        float_out_(float_out),
        constant_b_(constant_b) {}

  Status run(KernelContext& ctx) override {
    constexpr const char* kOp = "QFusedMatMul";
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(3);
    SOD2_RETURN_IF_ERROR(require_8bit(kOp, "A", a));
    if (!b || b->dtype != DType::kInt8 || b->shape.rank() != 2)
      return invalid_argument("QFusedMatMul: B must be a 2-D int8 matrix");
    const int64_t k = b->shape[trans_b_ ? 1 : 0], n = b->shape[trans_b_ ? 0 : 1];
    const int r = a->shape.rank();
    if (r < 1 || a->shape[r - 1] != k) {
      return invalid_argument("QFusedMatMul: A " + a->shape.to_string() + " and B " +
                              b->shape.to_string() + (trans_b_ ? " (transposed)" : "") +
                              " do not multiply");
    }
    QuantParam a_scale, a_zp, b_scale, b_zp, y_scale, y_zp;
    if (!ctx.input(1) || !ctx.input(4) || (!float_out_ && !ctx.input(6)))
      return invalid_argument("QFusedMatMul: a_scale, b_scale and y_scale are required");
    SOD2_RETURN_IF_ERROR(
        read_quant_param(kOp, "a_scale", ctx.input(1), true, DType::kFloat, 1, false, &a_scale));
    if (ctx.input(2))
      SOD2_RETURN_IF_ERROR(
          read_quant_param(kOp, "a_zero_point", ctx.input(2), false, a->dtype, 1, false, &a_zp));
    SOD2_RETURN_IF_ERROR(
        read_quant_param(kOp, "b_scale", ctx.input(4), true, DType::kFloat, n, true, &b_scale));
    if (ctx.input(5)) {
      SOD2_RETURN_IF_ERROR(
          read_quant_param(kOp, "b_zero_point", ctx.input(5), false, b->dtype, n, true, &b_zp));
      for (int64_t j = 0; j < b_zp.count; ++j)
        if (b_zp.zero_point(j) != 0) return unsupported("QFusedMatMul: B's zero point must be 0");
    }
    SOD2_RETURN_IF_ERROR(check_scales(kOp, "a_scale", a_scale));
    SOD2_RETURN_IF_ERROR(check_scales(kOp, "b_scale", b_scale));
    DType out_type = DType::kFloat;
    if (!float_out_) {
      SOD2_RETURN_IF_ERROR(read_output_quantization(kOp, ctx.input(6), ctx.input(7), a->dtype,
                                                    &y_scale, &y_zp, &out_type));
    }
    const Tensor* bias = ctx.input(8);
    if (bias && (bias->dtype != DType::kInt32 || bias->numel() != n)) {
      return invalid_argument("QFusedMatMul: the bias must be int32 with " + std::to_string(n) +
                              " values, got " + dtype_name(bias->dtype) + " " +
                              bias->shape.to_string());
    }
    Shape out_shape = a->shape;
    out_shape[r - 1] = n;
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, out_type, out_shape));
    if (y->numel() == 0) return Status::ok_status();
    // From the output: with K = 0, A is empty but every output row still gets its bias.
    const int64_t rows = y->numel() / n;
    const int8_t* bm = natural_b(*b, k, n);

    // Per column: the dequantizing scale a_scale * b_scale and, requantizing, its multiplier.
    const size_t col_bytes = (static_cast<size_t>(n) * 4 + 63) & ~size_t{63};
    const int64_t threads =
        parallel_parts(ctx.pool(), static_cast<double>(rows) * n * std::max<int64_t>(k, 1) / 4);
    const int64_t block_rows = std::max<int64_t>(1, (rows + threads - 1) / threads);
    const int64_t jobs = (rows + block_rows - 1) / block_rows;
    const int64_t slots = std::min(threads, jobs);
    const size_t acc_bytes = (static_cast<size_t>(block_rows * n) * 4 + 63) & ~size_t{63};
    SOD2_ASSIGN_OR_RETURN(void* mem,
                          ctx.scratch(2 * col_bytes + acc_bytes * static_cast<size_t>(slots) + 64));
    auto* deq = static_cast<float*>(mem);
    auto* mult = reinterpret_cast<float*>(static_cast<char*>(mem) + col_bytes);
    char* acc_base = static_cast<char*>(mem) + 2 * col_bytes;
    const float as = a_scale.scale(0), ys = y_scale.scale(0);
    for (int64_t j = 0; j < n; ++j) {
      deq[j] = as * b_scale.scale(j);
      mult[j] = requantize_multiplier(as, b_scale.scale(j), ys);
    }
    const int32_t a_zero = a_zp.zero_point(0), yzp = y_zp.zero_point(0);
    int32_t qlo = 0, qhi = 0;
    if (!float_out_) {
      // Clamping before quantizing is clamping the quantized value: quantization is monotone.
      const bool u8 = out_type == DType::kUint8;
      auto q = [&](float v) {
        return u8 ? int32_t{quantize_value<uint8_t>(v, ys, yzp)}
                  : int32_t{quantize_value<int8_t>(v, ys, yzp)};
      };
      qlo = q(lo_);
      qhi = q(hi_);
    }
    const int32_t* bv = bias ? bias->as<const int32_t>() : nullptr;
    for_slots(ctx.pool(), jobs, slots, [&](int64_t job, int64_t slot) {
      const int64_t r0 = job * block_rows, r1 = std::min(rows, r0 + block_rows);
      auto* c = reinterpret_cast<int32_t*>(acc_base + acc_bytes * static_cast<size_t>(slot));
      if (a->dtype == DType::kUint8)
        igemm_rows(r1 - r0, n, k, a->as<const uint8_t>() + r0 * k, k, a_zero, bm, n, c, n);
      else
        igemm_rows(r1 - r0, n, k, a->as<const int8_t>() + r0 * k, k, a_zero, bm, n, c, n);
      for (int64_t i = r0; i < r1; ++i) {
        auto* row = reinterpret_cast<uint32_t*>(c + (i - r0) * n);
        // Sums and bias wrap modulo 2^32, as ONNX's int32 arithmetic does.
        if (bv)
          for (int64_t j = 0; j < n; ++j) row[j] += static_cast<uint32_t>(bv[j]);
        epilogue(reinterpret_cast<const int32_t*>(row), n, deq, mult, ys, yzp, qlo, qhi, out_type,
                 y, i * n);
      }
    });
    return Status::ok_status();
  }

 private:
  // B as [K, N] int8: itself, or transposed once (kept while B is a constant) or per run.
  const int8_t* natural_b(const Tensor& b, int64_t k, int64_t n) {
    if (!trans_b_) return b.as<const int8_t>();
    if (!constant_b_ || transposed_source_ != b.data ||
        transposed_.size() != static_cast<size_t>(k * n)) {
      transposed_.resize(static_cast<size_t>(k * n));
      const int8_t* src = b.as<const int8_t>();
      for (int64_t j = 0; j < n; ++j)
        for (int64_t kk = 0; kk < k; ++kk)
          transposed_[static_cast<size_t>(kk * n + j)] = src[j * k + kk];
      transposed_source_ = b.data;
    }
    return transposed_.data();
  }

  // One output row of n sums (bias added).
  void epilogue(const int32_t* sums, int64_t n, const float* deq, const float* mult, float ys,
                int32_t yzp, int32_t qlo, int32_t qhi, DType out_type, Tensor* y,
                int64_t y_off) const {
    if (!float_out_ && activation_.activation == Activation::kNone) {
      for (int64_t j = 0; j < n; ++j) {
        const float v =
            round_half_even(static_cast<float>(sums[j]) * mult[j]) + static_cast<float>(yzp);
        const auto q = static_cast<int32_t>(
            std::min(std::max(v, static_cast<float>(qlo)), static_cast<float>(qhi)));
        if (out_type == DType::kUint8)
          y->as<uint8_t>()[y_off + j] = static_cast<uint8_t>(q);
        else
          y->as<int8_t>()[y_off + j] = static_cast<int8_t>(q);
      }
      return;
    }
    constexpr int64_t kChunk = 256;
    float v[kChunk];
    for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
      const int64_t len = std::min(kChunk, n - j0);
      for (int64_t j = 0; j < len; ++j) v[j] = static_cast<float>(sums[j0 + j]) * deq[j0 + j];
      if (activation_.activation != Activation::kNone)
        activation_.apply(v, nullptr, 1, len, len, 0, true);
      for (int64_t j = 0; j < len; ++j) v[j] = std::min(std::max(v[j], lo_), hi_);
      if (out_type == DType::kFloat)
        std::copy(v, v + len, y->as<float>() + y_off + j0);
      else if (out_type == DType::kUint8)
        quantize_row(v, len, ys, yzp, y->as<uint8_t>() + y_off + j0);
      else
        quantize_row(v, len, ys, yzp, y->as<int8_t>() + y_off + j0);
    }
  }

  bool trans_b_;
  float lo_, hi_;
  EpilogueRun activation_;
  bool float_out_, constant_b_;
  std::vector<int8_t> transposed_;  // natural_b's copy of a constant transposed B
  const void* transposed_source_ = nullptr;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_qfused_matmul(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t trans_b, node.attrs.get_int("trans_b", 0));
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  SOD2_ASSIGN_OR_RETURN(lo, node.attrs.get_float("clip_min", lo));
  SOD2_ASSIGN_OR_RETURN(hi, node.attrs.get_float("clip_max", hi));
  if (std::isnan(lo) || std::isnan(hi) || lo > hi)
    return invalid_model("QFusedMatMul: clip_min " + std::to_string(lo) + " and clip_max " +
                         std::to_string(hi) + " are not a range");
  EpilogueRun act;
  SOD2_ASSIGN_OR_RETURN(std::string name, node.attrs.get_string("activation", ""));
  if (!name.empty() && !activation_from_name(name, &act.activation))
    return invalid_model("QFusedMatMul: unknown activation '" + name + "'");
  SOD2_ASSIGN_OR_RETURN(act.alpha, node.attrs.get_float("alpha", 0.f));
  SOD2_ASSIGN_OR_RETURN(act.beta, node.attrs.get_float("beta", 0.f));
  const bool float_out = node.input_present.size() < 7 || !node.input_present[6];
  const bool constant_b = node.input_constant.size() > 3 && node.input_constant[3];
  return std::unique_ptr<Kernel>(
      std::make_unique<QFusedMatMulKernel>(trans_b != 0, lo, hi, act, float_out, constant_b));
}

Expected<std::unique_ptr<Kernel>> make_matmul_integer(const NodeInfo& node) {
  (void)node;
  return std::unique_ptr<Kernel>(std::make_unique<IntMatMulKernel>(false));
}
Expected<std::unique_ptr<Kernel>> make_qlinear_matmul(const NodeInfo& node) {
  (void)node;
  return std::unique_ptr<Kernel>(std::make_unique<IntMatMulKernel>(true));
}

}  // namespace sod2::rt::quant
