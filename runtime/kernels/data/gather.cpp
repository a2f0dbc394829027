// Gather, GatherElements and GatherND. Indices (int32 or int64) are all checked before anything is
// copied, so a bad index is an error naming it and never a read out of bounds; negative indices
// wrap once.
#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/data_geometry.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

int64_t grain_for(size_t bytes_per_item) {
  return std::max<int64_t>(1,
                           static_cast<int64_t>((64u << 10) / std::max<size_t>(bytes_per_item, 1)));
}

// Checks every index of `indices` against `dim`.
template <typename I>
Status check_indices(const Tensor& indices, int64_t dim, int axis, const char* op) {
  const I* idx = indices.as<const I>();
  const int64_t n = indices.numel();
  for (int64_t j = 0; j < n; ++j) {
    const int64_t v = idx[j];
    if (v < -dim || v >= dim) return index_out_of_range(op, v, axis, dim);
  }
  return Status::ok_status();
}

Status check_indices(const Tensor& indices, int64_t dim, int axis, const char* op) {
  return indices.dtype == DType::kInt32 ? check_indices<int32_t>(indices, dim, axis, op)
                                        : check_indices<int64_t>(indices, dim, axis, op);
}

inline int64_t wrapped(int64_t v, int64_t dim) { return v < 0 ? v + dim : v; }

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    const Tensor* indices = ctx.input(1);
    if (!data || !indices) return invalid_argument("Gather: data and indices are required");
    SOD2_RETURN_IF_ERROR(require_fixed_size(data->dtype, "Gather"));
    SOD2_RETURN_IF_ERROR(require_index_type(indices->dtype, "Gather", "indices"));
    const Shape& ds = data->shape;
    const size_t elem = dtype_size(data->dtype);
    int axis = 0;
    SOD2_ASSIGN_OR_RETURN(Shape out_shape,
                          gather_output_shape(ds, indices->shape, axis_, elem, &axis));
    const int64_t axis_dim = ds[axis];
    SOD2_RETURN_IF_ERROR(check_indices(*indices, axis_dim, axis, "Gather"));
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data->dtype, out_shape));

    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= ds[i];
    for (int i = axis + 1; i < ds.rank(); ++i) inner *= ds[i];
    const int64_t n = indices->numel();
    const size_t block = static_cast<size_t>(inner) * elem;
    if (out_shape.numel() == 0) return Status::ok_status();
    const auto* src = static_cast<const uint8_t*>(data->data);
    auto* dst = static_cast<uint8_t*>(out->data);
    // One item is one inner block: the largest run contiguous in both data and output.
    ctx.pool().parallel_for(outer * n, grain_for(block), [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / n;
        const int64_t row = o * axis_dim + wrapped(load_index(*indices, t - o * n), axis_dim);
        std::memcpy(dst + static_cast<size_t>(t) * block, src + static_cast<size_t>(row) * block,
                    block);
      }
    });
    return Status::ok_status();
  }

 private:
  int64_t axis_;
};

template <typename T>
void gather_elements_rows(const Tensor& data, const Tensor& indices, int axis, T* out,
                          int64_t row_begin, int64_t row_end) {
  const Shape& is = indices.shape;
  const int rank = is.rank();
  int64_t dstrides[kMaxRank];
  row_major_strides(data.shape, dstrides);
  const int64_t row_len = is[rank - 1];
  const int64_t axis_dim = data.shape[axis];
  const T* src = data.as<const T>();
  int64_t idx[kMaxRank] = {};
  int64_t r = row_begin;
  for (int i = rank - 2; i >= 0; --i) {
    idx[i] = r % is[i];
    r /= is[i];
  }
  for (int64_t row = row_begin; row < row_end; ++row) {
    int64_t base = 0;  // data offset of this row, without the axis term
    for (int i = 0; i < rank - 1; ++i)
      if (i != axis) base += idx[i] * dstrides[i];
    const int64_t first = row * row_len;
    for (int64_t j = 0; j < row_len; ++j) {
      const int64_t v = wrapped(load_index(indices, first + j), axis_dim);
      // The last dim is contiguous in data: it contributes j unless it is the gathered axis.
      const int64_t off = axis == rank - 1 ? base + v : base + j + v * dstrides[axis];
      out[first + j] = src[off];
    }
    for (int i = rank - 2; i >= 0; --i) {
      if (++idx[i] < is[i]) break;
      idx[i] = 0;
    }
  }
}

class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    const Tensor* indices = ctx.input(1);
    if (!data || !indices) return invalid_argument("GatherElements: data and indices are required");
    SOD2_RETURN_IF_ERROR(require_fixed_size(data->dtype, "GatherElements"));
    SOD2_RETURN_IF_ERROR(require_index_type(indices->dtype, "GatherElements", "indices"));
    const Shape& ds = data->shape;
    const Shape& is = indices->shape;
    if (ds.rank() == 0 || is.rank() != ds.rank()) {
      return invalid_argument("GatherElements: indices of shape " + is.to_string() +
                              " do not match data of shape " + ds.to_string());
    }
    SOD2_ASSIGN_OR_RETURN(int axis, normalize_axis(axis_, ds.rank(), "GatherElements"));
    for (int i = 0; i < ds.rank(); ++i) {
      if (i != axis && is[i] > ds[i]) {
        return invalid_argument("GatherElements: indices of shape " + is.to_string() +
                                " exceed data of shape " + ds.to_string() + " on axis " +
                                std::to_string(i));
      }
    }
    SOD2_RETURN_IF_ERROR(check_indices(*indices, ds[axis], axis, "GatherElements"));
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data->dtype, is));
    if (is.numel() == 0) return Status::ok_status();
    const int64_t rows = is.numel() / is[is.rank() - 1];
    const size_t elem = dtype_size(data->dtype);
    ctx.pool().parallel_for(
        rows, grain_for(static_cast<size_t>(is[is.rank() - 1]) * 8), [&](int64_t b, int64_t e) {
          switch (elem) {
            case 1: gather_elements_rows(*data, *indices, axis, out->as<uint8_t>(), b, e); break;
            case 2: gather_elements_rows(*data, *indices, axis, out->as<uint16_t>(), b, e); break;
            case 4: gather_elements_rows(*data, *indices, axis, out->as<uint32_t>(), b, e); break;
            default: gather_elements_rows(*data, *indices, axis, out->as<uint64_t>(), b, e); break;
          }
        });
    return Status::ok_status();
  }

 private:
  int64_t axis_;
};

class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(int64_t batch_dims) : batch_dims_(batch_dims) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    const Tensor* indices = ctx.input(1);
    if (!data || !indices) return invalid_argument("GatherND: data and indices are required");
    SOD2_RETURN_IF_ERROR(require_fixed_size(data->dtype, "GatherND"));
    SOD2_RETURN_IF_ERROR(require_index_type(indices->dtype, "GatherND", "indices"));
    const Shape& ds = data->shape;
    const Shape& is = indices->shape;
    const int r = ds.rank(), q = is.rank();
    const int64_t b = batch_dims_;
    if (r < 1 || q < 1 || b < 0 || b >= std::min(r, q)) {
      return invalid_argument("GatherND: batch_dims " + std::to_string(b) + " does not fit data " +
                              ds.to_string() + " and indices " + is.to_string());
    }
    const int64_t k = is[q - 1];
    if (k < 1 || k > r - b) {
      return invalid_argument("GatherND: indices' last dim " + std::to_string(k) +
                              " must be in [1, " + std::to_string(r - b) + "]");
    }
    for (int i = 0; i < b; ++i) {
      if (is[i] != ds[i]) {
        return invalid_argument("GatherND: batch dims of indices " + is.to_string() + " and data " +
                                ds.to_string() + " differ");
      }
    }
    int64_t dims[2 * kMaxRank];
    int out_rank = 0;
    for (int i = 0; i < q - 1; ++i) dims[out_rank++] = is[i];
    for (int i = static_cast<int>(b + k); i < r; ++i) dims[out_rank++] = ds[i];
    const size_t elem = dtype_size(data->dtype);
    SOD2_ASSIGN_OR_RETURN(Shape out_shape, checked_shape(dims, out_rank, elem, "GatherND"));

    int64_t dstrides[kMaxRank];
    row_major_strides(ds, dstrides);
    const int64_t tuples = is.numel() / k;
    int64_t per_batch = 1;
    for (int i = static_cast<int>(b); i < q - 1; ++i) per_batch *= is[i];
    // Validate every tuple before copying.
    for (int64_t t = 0; t < tuples; ++t) {
      for (int64_t m = 0; m < k; ++m) {
        const int64_t v = load_index(*indices, t * k + m);
        const int64_t dim = ds[static_cast<int>(b + m)];
        if (v < -dim || v >= dim)
          return index_out_of_range("GatherND", v, static_cast<int>(b + m), dim);
      }
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data->dtype, out_shape));
    if (out_shape.numel() == 0) return Status::ok_status();
    const int64_t batch_stride = b > 0 ? dstrides[b - 1] : 0;
    const int64_t slice = dstrides[b + k - 1];
    const size_t block = static_cast<size_t>(slice) * elem;
    const auto* src = static_cast<const uint8_t*>(data->data);
    auto* dst = static_cast<uint8_t*>(out->data);
    ctx.pool().parallel_for(tuples, grain_for(block), [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        int64_t off = (t / per_batch) * batch_stride;
        for (int64_t m = 0; m < k; ++m) {
          const int64_t dim = ds[static_cast<int>(b + m)];
          off += wrapped(load_index(*indices, t * k + m), dim) * dstrides[b + m];
        }
        std::memcpy(dst + static_cast<size_t>(t) * block, src + static_cast<size_t>(off) * elem,
                    block);
      }
    });
    return Status::ok_status();
  }

 private:
  int64_t batch_dims_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_gather(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 0));
  return make_kernel<GatherKernel>(axis);
}

Expected<std::unique_ptr<Kernel>> make_gather_elements(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 0));
  return make_kernel<GatherElementsKernel>(axis);
}

Expected<std::unique_ptr<Kernel>> make_gather_nd(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t batch_dims, node.attrs.get_int("batch_dims", 0));
  return make_kernel<GatherNDKernel>(batch_dims);
}

}  // namespace sod2::rt
