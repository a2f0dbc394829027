#include "runtime/kernels/linalg/int_conv_depthwise.h"

#include <algorithm>

#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/int8_conv_layout.h"
#include "runtime/kernels/linalg/int8_depthwise_vnni.h"
#include "runtime/kernels/linalg/int8_vnni.h"

namespace sod2::rt::quant {
namespace {

// Exact integers held as floats to int32, in place (the same 4 bytes each).
void to_int32(const float* v, int64_t count, int32_t* out) {
  for (int64_t i = 0; i < count; ++i) {
    const float f = v[i];
    out[i] = static_cast<int32_t>(f);
  }
}

}  // namespace

Status DepthwiseIntConv::run(KernelContext& ctx, const Window3& g, const Tensor& x, const Tensor& w,
                             const QuantParam& x_zp, const QuantParam& w_zp,
                             const IntConvEpilogue& e, Tensor* y) {
  if (g.spatial <= 2 && vnni_depthwise_applies(window_2d(g)) &&
      weights(g, w, w_zp, x.shape[1]).taps_fit)
    return vnni(ctx, g, x, x_zp.zero_point(0), e, y);
  if (depthwise_exact_in_float(g)) return in_float(ctx, g, x, w, x_zp, w_zp, e, y);
  return stencil(ctx, g, x, w, x_zp, w_zp, e, y);
}

// One input and one output channel per group on int8_depthwise_vnni.h's kernel, a plane per
// job, with weights()'s taps. The epilogue runs in its store where it is plain
// arithmetic, else over each plane's sums (in the slot's scratch) while they are cached.
Status DepthwiseIntConv::vnni(KernelContext& ctx, const Window3& g, const Tensor& x, int32_t xzp,
                              const IntConvEpilogue& e, Tensor* y) {
  const int64_t n = x.shape[0], c = x.shape[1], out_size = g.out_size(), in_size = g.in_size();
  const Window2D g2 = window_2d(g);
  const bool store = e.requant && inline_activation(e.activation.activation);
  const int64_t planes = n * c;
  const int64_t slots = std::min(
      parallel_parts(ctx.pool(), static_cast<double>(planes * out_size * g.k_size())), planes);
  const size_t sums_bytes = store ? 0 : static_cast<size_t>(out_size) * sizeof(int32_t);
  const size_t channel_bytes = static_cast<size_t>(c) * sizeof(float);
  SOD2_ASSIGN_OR_RETURN(void* mem,
                        ctx.scratch(channel_bytes + sums_bytes * static_cast<size_t>(slots) + 64));
  ChannelEpilogue ce;
  if (store) {
    ce = e.channel_epilogue(c, static_cast<float*>(mem));
    e.joined = e.join != nullptr;
  }
  auto* sums = reinterpret_cast<int32_t*>(static_cast<char*>(mem) + channel_bytes);
  const Weights& d = weights_;
  const VnniDepthwiseWindow window = vnni_depthwise_window(g2);
  const int64_t words = vnni_depthwise_tap_words(g2);
  for_slots(ctx.pool(), planes, slots, [&](int64_t plane, int64_t slot) {
    const int64_t ch = plane % c;
    VnniDepthwisePlane p;
    p.x = static_cast<const char*>(x.data) + plane * in_size;
    p.x_signed = x.dtype == DType::kInt8;
    p.x_zero = xzp;
    p.taps = d.tap_words.data() + ch * words;
    p.tap_sum = d.tap_sums[static_cast<size_t>(ch)];
    p.channel = ch;
    if (store) {
      p.e = &ce;
      p.out = y->data;
      p.at = plane * out_size;
      p.join = e.join;
      p.residual = e.residual;
    } else {
      p.sums = sums + slot * out_size;
    }
    vnni_depthwise_plane(window, p);
    if (!store) e.finish(p.sums, out_size, ch, plane * out_size, y);
  });
  return Status::ok_status();
}

// One input and one output channel per group, on the float depthwise convolution (channels in
// lanes or vectorised along output rows, as for float models): the input and the taps centred on
// their zero points as floats, the exact sums back to int32 for the epilogue. Several times
// faster than a stencil per channel on int16, whose per-channel overhead dominates a network's
// small planes.
Status DepthwiseIntConv::in_float(KernelContext& ctx, const Window3& g, const Tensor& x,
                                  const Tensor& w, const QuantParam& x_zp, const QuantParam& w_zp,
                                  const IntConvEpilogue& e, Tensor* y) {
  const int64_t n = x.shape[0], c = x.shape[1];
  const int64_t out_size = g.out_size();
  ConvShape shape;
  shape.n = n;
  shape.c = c;
  shape.m = c;
  shape.group = c;
  shape.win = g;
  shape.out = y->shape;
  const bool lanes = depthwise_lanes_applies(shape);
  // Where the epilogue is plain arithmetic, each work item's sums are finished by the thread
  // that computed them, while cached: no second pass, and no call per plane. With channels in
  // lanes on an AVX512-VNNI CPU, straight from the lanes (no float planes of sums at all).
  const bool item_epilogue = e.requant && inline_activation(e.activation.activation);
  const bool from_lanes =
      item_epilogue && lanes && vnni_available() && simd::simd_level() == simd::Level::kAvx512;
  auto round64 = [](size_t v) { return (v + 63) & ~size_t{63}; };
  const size_t y_bytes =
      from_lanes ? 0 : round64(static_cast<size_t>(n * c * out_size) * sizeof(float));
  const size_t c_bytes = round64(static_cast<size_t>(c) * sizeof(float));
  SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(y_bytes + c_bytes + 64));
  auto* yf = static_cast<float*>(mem);
  auto* per_channel = reinterpret_cast<float*>(static_cast<char*>(mem) + y_bytes);
  const float* wf = weights(g, w, w_zp, c).floats.data();
  // The kernel centres the input into floats as it reads it.
  DepthwiseInt8Input x8;
  x8.type = x.dtype;
  x8.data = x.data;
  x8.zero_point = x_zp.zero_point(0);
  const int64_t planes = n * c;
  struct Finish {
    ChannelEpilogue e;
    FloatSums sums;
    void* out;
  } fin;
  if (item_epilogue) {
    fin.e = e.channel_epilogue(c, per_channel);
    fin.sums.sums = yf;
    fin.sums.plane = out_size;
    fin.sums.channels = c;
    fin.out = y->data;
    x8.finish_context = &fin;
    x8.finish = [](const void* context, int64_t plane0, int64_t count, int64_t q0, int64_t q1) {
      const auto& f = *static_cast<const Finish*>(context);
      FloatSums part = f.sums;
      part.p0 = plane0;
      part.p1 = plane0 + count;
      part.q0 = q0;
      part.q1 = q1;
      epilogue_float_sums(f.e, part, f.out);
    };
    if (from_lanes)
      x8.finish_lanes = [](const void* context, int64_t plane0, int64_t planes, int64_t q0,
                           int64_t count, const float* lanes) {
        const auto& f = *static_cast<const Finish*>(context);
        vnni_finish_float_lanes(f.e, plane0 % f.sums.channels, static_cast<int>(planes), lanes,
                                count, f.sums.plane, plane0 * f.sums.plane + q0, f.out);
      };
  }
  if (lanes) {
    SOD2_RETURN_IF_ERROR(depthwise_lanes_forward(ctx, shape, nullptr, wf, from_lanes ? nullptr : yf,
                                                 EpilogueRun{}, &x8));
  } else {
    SOD2_RETURN_IF_ERROR(depthwise_forward(ctx, shape, nullptr, wf, yf, EpilogueRun{}, &x8));
  }
  if (item_epilogue) return Status::ok_status();
  // Other activations (Sigmoid, Tanh, SiLU) and ConvInteger's int32 sums: per plane.
  const int64_t out_grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(out_size, 1));
  ctx.pool().parallel_for(planes, out_grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      // The plane's sums to int32 in place (same size), then its epilogue in one call.
      float* sums = yf + p * out_size;
      auto* acc = reinterpret_cast<int32_t*>(sums);
      to_int32(sums, out_size, acc);
      e.finish(acc, out_size, p % c, p * out_size, y);
    }
  });
  return Status::ok_status();
}
// The depthwise weights minus their zero points, as floats and, where every one fits, as int8
// taps with each channel's sum (the VNNI kernel's): kept while the weights are a constant (the
// same tensor at the same address every run) and their zero points unchanged, else computed
// again (a 720-channel 5x5 layer spent a tenth of its time here every run).
const DepthwiseIntConv::Weights& DepthwiseIntConv::weights(const Window3& g, const Tensor& w,
                                                           const QuantParam& w_zp, int64_t c) {
  const int64_t ks = g.k_size();
  Weights& d = weights_;
  d.zero_points.resize(static_cast<size_t>(c));
  bool same =
      constant_weights_ && d.source == w.data && d.floats.size() == static_cast<size_t>(c * ks);
  for (int64_t ch = 0; ch < c; ++ch) {
    const int32_t zp = w_zp.zero_point(ch);
    same = same && d.zero_points[static_cast<size_t>(ch)] == zp;
    d.zero_points[static_cast<size_t>(ch)] = zp;
  }
  if (same) return d;
  d.floats.resize(static_cast<size_t>(c * ks));
  std::vector<int8_t> taps(static_cast<size_t>(c * ks));
  d.tap_sums.assign(static_cast<size_t>(c), 0);
  d.taps_fit = true;
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t k = 0; k < ks; ++k) {
      const size_t i = static_cast<size_t>(ch * ks + k);
      const int32_t v = load8(w, ch * ks + k) - d.zero_points[static_cast<size_t>(ch)];
      d.floats[i] = static_cast<float>(v);
      d.taps_fit = d.taps_fit && v >= -128 && v <= 127;
      taps[i] = static_cast<int8_t>(v);
      d.tap_sums[static_cast<size_t>(ch)] += v;
    }
  d.tap_words.clear();
  if (g.spatial <= 2 && d.taps_fit) {
    const Window2D g2 = window_2d(g);
    const int64_t words = vnni_depthwise_tap_words(g2);
    d.tap_words.resize(static_cast<size_t>(c * words));
    for (int64_t ch = 0; ch < c; ++ch)
      vnni_depthwise_pack_taps(g2, taps.data() + ch * ks, d.tap_words.data() + ch * words);
  }
  d.source = w.data;
  return d;
}

// One input and one output channel per group: a direct stencil per (image, channel) over the
// channel's centred, padded, phase-split copy (DwLayout).
Status DepthwiseIntConv::stencil(KernelContext& ctx, const Window3& g, const Tensor& x,
                                 const Tensor& w, const QuantParam& x_zp, const QuantParam& w_zp,
                                 const IntConvEpilogue& e, Tensor* y) const {
  const int64_t n = x.shape[0], c = x.shape[1];
  const int64_t ks = g.k_size(), out_size = g.out_size(), in_size = g.in_size();
  const DwLayout l = dw_layout(g);
  const int64_t threads =
      parallel_parts(ctx.pool(), static_cast<double>(n * c) * out_size * ks / 4);
  const int64_t slots = std::min(threads, n * c);
  auto round64 = [](size_t v) { return (v + 63) & ~size_t{63}; };
  const size_t plane_bytes = round64(static_cast<size_t>(l.elements()) * 2);
  const size_t acc_bytes = round64(static_cast<size_t>(g.out[0] * g.out[1] * l.wp) * 4);
  const size_t slot_bytes = plane_bytes + acc_bytes + round64(static_cast<size_t>(ks) * 2);
  SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(slot_bytes * static_cast<size_t>(slots) + 64));
  const int32_t xzp = x_zp.zero_point(0);
  for_slots(ctx.pool(), n * c, slots, [&](int64_t job, int64_t slot) {
    const int64_t img = job / c, ch = job % c;
    char* base = static_cast<char*>(mem) + slot_bytes * static_cast<size_t>(slot);
    auto* plane = reinterpret_cast<int16_t*>(base);
    auto* acc = reinterpret_cast<int32_t*>(base + plane_bytes);
    // In [-255, 255]: int16 taps times int16 inputs widen to int32 in one vector multiply.
    auto* taps = reinterpret_cast<int16_t*>(base + plane_bytes + acc_bytes);
    for (int64_t k = 0; k < ks; ++k)
      taps[k] = static_cast<int16_t>(load8(w, ch * ks + k) - w_zp.zero_point(ch));
    const int64_t x_off = (img * c + ch) * in_size;
    if (x.dtype == DType::kUint8)
      depthwise_channel(g, l, x.as<const uint8_t>() + x_off, xzp, taps, plane, acc);
    else
      depthwise_channel(g, l, x.as<const int8_t>() + x_off, xzp, taps, plane, acc);
    e.finish(acc, out_size, ch, (img * c + ch) * out_size, y);
  });
  return Status::ok_status();
}

}  // namespace sod2::rt::quant
