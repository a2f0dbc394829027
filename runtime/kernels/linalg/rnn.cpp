// RNN (opsets 7, 14): H_t = f(X_t * W^T + H_{t-1} * R^T + Wb + Rb), one gate; optional B,
// sequence_lens, initial_h; forward, reverse or bidirectional; layout 1 through the batch-first
// adapter. Same structure as GRU and LSTM: one GEMM projects every step's input, each step
// multiplies H_{t-1} by R^T. Entries past their sequence length keep their state and write zeros
// to Y.
#include <algorithm>
#include <cstring>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/linalg_kernels.h"
#include "runtime/kernels/linalg/rnn_common.h"

namespace sod2::rt {
namespace {

class RnnKernel : public Kernel {
 public:
  RnnKernel(RnnAttrs a, size_t outputs) : a_(std::move(a)), outputs_(outputs) {}

  Status run(KernelContext& ctx) override {
    SOD2_ASSIGN_OR_RETURN(RnnShape s, check_rnn_inputs(ctx, a_, 1, "RNN"));
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
    const int64_t H = s.hidden, B = s.batch;
    if (B == 0 || H == 0) return Status::ok_status();

    // Scratch: projected inputs, recurrent part, h, summed bias; lengths apart (int64).
    SOD2_RETURN_IF_ERROR(check_recurrence_scratch(s, H));
    const int64_t floats = s.seq * B * H + 2 * B * H + H;
    SOD2_ASSIGN_OR_RETURN(float* mem, scratch_floats(ctx, floats));
    float* gx = mem;
    float* gh = gx + s.seq * B * H;
    float* h = gh + B * H;
    float* bias = h + B * H;
    SOD2_ASSIGN_OR_RETURN(const int64_t* lens, read_sequence_lens(ctx, s, "RNN"));
    zero_steps_past_lengths(y, s, lens);

    const float* X = ctx.input(0)->as<float>();
    const float* W = ctx.input(1)->as<float>();
    const float* R = ctx.input(2)->as<float>();
    const Tensor* bt = ctx.input(3);
    const Tensor* h0 = ctx.input(5);
    for (int d = 0; d < s.dirs; ++d) {
      const bool rev = a_.reverse || d == 1;
      project_inputs(ctx.pool(), s, 1, X, W + d * H * s.input, sum_biases(bt, d, H, bias), gx);
      load_initial_state(h0, d, s, h);
      const RnnActivation& f = a_.acts[d];
      const float clip = a_.clip;
      auto cl = [clip](float v) { return clip > 0.f ? std::clamp(v, -clip, clip) : v; };
      for (int64_t step = 0; step < s.seq; ++step) {
        recurrent_gemm(ctx.pool(), s, h, R + d * H * H, H, gh, H);
        for (int64_t b = 0; b < B; ++b) {
          if (step >= lens[b]) continue;
          const int64_t t = rev ? lens[b] - 1 - step : step;
          const float* xg = gx + (t * B + b) * H;
          const float* rg = gh + b * H;
          float* hb = h + b * H;
          for (int64_t j = 0; j < H; ++j) hb[j] = f(cl(xg[j] + rg[j]));
          if (y)
            std::memcpy(y->as<float>() + ((t * s.dirs + d) * B + b) * H, hb, H * sizeof(float));
        }
      }
      if (yh) std::memcpy(yh->as<float>() + d * B * H, h, B * H * sizeof(float));
    }
    return Status::ok_status();
  }

 private:
  RnnAttrs a_;
  size_t outputs_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_rnn(const NodeInfo& node) {
  gemm_library_init();
  SOD2_ASSIGN_OR_RETURN(RnnAttrs a, read_rnn_attrs(node, "RNN", {"Tanh"}));
  const bool batch_first = a.batch_first;
  std::unique_ptr<Kernel> k(new RnnKernel(std::move(a), node.num_outputs));
  if (batch_first) return wrap_batch_first(std::move(k), 1, "RNN");
  return k;
}

}  // namespace sod2::rt
