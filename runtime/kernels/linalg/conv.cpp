// Conv (1-D to 3-D, groups, dilations, pads, auto_pad, bias) on NCHW float32.
//
// Eight paths, all ending in the same per-tile epilogue (bias + activation + residual):
//  - 1-D/2-D convs larger than 1x1 whose channel counts (per group, for grouped ones) fill whole
//    blocks (or whose input has fewer channels than a block), where oneDNN is the GEMM library:
//    its JIT kernels in a channel-blocked layout (conv_blocked.cpp);
//  - depthwise (one input channel per group, 1-D/2-D): direct vectorised loops
//    (conv_depthwise.cpp); im2col would copy every input value k*k times for k*k multiply-adds;
//  - dense kernels larger than 1x1 up to 128 channels x 3x3 per group (1-D/2-D): direct
//    vectorised loops (conv_direct.cpp), no im2col;
//  - pointwise (1x1, stride 1, no pads) between channel-blocked tensors, weights up to 1 MB:
//    register tiles of positions x output blocks (conv_pointwise_blocked.cpp), in place;
//  - pointwise on one position per image (a squeeze-excitation's): a matrix-vector product
//    (conv_single_position.cpp);
//  - pointwise on NCHW with up to 48 input channels per group: register tiles of output
//    channels x positions (conv_pointwise.cpp), no packing and no second pass for the epilogue;
//  - other pointwise convs: a GEMM on the input as it is;
//  - otherwise im2col + GEMM, tiled over output positions so each thread builds a panel of
//    columns that fits in L2 and multiplies it right away.
#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/kernels/cpu_clones.h"
#include "runtime/kernels/linalg/channel_blocks.h"
#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/conv_blocked.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/conv_live_taps.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/linalg_kernels.h"

namespace sod2::rt {
namespace {

// Rows [0, cg*k_size) x columns [p0, p1) of the im2col matrix of one group's input `x`
// (cg planes of g.in_size()), written densely (row stride p1 - p0) to `dst`.
SOD2_CPU_CLONES
void im2col_tile(const float* x, int64_t cg, const Window3& g, int64_t p0, int64_t p1, float* dst) {
  const int64_t tp = p1 - p0;
  const int64_t ow = g.out[2], oh = g.out[1];
  int64_t row = 0;
  for (int64_t c = 0; c < cg; ++c) {
    const float* xc = x + c * g.in_size();
    for (int64_t kz = 0; kz < g.k[0]; ++kz)
      for (int64_t ky = 0; ky < g.k[1]; ++ky)
        for (int64_t kx = 0; kx < g.k[2]; ++kx, ++row) {
          float* d = dst + row * tp;
          int64_t p = p0;
          int64_t ox = p % ow, oy = (p / ow) % oh, oz = p / (ow * oh);
          const int64_t offx = kx * g.dil[2] - g.pad_begin[2];
          while (p < p1) {
            const int64_t run = std::min(ow - ox, p1 - p);
            const int64_t iz = oz * g.stride[0] - g.pad_begin[0] + kz * g.dil[0];
            const int64_t iy = oy * g.stride[1] - g.pad_begin[1] + ky * g.dil[1];
            if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1]) {
              std::memset(d, 0, static_cast<size_t>(run) * sizeof(float));
            } else {
              const float* xr = xc + (iz * g.in[1] + iy) * g.in[2];
              const int64_t sw = g.stride[2], iw = g.in[2];
              // Columns j in [j0, j1) read inside the row; the rest are padding.
              const int64_t first = ox * sw + offx;  // ix of j = 0
              const int64_t j0 = std::min(run, first >= 0 ? 0 : (-first + sw - 1) / sw);
              const int64_t j1 =
                  std::clamp<int64_t>(iw - 1 - first < 0 ? 0 : (iw - 1 - first) / sw + 1, j0, run);
              std::fill(d, d + j0, 0.f);
              if (sw == 1) {
                std::memcpy(d + j0, xr + first + j0, static_cast<size_t>(j1 - j0) * sizeof(float));
              } else if (sw == 2) {
                // A constant stride vectorises (deinterleaving loads).
                const float* xs = xr + first;
                for (int64_t j = j0; j < j1; ++j) d[j] = xs[2 * j];
              } else {
                for (int64_t j = j0; j < j1; ++j) d[j] = xr[first + j * sw];
              }
              std::fill(d + j1, d + run, 0.f);
            }
            d += run;
            p += run;
            ox = 0;
            if (++oy == oh) {
              oy = 0;
              ++oz;
            }
          }
        }
  }
}

class ConvKernel : public Kernel {
 public:
  ConvKernel(WindowAttrs w, int64_t group, const Epilogue& epi, bool constant_weights)
      : attrs_(std::move(w)),
        group_(group),
        epi_(epi),
        blocked_(constant_weights),
        constant_weights_(constant_weights) {}

  Status prepare(std::span<const Tensor* const> constants) override {
    if (constants.size() > 1 && constants[1] && constants[1]->dtype == DType::kFloat) {
      blocked_.prepare(*constants[1], attrs_, group_);
      weights_ = *constants[1];
    }
    return Status::ok_status();
  }

  // X, and Y with its residual, when the weights are constants the blocked path can hold.
  BlockedIo blocked_io(int block) const override {
    BlockedIo io;
    const std::span<const int64_t> w_dims = weights_.shape.dims();
    if (!weights_.data || w_dims.size() != 4 || block <= 0) return io;
    io.channels = w_dims[0];
    if (is_depthwise_2d()) {
      // The channel-lane depthwise path's own layout (conv_depthwise_lanes.cpp), whose groups
      // of lanes take a narrow last block as well.
      io.inputs = uint64_t{1};
      io.narrow_inputs = uint64_t{1};
      io.narrow_output = true;
    } else {
      const bool pointwise = w_dims[2] * w_dims[3] == 1;
      const bool writes = BlockedConv::can_write_blocked(w_dims, group_, block);
      const bool reads = BlockedConv::can_read_blocked(w_dims, group_, block);
      // Between held tensors a pointwise conv of one group runs on its own path, narrow last
      // blocks included (conv_pointwise_blocked.cpp): MobileNetV3's 24-, 40- and 72-channel ends.
      const bool own = pointwise && pointwise_blocked_takes(attrs_, w_dims, group_, block);
      if (reads || own) io.inputs = uint64_t{1};
      // Output channels that do not fill blocks (a classifier's) leave Y NCHW while X may still
      // arrive blocked: the conversion has to happen somewhere, and here it leaves the producers
      // blocked (SqueezeNet's last conv, whose X is every fire module's concat).
      if (!writes && !own) return io;
      // Otherwise a pointwise conv holds both sides or neither: between NCHW tensors it is a
      // GEMM on them as they are, faster than blocking one side (as measured on MobileNet's
      // expansions and DenseNet's bottlenecks, whose X comes from a BatchNormalization). Where
      // oneDNN could read X blocked but not write Y so, the two sides stay apart as above.
      if (pointwise) {
        if (!reads && !own) return BlockedIo{};
        if (writes || !reads) io.tied = uint64_t{1};
      }
      if (own) {
        io.narrow_inputs = uint64_t{1};
        io.narrow_output = true;
      }
    }
    io.output = true;
    if (epi_.residual_input >= 0) {
      io.inputs |= uint64_t{1} << epi_.residual_input;
      io.tied |= uint64_t{1} << epi_.residual_input;
      if (io.narrow_output) io.narrow_inputs |= uint64_t{1} << epi_.residual_input;
    }
    return io;
  }

  // Weights [C, 1, kH, kW] of a 2-D conv with one channel per group.
  bool is_depthwise_2d() const {
    const std::span<const int64_t> d = weights_.shape.dims();
    return weights_.data && d.size() == 4 && d[1] == 1 && d[0] == group_;
  }
  void use_blocked(int block, uint64_t inputs, bool output) override {
    held_.block = block;
    held_.input = (inputs & 1) != 0;
    held_.output = output;
    // Pointwise convs run the blocked path only on held tensors: their weights are reordered
    // now, so that the copy is memory of the loaded model, as the others' is (prepare() did
    // theirs).
    const std::span<const int64_t> d = weights_.shape.dims();
    if (!held_.any() || !weights_.data || d.size() != 4 || d[2] * d[3] != 1) return;
    // Between blocked tensors a pointwise conv of one group runs on its own path, on weights
    // repacked for it (conv_pointwise_blocked.cpp); oneDNN's takes the rest.
    if (held_.input && held_.output && pointwise_blocked_takes(attrs_, d, group_, block)) {
      pointwise_weights_.resize(static_cast<size_t>((d[0] + block - 1) / block * block * d[1]));
      pack_pointwise_blocked(weights_.as<float>(), d[0], d[1], block, pointwise_weights_.data());
      return;
    }
    blocked_.prepare(weights_, attrs_, group_, true);
  }

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    // Slot 2 is B unless the epilogue took it (a fused Conv that had no B).
    const Tensor* b = epi_.bias_input == 2 || epi_.residual_input == 2 ? nullptr : ctx.input(2);
    SOD2_ASSIGN_OR_RETURN(ConvShape s, conv_shape(x, w, b, attrs_, group_, "Conv"));
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, s.out));
    if (y->numel() == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(EpilogueRun e, resolve_epilogue(epi_, ctx, "Conv", y->shape, s.m,
                                                          b ? b->as<float>() : nullptr));
    const float* wd = w->as<float>();
    // Taps that read only padding for every output are dropped (conv_live_taps.h).
    if (const LiveTaps live = live_taps(s.win); live.trims) {
      SOD2_ASSIGN_OR_RETURN(wd, live_weights(ctx, s, live, wd));
      s.win = trimmed_window(s.win, live);
    }
    // A held tensor of one position per channel has the same bytes in either layout (a
    // squeeze-excitation's [N, C, 1, 1]): the residual is Y's shape.
    BlockedTensors held = held_;
    if (s.win.in_size() == 1) held.input = false;
    if (s.win.out_size() == 1) held.output = false;
    if (held.any() && s.c == s.group && s.m == s.c && depthwise_lanes_serves_blocked(s, held.block))
      return depthwise_lanes_forward(ctx, s, x->as<float>(), wd, y->as<float>(), e, nullptr, held);
    if (held.input && held.output && !pointwise_weights_.empty() && wd == weights_.data &&
        pointwise_blocked_applies(s, held.block))
      return pointwise_blocked_forward(ctx, s, x->as<float>(), pointwise_weights_.data(),
                                       y->as<float>(), e);
    SOD2_ASSIGN_OR_RETURN(bool done,
                          blocked_.run(ctx, s, x->as<float>(), wd, y->as<float>(), e, held));
    if (done) return Status::ok_status();
    if (held.any())
      return run_plain_for_blocked(ctx, s, held, x->as<float>(), wd, y->as<float>(), e);
    return conv_forward(ctx, s, x->as<float>(), wd, y->as<float>(), e);
  }

 private:
  // The live taps of W: kept from run to run when W is a constant, else in the run's scratch.
  Expected<const float*> live_weights(KernelContext& ctx, const ConvShape& s, const LiveTaps& live,
                                      const float* w) {
    const int64_t rows = s.m * (s.c / s.group);
    const int64_t floats = rows * live.count[0] * live.count[1] * live.count[2];
    if (!constant_weights_) {
      SOD2_ASSIGN_OR_RETURN(float* out, scratch_floats(ctx, floats));
      copy_live_taps(w, rows, s.win, live, out);
      return out;
    }
    const bool same = live_from_ == w && static_cast<int64_t>(live_weights_.size()) == floats &&
                      std::equal(live.first, live.first + 3, live_taps_.first) &&
                      std::equal(live.count, live.count + 3, live_taps_.count);
    if (!same) {
      live_weights_.resize(static_cast<size_t>(floats));
      copy_live_taps(w, rows, s.win, live, live_weights_.data());
      live_from_ = w;
      live_taps_ = live;
    }
    return live_weights_.data();
  }

  // A shape the blocked path declines (no JIT kernel for it, an image wholly in the padding) of
  // a conv whose tensors are held blocked: the NCHW paths, converting around them one image at a
  // time, so the copies take an image's memory rather than the batch's.
  Status run_plain_for_blocked(KernelContext& ctx, const ConvShape& s, BlockedTensors held,
                               const float* X, const float* W, float* Y, const EpilogueRun& e) {
    const int64_t in_count = s.win.in_size(), out_count = s.win.out_size();
    const int64_t x_image = s.c * in_count, y_image = s.m * out_count;
    float* x_plain = nullptr;
    float* y_plain = nullptr;
    float* res_plain = nullptr;
    if (held.input) {
      SOD2_ASSIGN_OR_RETURN(x_plain, scratch_floats(ctx, x_image));
    }
    if (held.output) {
      SOD2_ASSIGN_OR_RETURN(y_plain, scratch_floats(ctx, y_image));
      if (e.residual) {
        SOD2_ASSIGN_OR_RETURN(res_plain, scratch_floats(ctx, y_image));
      }
    }
    ConvShape one = s;
    one.n = 1;
    one.out[0] = 1;
    for (int64_t img = 0; img < s.n; ++img) {
      const float* x = X + img * x_image;
      if (held.input) {
        release_tensor(ctx.pool(), held.block, x, 1, s.c, in_count, x_plain);
        x = x_plain;
      }
      EpilogueRun plain_e = e;
      if (e.residual) plain_e.residual = e.residual + img * y_image;
      float* y = Y + img * y_image;
      if (held.output) {
        if (e.residual) {
          release_tensor(ctx.pool(), held.block, plain_e.residual, 1, s.m, out_count, res_plain);
          plain_e.residual = res_plain;
        }
        y = y_plain;
      }
      SOD2_RETURN_IF_ERROR(conv_forward(ctx, one, x, W, y, plain_e));
      if (held.output)
        hold_tensor(ctx.pool(), held.block, y_plain, 1, s.m, out_count, Y + img * y_image);
    }
    return Status::ok_status();
  }

  WindowAttrs attrs_;
  int64_t group_;
  Epilogue epi_;
  BlockedConv blocked_;
  // Constant float weights, from prepare() (the program's, alive with the session).
  Tensor weights_;
  BlockedTensors held_;
  bool constant_weights_;
  // W repacked for the blocked pointwise path, when this conv is one it serves.
  std::vector<float> pointwise_weights_;
  std::vector<float> live_weights_;
  const float* live_from_ = nullptr;
  LiveTaps live_taps_;
};

}  // namespace

Expected<ConvShape> conv_shape(const Tensor* x, const Tensor* w, const Tensor* b,
                               const WindowAttrs& attrs, int64_t group, const char* op) {
  if (!x || !w) return invalid_argument(std::string(op) + ": needs inputs X and W");
  if (x->dtype != DType::kFloat) return unsupported_dtype(op, "X", x->dtype);
  if (w->dtype != DType::kFloat) return unsupported_dtype(op, "W", w->dtype);
  if (b && b->dtype != DType::kFloat) return unsupported_dtype(op, "B", b->dtype);
  const int r = x->shape.rank();
  if (r < 3 || w->shape.rank() != r)
    return invalid_argument(std::string(op) + ": X " + x->shape.to_string() + " and W " +
                            w->shape.to_string() + " must have the same rank, at least 3");
  ConvShape s;
  s.n = x->shape[0];
  s.c = x->shape[1];
  s.m = w->shape[0];
  s.group = group;
  if (group <= 0 || s.c % group != 0 || s.m % group != 0 || w->shape[1] * group != s.c)
    return invalid_argument(std::string(op) + ": X " + x->shape.to_string() + " and W " +
                            w->shape.to_string() + " do not fit group " + std::to_string(group));
  const std::span<const int64_t> kernel = w->shape.dims().subspan(2);
  if (!attrs.kernel_shape.empty() &&
      !std::equal(kernel.begin(), kernel.end(), attrs.kernel_shape.begin(),
                  attrs.kernel_shape.end()))
    return invalid_argument(std::string(op) + ": kernel_shape " + dims_string(attrs.kernel_shape) +
                            " differs from W " + w->shape.to_string());
  if (b && b->numel() != s.m)
    return invalid_argument(std::string(op) + ": B " + b->shape.to_string() + " must have " +
                            std::to_string(s.m) + " elements");
  SOD2_ASSIGN_OR_RETURN(s.win, resolve_window(attrs, x->shape.dims().subspan(2), kernel, op));
  s.out.push_back(s.n);
  s.out.push_back(s.m);
  for (int i = 0; i < s.win.spatial; ++i) s.out.push_back(s.win.out[3 - s.win.spatial + i]);
  return s;
}

Status conv_forward(KernelContext& ctx, const ConvShape& s, const float* X, const float* W,
                    float* Y, const EpilogueRun& e) {
  const Window3& g = s.win;
  const int64_t cg = s.c / s.group, mg = s.m / s.group;
  const int64_t kvol = g.k_size(), kdim = cg * kvol;
  const int64_t P = g.out_size(), Pin = g.in_size();
  ThreadPool& pool = ctx.pool();

  if (cg == 1 && g.spatial <= 2)
    return depthwise_lanes_applies(s) ? depthwise_lanes_forward(ctx, s, X, W, Y, e)
                                      : depthwise_forward(ctx, s, X, W, Y, e);
  if (direct_conv_applies(s)) return direct_conv_forward(ctx, s, X, W, Y, e);
  if (single_position_applies(s)) return single_position_forward(ctx, s, X, W, Y, e);
  if (pointwise_narrow_applies(s)) return pointwise_narrow_forward(ctx, s, X, W, Y, e);

  const bool pointwise = kvol == 1 && g.stride[0] == 1 && g.stride[1] == 1 && g.stride[2] == 1 &&
                         g.pad_begin[0] + g.pad_begin[1] + g.pad_begin[2] == 0 &&
                         g.pad_end[0] + g.pad_end[1] + g.pad_end[2] == 0;
  // Column tiles: the im2col panel (kdim x tp) stays under ~512 KiB, tiles are multiples of 16
  // and there are enough of them to keep every thread busy.
  const int64_t threads = pool.num_threads();
  int64_t tp = std::max<int64_t>(16, (128 * 1024) / std::max<int64_t>(kdim, 1));
  // With an epilogue, the output tile (mg x tp) also stays within ~256 KiB, so the epilogue
  // reads it back from L2 rather than memory.
  if (!e.empty()) tp = std::min(tp, std::max<int64_t>(256, (64 * 1024) / std::max<int64_t>(mg, 1)));
  const int64_t units = s.n * s.group;
  const double macs = static_cast<double>(units) * mg * kdim * P;
  if (parallel_parts(pool, macs) > 1) {
    const int64_t want_tiles = (threads * 2 + units - 1) / units;
    tp = std::min(tp, (P + want_tiles - 1) / want_tiles);
  }
  tp = std::min(P, (tp + 15) / 16 * 16);
  int64_t tiles = (P + tp - 1) / tp;
  // Few output positions against many output channels (the 7x7 and 14x14 stages at batch 1):
  // every column tile would read all of the group's weights, so the threads take ranges of
  // output channels over every position instead, each reading only its rows of W (which stay
  // in its core's cache from run to run).
  int64_t mchunk = mg;
  const int64_t parts_per_unit = (threads + units - 1) / units;
  if (tiles > 1 && parts_per_unit > 1 && mg > P && mg >= 32 &&
      (pointwise || kdim * P <= 128 * 1024)) {
    tp = P;
    tiles = 1;
    mchunk = std::max<int64_t>(16, ((mg + parts_per_unit - 1) / parts_per_unit + 15) / 16 * 16);
  }
  const int64_t mparts = (mg + mchunk - 1) / mchunk;
  const int slots = ScratchSlots::count(pool);
  float* panel_base = nullptr;
  if (!pointwise) {
    SOD2_ASSIGN_OR_RETURN(panel_base, scratch_floats(ctx, slots * kdim * tp));
  }
  ScratchSlots panels(panel_base, kdim * tp, slots);
  const int64_t items = units * mparts * tiles;
  const double item_macs = static_cast<double>(mchunk) * kdim * tp;
  const int64_t grain =
      std::max<int64_t>(1, static_cast<int64_t>(1.0e6 / std::max(item_macs, 1.0)));
  pool.parallel_for(items, grain, [&](int64_t i0, int64_t i1) {
    const int slot = pointwise ? -1 : panels.acquire();
    for (int64_t it = i0; it < i1; ++it) {
      const int64_t unit = it / (mparts * tiles), t = it % tiles;
      const int64_t m0 = it / tiles % mparts * mchunk, m1 = std::min(mg, m0 + mchunk);
      const int64_t img = unit / s.group, grp = unit % s.group;
      const int64_t p0 = t * tp, p1 = std::min(P, p0 + tp);
      const float* xg = X + (img * s.c + grp * cg) * Pin;
      GemmArgs ga;
      ga.m = m1 - m0;
      ga.n = p1 - p0;
      ga.k = kdim;
      ga.a = W + (grp * mg + m0) * kdim;
      ga.lda = kdim;
      if (pointwise) {
        ga.b = xg + p0;
        ga.ldb = Pin;
      } else {
        float* panel = panels.data(slot);
        im2col_tile(xg, cg, g, p0, p1, panel);
        ga.b = panel;
        ga.ldb = p1 - p0;
      }
      const int64_t off = (img * s.m + grp * mg + m0) * P + p0;
      ga.c = Y + off;
      ga.ldc = P;
      sgemm_serial(ga);
      if (!e.empty())
        e.apply(Y + off, e.residual ? e.residual + off : nullptr, m1 - m0, p1 - p0, P,
                grp * mg + m0, true);
    }
    if (slot >= 0) panels.release(slot);
  });
  return Status::ok_status();
}

Expected<std::unique_ptr<Kernel>> make_conv_kernel(const NodeInfo& node, const Epilogue& epi) {
  gemm_library_init();
  SOD2_RETURN_IF_ERROR(require_float_inputs(node));
  SOD2_ASSIGN_OR_RETURN(WindowAttrs w, read_window_attrs(node.attrs, "Conv"));
  int64_t group = 1;
  SOD2_ATTR(group, node.attrs.get_int("group", 1));
  if (group <= 0) return invalid_argument("Conv: group must be positive");
  const bool constant_weights = node.input_constant.size() > 1 && node.input_constant[1];
  return std::unique_ptr<Kernel>(new ConvKernel(std::move(w), group, epi, constant_weights));
}

Expected<std::unique_ptr<Kernel>> make_conv(const NodeInfo& node) {
  return make_conv_kernel(node, Epilogue{});
}

}  // namespace sod2::rt
