// DeformConv-19 (2-D, float32): a convolution whose kernel tap (ky, kx) at output (oy, ox) reads X
// at its usual place plus a per-position (dy, dx) from `offset`, bilinearly with zeros outside X
// (the ONNX reference samples through GridSample with align_corners=1 and zero padding, which is
// exactly that), times an optional `mask`. Channels are split into `offset_group` blocks, each
// with its own offsets and mask. Layouts: offset [N, G * kH * kW * 2, oH, oW] with (dy, dx) pairs
// tap after tap, mask [N, G * kH * kW, oH, oW].
//
// The forward pass is Conv's im2col path with sampled columns: per (image, group, tile of output
// positions) a panel [C/group * kH * kW, tile] is filled with the samples, then one GEMM with the
// group's W writes the tile of Y. Tiles keep the panel in L2 and spread the work over the pool.
// The spec allows N-D; only 2-D is implemented (the form DCN models use).
#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/linalg_kernels.h"

namespace sod2::rt {
namespace {

constexpr const char* kOp = "DeformConv";

// One sample of plane `x` (h rows of w) at (y, xf); corners outside the plane read as zero. The
// range test also sends NaN and infinite coordinates to zero before floor() would overflow.
inline float bilinear(const float* x, int64_t h, int64_t w, float y, float xf) {
  if (!(y > -1.f && y < static_cast<float>(h) && xf > -1.f && xf < static_cast<float>(w)))
    return 0.f;
  const float fy = std::floor(y), fx = std::floor(xf);
  const auto y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  const float ly = y - fy, lx = xf - fx, hy = 1.f - ly, hx = 1.f - lx;
  float v = 0.f;
  if (y0 >= 0) {
    const float* r = x + y0 * w;
    if (x0 >= 0) v += hy * hx * r[x0];
    if (x0 + 1 < w) v += hy * lx * r[x0 + 1];
  }
  if (y0 + 1 < h) {
    const float* r = x + (y0 + 1) * w;
    if (x0 >= 0) v += ly * hx * r[x0];
    if (x0 + 1 < w) v += ly * lx * r[x0 + 1];
  }
  return v;
}

// A run's checked geometry and inputs.
struct DeformRun {
  ConvShape s;
  int64_t offset_group = 1, taps = 1, c_per_offset_group = 1;
  const float *x = nullptr, *w = nullptr, *b = nullptr, *offset = nullptr, *mask = nullptr;
};

// Rows [0, cg * taps) x columns [p0, p1) of the sampled im2col matrix of (image, group), written
// densely (row stride p1 - p0) to `dst`.
void sample_tile(const DeformRun& d, int64_t img, int64_t grp, int64_t p0, int64_t p1, float* dst) {
  const Window3& g = d.s.win;  // 2-D: index 1 is height, 2 is width
  const int64_t cg = d.s.c / d.s.group, ih = g.in[1], iw = g.in[2], ow = g.out[2];
  const int64_t P = g.out_size(), tp = p1 - p0, kw = g.k[2];
  for (int64_t c = 0; c < cg; ++c) {
    const int64_t ch = grp * cg + c;
    const float* xc = d.x + (img * d.s.c + ch) * ih * iw;
    const int64_t og = ch / d.c_per_offset_group;
    const float* off = d.offset + (img * d.offset_group + og) * d.taps * 2 * P;
    const float* msk = d.mask ? d.mask + (img * d.offset_group + og) * d.taps * P : nullptr;
    for (int64_t t = 0; t < d.taps; ++t) {
      const int64_t ky = t / kw, kx = t % kw;
      const float* dy = off + 2 * t * P;
      const float* dx = dy + P;
      const float* mk = msk ? msk + t * P : nullptr;
      float* row = dst + (c * d.taps + t) * tp;
      int64_t oy = p0 / ow, ox = p0 % ow;
      for (int64_t p = p0; p < p1; ++p) {
        const float y =
            static_cast<float>(oy * g.stride[1] - g.pad_begin[1] + ky * g.dil[1]) + dy[p];
        const float xf =
            static_cast<float>(ox * g.stride[2] - g.pad_begin[2] + kx * g.dil[2]) + dx[p];
        const float v = bilinear(xc, ih, iw, y, xf);
        row[p - p0] = mk ? v * mk[p] : v;
        if (++ox == ow) {
          ox = 0;
          ++oy;
        }
      }
    }
  }
}

// Checks that `t` is float32 [want...]; `what` names it in the error.
Status require_shape(const Tensor* t, const Shape& want, const char* what,
                     const std::string& layout) {
  if (t->dtype != DType::kFloat) return unsupported_dtype(kOp, what, t->dtype);
  if (t->shape != want)
    return invalid_argument(std::string(kOp) + ": " + what + " must be " + want.to_string() + " (" +
                            layout + "), got " + t->shape.to_string());
  return Status::ok_status();
}

class DeformConvKernel final : public Kernel {
 public:
  DeformConvKernel(WindowAttrs w, int64_t group, int64_t offset_group)
      : attrs_(std::move(w)), group_(group), offset_group_(offset_group) {}

  Status run(KernelContext& ctx) override {
    const Tensor *x = ctx.input(0), *w = ctx.input(1), *offset = ctx.input(2);
    const Tensor *b = ctx.input(3), *mask = ctx.input(4);
    if (!x || !w || !offset) return invalid_argument("DeformConv: needs inputs X, W and offset");
    if (x->shape.rank() != 4)
      return unsupported("DeformConv: X " + x->shape.to_string() + " has " +
                         std::to_string(std::max(x->shape.rank() - 2, 0)) +
                         " spatial dims; only 2-D DeformConv (X [N, C, H, W]) is supported");
    DeformRun d;
    SOD2_ASSIGN_OR_RETURN(d.s, conv_shape(x, w, b, attrs_, group_, kOp));
    const Window3& g = d.s.win;
    d.offset_group = offset_group_;
    d.taps = g.k_size();
    if (d.s.c % offset_group_ != 0)
      return invalid_argument("DeformConv: X's " + std::to_string(d.s.c) +
                              " channels do not divide into offset_group " +
                              std::to_string(offset_group_));
    d.c_per_offset_group = d.s.c / offset_group_;
    const int64_t taps = offset_group_ * d.taps;
    SOD2_RETURN_IF_ERROR(require_shape(offset, Shape{d.s.n, taps * 2, g.out[1], g.out[2]}, "offset",
                                       "N, offset_group * kH * kW * 2, oH, oW"));
    if (mask)
      SOD2_RETURN_IF_ERROR(require_shape(mask, Shape{d.s.n, taps, g.out[1], g.out[2]}, "mask",
                                         "N, offset_group * kH * kW, oH, oW"));
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, d.s.out));
    if (y->numel() == 0) return Status::ok_status();
    d.x = x->as<float>();
    d.w = w->as<float>();
    d.b = b ? b->as<float>() : nullptr;
    d.offset = offset->as<float>();
    d.mask = mask ? mask->as<float>() : nullptr;
    return forward(ctx, d, y->as<float>());
  }

 private:
  static Status forward(KernelContext& ctx, const DeformRun& d, float* Y) {
    const ConvShape& s = d.s;
    const int64_t cg = s.c / s.group, mg = s.m / s.group, kdim = cg * d.taps;
    const int64_t P = s.win.out_size();
    ThreadPool& pool = ctx.pool();
    // As Conv: the panel (kdim x tp) stays under ~512 KiB, with enough tiles for every thread.
    int64_t tp = std::max<int64_t>(16, (128 * 1024) / std::max<int64_t>(kdim, 1));
    const int64_t units = s.n * s.group;
    // Each sample costs about as much as a few multiply-adds.
    const double work = static_cast<double>(units) * (mg + 8) * kdim * P;
    if (parallel_parts(pool, work) > 1) {
      const int64_t want_tiles = (pool.num_threads() * 2 + units - 1) / units;
      tp = std::min(tp, (P + want_tiles - 1) / want_tiles);
    }
    tp = std::min(P, (tp + 15) / 16 * 16);
    const int64_t tiles = (P + tp - 1) / tp;
    const int slots = ScratchSlots::count(pool);
    SOD2_ASSIGN_OR_RETURN(float* panel_base, scratch_floats(ctx, slots * kdim * tp));
    ScratchSlots panels(panel_base, kdim * tp, slots);
    const double item_work = static_cast<double>(mg + 8) * kdim * tp;
    const int64_t grain =
        std::max<int64_t>(1, static_cast<int64_t>(1.0e6 / std::max(item_work, 1.0)));
    pool.parallel_for(units * tiles, grain, [&](int64_t i0, int64_t i1) {
      const int slot = panels.acquire();
      float* panel = panels.data(slot);
      for (int64_t it = i0; it < i1; ++it) {
        const int64_t unit = it / tiles, t = it % tiles;
        const int64_t img = unit / s.group, grp = unit % s.group;
        const int64_t p0 = t * tp, p1 = std::min(P, p0 + tp);
        sample_tile(d, img, grp, p0, p1, panel);
        float* yt = Y + (img * s.m + grp * mg) * P + p0;
        GemmArgs ga;
        ga.m = mg;
        ga.n = p1 - p0;
        ga.k = kdim;
        ga.a = d.w + grp * mg * kdim;
        ga.lda = kdim;
        ga.b = panel;
        ga.ldb = p1 - p0;
        ga.c = yt;
        ga.ldc = P;
        sgemm_serial(ga);
        if (d.b)
          for (int64_t r = 0; r < mg; ++r) {
            const float bias = d.b[grp * mg + r];
            float* yr = yt + r * P;
            for (int64_t p = 0; p < p1 - p0; ++p) yr[p] += bias;
          }
      }
      panels.release(slot);
    });
    return Status::ok_status();
  }

  WindowAttrs attrs_;
  int64_t group_, offset_group_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_deform_conv(const NodeInfo& node) {
  gemm_library_init();
  SOD2_RETURN_IF_ERROR(require_float_inputs(node));
  SOD2_ASSIGN_OR_RETURN(WindowAttrs w, read_window_attrs(node.attrs, kOp));
  if (w.auto_pad != AutoPad::kNotSet || w.ceil_mode)
    return invalid_argument("DeformConv: auto_pad and ceil_mode are not DeformConv attributes");
  // The attributes' lengths give the spatial rank away before any input arrives (an odd pads
  // length is left to resolve_window's count check).
  const std::pair<const char*, size_t> ranks[] = {
      {"kernel_shape", w.kernel_shape.size()},
      {"strides", w.strides.size()},
      {"dilations", w.dilations.size()},
      {"pads", w.pads.size() % 2 == 0 ? w.pads.size() / 2 : 0}};
  for (const auto& [name, rank] : ranks)
    if (rank != 0 && rank != 2)
      return unsupported(std::string("DeformConv: '") + name + "' implies " + std::to_string(rank) +
                         " spatial dims; only 2-D DeformConv (X [N, C, H, W]) is supported");
  int64_t group = 1, offset_group = 1;
  SOD2_ATTR(group, node.attrs.get_int("group", 1));
  SOD2_ATTR(offset_group, node.attrs.get_int("offset_group", 1));
  if (group <= 0) return invalid_argument("DeformConv: group must be positive");
  if (offset_group <= 0) return invalid_argument("DeformConv: offset_group must be positive");
  return std::unique_ptr<Kernel>(new DeformConvKernel(std::move(w), group, offset_group));
}

}  // namespace sod2::rt
