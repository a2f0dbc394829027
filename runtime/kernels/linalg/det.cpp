// Det (opset 11): the determinant of each [M, M] matrix of X [*, M, M], by LU decomposition with
// partial pivoting in double precision (a singular matrix gives 0, the empty matrix 1).
#include <cmath>
#include <string>
#include <utility>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/linalg_kernels.h"

namespace sod2::rt {
namespace {

// Determinant of the m x m matrix in `a` (overwritten with its LU factors).
double lu_det(double* a, int64_t m) {
  double det = 1.0;
  for (int64_t k = 0; k < m; ++k) {
    int64_t piv = k;
    for (int64_t i = k + 1; i < m; ++i)
      if (std::fabs(a[i * m + k]) > std::fabs(a[piv * m + k])) piv = i;
    if (a[piv * m + k] == 0.0) return 0.0;
    if (piv != k) {
      for (int64_t j = 0; j < m; ++j) std::swap(a[k * m + j], a[piv * m + j]);
      det = -det;
    }
    const double p = a[k * m + k];
    det *= p;
    for (int64_t i = k + 1; i < m; ++i) {
      const double f = a[i * m + k] / p;
      if (f == 0.0) continue;
      for (int64_t j = k + 1; j < m; ++j) a[i * m + j] -= f * a[k * m + j];
    }
  }
  return det;
}

template <typename T>
void det_batch(const T* x, T* y, int64_t batch, int64_t m, double* work) {
  for (int64_t b = 0; b < batch; ++b) {
    const T* src = x + b * m * m;
    for (int64_t i = 0; i < m * m; ++i) work[i] = static_cast<double>(src[i]);
    y[b] = static_cast<T>(lu_det(work, m));
  }
}

Status bad_dtype(DType t) {
  return unsupported(std::string("Det: dtype ") + dtype_name(t) +
                     " of X is not supported (float32, float64)");
}

// A matrix side above this is refused: LU is O(M^3) per matrix.
constexpr int64_t kMaxSide = 1 << 13;

class DetKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("Det: needs input X");
    if (x->dtype != DType::kFloat && x->dtype != DType::kDouble) return bad_dtype(x->dtype);
    const Shape& s = x->shape;
    const int r = s.rank();
    if (r < 2 || s[r - 1] != s[r - 2])
      return invalid_argument("Det: X " + s.to_string() + " must be [*, M, M] (square matrices)");
    const int64_t m = s[r - 1];
    if (m > kMaxSide)
      return invalid_argument("Det: matrices of side " + std::to_string(m) + " exceed the limit " +
                              std::to_string(kMaxSide));
    Shape out;
    for (int i = 0; i < r - 2; ++i) out.push_back(s[i]);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, out));
    const int64_t batch = out.numel();
    if (batch == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(m * m + 1) * sizeof(double)));
    double* work = static_cast<double*>(mem);
    if (x->dtype == DType::kFloat)
      det_batch(x->as<const float>(), y->as<float>(), batch, m, work);
    else
      det_batch(x->as<const double>(), y->as<double>(), batch, m, work);
    return Status::ok_status();
  }
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_det(const NodeInfo& node) {
  for (size_t i = 0; i < node.input_dtypes.size(); ++i) {
    const DType t = node.input_dtypes[i];
    if (t != DType::kUndefined && t != DType::kFloat && t != DType::kDouble) return bad_dtype(t);
  }
  return std::unique_ptr<Kernel>(new DetKernel());
}

}  // namespace sod2::rt
