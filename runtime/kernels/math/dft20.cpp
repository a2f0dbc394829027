// DFT-20: dft_length and axis are inputs (axis a scalar, default -2). Runs the DFT-17 kernel
// (signal.cpp, found through a registry of the signal ops alone) created for the axis of each
// run; one kernel per axis value seen is kept, so the steady state creates nothing.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

class Dft20Kernel final : public Kernel {
 public:
  Dft20Kernel(NodeInfo base, KernelFactory dft17) : base_(std::move(base)), dft17_(dft17) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("DFT: missing input");
    int64_t axis = -2;
    if (const Tensor* a = ctx.input(2); a && a->numel() > 0)
      SOD2_RETURN_IF_ERROR(read_scalar_int("DFT", "axis", a, &axis));
    // A signal axis: [-r, -2] or [0, r - 2] (the last dim holds real/imaginary parts). Checked
    // here so that at most r kernels are ever kept.
    const int64_t r = x->shape.rank();
    if (axis < -r || axis > r - 2 || axis == -1)
      return invalid_argument("DFT: axis " + std::to_string(axis) +
                              " is not a signal axis of an input of rank " + std::to_string(r));
    if (axis < 0) axis += r;
    Kernel* inner = nullptr;
    for (auto& [ax, k] : kernels_)
      if (ax == axis) inner = k.get();
    if (!inner) {
      NodeInfo n = base_;
      n.opset = 17;
      AttrValue v;
      v.kind = AttrValue::Kind::kInt;
      v.i = axis;
      n.attrs.set("axis", std::move(v));
      SOD2_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, dft17_(n));
      inner = k.get();
      kernels_.emplace_back(axis, std::move(k));
    }
    // DFT-17 reads inputs 0 (signal) and 1 (dft_length) only: the same slots.
    return inner->run(ctx);
  }

 private:
  NodeInfo base_;
  KernelFactory dft17_;
  std::vector<std::pair<int64_t, std::unique_ptr<Kernel>>> kernels_;
};

Expected<std::unique_ptr<Kernel>> dft20_factory(const NodeInfo& node) {
  static const KernelRegistry signal_ops = [] {
    KernelRegistry r;
    register_signal(r);
    return r;
  }();
  const KernelFactory dft17 = signal_ops.find("", "DFT", 17);
  if (!dft17) return unsupported("DFT: no DFT-17 kernel to run DFT-20 with");
  if (node.attrs.has("axis"))
    return invalid_model("DFT: from opset 20 the axis is an input, not an attribute");
  return std::unique_ptr<Kernel>(std::make_unique<Dft20Kernel>(node, dft17));
}

}  // namespace

void register_dft20(KernelRegistry& r) { r.add("", "DFT", 20, dft20_factory); }

}  // namespace sod2::rt::math
