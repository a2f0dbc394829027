// SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase, SequenceAt and
// SequenceLength. A new sequence shares the elements it keeps with the one it came from; only a
// tensor entering a sequence is copied (it lives in memory the plan reuses).
#include <memory>
#include <string>

#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/sequence/sequence_kernels.h"
#include "runtime/kernels/sequence/sequence_value.h"

namespace sod2::rt {
namespace {

// A tensor may join a sequence of `dtype` (kUndefined: of any type) when it has that type and
// fixed-size elements.
Status check_element(const Tensor& t, DType dtype, const char* op) {
  if (!t.is_tensor()) return invalid_argument(std::string(op) + ": elements must be tensors");
  if (dtype_size(t.dtype) == 0)
    return unsupported(std::string(op) + ": elements of type " + dtype_name(t.dtype) +
                       " are not supported");
  if (dtype != DType::kUndefined && t.dtype != dtype)
    return invalid_argument(std::string(op) + ": a " + dtype_name(t.dtype) +
                            " tensor cannot join a sequence of " + dtype_name(dtype));
  return Status::ok_status();
}

class EmptyKernel final : public Kernel {
 public:
  explicit EmptyKernel(DType dtype) : dtype_(dtype) {}
  Status run(KernelContext& ctx) override {
    return sequence_output(ctx, 0, std::make_shared<Sequence>(dtype_));
  }

 private:
  DType dtype_;
};

class ConstructKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    if (ctx.num_inputs() == 0 || !ctx.input(0))
      return invalid_argument("SequenceConstruct: needs at least one tensor");
    SOD2_RETURN_IF_ERROR(check_sequence_length(ctx.num_inputs(), "SequenceConstruct"));
    auto seq = std::make_shared<Sequence>(ctx.input(0)->dtype);
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (!t)
        return invalid_argument("SequenceConstruct: input " + std::to_string(i) + " is missing");
      SOD2_RETURN_IF_ERROR(check_element(*t, seq->dtype(), "SequenceConstruct"));
      seq->push_back(copy_tensor(*t));
    }
    return sequence_output(ctx, 0, std::move(seq));
  }
};

class InsertKernel final : public Kernel {
 public:
  bool takes_non_tensors() const override { return true; }
  Status run(KernelContext& ctx) override {
    SOD2_ASSIGN_OR_RETURN(const Sequence* in, sequence_input(ctx, 0, "SequenceInsert"));
    const Tensor* t = ctx.input(1);
    if (!t) return invalid_argument("SequenceInsert: the tensor to insert is missing");
    SOD2_RETURN_IF_ERROR(check_element(*t, in->dtype(), "SequenceInsert"));
    SOD2_RETURN_IF_ERROR(check_sequence_length(in->size() + 1, "SequenceInsert"));
    size_t at = in->size();
    if (const Tensor* p = ctx.input(2)) {
      SOD2_ASSIGN_OR_RETURN(at, sequence_position(*p, in->size(), true, "SequenceInsert"));
    }
    auto out = std::make_shared<Sequence>(*in);
    out->set_dtype(t->dtype);
    out->insert(at, copy_tensor(*t));
    return sequence_output(ctx, 0, std::move(out));
  }
};

class EraseKernel final : public Kernel {
 public:
  bool takes_non_tensors() const override { return true; }
  Status run(KernelContext& ctx) override {
    SOD2_ASSIGN_OR_RETURN(const Sequence* in, sequence_input(ctx, 0, "SequenceErase"));
    if (in->size() == 0) return invalid_argument("SequenceErase: the sequence is empty");
    size_t at = in->size() - 1;
    if (const Tensor* p = ctx.input(1)) {
      SOD2_ASSIGN_OR_RETURN(at, sequence_position(*p, in->size(), false, "SequenceErase"));
    }
    auto out = std::make_shared<Sequence>(*in);
    out->erase(at);
    return sequence_output(ctx, 0, std::move(out));
  }
};

class AtKernel final : public Kernel {
 public:
  bool takes_non_tensors() const override { return true; }
  Status run(KernelContext& ctx) override {
    SOD2_ASSIGN_OR_RETURN(const Sequence* in, sequence_input(ctx, 0, "SequenceAt"));
    const Tensor* p = ctx.input(1);
    if (!p) return invalid_argument("SequenceAt: position is missing");
    SOD2_ASSIGN_OR_RETURN(const size_t at, sequence_position(*p, in->size(), false, "SequenceAt"));
    return forward_value(ctx, 0, in->at(at).view());
  }
};

class LengthKernel final : public Kernel {
 public:
  bool takes_non_tensors() const override { return true; }
  Status run(KernelContext& ctx) override {
    SOD2_ASSIGN_OR_RETURN(const Sequence* in, sequence_input(ctx, 0, "SequenceLength"));
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kInt64, Shape{}));
    *y->as<int64_t>() = static_cast<int64_t>(in->size());
    return Status::ok_status();
  }
};

Expected<std::unique_ptr<Kernel>> make_empty(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(const int64_t dt,
                        node.attrs.get_int("dtype", static_cast<int64_t>(DType::kFloat)));
  if (dt < 0 || dt > 255 || !is_known_dtype(static_cast<uint8_t>(dt)) ||
      dtype_size(static_cast<DType>(dt)) == 0) {
    return unsupported("SequenceEmpty: element type " + std::to_string(dt) + " is not supported");
  }
  return std::unique_ptr<Kernel>(std::make_unique<EmptyKernel>(static_cast<DType>(dt)));
}

}  // namespace

void register_sequence_element_kernels(KernelRegistry& r) {
  r.add("", "SequenceEmpty", 11, make_empty);
  r.add("", "SequenceConstruct", 11, make_attributeless<ConstructKernel>);
  r.add("", "SequenceInsert", 11, make_attributeless<InsertKernel>);
  r.add("", "SequenceErase", 11, make_attributeless<EraseKernel>);
  r.add("", "SequenceAt", 11, make_attributeless<AtKernel>);
  r.add("", "SequenceLength", 11, make_attributeless<LengthKernel>);
}

}  // namespace sod2::rt
