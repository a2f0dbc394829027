// ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare. Axes come from the `axes` attribute
// (ReduceSum before 13, the others before 18) or from an optional input (with
// noop_with_empty_axes). No axes means all axes.
//
// The input's dims are collapsed (size-1 dims dropped, neighbours of the same kind merged). A
// single reduced block [K1, R, K2] takes a fast path: K2 == 1 reduces contiguous rows with
// several accumulator lanes; K2 > 1 accumulates whole rows into K2 accumulators, which
// vectorises. Anything else (reduced dims interleaved with kept ones) walks each output's
// reduced elements with an odometer.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

const char* reduce_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum: return "ReduceSum";
    case ReduceKind::kMean: return "ReduceMean";
    case ReduceKind::kMax: return "ReduceMax";
    case ReduceKind::kMin: return "ReduceMin";
    case ReduceKind::kProd: return "ReduceProd";
    case ReduceKind::kL1: return "ReduceL1";
    case ReduceKind::kL2: return "ReduceL2";
    case ReduceKind::kLogSum: return "ReduceLogSum";
    case ReduceKind::kLogSumExp: return "ReduceLogSumExp";
    case ReduceKind::kSumSquare: return "ReduceSumSquare";
  }
  return "Reduce?";
}

// How each reduction starts, takes a value, merges two partial results, and ends. Sums of
// floats accumulate in double, of integers in 64 bits; max/min stay in T. LogSum takes the log of
// a double sum; LogSumExp adds exp(x - shift), shift being the max of its elements, so it cannot
// overflow.
template <ReduceKind K, class T>
struct Reducer {
  static constexpr bool kMinMax = K == ReduceKind::kMax || K == ReduceKind::kMin;
  static constexpr bool kNeedsShift = K == ReduceKind::kLogSumExp;
  using Acc = std::conditional_t<
      kMinMax, T,
      std::conditional_t<kIsFloat<T> || K == ReduceKind::kL2 || K == ReduceKind::kLogSum ||
                             K == ReduceKind::kLogSumExp,
                         double, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>>;

  static Acc init() {
    if constexpr (K == ReduceKind::kMax) {
      return kIsFloat<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    } else if constexpr (K == ReduceKind::kMin) {
      return kIsFloat<T> ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    } else if constexpr (K == ReduceKind::kProd) {
      return 1;
    } else {
      return 0;
    }
  }
  static Acc step(Acc a, T x, double shift) {
    if constexpr (K == ReduceKind::kMax) {
      return x > a ? x : a;
    } else if constexpr (K == ReduceKind::kMin) {
      return x < a ? x : a;
    } else if constexpr (K == ReduceKind::kProd) {
      return a * static_cast<Acc>(x);
    } else if constexpr (K == ReduceKind::kL1) {
      const Acc v = static_cast<Acc>(x);
      return a + (v < 0 ? -v : v);
    } else if constexpr (K == ReduceKind::kL2 || K == ReduceKind::kSumSquare) {
      const Acc v = static_cast<Acc>(x);
      return a + v * v;
    } else if constexpr (K == ReduceKind::kLogSumExp) {
      return a + std::exp(static_cast<double>(x) - shift);
    } else {
      return a + static_cast<Acc>(x);
    }
  }
  static Acc combine(Acc a, Acc b) {
    if constexpr (K == ReduceKind::kMax) {
      return b > a ? b : a;
    } else if constexpr (K == ReduceKind::kMin) {
      return b < a ? b : a;
    } else if constexpr (K == ReduceKind::kProd) {
      return a * b;
    } else {
      return a + b;
    }
  }
  static T finish(Acc a, int64_t n, double shift) {
    if constexpr (K == ReduceKind::kMean) {
      if constexpr (kIsFloat<T>) {
        return static_cast<T>(a / static_cast<double>(n));  // n == 0 gives NaN, like numpy
      } else {
        return n == 0 ? T(0) : static_cast<T>(a / static_cast<Acc>(n));
      }
    } else if constexpr (K == ReduceKind::kL2) {
      return static_cast<T>(std::sqrt(a));
    } else if constexpr (K == ReduceKind::kLogSum) {
      const double l = std::log(static_cast<double>(a));
      if constexpr (kIsFloat<T>) {
        return static_cast<T>(l);
      } else {
        // log(0) = -inf and log of a negative sum = NaN have no integer value: clamp (NaN to 0)
        // rather than convert out of range.
        if (std::isnan(l)) return T(0);
        if (l <= static_cast<double>(std::numeric_limits<T>::lowest()))
          return std::numeric_limits<T>::lowest();
        if (l >= static_cast<double>(std::numeric_limits<T>::max()))
          return std::numeric_limits<T>::max();
        return static_cast<T>(l);
      }
    } else if constexpr (K == ReduceKind::kLogSumExp) {
      return static_cast<T>(shift + std::log(a));
    } else {
      return static_cast<T>(a);
    }
  }
};

// The max of `n` strided values as LogSumExp's shift; 0 when it is not finite (empty, all -inf,
// inf or NaN), which leaves those cases to exp/log's own rules.
template <class T>
double lse_shift(const T* x, int64_t n, int64_t stride) {
  if (n == 0) return 0;
  T m = x[0];
  for (int64_t i = 1; i < n; ++i) m = x[i * stride] > m ? x[i * stride] : m;
  const double d = static_cast<double>(m);
  return std::isfinite(d) ? d : 0.0;
}

// Dims after collapsing, each reduced or kept, with input strides.
struct ReduceLayout {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  bool reduced[kMaxRank] = {};
  int64_t reduce_count = 1;  // elements per output
  int64_t outputs = 1;
};

ReduceLayout collapse(const Shape& s, const bool* mask) {
  ReduceLayout l;
  int64_t st[kMaxRank];
  row_major_strides(s, st);
  for (int d = 0; d < s.rank(); ++d) {
    if (mask[d]) {
      l.reduce_count *= s[d];
    } else {
      l.outputs *= s[d];
    }
    if (s[d] == 1) continue;
    if (l.rank > 0 && l.reduced[l.rank - 1] == mask[d]) {
      l.dims[l.rank - 1] *= s[d];
      l.strides[l.rank - 1] = st[d];
      continue;
    }
    l.dims[l.rank] = s[d];
    l.strides[l.rank] = st[d];
    l.reduced[l.rank] = mask[d];
    ++l.rank;
  }
  return l;
}

template <ReduceKind K, class T>
class ReduceImpl {
  using R = Reducer<K, T>;
  using Acc = typename R::Acc;

 public:
  static Status run(KernelContext& ctx, const T* x, T* y, const ReduceLayout& l) {
    if (l.outputs == 0) return Status::ok_status();
    // Find a single reduced block [K1, R, K2].
    int first = -1, last = -1, blocks = 0;
    for (int d = 0; d < l.rank; ++d) {
      if (!l.reduced[d]) continue;
      if (first < 0) first = d;
      if (last != d - 1 || first == d) ++blocks;
      last = d;
    }
    if (first < 0 || l.reduce_count == 0) {
      // Nothing to walk: every output folds the same 0 or 1 elements... of its own input.
      return rows(ctx, x, y, l.outputs, l.reduce_count == 0 ? 0 : 1);
    }
    if (blocks == 1) {
      int64_t inner = 1;
      for (int d = last + 1; d < l.rank; ++d) inner *= l.dims[d];
      if (inner == 1) return rows(ctx, x, y, l.outputs, l.reduce_count);
      return columns(ctx, x, y, l.outputs / inner, l.reduce_count, inner);
    }
    return general(ctx, x, y, l);
  }

 private:
  // outputs rows of n contiguous elements each.
  static Status rows(KernelContext& ctx, const T* x, T* y, int64_t outputs, int64_t n) {
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
    ctx.pool().parallel_for(outputs, grain, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* row = x + o * n;
        const double shift = R::kNeedsShift ? lse_shift(row, n, 1) : 0.0;
        Acc acc[4] = {R::init(), R::init(), R::init(), R::init()};
        int64_t i = 0;
        for (; i + 4 <= n; i += 4)
          for (int j = 0; j < 4; ++j) acc[j] = R::step(acc[j], row[i + j], shift);
        for (; i < n; ++i) acc[0] = R::step(acc[0], row[i], shift);
        const Acc total = R::combine(R::combine(acc[0], acc[1]), R::combine(acc[2], acc[3]));
        y[o] = R::finish(total, n, shift);
      }
    });
    return Status::ok_status();
  }

  // [outer, n, inner] reduced along n: each task owns a range of the outer*inner outputs and
  // adds whole rows of its range into accumulators.
  static Status columns(KernelContext& ctx, const T* x, T* y, int64_t outer, int64_t n,
                        int64_t inner) {
    const int64_t outputs = outer * inner;
    size_t bytes = sizeof(Acc) * static_cast<size_t>(outputs);
    if (R::kNeedsShift) bytes += sizeof(double) * static_cast<size_t>(outputs);
    SOD2_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(bytes));
    Acc* accs = static_cast<Acc*>(scratch);
    double* shifts = R::kNeedsShift ? reinterpret_cast<double*>(accs + outputs) : nullptr;
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
    ctx.pool().parallel_for(outputs, grain, [&](int64_t begin, int64_t end) {
      for (int64_t pos = begin; pos < end;) {
        const int64_t o = pos / inner;
        const int64_t kb = pos % inner;
        const int64_t ke = std::min(inner, kb + (end - pos));
        const T* block = x + o * n * inner;
        Acc* acc = accs + o * inner;
        if constexpr (R::kNeedsShift) {
          double* sh = shifts + o * inner;
          for (int64_t k = kb; k < ke; ++k) sh[k] = lse_shift(block + k, n, inner);
        }
        for (int64_t k = kb; k < ke; ++k) acc[k] = R::init();
        for (int64_t r = 0; r < n; ++r) {
          const T* row = block + r * inner;
          if constexpr (R::kNeedsShift) {
            const double* sh = shifts + o * inner;
            for (int64_t k = kb; k < ke; ++k) acc[k] = R::step(acc[k], row[k], sh[k]);
          } else {
            for (int64_t k = kb; k < ke; ++k) acc[k] = R::step(acc[k], row[k], 0.0);
          }
        }
        for (int64_t k = kb; k < ke; ++k)
          y[o * inner + k] = R::finish(acc[k], n, R::kNeedsShift ? shifts[o * inner + k] : 0.0);
        pos += ke - kb;
      }
    });
    return Status::ok_status();
  }

  // Reduced dims interleaved with kept ones: an odometer over each output's reduced elements.
  static Status general(KernelContext& ctx, const T* x, T* y, const ReduceLayout& l) {
    int kept[kMaxRank], red[kMaxRank];
    int nk = 0, nr = 0;
    for (int d = 0; d < l.rank; ++d) (l.reduced[d] ? red[nr++] : kept[nk++]) = d;
    const int64_t n = l.reduce_count;
    const int inner_dim = red[nr - 1];
    const int64_t inner_n = l.dims[inner_dim], inner_stride = l.strides[inner_dim];
    // Calls f(pointer, count, stride) for each innermost reduced run of one output.
    auto walk = [&](const T* base, auto&& f) {
      int64_t idx[kMaxRank] = {};
      for (;;) {
        int64_t off = 0;
        for (int i = 0; i + 1 < nr; ++i) off += idx[i] * l.strides[red[i]];
        f(base + off);
        int i = nr - 2;
        for (; i >= 0; --i) {
          if (++idx[i] < l.dims[red[i]]) break;
          idx[i] = 0;
        }
        if (i < 0) return;
      }
    };
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
    ctx.pool().parallel_for(l.outputs, grain, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        int64_t rem = o, off = 0;
        for (int i = nk - 1; i >= 0; --i) {
          off += (rem % l.dims[kept[i]]) * l.strides[kept[i]];
          rem /= l.dims[kept[i]];
        }
        const T* base = x + off;
        double shift = 0;
        if constexpr (R::kNeedsShift) {
          double m = -std::numeric_limits<double>::infinity();
          walk(base, [&](const T* p) {
            for (int64_t i = 0; i < inner_n; ++i)
              m = std::max(m, static_cast<double>(p[i * inner_stride]));
          });
          shift = std::isfinite(m) ? m : 0.0;
        }
        Acc acc = R::init();
        walk(base, [&](const T* p) {
          for (int64_t i = 0; i < inner_n; ++i) acc = R::step(acc, p[i * inner_stride], shift);
        });
        y[o] = R::finish(acc, n, shift);
      }
    });
    return Status::ok_status();
  }
};

struct ReduceConfig {
  std::vector<int64_t> axes;  // from the attribute
  bool axes_input = false;    // axes come from input 1
  bool keepdims = true;
  bool noop_with_empty_axes = false;
};

template <ReduceKind K>
class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(ReduceConfig cfg) : cfg_(std::move(cfg)) {}

  Status run(KernelContext& ctx) override {
    const char* name = reduce_name(K);
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(name) + ": input is missing");
    const int rank = x->shape.rank();
    bool mask[kMaxRank] = {};
    int count = 0;
    if (cfg_.axes_input) {
      if (const Tensor* axes = ctx.input(1))
        SOD2_RETURN_IF_ERROR(read_axes_tensor(name, axes, rank, mask, &count));
    } else {
      SOD2_RETURN_IF_ERROR(axes_to_mask(name, cfg_.axes.data(), cfg_.axes.size(), rank, mask));
      count = static_cast<int>(cfg_.axes.size());
    }
    if (count == 0) {
      if (cfg_.noop_with_empty_axes) return copy_input(ctx, *x, name);
      for (int i = 0; i < rank; ++i) mask[i] = true;
    }
    Shape out_shape;
    for (int i = 0; i < rank; ++i) {
      if (!mask[i]) {
        out_shape.push_back(x->shape[i]);
      } else if (cfg_.keepdims) {
        out_shape.push_back(1);
      }
    }
    const ReduceLayout layout = collapse(x->shape, mask);
    return visit_dtype(name, x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsNumeric<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, out_shape));
        return ReduceImpl<K, T>::run(ctx, x->as<const T>(), y->as<T>(), layout);
      } else {
        return unsupported_dtype(name, x->dtype);
      }
    });
  }

 private:
  static Status copy_input(KernelContext& ctx, const Tensor& x, const char* name) {
    if (dtype_size(x.dtype) == 0) return unsupported_dtype(name, x.dtype);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x.dtype, x.shape));
    if (x.bytes() > 0 && y->data != x.data) std::memcpy(y->data, x.data, x.bytes());
    return Status::ok_status();
  }

  ReduceConfig cfg_;
};

template <ReduceKind K, bool kAxesInput>
Expected<std::unique_ptr<Kernel>> reduce_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  ReduceConfig cfg;
  cfg.axes_input = kAxesInput;
  SOD2_ASSIGN_OR_RETURN(int64_t keepdims, node.attrs.get_int("keepdims", 1));
  cfg.keepdims = keepdims != 0;
  if (kAxesInput) {
    SOD2_ASSIGN_OR_RETURN(int64_t noop, node.attrs.get_int("noop_with_empty_axes", 0));
    cfg.noop_with_empty_axes = noop != 0;
  } else {
    SOD2_ASSIGN_OR_RETURN(cfg.axes, node.attrs.get_ints("axes"));
    if (cfg.axes.size() > static_cast<size_t>(kMaxRank))
      return invalid_model(std::string(reduce_name(K)) + ": too many axes");
  }
  return std::unique_ptr<Kernel>(std::make_unique<ReduceKernel<K>>(std::move(cfg)));
}

template <ReduceKind K>
void add_reduce(KernelRegistry& r, int axes_input_since) {
  r.add("", reduce_name(K), 1, &reduce_factory<K, false>);
  r.add("", reduce_name(K), axes_input_since, &reduce_factory<K, true>);
}

}  // namespace

void register_reduce(KernelRegistry& r) {
  // ReduceSum took axes as an input in opset 13, the others in 18.
  add_reduce<ReduceKind::kSum>(r, 13);
  add_reduce<ReduceKind::kMean>(r, 18);
  add_reduce<ReduceKind::kMax>(r, 18);
  add_reduce<ReduceKind::kMin>(r, 18);
  add_reduce<ReduceKind::kProd>(r, 18);
  add_reduce<ReduceKind::kL1>(r, 18);
  add_reduce<ReduceKind::kL2>(r, 18);
  add_reduce<ReduceKind::kLogSum>(r, 18);
  add_reduce<ReduceKind::kLogSumExp>(r, 18);
  add_reduce<ReduceKind::kSumSquare>(r, 18);
}

}  // namespace sod2::rt::math
