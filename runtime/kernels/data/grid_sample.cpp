// GridSample (opsets 16 and 20): samples X [N, C, H, W] at the normalised (x, y) locations of
// grid [N, Hout, Wout, 2] into [N, C, Hout, Wout]; from opset 20 also X [N, C, D, H, W] at the
// (x, y, z) of grid [N, Dout, Hout, Wout, 3]. Coordinates in [-1, 1] map to the pixel centres
// of the corners (align_corners=1) or to the outer edges of the corner pixels (0). Modes
// linear (bi- or trilinear), nearest (round half to even) and cubic (Keys, A = -0.75; 4-D only,
// as ONNX defines it); padding zeros, border (clamp) or reflection (mirror at the same edges the
// coordinates map to), following the spec and ONNX Runtime's CPU kernel: out-of-range
// coordinates are first reflected, or clamped except for bicubic (whose taps past the edge read
// the border pixel, so clamping the coordinate too would move the sample: ONNX Runtime and
// PyTorch clamp only the taps), and border / reflection padding then also applies to each
// interpolation tap.
#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

enum class GsMode { kBilinear, kNearest, kBicubic };
enum class GsPad { kZeros, kBorder, kReflection };

// Mirrors x into [lo, hi] (repeatedly, as a triangle wave).
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (!(range > 0)) return lo;
  if (x < lo) {
    const double d = lo - x;
    const double k = std::floor(d / range);
    const double r = std::fmod(d, range);
    return std::fmod(k, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double d = x - hi;
    const double k = std::floor(d / range);
    const double r = std::fmod(d, range);
    return std::fmod(k, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubic_coeffs(double t, double c[4]) {
  constexpr double A = -0.75;
  t = std::fabs(t);
  c[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
  c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  c[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
}

// The spatial dims of X in grid order (x: W, y: H, z: D) with their strides in one plane, and
// the range the coordinates map onto.
struct Volume {
  int nd = 2;
  int64_t size[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  double lo[3] = {}, hi[3] = {};
};

class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(GsMode mode, GsPad pad, bool align_corners, int opset)
      : mode_(mode), pad_(pad), align_(align_corners), opset_(opset) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* grid = ctx.input(1);
    if (!x || !grid) return invalid_argument("GridSample: needs X and grid");
    const int rank = x->shape.rank();
    if (rank != 4 && !(rank == 5 && opset_ >= 20))
      return unsupported("GridSample: X " + x->shape.to_string() + " is not supported (" +
                         (opset_ >= 20 ? "4-D [N, C, H, W] or 5-D [N, C, D, H, W] only"
                                       : "4-D [N, C, H, W] only before opset 20") +
                         ")");
    if (rank == 5 && mode_ == GsMode::kBicubic)
      return unsupported("GridSample: mode 'cubic' is defined for 4-D X only; X " +
                         x->shape.to_string() + " is 5-D (use 'linear' or 'nearest')");
    const int nd = rank - 2;
    const int64_t n = x->shape[0];
    const bool grid_ok =
        grid->shape.rank() == rank && grid->shape[0] == n && grid->shape[rank - 1] == nd;
    if (!grid_ok) {
      const std::string want = "[" + std::to_string(n) + (nd == 3 ? ", D_out" : "") +
                               ", H_out, W_out, " + std::to_string(nd) + "]";
      return invalid_argument("GridSample: grid must be " + want + " for X " +
                              x->shape.to_string() + ", got " + grid->shape.to_string());
    }
    if (grid->dtype != x->dtype)
      return invalid_argument(std::string("GridSample: grid is ") + dtype_name(grid->dtype) +
                              " but X is " + dtype_name(x->dtype));
    switch (x->dtype) {
      case DType::kFloat: return compute<float>(ctx, *x, *grid);
      case DType::kDouble: return compute<double>(ctx, *x, *grid);
      default:
        return unsupported(std::string("GridSample: input type ") + dtype_name(x->dtype) +
                           " is not supported (float32, float64)");
    }
  }

 private:
  // The pixel at integer coordinates at[] (grid order) with the padding mode's rule for taps
  // outside the volume.
  template <typename T>
  T pixel(const T* img, const int64_t* at, const Volume& v) const {
    int64_t off = 0;
    for (int d = 0; d < v.nd; ++d) {
      int64_t i = at[d];
      if (pad_ == GsPad::kZeros) {
        if (i < 0 || i >= v.size[d]) return T(0);
      } else {
        if (pad_ == GsPad::kReflection)
          i = static_cast<int64_t>(reflect(static_cast<double>(i), v.lo[d], v.hi[d]));
        i = std::clamp<int64_t>(i, 0, v.size[d] - 1);
      }
      off += i * v.stride[d];
    }
    return img[off];
  }

  template <typename T>
  double bicubic(const T* img, const double* f, const Volume& v) const {
    const int64_t x0 = static_cast<int64_t>(std::floor(f[0])) - 1;
    const int64_t y0 = static_cast<int64_t>(std::floor(f[1])) - 1;
    double cx[4], cy[4];
    cubic_coeffs(f[0] - x0 - 1, cx);
    cubic_coeffs(f[1] - y0 - 1, cy);
    double sum = 0;
    for (int64_t i = 0; i < 4; ++i) {
      double row = 0;
      for (int64_t j = 0; j < 4; ++j) {
        const int64_t at[2] = {x0 + j, y0 + i};
        row += cx[j] * static_cast<double>(pixel(img, at, v));
      }
      sum += cy[i] * row;
    }
    return sum;
  }

  // Bi- or trilinear: the 2^nd corners around f, each weighted by its opposite fractions.
  template <typename T>
  double linear(const T* img, const double* f, const Volume& v) const {
    int64_t base[3];
    double frac[3];
    for (int d = 0; d < v.nd; ++d) {
      base[d] = static_cast<int64_t>(std::floor(f[d]));
      frac[d] = f[d] - static_cast<double>(base[d]);
    }
    double sum = 0;
    for (int corner = 0; corner < (1 << v.nd); ++corner) {
      int64_t at[3];
      double w = 1;
      for (int d = 0; d < v.nd; ++d) {
        const bool up = (corner >> d) & 1;
        at[d] = base[d] + up;
        w *= up ? frac[d] : 1 - frac[d];
      }
      sum += w * static_cast<double>(pixel(img, at, v));
    }
    return sum;
  }

  template <typename T>
  Status compute(KernelContext& ctx, const Tensor& x, const Tensor& grid) {
    const int rank = x.shape.rank();
    Volume v;
    v.nd = rank - 2;
    int64_t dims[5] = {x.shape[0], x.shape[1]};
    bool empty_x = false;
    for (int d = 0; d < v.nd; ++d) {
      // Grid coordinate d indexes X's dim rank-1-d (x: W, y: H, z: D).
      v.size[d] = x.shape[rank - 1 - d];
      empty_x = empty_x || v.size[d] == 0;
      dims[2 + d] = grid.shape[1 + d];
      v.lo[d] = align_ ? 0.0 : -0.5;
      v.hi[d] = align_ ? v.size[d] - 1.0 : v.size[d] - 0.5;
    }
    const int64_t n = dims[0], channels = dims[1];
    SOD2_ASSIGN_OR_RETURN(Shape out_shape, checked_shape(dims, rank, sizeof(T), "GridSample"));
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, x.dtype, out_shape));
    if (out_shape.numel() == 0) return Status::ok_status();
    T* y = out->as<T>();
    if (empty_x) {
      std::fill(y, y + out_shape.numel(), T(0));
      return Status::ok_status();
    }
    // Only now are the products known to fit: an empty X or output may have huge other dims.
    int64_t plane = 1, out_plane = 1;
    for (int d = 0; d < v.nd; ++d) {
      v.stride[d] = plane;
      plane *= v.size[d];
      out_plane *= dims[2 + d];
    }
    auto denorm = [&](double c, int64_t len) {
      return align_ ? (c + 1) / 2 * static_cast<double>(len - 1)
                    : ((c + 1) * static_cast<double>(len) - 1) / 2;
    };
    const T* g_all = grid.as<const T>();
    const T* x_all = x.as<const T>();
    // One item per output location (all channels): the coordinates are worked out once.
    auto points = [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / out_plane, p = i % out_plane;
        const T* g = g_all + i * v.nd;
        T* yp = y + b * channels * out_plane + p;
        double f[3] = {0, 0, 0};
        bool outside = false, nan = false;
        for (int d = 0; d < v.nd; ++d) {
          f[d] = denorm(static_cast<double>(g[d]), v.size[d]);
          if (mode_ == GsMode::kNearest) f[d] = std::nearbyint(f[d]);
          outside = outside || f[d] < v.lo[d] || f[d] > v.hi[d];
        }
        for (int d = 0; d < v.nd; ++d) {
          if (outside && pad_ == GsPad::kBorder && mode_ != GsMode::kBicubic)
            f[d] = std::clamp(f[d], 0.0, v.size[d] - 1.0);
          else if (outside && pad_ == GsPad::kReflection)
            f[d] = reflect(f[d], v.lo[d], v.hi[d]);
          // NaN, also as reflection makes it of an infinite coordinate (fmod(inf, range)),
          // would pass the clamp below and make the integer conversions undefined.
          nan = nan || std::isnan(f[d]);
          // Far outside (zeros padding only) every tap reads zero; clamping keeps the integer
          // conversions defined without changing that.
          f[d] = std::clamp(f[d], -4.0, v.size[d] + 4.0);
        }
        if (nan) {
          for (int64_t c = 0; c < channels; ++c) yp[c * out_plane] = T(0);
          continue;
        }
        for (int64_t c = 0; c < channels; ++c) {
          const T* img = x_all + (b * channels + c) * plane;
          double val;
          if (mode_ == GsMode::kNearest) {
            const int64_t at[3] = {static_cast<int64_t>(f[0]), static_cast<int64_t>(f[1]),
                                   static_cast<int64_t>(f[2])};
            val = pixel(img, at, v);
          } else if (mode_ == GsMode::kBilinear) {
            val = linear(img, f, v);
          } else {
            val = bicubic(img, f, v);
          }
          yp[c * out_plane] = static_cast<T>(val);
        }
      }
    };
    ctx.pool().parallel_for(n * out_plane,
                            std::max<int64_t>(1, 2048 / std::max<int64_t>(channels, 1)), points);
    return Status::ok_status();
  }

  GsMode mode_;
  GsPad pad_;
  bool align_;
  int opset_;
};

}  // namespace

KernelOr make_grid_sample(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(std::string mode, node.attrs.get_string("mode", "bilinear"));
  SOD2_ASSIGN_OR_RETURN(std::string pad, node.attrs.get_string("padding_mode", "zeros"));
  SOD2_ASSIGN_OR_RETURN(int64_t align, node.attrs.get_int("align_corners", 0));
  GsMode m;
  if (mode == "bilinear" || mode == "linear")
    m = GsMode::kBilinear;
  else if (mode == "nearest")
    m = GsMode::kNearest;
  else if (mode == "bicubic" || mode == "cubic")
    m = GsMode::kBicubic;
  else
    return unsupported("GridSample: mode '" + mode + "' is not supported");
  GsPad p;
  if (pad == "zeros")
    p = GsPad::kZeros;
  else if (pad == "border")
    p = GsPad::kBorder;
  else if (pad == "reflection")
    p = GsPad::kReflection;
  else
    return unsupported("GridSample: padding_mode '" + pad + "' is not supported");
  return make_kernel<GridSampleKernel>(m, p, align != 0, node.opset);
}

}  // namespace sod2::rt
