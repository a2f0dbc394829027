// MatMul with numpy semantics: 1-D operands get a dim added (and dropped from the result), batch
// dims broadcast. float32 goes through the GEMM library; int32/int64 through a plain loop.
// FusedMatMul may read an operand through a permutation of its input (a_perm / b_perm,
// fused_ops.h): each matrix is then a strided view the GEMM reads as it is, transposed when its
// rows are the contiguous dim, so a Transpose before a MatMul (attention's K^T and its head
// splits) writes nothing.
#include <algorithm>
#include <string>
#include <vector>

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

// How the GEMM reads one float operand: whether its matrices are stored transposed, their
// leading dimension, and per batch dim of the plan, the elements one step skips (0 where the
// operand broadcasts).
struct OperandView {
  bool trans = false;
  int64_t ld = 0;
  int64_t batch_stride[kMaxRank] = {};
};

// The logical shape of an operand that is `perm` (possibly empty: none) applied to `in`, and its
// elements' strides in `in`.
Status permuted_operand(const char* which, const std::vector<int64_t>& perm, const Shape& in,
                        Shape* shape, int64_t* strides) {
  const int r = in.rank();
  int64_t contiguous[kMaxRank];
  int64_t s = 1;
  for (int i = r - 1; i >= 0; --i) {
    contiguous[i] = s;
    s *= in[i];
  }
  if (perm.empty()) {
    *shape = in;
    std::copy(contiguous, contiguous + r, strides);
    return Status::ok_status();
  }
  if (static_cast<int>(perm.size()) != r || r < 2)
    return invalid_argument(std::string("FusedMatMul: ") + which + "_perm " + dims_string(perm) +
                            " does not permute the dims of " + in.to_string());
  bool seen[kMaxRank] = {};
  Shape out;
  for (int i = 0; i < r; ++i) {
    const int64_t p = perm[static_cast<size_t>(i)];
    if (p < 0 || p >= r || seen[p])
      return invalid_argument(std::string("FusedMatMul: ") + which + "_perm " + dims_string(perm) +
                              " does not permute the dims of " + in.to_string());
    seen[p] = true;
    out.push_back(in[p]);
    strides[i] = contiguous[p];
  }
  // A GEMM reads matrices whose rows or columns are contiguous.
  if (perm[static_cast<size_t>(r - 1)] != r - 1 && perm[static_cast<size_t>(r - 2)] != r - 1)
    return invalid_argument(std::string("FusedMatMul: ") + which + "_perm " + dims_string(perm) +
                            " moves the last dim of " + in.to_string() +
                            " into the batch dims: no GEMM reads such matrices");
  *shape = out;
  return Status::ok_status();
}

// The view of an operand with element strides `strides` (rows, columns last), aligned to the
// plan's batch dims. A 1-D operand (never permuted) is the one matrix numpy makes of it: A [k] as
// [1, k], B [k] as [k, 1].
OperandView operand_view(const MatMulPlan& p, const Shape& shape, const int64_t* strides,
                         bool is_b) {
  OperandView v;
  const int r = shape.rank();
  if (r == 1) {
    v.ld = is_b ? 1 : std::max<int64_t>(shape[0], 1);
    return v;
  }
  const int64_t rows = strides[r - 2], cols = strides[r - 1];
  // A 1-row or 1-column matrix may have either stride: prefer the plain layout.
  v.trans = !(cols == 1 || shape[r - 1] == 1) && (rows == 1 || shape[r - 2] == 1);
  v.ld = v.trans ? (shape[r - 1] == 1 ? std::max<int64_t>(shape[r - 2], 1) : cols)
                 : (shape[r - 2] == 1 ? std::max<int64_t>(shape[r - 1], 1) : rows);
  const int own = r - 2;
  for (int j = 0; j < p.rank; ++j) {
    const int i = j - (p.rank - own);
    v.batch_stride[j] = i >= 0 && shape[i] != 1 ? strides[i] : 0;
  }
  return v;
}

int64_t view_offset(const MatMulPlan& p, const OperandView& v, int64_t idx) {
  int64_t off = 0;
  for (int i = p.rank - 1; i >= 0; --i) {
    off += idx % p.batch[i] * v.batch_stride[i];
    idx /= p.batch[i];
  }
  return off;
}

class MatMulKernel : public Kernel {
 public:
  MatMulKernel(const Epilogue& epi, std::vector<int64_t> a_perm, std::vector<int64_t> b_perm)
      : epi_(epi), a_perm_(std::move(a_perm)), b_perm_(std::move(b_perm)) {}

  Status run(KernelContext& ctx) override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return invalid_argument("MatMul: needs inputs A and B");
    if (a->dtype != b->dtype)
      return invalid_argument(std::string("MatMul: A is ") + dtype_name(a->dtype) + " but B is " +
                              dtype_name(b->dtype));
    if (a->dtype == DType::kFloat && b->dtype == DType::kFloat) return run_float(ctx, *a, *b);
    if (!a_perm_.empty() || !b_perm_.empty())
      return unsupported("FusedMatMul: a permuted operand needs float32");
    SOD2_ASSIGN_OR_RETURN(MatMulPlan p, plan_matmul("MatMul", a->shape, b->shape));
    if (a->dtype != DType::kInt32 && a->dtype != DType::kInt64)
      return unsupported_dtype("MatMul", "A", a->dtype);
    if (!epi_.empty()) return unsupported("MatMul: fused epilogue needs float32");
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, a->dtype, p.out));
    if (y->numel() == 0) return Status::ok_status();
    if (a->dtype == DType::kInt32)
      matmul_int(p, a->as<int32_t>(), b->as<int32_t>(), y->as<int32_t>(), ctx.pool());
    else
      matmul_int(p, a->as<int64_t>(), b->as<int64_t>(), y->as<int64_t>(), ctx.pool());
    return Status::ok_status();
  }

 private:
  // float32 through the GEMM library, each operand read through its view: contiguous, or (with
  // a_perm / b_perm) the permutation's strides.
  Status run_float(KernelContext& ctx, const Tensor& a, const Tensor& b) {
    Shape as, bs;
    int64_t a_strides[kMaxRank], b_strides[kMaxRank];
    SOD2_RETURN_IF_ERROR(permuted_operand("a", a_perm_, a.shape, &as, a_strides));
    SOD2_RETURN_IF_ERROR(permuted_operand("b", b_perm_, b.shape, &bs, b_strides));
    SOD2_ASSIGN_OR_RETURN(MatMulPlan p, plan_matmul("MatMul", as, bs));
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, p.out));
    if (y->numel() == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(EpilogueRun e,
                          resolve_epilogue(epi_, ctx, "MatMul", y->shape, p.n, nullptr));
    const OperandView av = operand_view(p, as, a_strides, false),
                      bv = operand_view(p, bs, b_strides, true);
    const float* A = a.as<float>();
    const float* B = b.as<float>();
    float* C = y->as<float>();
    GemmArgs g;
    g.trans_a = av.trans;
    g.trans_b = bv.trans;
    g.m = p.m;
    g.n = p.n;
    g.k = p.k;
    g.lda = av.ld;
    g.ldb = bv.ld;
    g.ldc = p.n;
    // The tile callback of one batch (`base`: the batch's offset into C).
    auto epilogue = [&](int64_t base, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
      const int64_t off = base + m0 * p.n + n0;
      e.apply(C + off, e.residual ? e.residual + off : nullptr, m1 - m0, n1 - n0, p.n, n0, false);
    };
    if (p.a_folds && a_perm_.empty()) {
      // One GEMM: A's batches are rows of one [batches*m, k] matrix against a shared B.
      g.m = p.batches * p.m;
      g.a = A;
      g.b = B;
      g.c = C;
      auto tile = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
        epilogue(0, m0, m1, n0, n1);
      };
      const TileFn fn(tile);
      sgemm(ctx.pool(), g, e.empty() ? nullptr : &fn);
      return Status::ok_status();
    }
    const double macs = static_cast<double>(p.m) * p.n * std::max<int64_t>(p.k, 1);
    const int64_t threads = ctx.pool().num_threads();
    if (p.batches == 1 || (parallel_parts(ctx.pool(), macs) > 1 && p.batches < 2 * threads)) {
      // Few big matrices: one parallel GEMM per batch. (With at least two batches per thread,
      // whole batches per thread below balance as well without a barrier per batch.)
      for (int64_t bi = 0; bi < p.batches; ++bi) {
        g.a = A + view_offset(p, av, bi);
        g.b = B + view_offset(p, bv, bi);
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
        GemmArgs s = g;
        s.a = A + view_offset(p, av, bi);
        s.b = B + view_offset(p, bv, bi);
        s.c = C + bi * p.m * p.n;
        sgemm_serial(s);
        if (!e.empty()) epilogue(bi * p.m * p.n, 0, p.m, 0, p.n);
      }
    });
    return Status::ok_status();
  }

  Epilogue epi_;
  std::vector<int64_t> a_perm_, b_perm_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_matmul_kernel(const NodeInfo& node, const Epilogue& epi) {
  gemm_library_init();
  if (node.input_dtypes.size() < 2) return invalid_argument("MatMul: needs inputs A and B");
  const DType t = node.input_dtypes[0];
  if (t != DType::kFloat && t != DType::kInt32 && t != DType::kInt64 && t != DType::kUndefined)
    return unsupported(std::string("MatMul: dtype ") + dtype_name(t) +
                       " is not supported (float32, int32, int64)");
  std::vector<int64_t> a_perm, b_perm;
  SOD2_ASSIGN_OR_RETURN(a_perm, node.attrs.get_ints("a_perm", {}));
  SOD2_ASSIGN_OR_RETURN(b_perm, node.attrs.get_ints("b_perm", {}));
  if (a_perm.size() > static_cast<size_t>(kMaxRank) ||
      b_perm.size() > static_cast<size_t>(kMaxRank))
    return invalid_argument("FusedMatMul: a_perm / b_perm longer than the maximum rank");
  return std::unique_ptr<Kernel>(new MatMulKernel(epi, std::move(a_perm), std::move(b_perm)));
}

Expected<std::unique_ptr<Kernel>> make_matmul(const NodeInfo& node) {
  return make_matmul_kernel(node, Epilogue{});
}

}  // namespace sod2::rt
