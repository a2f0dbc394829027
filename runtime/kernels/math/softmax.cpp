// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to 2-D at `axis` (default
// 1) and each row of the flattened trailing dims is normalised; from 13 on, one axis (default -1)
// is, which leaves an `inner` stride when the axis is not the last.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "runtime/kernels/math/accumulate.h"
#include "runtime/kernels/math/math_common.h"
#include "runtime/kernels/math/vec_kernels.h"

namespace sod2::rt::math {
namespace {

// The double path (float has vectorised loops in vec_kernels.cpp, same algorithm).
// One contiguous row of length n. The max is subtracted first so exp never overflows; sums are
// kept in double so long rows stay accurate.
template <class T, bool kLog>
void softmax_row(const T* x, T* y, int64_t n) {
  T max = x[0];
  for (int64_t i = 1; i < n; ++i) max = x[i] > max ? x[i] : max;
  // exp first into y, then the sum in separate lanes; LogSoftmax overwrites y afterwards.
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - max);
  const double sum = row_sum(y, n);
  if constexpr (kLog) {
    // (x - max) - log(sum) keeps the small results near the maximum accurate.
    const T lse = static_cast<T>(std::log(sum));
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - max) - lse;
  } else {
    const T scale = static_cast<T>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) y[i] *= scale;
  }
}

// A [n, inner] block normalised along n, vectorised across inner; `max` and `sum` hold inner
// values each.
template <class T, bool kLog>
void softmax_block(const T* x, T* y, int64_t n, int64_t inner, T* max, double* sum) {
  for (int64_t j = 0; j < inner; ++j) {
    max[j] = x[j];
    sum[j] = 0;
  }
  for (int64_t i = 1; i < n; ++i) {
    const T* row = x + i * inner;
    for (int64_t j = 0; j < inner; ++j) max[j] = row[j] > max[j] ? row[j] : max[j];
  }
  for (int64_t i = 0; i < n; ++i) {
    const T* row = x + i * inner;
    T* out = y + i * inner;
    for (int64_t j = 0; j < inner; ++j) {
      const T e = std::exp(row[j] - max[j]);
      if constexpr (!kLog) out[j] = e;
      sum[j] += e;
    }
  }
  if constexpr (kLog) {
    for (int64_t j = 0; j < inner; ++j) sum[j] = std::log(sum[j]);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < inner; ++j)
        y[i * inner + j] = (x[i * inner + j] - max[j]) - static_cast<T>(sum[j]);
    }
  } else {
    for (int64_t j = 0; j < inner; ++j) sum[j] = 1.0 / sum[j];
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) y[i * inner + j] *= static_cast<T>(sum[j]);
  }
}

// Elements per parallel chunk: a row's three passes cost about an exp per element.
constexpr int64_t kSoftmaxGrain = 16384;

template <bool kLog>
class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(int64_t axis, bool coerce_2d) : axis_(axis), coerce_2d_(coerce_2d) {}

  Status run(KernelContext& ctx) override {
    const char* name = kLog ? "LogSoftmax" : "Softmax";
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(name) + ": input is missing");
    const int rank = x->shape.rank();
    int axis = 0;
    if (coerce_2d_ && axis_ == rank) {
      axis = rank;  // opset < 13 allows axis == rank: rows of one element
    } else {
      SOD2_RETURN_IF_ERROR(normalize_axis(name, axis_, std::max(rank, 1), &axis));
    }
    const int64_t outer = dims_product(x->shape, 0, std::min(axis, rank));
    int64_t n = 1, inner = 1;
    if (coerce_2d_) {
      n = dims_product(x->shape, std::min(axis, rank), rank);
    } else if (rank > 0) {
      n = x->shape[axis];
      inner = dims_product(x->shape, axis + 1, rank);
    }
    return visit_dtype(name, x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
        if (x->numel() == 0) return Status::ok_status();
        const T* in = x->as<const T>();
        T* out = y->as<T>();
        if constexpr (std::is_same_v<T, float>) {
          run_float(ctx.pool(), in, out, outer, n, inner);
          return Status::ok_status();
        } else {
          return run_generic<T>(ctx, in, out, outer, n, inner);
        }
      } else {
        return unsupported_dtype(name, x->dtype);
      }
    });
  }

 private:
  // double: plain loops (libm's exp), in parallel over outer blocks.
  template <class T>
  static Status run_generic(KernelContext& ctx, const T* in, T* out, int64_t outer, int64_t n,
                            int64_t inner) {
    const int64_t block = n * inner;
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / block);
    if (inner == 1) {
      ctx.pool().parallel_for(outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) softmax_row<T, kLog>(in + o * n, out + o * n, n);
      });
      return Status::ok_status();
    }
    // Per outer block: inner maxima and sums, from scratch.
    const size_t per_block = static_cast<size_t>(inner) * (sizeof(T) + sizeof(double));
    SOD2_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(per_block * static_cast<size_t>(outer)));
    auto* sums = static_cast<double*>(scratch);
    T* maxes = reinterpret_cast<T*>(sums + outer * inner);
    ctx.pool().parallel_for(outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        softmax_block<T, kLog>(in + o * block, out + o * block, n, inner, maxes + o * inner,
                               sums + o * inner);
      }
    });
    return Status::ok_status();
  }

  // float: the vectorised row or column loops, in parallel over rows (inner == 1) or over
  // (block, column chunk) pairs, so an axis with few outer blocks still spreads over threads.
  static void run_float(ThreadPool& pool, const float* in, float* out, int64_t outer, int64_t n,
                        int64_t inner) {
    if (inner == 1) {
      const int64_t grain = std::max<int64_t>(1, kSoftmaxGrain / n);
      pool.parallel_for(outer, grain, [&](int64_t b, int64_t e) {
        softmax_rows_f32(in + b * n, out + b * n, e - b, n, kLog);
      });
      return;
    }
    const int64_t width = std::min(inner, kSoftmaxMaxCols);
    const int64_t chunks = (inner + width - 1) / width;
    const int64_t grain = std::max<int64_t>(1, kSoftmaxGrain / (n * width));
    pool.parallel_for(outer * chunks, grain, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / chunks, j = (t % chunks) * width;
        const int64_t offset = o * n * inner + j;
        softmax_cols_f32(in + offset, out + offset, n, inner, std::min(width, inner - j), kLog);
      }
    });
  }

  int64_t axis_;
  bool coerce_2d_;
};

// The index of the first maximum of n strided values; a NaN counts as the maximum (the first
// NaN wins), like numpy's argmax.
template <class T>
int64_t first_argmax(const T* x, int64_t n, int64_t stride) {
  int64_t best = 0;
  T max = x[0];
  if (max != max) return 0;
  for (int64_t i = 1; i < n; ++i) {
    const T v = x[i * stride];
    if (v != v) return i;
    if (v > max) {
      max = v;
      best = i;
    }
  }
  return best;
}

// Hardmax: 1 at the first maximum of each normalised row or column, 0 elsewhere. The same axis
// rules as Softmax (coerced to 2-D before opset 13). Each column's argmax is found before any
// of its outputs is written, so the output may share the input's memory.
class HardmaxKernel final : public Kernel {
 public:
  HardmaxKernel(int64_t axis, bool coerce_2d) : axis_(axis), coerce_2d_(coerce_2d) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("Hardmax: input is missing");
    const int rank = x->shape.rank();
    int axis = 0;
    if (coerce_2d_ && axis_ == rank) {
      axis = rank;  // opset < 13 allows axis == rank: rows of one element
    } else {
      SOD2_RETURN_IF_ERROR(normalize_axis("Hardmax", axis_, std::max(rank, 1), &axis));
    }
    const int64_t outer = dims_product(x->shape, 0, std::min(axis, rank));
    int64_t n = 1, inner = 1;
    if (coerce_2d_) {
      n = dims_product(x->shape, std::min(axis, rank), rank);
    } else if (rank > 0) {
      n = x->shape[axis];
      inner = dims_product(x->shape, axis + 1, rank);
    }
    return visit_dtype("Hardmax", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
        if (x->numel() == 0) return Status::ok_status();
        const T* in = x->as<const T>();
        T* out = y->as<T>();
        const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / (n * inner));
        ctx.pool().parallel_for(outer, grain, [&](int64_t b, int64_t e) {
          for (int64_t o = b; o < e; ++o)
            hardmax_block(in + o * n * inner, out + o * n * inner, n, inner);
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype("Hardmax", x->dtype);
      }
    });
  }

 private:
  // One [n, inner] block, in chunks of columns: their argmaxes first, then their outputs.
  template <class T>
  static void hardmax_block(const T* x, T* y, int64_t n, int64_t inner) {
    constexpr int64_t kChunk = 64;
    int64_t best[kChunk];
    for (int64_t j0 = 0; j0 < inner; j0 += kChunk) {
      const int64_t w = std::min(kChunk, inner - j0);
      for (int64_t j = 0; j < w; ++j) best[j] = first_argmax(x + j0 + j, n, inner);
      for (int64_t i = 0; i < n; ++i) {
        T* row = y + i * inner + j0;
        for (int64_t j = 0; j < w; ++j) row[j] = best[j] == i ? T(1) : T(0);
      }
    }
  }

  int64_t axis_;
  bool coerce_2d_;
};

template <bool kCoerce2d>
Expected<std::unique_ptr<Kernel>> hardmax_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", kCoerce2d ? 1 : -1));
  return std::unique_ptr<Kernel>(std::make_unique<HardmaxKernel>(axis, kCoerce2d));
}

template <bool kLog, bool kCoerce2d>
Expected<std::unique_ptr<Kernel>> softmax_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", kCoerce2d ? 1 : -1));
  return std::unique_ptr<Kernel>(std::make_unique<SoftmaxKernel<kLog>>(axis, kCoerce2d));
}

}  // namespace

void register_softmax(KernelRegistry& r) {
  r.add("", "Softmax", 1, &softmax_factory<false, true>);
  r.add("", "Softmax", 13, &softmax_factory<false, false>);
  r.add("", "LogSoftmax", 1, &softmax_factory<true, true>);
  r.add("", "LogSoftmax", 13, &softmax_factory<true, false>);
  r.add("", "Hardmax", 1, &hardmax_factory<true>);
  r.add("", "Hardmax", 13, &hardmax_factory<false>);
}

}  // namespace sod2::rt::math
