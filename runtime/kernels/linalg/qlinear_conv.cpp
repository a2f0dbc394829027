// The integer convolutions: ConvInteger (int32 output), QLinearConv (requantized uint8/int8
// output) and sod2:QFusedConv (QLinearConv whose result is clamped: a fused Relu or Clip of a QDQ
// group, core/package/kernel_fusion.h).
//
// Three ways to compute the same int32 sums (quantize.h's semantics, bit for bit), each finished
// through IntConvEpilogue (int_conv_epilogue.h):
//   - dense: an im2col tile of raw 8-bit input (padding holds x's zero point, so it adds 0) times
//     the int8 weights, on int8_vnni.h's GEMM (weights packed once) where the CPU has
//     AVX512-VNNI, else on int8_gemm.h's; 1x1 stride-1 convolutions read the input directly.
//     Needs int8 weights with zero point 0 (what quantisers write for weights);
//   - depthwise (one input and one output channel per group), any zero points:
//     int_conv_depthwise.h's paths;
//   - reference: operands centred into int16, for everything else (uint8 weights, per-channel
//     weight zero points).
// The layouts the dense path reads are int8_conv_layout.h's.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "runtime/kernels/cpu_clones.h"
#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/epilogue.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/int8_conv_layout.h"
#include "runtime/kernels/linalg/int8_gemm.h"
#include "runtime/kernels/linalg/int8_vnni.h"
#include "runtime/kernels/linalg/int_conv_depthwise.h"
#include "runtime/kernels/linalg/int_conv_epilogue.h"
#include "runtime/kernels/linalg/qdq_epilogue.h"
#include "runtime/kernels/linalg/quantize.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt::quant {
namespace {

constexpr int64_t kRefTile = 256;  // reference path: output positions per im2col tile

// out[i] = in[2 * i] for i < n: a stride-2 row, vectorised per CPU level (AVX-512 narrows words).
SOD2_CPU_CLONES void every_second_byte(const uint8_t* __restrict in, int64_t n,
                                       uint8_t* __restrict out) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[2 * i];
}

// Rows [r0, r1) of the compact copy of the input that strided 1x1 conv f reads (a row: one
// (channel, z, y) of its output), each byte xor kFlip.
template <class T, uint8_t kFlip>
void compact_rows(const Window3& f, const T* x, int64_t r0, int64_t r1, int8_t* out) {
  const int64_t sx = f.stride[2], ow = f.out[2];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t oy = r % f.out[1], oz = r / f.out[1] % f.out[0], ch = r / (f.out[1] * f.out[0]);
    const auto* row = reinterpret_cast<const uint8_t*>(x) +
                      ((ch * f.in[0] + oz * f.stride[0]) * f.in[1] + oy * f.stride[1]) * f.in[2];
    auto* o = reinterpret_cast<uint8_t*>(out) + r * ow;
    if (sx == 2) {
      every_second_byte(row, ow, o);
    } else {
      for (int64_t ox = 0; ox < ow; ++ox) o[ox] = row[ox * sx];
    }
    if constexpr (kFlip != 0)
      for (int64_t ox = 0; ox < ow; ++ox) o[ox] ^= kFlip;
  }
}

class IntConvKernel final : public Kernel {
 public:
  enum class Kind : uint8_t { kConvInteger, kQLinearConv, kQFusedConv };
  // A residual join after a QFusedConv's 8-bit result (inputs 9-15): whether there is one, and
  // its clamp.
  struct Join {
    bool present = false;
    float lo = -std::numeric_limits<float>::infinity();
    float hi = std::numeric_limits<float>::infinity();
  };
  IntConvKernel(WindowAttrs attrs, int64_t group, Kind kind, float clip_lo, float clip_hi,
                EpilogueRun activation, bool constant_weights, bool constant_w_scale,
                bool float_out, Join join)
      : attrs_(std::move(attrs)),
        group_(group),
        kind_(kind),
        requant_(kind != Kind::kConvInteger),
        clip_lo_(clip_lo),
        clip_hi_(clip_hi),
        activation_(activation),
        constant_weights_(constant_weights),
        float_out_(float_out),
        join_(join),
        depthwise_(constant_weights),
        w_scale_check_(constant_w_scale) {}

  Status run(KernelContext& ctx) override {
    const char* op = kind_ == Kind::kConvInteger   ? "ConvInteger"
                     : kind_ == Kind::kQLinearConv ? "QLinearConv"
                                                   : "QFusedConv";
    // Input slots: ConvInteger x, w, x_zp, w_zp; QLinearConv x, x_s, x_zp, w, w_s, w_zp, y_s,
    // y_zp, B.
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(requant_ ? 3 : 1);
    SOD2_RETURN_IF_ERROR(require_8bit(op, "x", x));
    SOD2_RETURN_IF_ERROR(require_8bit(op, "w", w));
    const int r = x->shape.rank();
    if (r < 3 || r > 5 || w->shape.rank() != r) {
      return invalid_argument(std::string(op) + ": x " + x->shape.to_string() + " and w " +
                              w->shape.to_string() + " must have the same rank, 3 to 5");
    }
    const int64_t n = x->shape[0], c = x->shape[1], m = w->shape[0];
    // w's channels compared by division: w->shape[1] * group could overflow (an empty w may
    // have any dims).
    if (c % group_ != 0 || m % group_ != 0 || w->shape[1] != c / group_) {
      return invalid_argument(std::string(op) + ": x " + x->shape.to_string() + " and w " +
                              w->shape.to_string() + " do not fit group " + std::to_string(group_));
    }
    const std::span<const int64_t> kernel = w->shape.dims().subspan(2);
    if (!attrs_.kernel_shape.empty() &&
        !std::equal(kernel.begin(), kernel.end(), attrs_.kernel_shape.begin(),
                    attrs_.kernel_shape.end())) {
      return invalid_argument(std::string(op) + ": kernel_shape " +
                              dims_string(attrs_.kernel_shape) + " differs from w " +
                              w->shape.to_string());
    }
    SOD2_ASSIGN_OR_RETURN(const Window3 g,
                          resolve_window(attrs_, x->shape.dims().subspan(2), kernel, op));
    QuantParam x_zp, w_zp, x_scale, w_scale, y_scale, y_zp;
    const Tensor* xz = ctx.input(2);
    const Tensor* wz = ctx.input(requant_ ? 5 : 3);
    if (xz)
      SOD2_RETURN_IF_ERROR(
          read_quant_param(op, "x_zero_point", xz, false, x->dtype, 1, false, &x_zp));
    if (wz)
      SOD2_RETURN_IF_ERROR(
          read_quant_param(op, "w_zero_point", wz, false, w->dtype, m, true, &w_zp));
    DType out_type = DType::kInt32;
    const Tensor* bias = nullptr;
    if (requant_) {
      if (!ctx.input(1) || !ctx.input(4) || (!float_out_ && !ctx.input(6)))
        return invalid_argument(std::string(op) + ": x_scale, w_scale and y_scale are required");
      SOD2_RETURN_IF_ERROR(
          read_quant_param(op, "x_scale", ctx.input(1), true, DType::kFloat, 1, false, &x_scale));
      SOD2_RETURN_IF_ERROR(
          read_quant_param(op, "w_scale", ctx.input(4), true, DType::kFloat, m, true, &w_scale));
      SOD2_RETURN_IF_ERROR(check_scales(op, "x_scale", x_scale));
      SOD2_RETURN_IF_ERROR(w_scale_check_.check(op, "w_scale", w_scale));
      if (float_out_) {
        out_type = DType::kFloat;
      } else {
        SOD2_RETURN_IF_ERROR(read_output_quantization(op, ctx.input(6), ctx.input(7), x->dtype,
                                                      &y_scale, &y_zp, &out_type));
      }
      bias = ctx.input(8);
      // QFusedConv's B may also be float: a QDQ Conv whose bias was left unquantized.
      const bool float_bias = bias && kind_ == Kind::kQFusedConv && bias->dtype == DType::kFloat;
      if (bias && ((bias->dtype != DType::kInt32 && !float_bias) || bias->numel() != m)) {
        return invalid_argument(std::string(op) + ": B must be int32" +
                                (kind_ == Kind::kQFusedConv ? " or float32" : "") + " with " +
                                std::to_string(m) + " values, got " + dtype_name(bias->dtype) +
                                " " + bias->shape.to_string());
      }
    }
    Shape out_shape{n, m};
    for (int i = 0; i < g.spatial; ++i) out_shape.push_back(g.out[3 - g.spatial + i]);
    // The residual join: QAdd's arithmetic on the 8-bit result and the residual (input 9), whose
    // output is the kernel's.
    QuantizedAdd join;
    const Tensor* residual = nullptr;
    if (join_.present) {
      residual = ctx.input(9);
      if (float_out_)
        return invalid_argument(std::string(op) + ": a residual join needs y_scale (input 6)");
      SOD2_RETURN_IF_ERROR(require_8bit(op, "residual", residual));
      if (residual->shape != out_shape) {
        return invalid_argument(std::string(op) + ": residual " + residual->shape.to_string() +
                                " differs from the output " + out_shape.to_string());
      }
      SOD2_ASSIGN_OR_RETURN(join,
                            read_quantized_add(op, ctx, out_type, 12, residual->dtype, 10, 14));
      join.lo = join_.lo;
      join.hi = join_.hi;
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, residual ? join.y_type : out_type, out_shape));
    if (y->numel() == 0) return Status::ok_status();

    // What the epilogue needs per output channel.
    IntConvEpilogue e;
    e.requant = requant_;
    e.out_type = out_type;
    if (bias && bias->dtype == DType::kFloat)
      e.float_bias = bias->as<const float>();
    else
      e.bias = bias ? bias->as<const int32_t>() : nullptr;
    if (requant_) {
      e.zp = y_zp.zero_point(0);
      const float ys = y_scale.scale(0);
      const bool u8 = out_type == DType::kUint8;
      auto q = [&](float v) {
        return u8 ? int32_t{quantize_value<uint8_t>(v, ys, e.zp)}
                  : int32_t{quantize_value<int8_t>(v, ys, e.zp)};
      };
      // Clamping the float result to [lo, hi] before quantizing is clamping the quantized value
      // to [q(lo), q(hi)]: quantization is monotone.
      if (!float_out_) {
        e.lo = q(clip_lo_);
        e.hi = q(clip_hi_);
      }
      e.x_scale = x_scale.scale(0);
      e.w_scale = &w_scale;
      e.y_scale = ys;
      e.activation = activation_;
      e.clip_lo = clip_lo_;
      e.clip_hi = clip_hi_;
    }
    // The 8-bit result goes to y, where the join (in the store or after) then writes over it, or
    // for a join that ends in float (no QuantizeLinear after it) to scratch.
    Tensor result = *y;
    result.dtype = out_type;
    if (residual && join.y_type == DType::kFloat) {
      SOD2_ASSIGN_OR_RETURN(result.data, ctx.scratch(static_cast<size_t>(y->numel())));
    } else if (residual) {
      e.join = &join;
      e.residual = residual->data;
    }
    SOD2_RETURN_IF_ERROR(convolve(ctx, g, *x, *w, x_zp, w_zp, wz != nullptr, e, &result));
    // Paths without the join in their store: the join over the result, into y.
    if (residual && !e.joined) {
      ctx.pool().parallel_for(y->numel(), kQuantGrain, [&](int64_t lo, int64_t hi) {
        quantized_add(join, result.data, residual->data, lo, hi, y->data);
      });
    }
    return Status::ok_status();
  }

 private:
  Status convolve(KernelContext& ctx, const Window3& g, const Tensor& x, const Tensor& w,
                  const QuantParam& x_zp, const QuantParam& w_zp, bool has_w_zp,
                  const IntConvEpilogue& e, Tensor* y) {
    const int64_t c = x.shape[1], m = w.shape[0];
    const bool w_zero = !has_w_zp || [&] {
      for (int64_t i = 0; i < w_zp.count; ++i)
        if (w_zp.zero_point(i) != 0) return false;
      return true;
    }();
    if (c == group_ && m == group_) return depthwise_.run(ctx, g, x, w, x_zp, w_zp, e, y);
    if (w.dtype == DType::kInt8 && w_zero) return dense(ctx, g, x, w, x_zp.zero_point(0), e, y);
    return reference(ctx, g, x, w, x_zp.zero_point(0), w_zp, e, y);
  }

  Status dense(KernelContext& ctx, const Window3& g, const Tensor& x, const Tensor& w, int32_t xzp,
               const IntConvEpilogue& e, Tensor* y) {
    // A strided 1x1 conv without padding (ResNet's downsample) is a stride-1 1x1 conv on the
    // input it reads, copied compactly (compact_rows): a GEMM on the copy as it is, instead of
    // the padded, phase-split copy of the whole input and the packing of a general window
    // (which ran these 12x slower than the 3x3 convs around them).
    const Window3* from = nullptr;
    Window3 sg = g;
    if (strided_pointwise(g)) {
      from = &g;
      for (int i = 0; i < 3; ++i) {
        sg.in[i] = g.out[i];
        sg.stride[i] = 1;
      }
    }
    if (vnni_available()) {
      return x.dtype == DType::kUint8 ? dense_typed<uint8_t, true>(ctx, sg, from, x, w, xzp, e, y)
                                      : dense_typed<int8_t, true>(ctx, sg, from, x, w, xzp, e, y);
    }
    return x.dtype == DType::kUint8 ? dense_typed<uint8_t, false>(ctx, sg, from, x, w, xzp, e, y)
                                    : dense_typed<int8_t, false>(ctx, sg, from, x, w, xzp, e, y);
  }

  // The weights of each group packed for vnni_gemm (and, with `lanes`, for
  // vnni_gemm_lanes_requant too): kept while the weights are a constant (the same tensor at the
  // same address every run), else packed again per run.
  const std::vector<VnniWeights>& vnni_weights(const Tensor& w, bool lanes) {
    const int64_t m = w.shape[0], mg = m / group_, rows = w.numel() / std::max<int64_t>(m, 1);
    if (!constant_weights_ || vnni_.size() != static_cast<size_t>(group_) ||
        vnni_[0].source != w.data || vnni_[0].m != mg || vnni_[0].k != rows) {
      vnni_.resize(static_cast<size_t>(group_));
      for (int64_t grp = 0; grp < group_; ++grp) {
        vnni_pack_weights(w.as<const int8_t>() + grp * mg * rows, mg, rows, rows,
                          &vnni_[static_cast<size_t>(grp)]);
        vnni_[static_cast<size_t>(grp)].source = w.data;
      }
    }
    if (lanes)
      for (VnniWeights& vw : vnni_)
        if (vw.lanes.empty()) vnni_pack_lanes(&vw);
    return vnni_;
  }

  // Per image and group: the padded copy (all threads), then tiles of output positions (or, for
  // small outputs, blocks of output channels) over the threads: im2col, GEMM, requantization.
  // kVnni: the operand is uint8 (vnni_gemm's), else int8 (igemm_serial's); the input is flipped
  // to it where it is the other type.
  // With `from` (a strided 1x1 conv's geometry), g is the stride-1 1x1 conv over the compact copy
  // of the input `from` reads, and x is that input.
  template <class T, bool kVnni>
  Status dense_typed(KernelContext& ctx, const Window3& g, const Window3* from, const Tensor& x,
                     const Tensor& w, int32_t xzp, const IntConvEpilogue& e, Tensor* y) {
    const int64_t n = x.shape[0], c = x.shape[1], m = w.shape[0];
    const int64_t cg = c / group_, mg = m / group_, rows = cg * g.k_size();
    const int64_t out_size = g.out_size(), in_size = g.in_size();
    const int64_t x_plane = from ? from->in_size() : in_size;
    const bool point = pointwise(g);
    constexpr bool kNative = std::is_same_v<T, std::conditional_t<kVnni, uint8_t, int8_t>>;
    constexpr uint8_t kFlip = kNative ? 0 : 0x80;
    // Input of the operand's type in a 1x1 stride-1 convolution is the GEMM's operand as it is.
    const bool direct = kNative && point && !from;
    const int32_t zero = kNative ? xzp : std::is_same_v<T, uint8_t> ? xzp - 128 : xzp + 128;
    // The epilogue happens in the GEMM's store: a plain requantization (a clamp), or a float
    // epilogue whose activation is plain arithmetic (activate_row's, in registers).
    const bool float_epilogue = requant_ && e.float_epilogue();
    const bool store_requant =
        kVnni && requant_ && (!float_epilogue || inline_activation(e.activation.activation));
    // Deep dot products over enough channels run with the channels in vector lanes
    // (vnni_gemm_lanes_requant): 3x3 convs of 128 and 256 channels, 0.33-0.37 -> 0.28-0.30 ns
    // per 64 multiply-adds on one core here, and a 7x7 map's 49 positions no longer fill 64 lanes.
    const bool lanes = store_requant && rows >= 1024 && mg >= 64;
    const std::vector<VnniWeights>* packed_w = nullptr;
    if constexpr (kVnni) packed_w = &vnni_weights(w, lanes);
    ChannelEpilogue store;  // per output channel; its arrays in scratch: no heap allocation per run
    if (store_requant) {
      SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(m) * sizeof(float)));
      store = e.channel_epilogue(m, static_cast<float*>(mem));
      e.joined = e.join != nullptr;
    }
    Padded p = padded_layout(g);
    // A 1x1 stride-1 convolution reads the flipped (or compact) copy as the GEMM operand: rows
    // without slack.
    if (point) p.wp = g.in[2];
    // Rows [r0, r1) of the GEMM's input copy: the padded one, or the compact one of `from`.
    // may_overrun: the rows after r1 in dst are this thread's to rewrite or ignore.
    auto prepare = [&](const T* x_img, int64_t r0, int64_t r1, int8_t* dst, bool may_overrun) {
      if (from) {
        compact_rows<T, kFlip>(*from, x_img, r0, r1, dst);
      } else if (!pad_rows_vector(g, p, x_img, kFlip, static_cast<int8_t>(zero), r0, r1, dst,
                                  may_overrun)) {
        pad_rows<T, kFlip>(g, p, x_img, static_cast<int8_t>(zero), r0, r1, dst);
      }
    };
    // Threads worth waking for one image and group: as many as a float conv of as many
    // multiply-adds gets, though an int8 one costs about a quarter. Each thread then prepares the
    // input rows its part reads and writes its part's output rows, which the next conv's same
    // part reads from the same core (with a quarter, ResNet's downsamples ran on one thread:
    // 0.061 -> 0.033 ms on two). Tiles: enough for each thread, each im2col tile within ~256 KiB
    // (L2).
    const int64_t threads = parallel_parts(ctx.pool(), static_cast<double>(out_size) * mg * rows);
    int64_t tile = std::max<int64_t>(64, (256 << 10) / std::max<int64_t>(rows, 1));
    const int64_t per_thread = (out_size + threads - 1) / threads;
    // Below 64 positions a thread's GEMM is too narrow: small outputs (a network's last stages)
    // split their output channels instead.
    const bool split_channels = per_thread < 64 && mg >= 32;
    // And the tile's int32 sums within ~192 KiB, so the epilogue reads them from L2: a 1x1
    // convolution over few channels has a small operand but a wide output.
    const int64_t acc_cap = std::max<int64_t>(64, (192 << 10) / (4 * std::max<int64_t>(mg, 1)));
    tile =
        std::min({tile, out_size, acc_cap / 16 * 16,
                  split_channels ? out_size : std::max<int64_t>(64, (per_thread + 15) / 16 * 16)});
    // Each thread an equal share of the positions (a part), cut into equal tiles of at most
    // `tile`: 784 positions on 2 threads are 392 each, not tiles of 227 that leave one thread
    // 330 and the other 454.
    const int64_t parts = split_channels ? 1 : std::min(threads, out_size);
    const int64_t share = (out_size + parts - 1) / parts;
    const int64_t part_tiles = (share + tile - 1) / tile;
    tile = (share + part_tiles - 1) / part_tiles;
    const int64_t tiles = parts * part_tiles;
    const int64_t oc_blocks = split_channels && tiles < threads ? std::min(threads, mg / 16) : 1;
    const int64_t jobs = tiles * oc_blocks;
    const int64_t slots = std::min(threads, jobs);
    // Where each thread's jobs are one part of a 2D image's output rows, each pads the input rows
    // its part reads (halo included) into a copy of its own, as its first job: no pass over all
    // threads and no wait for it, and what a thread reads it wrote itself (a cache line that one
    // core writes and another reads has to move between them: the shared copy of a 32x56x56
    // input took 27 us to pad on 2 threads here, against 12 us on one).
    const bool own_pad = !direct && !split_channels && p.pz == 1 && parts > 1 && slots == parts;
    auto round64 = [](size_t v) { return (v + 63) & ~size_t{63}; };
    // Slack past the last row: im2col's chunked copies read up to kCopyChunk - 1 bytes beyond
    // a run, vnni_pack_runs up to 31, and pad_rows_vector's last store may write 63.
    const size_t padded_bytes =
        direct ? 0 : round64(static_cast<size_t>(cg * p.channel_bytes()) + 64);
    // The VNNI path packs its operand straight from the padded input: no im2col tile.
    const size_t col_bytes =
        direct || point || kVnni ? 0 : round64(static_cast<size_t>(rows * tile) + kCopyChunk);
    // The int32 sums of a tile; the lanes path's rows are whole blocks of 16 channels, from a
    // block that may start before the first.
    const size_t acc_bytes =
        round64(static_cast<size_t>(tile * (lanes ? (mg + 15) / 16 * 16 + 16 : mg)) * 4);
    const int64_t max_segs = max_segments(g, tile);
    const size_t seg_bytes = round64(static_cast<size_t>(max_segs) * sizeof(Segment));
    const size_t run_bytes = kVnni ? round64(static_cast<size_t>(max_segs) * sizeof(VnniRun)) : 0;
    const size_t pack_bytes =
        kVnni ? round64(static_cast<size_t>(vnni_packed_bytes(rows, tile)) + 128) : 0;
    const size_t slot_bytes = col_bytes + acc_bytes + seg_bytes + run_bytes + pack_bytes;
    // Per im2col row (tap), where its values for output position 0 start in the padded input.
    const size_t base_bytes =
        kVnni && !point ? round64(static_cast<size_t>(rows) * sizeof(const uint8_t*)) : 0;
    const size_t pads_bytes = padded_bytes * static_cast<size_t>(own_pad ? slots : 1);
    SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(pads_bytes + base_bytes +
                                                 slot_bytes * static_cast<size_t>(slots) + 64));
    auto* xp = static_cast<int8_t*>(mem);
    auto* row_base = reinterpret_cast<const uint8_t**>(static_cast<char*>(mem) + pads_bytes);
    char* slot_base = static_cast<char*>(mem) + pads_bytes + base_bytes;
    const int8_t* wd = w.as<const int8_t>();
    if (base_bytes > 0) tap_bases(g, p, xp, cg, row_base);
    for (int64_t ng = 0; ng < n * group_; ++ng) {
      const int64_t img = ng / group_, grp = ng % group_;
      const T* x_img = x.as<const T>() + (img * c + grp * cg) * x_plane;
      if (!direct && !own_pad) {
        const int64_t prow = cg * p.pz * p.py;
        if (threads == 1) {
          prepare(x_img, 0, prow, xp, true);
        } else {
          ctx.pool().parallel_for(
              prow, std::max<int64_t>(1, 16384 / p.row_bytes()),
              [&](int64_t r0, int64_t r1) { prepare(x_img, r0, r1, xp, false); });
        }
      }
      for_slots(ctx.pool(), jobs, slots, [&](int64_t job, int64_t slot) {
        const int64_t ob = job % oc_blocks, t0 = job / oc_blocks;
        const int64_t m0 = mg * ob / oc_blocks, m1 = mg * (ob + 1) / oc_blocks;
        const int64_t part = t0 / part_tiles, part_end = out_size * (part + 1) / parts;
        const int64_t p0 = out_size * part / parts + t0 % part_tiles * tile;
        const int64_t width = std::min(tile, part_end - p0);
        if (width <= 0) return;
        // This slot's padded copy (own_pad: at the same offsets as the shared one's, so the tap
        // bases hold for it shifted by `shift`).
        int8_t* xs = own_pad ? xp + padded_bytes * static_cast<size_t>(slot) : xp;
        const int64_t shift = xs - xp;
        if (own_pad && job == jobs * slot / slots) {
          const int64_t part_begin = out_size * part / parts;
          const int64_t oy0 = part_begin / g.out[2], oy1 = (part_end - 1) / g.out[2];
          const int64_t y0 = oy0 * g.stride[1];
          const int64_t y1 = std::min(p.py, oy1 * g.stride[1] + (g.k[1] - 1) * g.dil[1] + 1);
          for (int64_t ch = 0; ch < cg; ++ch)
            prepare(x_img, ch * p.py + y0, ch * p.py + y1, xs, true);
        }
        char* base = slot_base + slot_bytes * static_cast<size_t>(slot);
        auto* col = reinterpret_cast<int8_t*>(base);
        auto* acc = reinterpret_cast<int32_t*>(base + col_bytes);
        auto* segs = reinterpret_cast<Segment*>(base + col_bytes + acc_bytes);
        const int8_t* b = reinterpret_cast<const int8_t*>(x_img) + p0;
        int64_t ldb = in_size;
        if (point && !direct) {
          b = xs + p0;  // 1x1, stride 1, no padding: the flipped copy is the operand
        } else if (!direct && !kVnni) {
          const int64_t nsegs = segments(g, p0, width, segs);
          im2col(g, p, xs, cg, segs, nsegs, width, col);
          b = col;
          ldb = width;
        }
        if constexpr (kVnni) {
          char* after = base + col_bytes + acc_bytes + seg_bytes;
          auto* runs = reinterpret_cast<VnniRun*>(after);
          auto* packed = reinterpret_cast<uint8_t*>(after + run_bytes);
          if (point) {
            vnni_pack_activations(reinterpret_cast<const uint8_t*>(b), ldb, rows, width, packed);
          } else {
            const int64_t nsegs = segments(g, p0, width, segs);
            for (int64_t i = 0; i < nsegs; ++i) {
              const Segment& sg = segs[i];
              runs[i] = {sg.t,
                         (sg.oz * g.stride[0] * p.py + sg.oy * g.stride[1]) * p.row_bytes() +
                             sg.ox + shift,
                         sg.run};
            }
            vnni_pack_runs(row_base, rows, runs, nsegs, width, packed);
          }
          if (store_requant) {
            VnniRequant q;
            q.e = store.from_channel(grp * mg);
            const int64_t at = (img * m + grp * mg + m0) * out_size + p0;
            q.out = static_cast<char*>(y->data) + static_cast<size_t>(at) * dtype_size(e.out_type);
            q.ldo = out_size;
            if (e.join) {
              q.join = e.join;
              q.residual = static_cast<const char*>(e.residual) + at;  // 8-bit, as out
            }
            if (lanes) {
              vnni_gemm_lanes_requant((*packed_w)[static_cast<size_t>(grp)], m0, m1, packed, width,
                                      zero, q, acc);
            } else {
              vnni_gemm_requant((*packed_w)[static_cast<size_t>(grp)], m0, m1, packed, width, zero,
                                q);
            }
            return;
          }
          vnni_gemm((*packed_w)[static_cast<size_t>(grp)], m0, m1, packed, width, zero, acc, width);
        } else {
          igemm_serial(m1 - m0, width, rows, wd + (grp * mg + m0) * rows, rows, b, ldb, zero, acc,
                       width);
        }
        for (int64_t mm = m0; mm < m1; ++mm) {
          const int64_t oc = grp * mg + mm;
          e.finish(acc + (mm - m0) * width, width, oc, (img * m + oc) * out_size + p0, y);
        }
      });
    }
    return Status::ok_status();
  }

  // Any zero points and weight types: operands centred into int16, summed modulo 2^32.
  Status reference(KernelContext& ctx, const Window3& g, const Tensor& x, const Tensor& w,
                   int32_t xzp, const QuantParam& w_zp, const IntConvEpilogue& e, Tensor* y) const {
    const int64_t n = x.shape[0], c = x.shape[1], m = w.shape[0];
    const int64_t cg = c / group_, mg = m / group_, rows = cg * g.k_size();
    const int64_t out_size = g.out_size(), in_size = g.in_size();
    const int64_t tiles = (out_size + kRefTile - 1) / kRefTile;
    const int64_t jobs = n * group_ * tiles;
    const int64_t slots = slot_count(ctx.pool(), jobs);
    // Scratch: centred weights [m, rows]; per slot an im2col tile [rows, kRefTile] (int16) and
    // accumulators [kRefTile].
    const size_t w_bytes = (static_cast<size_t>(m * rows) * 2 + 63) & ~size_t{63};
    const size_t slot_bytes =
        (static_cast<size_t>(rows * kRefTile) * 2 + kRefTile * 4 + 63) & ~size_t{63};
    SOD2_ASSIGN_OR_RETURN(void* mem,
                          ctx.scratch(w_bytes + slot_bytes * static_cast<size_t>(slots)));
    auto* w16 = static_cast<int16_t*>(mem);
    for (int64_t i = 0; i < m * rows; ++i)
      w16[i] = static_cast<int16_t>(load8(w, i) - w_zp.zero_point(i / rows));

    for_slots(ctx.pool(), jobs, slots, [&](int64_t job, int64_t slot) {
      const int64_t tile = job % tiles, ng = job / tiles;
      const int64_t img = ng / group_, grp = ng % group_;
      const int64_t p0 = tile * kRefTile, width = std::min(kRefTile, out_size - p0);
      char* base = static_cast<char*>(mem) + w_bytes + slot_bytes * static_cast<size_t>(slot);
      auto* col = reinterpret_cast<int16_t*>(base);
      auto* acc = reinterpret_cast<uint32_t*>(base + static_cast<size_t>(rows * kRefTile) * 2);
      const int64_t x_base = (img * c + grp * cg) * in_size;
      for (int64_t t = 0; t < width; ++t) {
        const int64_t pos = p0 + t;
        const int64_t ox = pos % g.out[2], oy = (pos / g.out[2]) % g.out[1],
                      oz = pos / (g.out[2] * g.out[1]);
        int64_t row = 0;
        for (int64_t ch = 0; ch < cg; ++ch) {
          const int64_t ch_base = x_base + ch * in_size;
          for (int64_t kz = 0; kz < g.k[0]; ++kz) {
            const int64_t iz = oz * g.stride[0] - g.pad_begin[0] + kz * g.dil[0];
            for (int64_t ky = 0; ky < g.k[1]; ++ky) {
              const int64_t iy = oy * g.stride[1] - g.pad_begin[1] + ky * g.dil[1];
              for (int64_t kx = 0; kx < g.k[2]; ++kx, ++row) {
                const int64_t ix = ox * g.stride[2] - g.pad_begin[2] + kx * g.dil[2];
                const bool inside =
                    iz >= 0 && iz < g.in[0] && iy >= 0 && iy < g.in[1] && ix >= 0 && ix < g.in[2];
                col[row * kRefTile + t] =
                    inside ? static_cast<int16_t>(
                                 load8(x, ch_base + (iz * g.in[1] + iy) * g.in[2] + ix) - xzp)
                           : int16_t{0};
              }
            }
          }
        }
      }
      for (int64_t mm = 0; mm < mg; ++mm) {
        const int64_t oc = grp * mg + mm;
        dot_row(w16 + oc * rows, col, rows, width, kRefTile, acc);
        e.finish(reinterpret_cast<const int32_t*>(acc), width, oc, (img * m + oc) * out_size + p0,
                 y);
      }
    });
    return Status::ok_status();
  }

  WindowAttrs attrs_;
  int64_t group_;
  Kind kind_;
  bool requant_;
  float clip_lo_, clip_hi_;
  EpilogueRun activation_;  // QFusedConv's float activation, if any
  bool constant_weights_;   // NodeInfo::input_constant of w
  bool float_out_;          // QFusedConv without y_scale: a float result
  Join join_;
  std::vector<VnniWeights> vnni_;  // per group, vnni_weights()
  DepthwiseIntConv depthwise_;     // one input and one output channel per group
  ScaleCheck w_scale_check_;
};

Expected<std::unique_ptr<Kernel>> make_int_conv(const NodeInfo& node, IntConvKernel::Kind kind) {
  const char* op = kind == IntConvKernel::Kind::kConvInteger ? "ConvInteger" : "QLinearConv";
  SOD2_ASSIGN_OR_RETURN(WindowAttrs w, read_window_attrs(node.attrs, op));
  SOD2_ASSIGN_OR_RETURN(int64_t group, node.attrs.get_int("group", 1));
  if (group <= 0)
    return invalid_model(std::string(op) + ": group must be positive, got " +
                         std::to_string(group));
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  EpilogueRun act;
  IntConvKernel::Join join;
  if (kind == IntConvKernel::Kind::kQFusedConv) {
    SOD2_ASSIGN_OR_RETURN(lo, node.attrs.get_float("clip_min", lo));
    SOD2_ASSIGN_OR_RETURN(hi, node.attrs.get_float("clip_max", hi));
    if (std::isnan(lo) || std::isnan(hi) || lo > hi)
      return invalid_model("QFusedConv: clip_min " + std::to_string(lo) + " and clip_max " +
                           std::to_string(hi) + " are not a range");
    SOD2_ASSIGN_OR_RETURN(std::string name, node.attrs.get_string("activation", ""));
    if (!name.empty() && !activation_from_name(name, &act.activation))
      return invalid_model("QFusedConv: unknown activation '" + name + "'");
    SOD2_ASSIGN_OR_RETURN(act.alpha, node.attrs.get_float("alpha", 0.f));
    SOD2_ASSIGN_OR_RETURN(act.beta, node.attrs.get_float("beta", 0.f));
    join.present = node.input_present.size() > 9 && node.input_present[9];
    SOD2_ASSIGN_OR_RETURN(join.lo, node.attrs.get_float("join_clip_min", join.lo));
    SOD2_ASSIGN_OR_RETURN(join.hi, node.attrs.get_float("join_clip_max", join.hi));
    if (std::isnan(join.lo) || std::isnan(join.hi) || join.lo > join.hi)
      return invalid_model("QFusedConv: join_clip_min " + std::to_string(join.lo) +
                           " and join_clip_max " + std::to_string(join.hi) + " are not a range");
  }
  const size_t w_slot = kind == IntConvKernel::Kind::kConvInteger ? 1 : 3;
  const bool constant_w = w_slot < node.input_constant.size() && node.input_constant[w_slot];
  const bool constant_w_scale = node.input_constant.size() > 4 && node.input_constant[4];
  // A QDQ group that ends in float (no QuantizeLinear): QFusedConv without y_scale.
  const bool float_out = kind == IntConvKernel::Kind::kQFusedConv &&
                         (node.input_present.size() < 7 || !node.input_present[6]);
  return std::unique_ptr<Kernel>(std::make_unique<IntConvKernel>(
      std::move(w), group, kind, lo, hi, act, constant_w, constant_w_scale, float_out, join));
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_conv_integer(const NodeInfo& node) {
  return make_int_conv(node, IntConvKernel::Kind::kConvInteger);
}
Expected<std::unique_ptr<Kernel>> make_qlinear_conv(const NodeInfo& node) {
  return make_int_conv(node, IntConvKernel::Kind::kQLinearConv);
}
Expected<std::unique_ptr<Kernel>> make_qfused_conv(const NodeInfo& node) {
  return make_int_conv(node, IntConvKernel::Kind::kQFusedConv);
}

}  // namespace sod2::rt::quant
