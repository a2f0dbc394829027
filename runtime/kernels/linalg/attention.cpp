// Attention (opset 23) and RotaryEmbedding (opset 23), float32.
//
// Attention: Q [B, Hq, Sq, D] (or 3-D [B, Sq, Hq*D] with q_num_heads/kv_num_heads), K and V
// [B, Hkv, Skv, D / Dv] with optional past_key/past_value [B, Hkv, P, ...] prepended (present_key
// and present_value are the concatenations). Scores = Q K^T * scale (default 1/sqrt(D)), softcap,
// plus the optional mask (bool: false masks out; float: added; broadcast to [B, Hq, Sq, P + Skv])
// and the causal mask (is_causal: key j visible to query i when j <= P + i), softmax, times V.
// Grouped-query attention shares each K/V head with Hq / Hkv query heads. The optional fourth
// output qk_matmul_output [B, Hq, Sq, P + Skv] taps the scores at qk_matmul_output_mode's stage.
//
// The causal diagonal is offset by the past length P: the queries are the newest Sq positions,
// so query i sits at position P + i of the concatenated keys. That is ONNX Runtime's rule and
// ONNX's since its errata onnx/onnx#8068 (the reference evaluator's _apply_causal); opset 23's
// text says "upper left" and its first reference took tril(k=0) over [Sq, P + Skv], which would
// let a decoding step (Sq = 1) see only the oldest key.
//
// RotaryEmbedding: X [B, S, H*D] (num_heads) or [B, H, S, D]; cos/sin caches [max_pos, R/2]
// indexed by position_ids [B, S], or [B, S, R/2] without them; the first R (rotary_embedding_dim,
// default D) features of each head rotate as pairs (halves, or even/odd when interleaved).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/linalg_kernels.h"

namespace sod2::rt {
namespace {

// Element offsets of a tensor broadcast (right-aligned) to a 4-D shape; 0 stride where size 1.
bool broadcast_strides4(const Shape& s, const std::array<int64_t, 4>& to,
                        std::array<int64_t, 4>* strides) {
  if (s.rank() > 4) return false;
  int64_t stride = 1;
  strides->fill(0);
  for (int i = s.rank() - 1; i >= 0; --i) {
    const int d = 4 - s.rank() + i;
    if (s[i] != 1 && s[i] != to[static_cast<size_t>(d)]) return false;
    (*strides)[static_cast<size_t>(d)] = s[i] == 1 ? 0 : stride;
    stride *= s[i];
  }
  return true;
}

// The most multiply-adds one Attention run may take (the reference loops are scalar).
constexpr int64_t kMaxWork = int64_t{1} << 40;

struct AttentionAttrs {
  bool causal = false;
  int64_t q_heads = 0, kv_heads = 0;  // for 3-D inputs
  float scale = 0.f;                  // 0: 1/sqrt(D)
  float softcap = 0.f;
  int64_t qk_mode = 0;  // the stage qk_matmul_output taps (QkStage)
};

// qk_matmul_output_mode: where along the score pipeline the fourth output is read. The numbering
// follows the pipeline as ONNX's errata (onnx/onnx#7867, #7913) reordered it, softcap before the
// mask; opset 23's first text had 1 = plus the mask and 2 = after softcap. ONNX Runtime 1.30
// numbers them as here.
enum QkStage : int64_t { kQkScaled = 0, kQkSoftcapped = 1, kQkMasked = 2, kQkSoftmax = 3 };

class AttentionKernel final : public Kernel {
 public:
  explicit AttentionKernel(AttentionAttrs a) : a_(a) {}

  Status run(KernelContext& ctx) override {
    const Tensor *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2);
    const Tensor *mask = ctx.input(3), *past_k = ctx.input(4), *past_v = ctx.input(5);
    if (!q || !k || !v) return invalid_argument("Attention: Q, K and V are required");
    for (const Tensor* t : {q, k, v, past_k, past_v})
      if (t && t->dtype != DType::kFloat) return unsupported_dtype("Attention", "Q/K/V", t->dtype);
    if (!!past_k != !!past_v)
      return invalid_argument("Attention: past_key and past_value come together");
    const int rank = q->shape.rank();
    if ((rank != 3 && rank != 4) || k->shape.rank() != rank || v->shape.rank() != rank)
      return invalid_argument("Attention: Q, K and V must all be 3-D or all 4-D, got " +
                              q->shape.to_string() + ", " + k->shape.to_string() + ", " +
                              v->shape.to_string());
    int64_t b = q->shape[0], hq, hkv, sq, skv, d, dv;
    if (rank == 4) {
      hq = q->shape[1], sq = q->shape[2], d = q->shape[3];
      hkv = k->shape[1], skv = k->shape[2], dv = v->shape[3];
      if (k->shape[0] != b || v->shape[0] != b || k->shape[3] != d || v->shape[1] != hkv ||
          v->shape[2] != skv)
        return invalid_argument("Attention: K " + k->shape.to_string() + " and V " +
                                v->shape.to_string() + " do not fit Q " + q->shape.to_string());
    } else {
      hq = a_.q_heads, hkv = a_.kv_heads;
      if (hq <= 0 || hkv <= 0)
        return invalid_argument("Attention: 3-D inputs need q_num_heads and kv_num_heads");
      sq = q->shape[1], skv = k->shape[1];
      if (q->shape[2] < hq || k->shape[2] < hkv || v->shape[2] < hkv || q->shape[2] % hq ||
          k->shape[2] % hkv || v->shape[2] % hkv)
        return invalid_argument("Attention: hidden sizes do not split into the heads");
      d = q->shape[2] / hq, dv = v->shape[2] / hkv;
      if (k->shape[0] != b || v->shape[0] != b || k->shape[2] / hkv != d || v->shape[1] != skv)
        return invalid_argument("Attention: K " + k->shape.to_string() + " and V " +
                                v->shape.to_string() + " do not fit Q " + q->shape.to_string());
    }
    if (hkv <= 0 || hq % hkv != 0)
      return invalid_argument("Attention: " + std::to_string(hq) +
                              " query heads are not a multiple of " + std::to_string(hkv) +
                              " key/value heads");
    int64_t past = 0;
    if (past_k) {
      const Shape &pk = past_k->shape, &pv = past_v->shape;
      if (pk.rank() != 4 || pv.rank() != 4 || pk[0] != b || pk[1] != hkv || pk[3] != d ||
          pv[0] != b || pv[1] != hkv || pv[2] != pk[2] || pv[3] != dv)
        return invalid_argument("Attention: past_key " + pk.to_string() + " / past_value " +
                                pv.to_string() + " do not fit the key/value heads");
      past = pk[2];
    }
    // Shapes may pair huge dims with a zero one (an empty tensor holds no bytes), so every count
    // below is checked and the work is bounded: with a zero head size neither the b * hkv * total
    // gathered rows nor the b * hq * sq * total scores are limited by the tensors' bytes.
    int64_t total = 0, kv_rows = 0, kv_elems = 0, scores = 0, work = 0;
    if (__builtin_add_overflow(past, skv, &total) || __builtin_add_overflow(d, dv, &kv_elems) ||
        __builtin_mul_overflow(b, hkv, &kv_rows) ||
        __builtin_mul_overflow(kv_rows, total, &kv_rows) ||
        __builtin_mul_overflow(kv_rows, kv_elems, &kv_elems) ||
        __builtin_mul_overflow(b, hq, &scores) || __builtin_mul_overflow(scores, sq, &scores) ||
        __builtin_mul_overflow(scores, total, &scores) ||
        __builtin_mul_overflow(scores, std::max<int64_t>(d + dv, 1), &work) || work > kMaxWork ||
        kv_rows > kMaxWork)
      return resource_exhausted("Attention: Q " + q->shape.to_string() + " against " +
                                std::to_string(total) + " keys needs more than " +
                                std::to_string(kMaxWork) + " multiply-adds");
    const std::array<int64_t, 4> score_shape{b, hq, sq, total};
    std::array<int64_t, 4> mstride{};
    if (mask) {
      if (mask->dtype != DType::kBool && mask->dtype != DType::kFloat)
        return unsupported_dtype("Attention", "attn_mask", mask->dtype);
      if (!broadcast_strides4(mask->shape, score_shape, &mstride))
        return invalid_argument("Attention: attn_mask " + mask->shape.to_string() +
                                " does not broadcast to [" + std::to_string(b) + ", " +
                                std::to_string(hq) + ", " + std::to_string(sq) + ", " +
                                std::to_string(total) + "]");
    }

    Shape y_shape = rank == 4 ? Shape{b, hq, sq, dv} : Shape{b, sq, hq * dv};
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, y_shape));
    float* qk_out = nullptr;
    if (num_outputs_ > 3) {
      SOD2_ASSIGN_OR_RETURN(Tensor * qk, ctx.output(3, DType::kFloat, Shape{b, hq, sq, total}));
      qk_out = qk->as<float>();
    }
    // The concatenated keys and values [B, Hkv, total, D / Dv] in scratch (copied to present_key
    // and present_value when the node has them), then one row of scores.
    SOD2_ASSIGN_OR_RETURN(void* mem,
                          ctx.scratch(static_cast<size_t>(kv_elems + total) * sizeof(float) + 64));
    float* kc = static_cast<float*>(mem);
    float* vc = kc + b * hkv * total * d;
    float* row = vc + b * hkv * total * dv;
    // Gather K and V as [B, Hkv, total, D] with the past first.
    auto src_kv = [&](const Tensor* t, int64_t bi, int64_t h, int64_t s, int64_t dim) {
      return rank == 4 ? t->as<float>() + ((bi * hkv + h) * skv + s) * dim
                       : t->as<float>() + (bi * skv + s) * hkv * dim + h * dim;
    };
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t h = 0; h < hkv; ++h)
        for (int64_t s = 0; s < total; ++s) {
          float* kd = kc + ((bi * hkv + h) * total + s) * d;
          float* vd = vc + ((bi * hkv + h) * total + s) * dv;
          if (s < past) {
            std::copy_n(past_k->as<float>() + ((bi * hkv + h) * past + s) * d, d, kd);
            std::copy_n(past_v->as<float>() + ((bi * hkv + h) * past + s) * dv, dv, vd);
          } else {
            std::copy_n(src_kv(k, bi, h, s - past, d), d, kd);
            std::copy_n(src_kv(v, bi, h, s - past, dv), dv, vd);
          }
        }
    const float scale = a_.scale != 0.f ? a_.scale : 1.f / std::sqrt(static_cast<float>(d));
    const float neg_inf = -std::numeric_limits<float>::infinity();
    const int64_t group = hq / hkv;
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t h = 0; h < hq; ++h) {
        const int64_t hk = h / group;
        for (int64_t i = 0; i < sq; ++i) {
          const float* qi = rank == 4 ? q->as<float>() + ((bi * hq + h) * sq + i) * d
                                      : q->as<float>() + (bi * sq + i) * hq * d + h * d;
          float* qk_row = qk_out ? qk_out + ((bi * hq + h) * sq + i) * total : nullptr;
          float mx = neg_inf;
          for (int64_t j = 0; j < total; ++j) {
            const float* kj = kc + ((bi * hkv + hk) * total + j) * d;
            float s = 0.f;
            for (int64_t t = 0; t < d; ++t) s += qi[t] * kj[t];
            s *= scale;
            if (qk_row && a_.qk_mode == kQkScaled) qk_row[j] = s;
            // Softcap before the mask, as ONNX's diagram and ONNX Runtime order them: a float
            // mask is then added at full size rather than squashed into (-softcap, softcap).
            if (a_.softcap > 0.f) s = a_.softcap * std::tanh(s / a_.softcap);
            if (qk_row && a_.qk_mode == kQkSoftcapped) qk_row[j] = s;
            if (mask) {
              const int64_t off =
                  bi * mstride[0] + h * mstride[1] + i * mstride[2] + j * mstride[3];
              if (mask->dtype == DType::kBool)
                s = mask->as<bool>()[off] ? s : neg_inf;
              else
                s += mask->as<float>()[off];
            }
            if (a_.causal && j > past + i) s = neg_inf;
            if (qk_row && a_.qk_mode == kQkMasked) qk_row[j] = s;
            row[j] = s;
            mx = std::max(mx, s);
          }
          float sum = 0.f;
          for (int64_t j = 0; j < total; ++j) {
            row[j] = mx == neg_inf ? 0.f : std::exp(row[j] - mx);
            sum += row[j];
          }
          const float inv = sum > 0.f ? 1.f / sum : 0.f;
          if (qk_row && a_.qk_mode == kQkSoftmax)
            for (int64_t j = 0; j < total; ++j) qk_row[j] = row[j] * inv;
          float* yi = rank == 4 ? y->as<float>() + ((bi * hq + h) * sq + i) * dv
                                : y->as<float>() + (bi * sq + i) * hq * dv + h * dv;
          std::fill_n(yi, dv, 0.f);
          for (int64_t j = 0; j < total; ++j) {
            const float p = row[j] * inv;
            if (p == 0.f) continue;
            const float* vj = vc + ((bi * hkv + hk) * total + j) * dv;
            for (int64_t t = 0; t < dv; ++t) yi[t] += p * vj[t];
          }
        }
      }
    if (num_outputs_ > 1) {
      SOD2_ASSIGN_OR_RETURN(Tensor * pk, ctx.output(1, DType::kFloat, Shape{b, hkv, total, d}));
      std::copy_n(kc, b * hkv * total * d, pk->as<float>());
    }
    if (num_outputs_ > 2) {
      SOD2_ASSIGN_OR_RETURN(Tensor * pv, ctx.output(2, DType::kFloat, Shape{b, hkv, total, dv}));
      std::copy_n(vc, b * hkv * total * dv, pv->as<float>());
    }
    return Status::ok_status();
  }

  size_t num_outputs_ = 1;

 private:
  AttentionAttrs a_;
};

class RotaryKernel final : public Kernel {
 public:
  RotaryKernel(bool interleaved, int64_t num_heads, int64_t rotary_dim)
      : interleaved_(interleaved), num_heads_(num_heads), rotary_dim_(rotary_dim) {}

  Status run(KernelContext& ctx) override {
    const Tensor *x = ctx.input(0), *cos = ctx.input(1), *sin = ctx.input(2), *pos = ctx.input(3);
    if (!x || !cos || !sin)
      return invalid_argument("RotaryEmbedding: X, cos_cache and sin_cache are required");
    for (const Tensor* t : {x, cos, sin})
      if (t->dtype != DType::kFloat) return unsupported_dtype("RotaryEmbedding", "X", t->dtype);
    const Shape& s = x->shape;
    int64_t b, seq, heads, hd;
    if (s.rank() == 4) {
      b = s[0], heads = s[1], seq = s[2], hd = s[3];
    } else if (s.rank() == 3) {
      if (num_heads_ <= 0 || s[2] % num_heads_ != 0)
        return invalid_argument("RotaryEmbedding: a 3-D X " + s.to_string() +
                                " needs num_heads dividing its last dim");
      b = s[0], seq = s[1], heads = num_heads_, hd = s[2] / num_heads_;
    } else {
      return invalid_argument("RotaryEmbedding: X must be 3-D or 4-D, got " + s.to_string());
    }
    const int64_t rot = rotary_dim_ > 0 ? rotary_dim_ : hd;
    if (rot > hd || rot % 2 != 0)
      return invalid_argument("RotaryEmbedding: rotary_embedding_dim " + std::to_string(rot) +
                              " must be even and at most the head size " + std::to_string(hd));
    const int64_t half = rot / 2;
    const Shape& cs = cos->shape;
    if (sin->shape != cs)
      return invalid_argument("RotaryEmbedding: cos_cache " + cs.to_string() + " and sin_cache " +
                              sin->shape.to_string() + " differ");
    int64_t max_pos = 0;
    if (pos) {
      if (pos->dtype != DType::kInt64 || pos->shape != Shape{b, seq})
        return invalid_argument("RotaryEmbedding: position_ids must be int64 [" +
                                std::to_string(b) + ", " + std::to_string(seq) + "], got " +
                                pos->shape.to_string());
      if (cs.rank() != 2 || cs[1] != half)
        return invalid_argument("RotaryEmbedding: with position_ids the caches must be [max, " +
                                std::to_string(half) + "], got " + cs.to_string());
      max_pos = cs[0];
    } else if (cs != Shape{b, seq, half}) {
      return invalid_argument("RotaryEmbedding: without position_ids the caches must be [" +
                              std::to_string(b) + ", " + std::to_string(seq) + ", " +
                              std::to_string(half) + "], got " + cs.to_string());
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, s));
    const float* in = x->as<float>();
    float* out = y->as<float>();
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t si = 0; si < seq; ++si) {
        int64_t cache_row = bi * seq + si;
        if (pos) {
          cache_row = pos->as<int64_t>()[bi * seq + si];
          if (cache_row < 0 || cache_row >= max_pos)
            return invalid_argument("RotaryEmbedding: position id " + std::to_string(cache_row) +
                                    " is outside the caches' " + std::to_string(max_pos) + " rows");
        }
        const float* c = cos->as<float>() + cache_row * half;
        const float* sn = sin->as<float>() + cache_row * half;
        for (int64_t h = 0; h < heads; ++h) {
          const int64_t base = s.rank() == 4 ? ((bi * heads + h) * seq + si) * hd
                                             : (bi * seq + si) * heads * hd + h * hd;
          const float* xi = in + base;
          float* yo = out + base;
          for (int64_t t = 0; t < half; ++t) {
            const int64_t i1 = interleaved_ ? 2 * t : t, i2 = interleaved_ ? 2 * t + 1 : t + half;
            const float x1 = xi[i1], x2 = xi[i2];
            yo[i1] = c[t] * x1 - sn[t] * x2;
            yo[i2] = sn[t] * x1 + c[t] * x2;
          }
          std::copy(xi + rot, xi + hd, yo + rot);
        }
      }
    return Status::ok_status();
  }

 private:
  bool interleaved_;
  int64_t num_heads_, rotary_dim_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_attention(const NodeInfo& node) {
  AttentionAttrs a;
  int64_t causal = 0, precision = 0;
  SOD2_ATTR(causal, node.attrs.get_int("is_causal", 0));
  SOD2_ATTR(a.q_heads, node.attrs.get_int("q_num_heads", 0));
  SOD2_ATTR(a.kv_heads, node.attrs.get_int("kv_num_heads", 0));
  SOD2_ATTR(a.scale, node.attrs.get_float("scale", 0.f));
  SOD2_ATTR(a.softcap, node.attrs.get_float("softcap", 0.f));
  SOD2_ATTR(a.qk_mode, node.attrs.get_int("qk_matmul_output_mode", 0));
  SOD2_ATTR(precision, node.attrs.get_int("softmax_precision", 0));
  a.causal = causal != 0;
  // Checked even without the fourth output: ONNX defines only these four values.
  if (a.qk_mode < kQkScaled || a.qk_mode > kQkSoftmax)
    return invalid_model("Attention: qk_matmul_output_mode " + std::to_string(a.qk_mode) +
                         " is not 0 (Q*K^T scaled), 1 (after softcap), 2 (plus the masks) or 3 "
                         "(after softmax)");
  if (node.num_outputs > 4)
    return invalid_model("Attention: at most 4 outputs, got " + std::to_string(node.num_outputs));
  if (node.num_outputs == 2)
    return invalid_model("Attention: present_key and present_value come together");
  if (precision != 0 && precision != 1)
    return unsupported("Attention: softmax_precision " + std::to_string(precision) +
                       " (only float)");
  auto k = std::make_unique<AttentionKernel>(a);
  k->num_outputs_ = node.num_outputs;
  return std::unique_ptr<Kernel>(std::move(k));
}

Expected<std::unique_ptr<Kernel>> make_rotary_embedding(const NodeInfo& node) {
  int64_t interleaved = 0, heads = 0, rot = 0;
  SOD2_ATTR(interleaved, node.attrs.get_int("interleaved", 0));
  SOD2_ATTR(heads, node.attrs.get_int("num_heads", 0));
  SOD2_ATTR(rot, node.attrs.get_int("rotary_embedding_dim", 0));
  if (heads < 0 || rot < 0)
    return invalid_model("RotaryEmbedding: num_heads and rotary_embedding_dim must be >= 0");
  return std::unique_ptr<Kernel>(new RotaryKernel(interleaved != 0, heads, rot));
}

}  // namespace sod2::rt
