// sod2:FusedSoftmax on the CPU: a Softmax whose input is a fused elementwise group, the group as
// its prologue (attention's scale and mask: MatMul -> Div -> Add -> Softmax). The group's result
// is written into the output a block of rows at a time and normalised there while the block is
// still in cache, so the scores are read and written once instead of twice: the group's own
// evaluation (elementwise_evaluator.h), then Softmax's own row loop (softmax_rows_f32), so
// fusing changes no result.
//
// Attributes: the program's (elementwise_program.h), and "axis" (int >= 0): each row
// normalised is the output's dims [axis, rank) (contiguous: the compiler fuses a Softmax of
// opset 13 on only its last axis, and before 13 the op coerces its input to 2-D at axis).
#include <algorithm>
#include <memory>
#include <string>

#include "runtime/kernels/elementwise_program.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/math/elementwise_evaluator.h"
#include "runtime/kernels/math/math_common.h"
#include "runtime/kernels/math/vec_kernels.h"

namespace sod2::rt::math {
namespace {

// Floats per block of rows: evaluated, then normalised while in L1/L2 (a longer row is its own
// block).
constexpr int64_t kBlockFloats = 8192;

class FusedSoftmaxKernel final : public Kernel {
 public:
  FusedSoftmaxKernel(ElementwiseProgram program, size_t num_inputs, int64_t axis)
      : eval_(std::move(program), num_inputs), axis_(axis) {}

  Status run(KernelContext& ctx) override {
    Shape out_shape;
    SOD2_RETURN_IF_ERROR(eval_.bind(ctx, "FusedSoftmax", &out_shape));
    const int rank = out_shape.rank();
    if (axis_ > rank)
      return invalid_argument("FusedSoftmax: axis " + std::to_string(axis_) +
                              " is past the rank of its input " + out_shape.to_string());
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, DType::kFloat, out_shape));
    const int64_t numel = out_shape.numel();
    if (numel == 0) return Status::ok_status();
    const int64_t n = dims_product(out_shape, static_cast<int>(axis_), rank);
    const int64_t rows = numel / n;
    const int64_t block = std::max<int64_t>(1, kBlockFloats / n);
    const int64_t blocks = (rows + block - 1) / block;
    // As Softmax splits its rows, a slice per thread or more, each with its own scratch.
    const int64_t slices = std::clamp<int64_t>(
        numel / kElementwiseGrain, 1, std::min<int64_t>(blocks, 4 * ctx.pool().num_threads()));
    const size_t slice_bytes = eval_.scratch_bytes();
    SOD2_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(slice_bytes * static_cast<size_t>(slices)));
    float* y = out->as<float>();
    ctx.pool().parallel_for(slices, 1, [&](int64_t first, int64_t last_slice) {
      for (int64_t sl = first; sl < last_slice; ++sl) {
        void* mine = static_cast<uint8_t*>(scratch) + static_cast<size_t>(sl) * slice_bytes;
        for (int64_t b = blocks * sl / slices; b < blocks * (sl + 1) / slices; ++b) {
          const int64_t r0 = b * block, r1 = std::min(rows, r0 + block);
          eval_.run(r0 * n, r1 * n, mine, y, 0);
          // In place: each element is read before it is written.
          softmax_rows_f32(y + r0 * n, y + r0 * n, r1 - r0, n, false);
        }
      }
    });
    return Status::ok_status();
  }

 private:
  ElementwiseEvaluator eval_;
  int64_t axis_ = 0;
};

Expected<std::unique_ptr<Kernel>> fused_softmax_factory(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(ElementwiseProgram p, node_program(node, "FusedSoftmax"));
  if (p.quantize) return invalid_model("FusedSoftmax: its prologue cannot quantize");
  SOD2_ASSIGN_OR_RETURN(const int64_t axis, node.attrs.get_int("axis", -1));
  if (axis < 0 || axis > kMaxRank)
    return invalid_model("FusedSoftmax: axis must be 0.." + std::to_string(kMaxRank) + ", got " +
                         std::to_string(axis));
  return std::unique_ptr<Kernel>(
      new FusedSoftmaxKernel(std::move(p), node.input_dtypes.size(), axis));
}

}  // namespace

void register_fused_softmax(KernelRegistry& r) {
  r.add(kFusedSoftmaxDomain, kFusedSoftmaxOp, 1, &fused_softmax_factory);
}

}  // namespace sod2::rt::math
