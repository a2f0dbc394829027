#include "runtime/kernels/sequence/sequence_value.h"

namespace sod2::rt {

Expected<const Sequence*> sequence_input(const KernelContext& ctx, size_t i, const char* op) {
  const Tensor* t = ctx.input(i);
  if (!t) return invalid_argument(std::string(op) + ": input " + std::to_string(i) + " is missing");
  if (!t->sequence) {
    return invalid_argument(std::string(op) + ": input " + std::to_string(i) +
                            " must be a sequence, got " +
                            (t->none ? std::string("an optional holding no value")
                                     : "a tensor of shape " + t->shape.to_string()));
  }
  return t->sequence;
}

Expected<size_t> sequence_position(const Tensor& t, size_t size, bool one_past_end,
                                   const char* op) {
  if (!t.is_tensor() || t.numel() != 1 || (t.dtype != DType::kInt32 && t.dtype != DType::kInt64)) {
    return invalid_argument(std::string(op) + ": position must be one int32 or int64");
  }
  const int64_t p = t.dtype == DType::kInt32 ? *t.as<int32_t>() : *t.as<int64_t>();
  const int64_t n = static_cast<int64_t>(size);
  const int64_t hi = one_past_end ? n : n - 1;
  if (p < -n || p > hi) {
    return invalid_argument(std::string(op) + ": position " + std::to_string(p) + " is outside [" +
                            std::to_string(-n) + ", " + std::to_string(hi) +
                            "] for a sequence of " + std::to_string(n) + " elements");
  }
  return static_cast<size_t>(p < 0 ? p + n : p);
}

Status check_sequence_length(size_t count, const char* op) {
  if (count <= kMaxSequenceElements) return Status::ok_status();
  return resource_exhausted(std::string(op) + ": a sequence of " + std::to_string(count) +
                            " elements, above the " + std::to_string(kMaxSequenceElements) +
                            " one sequence may hold");
}

Status sequence_output(KernelContext& ctx, size_t o, std::shared_ptr<Sequence> seq) {
  const DType dtype = seq->dtype();
  return ctx.output_value(o, HostTensor::of_sequence(std::move(seq), dtype));
}

}  // namespace sod2::rt
