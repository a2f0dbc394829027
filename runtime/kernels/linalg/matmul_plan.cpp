#include "runtime/kernels/linalg/matmul_plan.h"

#include <algorithm>
#include <string>

namespace sod2::rt {

void MatMulPlan::matrices(int64_t idx, int64_t* a_mat, int64_t* b_mat) const {
  *a_mat = *b_mat = 0;
  for (int i = rank - 1; i >= 0; --i) {
    const int64_t d = idx % batch[i];
    idx /= batch[i];
    *a_mat += d * a_stride[i];
    *b_mat += d * b_stride[i];
  }
}

Expected<MatMulPlan> plan_matmul(const char* op, const Shape& as, const Shape& bs) {
  if (as.rank() == 0 || bs.rank() == 0)
    return invalid_argument(std::string(op) + ": operands must have rank >= 1, got " +
                            as.to_string() + " and " + bs.to_string());
  MatMulPlan p;
  // Operand dims with 1-D operands made matrices: A [k] -> [1, k], B [k] -> [k, 1].
  const bool a1 = as.rank() == 1, b1 = bs.rank() == 1;
  int64_t ad[kMaxRank + 1], bd[kMaxRank + 1];
  int ra = 0, rb = 0;
  if (a1) ad[ra++] = 1;
  for (int64_t d : as.dims()) ad[ra++] = d;
  for (int64_t d : bs.dims()) bd[rb++] = d;
  if (b1) bd[rb++] = 1;
  p.m = ad[ra - 2];
  p.k = ad[ra - 1];
  p.n = bd[rb - 1];
  if (bd[rb - 2] != p.k)
    return invalid_argument(std::string(op) + ": inner dims differ: A " + as.to_string() + ", B " +
                            bs.to_string());
  const int na = ra - 2, nb = rb - 2;  // batch dims of each operand
  const int r = std::max(na, nb);
  if (!Shape::fits(static_cast<size_t>(r) + 2))
    return unsupported(std::string(op) + ": result rank above 8");
  p.rank = r;
  int64_t sa = 1, sb = 1;
  for (int i = r - 1; i >= 0; --i) {
    const int ia = i - (r - na), ib = i - (r - nb);  // negative: the operand lacks this dim
    const int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return invalid_argument(std::string(op) + ": batch dims do not broadcast: A " +
                              as.to_string() + ", B " + bs.to_string());
    p.batch[i] = da == 1 ? db : da;
    p.a_stride[i] = da != 1 ? sa : 0;
    p.b_stride[i] = db != 1 ? sb : 0;
    sa *= da;
    sb *= db;
    p.batches *= p.batch[i];
  }
  for (int i = 0; i < r; ++i) p.out.push_back(p.batch[i]);
  if (!a1) p.out.push_back(p.m);
  if (!b1) p.out.push_back(p.n);
  bool b_has_batch = false, a_full = true;
  for (int i = 0; i < r; ++i) {
    b_has_batch |= p.b_stride[i] != 0;
    // A's batches are contiguous matrices when none of its batch dims broadcast.
    a_full &= p.a_stride[i] != 0 || p.batch[i] == 1;
  }
  p.a_folds = !b_has_batch && a_full;
  return p;
}

}  // namespace sod2::rt
