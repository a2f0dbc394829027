// The shapes of one numpy-style matmul, shared by MatMul and the integer MatMuls: 1-D operands
// get a dim added (and dropped from the result), batch dims broadcast. Fixed-size arrays:
// planning runs on every execution and must not touch the heap.
#pragma once

#include <cstdint>

#include "core/status/status.h"
#include "runtime/tensor/shape.h"

namespace sod2::rt {

struct MatMulPlan {
  int64_t m = 1, n = 1, k = 1;
  Shape out;
  int rank = 0;                  // batch dims
  int64_t batch[kMaxRank] = {};  // broadcast batch dims
  // Per batch dim, how many of the operand's own matrices one step skips; 0 where it broadcasts.
  int64_t a_stride[kMaxRank] = {}, b_stride[kMaxRank] = {};
  int64_t batches = 1;
  bool a_folds = false;  // B has no batch: A's batches fold into M (one big GEMM)

  // The matrices of batch `idx` in A and in B (their indices among each operand's matrices).
  void matrices(int64_t idx, int64_t* a_mat, int64_t* b_mat) const;
};

// Errors name `op`: a scalar operand, inner dims that differ, batch dims that do not broadcast,
// a result rank above kMaxRank.
Expected<MatMulPlan> plan_matmul(const char* op, const Shape& a, const Shape& b);

}  // namespace sod2::rt
