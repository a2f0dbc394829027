// The portable single-precision GEMM (SOD2_LINALG_GEMM=builtin): for targets with neither oneDNN
// nor OpenBLAS, such as an Android build with the NDK alone. Always compiled, so the host's tests
// check it against a reference whichever library the host build uses.
#pragma once

#include "runtime/kernels/linalg/gemm.h"

namespace sod2::rt {

// C = alpha * op(A) * op(B) + beta * C on the calling thread; beta == 0 never reads C.
void sgemm_builtin(const GemmArgs& g);

}  // namespace sod2::rt
