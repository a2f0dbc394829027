// The loops elementwise kernels share: a binary op over a broadcast plan (specialised for the
// contiguous, scalar-left and scalar-right row shapes the compiler vectorises), and a unary map
// split across the thread pool.
#pragma once

#include <cstdint>

#include "runtime/kernels/math/broadcast.h"
#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {

// One row of out[i] = f(a[i*sa], b[i*sb]).
template <class TO, class TA, class TB, class F>
inline void binary_row(TO* out, const TA* a, const TB* b, int64_t n, int64_t sa, int64_t sb,
                       const F& f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (sa == 0 && sb == 1) {
    const TA x = *a;
    for (int64_t i = 0; i < n; ++i) out[i] = f(x, b[i]);
  } else if (sa == 1 && sb == 0) {
    const TB y = *b;
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], y);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i * sa], b[i * sb]);
  }
}

// out = f(a, b) over a two-input plan, in parallel chunks of the output.
template <class TO, class TA, class TB, class F>
void run_binary(ThreadPool& pool, const BroadcastPlan& plan, const TA* a, const TB* b, TO* out,
                const F& f, int64_t grain = kElementwiseGrain) {
  const int64_t sa = plan.inner_stride(0), sb = plan.inner_stride(1);
  pool.parallel_for(plan.numel, grain, [&](int64_t begin, int64_t end) {
    for_each_row(plan, begin, end, [&](int64_t pos, const int64_t* off, int64_t count) {
      binary_row(out + pos, a + off[0], b + off[1], count, sa, sb, f);
    });
  });
}

// out[i] = f(in[i]) for i in [0, n), in parallel.
template <class TO, class TI, class F>
void run_unary(ThreadPool& pool, int64_t n, const TI* in, TO* out, const F& f,
               int64_t grain = kElementwiseGrain) {
  pool.parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = f(in[i]);
  });
}

// One step of Max, Min, Sum or Mean over n inputs (Mean divides at the end): the variadic kernels
// and the fused elementwise kernel fold with it, so they agree on every value.
enum class Fold { kMax, kMin, kSum, kMean };

template <Fold F, class T>
T fold_step(T a, T b) {
  if constexpr (F == Fold::kMax || F == Fold::kMin) {
    // NaN in either operand propagates, as numpy.maximum / minimum do.
    if constexpr (kIsFloat<T>) {
      if (a != a) return a;
    }
    if constexpr (F == Fold::kMax) {
      return b > a || b != b ? b : a;
    } else {
      return b < a || b != b ? b : a;
    }
  } else {
    return static_cast<T>(a + b);
  }
}

}  // namespace sod2::rt::math
