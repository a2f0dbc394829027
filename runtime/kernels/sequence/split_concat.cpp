// SplitToSequence (a tensor cut along an axis into a sequence) and ConcatFromSequence (a
// sequence joined or stacked into one tensor).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/sequence/sequence_kernels.h"
#include "runtime/kernels/sequence/sequence_value.h"

namespace sod2::rt {
namespace {

// Copies rows [begin, begin + count) of `axis` of `x` into `out` (shaped like x but `count` long
// on that axis, or without the axis when it was squeezed).
void copy_slab(const Tensor& x, int axis, int64_t begin, int64_t count, HostTensor* out) {
  int64_t outer = 1, inner = dtype_size(x.dtype);
  for (int i = 0; i < axis; ++i) outer *= x.shape[i];
  for (int i = axis + 1; i < x.shape.rank(); ++i) inner *= x.shape[i];
  const int64_t src_row = x.shape[axis] * inner, dst_row = count * inner;
  if (dst_row == 0) return;
  const auto* src = static_cast<const uint8_t*>(x.data) + begin * inner;
  uint8_t* dst = out->bytes().data();
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + o * dst_row, src + o * src_row, static_cast<size_t>(dst_row));
}

class SplitToSequenceKernel final : public Kernel {
 public:
  SplitToSequenceKernel(int64_t axis, bool keepdims) : axis_(axis), keepdims_(keepdims) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("SplitToSequence: input is missing");
    const int rank = x->shape.rank();
    if (dtype_size(x->dtype) == 0)
      return unsupported(std::string("SplitToSequence: type ") + dtype_name(x->dtype));
    if (axis_ < -rank || axis_ >= rank || rank == 0)
      return invalid_argument("SplitToSequence: axis " + std::to_string(axis_) +
                              " is out of range for shape " + x->shape.to_string());
    const int axis = static_cast<int>(axis_ < 0 ? axis_ + rank : axis_);
    const int64_t dim = x->shape[axis];
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (const Tensor* split = ctx.input(1)) {
      if (!split->is_tensor() || (split->dtype != DType::kInt32 && split->dtype != DType::kInt64) ||
          split->shape.rank() > 1)
        return invalid_argument("SplitToSequence: split must be an int32/int64 scalar or 1-D");
      auto at = [&](int64_t i) {
        return split->dtype == DType::kInt32 ? split->as<int32_t>()[i] : split->as<int64_t>()[i];
      };
      if (split->shape.rank() == 0) {
        const int64_t s = at(0);
        if (s > 0)
          SOD2_RETURN_IF_ERROR(
              check_sequence_length(static_cast<size_t>((dim + s - 1) / s), "SplitToSequence"));
        if (s <= 0)
          return invalid_argument("SplitToSequence: split " + std::to_string(s) +
                                  " must be positive");
        for (int64_t b = 0; b < dim; b += s) sizes.push_back(std::min(s, dim - b));
      } else {
        SOD2_RETURN_IF_ERROR(
            check_sequence_length(static_cast<size_t>(split->numel()), "SplitToSequence"));
        int64_t total = 0;
        for (int64_t i = 0; i < split->numel(); ++i) {
          const int64_t s = at(i);
          if (s < 0 || s > dim - total)
            return invalid_argument("SplitToSequence: split sizes do not sum to dim " +
                                    std::to_string(dim) + " of axis " + std::to_string(axis));
          sizes.push_back(s);
          total += s;
        }
        if (total != dim)
          return invalid_argument("SplitToSequence: split sizes sum to " + std::to_string(total) +
                                  ", but axis " + std::to_string(axis) + " has " +
                                  std::to_string(dim));
      }
    } else {
      SOD2_RETURN_IF_ERROR(check_sequence_length(static_cast<size_t>(dim), "SplitToSequence"));
      sizes.assign(static_cast<size_t>(dim), 1);
      squeeze = !keepdims_;
    }
    auto seq = std::make_shared<Sequence>(x->dtype);
    int64_t begin = 0;
    for (const int64_t s : sizes) {
      Shape shape;
      for (int i = 0; i < rank; ++i) {
        if (i == axis && squeeze) continue;
        shape.push_back(i == axis ? s : x->shape[i]);
      }
      auto part = std::make_shared<HostTensor>(x->dtype, shape);
      copy_slab(*x, axis, begin, s, part.get());
      seq->push_back(std::move(part));
      begin += s;
    }
    return sequence_output(ctx, 0, std::move(seq));
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

class ConcatFromSequenceKernel final : public Kernel {
 public:
  ConcatFromSequenceKernel(int64_t axis, bool new_axis) : axis_(axis), new_axis_(new_axis) {}
  bool takes_non_tensors() const override { return true; }

  Status run(KernelContext& ctx) override {
    SOD2_ASSIGN_OR_RETURN(const Sequence* seq, sequence_input(ctx, 0, "ConcatFromSequence"));
    if (seq->size() == 0) return invalid_argument("ConcatFromSequence: the sequence is empty");
    const Shape& first = seq->at(0).shape();
    const int rank = first.rank() + (new_axis_ ? 1 : 0);
    if (axis_ < -rank || axis_ >= rank || (rank == 0))
      return invalid_argument("ConcatFromSequence: axis " + std::to_string(axis_) +
                              " is out of range for elements of shape " + first.to_string());
    if (new_axis_ && rank > kMaxRank)
      return unsupported("ConcatFromSequence: rank too high to stack");
    const int axis = static_cast<int>(axis_ < 0 ? axis_ + rank : axis_);
    // Stacking is joining elements seen with a 1 inserted at `axis`.
    auto viewed = [&](const HostTensor& h) {
      if (!new_axis_) return h.shape();
      Shape s;
      for (int i = 0, j = 0; i < rank; ++i) s.push_back(i == axis ? 1 : h.shape()[j++]);
      return s;
    };
    const Shape base = viewed(seq->at(0));
    int64_t joined = 0;
    for (size_t k = 0; k < seq->size(); ++k) {
      const Shape s = viewed(seq->at(k));
      bool same =
          seq->at(k).shape().rank() == first.rank() && seq->at(k).dtype() == seq->at(0).dtype();
      for (int i = 0; same && i < rank; ++i) same = i == axis || s[i] == base[i];
      if (!same)
        return invalid_argument("ConcatFromSequence: element " + std::to_string(k) + " (" +
                                seq->at(k).shape().to_string() + ") does not match element 0 (" +
                                first.to_string() + ") off axis " + std::to_string(axis));
      joined += s[axis];
    }
    Shape out_shape = base;
    out_shape[axis] = joined;
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, seq->at(0).dtype(), out_shape));
    int64_t outer = 1, inner = dtype_size(y->dtype);
    for (int i = 0; i < axis; ++i) outer *= base[i];
    for (int i = axis + 1; i < rank; ++i) inner *= base[i];
    const int64_t out_row = joined * inner;
    int64_t at = 0;
    for (size_t k = 0; k < seq->size(); ++k) {
      const HostTensor& e = seq->at(k);
      const int64_t row = viewed(e)[axis] * inner;
      if (row > 0)
        for (int64_t o = 0; o < outer; ++o)
          std::memcpy(static_cast<uint8_t*>(y->data) + o * out_row + at, e.bytes().data() + o * row,
                      static_cast<size_t>(row));
      at += row;
    }
    return Status::ok_status();
  }

 private:
  int64_t axis_;
  bool new_axis_;
};

Expected<std::unique_ptr<Kernel>> make_split(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(const int64_t axis, node.attrs.get_int("axis", 0));
  SOD2_ASSIGN_OR_RETURN(const int64_t keepdims, node.attrs.get_int("keepdims", 1));
  return std::unique_ptr<Kernel>(std::make_unique<SplitToSequenceKernel>(axis, keepdims != 0));
}

Expected<std::unique_ptr<Kernel>> make_concat(const NodeInfo& node) {
  if (!node.attrs.has("axis"))
    return invalid_model("ConcatFromSequence: attribute 'axis' is missing");
  SOD2_ASSIGN_OR_RETURN(const int64_t axis, node.attrs.get_int("axis", 0));
  SOD2_ASSIGN_OR_RETURN(const int64_t new_axis, node.attrs.get_int("new_axis", 0));
  return std::unique_ptr<Kernel>(std::make_unique<ConcatFromSequenceKernel>(axis, new_axis != 0));
}

}  // namespace

void register_sequence_split_concat_kernels(KernelRegistry& r) {
  r.add("", "SplitToSequence", 11, make_split);
  r.add("", "ConcatFromSequence", 11, make_concat);
}

}  // namespace sod2::rt
