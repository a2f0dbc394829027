// GRU (layout 0): gates z, r, h; optional B, sequence_lens, initial_h; linear_before_reset.
// Same structure as LSTM: one GEMM projects every step's input, each step multiplies H_{t-1} by
// R^T. Without linear_before_reset the h gate needs (r . H_{t-1}) * Rh^T, a second GEMM per step
// after r is known. With linear_before_reset and the default cell (what PyTorch exports) a step is
// one parallel region on packed R, as for LSTM (rnn_recurrence.h).
#include <algorithm>
#include <cstring>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/linalg_kernels.h"
#include "runtime/kernels/linalg/rnn_cells.h"
#include "runtime/kernels/linalg/rnn_common.h"
#include "runtime/kernels/linalg/rnn_recurrence.h"

namespace sod2::rt {
namespace {

class GruKernel : public Kernel {
 public:
  GruKernel(RnnAttrs a, bool lbr, size_t outputs, bool constant_r)
      : a_(std::move(a)), lbr_(lbr), outputs_(outputs), constant_r_(constant_r) {}

  Status prepare(std::span<const Tensor* const> constants) override {
    bool default_cells = true;
    for (int d = 0; d < a_.num_directions; ++d) default_cells = default_cells && default_cell(d);
    if (lbr_ && default_cells && constant_r_ && constants.size() > 2)
      packed_.prepare(constants[2], a_.num_directions, 3, a_.hidden);
    return Status::ok_status();
  }

  Status run(KernelContext& ctx) override {
    SOD2_ASSIGN_OR_RETURN(RnnShape s, check_rnn_inputs(ctx, a_, 3, "GRU"));
    const Shape state{s.dirs, s.batch, s.hidden};
    Tensor* y = nullptr;
    Tensor* yh = nullptr;
    if (outputs_ > 0) {
      SOD2_ASSIGN_OR_RETURN(y,
                            ctx.output(0, DType::kFloat, Shape{s.seq, s.dirs, s.batch, s.hidden}));
    }
    if (outputs_ > 1) {
      SOD2_ASSIGN_OR_RETURN(yh, ctx.output(1, DType::kFloat, state));
    }
    const int64_t H = s.hidden, B = s.batch, G = 3 * H;
    if (B == 0 || H == 0) return Status::ok_status();

    // Scratch: projected inputs, recurrent gates, h, r.h (or the next h), input bias, recurrent
    // h-gate bias, and R packed per run when the packed path runs on an R that is not a constant.
    SOD2_RETURN_IF_ERROR(check_recurrence_scratch(s, G));
    const int64_t packed_floats = lbr_ && !constant_r_ ? packed_recurrence_floats(3, H) : 0;
    const int64_t floats = s.seq * B * G + B * G + 2 * B * H + G + H + packed_floats;
    SOD2_ASSIGN_OR_RETURN(float* mem, scratch_floats(ctx, floats));
    float* gx = mem;
    float* gh = gx + s.seq * B * G;
    float* h = gh + B * G;
    float* rh = h + B * H;
    float* bias = rh + B * H;
    float* rbh = bias + G;
    float* packed_scratch = rbh + H;
    SOD2_ASSIGN_OR_RETURN(const int64_t* lens, read_sequence_lens(ctx, s, "GRU"));
    zero_steps_past_lengths(y, s, lens);

    const float* X = ctx.input(0)->as<float>();
    const float* W = ctx.input(1)->as<float>();
    const float* R = ctx.input(2)->as<float>();
    const Tensor* bt = ctx.input(3);
    const Tensor* h0 = ctx.input(5);
    for (int d = 0; d < s.dirs; ++d) {
      const bool rev = a_.reverse || d == 1;
      // z and r take both biases up front; the h gate's recurrent bias Rbh goes inside r * (...)
      // with linear_before_reset, so it is kept apart.
      std::fill(bias, bias + G, 0.f);
      std::fill(rbh, rbh + H, 0.f);
      if (bt) {
        const float* bd = bt->as<float>() + d * 2 * G;
        for (int64_t j = 0; j < G; ++j) bias[j] = bd[j] + (j < 2 * H ? bd[G + j] : 0.f);
        std::copy(bd + G + 2 * H, bd + 2 * G, rbh);
      }
      project_inputs(ctx.pool(), s, 3, X, W + d * G * s.input, bt ? bias : nullptr, gx);
      load_initial_state(h0, d, s, h);
      const RnnActivation& f = a_.acts[d * 2];
      const RnnActivation& g = a_.acts[d * 2 + 1];
      const float clip = a_.clip;
      auto cl = [clip](float v) { return clip > 0.f ? std::clamp(v, -clip, clip) : v; };
      const float* Rd = R + d * G * H;
      const bool plain_cell = default_cell(d);
      if (plain_cell && lbr_) {
        PackedRecurrence pr{nullptr, 3, H};
        pr.data = constant_r_ ? packed_.get(Rd, d, s.dirs, 3, H) : packed_scratch;
        if (!constant_r_) pack_recurrence(Rd, 3, H, packed_scratch);
        auto cell = [&](int64_t b, int64_t t, int64_t j0, int64_t n, const float* hp, float* hn) {
          gru_cell_default(gx + (t * B + b) * G + j0, gh + b * G + j0, rbh + j0, hp, hn, n, H,
                           true);
        };
        // r.h's buffer holds the next h (not needed with linear_before_reset); after an odd
        // number of steps of a first direction h is already there.
        float* h_next = h == rh ? gh + B * G : rh;
        run_recurrence(ctx.pool(), s, pr, lens, rev, d, h, h_next, gh, y ? y->as<float>() : nullptr,
                       cell);
        if (yh) std::memcpy(yh->as<float>() + d * B * H, h, B * H * sizeof(float));
        continue;
      }
      for (int64_t step = 0; step < s.seq; ++step) {
        // Without linear_before_reset the h gate's GEMM waits for r.
        recurrent_gemm(ctx.pool(), s, h, Rd, lbr_ ? G : 2 * H, gh, G);
        if (!lbr_) {
          for (int64_t b = 0; b < B; ++b) {
            const int64_t t = step < lens[b] ? (rev ? lens[b] - 1 - step : step) : 0;
            const float* xg = gx + (t * B + b) * G;
            for (int64_t j = 0; j < H; ++j)
              rh[b * H + j] = f(cl(xg[H + j] + gh[b * G + H + j])) * h[b * H + j];
          }
          recurrent_gemm(ctx.pool(), s, rh, Rd + 2 * H * H, H, gh + 2 * H, G);
        }
        for (int64_t b = 0; b < B; ++b) {
          if (step >= lens[b]) continue;
          const int64_t t = rev ? lens[b] - 1 - step : step;
          const float* xg = gx + (t * B + b) * G;
          const float* rg = gh + b * G;
          float* hb = h + b * H;
          if (plain_cell) {
            gru_cell_default(xg, rg, rbh, hb, hb, H, H, lbr_);
          } else {
            for (int64_t j = 0; j < H; ++j) {
              const float z = f(cl(xg[j] + rg[j]));
              const float r = f(cl(xg[H + j] + rg[H + j]));
              const float pre = lbr_ ? xg[2 * H + j] + r * (rg[2 * H + j] + rbh[j])
                                     : xg[2 * H + j] + rg[2 * H + j] + rbh[j];
              const float hh = g(cl(pre));
              hb[j] = (1.f - z) * hh + z * hb[j];
            }
          }
          if (y)
            std::memcpy(y->as<float>() + ((t * s.dirs + d) * B + b) * H, hb, H * sizeof(float));
        }
      }
      if (yh) std::memcpy(yh->as<float>() + d * B * H, h, B * H * sizeof(float));
    }
    return Status::ok_status();
  }

 private:
  // Sigmoid and Tanh, no clip.
  bool default_cell(int d) const {
    return a_.clip <= 0.f && a_.acts[d * 2].fn == RnnFn::kSigmoid &&
           a_.acts[d * 2 + 1].fn == RnnFn::kTanh;
  }

  RnnAttrs a_;
  bool lbr_;
  size_t outputs_;
  bool constant_r_;
  PackedRecurrenceCache packed_;  // when R is a constant
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_gru(const NodeInfo& node) {
  gemm_library_init();
  SOD2_ASSIGN_OR_RETURN(RnnAttrs a, read_rnn_attrs(node, "GRU", {"Sigmoid", "Tanh"}));
  int64_t lbr = 0;
  SOD2_ATTR(lbr, node.attrs.get_int("linear_before_reset", 0));
  const bool batch_first = a.batch_first;
  const bool constant_r = node.input_constant.size() > 2 && node.input_constant[2];
  std::unique_ptr<Kernel> k(new GruKernel(std::move(a), lbr != 0, node.num_outputs, constant_r));
  if (batch_first) return wrap_batch_first(std::move(k), 1, "GRU");
  return k;
}

}  // namespace sod2::rt
