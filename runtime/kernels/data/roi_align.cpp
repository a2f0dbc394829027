// RoiAlign (opsets 10, 16): for each region of interest, an [output_height, output_width] grid
// of bins over X[batch_indices[r]], each bin the average (or max) of bilinear samples on a
// regular sampling_ratio x sampling_ratio grid (adaptive, ceil(roi size / bins), when 0).
// coordinate_transformation_mode (16) half_pixel shifts the scaled box by -0.5; output_half_pixel,
// the behaviour of opset 10, does not and makes every box at least 1x1. Max mode takes, per
// sample, the largest of the four weighted corner values, as ONNX's reference and ONNX Runtime do.
#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

struct RoiAttrs {
  bool max_mode = false;
  bool half_pixel = false;
  int64_t out_h = 1, out_w = 1;
  int64_t sampling_ratio = 0;
  float spatial_scale = 1.f;
};

// One sample point: four corner offsets in a channel plane and their weights.
template <typename T>
struct Sample {
  int64_t pos[4] = {};
  T w[4] = {};
};

// The samples of one bin grid point, clamped as ONNX Runtime does: points more than one pixel
// outside the map contribute nothing.
template <typename T>
Sample<T> make_sample(T y, T x, int64_t height, int64_t width) {
  Sample<T> s;
  if (!(y >= T(-1) && y <= T(height) && x >= T(-1) && x <= T(width))) return s;  // NaN too
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<T>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<T>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const T ly = y - y_low, lx = x - x_low, hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = y_low * width + x_low;
  s.pos[1] = y_low * width + x_high;
  s.pos[2] = y_high * width + x_low;
  s.pos[3] = y_high * width + x_high;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

// Where one roi's bins start and how it samples them.
template <typename T>
struct RoiGeom {
  T start_h = 0, start_w = 0, bin_h = 0, bin_w = 0;
  int64_t grid_h = 0, grid_w = 0;
  bool finite = true;
};

// Sampling grids beyond this many points per bin are refused (a hostile box or sampling_ratio
// would otherwise run for hours).
constexpr int64_t kMaxGridPerBin = 1 << 16;
// Likewise the samples of a whole run (rois x bins x channels x grid points): within the
// per-bin limit a large output would still run for hours. About a minute of work.
constexpr int64_t kMaxSamples = int64_t{1} << 36;

class RoiAlignKernel final : public Kernel {
 public:
  explicit RoiAlignKernel(RoiAttrs a) : a_(a) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* rois = ctx.input(1);
    const Tensor* idx = ctx.input(2);
    if (!x || !rois || !idx) return invalid_argument("RoiAlign: needs X, rois and batch_indices");
    if (x->shape.rank() != 4)
      return invalid_argument("RoiAlign: X " + x->shape.to_string() + " must be [N, C, H, W]");
    if (rois->dtype != x->dtype)
      return invalid_argument(std::string("RoiAlign: rois are ") + dtype_name(rois->dtype) +
                              " but X is " + dtype_name(x->dtype));
    if (rois->shape.rank() != 2 || rois->shape[1] != 4)
      return invalid_argument("RoiAlign: rois must be [num_rois, 4], got " +
                              rois->shape.to_string());
    SOD2_RETURN_IF_ERROR(require_index_type(idx->dtype, "RoiAlign", "batch_indices"));
    const int64_t num_rois = rois->shape[0];
    if (idx->shape.rank() != 1 || idx->shape[0] != num_rois)
      return invalid_argument("RoiAlign: batch_indices " + idx->shape.to_string() + " must be [" +
                              std::to_string(num_rois) + "] (one per roi)");
    const int64_t n = x->shape[0];
    for (int64_t r = 0; r < num_rois; ++r) {
      const int64_t b = load_index(*idx, r);
      if (b < 0 || b >= n)
        return invalid_argument("RoiAlign: batch_indices[" + std::to_string(r) + "] = " +
                                std::to_string(b) + " is outside [0, " + std::to_string(n) + ")");
    }
    switch (x->dtype) {
      case DType::kFloat: return compute<float>(ctx, *x, *rois, *idx);
      case DType::kDouble: return compute<double>(ctx, *x, *rois, *idx);
      default:
        return unsupported(std::string("RoiAlign: input type ") + dtype_name(x->dtype) +
                           " is not supported (float32, float64)");
    }
  }

 private:
  template <typename T>
  RoiGeom<T> geometry(const T* box) const {
    RoiGeom<T> g;
    const T offset = a_.half_pixel ? T(0.5) : T(0);
    const T scale = static_cast<T>(a_.spatial_scale);
    g.start_w = box[0] * scale - offset;
    g.start_h = box[1] * scale - offset;
    T roi_w = box[2] * scale - offset - g.start_w, roi_h = box[3] * scale - offset - g.start_h;
    if (!a_.half_pixel) {
      roi_w = std::max(roi_w, T(1));
      roi_h = std::max(roi_h, T(1));
    }
    g.finite = std::isfinite(static_cast<double>(roi_w)) &&
               std::isfinite(static_cast<double>(roi_h)) &&
               std::isfinite(static_cast<double>(g.start_w)) &&
               std::isfinite(static_cast<double>(g.start_h));
    if (!g.finite) return g;
    g.bin_h = roi_h / static_cast<T>(a_.out_h);
    g.bin_w = roi_w / static_cast<T>(a_.out_w);
    const double gh = a_.sampling_ratio > 0 ? static_cast<double>(a_.sampling_ratio)
                                            : std::ceil(static_cast<double>(g.bin_h));
    const double gw = a_.sampling_ratio > 0 ? static_cast<double>(a_.sampling_ratio)
                                            : std::ceil(static_cast<double>(g.bin_w));
    // A negative-size box (half_pixel) gets an empty grid and zero bins, as in ONNX Runtime.
    g.grid_h = gh > 0 ? static_cast<int64_t>(std::min(gh, 1e9)) : 0;
    g.grid_w = gw > 0 ? static_cast<int64_t>(std::min(gw, 1e9)) : 0;
    return g;
  }

  // The [channels, out_h, out_w] bins of one roi over its image `img`.
  template <typename T>
  void pool_roi(const RoiGeom<T>& g, const T* img, T* out_r, int64_t channels, int64_t height,
                int64_t width) const {
    const int64_t plane = height * width, bins = a_.out_h * a_.out_w;
    const T count = static_cast<T>(std::max<int64_t>(g.grid_h * g.grid_w, 1));
    for (int64_t ph = 0; ph < a_.out_h; ++ph) {
      for (int64_t pw = 0; pw < a_.out_w; ++pw) {
        const int64_t o = ph * a_.out_w + pw;
        for (int64_t c = 0; c < channels; ++c) out_r[c * bins + o] = T(0);
        bool first = true;
        for (int64_t iy = 0; iy < g.grid_h; ++iy) {
          const T yy =
              g.start_h + ph * g.bin_h + (iy + T(0.5)) * g.bin_h / static_cast<T>(g.grid_h);
          for (int64_t ix = 0; ix < g.grid_w; ++ix) {
            const T xx =
                g.start_w + pw * g.bin_w + (ix + T(0.5)) * g.bin_w / static_cast<T>(g.grid_w);
            const Sample<T> s = make_sample(yy, xx, height, width);
            for (int64_t c = 0; c < channels; ++c) {
              const T* p = img + c * plane;
              T& acc = out_r[c * bins + o];
              if (a_.max_mode) {
                const T v = std::max(std::max(s.w[0] * p[s.pos[0]], s.w[1] * p[s.pos[1]]),
                                     std::max(s.w[2] * p[s.pos[2]], s.w[3] * p[s.pos[3]]));
                acc = first ? v : std::max(acc, v);
              } else {
                acc += s.w[0] * p[s.pos[0]] + s.w[1] * p[s.pos[1]] + s.w[2] * p[s.pos[2]] +
                       s.w[3] * p[s.pos[3]];
              }
            }
            first = false;
          }
        }
        if (!a_.max_mode)
          for (int64_t c = 0; c < channels; ++c) out_r[c * bins + o] /= count;
      }
    }
  }

  template <typename T>
  Status compute(KernelContext& ctx, const Tensor& x, const Tensor& rois, const Tensor& idx) {
    const int64_t channels = x.shape[1], height = x.shape[2], width = x.shape[3];
    const int64_t num_rois = rois.shape[0];
    const int64_t dims[4] = {num_rois, channels, a_.out_h, a_.out_w};
    SOD2_ASSIGN_OR_RETURN(Shape out_shape, checked_shape(dims, 4, sizeof(T), "RoiAlign"));
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, x.dtype, out_shape));
    if (out_shape.numel() == 0) return Status::ok_status();
    if (height == 0 || width == 0) {
      std::fill(out->as<T>(), out->as<T>() + out_shape.numel(), T(0));
      return Status::ok_status();
    }
    const T* data = x.as<const T>();
    const T* boxes = rois.as<const T>();
    T* y = out->as<T>();
    const int64_t plane = height * width;
    // Every box is checked first, so the parallel pass cannot fail halfway.
    const int64_t per_roi = std::max<int64_t>(channels * a_.out_h * a_.out_w, 1);
    int64_t samples = 0;
    for (int64_t r = 0; r < num_rois; ++r) {
      const RoiGeom<T> g = geometry(boxes + r * 4);
      if (!g.finite)
        return invalid_argument("RoiAlign: roi " + std::to_string(r) + " is not finite");
      if (g.grid_h * g.grid_w > kMaxGridPerBin)
        return invalid_argument("RoiAlign: roi " + std::to_string(r) + " needs a " +
                                std::to_string(g.grid_h) + "x" + std::to_string(g.grid_w) +
                                " sampling grid per bin (limit " + std::to_string(kMaxGridPerBin) +
                                " points)");
      int64_t roi_samples = 0;
      if (__builtin_mul_overflow(g.grid_h * g.grid_w, per_roi, &roi_samples) ||
          __builtin_add_overflow(samples, roi_samples, &samples) || samples > kMaxSamples)
        return resource_exhausted("RoiAlign: the rois up to " + std::to_string(r) +
                                  " need more than " + std::to_string(kMaxSamples) +
                                  " bilinear samples (bins x channels x sampling grid)");
    }
    ctx.pool().parallel_for(
        num_rois, std::max<int64_t>(1, 4096 / per_roi), [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r)
            pool_roi(geometry(boxes + r * 4), data + load_index(idx, r) * channels * plane,
                     y + r * channels * a_.out_h * a_.out_w, channels, height, width);
        });
    return Status::ok_status();
  }

  RoiAttrs a_;
};

}  // namespace

KernelOr make_roi_align(const NodeInfo& node) {
  RoiAttrs a;
  SOD2_ASSIGN_OR_RETURN(std::string mode, node.attrs.get_string("mode", "avg"));
  if (mode != "avg" && mode != "max")
    return unsupported("RoiAlign: mode '" + mode + "' is not supported (avg, max)");
  a.max_mode = mode == "max";
  const std::string default_ctm = node.opset >= 16 ? "half_pixel" : "output_half_pixel";
  SOD2_ASSIGN_OR_RETURN(std::string ctm,
                        node.attrs.get_string("coordinate_transformation_mode", default_ctm));
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return unsupported("RoiAlign: coordinate_transformation_mode '" + ctm +
                       "' is not supported (half_pixel, output_half_pixel)");
  a.half_pixel = ctm == "half_pixel";
  SOD2_ASSIGN_OR_RETURN(a.out_h, node.attrs.get_int("output_height", 1));
  SOD2_ASSIGN_OR_RETURN(a.out_w, node.attrs.get_int("output_width", 1));
  SOD2_ASSIGN_OR_RETURN(a.sampling_ratio, node.attrs.get_int("sampling_ratio", 0));
  SOD2_ASSIGN_OR_RETURN(a.spatial_scale, node.attrs.get_float("spatial_scale", 1.f));
  if (a.out_h < 1 || a.out_w < 1)
    return invalid_model("RoiAlign: output_height and output_width must be >= 1, got " +
                         std::to_string(a.out_h) + " and " + std::to_string(a.out_w));
  if (a.sampling_ratio < 0)
    return invalid_model("RoiAlign: sampling_ratio must be >= 0, got " +
                         std::to_string(a.sampling_ratio));
  return make_kernel<RoiAlignKernel>(a);
}

}  // namespace sod2::rt
