// GridSample (opset 16): samples X [N, C, H, W] at the normalised (x, y) locations of grid
// [N, Hout, Wout, 2] into [N, C, Hout, Wout]. Coordinates in [-1, 1] map to the pixel centres
// of the corners (align_corners=1) or to the outer edges of the corner pixels (0). Modes
// bilinear, nearest (round half to even) and bicubic (Keys, A = -0.75); padding zeros, border
// (clamp) or reflection (mirror at the same edges the coordinates map to), following the spec
// and ONNX Runtime's CPU kernel: out-of-range coordinates are first reflected, or clamped except
// for bicubic (whose taps past the edge read the border pixel, so clamping the coordinate too
// would move the sample: ONNX Runtime and PyTorch clamp only the taps), and border / reflection
// padding then also applies to each interpolation tap.
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

class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(GsMode mode, GsPad pad, bool align_corners)
      : mode_(mode), pad_(pad), align_(align_corners) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* grid = ctx.input(1);
    if (!x || !grid) return invalid_argument("GridSample: needs X and grid");
    if (x->shape.rank() != 4)
      return unsupported("GridSample: X " + x->shape.to_string() +
                         " is not supported (only 4-D [N, C, H, W])");
    const int64_t n = x->shape[0];
    if (grid->shape.rank() != 4 || grid->shape[0] != n || grid->shape[3] != 2)
      return invalid_argument("GridSample: grid must be [" + std::to_string(n) +
                              ", H_out, W_out, 2], got " + grid->shape.to_string());
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
  // The pixel at integer (r, c) with the padding mode's rule for taps outside the image.
  template <typename T>
  T pixel(const T* img, int64_t r, int64_t c, int64_t h, int64_t w, const double* border) const {
    if (pad_ == GsPad::kZeros) {
      return (r >= 0 && r < h && c >= 0 && c < w) ? img[r * w + c] : T(0);
    }
    if (pad_ == GsPad::kReflection) {
      c = static_cast<int64_t>(reflect(static_cast<double>(c), border[0], border[2]));
      r = static_cast<int64_t>(reflect(static_cast<double>(r), border[1], border[3]));
    }
    c = std::clamp<int64_t>(c, 0, w - 1);
    r = std::clamp<int64_t>(r, 0, h - 1);
    return img[r * w + c];
  }

  template <typename T>
  Status compute(KernelContext& ctx, const Tensor& x, const Tensor& grid) {
    const int64_t n = x.shape[0], channels = x.shape[1], h = x.shape[2], w = x.shape[3];
    const int64_t oh = grid.shape[1], ow = grid.shape[2];
    const int64_t dims[4] = {n, channels, oh, ow};
    SOD2_ASSIGN_OR_RETURN(Shape out_shape, checked_shape(dims, 4, sizeof(T), "GridSample"));
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, x.dtype, out_shape));
    if (out_shape.numel() == 0) return Status::ok_status();
    T* y = out->as<T>();
    if (h == 0 || w == 0) {
      std::fill(y, y + out_shape.numel(), T(0));
      return Status::ok_status();
    }
    const double x_min = align_ ? 0.0 : -0.5, y_min = x_min;
    const double x_max = align_ ? w - 1.0 : w - 0.5, y_max = align_ ? h - 1.0 : h - 0.5;
    const double border[4] = {x_min, y_min, x_max, y_max};
    auto denorm = [&](double v, int64_t len) {
      return align_ ? (v + 1) / 2 * static_cast<double>(len - 1)
                    : ((v + 1) * static_cast<double>(len) - 1) / 2;
    };
    const T* g_all = grid.as<const T>();
    const T* x_all = x.as<const T>();
    const int64_t plane = h * w, out_plane = oh * ow;
    // One item per output location (all channels): the coordinates are worked out once.
    auto points = [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / out_plane, p = i % out_plane;
        const T* g = g_all + i * 2;
        double fx = denorm(static_cast<double>(g[0]), w);
        double fy = denorm(static_cast<double>(g[1]), h);
        T* yp = y + b * channels * out_plane + p;
        if (mode_ == GsMode::kNearest) {
          fx = std::nearbyint(fx);
          fy = std::nearbyint(fy);
        }
        if (fx < x_min || fx > x_max || fy < y_min || fy > y_max) {
          if (pad_ == GsPad::kBorder && mode_ != GsMode::kBicubic) {
            fx = std::clamp(fx, 0.0, w - 1.0);
            fy = std::clamp(fy, 0.0, h - 1.0);
          } else if (pad_ == GsPad::kReflection) {
            fx = reflect(fx, x_min, x_max);
            fy = reflect(fy, y_min, y_max);
          }
        }
        // NaN, also as reflection makes it of an infinite coordinate (fmod(inf, range)), would
        // pass the clamp below and make the integer conversions undefined: it samples zero.
        if (std::isnan(fx) || std::isnan(fy)) {
          for (int64_t c = 0; c < channels; ++c) yp[c * out_plane] = T(0);
          continue;
        }
        // Far outside (zeros padding only) every tap reads zero; clamping keeps the integer
        // conversions defined without changing that.
        fx = std::clamp(fx, -4.0, w + 4.0);
        fy = std::clamp(fy, -4.0, h + 4.0);
        for (int64_t c = 0; c < channels; ++c) {
          const T* img = x_all + (b * channels + c) * plane;
          double v = 0;
          if (mode_ == GsMode::kNearest) {
            v = pixel(img, static_cast<int64_t>(fy), static_cast<int64_t>(fx), h, w, border);
          } else if (mode_ == GsMode::kBilinear) {
            const int64_t x1 = static_cast<int64_t>(std::floor(fx));
            const int64_t y1 = static_cast<int64_t>(std::floor(fy));
            const double dx1 = fx - x1, dx2 = 1 - dx1, dy1 = fy - y1, dy2 = 1 - dy1;
            const double p11 = pixel(img, y1, x1, h, w, border);
            const double p12 = pixel(img, y1, x1 + 1, h, w, border);
            const double p21 = pixel(img, y1 + 1, x1, h, w, border);
            const double p22 = pixel(img, y1 + 1, x1 + 1, h, w, border);
            v = dy2 * (dx2 * p11 + dx1 * p12) + dy1 * (dx2 * p21 + dx1 * p22);
          } else {
            const int64_t x0 = static_cast<int64_t>(std::floor(fx)) - 1;
            const int64_t y0 = static_cast<int64_t>(std::floor(fy)) - 1;
            double cx[4], cy[4];
            cubic_coeffs(fx - x0 - 1, cx);
            cubic_coeffs(fy - y0 - 1, cy);
            for (int64_t i = 0; i < 4; ++i) {
              double row = 0;
              for (int64_t j = 0; j < 4; ++j)
                row += cx[j] * static_cast<double>(pixel(img, y0 + i, x0 + j, h, w, border));
              v += cy[i] * row;
            }
          }
          yp[c * out_plane] = static_cast<T>(v);
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
  return make_kernel<GridSampleKernel>(m, p, align != 0);
}

}  // namespace sod2::rt
