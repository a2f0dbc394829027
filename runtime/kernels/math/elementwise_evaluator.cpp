#include "runtime/kernels/math/elementwise_evaluator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernels/math/broadcast.h"
#include "runtime/kernels/math/elementwise.h"
#include "runtime/kernels/math/math_common.h"
#include "runtime/kernels/math/quantize_rows.h"
#include "runtime/kernels/math/vec_kernels.h"

namespace sod2::rt::math {
namespace {

// Floats per step's buffer: the buffers of every step and the spread one together stay within
// about 16 KiB, in L1 beside the input and output streams (a long group takes shorter chunks),
// and a chunk holds several short rows (one call per step for all of them).
int64_t chunk_floats(size_t steps) {
  const auto budget = static_cast<int64_t>(4096 / (steps + 1)) / 64 * 64;
  return std::clamp<int64_t>(budget, 256, 1024);
}

// An operand of a step over one chunk of `rows` rows of n elements: element (r, i) at
// p[r * row + i * step]; step is 1, or 0 where it broadcasts along the row.
struct Arg {
  const float* p;
  int64_t row, step;
};

// y (rows x n, contiguous) = f over the operands, element by element.
template <class F>
void map1(const Arg& a, float* y, int64_t rows, int64_t n, F f) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = a.p + r * a.row;
    float* out = y + r * n;
    if (a.step == 1) {
      for (int64_t i = 0; i < n; ++i) out[i] = f(x[i]);
    } else {
      const float v = f(*x);
      for (int64_t i = 0; i < n; ++i) out[i] = v;
    }
  }
}
template <class F>
void map2(const Arg& a, const Arg& b, float* y, int64_t rows, int64_t n, F f) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = a.p + r * a.row;
    const float* z = b.p + r * b.row;
    float* out = y + r * n;
    for (int64_t i = 0; i < n; ++i) out[i] = f(x[i * a.step], z[i * b.step]);
  }
}

// y (rows x n, contiguous) = the step over its operands. `spread` holds rows x n floats, for an
// operand the vector loops need contiguous.
void eval_step(const EwStep& s, std::span<const Arg> args, float* y, int64_t rows, int64_t n,
               float* spread) {
  const int64_t total = rows * n;
  auto flat = [&](const Arg& a) -> const float* {
    if (a.step == 1 && (a.row == n || rows == 1)) return a.p;
    for (int64_t r = 0; r < rows; ++r) {
      const float* x = a.p + r * a.row;
      float* out = spread + r * n;
      if (a.step == 1) {
        std::copy(x, x + n, out);
      } else {
        std::fill(out, out + n, *x);
      }
    }
    return spread;
  };
  auto unary = [&](UnaryF32 op) { unary_f32(op, flat(args[0]), y, total, s.alpha, s.beta); };
  auto binary = [&](BinaryF32 op) {
    const Arg& a = args[0];
    const Arg& b = args[1];
    binary_rows_f32(op, y, a.p, a.row, a.step, b.p, b.row, b.step, rows, n);
  };
  const Arg& x = args[0];
  const float alpha = s.alpha, beta = s.beta;
  switch (s.op) {
    case EwOp::kRelu: return unary(UnaryF32::kRelu);
    case EwOp::kLeakyRelu: return unary(UnaryF32::kLeakyRelu);
    case EwOp::kSigmoid: return unary(UnaryF32::kSigmoid);
    case EwOp::kHardSigmoid: return unary(UnaryF32::kHardSigmoid);
    case EwOp::kHardSwish: return unary(UnaryF32::kHardSwish);
    case EwOp::kTanh: return unary(UnaryF32::kTanh);
    case EwOp::kErf: return unary(UnaryF32::kErf);
    case EwOp::kExp: return unary(UnaryF32::kExp);
    case EwOp::kSqrt: return unary(UnaryF32::kSqrt);
    case EwOp::kReciprocal: return unary(UnaryF32::kReciprocal);
    case EwOp::kNeg: return unary(UnaryF32::kNeg);
    case EwOp::kAbs: return unary(UnaryF32::kAbs);
    case EwOp::kFloor: return unary(UnaryF32::kFloor);
    case EwOp::kCeil: return unary(UnaryF32::kCeil);
    case EwOp::kRound: return unary(UnaryF32::kRound);
    case EwOp::kSoftsign: return unary(UnaryF32::kSoftsign);
    case EwOp::kAdd: return binary(BinaryF32::kAdd);
    case EwOp::kSub: return binary(BinaryF32::kSub);
    case EwOp::kMul: return binary(BinaryF32::kMul);
    case EwOp::kDiv: return binary(BinaryF32::kDiv);
    case EwOp::kIdentity: return map1(x, y, rows, n, [](float v) { return v; });
    case EwOp::kLog: return map1(x, y, rows, n, [](float v) { return std::log(v); });
    case EwOp::kSin: return map1(x, y, rows, n, [](float v) { return std::sin(v); });
    case EwOp::kCos: return map1(x, y, rows, n, [](float v) { return std::cos(v); });
    case EwOp::kSoftplus:
      return map1(x, y, rows, n,
                  [](float v) { return std::max(v, 0.f) + std::log1p(std::exp(-std::abs(v))); });
    case EwOp::kElu:
      return map1(x, y, rows, n, [alpha](float v) { return v < 0 ? alpha * std::expm1(v) : v; });
    case EwOp::kSelu:
      return map1(x, y, rows, n,
                  [alpha, beta](float v) { return beta * (v <= 0 ? alpha * std::expm1(v) : v); });
    case EwOp::kClip:
      return map1(x, y, rows, n, [alpha, beta](float v) {
        const float a = v < alpha ? alpha : v;
        return a > beta ? beta : a;
      });
    case EwOp::kPow:
      return map2(x, args[1], y, rows, n, [](float a, float b) { return std::pow(a, b); });
    case EwOp::kPRelu:
      return map2(x, args[1], y, rows, n,
                  [](float a, float slope) { return a < 0 ? a * slope : a; });
    case EwOp::kMax:
    case EwOp::kMin:
    case EwOp::kSum: {
      // Left to right, as the variadic kernel folds; y may be read as the accumulator since
      // no operand is y (temps and the output are distinct buffers).
      map1(x, y, rows, n, [](float v) { return v; });
      const Arg acc{y, n, 1};
      for (size_t k = 1; k < args.size(); ++k) {
        if (s.op == EwOp::kMax) {
          map2(acc, args[k], y, rows, n, fold_step<Fold::kMax, float>);
        } else if (s.op == EwOp::kMin) {
          map2(acc, args[k], y, rows, n, fold_step<Fold::kMin, float>);
        } else {
          map2(acc, args[k], y, rows, n, fold_step<Fold::kSum, float>);
        }
      }
      return;
    }
  }
}

}  // namespace

Expected<ElementwiseProgram> node_program(const NodeInfo& node, const char* op) {
  if (node.num_outputs != 1) return invalid_model(std::string(op) + ": needs exactly one output");
  for (size_t i = 0; i < node.input_dtypes.size(); ++i) {
    const bool present = i >= node.input_present.size() || node.input_present[i];
    if (!present)
      return invalid_model(std::string(op) + ": input " + std::to_string(i) + " is absent");
    if (node.input_dtypes[i] != DType::kFloat && node.input_dtypes[i] != DType::kUndefined)
      return unsupported_dtype(op, node.input_dtypes[i]);
  }
  return elementwise_program_from(node.attrs, node.input_dtypes.size());
}

ElementwiseEvaluator::ElementwiseEvaluator(ElementwiseProgram program, size_t num_inputs)
    : program_(std::move(program)), num_inputs_(num_inputs) {
  for (const EwStep& s : program_.steps) max_args_ = std::max(max_args_, s.args.size());
  chunk_ = chunk_floats(program_.steps.size());
  find_gelus();
}

Status ElementwiseEvaluator::bind(KernelContext& ctx, const char* op, Shape* out_shape) {
  const size_t k = ctx.num_inputs();
  if (k != num_inputs_)
    return invalid_argument(std::string(op) + ": " + std::to_string(k) + " inputs, made for " +
                            std::to_string(num_inputs_));
  shapes_.clear();
  for (size_t i = 0; i < k; ++i) {
    const Tensor* t = ctx.input(i);
    if (!t)
      return invalid_argument(std::string(op) + ": input " + std::to_string(i) + " is missing");
    if (t->dtype != DType::kFloat) return unsupported_dtype(op, t->dtype);
    shapes_.push_back(&t->shape);
  }
  SOD2_RETURN_IF_ERROR(broadcast_shapes(op, shapes_.data(), static_cast<int>(k), out_shape));
  inputs_.assign(k, nullptr);
  for (size_t i = 0; i < k; ++i) inputs_[i] = ctx.input(i);
  for (size_t g = 0; g < gelus_.size(); ++g) {
    const GeluRun& r = gelus_[g];
    gelu_live_[g] = inputs_[static_cast<size_t>(r.k)]->numel() == 1 &&
                    inputs_[static_cast<size_t>(r.one)]->numel() == 1 &&
                    inputs_[static_cast<size_t>(r.half)]->numel() == 1;
  }
  plan_walk(*out_shape);
  return Status::ok_status();
}

size_t ElementwiseEvaluator::scratch_bytes() const {
  const size_t floats = (program_.steps.size() + 1) * static_cast<size_t>(chunk_);
  const size_t bytes =
      floats * sizeof(float) + max_args_ * sizeof(Arg) + inputs_.size() * sizeof(int64_t);
  return (bytes + 63) / 64 * 64;
}

// Into walk_ (its storage kept between runs: a run allocates nothing), with st_ as scratch.
void ElementwiseEvaluator::plan_walk(const Shape& out) {
  const std::vector<const Tensor*>& inputs = inputs_;
  std::vector<std::array<int64_t, kMaxRank>>& st = st_;
  Walk& w = walk_;
  const int r = out.rank();
  st.resize(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Shape& s = inputs[k]->shape;
    int64_t stride = 1;
    st[k].fill(0);
    for (int d = r - 1, e = s.rank() - 1; d >= 0; --d, --e) {
      if (e < 0) break;
      st[k][static_cast<size_t>(d)] = s[e] == 1 ? 0 : stride;
      stride *= s[e];
    }
  }
  // Drop dims of 1, and merge a dim into the one before it where every input walks the two as
  // one (contiguous there, or broadcast along both).
  w.rank = 0;
  w.strides.resize(inputs.size());
  for (auto& s : w.strides) s.fill(0);
  for (int d = 0; d < r; ++d) {
    if (out[d] == 1) continue;
    const auto at = static_cast<size_t>(d);
    bool merge = w.rank > 0;
    for (size_t k = 0; merge && k < inputs.size(); ++k)
      merge = w.strides[k][static_cast<size_t>(w.rank - 1)] == st[k][at] * out[d];
    const int to = merge ? w.rank - 1 : w.rank++;
    w.dims[to] = merge ? w.dims[to] * out[d] : out[d];
    for (size_t k = 0; k < inputs.size(); ++k) w.strides[k][static_cast<size_t>(to)] = st[k][at];
  }
  if (w.rank == 0) {
    w.rank = 1;
    w.dims[0] = 1;
    for (auto& s : w.strides) s[0] = 0;
  }
}

// A chunk at a time: a piece of one row, or as many whole rows of the innermost dim as fit in a
// chunk (a short row costs one call per step, not one per row).
void ElementwiseEvaluator::run(int64_t begin, int64_t end, void* scratch, void* y,
                               int64_t origin) const {
  const Walk& w = walk_;
  // The scratch: a buffer per step and one for a broadcast operand, then the operands and the
  // inputs' offsets.
  auto* base = static_cast<uint8_t*>(scratch);
  const size_t floats = (program_.steps.size() + 1) * static_cast<size_t>(chunk_);
  float* temps = reinterpret_cast<float*>(base);
  Arg* args = reinterpret_cast<Arg*>(base + floats * sizeof(float));
  int64_t* offsets =
      reinterpret_cast<int64_t*>(base + floats * sizeof(float) + max_args_ * sizeof(Arg));
  const size_t k = inputs_.size(), steps = program_.steps.size();
  const int last = w.rank - 1;
  const int64_t n_row = w.dims[last];
  int64_t idx[kMaxRank];
  int64_t rem = begin;
  for (int d = last; d >= 0; --d) {
    idx[d] = rem % w.dims[d];
    rem /= w.dims[d];
  }
  for (int64_t pos = begin; pos < end;) {
    for (size_t i = 0; i < k; ++i) {
      int64_t off = 0;
      for (int d = 0; d <= last; ++d) off += idx[d] * w.strides[i][static_cast<size_t>(d)];
      offsets[i] = off;
    }
    // Whole rows from here, inside this slice and the dim above: rows x n_row.
    int64_t rows = 1, n = std::min(n_row - idx[last], end - pos);
    if (last > 0 && idx[last] == 0 && n_row <= chunk_) {
      rows = std::min({chunk_ / n_row, w.dims[last - 1] - idx[last - 1], (end - pos) / n_row});
      rows = std::max<int64_t>(rows, 1);
      n = rows > 1 ? n_row : n;
    }
    for (int64_t c = 0; c < n; c += chunk_) {
      const int64_t len = std::min(chunk_, n - c);
      auto arg = [&](const EwOperand& o) -> Arg {
        if (o.temp) return {temps + static_cast<size_t>(o.index) * chunk_, len, 1};
        const auto in = static_cast<size_t>(o.index);
        const int64_t step = w.strides[in][static_cast<size_t>(last)] == 0 ? 0 : 1;
        const int64_t row = last > 0 ? w.strides[in][static_cast<size_t>(last - 1)] : 0;
        return {inputs_[in]->as<const float>() + offsets[in] + c * step, row, step};
      };
      // The last step writes the output, or, quantized, its own buffer first (rows x len fit
      // a chunk: rows > 1 only where n_row does).
      auto dst_of = [&](size_t j) {
        return j + 1 == steps && !program_.quantize ? static_cast<float*>(y) + (pos + c - origin)
                                                    : temps + j * chunk_;
      };
      for (size_t j = 0; j < steps; ++j) {
        const int32_t g = gelu_at_[j];
        if (g >= 0 && gelu_live_[static_cast<size_t>(g)]) {
          const GeluRun& r = gelus_[static_cast<size_t>(g)];
          const Arg x = arg(r.x);
          if (x.step == 1 && (x.row == len || rows == 1)) {
            j += 4;
            float* dst = dst_of(j);
            gelu_erf_f32(x.p, dst, rows * len, scalar(r.k), r.divide, scalar(r.one),
                         scalar(r.half));
            if (j + 1 == steps && program_.quantize)
              quantize_out(dst, rows * len, y, pos + c - origin);
            continue;
          }
        }
        const EwStep& s = program_.steps[j];
        for (size_t a = 0; a < s.args.size(); ++a) args[a] = arg(s.args[a]);
        float* dst = dst_of(j);
        eval_step(s, std::span<const Arg>(args, s.args.size()), dst, rows, len,
                  temps + steps * chunk_);
        if (j + 1 == steps && program_.quantize) quantize_out(dst, rows * len, y, pos + c - origin);
      }
    }
    pos += rows * n;
    const int moved = rows > 1 ? last - 1 : last;
    idx[moved] += rows > 1 ? rows : n;
    for (int d = moved; d > 0 && idx[d] >= w.dims[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

void ElementwiseEvaluator::quantize_out(const float* v, int64_t n, void* y, int64_t at) const {
  const EwQuantize& q = *program_.quantize;
  if (q.type == DType::kInt8)
    quantize_rows(v, n, q.scale, q.zero_point, static_cast<int8_t*>(y) + at);
  else
    quantize_rows(v, n, q.scale, q.zero_point, static_cast<uint8_t*>(y) + at);
}

float ElementwiseEvaluator::scalar(int32_t input) const {
  return *inputs_[static_cast<size_t>(input)]->as<const float>();
}

void ElementwiseEvaluator::find_gelus() {
  const std::vector<EwStep>& st = program_.steps;
  gelu_at_.assign(st.size(), -1);
  std::vector<int> readers(st.size(), 0);  // per step: the steps reading its result
  for (const EwStep& s : st)
    for (const EwOperand& o : s.args)
      if (o.temp && o.index >= 0 && static_cast<size_t>(o.index) < st.size())
        ++readers[static_cast<size_t>(o.index)];
  auto is_temp = [](const EwOperand& o, size_t j) {
    return o.temp && o.index == static_cast<int32_t>(j);
  };
  // The input that binary step `s` combines with step j's result; null where it has no such
  // pair of operands.
  auto input_beside = [&](const EwStep& s, size_t j) -> const EwOperand* {
    if (s.args.size() != 2 || is_temp(s.args[0], j) == is_temp(s.args[1], j)) return nullptr;
    const EwOperand& o = is_temp(s.args[0], j) ? s.args[1] : s.args[0];
    return &o;
  };
  for (size_t j = 0; j + 5 <= st.size(); ++j) {
    const EwStep& s0 = st[j];
    GeluRun r;
    if ((s0.op != EwOp::kDiv && s0.op != EwOp::kMul) || s0.args.size() != 2 || s0.args[1].temp)
      continue;
    r.x = s0.args[0];
    r.k = s0.args[1].index;
    r.divide = s0.op == EwOp::kDiv;
    const EwStep& s1 = st[j + 1];
    if (s1.op != EwOp::kErf || s1.args.size() != 1 || !is_temp(s1.args[0], j)) continue;
    const EwOperand* one = st[j + 2].op == EwOp::kAdd ? input_beside(st[j + 2], j + 1) : nullptr;
    const EwOperand* x = st[j + 3].op == EwOp::kMul ? input_beside(st[j + 3], j + 2) : nullptr;
    const EwOperand* half = st[j + 4].op == EwOp::kMul ? input_beside(st[j + 4], j + 3) : nullptr;
    if (!one || one->temp || !half || half->temp || !x || x->temp != r.x.temp ||
        x->index != r.x.index)
      continue;
    if (readers[j] != 1 || readers[j + 1] != 1 || readers[j + 2] != 1 || readers[j + 3] != 1)
      continue;
    r.one = one->index;
    r.half = half->index;
    gelu_at_[j] = static_cast<int32_t>(gelus_.size());
    gelus_.push_back(r);
    j += 4;
  }
  gelu_live_.assign(gelus_.size(), 0);
}

}  // namespace sod2::rt::math
