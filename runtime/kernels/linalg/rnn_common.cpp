#include "runtime/kernels/linalg/rnn_common.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/epilogue.h"
#include "runtime/kernels/linalg/gemm.h"

namespace sod2::rt {

float RnnActivation::operator()(float x) const {
  switch (fn) {
    case RnnFn::kSigmoid: return 1.f / (1.f + std::exp(-x));
    case RnnFn::kTanh: return std::tanh(x);
    case RnnFn::kRelu: return x > 0.f ? x : 0.f;
    case RnnFn::kHardSigmoid: return std::clamp(alpha * x + beta, 0.f, 1.f);
    case RnnFn::kLeakyRelu: return x >= 0.f ? x : alpha * x;
    case RnnFn::kAffine: return alpha * x + beta;
    case RnnFn::kScaledTanh: return alpha * std::tanh(beta * x);
    case RnnFn::kElu: return x >= 0.f ? x : alpha * (std::exp(x) - 1.f);
    case RnnFn::kSoftsign: return x / (1.f + std::fabs(x));
    case RnnFn::kSoftplus: return std::log1p(std::exp(x));
    case RnnFn::kThresholdedRelu: return x > alpha ? x : 0.f;
  }
  return x;
}

namespace {

struct FnInfo {
  const char* name;
  RnnFn fn;
  bool uses_alpha, uses_beta;
  float alpha, beta;  // ONNX defaults
};
constexpr FnInfo kFns[] = {
    {"sigmoid", RnnFn::kSigmoid, false, false, 0, 0},
    {"tanh", RnnFn::kTanh, false, false, 0, 0},
    {"relu", RnnFn::kRelu, false, false, 0, 0},
    {"hardsigmoid", RnnFn::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"leakyrelu", RnnFn::kLeakyRelu, true, false, 0.01f, 0},
    {"affine", RnnFn::kAffine, true, true, 1.f, 0.f},
    {"scaledtanh", RnnFn::kScaledTanh, true, true, 1.f, 1.f},
    {"elu", RnnFn::kElu, true, false, 1.f, 0},
    {"softsign", RnnFn::kSoftsign, false, false, 0, 0},
    {"softplus", RnnFn::kSoftplus, false, false, 0, 0},
    {"thresholdedrelu", RnnFn::kThresholdedRelu, true, false, 1.f, 0},
};

}  // namespace

Expected<RnnAttrs> read_rnn_attrs(const NodeInfo& node, const char* op,
                                  const std::vector<std::string>& default_acts) {
  RnnAttrs a;
  std::string dir;
  SOD2_ATTR(dir, node.attrs.get_string("direction", "forward"));
  if (dir == "forward")
    a.num_directions = 1;
  else if (dir == "reverse")
    a.reverse = true;
  else if (dir == "bidirectional")
    a.num_directions = 2;
  else
    return invalid_argument(std::string(op) + ": unknown direction '" + dir + "'");
  SOD2_ATTR(a.hidden, node.attrs.get_int("hidden_size", 0));
  SOD2_ATTR(a.clip, node.attrs.get_float("clip", 0.f));
  int64_t layout = 0;
  SOD2_ATTR(layout, node.attrs.get_int("layout", 0));
  if (layout != 0 && layout != 1)
    return invalid_argument(std::string(op) + ": layout must be 0 or 1, got " +
                            std::to_string(layout));
  a.batch_first = layout == 1;
  std::vector<std::string> names;
  std::vector<float> alphas, betas;
  if (const AttrValue* v = node.attrs.find("activations")) {
    if (v->kind != AttrValue::Kind::kStrings)
      return invalid_argument(std::string(op) + ": activations must be a list of strings");
    names = v->strings;
  }
  SOD2_ATTR(alphas, node.attrs.get_floats("activation_alpha"));
  SOD2_ATTR(betas, node.attrs.get_floats("activation_beta"));
  const size_t per = default_acts.size();
  if (names.empty())
    for (int d = 0; d < a.num_directions; ++d)
      names.insert(names.end(), default_acts.begin(), default_acts.end());
  if (names.size() != per * static_cast<size_t>(a.num_directions))
    return invalid_argument(std::string(op) + ": expected " +
                            std::to_string(per * a.num_directions) + " activations, got " +
                            std::to_string(names.size()));
  size_t ai = 0, bi = 0;
  for (const std::string& n : names) {
    std::string lower;
    for (char ch : n) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const FnInfo* info = nullptr;
    for (const FnInfo& f : kFns)
      if (lower == f.name) info = &f;
    if (!info) return unsupported(std::string(op) + ": activation '" + n + "' is not supported");
    RnnActivation act{info->fn, info->alpha, info->beta};
    if (info->uses_alpha && ai < alphas.size()) act.alpha = alphas[ai++];
    if (info->uses_beta && bi < betas.size()) act.beta = betas[bi++];
    a.acts.push_back(act);
  }
  return a;
}

Expected<RnnShape> check_rnn_inputs(KernelContext& ctx, const RnnAttrs& a, int gates,
                                    const char* op) {
  const Tensor* x = ctx.input(0);
  const Tensor* w = ctx.input(1);
  const Tensor* r = ctx.input(2);
  if (!x || !w || !r) return invalid_argument(std::string(op) + ": needs inputs X, W and R");
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (i == 4 || !t) continue;  // sequence_lens is int32
    if (t->dtype != DType::kFloat)
      return unsupported_dtype(op, std::to_string(i).c_str(), t->dtype);
  }
  RnnShape s;
  s.dirs = a.num_directions;
  s.hidden = a.hidden;
  if (x->shape.rank() != 3)
    return invalid_argument(std::string(op) + ": X " + x->shape.to_string() + " must be 3-D");
  s.seq = x->shape[0];
  s.batch = x->shape[1];
  s.input = x->shape[2];
  const int64_t gh = gates * s.hidden;
  if (!(w->shape == Shape{s.dirs, gh, s.input}))
    return invalid_argument(std::string(op) + ": W " + w->shape.to_string() + " should be [" +
                            std::to_string(s.dirs) + "," + std::to_string(gh) + "," +
                            std::to_string(s.input) + "]");
  if (!(r->shape == Shape{s.dirs, gh, s.hidden}))
    return invalid_argument(std::string(op) + ": R " + r->shape.to_string() + " should be [" +
                            std::to_string(s.dirs) + "," + std::to_string(gh) + "," +
                            std::to_string(s.hidden) + "]");
  if (const Tensor* b = ctx.input(3); b && !(b->shape == Shape{s.dirs, 2 * gh}))
    return invalid_argument(std::string(op) + ": B " + b->shape.to_string() + " should be [" +
                            std::to_string(s.dirs) + "," + std::to_string(2 * gh) + "]");
  const Shape state{s.dirs, s.batch, s.hidden};
  if (const Tensor* h = ctx.input(5); h && !(h->shape == state))
    return invalid_argument(std::string(op) + ": initial_h " + h->shape.to_string() +
                            " should be " + state.to_string());
  return s;
}

Expected<const int64_t*> read_sequence_lens(KernelContext& ctx, const RnnShape& s, const char* op) {
  SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(s.batch) * sizeof(int64_t)));
  auto* lens = static_cast<int64_t*>(mem);
  for (int64_t b = 0; b < s.batch; ++b) lens[b] = s.seq;
  const Tensor* t = ctx.input(4);
  if (!t) return lens;
  if (t->numel() != s.batch)
    return invalid_argument(std::string(op) + ": sequence_lens " + t->shape.to_string() +
                            " must have " + std::to_string(s.batch) + " entries");
  for (int64_t b = 0; b < s.batch; ++b) {
    int64_t v = 0;
    if (t->dtype == DType::kInt32)
      v = t->as<int32_t>()[b];
    else if (t->dtype == DType::kInt64)
      v = t->as<int64_t>()[b];
    else
      return unsupported_dtype(op, "sequence_lens", t->dtype);
    if (v < 0 || v > s.seq)
      return invalid_argument(std::string(op) + ": sequence_lens[" + std::to_string(b) + "] = " +
                              std::to_string(v) + " is outside [0, " + std::to_string(s.seq) + "]");
    lens[b] = v;
  }
  return lens;
}

namespace {

// dst[j, i, :] = src[i, j, :] for src [a, b, inner].
void swap_leading(const float* src, float* dst, int64_t a, int64_t b, int64_t inner) {
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      std::copy(src + (i * b + j) * inner, src + (i * b + j + 1) * inner,
                dst + (j * a + i) * inner);
}

// Hands the inner kernel scratch memory for its outputs and remembers them.
class ScratchOutputs final : public OutputAllocator {
 public:
  static constexpr size_t kMaxOutputs = 3;
  explicit ScratchOutputs(KernelContext& outer) : outer_(outer) {}
  Expected<Tensor*> output(size_t index, DType dtype, const Shape& shape) override {
    if (index >= kMaxOutputs) return internal_error("recurrent op: output index out of range");
    SOD2_ASSIGN_OR_RETURN(size_t bytes, checked_tensor_bytes(dtype, shape));
    SOD2_ASSIGN_OR_RETURN(void* p, outer_.scratch(bytes > 0 ? bytes : 1));
    views[index] = {dtype, shape, p};
    made[index] = true;
    return &views[index];
  }
  Expected<void*> scratch(size_t bytes) override { return outer_.scratch(bytes); }

  Tensor views[kMaxOutputs];
  bool made[kMaxOutputs] = {};

 private:
  KernelContext& outer_;
};

class BatchFirstKernel final : public Kernel {
 public:
  BatchFirstKernel(std::unique_ptr<Kernel> inner, int state_inputs, const char* op)
      : inner_(std::move(inner)), state_inputs_(state_inputs), op_(op) {}

  // The constants (W, R, B) take the same slots in both layouts.
  Status prepare(std::span<const Tensor* const> constants) override {
    return inner_->prepare(constants);
  }

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(op_) + ": needs input X");
    if (x->shape.rank() != 3 || x->dtype != DType::kFloat)
      return invalid_argument(std::string(op_) + ": X " + x->shape.to_string() + " of " +
                              dtype_name(x->dtype) + " must be 3-D float32");
    constexpr size_t kMaxInputs = 8;
    const size_t n = std::min(ctx.num_inputs(), kMaxInputs);
    Tensor moved[kMaxInputs];
    const Tensor* ptrs[kMaxInputs] = {};
    for (size_t i = 0; i < n; ++i) {
      const Tensor* t = ctx.input(i);
      ptrs[i] = t;
      const bool state = i >= 5 && i < 5 + static_cast<size_t>(state_inputs_);
      if (!t || (i != 0 && !state)) continue;
      if (t->shape.rank() != 3 || t->dtype != DType::kFloat)
        return invalid_argument(std::string(op_) + ": input " + std::to_string(i) + " " +
                                t->shape.to_string() + " must be 3-D float32");
      const int64_t a = t->shape[0], b = t->shape[1], inner = t->shape[2];
      SOD2_ASSIGN_OR_RETURN(float* p, scratch_floats(ctx, t->numel()));
      swap_leading(t->as<const float>(), p, a, b, inner);
      moved[i] = {DType::kFloat, Shape{b, a, inner}, p};
      ptrs[i] = &moved[i];
    }
    ScratchOutputs outs(ctx);
    KernelContext inner_ctx(std::span<const Tensor* const>(ptrs, n), &outs, &ctx.pool());
    SOD2_RETURN_IF_ERROR(inner_->run(inner_ctx));
    for (size_t i = 0; i < ScratchOutputs::kMaxOutputs; ++i) {
      if (!outs.made[i]) continue;
      const Tensor& t = outs.views[i];
      Shape real;
      int64_t a = 0, b = 0, inner = 0;
      if (i == 0) {  // [seq, dirs, batch, hidden] -> [batch, seq, dirs, hidden]
        real = Shape{t.shape[2], t.shape[0], t.shape[1], t.shape[3]};
        a = t.shape[0] * t.shape[1];
        b = t.shape[2];
        inner = t.shape[3];
      } else {  // [dirs, batch, hidden] -> [batch, dirs, hidden]
        real = Shape{t.shape[1], t.shape[0], t.shape[2]};
        a = t.shape[0];
        b = t.shape[1];
        inner = t.shape[2];
      }
      SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(i, t.dtype, real));
      if (out->numel() > 0) swap_leading(t.as<const float>(), out->as<float>(), a, b, inner);
    }
    return Status::ok_status();
  }

 private:
  std::unique_ptr<Kernel> inner_;
  int state_inputs_;
  const char* op_;
};

}  // namespace

std::unique_ptr<Kernel> wrap_batch_first(std::unique_ptr<Kernel> inner, int state_inputs,
                                         const char* op) {
  return std::make_unique<BatchFirstKernel>(std::move(inner), state_inputs, op);
}

void project_inputs(ThreadPool& pool, const RnnShape& s, int gates, const float* x,
                    const float* w_d, const float* bias, float* gx) {
  const int64_t rows = s.seq * s.batch, cols = gates * s.hidden;
  GemmArgs g;
  g.trans_b = true;
  g.m = rows;
  g.n = cols;
  g.k = s.input;
  g.a = x;
  g.lda = s.input;
  g.b = w_d;
  g.ldb = s.input;
  g.c = gx;
  g.ldc = cols;
  if (!bias) return sgemm(pool, g);
  // The bias added to each tile as it is finished, by the column-bias epilogue MatMul uses, on
  // its thread and while it is cached, rather than copied into every row first on the calling
  // thread (lstm_lm: 512 KB per layer while the other thread waited).
  EpilogueRun e;
  e.bias[0] = bias;
  const auto add_bias = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    e.apply(gx + m0 * cols + n0, nullptr, m1 - m0, n1 - n0, cols, n0, false);
  };
  const TileFn on_tile(add_bias);  // points at add_bias, which outlives the call
  sgemm(pool, g, &on_tile);
}

void zero_steps_past_lengths(Tensor* y, const RnnShape& s, const int64_t* lens) {
  if (!y || y->bytes() == 0) return;  // data is null when empty
  for (int64_t b = 0; b < s.batch; ++b)
    if (lens[b] < s.seq) {
      std::memset(y->data, 0, y->bytes());
      return;
    }
}

Status check_recurrence_scratch(const RnnShape& s, int64_t gate_width) {
  constexpr uint64_t kPartCap = uint64_t{1} << 62;
  SOD2_RETURN_IF_ERROR(
      checked_tensor_bytes(DType::kFloat, Shape{s.seq, s.batch, gate_width}, kPartCap).status());
  return checked_tensor_bytes(DType::kFloat, Shape{3, s.batch, gate_width}, kPartCap).status();
}

void load_initial_state(const Tensor* state, int d, const RnnShape& s, float* out) {
  const int64_t n = s.batch * s.hidden;
  if (state)
    std::copy_n(state->as<float>() + d * n, n, out);
  else
    std::fill(out, out + n, 0.f);
}

const float* sum_biases(const Tensor* b, int d, int64_t width, float* out) {
  if (!b) return nullptr;
  const float* bd = b->as<float>() + d * 2 * width;
  for (int64_t j = 0; j < width; ++j) out[j] = bd[j] + bd[width + j];
  return out;
}

void recurrent_gemm(ThreadPool& pool, const RnnShape& s, const float* h, const float* r_d,
                    int64_t n, float* gh, int64_t ldc) {
  GemmArgs g;
  g.trans_b = true;
  g.m = s.batch;
  g.n = n;
  g.k = s.hidden;
  g.a = h;
  g.lda = s.hidden;
  g.b = r_d;
  g.ldb = s.hidden;
  g.c = gh;
  g.ldc = ldc;
  // Few rows (the batch) against all of R: the step is bound by reading R, which every step
  // reads again. Split over the threads by R's rows, each thread's share of R stays in its core's
  // cache from one step to the next, where one core would stream all of it from L3 per step.
  const int64_t r_bytes = n * s.hidden * static_cast<int64_t>(sizeof(float));
  const int64_t threads = pool.num_threads();
  if (threads > 1 && s.batch <= 16 && r_bytes >= (int64_t{256} << 10)) {
    const int64_t step = ((n + threads - 1) / threads + 15) / 16 * 16;
    const int64_t parts = (n + step - 1) / step;
    pool.parallel_for(parts, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t lo = p * step, hi = std::min(n, lo + step);
        GemmArgs part = g;
        part.n = hi - lo;
        part.b = g.b + lo * g.ldb;
        part.c = g.c + lo;
        sgemm_serial(part);
      }
    });
    return;
  }
  sgemm(pool, g);
}

}  // namespace sod2::rt
