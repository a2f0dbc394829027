// Integer contractions (opset 10): MatMulInteger and ConvInteger (int32 outputs) and their
// requantizing forms QLinearMatMul and QLinearConv (uint8/int8 outputs, quantize.h's
// requantize()). Reference implementations: operands are centred on their zero points into
// int16 (values of [-255, 255]), products summed modulo 2^32 (int32 wrap-around, without
// undefined behaviour), then written or requantized. A fast int8 path can replace the loops
// while keeping these semantics.
//
// Zero points and scales: A's per tensor or per row ([M], or [..., M, 1] matching A's batch
// dims), B's per tensor or per column ([N], or [..., 1, N]); a convolution's weights' per tensor
// or per output channel ([M]), its input's and output's per tensor.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/matmul_plan.h"
#include "runtime/kernels/linalg/quantize.h"

namespace sod2::rt::quant {
namespace {

bool is_8bit(DType t) { return t == DType::kUint8 || t == DType::kInt8; }

Status require_8bit(const char* op, const char* what, const Tensor* t) {
  if (!t) return invalid_argument(std::string(op) + ": input " + what + " is missing");
  if (!is_8bit(t->dtype)) {
    return unsupported(std::string(op) + ": " + what + " of type " + dtype_name(t->dtype) +
                       " is not supported (uint8 or int8)");
  }
  return Status::ok_status();
}

// Value i of a uint8/int8 tensor.
inline int32_t load8(const Tensor& t, int64_t i) {
  return t.dtype == DType::kUint8 ? int32_t{t.as<const uint8_t>()[i]}
                                  : int32_t{t.as<const int8_t>()[i]};
}

// Parallel jobs over at most num_threads slots, each job given its slot (for per-slot scratch).
template <class F>
void for_slots(ThreadPool& pool, int64_t jobs, int64_t slots, F&& f) {
  pool.parallel_for(slots, 1, [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; ++s) {
      for (int64_t j = jobs * s / slots; j < jobs * (s + 1) / slots; ++j) f(j, s);
    }
  });
}

int64_t slot_count(ThreadPool& pool, int64_t jobs) {
  return std::max<int64_t>(1, std::min<int64_t>(pool.num_threads(), jobs));
}

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

// acc[j] = sum_k a[k] * b[k, j] modulo 2^32, for one row of A.
void dot_row(const int16_t* a, const int16_t* b, int64_t k, int64_t n, uint32_t* acc) {
  std::fill(acc, acc + n, 0u);
  for (int64_t kk = 0; kk < k; ++kk) {
    const int32_t av = a[kk];
    if (av == 0) continue;
    const int16_t* brow = b + kk * n;
    for (int64_t j = 0; j < n; ++j)
      acc[j] += static_cast<uint32_t>(av * static_cast<int32_t>(brow[j]));
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
      dot_row(a16 + (a_mat * p.m + i) * p.k, b16 + b_mat * p.k * p.n, p.k, p.n, acc);
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
  bool requant_;
};

// ---- Conv -------------------------------------------------------------------------------------

constexpr int64_t kConvTile = 256;  // output positions per im2col tile

// ConvInteger (requant = false) and QLinearConv (requant = true).
class IntConvKernel final : public Kernel {
 public:
  IntConvKernel(WindowAttrs attrs, int64_t group, bool requant)
      : attrs_(std::move(attrs)), group_(group), requant_(requant) {}

  Status run(KernelContext& ctx) override {
    const char* op = requant_ ? "QLinearConv" : "ConvInteger";
    // Input slots: ConvInteger x, w, x_zp, w_zp; QLinearConv x, x_s, x_zp, w, w_s, w_zp, y_s,
    // y_zp, B.
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(requant_ ? 3 : 1);
    SOD2_RETURN_IF_ERROR(require_8bit(op, "x", x));
    SOD2_RETURN_IF_ERROR(require_8bit(op, "w", w));
    const int r = x->shape.rank();
    if (r < 3 || r > 5 || w->shape.rank() != r) {
      return invalid_argument(std::string(op) + ": x " + x->shape.to_string() + " and w " +
                              w->shape.to_string() + " must have the same rank, 3 to 5");
    }
    const int64_t n = x->shape[0], c = x->shape[1], m = w->shape[0];
    // w's channels compared by division: w->shape[1] * group could overflow (an empty w may
    // have any dims).
    if (c % group_ != 0 || m % group_ != 0 || w->shape[1] != c / group_) {
      return invalid_argument(std::string(op) + ": x " + x->shape.to_string() + " and w " +
                              w->shape.to_string() + " do not fit group " + std::to_string(group_));
    }
    const std::span<const int64_t> kernel = w->shape.dims().subspan(2);
    if (!attrs_.kernel_shape.empty() &&
        !std::equal(kernel.begin(), kernel.end(), attrs_.kernel_shape.begin(),
                    attrs_.kernel_shape.end())) {
      return invalid_argument(std::string(op) + ": kernel_shape " +
                              dims_string(attrs_.kernel_shape) + " differs from w " +
                              w->shape.to_string());
    }
    SOD2_ASSIGN_OR_RETURN(Window3 g,
                          resolve_window(attrs_, x->shape.dims().subspan(2), kernel, op));
    QuantParam x_zp, w_zp, x_scale, w_scale, y_scale, y_zp;
    const Tensor* xz = ctx.input(2);
    const Tensor* wz = ctx.input(requant_ ? 5 : 3);
    if (xz)
      SOD2_RETURN_IF_ERROR(
          read_quant_param(op, "x_zero_point", xz, false, x->dtype, 1, false, &x_zp));
    if (wz)
      SOD2_RETURN_IF_ERROR(
          read_quant_param(op, "w_zero_point", wz, false, w->dtype, m, true, &w_zp));
    DType out_type = DType::kInt32;
    const Tensor* bias = nullptr;
    if (requant_) {
      if (!ctx.input(1) || !ctx.input(4) || !ctx.input(6))
        return invalid_argument("QLinearConv: x_scale, w_scale and y_scale are required");
      SOD2_RETURN_IF_ERROR(
          read_quant_param(op, "x_scale", ctx.input(1), true, DType::kFloat, 1, false, &x_scale));
      SOD2_RETURN_IF_ERROR(
          read_quant_param(op, "w_scale", ctx.input(4), true, DType::kFloat, m, true, &w_scale));
      SOD2_RETURN_IF_ERROR(
          read_quant_param(op, "y_scale", ctx.input(6), true, DType::kFloat, 1, false, &y_scale));
      const Tensor* yz = ctx.input(7);
      out_type = yz ? yz->dtype : x->dtype;
      if (!is_8bit(out_type)) {
        return unsupported(std::string(op) + ": y_zero_point of type " + dtype_name(out_type) +
                           " is not supported (uint8 or int8)");
      }
      if (yz)
        SOD2_RETURN_IF_ERROR(
            read_quant_param(op, "y_zero_point", yz, false, out_type, 1, false, &y_zp));
      bias = ctx.input(8);
      if (bias && (bias->dtype != DType::kInt32 || bias->numel() != m)) {
        return invalid_argument(std::string(op) + ": B must be int32 with " + std::to_string(m) +
                                " values, got " + dtype_name(bias->dtype) + " " +
                                bias->shape.to_string());
      }
    }
    Shape out_shape{n, m};
    for (int i = 0; i < g.spatial; ++i) out_shape.push_back(g.out[3 - g.spatial + i]);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, out_type, out_shape));
    if (y->numel() == 0) return Status::ok_status();

    const int64_t cg = c / group_, mg = m / group_, ks = g.k_size(), rows = cg * ks;
    const int64_t out_size = g.out_size(), in_size = g.in_size();
    const int64_t tiles = (out_size + kConvTile - 1) / kConvTile;
    const int64_t jobs = n * group_ * tiles;
    const int64_t slots = slot_count(ctx.pool(), jobs);
    // Scratch: centred weights [m, rows]; per slot an im2col tile [rows, kConvTile] (int16) and
    // accumulators [kConvTile].
    const size_t w_bytes = (static_cast<size_t>(m * rows) * 2 + 63) & ~size_t{63};
    const size_t slot_bytes =
        (static_cast<size_t>(rows * kConvTile) * 2 + kConvTile * 4 + 63) & ~size_t{63};
    SOD2_ASSIGN_OR_RETURN(void* mem,
                          ctx.scratch(w_bytes + slot_bytes * static_cast<size_t>(slots)));
    auto* w16 = static_cast<int16_t*>(mem);
    for (int64_t e = 0; e < m * rows; ++e)
      w16[e] = static_cast<int16_t>(load8(*w, e) - w_zp.zero_point(e / rows));
    const int32_t xzp = x_zp.zero_point(0);

    for_slots(ctx.pool(), jobs, slots, [&](int64_t job, int64_t slot) {
      const int64_t tile = job % tiles, ng = job / tiles;
      const int64_t img = ng / group_, grp = ng % group_;
      const int64_t p0 = tile * kConvTile, width = std::min(kConvTile, out_size - p0);
      char* base = static_cast<char*>(mem) + w_bytes + slot_bytes * static_cast<size_t>(slot);
      auto* col = reinterpret_cast<int16_t*>(base);
      auto* acc = reinterpret_cast<uint32_t*>(base + static_cast<size_t>(rows * kConvTile) * 2);
      // im2col of this tile: col[row, t], row = (channel, kz, ky, kx); padding is 0 once centred.
      const int64_t x_base = (img * c + grp * cg) * in_size;
      for (int64_t t = 0; t < width; ++t) {
        const int64_t pos = p0 + t;
        const int64_t ox = pos % g.out[2], oy = (pos / g.out[2]) % g.out[1],
                      oz = pos / (g.out[2] * g.out[1]);
        int64_t row = 0;
        for (int64_t ch = 0; ch < cg; ++ch) {
          const int64_t ch_base = x_base + ch * in_size;
          for (int64_t kz = 0; kz < g.k[0]; ++kz) {
            const int64_t iz = oz * g.stride[0] - g.pad_begin[0] + kz * g.dil[0];
            for (int64_t ky = 0; ky < g.k[1]; ++ky) {
              const int64_t iy = oy * g.stride[1] - g.pad_begin[1] + ky * g.dil[1];
              for (int64_t kx = 0; kx < g.k[2]; ++kx, ++row) {
                const int64_t ix = ox * g.stride[2] - g.pad_begin[2] + kx * g.dil[2];
                const bool inside =
                    iz >= 0 && iz < g.in[0] && iy >= 0 && iy < g.in[1] && ix >= 0 && ix < g.in[2];
                col[row * kConvTile + t] =
                    inside ? static_cast<int16_t>(
                                 load8(*x, ch_base + (iz * g.in[1] + iy) * g.in[2] + ix) - xzp)
                           : int16_t{0};
              }
            }
          }
        }
      }
      for (int64_t mm = 0; mm < mg; ++mm) {
        const int64_t oc = grp * mg + mm;
        const uint32_t b0 = bias ? static_cast<uint32_t>(bias->as<const int32_t>()[oc]) : 0u;
        std::fill(acc, acc + width, b0);
        const int16_t* wrow = w16 + oc * rows;
        for (int64_t rr = 0; rr < rows; ++rr) {
          const int32_t wv = wrow[rr];
          if (wv == 0) continue;
          const int16_t* crow = col + rr * kConvTile;
          for (int64_t t = 0; t < width; ++t)
            acc[t] += static_cast<uint32_t>(wv * static_cast<int32_t>(crow[t]));
        }
        const int64_t y_off = (img * m + oc) * out_size + p0;
        if (!requant_) {
          int32_t* out = y->as<int32_t>() + y_off;
          for (int64_t t = 0; t < width; ++t) out[t] = static_cast<int32_t>(acc[t]);
          continue;
        }
        const float mult =
            requantize_multiplier(x_scale.scale(0), w_scale.scale(oc), y_scale.scale(0));
        const int32_t yz = y_zp.zero_point(0);
        if (out_type == DType::kUint8) {
          uint8_t* out = y->as<uint8_t>() + y_off;
          for (int64_t t = 0; t < width; ++t)
            out[t] = requantize<uint8_t>(static_cast<int32_t>(acc[t]), mult, yz);
        } else {
          int8_t* out = y->as<int8_t>() + y_off;
          for (int64_t t = 0; t < width; ++t)
            out[t] = requantize<int8_t>(static_cast<int32_t>(acc[t]), mult, yz);
        }
      }
    });
    return Status::ok_status();
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
  bool requant_;
};

Expected<std::unique_ptr<Kernel>> make_int_conv(const NodeInfo& node, bool requant) {
  const char* op = requant ? "QLinearConv" : "ConvInteger";
  SOD2_ASSIGN_OR_RETURN(WindowAttrs w, read_window_attrs(node.attrs, op));
  SOD2_ASSIGN_OR_RETURN(int64_t group, node.attrs.get_int("group", 1));
  if (group <= 0)
    return invalid_model(std::string(op) + ": group must be positive, got " +
                         std::to_string(group));
  return std::unique_ptr<Kernel>(std::make_unique<IntConvKernel>(std::move(w), group, requant));
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_matmul_integer(const NodeInfo& node) {
  (void)node;
  return std::unique_ptr<Kernel>(std::make_unique<IntMatMulKernel>(false));
}
Expected<std::unique_ptr<Kernel>> make_qlinear_matmul(const NodeInfo& node) {
  (void)node;
  return std::unique_ptr<Kernel>(std::make_unique<IntMatMulKernel>(true));
}
Expected<std::unique_ptr<Kernel>> make_conv_integer(const NodeInfo& node) {
  return make_int_conv(node, false);
}
Expected<std::unique_ptr<Kernel>> make_qlinear_conv(const NodeInfo& node) {
  return make_int_conv(node, true);
}

}  // namespace sod2::rt::quant
