// MatMul, Gemm and their fused forms on shaders/matmul.comp: one strided SGEMM whose operands'
// layouts (row-major, transposed, broadcast batches) are element strides in push constants.
#include <algorithm>
#include <array>

#include "runtime/kernels/linalg/common.h"
#include "runtime/vulkan/kernels/vulkan_kernels_internal.h"

namespace sod2::rt::vk {
namespace {

const std::vector<uint32_t> kMatmulSpirv =
#include "shaders/matmul.comp.spv.inc"
    ;

constexpr int64_t kTile = 64;  // BM = BN of the shader
constexpr int kMaxBatchDims = 3;

// Mirrors the shader's push constants.
struct MatMulPush {
  uint32_t m, n, k;
  uint32_t a_off, b_off, y_off;
  uint32_t a_sm, a_sk, b_sk, b_sn;
  uint32_t d1, d2;
  uint32_t a_bs0, a_bs1, a_bs2;
  uint32_t b_bs0, b_bs1, b_bs2;
  float alpha;
  uint32_t c_off, c_sm, c_sn;
  float c_beta;
  uint32_t bias_off, res_off;
  uint32_t flags, act;
  float act_alpha, act_beta;
};
static_assert(sizeof(MatMulPush) <= 128, "push constants are at most 128 bytes");

// One run's contraction: sizes, strides and the batch dims the shader walks.
struct Contraction {
  int64_t m = 1, n = 1, k = 1;
  int64_t a_sm = 0, a_sk = 0, b_sk = 0, b_sn = 0;
  int rank = 0;  // batch dims after merging
  int64_t batch[kMaxRank] = {}, a_bs[kMaxRank] = {}, b_bs[kMaxRank] = {};
  int64_t batches = 1;
};

bool fits_u32(int64_t v) { return v >= 0 && v <= int64_t{UINT32_MAX}; }

// Whether the shader can take `c` in one dispatch (else the CPU kernel runs it).
bool dispatchable(const Contraction& c) {
  if (c.rank > kMaxBatchDims || c.batches > kMaxGroups) return false;
  if ((c.m + kTile - 1) / kTile > kMaxGroups || (c.n + kTile - 1) / kTile > kMaxGroups)
    return false;
  for (int64_t v : {c.m, c.n, c.k, c.a_sm, c.a_sk, c.b_sk, c.b_sn})
    if (!fits_u32(v)) return false;
  for (int i = 0; i < c.rank; ++i)
    if (!fits_u32(c.a_bs[i]) || !fits_u32(c.b_bs[i])) return false;
  return true;
}

// Drops unit batch dims and merges neighbours both operands walk contiguously, so that
// e.g. [2,3,4,5] batches of a plain batched MatMul become one dim.
void merge_batch_dims(Contraction& c) {
  int r = 0;
  for (int i = 0; i < c.rank; ++i) {
    if (c.batch[i] == 1) continue;
    if (r > 0 && c.a_bs[r - 1] == c.a_bs[i] * c.batch[i] &&
        c.b_bs[r - 1] == c.b_bs[i] * c.batch[i]) {
      c.batch[r - 1] *= c.batch[i];
      c.a_bs[r - 1] = c.a_bs[i];
      c.b_bs[r - 1] = c.b_bs[i];
      continue;
    }
    c.batch[r] = c.batch[i];
    c.a_bs[r] = c.a_bs[i];
    c.b_bs[r] = c.b_bs[i];
    ++r;
  }
  c.rank = r;
}

// Records the dispatch of `c` into Y with Gemm's C (`cbuf`, may be absent) and the epilogue.
Status record(VulkanBackend& backend, const ComputePipeline& pipe, const Contraction& c,
              const BufferRef& a, const BufferRef& b, const BufferRef& y, const BufferRef* cbuf,
              int64_t c_sm, int64_t c_sn, float alpha, float beta, const EpilogueBuffers& e) {
  MatMulPush p{};
  p.m = static_cast<uint32_t>(c.m);
  p.n = static_cast<uint32_t>(c.n);
  p.k = static_cast<uint32_t>(c.k);
  p.a_off = a.word;
  p.b_off = b.word;
  p.y_off = y.word;
  p.a_sm = static_cast<uint32_t>(c.a_sm);
  p.a_sk = static_cast<uint32_t>(c.a_sk);
  p.b_sk = static_cast<uint32_t>(c.b_sk);
  p.b_sn = static_cast<uint32_t>(c.b_sn);
  // Batch dims right-aligned into the shader's three; missing ones are 1 with stride 0.
  std::array<int64_t, 3> d{1, 1, 1}, as{0, 0, 0}, bs{0, 0, 0};
  for (int i = 0; i < c.rank; ++i) {
    const int j = 3 - c.rank + i;
    d[j] = c.batch[i];
    as[j] = c.a_bs[i];
    bs[j] = c.b_bs[i];
  }
  p.d1 = static_cast<uint32_t>(d[1]);
  p.d2 = static_cast<uint32_t>(d[2]);
  p.a_bs0 = static_cast<uint32_t>(as[0]);
  p.a_bs1 = static_cast<uint32_t>(as[1]);
  p.a_bs2 = static_cast<uint32_t>(as[2]);
  p.b_bs0 = static_cast<uint32_t>(bs[0]);
  p.b_bs1 = static_cast<uint32_t>(bs[1]);
  p.b_bs2 = static_cast<uint32_t>(bs[2]);
  p.alpha = alpha;
  p.flags = e.flags;
  if (cbuf) {
    p.c_off = cbuf->word;
    p.c_sm = static_cast<uint32_t>(c_sm);
    p.c_sn = static_cast<uint32_t>(c_sn);
    p.c_beta = beta;
    p.flags |= kFlagC;
  }
  p.bias_off = e.bias.word;
  p.res_off = e.residual.word;
  p.act = e.act;
  p.act_alpha = e.alpha;
  p.act_beta = e.beta;
  return backend.dispatch(pipe, {a, b, y, cbuf ? *cbuf : y, e.bias, e.residual}, &p,
                          static_cast<uint32_t>((c.n + kTile - 1) / kTile),
                          static_cast<uint32_t>((c.m + kTile - 1) / kTile),
                          static_cast<uint32_t>(c.batches));
}

class VkMatMulKernel final : public BuiltinKernelBase {
 public:
  VkMatMulKernel(std::shared_ptr<VulkanBackend> backend, std::unique_ptr<Kernel> cpu,
                 const ComputePipeline* pipe, const Epilogue& epi)
      : BuiltinKernelBase(std::move(backend), std::move(cpu)), pipe_(pipe), epi_(epi) {}

  Status run(KernelContext& ctx) override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return invalid_argument("MatMul: needs inputs A and B");
    if (a->dtype != DType::kFloat || b->dtype != DType::kFloat) return run_on_cpu(ctx, "MatMul");
    Contraction c;
    Shape out;
    SOD2_RETURN_IF_ERROR(plan(a->shape, b->shape, &c, &out));
    if (!dispatchable(c)) return run_on_cpu(ctx, "MatMul");
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out));
    if (y->numel() == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(BufferRef yb, backend_->write_buffer(*y));
    SOD2_ASSIGN_OR_RETURN(EpilogueBuffers e,
                          epilogue_buffers(*backend_, epi_, ctx, "MatMul", *y, c.n, yb));
    if (!binding_covers(yb, y->numel()) ||
        ((e.flags & kFlagBias1) && !binding_covers(e.bias, c.n)) ||
        ((e.flags & kFlagResidual) && !binding_covers(e.residual, y->numel())))
      return run_on_cpu(ctx, "MatMul");
    // K = 0: the product is zeros, then the epilogue; Y stands in for the empty operands.
    if (c.k == 0) return record(*backend_, *pipe_, c, yb, yb, yb, nullptr, 0, 0, 1.f, 0.f, e);
    SOD2_ASSIGN_OR_RETURN(BufferRef ab, read_input(*backend_, *a, *y));
    SOD2_ASSIGN_OR_RETURN(BufferRef bb, read_input(*backend_, *b, *y));
    if (!binding_covers(ab, a->numel()) || !binding_covers(bb, b->numel()))
      return run_on_cpu(ctx, "MatMul");
    return record(*backend_, *pipe_, c, ab, bb, yb, nullptr, 0, 0, 1.f, 0.f, e);
  }

 private:
  // numpy matmul: 1-D operands become matrices (the added dim dropped from the result), batch
  // dims broadcast. Error messages are the CPU kernel's.
  static Status plan(const Shape& as, const Shape& bs, Contraction* c, Shape* out) {
    if (as.rank() == 0 || bs.rank() == 0)
      return invalid_argument("MatMul: operands must have rank >= 1, got " + as.to_string() +
                              " and " + bs.to_string());
    const bool a1 = as.rank() == 1, b1 = bs.rank() == 1;
    int64_t ad[kMaxRank + 1], bd[kMaxRank + 1];
    int ra = 0, rb = 0;
    if (a1) ad[ra++] = 1;
    for (int64_t d : as.dims()) ad[ra++] = d;
    for (int64_t d : bs.dims()) bd[rb++] = d;
    if (b1) bd[rb++] = 1;
    c->m = ad[ra - 2];
    c->k = ad[ra - 1];
    c->n = bd[rb - 1];
    if (bd[rb - 2] != c->k)
      return invalid_argument("MatMul: inner dims differ: A " + as.to_string() + ", B " +
                              bs.to_string());
    const int na = ra - 2, nb = rb - 2;
    const int r = std::max(na, nb);
    if (!Shape::fits(static_cast<size_t>(r) + 2)) return unsupported("MatMul: result rank above 8");
    c->rank = r;
    c->a_sm = c->k;
    c->a_sk = 1;
    c->b_sk = c->n;
    c->b_sn = 1;
    int64_t sa = c->m * c->k, sb = c->k * c->n;
    for (int i = r - 1; i >= 0; --i) {
      const int ia = i - (r - na), ib = i - (r - nb);
      const int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
      if (da != db && da != 1 && db != 1)
        return invalid_argument("MatMul: batch dims do not broadcast: A " + as.to_string() +
                                ", B " + bs.to_string());
      c->batch[i] = da == 1 ? db : da;
      c->a_bs[i] = da != 1 ? sa : 0;
      c->b_bs[i] = db != 1 ? sb : 0;
      sa *= da;
      sb *= db;
      c->batches *= c->batch[i];
    }
    *out = Shape();
    for (int i = 0; i < r; ++i) out->push_back(c->batch[i]);
    if (!a1) out->push_back(c->m);
    if (!b1) out->push_back(c->n);
    merge_batch_dims(*c);
    return Status::ok_status();
  }

  const ComputePipeline* pipe_;
  Epilogue epi_;
};

class VkGemmKernel final : public BuiltinKernelBase {
 public:
  VkGemmKernel(std::shared_ptr<VulkanBackend> backend, std::unique_ptr<Kernel> cpu,
               const ComputePipeline* pipe, bool ta, bool tb, float alpha, float beta,
               const Epilogue& epi)
      : BuiltinKernelBase(std::move(backend), std::move(cpu)),
        pipe_(pipe),
        trans_a_(ta),
        trans_b_(tb),
        alpha_(alpha),
        beta_(beta),
        epi_(epi) {}

  Status run(KernelContext& ctx) override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    // Slot 2 is C unless the epilogue took it (a fused Gemm that had no C).
    const Tensor* cin = epi_.bias_input == 2 || epi_.residual_input == 2 ? nullptr : ctx.input(2);
    if (!a || !b) return invalid_argument("Gemm: needs inputs A and B");
    if (a->dtype != DType::kFloat) return unsupported_dtype("Gemm", "A", a->dtype);
    if (b->dtype != DType::kFloat) return unsupported_dtype("Gemm", "B", b->dtype);
    if (cin && cin->dtype != DType::kFloat) return unsupported_dtype("Gemm", "C", cin->dtype);
    if (a->shape.rank() != 2 || b->shape.rank() != 2)
      return invalid_argument("Gemm: A and B must be 2-D, got " + a->shape.to_string() + " and " +
                              b->shape.to_string());
    Contraction c;
    c.m = trans_a_ ? a->shape[1] : a->shape[0];
    c.k = trans_a_ ? a->shape[0] : a->shape[1];
    const int64_t kb = trans_b_ ? b->shape[1] : b->shape[0];
    c.n = trans_b_ ? b->shape[0] : b->shape[1];
    if (c.k != kb)
      return invalid_argument("Gemm: inner dims differ: A " + a->shape.to_string() +
                              (trans_a_ ? " (transposed)" : "") + ", B " + b->shape.to_string() +
                              (trans_b_ ? " (transposed)" : ""));
    int64_t cm = 1, cn = 1;
    if (cin) {
      if (cin->shape.rank() > 2)
        return invalid_argument("Gemm: C " + cin->shape.to_string() + " has rank above 2");
      if (cin->shape.rank() >= 1) cn = cin->shape[cin->shape.rank() - 1];
      if (cin->shape.rank() == 2) cm = cin->shape[0];
      if ((cm != 1 && cm != c.m) || (cn != 1 && cn != c.n))
        return invalid_argument("Gemm: C " + cin->shape.to_string() + " does not broadcast to [" +
                                std::to_string(c.m) + "," + std::to_string(c.n) + "]");
    }
    const int64_t lda = a->shape[1], ldb = b->shape[1];
    c.a_sm = trans_a_ ? 1 : lda;
    c.a_sk = trans_a_ ? lda : 1;
    c.b_sk = trans_b_ ? 1 : ldb;
    c.b_sn = trans_b_ ? ldb : 1;
    if (!dispatchable(c)) return run_on_cpu(ctx, "Gemm");
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, Shape{c.m, c.n}));
    if (y->numel() == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(BufferRef yb, backend_->write_buffer(*y));
    SOD2_ASSIGN_OR_RETURN(EpilogueBuffers e,
                          epilogue_buffers(*backend_, epi_, ctx, "Gemm", *y, c.n, yb));
    // As the CPU kernel: beta = 0 ignores C altogether.
    const bool use_c = cin && beta_ != 0.f && cin->numel() > 0;
    BufferRef cb = yb;
    if (use_c) {
      SOD2_ASSIGN_OR_RETURN(cb, read_input(*backend_, *cin, *y));
    }
    const int64_t c_sm = cm == 1 ? 0 : cn, c_sn = cn == 1 ? 0 : 1;
    if (!binding_covers(yb, y->numel()) || (use_c && !binding_covers(cb, cin->numel())) ||
        ((e.flags & kFlagBias1) && !binding_covers(e.bias, c.n)) ||
        ((e.flags & kFlagResidual) && !binding_covers(e.residual, y->numel())))
      return run_on_cpu(ctx, "Gemm");
    if (c.k == 0)
      return record(*backend_, *pipe_, c, yb, yb, yb, use_c ? &cb : nullptr, c_sm, c_sn, alpha_,
                    beta_, e);
    SOD2_ASSIGN_OR_RETURN(BufferRef ab, read_input(*backend_, *a, *y));
    SOD2_ASSIGN_OR_RETURN(BufferRef bb, read_input(*backend_, *b, *y));
    if (!binding_covers(ab, a->numel()) || !binding_covers(bb, b->numel()))
      return run_on_cpu(ctx, "Gemm");
    return record(*backend_, *pipe_, c, ab, bb, yb, use_c ? &cb : nullptr, c_sm, c_sn, alpha_,
                  beta_, e);
  }

 private:
  const ComputePipeline* pipe_;
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  Epilogue epi_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_vk_matmul(std::shared_ptr<VulkanBackend> backend,
                                                 const NodeInfo& node, const Epilogue& epi,
                                                 std::unique_ptr<Kernel> cpu, std::string*) {
  SOD2_ASSIGN_OR_RETURN(const ComputePipeline* pipe,
                        backend->pipeline("sod2.matmul", kMatmulSpirv, 6, sizeof(MatMulPush)));
  (void)node;
  return std::unique_ptr<Kernel>(new VkMatMulKernel(std::move(backend), std::move(cpu), pipe, epi));
}

Expected<std::unique_ptr<Kernel>> make_vk_gemm(std::shared_ptr<VulkanBackend> backend,
                                               const NodeInfo& node, const Epilogue& epi,
                                               std::unique_ptr<Kernel> cpu, std::string*) {
  // FusedGemm carries Gemm's own alpha and beta as gemm_alpha / gemm_beta (fused_ops.h).
  const bool fused = node.op_type == "FusedGemm";
  int64_t ta = 0, tb = 0;
  float alpha = 1.f, beta = 1.f;
  SOD2_ATTR(ta, node.attrs.get_int("transA", 0));
  SOD2_ATTR(tb, node.attrs.get_int("transB", 0));
  SOD2_ATTR(alpha, node.attrs.get_float(fused ? "gemm_alpha" : "alpha", 1.f));
  SOD2_ATTR(beta, node.attrs.get_float(fused ? "gemm_beta" : "beta", 1.f));
  SOD2_ASSIGN_OR_RETURN(const ComputePipeline* pipe,
                        backend->pipeline("sod2.matmul", kMatmulSpirv, 6, sizeof(MatMulPush)));
  return std::unique_ptr<Kernel>(new VkGemmKernel(std::move(backend), std::move(cpu), pipe, ta != 0,
                                                  tb != 0, alpha, beta, epi));
}

}  // namespace sod2::rt::vk
