// The ONNX Gemm op: Y = alpha * op(A) * op(B) + beta * C, C broadcast to [M, N].
#include <algorithm>
#include <cstring>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/linalg_kernels.h"

namespace sod2::rt {
namespace {

class GemmKernel : public Kernel {
 public:
  GemmKernel(bool ta, bool tb, float alpha, float beta, const Epilogue& epi)
      : trans_a_(ta), trans_b_(tb), alpha_(alpha), beta_(beta), epi_(epi) {}

  Status run(KernelContext& ctx) override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    // Slot 2 is C unless the epilogue took it (a fused Gemm that had no C).
    const Tensor* c = epi_.bias_input == 2 || epi_.residual_input == 2 ? nullptr : ctx.input(2);
    if (!a || !b) return invalid_argument("Gemm: needs inputs A and B");
    if (a->dtype != DType::kFloat) return unsupported_dtype("Gemm", "A", a->dtype);
    if (b->dtype != DType::kFloat) return unsupported_dtype("Gemm", "B", b->dtype);
    if (c && c->dtype != DType::kFloat) return unsupported_dtype("Gemm", "C", c->dtype);
    if (a->shape.rank() != 2 || b->shape.rank() != 2)
      return invalid_argument("Gemm: A and B must be 2-D, got " + a->shape.to_string() + " and " +
                              b->shape.to_string());
    const int64_t m = trans_a_ ? a->shape[1] : a->shape[0];
    const int64_t k = trans_a_ ? a->shape[0] : a->shape[1];
    const int64_t kb = trans_b_ ? b->shape[1] : b->shape[0];
    const int64_t n = trans_b_ ? b->shape[0] : b->shape[1];
    if (k != kb)
      return invalid_argument("Gemm: inner dims differ: A " + a->shape.to_string() +
                              (trans_a_ ? " (transposed)" : "") + ", B " + b->shape.to_string() +
                              (trans_b_ ? " (transposed)" : ""));
    // C broadcasts unidirectionally to [m, n]: rows and columns each either match or are 1.
    int64_t cm = 1, cn = 1;
    if (c) {
      if (c->shape.rank() > 2)
        return invalid_argument("Gemm: C " + c->shape.to_string() + " has rank above 2");
      if (c->shape.rank() >= 1) cn = c->shape[c->shape.rank() - 1];
      if (c->shape.rank() == 2) cm = c->shape[0];
      if ((cm != 1 && cm != m) || (cn != 1 && cn != n))
        return invalid_argument("Gemm: C " + c->shape.to_string() + " does not broadcast to [" +
                                std::to_string(m) + "," + std::to_string(n) + "]");
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, Shape{m, n}));
    if (y->numel() == 0) return Status::ok_status();
    float* Y = y->as<float>();
    const bool use_c = c && beta_ != 0.f;
    // A [n]-vector C with beta 1 (a Linear layer's bias) is just the epilogue's column bias.
    const bool c_as_bias = use_c && beta_ == 1.f && cm == 1 && cn == n && n > 1;
    SOD2_ASSIGN_OR_RETURN(EpilogueRun e, resolve_epilogue(epi_, ctx, "Gemm", y->shape, n,
                                                          c_as_bias ? c->as<float>() : nullptr));
    GemmArgs g;
    g.trans_a = trans_a_;
    g.trans_b = trans_b_;
    g.m = m;
    g.n = n;
    g.k = k;
    g.alpha = alpha_;
    g.a = a->as<float>();
    g.lda = a->shape[1];
    g.b = b->as<float>();
    g.ldb = b->shape[1];
    g.c = Y;
    g.ldc = n;
    if (use_c && !c_as_bias) {
      // Y starts as beta * broadcast(C); the GEMM accumulates onto it.
      const float* C = c->as<float>();
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          Y[i * n + j] = beta_ * C[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
      g.beta = 1.f;
    }
    auto tile = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
      const int64_t off = m0 * n + n0;
      e.apply(Y + off, e.residual ? e.residual + off : nullptr, m1 - m0, n1 - n0, n, n0, false);
    };
    const TileFn fn(tile);
    sgemm(ctx.pool(), g, e.empty() ? nullptr : &fn);
    return Status::ok_status();
  }

 private:
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  Epilogue epi_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_gemm_kernel(const NodeInfo& node, const Epilogue& epi) {
  gemm_library_init();
  SOD2_RETURN_IF_ERROR(require_float_inputs(node));
  int64_t ta = 0, tb = 0;
  float alpha = 1.f, beta = 1.f;
  SOD2_ATTR(ta, node.attrs.get_int("transA", 0));
  SOD2_ATTR(tb, node.attrs.get_int("transB", 0));
  SOD2_ATTR(alpha, node.attrs.get_float("alpha", 1.f));
  SOD2_ATTR(beta, node.attrs.get_float("beta", 1.f));
  return std::unique_ptr<Kernel>(new GemmKernel(ta != 0, tb != 0, alpha, beta, epi));
}

Expected<std::unique_ptr<Kernel>> make_gemm(const NodeInfo& node) {
  return make_gemm_kernel(node, Epilogue{});
}

}  // namespace sod2::rt
