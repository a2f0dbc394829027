// Concat and Split: both move whole blocks of `dim(axis) * inner` elements per outer index, so
// every copy is a memcpy of the largest contiguous run.
#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/data_geometry.h"
#include "runtime/kernels/data/factories.h"
#include "runtime/kernels/data/strided_copy.h"

namespace sod2::rt {
namespace {

class ConcatKernel final : public Kernel {
 public:
  ConcatKernel(int64_t axis, size_t inputs) : axis_(axis), inputs_(inputs) {}

  // Along the channels of [N, C, H, W] tensors whose channels fill whole blocks, each image's
  // blocks follow one another just as its planes do: the same copies serve both layouts, as long
  // as every input and the output are held alike.
  BlockedIo blocked_io(int block) const override {
    BlockedIo io;
    if ((axis_ != 1 && axis_ != -3) || inputs_ == 0 || inputs_ > 63 || block <= 0) return io;
    io.inputs = io.tied = (uint64_t{1} << inputs_) - 1;
    io.output = true;
    return io;
  }
  void use_blocked(int block, uint64_t inputs, bool output) override {
    blocked_ = inputs != 0 && output ? block : 0;
  }

  Status run(KernelContext& ctx) override {
    int axis = 0;
    SOD2_ASSIGN_OR_RETURN(Shape out_shape, concat_output_shape(ctx, axis_, &axis));
    const size_t n = ctx.num_inputs();
    const Tensor& first = *ctx.input(0);
    const int rank = first.shape.rank();
    if (blocked_ > 0 && (rank != 4 || axis != 1))
      return internal_error("Concat: inputs " + first.shape.to_string() + " along axis " +
                            std::to_string(axis) + " cannot be held in channel blocks");
    // A narrow last block (kernel.h) would end up inside the output: only whole blocks join.
    for (size_t k = 0; blocked_ > 0 && k < ctx.num_inputs(); ++k)
      if (ctx.input(k)->shape[1] % blocked_ != 0)
        return internal_error("Concat: input " + std::to_string(k) + " " +
                              ctx.input(k)->shape.to_string() +
                              " cannot be held in channel blocks of " + std::to_string(blocked_));
    const int64_t axis_total = out_shape[axis];
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, first.dtype, out_shape));
    if (out_shape.numel() == 0) return Status::ok_status();

    const size_t elem = dtype_size(first.dtype);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= first.shape[i];
    for (int i = axis + 1; i < rank; ++i) inner *= first.shape[i];
    const size_t out_row = static_cast<size_t>(axis_total * inner) * elem;
    auto* dst = static_cast<uint8_t*>(out->data);
    if (outer == 1) {  // one block per input: copy each whole, threaded
      size_t at = 0;
      for (size_t k = 0; k < n; ++k) {
        const Tensor* t = ctx.input(k);
        parallel_memcpy(ctx.pool(), dst + at, t->data, t->bytes());
        at += t->bytes();
      }
      return Status::ok_status();
    }
    const int64_t grain =
        std::max<int64_t>(1, static_cast<int64_t>((64u << 10) / std::max<size_t>(out_row, 1)));
    ctx.pool().parallel_for(outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        uint8_t* row = dst + static_cast<size_t>(o) * out_row;
        for (size_t k = 0; k < n; ++k) {
          const Tensor* t = ctx.input(k);
          const size_t block = static_cast<size_t>(t->shape[axis] * inner) * elem;
          if (block == 0) continue;  // an empty input may have no memory at all
          std::memcpy(row, static_cast<const uint8_t*>(t->data) + static_cast<size_t>(o) * block,
                      block);
          row += block;
        }
      }
    });
    return Status::ok_status();
  }

 private:
  int64_t axis_;
  size_t inputs_;
  int blocked_ = 0;  // channels per block where the inputs and the output are held blocked
};

// Split's sizes come from the 'split' attribute (before 13), input 1 (since 13, and also
// accepted by Split-1), or neither (equal parts).
class SplitKernel final : public Kernel {
 public:
  SplitKernel(int64_t axis, size_t num_outputs, bool sizes_input, std::vector<int64_t> attr,
              bool ceil_parts = false)
      : axis_(axis),
        num_outputs_(num_outputs),
        sizes_input_(sizes_input),
        ceil_parts_(ceil_parts),
        attr_(std::move(attr)) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("Split: missing input");
    SOD2_RETURN_IF_ERROR(require_fixed_size(data->dtype, "Split"));
    const Shape& in = data->shape;
    SOD2_ASSIGN_OR_RETURN(int axis, normalize_axis(axis_, in.rank(), "Split"));
    const int64_t total = in[axis];
    const auto n = static_cast<int64_t>(num_outputs_);

    // The sizes are read per output below; validate them all first.
    const Tensor* split_input = sizes_input_ ? ctx.input(1) : nullptr;
    if (split_input) SOD2_RETURN_IF_ERROR(require_index_type(split_input->dtype, "Split", "split"));
    const bool explicit_sizes = !attr_.empty() || split_input != nullptr;
    // Split-18 num_outputs: parts of ceil(total / n), the last one smaller.
    const bool uneven = ceil_parts_ && !explicit_sizes;
    // (total + n - 1) / n would overflow for a dim near INT64_MAX (an empty tensor's).
    const int64_t chunk = uneven ? total / n + (total % n != 0) : total / n;
    auto size_of = [&](int64_t k) -> int64_t {
      if (split_input) return load_index(*split_input, k);
      if (!attr_.empty()) return attr_[static_cast<size_t>(k)];
      return uneven && k == n - 1 ? total - chunk * (n - 1) : chunk;
    };
    if (explicit_sizes) {
      const int64_t count = split_input ? split_input->numel() : static_cast<int64_t>(attr_.size());
      if (count != n) {
        return invalid_argument("Split: " + std::to_string(count) + " split sizes for " +
                                std::to_string(n) + " outputs");
      }
      int64_t sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t s = size_of(k);
        if (s < 0 || __builtin_add_overflow(sum, s, &sum)) {
          return invalid_argument("Split: invalid split size " + std::to_string(s));
        }
      }
      if (sum != total) {
        return invalid_argument("Split: split sizes sum to " + std::to_string(sum) + ", but axis " +
                                std::to_string(axis) + " has size " + std::to_string(total));
      }
    } else if (uneven) {
      if (total - chunk * (n - 1) < 0)
        return invalid_argument("Split: axis " + std::to_string(axis) + " of size " +
                                std::to_string(total) + " cannot give " + std::to_string(n) +
                                " parts of " + std::to_string(chunk));
    } else if (total % n != 0) {
      return invalid_argument("Split: axis " + std::to_string(axis) + " of size " +
                              std::to_string(total) + " does not split into " + std::to_string(n) +
                              " equal parts");
    }

    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= in[i];
    for (int i = axis + 1; i < in.rank(); ++i) inner *= in[i];
    const size_t elem = dtype_size(data->dtype);
    int64_t start = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t len = size_of(k);
      Shape out_shape = in;
      out_shape[axis] = len;
      SOD2_ASSIGN_OR_RETURN(Tensor * out,
                            ctx.output(static_cast<size_t>(k), data->dtype, out_shape));
      StridedView view;
      view.push(outer, total * inner);
      view.push(len * inner, 1);
      strided_copy(
          ctx.pool(), out->data,
          static_cast<const uint8_t*>(data->data) + static_cast<size_t>(start * inner) * elem, elem,
          view);
      start += len;
    }
    return Status::ok_status();
  }

 private:
  int64_t axis_;
  size_t num_outputs_;
  bool sizes_input_;
  bool ceil_parts_;
  std::vector<int64_t> attr_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_concat(const NodeInfo& node) {
  // Concat-1 defaulted the axis to 1; from opset 4 it is required.
  if (node.opset >= 4 && !node.attrs.has("axis")) {
    return invalid_model("Concat: attribute 'axis' is missing");
  }
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 1));
  return make_kernel<ConcatKernel>(axis, node.input_dtypes.size());
}

Expected<std::unique_ptr<Kernel>> make_split_v1(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 0));
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> split, node.attrs.get_ints("split"));
  if (node.num_outputs == 0) return invalid_model("Split: no outputs");
  // Only Split-1 also accepted the sizes as a second input.
  return make_kernel<SplitKernel>(axis, node.num_outputs, node.opset < 2, std::move(split));
}

Expected<std::unique_ptr<Kernel>> make_split_v13(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 0));
  if (node.num_outputs == 0) return invalid_model("Split: no outputs");
  return make_kernel<SplitKernel>(axis, node.num_outputs, true, std::vector<int64_t>{});
}

Expected<std::unique_ptr<Kernel>> make_split_v18(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 0));
  if (node.num_outputs == 0) return invalid_model("Split: no outputs");
  const bool has_split = node.input_present.size() > 1 && node.input_present[1];
  if (node.attrs.has("num_outputs")) {
    SOD2_ASSIGN_OR_RETURN(int64_t num, node.attrs.get_int("num_outputs", 0));
    if (has_split) return invalid_model("Split: both the split input and num_outputs are given");
    if (num != static_cast<int64_t>(node.num_outputs))
      return invalid_model("Split: num_outputs is " + std::to_string(num) + " but the node has " +
                           std::to_string(node.num_outputs) + " outputs");
  }
  return make_kernel<SplitKernel>(axis, node.num_outputs, true, std::vector<int64_t>{}, true);
}

}  // namespace sod2::rt
