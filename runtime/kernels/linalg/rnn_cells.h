// The LSTM and GRU cells with ONNX's default activations (Sigmoid, Tanh, Tanh) and no clip or
// peepholes, which is what PyTorch and TensorFlow export: one batch entry's hidden units at a
// time, branch-free with the math family's exp and tanh (runtime/kernels/math/fast_math.h), one
// copy per instruction set, so the cell runs in vectors instead of one transcendental call per
// gate and unit (it was most of a step at batch 1).
#pragma once

#include <cstdint>

namespace sod2::rt {

// Gates in ONNX order i, o, f, c; xg and rg are the projected input and the recurrent GEMM of
// one entry (4 * H each, the biases in xg), from its unit j0 on. Units [j0, j0 + n): updates c
// and writes h (which the cell does not read).
void lstm_cell_default(const float* xg, const float* rg, float* c, float* h, int64_t n, int64_t H);

// Gates z, r, h; xg holds z and r's biases both and h's input bias; rbh is h's recurrent bias.
// linear_before_reset: h~ = tanh(xh + r * (rh + rbh)); otherwise rg's h part already multiplied
// r (h~ = tanh(xh + rh + rbh)). Units [j0, j0 + n) (every pointer from j0 on): the new h from
// h_prev into h_out, which may be h_prev itself.
void gru_cell_default(const float* xg, const float* rg, const float* rbh, const float* h_prev,
                      float* h_out, int64_t n, int64_t H, bool linear_before_reset);

}  // namespace sod2::rt
