// LSTM (layout 0): gates i, o, f, c; optional B, sequence_lens, initial_h/c, peepholes P.
// The input projection of all steps is one GEMM; each step adds H_{t-1} * R^T (a GEMM of batch
// rows) and runs the cell elementwise. Entries past their sequence length keep their state and
// write zeros to Y. With the default cell (what PyTorch and TensorFlow export) a step is one
// parallel region: each thread multiplies its block of hidden units on packed R and runs their
// cell (rnn_recurrence.h).
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

class LstmKernel : public Kernel {
 public:
  LstmKernel(RnnAttrs a, bool input_forget, size_t outputs, bool constant_r)
      : a_(std::move(a)), input_forget_(input_forget), outputs_(outputs), constant_r_(constant_r) {}

  Status prepare(std::span<const Tensor* const> constants) override {
    bool default_cells = true;
    for (int d = 0; d < a_.num_directions; ++d) default_cells = default_cells && default_cell(d);
    if (default_cells && constant_r_ && constants.size() > 2)
      packed_.prepare(constants[2], a_.num_directions, 4, a_.hidden);
    return Status::ok_status();
  }

  Status run(KernelContext& ctx) override {
    SOD2_ASSIGN_OR_RETURN(RnnShape s, check_rnn_inputs(ctx, a_, 4, "LSTM"));
    const Tensor* c0 = ctx.input(6);
    const Tensor* p = ctx.input(7);
    const Shape state{s.dirs, s.batch, s.hidden};
    if (c0 && !(c0->shape == state))
      return invalid_argument("LSTM: initial_c " + c0->shape.to_string() + " should be " +
                              state.to_string());
    if (p && !(p->shape == Shape{s.dirs, 3 * s.hidden}))
      return invalid_argument("LSTM: P " + p->shape.to_string() + " should be [" +
                              std::to_string(s.dirs) + "," + std::to_string(3 * s.hidden) + "]");
    Tensor* y = nullptr;
    Tensor* yh = nullptr;
    Tensor* yc = nullptr;
    if (outputs_ > 0) {
      SOD2_ASSIGN_OR_RETURN(y,
                            ctx.output(0, DType::kFloat, Shape{s.seq, s.dirs, s.batch, s.hidden}));
    }
    if (outputs_ > 1) {
      SOD2_ASSIGN_OR_RETURN(yh, ctx.output(1, DType::kFloat, state));
    }
    if (outputs_ > 2) {
      SOD2_ASSIGN_OR_RETURN(yc, ctx.output(2, DType::kFloat, state));
    }
    const int64_t H = s.hidden, B = s.batch, G = 4 * H;
    if (B == 0 || H == 0) return Status::ok_status();

    // Both directions of a bidirectional LSTM with the default cell run at once, one per thread:
    // each direction's steps then wait for nothing (crnn's 2 layers of 2 x 32 steps).
    bool concurrent = s.dirs == 2 && ctx.pool().num_threads() >= 2 && !p;
    for (int d = 0; d < s.dirs; ++d) concurrent = concurrent && default_cell(d);
    // Scratch, per direction running at once: projected inputs, recurrent gates, h and its next
    // value, c, summed bias, and R packed per run when it is not a constant; lengths apart.
    SOD2_RETURN_IF_ERROR(check_recurrence_scratch(s, G));
    const int64_t packed_floats = constant_r_ ? 0 : packed_recurrence_floats(4, H);
    const int64_t dir_floats = s.seq * B * G + B * G + 3 * B * H + G + packed_floats;
    const int copies = concurrent ? 2 : 1;
    SOD2_ASSIGN_OR_RETURN(float* mem, scratch_floats(ctx, copies * dir_floats));
    DirBuffers bufs[2];
    for (int k = 0; k < copies; ++k) bufs[k] = dir_buffers(mem + k * dir_floats, s, G);
    SOD2_ASSIGN_OR_RETURN(const int64_t* lens, read_sequence_lens(ctx, s, "LSTM"));
    zero_steps_past_lengths(y, s, lens);

    const float* X = ctx.input(0)->as<float>();
    const float* W = ctx.input(1)->as<float>();
    const float* R = ctx.input(2)->as<float>();
    const Tensor* bt = ctx.input(3);
    const Tensor* h0 = ctx.input(5);
    float* y_data = y ? y->as<float>() : nullptr;
    // One direction with the default cell on packed R, its buffers ready.
    auto run_packed = [&](int d, DirBuffers& db, bool split) {
      const float* r_d = R + d * G * H;
      PackedRecurrence pr{nullptr, 4, H};
      pr.data = constant_r_ ? packed_.get(r_d, d, s.dirs, 4, H) : db.packed;
      if (!constant_r_) pack_recurrence(r_d, 4, H, db.packed);
      auto cell = [&](int64_t b, int64_t t, int64_t j0, int64_t n, const float*, float* hn) {
        lstm_cell_default(db.gx + (t * B + b) * G + j0, db.gh + b * G + j0, db.c + b * H + j0, hn,
                          n, H);
      };
      run_recurrence(ctx.pool(), s, pr, lens, a_.reverse || d == 1, d, db.h, db.h_next, db.gh,
                     y_data, cell, split);
      if (yh) std::memcpy(yh->as<float>() + d * B * H, db.h, B * H * sizeof(float));
      if (yc) std::memcpy(yc->as<float>() + d * B * H, db.c, B * H * sizeof(float));
    };
    if (concurrent) {
      for (int d = 0; d < 2; ++d) {
        DirBuffers& db = bufs[d];
        project_inputs(ctx.pool(), s, 4, X, W + d * G * s.input, sum_biases(bt, d, G, db.bias),
                       db.gx);
        load_initial_state(h0, d, s, db.h);
        load_initial_state(c0, d, s, db.c);
        // Packed once here: the cache is not for two threads at once.
        if (constant_r_) packed_.get(R + d * G * H, d, s.dirs, 4, H);
      }
      ctx.pool().parallel_for(2, 1, [&](int64_t d0, int64_t d1) {
        for (int64_t d = d0; d < d1; ++d) run_packed(static_cast<int>(d), bufs[d], false);
      });
      return Status::ok_status();
    }
    DirBuffers& db = bufs[0];
    float* gx = db.gx;
    float* gh = db.gh;
    float*& h = db.h;
    float* c = db.c;
    float* bias = db.bias;
    for (int d = 0; d < s.dirs; ++d) {
      const bool rev = a_.reverse || d == 1;
      project_inputs(ctx.pool(), s, 4, X, W + d * G * s.input, sum_biases(bt, d, G, bias), gx);
      load_initial_state(h0, d, s, h);
      load_initial_state(c0, d, s, c);
      const float* pi = p ? p->as<float>() + d * 3 * H : nullptr;
      const float* po = pi ? pi + H : nullptr;
      const float* pf = pi ? pi + 2 * H : nullptr;
      const RnnActivation& f = a_.acts[d * 3];
      const RnnActivation& g = a_.acts[d * 3 + 1];
      const RnnActivation& hf = a_.acts[d * 3 + 2];
      const float clip = a_.clip;
      auto cl = [clip](float v) { return clip > 0.f ? std::clamp(v, -clip, clip) : v; };
      if (!pi && default_cell(d)) {
        run_packed(d, db, true);
        continue;
      }
      for (int64_t step = 0; step < s.seq; ++step) {
        recurrent_gemm(ctx.pool(), s, h, R + d * G * H, G, gh, G);
        for (int64_t b = 0; b < B; ++b) {
          if (step >= lens[b]) continue;
          const int64_t t = rev ? lens[b] - 1 - step : step;
          const float* xg = gx + (t * B + b) * G;
          const float* rg = gh + b * G;
          float* hb = h + b * H;
          float* cb = c + b * H;
          for (int64_t j = 0; j < H; ++j) {
            const float cp = cb[j];
            const float i = f(cl(xg[j] + rg[j] + (pi ? pi[j] * cp : 0.f)));
            const float fg = input_forget_
                                 ? 1.f - i
                                 : f(cl(xg[2 * H + j] + rg[2 * H + j] + (pf ? pf[j] * cp : 0.f)));
            const float cc = g(cl(xg[3 * H + j] + rg[3 * H + j]));
            const float cn = fg * cp + i * cc;
            const float o = f(cl(xg[H + j] + rg[H + j] + (po ? po[j] * cn : 0.f)));
            cb[j] = cn;
            hb[j] = o * hf(cn);
          }
          if (y)
            std::memcpy(y->as<float>() + ((t * s.dirs + d) * B + b) * H, hb, H * sizeof(float));
        }
      }
      if (yh) std::memcpy(yh->as<float>() + d * B * H, h, B * H * sizeof(float));
      if (yc) std::memcpy(yc->as<float>() + d * B * H, c, B * H * sizeof(float));
    }
    return Status::ok_status();
  }

 private:
  // A direction's scratch (see run()).
  struct DirBuffers {
    float *gx, *gh, *h, *h_next, *c, *bias, *packed;
  };
  static DirBuffers dir_buffers(float* m, const RnnShape& s, int64_t G) {
    const int64_t B = s.batch, H = s.hidden;
    DirBuffers b;
    b.gx = m;
    b.gh = b.gx + s.seq * B * G;
    b.h = b.gh + B * G;
    b.h_next = b.h + B * H;
    b.c = b.h_next + B * H;
    b.bias = b.c + B * H;
    b.packed = b.bias + G;
    return b;
  }

  // Sigmoid, Tanh, Tanh, no clip, no coupled input and forget gates (peepholes apart).
  bool default_cell(int d) const {
    return !input_forget_ && a_.clip <= 0.f && a_.acts[d * 3].fn == RnnFn::kSigmoid &&
           a_.acts[d * 3 + 1].fn == RnnFn::kTanh && a_.acts[d * 3 + 2].fn == RnnFn::kTanh;
  }

  RnnAttrs a_;
  bool input_forget_;
  size_t outputs_;
  bool constant_r_;
  PackedRecurrenceCache packed_;  // when R is a constant
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_lstm(const NodeInfo& node) {
  gemm_library_init();
  SOD2_ASSIGN_OR_RETURN(RnnAttrs a, read_rnn_attrs(node, "LSTM", {"Sigmoid", "Tanh", "Tanh"}));
  int64_t input_forget = 0;
  SOD2_ATTR(input_forget, node.attrs.get_int("input_forget", 0));
  const bool batch_first = a.batch_first;
  const bool constant_r = node.input_constant.size() > 2 && node.input_constant[2];
  std::unique_ptr<Kernel> k(
      new LstmKernel(std::move(a), input_forget != 0, node.num_outputs, constant_r));
  if (batch_first) return wrap_batch_first(std::move(k), 2, "LSTM");
  return k;
}

}  // namespace sod2::rt
