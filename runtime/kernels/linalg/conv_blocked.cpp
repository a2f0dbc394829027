#include "runtime/kernels/linalg/conv_blocked.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/kernels/library_call.h"
#include "runtime/kernels/linalg/channel_blocks.h"
#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/simd.h"

#if defined(SOD2_GEMM_ONEDNN)
#include "runtime/kernels/linalg/conv_blocked_primitive.h"
#endif

namespace sod2::rt {

#if defined(SOD2_GEMM_ONEDNN)
namespace {

using namespace onednn_conv;

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};

// One part's weights in its primitive's layout.
struct PackedWeights {
  const float* source = nullptr;
  int64_t first_channel = 0, channels = 0;
  dnnl_memory_desc_t layout{};
  std::unique_ptr<float, AlignedFree> data;
  OwnedPrimitive reorder;
};

std::optional<Geometry> geometry_of(const ConvShape& s, bool held_blocked) {
  const Window3& w = s.win;
  // Depthwise convs (one input channel per group) have paths of their own.
  if (s.c == s.group || w.spatial > 2 || w.in[0] != 1 || w.k[0] != 1 || w.out[0] != 1)
    return std::nullopt;
  // A pointwise conv on NCHW tensors is a GEMM on the input as it is (conv.cpp): faster than
  // blocking it and back, as measured on ResNet's and MobileNet's 1x1 shapes. On tensors held
  // blocked there is nothing to convert.
  if (w.k_size() == 1 && !held_blocked) return std::nullopt;
  Geometry g;
  g.c = s.c;
  g.m = s.m;
  g.groups = s.group;
  g.ih = w.in[1];
  g.iw = w.in[2];
  g.oh = w.out[1];
  g.ow = w.out[2];
  g.kh = w.k[1];
  g.kw = w.k[2];
  g.sh = w.stride[1];
  g.sw = w.stride[2];
  g.dh = w.dil[1];
  g.dw = w.dil[2];
  g.pt = w.pad_begin[1];
  g.pl = w.pad_begin[2];
  g.pb = w.pad_end[1];
  g.pr = w.pad_end[2];
  return g;
}

int64_t whole_blocks(int64_t channels, int block) { return (channels + block - 1) / block * block; }

// Whether channel blocks of `block` fit the conv. A grouped conv's blocks divide each group's
// input and output channels. An ungrouped conv's last block of input or output channels may be
// partly padding (oneDNN pads the blocked tensors and the weights with zeros), so MobileNet's
// and EfficientNet's 24-, 40- and 112-channel tensors run here too, blocked into buffers of
// whole blocks, as long as the padding adds at most half the work (not a 1-channel head). An
// input of fewer channels than a block is read as NCHW (*plain_src: an RGB stem), as oneDNN's
// kernels take it.
bool block_fits(const Geometry& g, int block, bool* plain_src) {
  if (g.groups > 1) {
    *plain_src = false;
    return (g.c / g.groups) % block == 0 && (g.m / g.groups) % block == 0;
  }
  *plain_src = g.c < block;
  const auto little_padding = [block](int64_t ch) { return whole_blocks(ch, block) * 2 <= ch * 3; };
  return little_padding(g.m) && (*plain_src || little_padding(g.c));
}

// One item of work: of image `image`, output channels [first_channel, first_channel + g.m) and
// output rows [row0, row0 + g.oh), which read input rows [in_row0, in_row0 + g.ih) (rows
// outside the image read as zeros).
struct Part {
  int64_t image = 0, first_channel = 0, row0 = 0, in_row0 = 0;
  Geometry g;  // the part's own: its channels, input rows, output rows and vertical padding
  const Primitive* prim = nullptr;
  const float* weights = nullptr;
};

// Floats a part's blocked output may hold: each thread's copies stay about within its L2, so
// the output is still cached when it is unblocked, and the session's scratch stays small.
constexpr int64_t kPartOutputFloats = 64 * 1024;

// One image per part, and an image whose output is larger than a part may hold in bands of
// output rows (each band's input rows, halo included, are blocked into a buffer of its own).
// When the images do not divide evenly over the threads each image is split over them too: by
// ranges of output-channel blocks when the weights outweigh the input (each thread then reads
// only its share of them), or wherever X is read and Y written in place (X held or a stem's
// NCHW X, Y held: bands would copy their input rows and their output, and each would stream all
// the weights); otherwise by at least as many bands as threads.
// Fills `parts` (emptied first; false when the image lies wholly in the padding).
bool split(const ConvShape& s, const Geometry& g, int64_t threads, int block,
           BlockedTensors held_io, bool plain_src, std::vector<Part>* parts) {
  parts->clear();
  const bool held = held_io.output;
  const bool per_image = s.n % threads != 0;
  const int64_t blocks = (g.m + block - 1) / block;
  // (A grouped conv's weights are small: its images split by bands.) On tensors held blocked a
  // pointwise conv splits by channels too: its bands would cost a copy of their input and output
  // rows, where whole images are read and written in place.
  // An image of fewer output rows than threads (a 1-D conv is one row: wav2vec2's feature
  // extractor) has no bands to share, so it splits by channels whenever it has a block per thread.
  const bool few_rows = g.oh < threads;
  const int64_t band_rows =
      std::max<int64_t>(1, kPartOutputFloats / std::max<int64_t>(1, g.m * g.ow));
  // In place, each thread's channel blocks cost no copy, at the multiply-add rate of bands
  // (oneDNN alone, one thread: half the channels of a 64 -> 64 3x3 at 56x56 in 1.13 ms, half its
  // rows in 1.11-1.13; a 7x7/2 stem 1.06 and 1.04-1.08). GoogLeNet's 64 -> 192 3x3 ran in ten
  // bands of 6 rows (3.7-4.0 -> 3.4 ms), its stem 1.21-1.30 -> 1.08-1.20 ms.
  const bool in_place = (held_io.input || plain_src) && held_io.output && blocks % threads == 0;
  const bool by_channels =
      per_image && g.groups == 1 &&
      ((blocks >= (few_rows ? threads : 2 * threads) &&
        (g.m * g.kh * g.kw > g.ih * g.iw || (held && g.kh * g.kw == 1) || few_rows)) ||
       (blocks >= threads && in_place));
  const int64_t channel_parts = by_channels ? threads : 1;
  // Bands that keep a part's output cached for its conversion back or its copy into place: none
  // is needed where whole images are written in place.
  const bool whole_images = !per_image || by_channels;
  int64_t bands = held && whole_images ? 1 : std::min(g.oh, (g.oh + band_rows - 1) / band_rows);
  if (per_image && !by_channels) bands = std::max(bands, std::min(threads, g.oh));
  // Bands of one height, the last one shorter, read their padding rows as zeros from their
  // copy of the input: the conv then needs one primitive for every band but the last (each
  // primitive is about 80 KB of JIT code). A single band keeps the padding in its primitive.
  const int64_t height = (g.oh + bands - 1) / bands;
  bands = (g.oh + height - 1) / height;
  const int64_t extent = (g.kh - 1) * g.dh + 1;
  for (int64_t img = 0; img < s.n; ++img) {
    for (int64_t c = 0; c < channel_parts; ++c) {
      for (int64_t k = 0; k < bands; ++k) {
        Part p;
        p.image = img;
        p.g = g;
        p.first_channel = c * blocks / channel_parts * block;
        p.g.m = std::min(g.m, (c + 1) * blocks / channel_parts * block) - p.first_channel;
        p.row0 = k * height;
        const int64_t row1 = std::min(g.oh, p.row0 + height);
        const int64_t top = p.row0 * g.sh - g.pt, bottom = (row1 - 1) * g.sh - g.pt + extent;
        p.g.oh = row1 - p.row0;
        if (bands > 1) {
          p.in_row0 = top;
          p.g.ih = bottom - top;
          p.g.pt = p.g.pb = 0;
        } else {
          p.in_row0 = std::max<int64_t>(0, top);
          p.g.ih = std::min(g.ih, bottom) - p.in_row0;
          p.g.pt = p.in_row0 - top;
          p.g.pb = bottom - std::min(g.ih, bottom);
          if (p.g.ih <= 0) return false;  // the image lies wholly in the padding
        }
        parts->push_back(p);
      }
    }
  }
  return true;
}

// Whether the conv may run as Winograd F(2x2, 3x3) (oneDNN's jit_fp32_wino_2x3, which takes
// 3x3 stride-1 convs of whole channel blocks where their weights fit its cache): its weights,
// transformed to 4x4 tiles, take 16/9 of the direct ones' memory, packed on the first run at a
// size (their layout depends on the image's size), and it wants a scratchpad per thread (its
// tiles in the transformed domain, 0.2-2 MB), so the trade is made only where these together
// take no more than the conv's output over the batch. ResNet-18's 3x3 convs at 56x56 and
// 28x28 ran 1.45-1.7x faster on one thread (0.49 -> 0.34 and 0.29 ms), its 256-channel ones at
// 7x7 1.6x, but those would add 4 MB each to a run that works in 5.
bool winograd_worth_memory(const Geometry& g, int64_t images, bool plain_src,
                           size_t scratchpads_bytes = 0) {
  if (plain_src) return false;
  if (g.kh != 3 || g.kw != 3 || g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1 || g.groups != 1)
    return false;
  const int64_t transformed = 16 * g.c * g.m + static_cast<int64_t>(scratchpads_bytes / 4);
  return transformed <= images * g.m * g.oh * g.ow;
}

// A strided 1x1 conv without padding: on a blocked X it reads every stride-th row and column
// only, so those positions, gathered, make it a stride-1 conv. oneDNN's 1x1 kernels run that at
// full speed, where their own strided path took up to twice as long (ResNet-50's downsamples).
bool strided_pointwise(const Geometry& g) {
  return g.kh == 1 && g.kw == 1 && (g.sh > 1 || g.sw > 1) && g.pt == 0 && g.pl == 0 && g.pb == 0 &&
         g.pr == 0 && g.dh == 1 && g.dw == 1;
}

// The positions a strided_pointwise conv reads of `images` blocked images of g's input, into
// [images, c / block, oh, ow, block].
void gather_strided(ThreadPool& pool, const float* x, int64_t images, const Geometry& g, int block,
                    float* out) {
  const int64_t rows = images * (g.c / block) * g.oh;
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, g.ow * block));
  pool.parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t plane = r / g.oh, oy = r % g.oh;
      const float* src = x + (plane * g.ih + oy * g.sh) * g.iw * block;
      float* dst = out + r * g.ow * block;
      for (int64_t ox = 0; ox < g.ow; ++ox)
        std::memcpy(dst + ox * block, src + ox * g.sw * block,
                    static_cast<size_t>(block) * sizeof(float));
    }
  });
}

}  // namespace

struct BlockedConv::State {
  bool constant_weights = false;
  int64_t reorders = 0;
  int64_t winograd_parts = 0;
  std::mutex mu;
  std::vector<std::unique_ptr<Primitive>> primitives;
  std::vector<PackedWeights> packed;
  std::vector<Part> parts;   // the current run's, kept so warm runs allocate nothing
  std::vector<Part> pieces;  // split_for_winograd's, likewise

  // Dynamic dims can make many shapes: past these counts the caches start again. That happens
  // only before a run takes pointers into them, so what its parts point to stays alive through
  // it: primitives at the start of the run, packings once its parts are known (keep_packings).
  static constexpr size_t kMaxPrimitives = 32;
  static constexpr size_t kMaxPacked = 8;

  void begin_run() {
    if (primitives.size() >= kMaxPrimitives) primitives.clear();
  }

  // Starts the packings again where this run's parts need more than kMaxPacked has room for.
  // A run that alone needs more (a Winograd conv split over many threads: its layout has no
  // slices) keeps them all, so the next run finds them rather than packing them again.
  void keep_packings(const std::vector<Part>& run_parts, const float* w, int64_t all_channels) {
    size_t missing = 0;
    for (const Part& part : run_parts)
      missing += has_weights(*part.prim, w, part.first_channel, all_channels) ? 0 : 1;
    if (missing > 0 && packed.size() + missing > kMaxPacked) packed.clear();
  }

  bool has_weights(const Primitive& p, const float* w, int64_t first_channel,
                   int64_t all_channels) {
    return own_packing(p, w, first_channel) || slice_of_all(p, w, first_channel, all_channels);
  }

  // The packing made of output channels [first_channel, first_channel + p's) in p's layout, or
  // nullptr.
  PackedWeights* own_packing(const Primitive& p, const float* w, int64_t first_channel) {
    for (auto& pw : packed)
      if (pw.source == w && pw.first_channel == first_channel && pw.channels == p.key.g.m &&
          dnnl_memory_desc_equal(&pw.layout, &p.weights))
        return &pw;
    return nullptr;
  }

  // Constant weights of some of `all_channels`: where they lie in the packing of all of them
  // (slice_of), or nullptr.
  const float* slice_of_all(const Primitive& p, const float* w, int64_t first_channel,
                            int64_t all_channels) const {
    if (!constant_weights || p.key.g.m >= all_channels) return nullptr;
    for (const auto& pw : packed) {
      if (pw.source != w || pw.first_channel != 0 || pw.channels != all_channels) continue;
      if (const float* slice = slice_of(pw, p, first_channel)) return slice;
    }
    return nullptr;
  }

  const Primitive& primitive(const PrimitiveKey& key) {
    for (const auto& p : primitives)
      if (p->key == key) return *p;
    primitives.push_back(create_primitive(key));
    return *primitives.back();
  }

  // A part's primitive: Winograd first where it may run, then the direct conv; each with the
  // epilogue `tail` in the primitive, then without it (the epilogue then runs as a pass).
  // nullptr where oneDNN has no usable one.
  const Primitive* pick(const Geometry& pg, int block, bool plain_src, const FusedTail& tail,
                        bool winograd) {
    for (const bool wino : {true, false}) {
      if (wino && !winograd) continue;
      if (const Primitive& p = primitive(PrimitiveKey{pg, block, plain_src, tail, wino}); p.usable)
        return &p;
      if (!tail.any()) continue;
      if (const Primitive& p = primitive(PrimitiveKey{pg, block, plain_src, {}, wino}); p.usable)
        return &p;
    }
    return nullptr;
  }

  // Splits into ranges of output channels the parts whose Winograd primitive oneDNN refuses only
  // for the size of their weights, which must fit its cache (128 -> 128 channels do not,
  // 128 -> 32 do): each range transforms the part's input again, a few percent of its work
  // (128 -> 32 channels at 28x28 in 0.29 ms, directly 0.49).
  void split_for_winograd(std::vector<Part>* all, int block, bool plain_src) {
    pieces.clear();
    for (const Part& part : *all) {
      int64_t count = 1;
      if (part.g.m % block == 0 &&
          !primitive(PrimitiveKey{part.g, block, plain_src, {}, true}).usable) {
        const int64_t blocks = part.g.m / block;
        for (int64_t k = 2; blocks % k == 0 && blocks / k >= 2; k *= 2) {
          Geometry piece = part.g;
          piece.m = part.g.m / k;
          if (primitive(PrimitiveKey{piece, block, plain_src, {}, true}).usable) {
            count = k;
            break;
          }
        }
      }
      for (int64_t k = 0; k < count; ++k) {
        Part p = part;
        p.g.m = part.g.m / count;
        p.first_channel = part.first_channel + k * p.g.m;
        pieces.push_back(p);
      }
    }
    all->swap(pieces);
  }

  // The weights of output channels [first_channel, first_channel + p's) of `all_channels`, in
  // p's layout: a packing of their own, or a slice of the packing of all of them.
  Expected<const float*> weights(const Primitive& p, const float* w, int64_t first_channel,
                                 int64_t all_channels) {
    const Geometry& g = p.key.g;
    if (PackedWeights* own = own_packing(p, w, first_channel)) {
      if (!constant_weights) SOD2_RETURN_IF_ERROR(pack(*own, g));
      return own->data.get();
    }
    if (const float* slice = slice_of_all(p, w, first_channel, all_channels)) return slice;
    PackedWeights pw;
    pw.source = w;
    pw.first_channel = first_channel;
    pw.channels = p.key.g.m;
    pw.layout = p.weights;
    const size_t bytes = (dnnl_memory_desc_get_size(&p.weights) + 63) / 64 * 64;
    pw.data.reset(static_cast<float*>(std::aligned_alloc(64, std::max<size_t>(bytes, 64))));
    if (!pw.data) return resource_exhausted("Conv: no memory for the reordered weights");
    SOD2_RETURN_IF_ERROR(pack(pw, g));
    packed.push_back(std::move(pw));
    return packed.back().data.get();
  }

  // Where the part's weights lie inside the packing of all channels, when the layout keeps
  // output channels outermost (oneDNN's blocked weights do); nullptr otherwise.
  static const float* slice_of(const PackedWeights& all, const Primitive& p,
                               int64_t first_channel) {
    const Geometry& g = p.key.g;
    const dnnl_dims_t dims = {g.m, g.c, g.kh, g.kw}, offsets = {first_channel, 0, 0, 0};
    dnnl_memory_desc_t sub;
    if (dnnl_memory_desc_init_submemory(&sub, &all.layout, dims, offsets) != dnnl_success)
      return nullptr;
    const int64_t offset = sub.offset0;
    sub.offset0 = 0;
    for (auto& o : sub.padded_offsets) o = 0;
    if (!dnnl_memory_desc_equal(&sub, &p.weights)) return nullptr;
    return all.data.get() + offset;
  }

  Status pack(PackedWeights& pw, const Geometry& g) {
    ++reorders;
    const int64_t cg = g.c / g.groups;
    const dnnl_dims_t dims = {pw.channels, g.c, g.kh, g.kw};
    const dnnl_dims_t grouped = {g.groups, pw.channels / g.groups, cg, g.kh, g.kw};
    dnnl_memory_desc_t plain;
    if ((g.groups == 1 ? dnnl_memory_desc_init_by_tag(&plain, 4, dims, dnnl_f32, dnnl_oihw)
                       : dnnl_memory_desc_init_by_tag(&plain, 5, grouped, dnnl_f32, dnnl_goihw)) !=
        dnnl_success)
      return internal_error("Conv: oneDNN refused the weights' shape");
    gemm_library_single_thread_here();
    return run_reorder(plain, pw.source + pw.first_channel * cg * g.kh * g.kw, pw.layout,
                       pw.data.get(), &pw.reorder);
  }
};

BlockedConv::BlockedConv(bool constant_weights) : state_(std::make_unique<State>()) {
  state_->constant_weights = constant_weights;
}
BlockedConv::~BlockedConv() = default;

bool BlockedConv::available() { return cpu_engine() != nullptr; }

int64_t BlockedConv::weight_reorders() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->reorders;
}

void BlockedConv::prepare(const Tensor& w, const WindowAttrs& attrs, int64_t group, bool held) {
  const int rank = w.shape.rank();
  if (group < 1 || (rank != 3 && rank != 4) || !available()) return;
  auto attr = [](const std::vector<int64_t>& v, int i) {
    return static_cast<size_t>(i) < v.size() ? v[static_cast<size_t>(i)] : int64_t{1};
  };
  // A nominal image of 16 x 16 outputs: the weights' layout depends on the channels and the
  // kernel, not on the image's size, and run() reorders again if a primitive wants another.
  Geometry g;
  g.m = w.shape[0];
  g.c = w.shape[1] * group;
  g.groups = group;
  if (g.c == group || g.m % group != 0) return;  // depthwise, or weights run() will refuse
  g.kh = rank == 4 ? w.shape[2] : 1;
  g.kw = w.shape[rank - 1];
  const int spatial = rank - 2;
  g.sh = spatial == 2 ? attr(attrs.strides, 0) : 1;
  g.sw = attr(attrs.strides, spatial - 1);
  g.dh = spatial == 2 ? attr(attrs.dilations, 0) : 1;
  g.dw = attr(attrs.dilations, spatial - 1);
  // Attributes out of any real range are left to run(), which sees the shapes they make.
  constexpr int64_t kLimit = int64_t{1} << 16;
  for (const int64_t v : {g.kh, g.kw, g.sh, g.sw, g.dh, g.dw})
    if (v <= 0 || v > kLimit) return;
  if ((g.kh * g.kw == 1 && !held) || g.m <= 0 || g.c <= 0) return;
  // A strided pointwise conv on held tensors runs at stride 1 on the positions it reads.
  if (g.kh * g.kw == 1) g.sh = g.sw = 1;
  g.oh = spatial == 2 ? 16 : 1;
  g.ow = 16;
  g.ih = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  g.iw = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  State& st = *state_;
  std::lock_guard<std::mutex> lock(st.mu);
  for (const int block : {16, 8}) {
    bool plain_src = false;
    if (!block_fits(g, block, &plain_src)) continue;
    // The nominal primitive only tells the layout: it is not kept, runs make their own.
    const std::unique_ptr<Primitive> p = create_primitive(PrimitiveKey{g, block, plain_src, {}});
    if (!p->usable) continue;
    // A failure here leaves the reorder to run(), which reports it.
    (void)st.weights(*p, w.as<float>(), 0, g.m);
    return;
  }
}

int64_t BlockedConv::winograd_parts() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->winograd_parts;
}

namespace {
std::atomic<bool> g_declines{false};
}  // namespace

void BlockedConv::set_declines_for_testing(bool declines) { g_declines.store(declines); }

int BlockedConv::block_width() {
  if (!available()) return 0;
  switch (simd::simd_level()) {
    case simd::Level::kAvx512: return 16;
    case simd::Level::kAvx2: return 8;
    default: return 0;
  }
}

namespace {

// Weights [M, C / group, kH, kW] of a 2-D conv that is not depthwise, and a block this CPU's
// blocked kernels use. A grouped conv's groups fill whole blocks: held at another width than
// its groups fit, it would leave the blocked path for the NCHW ones (RegNet's 8-wide groups
// under 16-wide blocks: 0.11 -> 0.29 ms).
bool dense_2d(std::span<const int64_t> w_dims, int64_t group, int block) {
  return w_dims.size() == 4 && group >= 1 && block > 0 && block == BlockedConv::block_width() &&
         w_dims[0] > 0 && w_dims[0] % group == 0 && w_dims[1] > 1 &&
         (group == 1 || (w_dims[1] % block == 0 && (w_dims[0] / group) % block == 0));
}

}  // namespace

bool BlockedConv::can_read_blocked(std::span<const int64_t> w_dims, int64_t group, int block) {
  return dense_2d(w_dims, group, block) && (w_dims[1] * group) % block == 0;
}

bool BlockedConv::can_write_blocked(std::span<const int64_t> w_dims, int64_t group, int block) {
  return dense_2d(w_dims, group, block) && w_dims[0] % block == 0;
}

Expected<bool> BlockedConv::run(KernelContext& ctx, const ConvShape& s, const float* X,
                                const float* W, float* Y, const EpilogueRun& e,
                                BlockedTensors held) {
  std::optional<Geometry> geometry = geometry_of(s, held.any());
  if (!geometry || !available() || s.n <= 0 || g_declines.load(std::memory_order_relaxed))
    return false;
  ThreadPool& pool = ctx.pool();
  if (held.input && strided_pointwise(*geometry)) {
    Geometry& sg = *geometry;
    SOD2_ASSIGN_OR_RETURN(float* gathered, scratch_floats(ctx, s.n * sg.c * sg.oh * sg.ow));
    gather_strided(pool, X, s.n, sg, held.block, gathered);
    X = gathered;
    sg.ih = sg.oh;
    sg.iw = sg.ow;
    sg.sh = sg.sw = 1;
  }
  const Geometry& g = *geometry;
  State& st = *state_;
  std::lock_guard<std::mutex> lock(st.mu);
  st.begin_run();

  std::vector<Part>& parts = st.parts;
  int block = 0;
  bool plain_src = false;
  for (const int candidate : {16, 8}) {
    if (held.any() && candidate != held.block) continue;
    if (!block_fits(g, candidate, &plain_src)) continue;
    // Held tensors are whole blocks.
    if ((held.input && (plain_src || g.c % candidate != 0)) ||
        (held.output && g.m % candidate != 0))
      continue;
    bool winograd = ctx.winograd() && winograd_worth_memory(g, s.n, plain_src);
    bool usable = false;
    for (;;) {
      usable = split(s, g, pool.num_threads(), candidate, held, plain_src, &parts);
      if (usable && winograd) st.split_for_winograd(&parts, candidate, plain_src);
      size_t winograd_scratchpad = 0;
      for (size_t i = 0; usable && i < parts.size(); ++i) {
        // A part that writes a held Y in place takes the epilogue into its primitive where it
        // can.
        const FusedTail tail = held.output && parts[i].g.oh == g.oh ? fusable_tail(e) : FusedTail{};
        parts[i].prim = st.pick(parts[i].g, candidate, plain_src, tail, winograd);
        usable = parts[i].prim != nullptr;
        if (usable && parts[i].prim->key.winograd)
          winograd_scratchpad = std::max(winograd_scratchpad, parts[i].prim->scratchpad_bytes);
      }
      // With its scratchpads (one per thread) Winograd may cost more memory than it may take:
      // then the conv runs directly.
      if (!usable || winograd_scratchpad == 0 ||
          winograd_worth_memory(
              g, s.n, plain_src,
              winograd_scratchpad * static_cast<size_t>(ScratchSlots::count(pool))))
        break;
      winograd = false;
    }
    if (usable) {
      block = candidate;
      break;
    }
  }
  if (block == 0) return false;
  for (const Part& part : parts) st.winograd_parts += part.prim->key.winograd ? 1 : 0;
  const int64_t in_plane = g.ih * g.iw, out_plane = g.oh * g.ow;
  // An NCHW X that several parts of an image read whole (channel groups) is blocked once, by all
  // threads, rather than by each part; then it is read like a held one (of whole blocks, the
  // last one padded with zeros).
  bool x_blocked = held.input;
  int64_t x_channels = g.c;  // as X is stored: a held X's, or its padded copy's
  if (!held.input && !plain_src && parts.size() > static_cast<size_t>(s.n) &&
      parts.front().g.ih == g.ih && parts.front().in_row0 == 0) {
    const int64_t padded = whole_blocks(g.c, block);
    SOD2_ASSIGN_OR_RETURN(float* xbl, scratch_floats(ctx, s.n * padded * in_plane));
    block_tensor(pool, block, X, s.n, g.c, in_plane, xbl);
    X = xbl;
    x_blocked = true;
    x_channels = padded;
  }
  st.keep_packings(parts, W, g.m);
  size_t scratchpad = 0;
  int64_t in_floats = 0, out_floats = 0;  // the largest part's blocked input and output
  const int64_t in_channels = plain_src ? g.c : whole_blocks(g.c, block);
  for (Part& part : parts) {
    SOD2_ASSIGN_OR_RETURN(part.weights, st.weights(*part.prim, W, part.first_channel, g.m));
    scratchpad = std::max(scratchpad, part.prim->scratchpad_bytes);
    // Parts that read X or write Y in place need no copy of it.
    const bool whole_image = part.g.ih == g.ih && part.in_row0 == 0;
    if (!((plain_src || x_blocked) && whole_image))
      in_floats = std::max(in_floats, (in_channels * part.g.ih * g.iw + 15) / 16 * 16);
    if (!(held.output && part.g.oh == g.oh))
      out_floats =
          std::max(out_floats, (whole_blocks(part.g.m, block) * part.g.oh * g.ow + 15) / 16 * 16);
  }
  const int64_t pad_floats = static_cast<int64_t>((scratchpad + 63) / 64 * 16);
  const int slots = ScratchSlots::count(pool);
  // Each running thread's own blocked input, blocked output and oneDNN scratchpad.
  const int64_t slot_floats = in_floats + out_floats + pad_floats;
  SOD2_ASSIGN_OR_RETURN(float* base, scratch_floats(ctx, slots * slot_floats));
  ScratchSlots buffers(base, slot_floats, slots);

  std::atomic<bool> failed{false};
  pool.parallel_for(static_cast<int64_t>(parts.size()), 1, [&](int64_t i0, int64_t i1) {
    gemm_library_single_thread_here();
    dnnl_stream_t stream = thread_stream();
    const int slot = buffers.acquire();
    float* xb = buffers.data(slot);
    float* yb = xb + in_floats;
    float* pad = yb + out_floats;
    for (int64_t it = i0; it < i1 && !failed.load(std::memory_order_relaxed); ++it) {
      const Part& part = parts[static_cast<size_t>(it)];
      const Primitive& p = *part.prim;
      // The part's input rows, blocked by the thread that convolves them, so they stay in its
      // cache.
      // Rows of the part outside the image (a band's share of the padding) are zeros.
      const int64_t in_count = part.g.ih * g.iw;
      const int64_t end = part.in_row0 + part.g.ih;
      const int64_t first = std::clamp<int64_t>(0, part.in_row0, end);
      const int64_t last = std::clamp<int64_t>(g.ih, first, end);
      const int64_t before = (first - part.in_row0) * g.iw, inside = (last - first) * g.iw;
      // (A blocked image starts where its NCHW one would: same channels, same count.)
      const float* x_image = X + part.image * x_channels * in_plane;
      const float* src = xb;
      const bool whole_image = part.g.ih == g.ih && part.in_row0 == 0;
      if ((plain_src || x_blocked) && whole_image) {
        src = x_image;
      } else if (x_blocked) {
        // The part's rows of each block are one run of the blocked image.
        for (int64_t cb = 0; cb < x_channels / block; ++cb) {
          float* dst = xb + cb * block * in_count;
          std::fill(dst, dst + before * block, 0.f);
          if (inside > 0)
            std::memcpy(dst + before * block, x_image + (cb * in_plane + first * g.iw) * block,
                        static_cast<size_t>(inside * block) * sizeof(float));
          std::fill(dst + (before + inside) * block, dst + in_count * block, 0.f);
        }
      } else {
        // (The last block's lanes past the channels are zeros: padding times the weights'
        // zero padding must not make NaNs.)
        const int64_t lanes = plain_src ? 1 : block;
        for (int64_t ch = 0; ch < g.c; ch += lanes) {
          float* dst = xb + ch * in_count;
          std::fill(dst, dst + before * lanes, 0.f);
          if (inside > 0 && plain_src)
            std::memcpy(dst + before, x_image + ch * in_plane + first * g.iw,
                        static_cast<size_t>(inside) * sizeof(float));
          else if (inside > 0)
            block_positions(block, static_cast<int>(std::min<int64_t>(block, g.c - ch)),
                            x_image + ch * in_plane + first * g.iw, in_plane, inside,
                            dst + before * lanes);
          std::fill(dst + (before + inside) * lanes, dst + in_count * lanes, 0.f);
        }
      }
      // A blocked Y takes a part of whole images directly: its channel blocks are one run.
      const bool direct_out = held.output && part.g.oh == g.oh;
      float* dst = direct_out ? Y + (part.image * g.m + part.first_channel) * out_plane : yb;
      dnnl_engine_t eng = cpu_engine();
      dnnl_memory_t src_m = nullptr, w_m = nullptr, dst_m = nullptr, pad_m = nullptr;
      dnnl_memory_t bias_m = nullptr, res_m = nullptr;
      bool ok = stream != nullptr;
      ok = ok && dnnl_memory_create(&src_m, &p.src, eng, const_cast<float*>(src)) == dnnl_success;
      ok = ok && dnnl_memory_create(&w_m, &p.weights, eng, const_cast<float*>(part.weights)) ==
                     dnnl_success;
      ok = ok && dnnl_memory_create(&dst_m, &p.dst, eng, dst) == dnnl_success;
      const FusedTail& tail = p.key.tail;
      if (ok && tail.bias) {
        const float* bias = (e.bias[0] ? e.bias[0] : e.bias[1]) + part.first_channel;
        ok = dnnl_memory_create(&bias_m,
                                dnnl_primitive_desc_query_md(p.desc, dnnl_query_weights_md, 1), eng,
                                const_cast<float*>(bias)) == dnnl_success;
      }
      if (ok && tail.residual != 0) {
        const float* res = e.residual + (part.image * g.m + part.first_channel) * out_plane;
        ok = dnnl_memory_create(&res_m, &p.dst, eng, const_cast<float*>(res)) == dnnl_success;
      }
      if (ok && p.scratchpad_bytes > 0) {
        dnnl_memory_desc_t pad_md;
        const dnnl_dims_t pad_dims = {static_cast<int64_t>(p.scratchpad_bytes)};
        ok = dnnl_memory_desc_init_by_tag(&pad_md, 1, pad_dims, dnnl_u8, dnnl_x) == dnnl_success &&
             dnnl_memory_create(&pad_m, &pad_md, eng, pad) == dnnl_success;
      }
      if (ok) {
        dnnl_exec_arg_t args[6] = {
            {DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, w_m}, {DNNL_ARG_DST, dst_m}};
        int count = 3;
        if (pad_m) args[count++] = {DNNL_ARG_SCRATCHPAD, pad_m};
        if (bias_m) args[count++] = {DNNL_ARG_BIAS, bias_m};
        // The residual's post-op: first, or after the ReLU.
        if (res_m)
          args[count++] = {DNNL_ARG_ATTR_MULTIPLE_POST_OP(tail.residual == 2 && tail.relu ? 1 : 0) |
                               DNNL_ARG_SRC_1,
                           res_m};
        LibraryCall marked;
        ok = dnnl_primitive_execute(p.prim, stream, count, args) == dnnl_success &&
             dnnl_stream_wait(stream) == dnnl_success;
      }
      for (dnnl_memory_t m : {src_m, w_m, dst_m, pad_m, bias_m, res_m})
        if (m) dnnl_memory_destroy(m);
      if (!ok) {
        failed.store(true, std::memory_order_relaxed);
        break;
      }
      const int64_t count = part.g.oh * g.ow;
      if (held.output) {
        // The part's rows of each block into their place (unless written there), then the
        // epilogue with the channel in the lanes.
        for (int64_t cb = 0; cb < part.g.m / block; ++cb) {
          const int64_t ch = part.first_channel + cb * block;
          const int64_t off = (part.image * g.m + ch) * out_plane + part.row0 * g.ow * block;
          if (!direct_out)
            std::memcpy(Y + off, yb + cb * block * count,
                        static_cast<size_t>(count * block) * sizeof(float));
          if (!e.empty() && !tail.any())
            e.apply(Y + off, e.residual ? e.residual + off : nullptr, count, block, block, ch,
                    false);
        }
        continue;
      }
      // Back to NCHW, one block of channels at a time while it is cached, with the epilogue
      // (a last block partly padding gives only its channels).
      for (int64_t cb = 0; cb * block < part.g.m; ++cb) {
        const int64_t ch = part.first_channel + cb * block;
        const int channels = static_cast<int>(std::min<int64_t>(block, part.g.m - cb * block));
        const int64_t off = (part.image * g.m + ch) * out_plane + part.row0 * g.ow;
        unblock_positions(block, channels, yb + cb * block * count, count, out_plane, Y + off);
        if (!e.empty())
          e.apply(Y + off, e.residual ? e.residual + off : nullptr, channels, count, out_plane, ch,
                  true);
      }
    }
    buffers.release(slot);
  });
  if (failed.load()) return internal_error("Conv: oneDNN failed to run the convolution");
  return true;
}

#else  // no oneDNN: the NCHW paths serve every convolution

struct BlockedConv::State {};
BlockedConv::BlockedConv(bool) {}
BlockedConv::~BlockedConv() = default;
bool BlockedConv::available() { return false; }
void BlockedConv::prepare(const Tensor&, const WindowAttrs&, int64_t, bool) {}
int64_t BlockedConv::weight_reorders() const { return 0; }
int64_t BlockedConv::winograd_parts() const { return 0; }
void BlockedConv::set_declines_for_testing(bool) {}
int BlockedConv::block_width() { return 0; }
bool BlockedConv::can_read_blocked(std::span<const int64_t>, int64_t, int) { return false; }
bool BlockedConv::can_write_blocked(std::span<const int64_t>, int64_t, int) { return false; }
Expected<bool> BlockedConv::run(KernelContext&, const ConvShape&, const float*, const float*,
                                float*, const EpilogueRun&, BlockedTensors) {
  return false;
}

#endif

}  // namespace sod2::rt
