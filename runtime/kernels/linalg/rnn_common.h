// What RNN, LSTM and GRU share: attribute parsing (direction, activations, clip, layout), input
// checks, the input projection X * W^T for all time steps at once (one big GEMM instead of one
// per step), and the adapter that runs a layout-0 kernel on batch-first (layout 1) tensors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"

namespace sod2::rt {

enum class RnnFn : uint8_t {
  kSigmoid,
  kTanh,
  kRelu,
  kHardSigmoid,
  kLeakyRelu,
  kAffine,
  kScaledTanh,
  kElu,
  kSoftsign,
  kSoftplus,
  kThresholdedRelu
};

struct RnnActivation {
  RnnFn fn = RnnFn::kSigmoid;
  float alpha = 0.f, beta = 0.f;
  float operator()(float x) const;
};

struct RnnAttrs {
  int num_directions = 1;
  bool reverse = false;  // the single direction runs backwards
  int64_t hidden = 0;
  float clip = 0.f;  // 0: none
  // layout 1 (opset 14): X [batch, seq, input], Y [batch, seq, dirs, hidden].
  bool batch_first = false;
  // Per direction, `per_dir` functions (LSTM: f, g, h; GRU: f, g).
  std::vector<RnnActivation> acts;
};

// Parses direction, hidden_size, clip, activations (defaults: Sigmoid then Tanh...), layout.
Expected<RnnAttrs> read_rnn_attrs(const NodeInfo& node, const char* op,
                                  const std::vector<std::string>& default_acts);

// Checked shapes of one run. X [seq, batch, input]; W [dirs, gates*hidden, input];
// R [dirs, gates*hidden, hidden].
struct RnnShape {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int dirs = 1;
};
Expected<RnnShape> check_rnn_inputs(KernelContext& ctx, const RnnAttrs& a, int gates,
                                    const char* op);

// Per batch entry, the number of valid steps, from sequence_lens (input 4; all `seq` when it is
// absent), in the kernel's scratch.
Expected<const int64_t*> read_sequence_lens(KernelContext& ctx, const RnnShape& s, const char* op);

// gx[t*batch + b, :] = X[t, b, :] * W_d^T + bias (bias may be null), gates*hidden columns.
void project_inputs(ThreadPool& pool, const RnnShape& s, int gates, const float* x,
                    const float* w_d, const float* bias, float* gx);

// Y (may be null) zeroed, all of it, when some batch entry's sequence ends before `seq` steps
// (the steps past its length are not written); every step writes all of Y otherwise, and it is
// left alone.
void zero_steps_past_lengths(Tensor* y, const RnnShape& s, const int64_t* lens);

// X may be empty (input size 0) with any seq and batch, so the scratch of a recurrence with
// `gate_width` columns per entry is checked before it is sized (Y, which would check it, may not
// be asked for): [seq, batch, gate_width] and 3 * [batch, gate_width] floats, each below 2^62
// bytes, so that their sum stays addressable.
Status check_recurrence_scratch(const RnnShape& s, int64_t gate_width);

// Direction d's initial state (h0 or c0, [dirs, batch, hidden]) into `out`; zeros when absent.
void load_initial_state(const Tensor* state, int d, const RnnShape& s, float* out);

// out = Wb + Rb of direction d (B is [dirs, 2 * width]); nullptr when there is no B.
const float* sum_biases(const Tensor* b, int d, int64_t width, float* out);

// gh[batch, n] (row stride ldc) = h[batch, hidden] * R_d[:n]^T: one step's recurrent GEMM.
void recurrent_gemm(ThreadPool& pool, const RnnShape& s, const float* h, const float* r_d,
                    int64_t n, float* gh, int64_t ldc);

// Runs `inner`, a layout-0 kernel, on layout-1 tensors: X [batch, seq, input] and the first
// `state_inputs` initial states from input 5 on ([batch, dirs, hidden]) are transposed into
// scratch, inner writes its outputs (Y [seq, dirs, batch, hidden], states [dirs, batch, hidden])
// to scratch, and they are transposed into the real outputs [batch, seq, dirs, hidden] and
// [batch, dirs, hidden].
std::unique_ptr<Kernel> wrap_batch_first(std::unique_ptr<Kernel> inner, int state_inputs,
                                         const char* op);

}  // namespace sod2::rt
