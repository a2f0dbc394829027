// sod2:FusedElementwise on the CPU: a fused elementwise group (elementwise_program.h) evaluated
// over its whole output, a slice per thread (elementwise_evaluator.h), so the group's inside
// values never reach the arena (the memory plan holds only its inputs and output).
#include <algorithm>
#include <memory>
#include <string>

#include "runtime/kernels/elementwise_program.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/math/elementwise_evaluator.h"
#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

class FusedElementwiseKernel final : public Kernel {
 public:
  FusedElementwiseKernel(ElementwiseProgram program, size_t num_inputs)
      : eval_(std::move(program), num_inputs) {}

  Status run(KernelContext& ctx) override {
    Shape out_shape;
    SOD2_RETURN_IF_ERROR(eval_.bind(ctx, "FusedElementwise", &out_shape));
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, eval_.program().output_type(), out_shape));
    const int64_t numel = out_shape.numel();
    if (numel == 0) return Status::ok_status();
    // One slice of the output per thread, each with its own scratch.
    const int64_t slices =
        std::clamp<int64_t>(numel / kElementwiseGrain, 1, 4 * ctx.pool().num_threads());
    const size_t slice_bytes = eval_.scratch_bytes();
    SOD2_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(slice_bytes * static_cast<size_t>(slices)));
    ctx.pool().parallel_for(slices, 1, [&](int64_t first, int64_t last_slice) {
      for (int64_t sl = first; sl < last_slice; ++sl) {
        void* mine = static_cast<uint8_t*>(scratch) + static_cast<size_t>(sl) * slice_bytes;
        eval_.run(numel * sl / slices, numel * (sl + 1) / slices, mine, out->data, 0);
      }
    });
    return Status::ok_status();
  }

 private:
  ElementwiseEvaluator eval_;
};

Expected<std::unique_ptr<Kernel>> fused_elementwise_factory(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(ElementwiseProgram p, node_program(node, "FusedElementwise"));
  return std::unique_ptr<Kernel>(
      new FusedElementwiseKernel(std::move(p), node.input_dtypes.size()));
}

}  // namespace

void register_fused_elementwise(KernelRegistry& r) {
  r.add(kFusedElementwiseDomain, kFusedElementwiseOp, 1, &fused_elementwise_factory);
}

}  // namespace sod2::rt::math
