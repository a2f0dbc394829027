// Resize (opsets 10, 11, 13) and Upsample (7, 9) on float32 of any rank.
//
// Every mode here is separable (nearest, N-linear, cubic), so the kernel resizes one axis at a
// time: per axis a small table of (input index, weight) taps per output index, then one pass
// that blends whole inner rows. Axes left as they are cost nothing; a 4-D NCHW bilinear resize is
// a W pass (gathers) and an H pass (row blends that vectorise).
//
// tf_crop_and_resize samples the roi box of each axis; an output whose coordinate on some axis
// falls outside the input takes extrapolation_value. Such an index gets all-zero weights, so the
// passes leave zeros there, and a last pass writes the value when it is not zero.
//
// Resize-18's antialias widens the taps of a linear or cubic axis that shrinks
// (resize_antialias.cpp); the passes are the same with more taps per output.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/kernels/linalg/channel_blocks.h"
#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/linalg_kernels.h"
#include "runtime/kernels/linalg/resize_antialias.h"

namespace sod2::rt {
namespace {

enum class Mode : uint8_t { kNearest, kLinear, kCubic };
enum class Coord : uint8_t {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
  kHalfPixelSymmetric  // opset 19
};
enum class Nearest : uint8_t { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeAttrs {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Nearest nearest = Nearest::kRoundPreferFloor;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  bool antialias = false;  // Resize-18
  int scales_input = 1;    // input slot of scales (-1: from the attribute)
  int sizes_input = -1;
  int roi_input = -1;  // read for tf_crop_and_resize only
  float extrapolation_value = 0.f;
  std::vector<float> attr_scales;  // Upsample-7
  const char* op = "Resize";
};

// The input coordinate of output index x on one axis. align_corners divides by the resized
// length scale * in (not its floor), as ONNX's reference does, so a downsample by a scale that
// does not divide the length keeps the spec's numbers. [roi0, roi1] is the axis's crop box.
float original_coord(const ResizeAttrs& a, int64_t x, float scale, int64_t in, int64_t out,
                     float roi0, float roi1) {
  const float xf = static_cast<float>(x);
  switch (a.coord) {
    case Coord::kHalfPixel: return (xf + 0.5f) / scale - 0.5f;
    case Coord::kPytorchHalfPixel: return out > 1 ? (xf + 0.5f) / scale - 0.5f : 0.f;
    case Coord::kAlignCorners: {
      const float len = scale * static_cast<float>(in);
      return out == 1 || len == 1.f ? 0.f : xf * static_cast<float>(in - 1) / (len - 1.f);
    }
    case Coord::kAsymmetric: return xf / scale;
    case Coord::kTfHalfPixelForNn: return (xf + 0.5f) / scale;
    case Coord::kHalfPixelSymmetric: {
      // ONNX Resize-19: offset = in / 2 * (1 - out / (scale * in)).
      const float adjustment = static_cast<float>(out) / (scale * static_cast<float>(in));
      const float offset = static_cast<float>(in) / 2.f * (1.f - adjustment);
      return offset + (xf + 0.5f) / scale - 0.5f;
    }
    case Coord::kTfCropAndResize: {
      const float span = static_cast<float>(in - 1);
      return out > 1 ? roi0 * span + xf * (roi1 - roi0) * span / static_cast<float>(out - 1)
                     : 0.5f * (roi0 + roi1) * span;
    }
  }
  return 0.f;
}

int64_t nearest_index(Nearest n, float x, bool downsample) {
  switch (n) {
    case Nearest::kRoundPreferFloor:
      return x == std::floor(x) + 0.5f ? static_cast<int64_t>(std::floor(x))
                                       : static_cast<int64_t>(std::round(x));
    case Nearest::kRoundPreferCeil:
      return x == std::floor(x) + 0.5f ? static_cast<int64_t>(std::ceil(x))
                                       : static_cast<int64_t>(std::round(x));
    case Nearest::kFloor: return static_cast<int64_t>(std::floor(x));
    case Nearest::kCeil: return static_cast<int64_t>(std::ceil(x));
    case Nearest::kSimple:  // ONNX Runtime's rule for Upsample and Resize-10
      return downsample ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(x);
  }
  return 0;
}

bool antialiased(const ResizeAttrs& a, float scale) {
  return a.antialias && a.mode != Mode::kNearest && scale < 1.f;
}

// Taps per output index on an axis resized by `scale`.
int64_t taps_of(const ResizeAttrs& a, float scale) {
  if (antialiased(a, scale)) return antialias_tap_count(a.mode == Mode::kCubic, scale);
  return a.mode == Mode::kNearest ? 1 : a.mode == Mode::kLinear ? 2 : 4;
}

// Fills taps (index, weight) for every output index of one axis; with tf_crop_and_resize, an
// index outside the input gets zero weights and outside[o] = 1.
void axis_taps(const ResizeAttrs& a, int64_t in, int64_t out, float scale, float roi0, float roi1,
               int64_t* idx, float* w, uint8_t* outside) {
  const int64_t T = taps_of(a, scale);
  const bool aa = antialiased(a, scale);
  for (int64_t o = 0; o < out; ++o) {
    float x = original_coord(a, o, scale, in, out, roi0, roi1);
    int64_t* ix = idx + o * T;
    float* wx = w + o * T;
    outside[o] = 0;
    if (a.coord == Coord::kTfCropAndResize && !(x >= 0.f && x <= static_cast<float>(in - 1))) {
      for (int64_t t = 0; t < T; ++t) {
        ix[t] = 0;
        wx[t] = 0.f;
      }
      outside[o] = 1;
      continue;
    }
    if (aa) {
      antialias_taps(x, in, scale, a.mode == Mode::kCubic, a.cubic_a, a.exclude_outside, T, ix, wx);
    } else if (a.mode == Mode::kNearest) {
      ix[0] = std::clamp<int64_t>(nearest_index(a.nearest, x, scale < 1.f), 0, in - 1);
      wx[0] = 1.f;
    } else if (a.mode == Mode::kLinear) {
      x = std::clamp(x, 0.f, static_cast<float>(in - 1));
      const int64_t x0 = static_cast<int64_t>(x);
      ix[0] = x0;
      ix[1] = std::min(x0 + 1, in - 1);
      wx[1] = x - static_cast<float>(x0);
      wx[0] = 1.f - wx[1];
    } else {
      const float fl = std::floor(x), s = x - fl, A = a.cubic_a;
      const float c[4] = {((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A,
                          ((A + 2) * s - (A + 3)) * s * s + 1,
                          ((A + 2) * (1 - s) - (A + 3)) * (1 - s) * (1 - s) + 1,
                          ((A * (2 - s) - 5 * A) * (2 - s) + 8 * A) * (2 - s) - 4 * A};
      float sum = 0.f;
      for (int t = 0; t < 4; ++t) {
        const int64_t i = static_cast<int64_t>(fl) - 1 + t;
        const bool outside = i < 0 || i >= in;
        ix[t] = std::clamp<int64_t>(i, 0, in - 1);
        wx[t] = a.exclude_outside && outside ? 0.f : c[t];
        sum += wx[t];
      }
      if (a.exclude_outside && sum != 0.f)
        for (int t = 0; t < 4; ++t) wx[t] /= sum;
    }
  }
}

// dst[o, j, :] = sum_t w[j,t] * src[o, idx[j,t], :] for rows of `inner` floats.
void axis_pass(ThreadPool& pool, const float* src, float* dst, int64_t outer, int64_t in_len,
               int64_t out_len, int64_t inner, int64_t T, const int64_t* idx, const float* w) {
  if (inner == 1) {
    // The last axis: whole rows per item, so the per-output work is just the taps (a gather).
    pool.parallel_for(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(out_len * T, 1)),
                      [&](int64_t o0, int64_t o1) {
                        for (int64_t o = o0; o < o1; ++o) {
                          const float* base = src + o * in_len;
                          float* d = dst + o * out_len;
                          if (T == 1) {
                            for (int64_t j = 0; j < out_len; ++j) d[j] = base[idx[j]];
                          } else if (T == 2) {
                            for (int64_t j = 0; j < out_len; ++j)
                              d[j] =
                                  w[2 * j] * base[idx[2 * j]] + w[2 * j + 1] * base[idx[2 * j + 1]];
                          } else {
                            for (int64_t j = 0; j < out_len; ++j) {
                              float acc = 0.f;
                              for (int64_t t = 0; t < T; ++t)
                                acc += w[j * T + t] * base[idx[j * T + t]];
                              d[j] = acc;
                            }
                          }
                        }
                      });
    return;
  }
  const int64_t rows = outer * out_len;
  pool.parallel_for(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(inner * T, 1)),
                    [&](int64_t r0, int64_t r1) {
                      for (int64_t r = r0; r < r1; ++r) {
                        const int64_t o = r / out_len, j = r % out_len;
                        float* d = dst + r * inner;
                        const float* base = src + o * in_len * inner;
                        const int64_t* ij = idx + j * T;
                        const float* wj = w + j * T;
                        if (T == 1) {
                          std::memcpy(d, base + ij[0] * inner,
                                      static_cast<size_t>(inner) * sizeof(float));
                          continue;
                        }
                        const float* s0 = base + ij[0] * inner;
                        const float w0 = wj[0];
                        for (int64_t i = 0; i < inner; ++i) d[i] = w0 * s0[i];
                        for (int64_t t = 1; t < T; ++t) {
                          const float* st = base + ij[t] * inner;
                          const float wt = wj[t];
                          for (int64_t i = 0; i < inner; ++i) d[i] += wt * st[i];
                        }
                      }
                    });
}

class ResizeKernel : public Kernel {
 public:
  explicit ResizeKernel(ResizeAttrs a) : a_(std::move(a)) {}

  Status run(KernelContext& ctx) override {
    const char* op = a_.op;
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(op) + ": needs input X");
    if (x->dtype != DType::kFloat) return unsupported_dtype(op, "X", x->dtype);
    const int r = x->shape.rank();
    float scales[kMaxRank];
    Shape out = x->shape;
    const Tensor* sizes = a_.sizes_input >= 0 ? ctx.input(a_.sizes_input) : nullptr;
    const Tensor* st = a_.scales_input >= 0 ? ctx.input(a_.scales_input) : nullptr;
    if (sizes && sizes->numel() == 0) sizes = nullptr;
    if (st && st->numel() == 0) st = nullptr;
    // Crop box per axis: [roi[i], roi[r + i]] (tf_crop_and_resize only).
    float roi0[kMaxRank], roi1[kMaxRank];
    for (int i = 0; i < r; ++i) {
      roi0[i] = 0.f;
      roi1[i] = 1.f;
    }
    const bool crop = a_.coord == Coord::kTfCropAndResize;
    if (crop) {
      const Tensor* roi = a_.roi_input >= 0 ? ctx.input(a_.roi_input) : nullptr;
      if (!roi || roi->numel() != 2 * r)
        return invalid_argument(std::string(op) + ": tf_crop_and_resize needs roi with " +
                                std::to_string(2 * r) + " values for X " + x->shape.to_string() +
                                (roi ? ", got " + roi->shape.to_string() : std::string()));
      if (roi->dtype != DType::kFloat && roi->dtype != DType::kDouble)
        return unsupported_dtype(op, "roi", roi->dtype);
      for (int i = 0; i < r; ++i) {
        const bool f = roi->dtype == DType::kFloat;
        roi0[i] = f ? roi->as<float>()[i] : static_cast<float>(roi->as<double>()[i]);
        roi1[i] = f ? roi->as<float>()[r + i] : static_cast<float>(roi->as<double>()[r + i]);
        if (!std::isfinite(roi0[i]) || !std::isfinite(roi1[i]))
          return invalid_argument(std::string(op) + ": roi values must be finite");
      }
    }
    if (sizes) {
      if (sizes->dtype != DType::kInt64) return unsupported_dtype(op, "sizes", sizes->dtype);
      if (sizes->numel() != r)
        return invalid_argument(std::string(op) + ": sizes " + sizes->shape.to_string() +
                                " must have one value per dim of X " + x->shape.to_string());
      for (int i = 0; i < r; ++i) {
        out[i] = sizes->as<int64_t>()[i];
        if (out[i] < 0) return invalid_argument(std::string(op) + ": negative size");
        scales[i] =
            x->shape[i] == 0 ? 1.f : static_cast<float>(out[i]) / static_cast<float>(x->shape[i]);
      }
    } else {
      const float* sv = nullptr;
      int64_t count = 0;
      if (st) {
        if (st->dtype != DType::kFloat) return unsupported_dtype(op, "scales", st->dtype);
        sv = st->as<float>();
        count = st->numel();
      } else if (!a_.attr_scales.empty()) {
        sv = a_.attr_scales.data();
        count = static_cast<int64_t>(a_.attr_scales.size());
      } else {
        return invalid_argument(std::string(op) + ": needs scales or sizes");
      }
      if (count != r)
        return invalid_argument(std::string(op) + ": " + std::to_string(count) + " scales for X " +
                                x->shape.to_string());
      for (int i = 0; i < r; ++i) {
        scales[i] = sv[i];
        if (!(sv[i] > 0.f) || !std::isfinite(sv[i]))
          return invalid_argument(std::string(op) + ": scales must be positive and finite");
        // With a crop box, the output covers the box: in * (roi_end - roi_start) * scale.
        const float box = crop ? roi1[i] - roi0[i] : 1.f;
        const double len = std::floor(sv[i] * static_cast<float>(x->shape[i]) * box);
        if (!(len >= 0 && len < 9.0e18))
          return invalid_argument(std::string(op) + ": scale " + std::to_string(sv[i]) +
                                  " gives an invalid size for dim " + std::to_string(i) + " of X " +
                                  x->shape.to_string());
        out[i] = static_cast<int64_t>(len);
      }
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out));
    if (y->numel() == 0) return Status::ok_status();
    if (x->numel() == 0)
      return invalid_argument(std::string(op) + ": cannot resize the empty X " +
                              x->shape.to_string() + " to " + out.to_string());
    if (block_ > 0) return resize_blocked(ctx, *x, out, scales, roi0, roi1, y->as<float>());
    SOD2_ASSIGN_OR_RETURN(AxisWork work, plan_axes(x->shape, out, scales, roi0, roi1));
    SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(work.bytes));
    resize_axes(ctx.pool(), work, x->as<float>(), x->shape, out, scales, roi0, roi1, mem,
                y->as<float>());
    return Status::ok_status();
  }

  // Held blocked (kernel.h), X and Y alike.
  BlockedIo blocked_io(int block) const override { return tied_blocked_io(block); }
  void use_blocked(int block, uint64_t inputs, bool output) override {
    block_ = tied_block_used(block, inputs, output);
  }

 private:
  // The axes that change (last first) and the scratch their passes need: per axis a table of
  // taps, two buffers between passes, and a flag per output index of every axis.
  struct AxisWork {
    int axes[kMaxRank] = {};
    int count = 0;
    int64_t table = 0, inter = 0, flags = 0;
    size_t bytes = 0;
  };

  Expected<AxisWork> plan_axes(const Shape& in, const Shape& out, const float* scales,
                               const float* roi0, const float* roi1) const {
    AxisWork w;
    const int r = in.rank();
    for (int i = r - 1; i >= 0; --i)
      if (out[i] != in[i] || scales[i] != 1.f || roi0[i] != 0.f || roi1[i] != 1.f)
        w.axes[w.count++] = i;
    Shape cur = in;
    for (int k = 0; k < w.count; ++k) {
      const int ax = w.axes[k];
      const int64_t taps = taps_of(a_, scales[ax]), in_len = in[ax];
      // Antialias spans about 2 / scale inputs per output, within a few times the input unless a
      // crop box far larger than the input is shrunk (out * taps would then be unbounded).
      if (taps > 4 * in_len + 8)
        return unsupported(std::string(a_.op) + ": antialias at scale " +
                           std::to_string(scales[ax]) + " on dim " + std::to_string(ax) + " of X " +
                           in.to_string() + " would span " + std::to_string(taps) +
                           " inputs per output, more than the whole dim");
      w.table += out[ax] * taps;
      cur[ax] = out[ax];
      if (k + 1 < w.count) w.inter = std::max(w.inter, cur.numel());
    }
    for (int i = 0; i < r; ++i) w.flags += out[i];
    w.bytes = static_cast<size_t>(w.table) * (sizeof(int64_t) + sizeof(float)) +
              static_cast<size_t>(2 * w.inter) * sizeof(float) + static_cast<size_t>(w.flags) + 64;
    return w;
  }

  // src (shape in) resized to dst (shape out), one pass per axis of `work` in `mem` (work.bytes).
  void resize_axes(ThreadPool& pool, const AxisWork& work, const float* src, Shape cur,
                   const Shape& out, const float* scales, const float* roi0, const float* roi1,
                   void* mem, float* dst) const {
    if (work.count == 0) {
      std::memcpy(dst, src, static_cast<size_t>(out.numel()) * sizeof(float));
      return;
    }
    int64_t* idx = static_cast<int64_t*>(mem);
    float* wts = reinterpret_cast<float*>(idx + work.table);
    float* buf[2] = {wts + work.table, wts + work.table + work.inter};
    // Per output index of each axis: outside the crop box (tf_crop_and_resize).
    uint8_t* flags = reinterpret_cast<uint8_t*>(buf[1] + work.inter);
    std::memset(flags, 0, static_cast<size_t>(work.flags));
    const int r = out.rank();
    uint8_t* axis_flags[kMaxRank];
    for (int64_t i = 0, off = 0; i < r; off += out[i], ++i) axis_flags[i] = flags + off;
    for (int k = 0; k < work.count; ++k) {
      const int ax = work.axes[k];
      const int64_t in_len = cur[ax], out_len = out[ax], T = taps_of(a_, scales[ax]);
      axis_taps(a_, in_len, out_len, scales[ax], roi0[ax], roi1[ax], idx, wts, axis_flags[ax]);
      int64_t outer = 1, inner = 1;
      for (int i = 0; i < ax; ++i) outer *= cur[i];
      for (int i = ax + 1; i < r; ++i) inner *= cur[i];
      float* to = k + 1 == work.count ? dst : buf[k % 2];
      axis_pass(pool, src, to, outer, in_len, out_len, inner, T, idx, wts);
      idx += out_len * T;
      wts += out_len * T;
      cur[ax] = out_len;
      src = to;
    }
    if (a_.coord == Coord::kTfCropAndResize && a_.extrapolation_value != 0.f)
      fill_outside(dst, out, axis_flags);
  }

  // X and Y held in channel blocks. Where only H and W change (what a feature pyramid's upsample
  // does), each block of `width` lanes is resized as an [H, W, width] tensor by the same passes,
  // the lanes riding along as the innermost dim: the whole blocks of every image at once, then
  // each image's narrow block. Anything else (N or C resized, a crop box) goes through NCHW.
  Status resize_blocked(KernelContext& ctx, const Tensor& x, const Shape& out, const float* scales,
                        const float* roi0, const float* roi1, float* y) const {
    const Shape& in = x.shape;
    if (in.rank() != 4)
      return internal_error(std::string(a_.op) + ": X " + in.to_string() +
                            " cannot be held in channel blocks");
    const int64_t n = in[0], c = in[1], in_plane = in[2] * in[3], out_plane = out[2] * out[3];
    const bool planes_only = out[0] == n && out[1] == c && scales[0] == 1.f && scales[1] == 1.f &&
                             a_.coord != Coord::kTfCropAndResize;
    if (!planes_only) {
      SOD2_ASSIGN_OR_RETURN(AxisWork work, plan_axes(in, out, scales, roi0, roi1));
      // The passes' scratch first, 64-byte aligned as its index tables want.
      const size_t work_bytes = (work.bytes + 63) / 64 * 64;
      SOD2_ASSIGN_OR_RETURN(
          void* mem,
          ctx.scratch(work_bytes + static_cast<size_t>(in.numel() + out.numel()) * sizeof(float)));
      float* x_plain = reinterpret_cast<float*>(static_cast<uint8_t*>(mem) + work_bytes);
      float* y_plain = x_plain + in.numel();
      release_tensor(ctx.pool(), block_, x.as<float>(), n, c, in_plane, x_plain);
      resize_axes(ctx.pool(), work, x_plain, in, out, scales, roi0, roi1, mem, y_plain);
      hold_tensor(ctx.pool(), block_, y_plain, out[0], out[1], out_plane, y);
      return Status::ok_status();
    }
    const int64_t whole = c / block_, narrow = c % block_;
    // Block planes [P, H, W, width] and their resized shape; N and C stay.
    const float plane_scales[4] = {1.f, scales[2], scales[3], 1.f};
    const float plane_roi0[4] = {0.f, roi0[2], roi0[3], 0.f};
    const float plane_roi1[4] = {1.f, roi1[2], roi1[3], 1.f};
    auto planes = [&](int64_t count, int64_t width, const Shape& s) {
      return Shape{count, s[2], s[3], width};
    };
    // Whole blocks of all images are one run of planes when no image ends in a narrow block.
    const int64_t whole_runs = narrow == 0 ? 1 : n, whole_count = narrow == 0 ? n * whole : whole;
    AxisWork whole_work, narrow_work;
    if (whole > 0) {
      SOD2_ASSIGN_OR_RETURN(
          whole_work, plan_axes(planes(whole_count, block_, in), planes(whole_count, block_, out),
                                plane_scales, plane_roi0, plane_roi1));
    }
    if (narrow > 0) {
      SOD2_ASSIGN_OR_RETURN(narrow_work, plan_axes(planes(1, narrow, in), planes(1, narrow, out),
                                                   plane_scales, plane_roi0, plane_roi1));
    }
    SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(std::max(whole_work.bytes, narrow_work.bytes)));
    const float* src = x.as<float>();
    if (whole > 0)
      for (int64_t i = 0; i < whole_runs; ++i)
        resize_axes(ctx.pool(), whole_work, src + i * c * in_plane, planes(whole_count, block_, in),
                    planes(whole_count, block_, out), plane_scales, plane_roi0, plane_roi1, mem,
                    y + i * c * out_plane);
    if (narrow > 0)
      for (int64_t i = 0; i < n; ++i)
        resize_axes(ctx.pool(), narrow_work, src + (i * c + whole * block_) * in_plane,
                    planes(1, narrow, in), planes(1, narrow, out), plane_scales, plane_roi0,
                    plane_roi1, mem, y + (i * c + whole * block_) * out_plane);
    return Status::ok_status();
  }

  // Writes extrapolation_value where any axis's index lies outside the crop box.
  void fill_outside(float* v, const Shape& out, uint8_t* const* axis_flags) const {
    const int r = out.rank();
    int64_t pos[kMaxRank] = {};
    const int64_t n = out.numel();
    for (int64_t e = 0; e < n; ++e) {
      bool outside = false;
      for (int i = 0; i < r && !outside; ++i) outside = axis_flags[i][pos[i]] != 0;
      if (outside) v[e] = a_.extrapolation_value;
      for (int i = r - 1; i >= 0; --i) {
        if (++pos[i] < out[i]) break;
        pos[i] = 0;
      }
    }
  }

  ResizeAttrs a_;
  int block_ = 0;  // channels per block of X and Y where they are held blocked
};

Status parse_mode(const std::string& m, const char* op, ResizeAttrs* a) {
  if (m == "nearest")
    a->mode = Mode::kNearest;
  else if (m == "linear" || m == "bilinear")
    a->mode = Mode::kLinear;
  else if (m == "cubic" && std::string(op) == "Resize")
    a->mode = Mode::kCubic;
  else
    return unsupported(std::string(op) + ": mode '" + m + "' is not supported");
  return Status::ok_status();
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_resize(const NodeInfo& node) {
  if (!node.input_dtypes.empty() && node.input_dtypes[0] != DType::kFloat &&
      node.input_dtypes[0] != DType::kUndefined)
    return unsupported_dtype("Resize", "X", node.input_dtypes[0]);
  ResizeAttrs a;
  std::string mode;
  SOD2_ATTR(mode, node.attrs.get_string("mode", "nearest"));
  SOD2_RETURN_IF_ERROR(parse_mode(mode, "Resize", &a));
  if (node.opset < 11) {
    // Resize-10: (X, scales), asymmetric coordinates, ONNX Runtime's "simple" nearest rounding.
    a.coord = Coord::kAsymmetric;
    a.nearest = Nearest::kSimple;
    a.scales_input = 1;
    return std::unique_ptr<Kernel>(new ResizeKernel(std::move(a)));
  }
  a.scales_input = 2;
  a.sizes_input = 3;
  a.roi_input = 1;
  SOD2_ATTR(a.extrapolation_value, node.attrs.get_float("extrapolation_value", 0.f));
  std::string coord, nearest;
  SOD2_ATTR(coord, node.attrs.get_string("coordinate_transformation_mode", "half_pixel"));
  SOD2_ATTR(nearest, node.attrs.get_string("nearest_mode", "round_prefer_floor"));
  SOD2_ATTR(a.cubic_a, node.attrs.get_float("cubic_coeff_a", -0.75f));
  int64_t excl = 0;
  SOD2_ATTR(excl, node.attrs.get_int("exclude_outside", 0));
  a.exclude_outside = excl != 0;
  if (node.opset >= 18) {
    int64_t antialias = 0;
    SOD2_ATTR(antialias, node.attrs.get_int("antialias", 0));
    a.antialias = antialias != 0;
  }
  if (coord == "half_pixel")
    a.coord = Coord::kHalfPixel;
  else if (coord == "pytorch_half_pixel")
    a.coord = Coord::kPytorchHalfPixel;
  else if (coord == "align_corners")
    a.coord = Coord::kAlignCorners;
  else if (coord == "asymmetric")
    a.coord = Coord::kAsymmetric;
  else if (coord == "tf_half_pixel_for_nn")
    a.coord = Coord::kTfHalfPixelForNn;
  else if (coord == "tf_crop_and_resize")
    a.coord = Coord::kTfCropAndResize;
  else if (coord == "half_pixel_symmetric" && node.opset >= 19)
    a.coord = Coord::kHalfPixelSymmetric;
  else
    return invalid_argument("Resize: unknown coordinate_transformation_mode '" + coord + "'");
  if (nearest == "round_prefer_floor")
    a.nearest = Nearest::kRoundPreferFloor;
  else if (nearest == "round_prefer_ceil")
    a.nearest = Nearest::kRoundPreferCeil;
  else if (nearest == "floor")
    a.nearest = Nearest::kFloor;
  else if (nearest == "ceil")
    a.nearest = Nearest::kCeil;
  else
    return invalid_argument("Resize: unknown nearest_mode '" + nearest + "'");
  return std::unique_ptr<Kernel>(new ResizeKernel(std::move(a)));
}

Expected<std::unique_ptr<Kernel>> make_upsample(const NodeInfo& node) {
  if (!node.input_dtypes.empty() && node.input_dtypes[0] != DType::kFloat &&
      node.input_dtypes[0] != DType::kUndefined)
    return unsupported_dtype("Upsample", "X", node.input_dtypes[0]);
  ResizeAttrs a;
  a.op = "Upsample";
  std::string mode;
  SOD2_ATTR(mode, node.attrs.get_string("mode", "nearest"));
  SOD2_RETURN_IF_ERROR(parse_mode(mode, "Upsample", &a));
  a.coord = Coord::kAsymmetric;
  a.nearest = Nearest::kSimple;
  if (node.opset < 9) {
    a.scales_input = -1;
    SOD2_ATTR(a.attr_scales, node.attrs.get_floats("scales"));
    if (a.attr_scales.empty()) return invalid_argument("Upsample: needs the scales attribute");
  }
  return std::unique_ptr<Kernel>(new ResizeKernel(std::move(a)));
}

}  // namespace sod2::rt
