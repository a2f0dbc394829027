// ReverseSequence (opset 10): for each batch entry b, the first sequence_lens[b] steps along the
// time axis are reversed and the rest copied as they are. The time and batch axes are 0 and 1 (in
// either order), so each (time, batch) pair addresses one contiguous block of the trailing dims.
#include <cstring>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

class ReverseSequenceKernel final : public Kernel {
 public:
  ReverseSequenceKernel(int64_t batch_axis, int64_t time_axis)
      : batch_axis_(batch_axis), time_axis_(time_axis) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* lens = ctx.input(1);
    if (!x || !lens) return invalid_argument("ReverseSequence: needs input and sequence_lens");
    SOD2_RETURN_IF_ERROR(require_fixed_size(x->dtype, "ReverseSequence"));
    SOD2_RETURN_IF_ERROR(require_index_type(lens->dtype, "ReverseSequence", "sequence_lens"));
    const Shape& s = x->shape;
    if (s.rank() < 2)
      return invalid_argument("ReverseSequence: input " + s.to_string() + " must have rank >= 2");
    SOD2_ASSIGN_OR_RETURN(int batch_axis, normalize_axis(batch_axis_, s.rank(), "ReverseSequence"));
    SOD2_ASSIGN_OR_RETURN(int time_axis, normalize_axis(time_axis_, s.rank(), "ReverseSequence"));
    if (batch_axis > 1 || time_axis > 1 || batch_axis == time_axis)
      return invalid_argument("ReverseSequence: batch_axis and time_axis must be 0 and 1, got " +
                              std::to_string(batch_axis_) + " and " + std::to_string(time_axis_));
    const int64_t batch = s[batch_axis], steps = s[time_axis];
    if (lens->shape.rank() != 1 || lens->shape[0] != batch)
      return invalid_argument("ReverseSequence: sequence_lens " + lens->shape.to_string() +
                              " must be [" + std::to_string(batch) + "] (the batch size)");
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = load_index(*lens, b);
      if (len < 0 || len > steps)
        return invalid_argument("ReverseSequence: sequence_lens[" + std::to_string(b) +
                                "] = " + std::to_string(len) + " is outside [0, " +
                                std::to_string(steps) + "]");
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, x->dtype, s));
    if (x->numel() == 0) return Status::ok_status();
    int64_t inner = 1;
    for (int d = 2; d < s.rank(); ++d) inner *= s[d];
    const size_t block = static_cast<size_t>(inner) * dtype_size(x->dtype);
    const auto* src = static_cast<const uint8_t*>(x->data);
    auto* dst = static_cast<uint8_t*>(out->data);
    auto offset = [&](int64_t t, int64_t b) {
      return static_cast<size_t>(time_axis == 0 ? t * batch + b : b * steps + t) * block;
    };
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = load_index(*lens, b);
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t from = t < len ? len - 1 - t : t;
        std::memcpy(dst + offset(t, b), src + offset(from, b), block);
      }
    }
    return Status::ok_status();
  }

 private:
  int64_t batch_axis_, time_axis_;
};

}  // namespace

KernelOr make_reverse_sequence(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t batch_axis, node.attrs.get_int("batch_axis", 1));
  SOD2_ASSIGN_OR_RETURN(int64_t time_axis, node.attrs.get_int("time_axis", 0));
  return make_kernel<ReverseSequenceKernel>(batch_axis, time_axis);
}

}  // namespace sod2::rt
