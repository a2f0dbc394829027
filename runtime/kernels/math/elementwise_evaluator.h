// A fused elementwise program (elementwise_program.h) evaluated over any range of its output's
// elements, a chunk at a time, every step's result for the chunk in a small buffer that stays in
// L1: what sod2:FusedElementwise runs over its whole output, and sod2:FusedSoftmax over the rows
// it normalises next. Each step computes what the op's own kernel computes, with the same vector
// loops where that kernel has one, so fusing changes no result; a quantized output is the last
// step's chunk through QuantizeLinear's own arithmetic (quantize_rows.h).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/status/status.h"
#include "runtime/kernels/elementwise_program.h"
#include "runtime/kernels/kernel.h"

namespace sod2::rt::math {

// The program of a node that holds one (FusedElementwise, FusedSoftmax; `op` names it in
// errors): one output, every input present and float32, the program checked against them.
Expected<ElementwiseProgram> node_program(const NodeInfo& node, const char* op);

class ElementwiseEvaluator {
 public:
  // `num_inputs`: the node's, which the program's input indices were checked against.
  ElementwiseEvaluator(ElementwiseProgram program, size_t num_inputs);

  const ElementwiseProgram& program() const { return program_; }

  // Takes the run's inputs (as many as the node's, every one present and float32; `op` names the
  // kernel in errors) and their broadcast shape, the output's, into `out_shape`. Allocates
  // nothing once the buffers kept between runs have grown.
  Status bind(KernelContext& ctx, const char* op, Shape* out_shape);

  // Scratch one caller of run() needs at a time (its own, where calls run in parallel).
  size_t scratch_bytes() const;

  // Output elements [begin, end) of the bound run into `out`, element i at out[i - origin]
  // (floats, or the quantized type); `scratch` holds scratch_bytes(), 64-byte aligned.
  void run(int64_t begin, int64_t end, void* scratch, void* out, int64_t origin) const;

 private:
  // The output walked as rows of its innermost (collapsed) dim, each input's offset per output
  // index and its step along a row (1, or 0 where it broadcasts).
  struct Walk {
    int rank = 0;
    int64_t dims[kMaxRank] = {};
    std::vector<std::array<int64_t, kMaxRank>> strides;  // per input
  };
  // Steps first..first+4 are GELU as PyTorch exports it (gelu_erf_f32): Div(x, k) or Mul(x, k),
  // Erf, Add(., one), Mul(., x), Mul(., half), each result read only by the next. k, one and
  // half are inputs; a run evaluates the five steps as one where they are one float each.
  struct GeluRun {
    EwOperand x;
    int32_t k = 0, one = 0, half = 0;
    bool divide = true;
  };

  void plan_walk(const Shape& out);
  void find_gelus();
  void quantize_out(const float* v, int64_t n, void* y, int64_t at) const;
  float scalar(int32_t input) const;

  ElementwiseProgram program_;
  size_t num_inputs_ = 0;
  size_t max_args_ = 0;
  int64_t chunk_ = 256;
  // Kept between runs, so a run allocates nothing once they have grown.
  std::vector<const Shape*> shapes_;
  std::vector<const Tensor*> inputs_;
  std::vector<std::array<int64_t, kMaxRank>> st_;
  Walk walk_;
  std::vector<GeluRun> gelus_;
  std::vector<int32_t> gelu_at_;  // per step: the GeluRun starting there, or -1
  std::vector<char> gelu_live_;   // per GeluRun: its three inputs are one float each, this run
};

}  // namespace sod2::rt::math
