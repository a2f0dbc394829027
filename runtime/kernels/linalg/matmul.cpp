// MatMul with numpy semantics: 1-D operands get a dim added (and dropped from the result), batch
// dims broadcast. float32 goes through the GEMM library; int32/int64 through a plain loop.
#include <algorithm>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/linalg_kernels.h"
#include "runtime/kernels/linalg/matmul_plan.h"

namespace sod2::rt {
namespace {

// Element offsets of batch `idx` into A and B.
void batch_offsets(const MatMulPlan& p, int64_t idx, int64_t* oa, int64_t* ob) {
  p.matrices(idx, oa, ob);
  *oa *= p.m * p.k;
  *ob *= p.k * p.n;
}

template <typename T>
void matmul_int(const MatMulPlan& p, const T* a, const T* b, T* c, ThreadPool& pool) {
  pool.parallel_for(p.batches * p.m, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t oa, ob;
      batch_offsets(p, r / p.m, &oa, &ob);
      const T* arow = a + oa + (r % p.m) * p.k;
      T* crow = c + r * p.n;
      std::fill(crow, crow + p.n, T{0});
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const T av = arow[kk];
        const T* brow = b + ob + kk * p.n;
        for (int64_t j = 0; j < p.n; ++j) crow[j] += av * brow[j];
      }
    }
  });
}

class MatMulKernel : public Kernel {
 public:
  explicit MatMulKernel(const Epilogue& epi) : epi_(epi) {}

  Status run(KernelContext& ctx) override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return invalid_argument("MatMul: needs inputs A and B");
    if (a->dtype != b->dtype)
      return invalid_argument(std::string("MatMul: A is ") + dtype_name(a->dtype) + " but B is " +
                              dtype_name(b->dtype));
    SOD2_ASSIGN_OR_RETURN(MatMulPlan p, plan_matmul("MatMul", a->shape, b->shape));
    if (a->dtype == DType::kInt32 || a->dtype == DType::kInt64) {
      if (!epi_.empty()) return unsupported("MatMul: fused epilogue needs float32");
      SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, a->dtype, p.out));
      if (y->numel() == 0) return Status::ok_status();
      if (a->dtype == DType::kInt32)
        matmul_int(p, a->as<int32_t>(), b->as<int32_t>(), y->as<int32_t>(), ctx.pool());
      else
        matmul_int(p, a->as<int64_t>(), b->as<int64_t>(), y->as<int64_t>(), ctx.pool());
      return Status::ok_status();
    }
    if (a->dtype != DType::kFloat) return unsupported_dtype("MatMul", "A", a->dtype);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, p.out));
    if (y->numel() == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(EpilogueRun e,
                          resolve_epilogue(epi_, ctx, "MatMul", y->shape, p.n, nullptr));
    const float* A = a->as<float>();
    const float* B = b->as<float>();
    float* C = y->as<float>();

    GemmArgs g;
    g.n = p.n;
    g.k = p.k;
    g.lda = p.k;
    g.ldb = p.n;
    g.ldc = p.n;
    // The tile callback of one batch (`base`: the batch's offset into C).
    auto epilogue = [&](int64_t base, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
      const int64_t off = base + m0 * p.n + n0;
      e.apply(C + off, e.residual ? e.residual + off : nullptr, m1 - m0, n1 - n0, p.n, n0, false);
    };
    if (p.a_folds || p.batches == 1) {
      // One GEMM: A's batches are rows of one [batches*m, k] matrix against a shared B.
      int64_t oa, ob;
      batch_offsets(p, 0, &oa, &ob);
      g.m = p.a_folds ? p.batches * p.m : p.m;
      g.a = A;
      g.b = B + ob;
      g.c = C;
      auto tile = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
        epilogue(0, m0, m1, n0, n1);
      };
      const TileFn fn(tile);
      sgemm(ctx.pool(), g, e.empty() ? nullptr : &fn);
      return Status::ok_status();
    }
    g.m = p.m;
    const double macs = static_cast<double>(p.m) * p.n * std::max<int64_t>(p.k, 1);
    const int64_t threads = ctx.pool().num_threads();
    if (parallel_parts(ctx.pool(), macs) > 1 && p.batches < 2 * threads) {
      // Few big matrices: one parallel GEMM per batch. (With at least two batches per thread,
      // whole batches per thread below balance as well without a barrier per batch.)
      for (int64_t bi = 0; bi < p.batches; ++bi) {
        int64_t oa, ob;
        batch_offsets(p, bi, &oa, &ob);
        g.a = A + oa;
        g.b = B + ob;
        g.c = C + bi * p.m * p.n;
        auto tile = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
          epilogue(bi * p.m * p.n, m0, m1, n0, n1);
        };
        const TileFn fn(tile);
        sgemm(ctx.pool(), g, e.empty() ? nullptr : &fn);
      }
      return Status::ok_status();
    }
    // Many matrices (attention heads): batches in parallel, each GEMM on one thread.
    const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(2.0e6 / std::max(macs, 1.0)));
    ctx.pool().parallel_for(p.batches, grain, [&](int64_t b0, int64_t b1) {
      for (int64_t bi = b0; bi < b1; ++bi) {
        int64_t oa, ob;
        batch_offsets(p, bi, &oa, &ob);
        GemmArgs s = g;
        s.a = A + oa;
        s.b = B + ob;
        s.c = C + bi * p.m * p.n;
        sgemm_serial(s);
        if (!e.empty()) epilogue(bi * p.m * p.n, 0, p.m, 0, p.n);
      }
    });
    return Status::ok_status();
  }

 private:
  Epilogue epi_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_matmul_kernel(const NodeInfo& node, const Epilogue& epi) {
  gemm_library_init();
  if (node.input_dtypes.size() < 2) return invalid_argument("MatMul: needs inputs A and B");
  const DType t = node.input_dtypes[0];
  if (t != DType::kFloat && t != DType::kInt32 && t != DType::kInt64 && t != DType::kUndefined)
    return unsupported(std::string("MatMul: dtype ") + dtype_name(t) +
                       " is not supported (float32, int32, int64)");
  return std::unique_ptr<Kernel>(new MatMulKernel(epi));
}

Expected<std::unique_ptr<Kernel>> make_matmul(const NodeInfo& node) {
  return make_matmul_kernel(node, Epilogue{});
}

}  // namespace sod2::rt
