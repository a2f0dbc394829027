// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool on NC[D]HW float32, one output plane
// per parallel item. Window bounds are clipped per axis once per output row, so the inner loop
// only visits input elements.
#include <algorithm>
#include <limits>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/linalg_kernels.h"

namespace sod2::rt {
namespace {

enum class PoolKind { kMax, kAverage };

// Window of output index o on one axis: the first input index and how many taps are inside.
struct AxisWindow {
  int64_t start;   // input index of tap 0 (may be negative)
  int64_t t0, t1;  // taps [t0, t1) land inside the input
  int64_t padded;  // taps inside the padded extent (count_include_pad divisor factor)
};

inline AxisWindow axis_window(const Window3& g, int a, int64_t o) {
  AxisWindow w;
  w.start = o * g.stride[a] - g.pad_begin[a];
  const int64_t d = g.dil[a];
  // Tap t reads start + t*d; keep 0 <= start + t*d < in.
  w.t0 = w.start >= 0 ? 0 : (-w.start + d - 1) / d;
  const int64_t last = g.in[a] - 1 - w.start;
  w.t1 = last < 0 ? 0 : std::min(g.k[a], last / d + 1);
  if (w.t1 < w.t0) w.t1 = w.t0;
  // ORT's count_include_pad divisor: the window clipped to [-pad_begin, in + pad_end).
  const int64_t end = std::min(w.start + (g.k[a] - 1) * d + 1, g.in[a] + g.pad_end[a]);
  w.padded = (end - w.start + d - 1) / d;
  return w;
}

SOD2_LINALG_CLONES
void pool_plane(PoolKind kind, bool include_pad, const float* x, float* y, int64_t* idx,
                int64_t idx_base, const Window3& g) {
  for (int64_t oz = 0; oz < g.out[0]; ++oz) {
    const AxisWindow wz = axis_window(g, 0, oz);
    for (int64_t oy = 0; oy < g.out[1]; ++oy) {
      const AxisWindow wy = axis_window(g, 1, oy);
      for (int64_t ox = 0; ox < g.out[2]; ++ox) {
        const AxisWindow wx = axis_window(g, 2, ox);
        float acc = kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.f;
        int64_t best = -1;
        for (int64_t tz = wz.t0; tz < wz.t1; ++tz) {
          const int64_t iz = wz.start + tz * g.dil[0];
          for (int64_t ty = wy.t0; ty < wy.t1; ++ty) {
            const int64_t iy = wy.start + ty * g.dil[1];
            const int64_t row = (iz * g.in[1] + iy) * g.in[2] + wx.start;
            const float* xr = x + row;
            if (kind == PoolKind::kMax) {
              for (int64_t tx = wx.t0; tx < wx.t1; ++tx) {
                const float v = xr[tx * g.dil[2]];
                if (v > acc || best < 0) {
                  acc = v;
                  best = row + tx * g.dil[2];
                }
              }
            } else {
              for (int64_t tx = wx.t0; tx < wx.t1; ++tx) acc += xr[tx * g.dil[2]];
            }
          }
        }
        const int64_t o = (oz * g.out[1] + oy) * g.out[2] + ox;
        if (kind == PoolKind::kAverage) {
          const int64_t n = include_pad ? wz.padded * wy.padded * wx.padded
                                        : (wz.t1 - wz.t0) * (wy.t1 - wy.t0) * (wx.t1 - wx.t0);
          acc = n > 0 ? acc / static_cast<float>(n) : 0.f;
        } else if (best < 0) {
          acc = 0.f;  // a window entirely in padding (possible only with large pads)
        }
        y[o] = acc;
        if (idx) idx[o] = best < 0 ? idx_base : idx_base + best;
      }
    }
  }
}

class PoolKernel : public Kernel {
 public:
  PoolKernel(const char* op, PoolKind kind, WindowAttrs w, bool include_pad, bool indices)
      : op_(op), kind_(kind), attrs_(std::move(w)), include_pad_(include_pad), indices_(indices) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(op_) + ": needs input X");
    if (x->dtype != DType::kFloat) return unsupported_dtype(op_, "X", x->dtype);
    const int r = x->shape.rank();
    if (r < 3)
      return invalid_argument(std::string(op_) + ": X " + x->shape.to_string() +
                              " must have rank at least 3");
    if (attrs_.kernel_shape.size() != static_cast<size_t>(r - 2))
      return invalid_argument(std::string(op_) + ": kernel_shape " +
                              dims_string(attrs_.kernel_shape) + " does not fit X " +
                              x->shape.to_string());
    SOD2_ASSIGN_OR_RETURN(
        Window3 g, resolve_window(attrs_, x->shape.dims().subspan(2), attrs_.kernel_shape, op_));
    Shape out;
    out.push_back(x->shape[0]);
    out.push_back(x->shape[1]);
    for (int i = 0; i < g.spatial; ++i) out.push_back(g.out[3 - g.spatial + i]);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out));
    Tensor* ind = nullptr;
    if (indices_) {
      SOD2_ASSIGN_OR_RETURN(ind, ctx.output(1, DType::kInt64, out));
    }
    const int64_t planes = x->shape[0] * x->shape[1];
    const int64_t P = g.out_size(), Pin = g.in_size();
    if (planes == 0 || P == 0) return Status::ok_status();
    const float* X = x->as<float>();
    float* Y = y->as<float>();
    int64_t* I = ind ? ind->as<int64_t>() : nullptr;
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(P * g.k_size(), 1));
    ctx.pool().parallel_for(planes, grain, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        pool_plane(kind_, include_pad_, X + p * Pin, Y + p * P, I ? I + p * P : nullptr, p * Pin,
                   g);
    });
    return Status::ok_status();
  }

 private:
  const char* op_;
  PoolKind kind_;
  WindowAttrs attrs_;
  bool include_pad_;
  bool indices_;
};

template <PoolKind K>
class GlobalPoolKernel : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const char* op = K == PoolKind::kMax ? "GlobalMaxPool" : "GlobalAveragePool";
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(op) + ": needs input X");
    if (x->dtype != DType::kFloat) return unsupported_dtype(op, "X", x->dtype);
    if (x->shape.rank() < 2)
      return invalid_argument(std::string(op) + ": X " + x->shape.to_string() +
                              " must have rank at least 2");
    Shape out = x->shape;
    for (int i = 2; i < out.rank(); ++i) out[i] = 1;
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out));
    const int64_t planes = out.numel();
    const int64_t P = planes == 0 ? 0 : x->numel() / planes;
    if (planes == 0) return Status::ok_status();
    if (P == 0 && K == PoolKind::kMax)
      return invalid_argument(std::string(op) + ": X " + x->shape.to_string() +
                              " has no elements to take the maximum of");
    const float* X = x->as<float>();
    float* Y = y->as<float>();
    ctx.pool().parallel_for(planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(P, 1)),
                            [&](int64_t p0, int64_t p1) {
                              for (int64_t p = p0; p < p1; ++p) {
                                const float* xp = X + p * P;
                                if (K == PoolKind::kMax) {
                                  Y[p] = *std::max_element(xp, xp + P);
                                } else {
                                  float s = 0.f;
                                  for (int64_t i = 0; i < P; ++i) s += xp[i];
                                  Y[p] = P ? s / static_cast<float>(P) : 0.f;
                                }
                              }
                            });
    return Status::ok_status();
  }
};

Expected<std::unique_ptr<Kernel>> make_pool(const NodeInfo& node, PoolKind kind, const char* op) {
  SOD2_RETURN_IF_ERROR(require_float_inputs(node));
  SOD2_ASSIGN_OR_RETURN(WindowAttrs w, read_window_attrs(node.attrs, op));
  if (w.kernel_shape.empty()) return invalid_argument(std::string(op) + ": needs kernel_shape");
  if (kind == PoolKind::kAverage && !w.dilations.empty()) {
    for (int64_t d : w.dilations)
      if (d != 1) return unsupported("AveragePool: dilations (opset 19) are not supported");
  }
  int64_t include_pad = 0, storage_order = 0;
  SOD2_ATTR(include_pad, node.attrs.get_int("count_include_pad", 0));
  SOD2_ATTR(storage_order, node.attrs.get_int("storage_order", 0));
  const bool indices = kind == PoolKind::kMax && node.num_outputs > 1;
  if (indices && storage_order != 0)
    return unsupported("MaxPool: Indices with storage_order 1 (column-major) are not supported");
  return std::unique_ptr<Kernel>(new PoolKernel(op, kind, std::move(w), include_pad != 0, indices));
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_max_pool(const NodeInfo& node) {
  return make_pool(node, PoolKind::kMax, "MaxPool");
}
Expected<std::unique_ptr<Kernel>> make_average_pool(const NodeInfo& node) {
  return make_pool(node, PoolKind::kAverage, "AveragePool");
}
Expected<std::unique_ptr<Kernel>> make_global_average_pool(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_float_inputs(node));
  return std::unique_ptr<Kernel>(new GlobalPoolKernel<PoolKind::kAverage>());
}
Expected<std::unique_ptr<Kernel>> make_global_max_pool(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_float_inputs(node));
  return std::unique_ptr<Kernel>(new GlobalPoolKernel<PoolKind::kMax>());
}

}  // namespace sod2::rt
