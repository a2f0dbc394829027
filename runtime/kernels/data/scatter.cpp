// ScatterND and ScatterElements (and the older Scatter, which is ScatterElements without
// reduction): the output starts as a copy of data, then updates are written (or added / multiplied
// in, since opset 16) in index order, so with duplicate indices the last update wins. Every index
// is checked before the output is touched.
#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };  // max/min: opset 18

Expected<Reduction> read_reduction(const NodeInfo& node, const char* op) {
  if (node.opset < 16) return Reduction::kNone;
  SOD2_ASSIGN_OR_RETURN(std::string r, node.attrs.get_string("reduction", "none"));
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max" && node.opset >= 18) return Reduction::kMax;
  if (r == "min" && node.opset >= 18) return Reduction::kMin;
  return unsupported(std::string(op) + ": reduction '" + r + "'");
}

template <typename T>
void combine(T* dst, const T* src, int64_t n, Reduction r) {
  if (r == Reduction::kAdd) {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] + src[i]);
  } else if (r == Reduction::kMul) {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] * src[i]);
  } else if (r == Reduction::kMax) {
    for (int64_t i = 0; i < n; ++i) dst[i] = dst[i] < src[i] ? src[i] : dst[i];
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] < dst[i] ? src[i] : dst[i];
  }
}

// Applies `n` updates from `src` to `dst` (elements of `dtype`) with reduction `r`.
void apply(DType dtype, void* dst, const void* src, int64_t n, Reduction r) {
  if (n == 0) return;
  if (r == Reduction::kNone) {
    std::memcpy(dst, src, static_cast<size_t>(n) * dtype_size(dtype));
    return;
  }
  switch (dtype) {
#define SOD2_COMBINE(D, T) \
  case D: combine(static_cast<T*>(dst), static_cast<const T*>(src), n, r); return;
    SOD2_COMBINE(DType::kFloat, float)
    SOD2_COMBINE(DType::kDouble, double)
    SOD2_COMBINE(DType::kInt8, int8_t)
    SOD2_COMBINE(DType::kUint8, uint8_t)
    SOD2_COMBINE(DType::kInt16, int16_t)
    SOD2_COMBINE(DType::kUint16, uint16_t)
    SOD2_COMBINE(DType::kInt32, int32_t)
    SOD2_COMBINE(DType::kUint32, uint32_t)
    SOD2_COMBINE(DType::kInt64, int64_t)
    SOD2_COMBINE(DType::kUint64, uint64_t)
#undef SOD2_COMBINE
    default: return;  // refused by check_reducible before anything runs
  }
}

Status check_reducible(DType t, Reduction r, const char* op) {
  if (r == Reduction::kNone) return require_fixed_size(t, op);
  switch (t) {
    case DType::kFloat:
    case DType::kDouble:
    case DType::kInt8:
    case DType::kUint8:
    case DType::kInt16:
    case DType::kUint16:
    case DType::kInt32:
    case DType::kUint32:
    case DType::kInt64:
    case DType::kUint64: return Status::ok_status();
    default: return unsupported(std::string(op) + ": reduction on type " + dtype_name(t));
  }
}

class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(Reduction r) : reduction_(r) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    const Tensor* indices = ctx.input(1);
    const Tensor* updates = ctx.input(2);
    if (!data || !indices || !updates) {
      return invalid_argument("ScatterND: data, indices and updates are required");
    }
    SOD2_RETURN_IF_ERROR(check_reducible(data->dtype, reduction_, "ScatterND"));
    SOD2_RETURN_IF_ERROR(require_index_type(indices->dtype, "ScatterND", "indices"));
    if (updates->dtype != data->dtype)
      return invalid_argument("ScatterND: updates' type differs from data's");
    const Shape& ds = data->shape;
    const Shape& is = indices->shape;
    const Shape& us = updates->shape;
    const int r = ds.rank(), q = is.rank();
    if (q < 1) return invalid_argument("ScatterND: indices must have rank >= 1");
    const int64_t k = is[q - 1];
    if (k > r) {
      return invalid_argument("ScatterND: indices' last dim " + std::to_string(k) +
                              " exceeds data rank " + std::to_string(r));
    }
    // updates must be indices.shape[:-1] + data.shape[k:]
    bool ok = us.rank() == q - 1 + r - static_cast<int>(k);
    for (int i = 0; ok && i < q - 1; ++i) ok = us[i] == is[i];
    for (int i = static_cast<int>(k); ok && i < r; ++i)
      ok = us[q - 1 + i - static_cast<int>(k)] == ds[i];
    if (!ok) {
      return invalid_argument("ScatterND: updates of shape " + us.to_string() +
                              " do not match indices " + is.to_string() + " and data " +
                              ds.to_string());
    }
    const int64_t tuples = k > 0 ? is.numel() / k : is.numel();
    for (int64_t t = 0; t < tuples; ++t) {
      for (int64_t m = 0; m < k; ++m) {
        const int64_t v = load_index(*indices, t * k + m);
        const int64_t dim = ds[static_cast<int>(m)];
        if (v < -dim || v >= dim)
          return index_out_of_range("ScatterND", v, static_cast<int>(m), dim);
      }
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data->dtype, ds));
    parallel_memcpy(ctx.pool(), out->data, data->data, data->bytes());
    int64_t strides[kMaxRank];
    row_major_strides(ds, strides);
    int64_t slice = 1;
    for (int i = static_cast<int>(k); i < r; ++i) slice *= ds[i];
    const size_t elem = dtype_size(data->dtype);
    auto* dst = static_cast<uint8_t*>(out->data);
    const auto* src = static_cast<const uint8_t*>(updates->data);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t m = 0; m < k; ++m) {
        const int64_t dim = ds[static_cast<int>(m)];
        int64_t v = load_index(*indices, t * k + m);
        off += (v < 0 ? v + dim : v) * strides[m];
      }
      apply(data->dtype, dst + static_cast<size_t>(off) * elem,
            src + static_cast<size_t>(t * slice) * elem, slice, reduction_);
    }
    return Status::ok_status();
  }

 private:
  Reduction reduction_;
};

class ScatterElementsKernel final : public Kernel {
 public:
  ScatterElementsKernel(int64_t axis, Reduction r, const char* op)
      : axis_(axis), reduction_(r), op_(op) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    const Tensor* indices = ctx.input(1);
    const Tensor* updates = ctx.input(2);
    if (!data || !indices || !updates) {
      return invalid_argument(std::string(op_) + ": data, indices and updates are required");
    }
    SOD2_RETURN_IF_ERROR(check_reducible(data->dtype, reduction_, op_));
    SOD2_RETURN_IF_ERROR(require_index_type(indices->dtype, op_, "indices"));
    if (updates->dtype != data->dtype) {
      return invalid_argument(std::string(op_) + ": updates' type differs from data's");
    }
    const Shape& ds = data->shape;
    const Shape& is = indices->shape;
    if (ds.rank() == 0 || is.rank() != ds.rank() || !(updates->shape == is)) {
      return invalid_argument(std::string(op_) + ": data " + ds.to_string() + ", indices " +
                              is.to_string() + " and updates " + updates->shape.to_string() +
                              " do not match");
    }
    SOD2_ASSIGN_OR_RETURN(int axis, normalize_axis(axis_, ds.rank(), op_));
    for (int i = 0; i < ds.rank(); ++i) {
      if (i != axis && is[i] > ds[i]) {
        return invalid_argument(std::string(op_) + ": indices " + is.to_string() + " exceed data " +
                                ds.to_string() + " on axis " + std::to_string(i));
      }
    }
    const int64_t n = is.numel();
    const int64_t axis_dim = ds[axis];
    for (int64_t j = 0; j < n; ++j) {
      const int64_t v = load_index(*indices, j);
      if (v < -axis_dim || v >= axis_dim) return index_out_of_range(op_, v, axis, axis_dim);
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data->dtype, ds));
    parallel_memcpy(ctx.pool(), out->data, data->data, data->bytes());
    int64_t strides[kMaxRank];
    row_major_strides(ds, strides);
    const size_t elem = dtype_size(data->dtype);
    auto* dst = static_cast<uint8_t*>(out->data);
    const auto* src = static_cast<const uint8_t*>(updates->data);
    const int rank = is.rank();
    int64_t idx[kMaxRank] = {};
    for (int64_t j = 0; j < n; ++j) {
      int64_t off = 0;
      for (int i = 0; i < rank; ++i) {
        int64_t v = idx[i];
        if (i == axis) {
          v = load_index(*indices, j);
          if (v < 0) v += axis_dim;
        }
        off += v * strides[i];
      }
      apply(data->dtype, dst + static_cast<size_t>(off) * elem, src + static_cast<size_t>(j) * elem,
            1, reduction_);
      for (int i = rank - 1; i >= 0; --i) {
        if (++idx[i] < is[i]) break;
        idx[i] = 0;
      }
    }
    return Status::ok_status();
  }

 private:
  int64_t axis_;
  Reduction reduction_;
  const char* op_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_scatter_nd(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(Reduction r, read_reduction(node, "ScatterND"));
  return make_kernel<ScatterNDKernel>(r);
}

Expected<std::unique_ptr<Kernel>> make_scatter_elements(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(Reduction r, read_reduction(node, "ScatterElements"));
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 0));
  return make_kernel<ScatterElementsKernel>(axis, r, "ScatterElements");
}

Expected<std::unique_ptr<Kernel>> make_scatter(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 0));
  return make_kernel<ScatterElementsKernel>(axis, Reduction::kNone, "Scatter");
}

}  // namespace sod2::rt
