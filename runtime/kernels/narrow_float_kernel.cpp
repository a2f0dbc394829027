#include "runtime/kernels/narrow_float_kernel.h"

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/tensor/narrow_float.h"

namespace sod2::rt {
namespace {

bool is_narrow(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// Ops whose float32 kernel computes the spec's result for half-precision inputs, rounded once:
// contractions, pools, normalisations, reductions, resampling and the recurrent layers. Ops
// outside the list (elementwise math, casts) keep their own half-precision paths.
bool op_computes_through_float32(const NodeInfo& node) {
  static const std::set<std::pair<std::string, std::string>> ops = {
      {"", "Conv"},
      {"", "ConvTranspose"},
      {"", "DeformConv"},
      {"", "MatMul"},
      {"", "Gemm"},
      {"", "Einsum"},
      {"", "Attention"},
      {"", "AveragePool"},
      {"", "MaxPool"},
      {"", "GlobalAveragePool"},
      {"", "GlobalMaxPool"},
      {"", "LpPool"},
      {"", "GlobalLpPool"},
      {"", "Resize"},
      {"", "Upsample"},
      {"", "BatchNormalization"},
      {"", "InstanceNormalization"},
      {"", "LayerNormalization"},
      {"", "GroupNormalization"},
      {"", "RMSNormalization"},
      {"", "LpNormalization"},
      {"", "Softmax"},
      {"", "LogSoftmax"},
      {"", "Hardmax"},
      {"", "Gelu"},
      {"", "ReduceMean"},
      {"", "ReduceSum"},
      {"", "ReduceProd"},
      {"", "ReduceMax"},
      {"", "ReduceMin"},
      {"", "ReduceL1"},
      {"", "ReduceL2"},
      {"", "ReduceLogSum"},
      {"", "ReduceLogSumExp"},
      {"", "ReduceSumSquare"},
      {"", "RNN"},
      {"", "GRU"},
      {"", "LSTM"},
      {"sod2", "FusedConv"},
      {"sod2", "FusedMatMul"},
      {"sod2", "FusedGemm"},
  };
  return ops.count({node.domain, node.op_type}) != 0;
}

// Scratch floats for one tensor; a zero-sized tensor still gets a valid pointer.
Expected<float*> scratch_for(KernelContext& ctx, int64_t numel) {
  auto p = ctx.scratch(static_cast<size_t>(std::max<int64_t>(numel, 1)) * sizeof(float));
  if (!p.ok()) return p.status();
  return static_cast<float*>(*p);
}

// Hands the float32 kernel float32 scratch for the outputs the node holds in half precision,
// and the node's own memory for the others.
class WideningAllocator : public OutputAllocator {
 public:
  WideningAllocator(KernelContext& outer, const std::vector<DType>& narrow_outputs)
      : outer_(outer), narrow_outputs_(narrow_outputs) {}

  Expected<Tensor*> output(size_t index, DType dtype, const Shape& shape) override {
    const DType narrow =
        index < narrow_outputs_.size() ? narrow_outputs_[index] : DType::kUndefined;
    if (dtype != DType::kFloat || !is_narrow(narrow)) return outer_.output(index, dtype, shape);
    if (num_wide_ == wide_.size()) return invalid_argument("too many outputs to narrow");
    auto data = scratch_for(outer_, shape.numel());
    if (!data.ok()) return data.status();
    wide_[num_wide_] = {index, Tensor{DType::kFloat, shape, *data}};
    return &wide_[num_wide_++].second;
  }
  Expected<void*> scratch(size_t bytes) override { return outer_.scratch(bytes); }

  // Rounds the float32 outputs into the node's.
  Status narrow_outputs() {
    for (size_t w = 0; w < num_wide_; ++w) {
      const auto& [index, wide] = wide_[w];
      const DType narrow = narrow_outputs_[index];
      auto out = outer_.output(index, narrow, wide.shape);
      if (!out.ok()) return out.status();
      narrow_from_float(narrow, static_cast<const float*>(wide.data),
                        static_cast<uint16_t*>((*out)->data), wide.shape.numel());
    }
    return Status::ok_status();
  }

 private:
  KernelContext& outer_;
  const std::vector<DType>& narrow_outputs_;
  // Fixed, so that views handed out stay put and a run allocates nothing: these ops have at
  // most three outputs.
  std::array<std::pair<size_t, Tensor>, 8> wide_{};
  size_t num_wide_ = 0;
};

class NarrowFloatKernel : public Kernel {
 public:
  NarrowFloatKernel(DType narrow, std::vector<DType> narrow_outputs, std::unique_ptr<Kernel> inner,
                    std::vector<bool> constant)
      : narrow_(narrow),
        narrow_outputs_(std::move(narrow_outputs)),
        inner_(std::move(inner)),
        constant_(std::move(constant)),
        cached_(constant_.size()) {}

  Status run(KernelContext& ctx) override {
    constexpr size_t kInline = 16;
    if (ctx.num_inputs() > kInline) return invalid_argument("too many inputs to widen");
    std::array<Tensor, kInline> wide;
    std::array<const Tensor*, kInline> inputs{};
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* in = ctx.input(i);
      inputs[i] = in;
      // Each half-precision input by its own type: a parameter slot may differ from the data's.
      if (!in || !is_narrow(in->dtype)) continue;
      const int64_t n = in->shape.numel();
      if (i < constant_.size() && constant_[i]) {
        // A constant (weights): widened on the first run, kept for the session's lifetime (the
        // same data at the same address every run; checked, in case).
        Widened& c = cached_[i];
        if (c.source != in->data || static_cast<int64_t>(c.data.size()) != n) {
          c.data.resize(static_cast<size_t>(n));
          widen_to_float(in->dtype, static_cast<const uint16_t*>(in->data), c.data.data(), n);
          c.source = in->data;
        }
        wide[i] = Tensor{DType::kFloat, in->shape, c.data.data()};
        inputs[i] = &wide[i];
        continue;
      }
      auto data = scratch_for(ctx, n);
      if (!data.ok()) return data.status();
      float* dst = *data;
      widen_to_float(in->dtype, static_cast<const uint16_t*>(in->data), dst, n);
      wide[i] = Tensor{DType::kFloat, in->shape, dst};
      inputs[i] = &wide[i];
    }
    WideningAllocator alloc(ctx, narrow_outputs_);
    KernelContext inner_ctx(std::span<const Tensor* const>(inputs.data(), ctx.num_inputs()), &alloc,
                            &ctx.pool());
    SOD2_RETURN_IF_ERROR(inner_->run(inner_ctx));
    return alloc.narrow_outputs();
  }

 private:
  struct Widened {
    const void* source = nullptr;
    std::vector<float> data;
  };
  DType narrow_;
  std::vector<DType> narrow_outputs_;  // per output: its half-precision type, else kUndefined
  std::unique_ptr<Kernel> inner_;
  std::vector<bool> constant_;   // per input slot (NodeInfo::input_constant)
  std::vector<Widened> cached_;  // per input slot: a constant's widened copy
};

DType narrow_type_of(const NodeInfo& node) {
  for (size_t i = 0; i < node.input_dtypes.size(); ++i)
    if ((i >= node.input_present.size() || node.input_present[i]) &&
        is_narrow(node.input_dtypes[i]))
      return node.input_dtypes[i];
  return DType::kUndefined;
}

}  // namespace

// Inputs the spec types apart from the data input, so a half-precision node may carry them in
// float32: BatchNormalization's scale, bias, mean and variance (T1, T2 since opset 15), Resize's
// roi and scales (scales are always float), Upsample's scales.
bool own_precision_slot(const NodeInfo& node, size_t i) {
  if (!node.domain.empty()) return false;
  if (node.op_type == "BatchNormalization") return i >= 1 && i <= 4;
  if (node.op_type == "Resize") return i == 1 || i == 2;
  if (node.op_type == "Upsample") return i == 1;
  return false;
}

bool computes_through_float32(const NodeInfo& node) {
  if (!op_computes_through_float32(node)) return false;
  const DType narrow = narrow_type_of(node);
  if (narrow == DType::kUndefined) return false;
  for (size_t i = 0; i < node.input_dtypes.size(); ++i) {
    const bool present = i >= node.input_present.size() || node.input_present[i];
    const DType t = node.input_dtypes[i];
    if (!present || own_precision_slot(node, i)) continue;
    if (t == DType::kFloat || t == DType::kDouble || (is_narrow(t) && t != narrow)) return false;
  }
  return true;
}

NodeInfo widened_to_float32(const NodeInfo& node) {
  NodeInfo wide = node;
  for (DType& t : wide.input_dtypes)
    if (is_narrow(t)) t = DType::kFloat;
  for (DType& t : wide.output_dtypes)
    if (is_narrow(t)) t = DType::kFloat;
  return wide;
}

std::unique_ptr<Kernel> make_narrow_float_kernel(const NodeInfo& node,
                                                 std::unique_ptr<Kernel> float32_kernel) {
  const DType narrow = narrow_type_of(node);
  std::vector<DType> outputs(node.num_outputs, DType::kUndefined);
  for (size_t o = 0; o < outputs.size(); ++o) {
    // An output of unknown type follows the inputs: the float outputs of these ops have the
    // input's type (MaxPool's int64 indices are asked for as int64, never float).
    const DType declared =
        o < node.output_dtypes.size() ? node.output_dtypes[o] : DType::kUndefined;
    outputs[o] = declared == DType::kUndefined || is_narrow(declared) ? narrow : DType::kUndefined;
  }
  return std::make_unique<NarrowFloatKernel>(narrow, std::move(outputs), std::move(float32_kernel),
                                             node.input_constant);
}

}  // namespace sod2::rt
