#include "runtime/kernels/linalg/rnn_common.h"

#include <algorithm>
#include <cmath>

#include "runtime/kernels/linalg/common.h"
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
  if (layout != 0)
    return unsupported(std::string(op) + ": layout 1 (batch first) is not supported");
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

Status read_sequence_lens(const Tensor* t, const RnnShape& s, const char* op, int64_t* lens) {
  for (int64_t b = 0; b < s.batch; ++b) lens[b] = s.seq;
  if (!t) return Status::ok_status();
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
  return Status::ok_status();
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
  if (bias) {
    for (int64_t r = 0; r < rows; ++r) std::copy(bias, bias + cols, gx + r * cols);
    g.beta = 1.f;
  }
  sgemm(pool, g);
}

}  // namespace sod2::rt
