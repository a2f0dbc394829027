// oneDNN's side of the blocked convolution (conv_blocked.cpp): the engine and each thread's
// stream, a convolution primitive for one part of an image with the epilogue oneDNN can take as
// post-ops, and the reorder of weights into a primitive's layout. Only where oneDNN is the GEMM
// library.
#pragma once

#if defined(SOD2_GEMM_ONEDNN)

#include <dnnl.h>

#include <cstdint>
#include <memory>

#include "core/status/status.h"
#include "runtime/kernels/linalg/epilogue.h"

namespace sod2::rt::onednn_conv {

// The CPU engine (nullptr where oneDNN cannot make one), and the calling thread's stream on it:
// streams are cheap but not free to create, so each pool thread keeps one.
dnnl_engine_t cpu_engine();
dnnl_stream_t thread_stream();

// The convolution in 2-D terms (a 1-D conv is one with height 1).
struct Geometry {
  int64_t c = 0, m = 0, ih = 0, iw = 0, oh = 0, ow = 0, kh = 0, kw = 0, sh = 0, sw = 0, dh = 0,
          dw = 0, pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t groups = 1;  // c and m count all groups' channels
  bool operator==(const Geometry&) const = default;
};

// What a primitive applies to its output in oneDNN's post-ops, in the order EpilogueRun::apply
// does and rounding as it does: one bias vector (acc + bias), a residual added before or after the
// activation, and ReLU, which oneDNN's injector computes as max(x, 0) for a zero slope, NaN and
// -0 giving 0 as the epilogue's v > 0 ? v : 0 does. Only for parts that write a held Y in place,
// where the residual (tied to Y) lies at Y's offsets.
struct FusedTail {
  bool bias = false;
  int residual = 0;  // 0: none; 1: before the activation; 2: after it
  bool relu = false;
  bool any() const { return bias || residual != 0 || relu; }
  bool operator==(const FusedTail&) const = default;
};

// The part of `e` oneDNN can take whole, or nothing: every other epilogue runs as a pass after the
// primitive.
FusedTail fusable_tail(const EpilogueRun& e);

// One primitive: one image of the geometry (whose `m` is the part's output channels). With
// plain_src the input is read as NCHW: for a few input channels (an RGB stem), where oneDNN's
// kernels take it as it is.
struct PrimitiveKey {
  Geometry g;
  int block = 0;
  bool plain_src = false;
  FusedTail tail;
  // oneDNN's Winograd F(2x2, 3x3) in place of the direct conv: usable only where oneDNN offers
  // it (3x3, stride 1, whole channel blocks, weights that fit its cache, a ReLU as the only
  // post-op besides the bias).
  bool winograd = false;
  bool operator==(const PrimitiveKey&) const = default;
};

struct Primitive {
  PrimitiveKey key;
  dnnl_primitive_desc_t desc = nullptr;
  dnnl_primitive_t prim = nullptr;
  dnnl_memory_desc_t src{}, weights{}, dst{};
  size_t scratchpad_bytes = 0;
  bool usable = false;  // a JIT implementation exists for this CPU

  ~Primitive() {
    if (prim) dnnl_primitive_destroy(prim);
    if (desc) dnnl_primitive_desc_destroy(desc);
  }
};

// The primitive of `key`; usable false where oneDNN has only reference or GEMM-based kernels for
// it (slower than the NCHW paths) or none.
std::unique_ptr<Primitive> create_primitive(const PrimitiveKey& key);

struct PrimitiveFree {
  void operator()(dnnl_primitive* p) const { dnnl_primitive_destroy(p); }
};
using OwnedPrimitive = std::unique_ptr<dnnl_primitive, PrimitiveFree>;

// Reorders `from` into `to` with *reorder, created on first use and kept: weights that are not
// constants are reordered on every run, which then creates nothing.
Status run_reorder(const dnnl_memory_desc_t& from_md, const float* from,
                   const dnnl_memory_desc_t& to_md, float* to, OwnedPrimitive* reorder);

}  // namespace sod2::rt::onednn_conv

#endif
