// Optional, OptionalHasElement and OptionalGetElement. An optional holding a value is that value
// itself; one holding nothing is the `none` value (tensor.h).
#include <memory>

#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/sequence/sequence_kernels.h"
#include "runtime/kernels/sequence/sequence_value.h"

namespace sod2::rt {
namespace {

class OptionalKernel final : public Kernel {
 public:
  bool takes_non_tensors() const override { return true; }
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.output_value(0, HostTensor::of_none());
    return forward_value(ctx, 0, *x);
  }
};

class HasElementKernel final : public Kernel {
 public:
  bool takes_non_tensors() const override { return true; }
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kBool, Shape{}));
    *y->as<bool>() = x != nullptr && !x->none;
    return Status::ok_status();
  }
};

class GetElementKernel final : public Kernel {
 public:
  bool takes_non_tensors() const override { return true; }
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x || x->none) return invalid_argument("OptionalGetElement: the optional holds no value");
    return forward_value(ctx, 0, *x);
  }
};

}  // namespace

void register_optional_kernels(KernelRegistry& r) {
  r.add("", "Optional", 15, make_attributeless<OptionalKernel>);
  r.add("", "OptionalHasElement", 15, make_attributeless<HasElementKernel>);
  r.add("", "OptionalGetElement", 15, make_attributeless<GetElementKernel>);
  // Opset 18 also takes plain tensors and sequences (and HasElement an omitted input).
  r.add("", "OptionalHasElement", 18, make_attributeless<HasElementKernel>);
  r.add("", "OptionalGetElement", 18, make_attributeless<GetElementKernel>);
}

}  // namespace sod2::rt
