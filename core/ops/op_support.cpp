#include "core/ops/op_support.h"

#include <algorithm>
#include <array>

namespace sod2 {
namespace {

constexpr FusionRole kEw = FusionRole::kElementwise;
constexpr FusionRole kCon = FusionRole::kContraction;
constexpr FusionRole kNorm = FusionRole::kNormalization;
constexpr FusionRole kRed = FusionRole::kReduction;
constexpr FusionRole kOpq = FusionRole::kOpaque;
constexpr FusionRole kQnt = FusionRole::kQuantization;
constexpr bool y = true, n = false;

// op, role, epilogue activation, fused elementwise, Vulkan shader. Sorted by op type (a test
// checks), so lookups are binary searches.
constexpr std::array kTable = {
    OpSupport{"Abs", kEw, n, y, n},
    OpSupport{"Acos", kEw, n, n, n},
    OpSupport{"Acosh", kEw, n, n, n},
    OpSupport{"Add", kEw, n, y, n},
    OpSupport{"And", kEw, n, n, n},
    OpSupport{"Asin", kEw, n, n, n},
    OpSupport{"Asinh", kEw, n, n, n},
    OpSupport{"Atan", kEw, n, n, n},
    OpSupport{"Atanh", kEw, n, n, n},
    OpSupport{"AveragePool", kOpq, n, n, y},
    OpSupport{"BatchNormalization", kNorm, n, n, n},
    OpSupport{"BitShift", kEw, n, n, n},
    OpSupport{"Cast", kEw, n, n, n},
    OpSupport{"CastLike", kEw, n, n, n},
    OpSupport{"Ceil", kEw, n, y, n},
    OpSupport{"Celu", kEw, n, n, n},
    OpSupport{"Clip", kEw, y, y, n},
    OpSupport{"Concat", kOpq, n, n, y},
    OpSupport{"Conv", kCon, n, n, y},
    OpSupport{"ConvTranspose", kCon, n, n, n},
    OpSupport{"Cos", kEw, n, y, n},
    OpSupport{"Cosh", kEw, n, n, n},
    OpSupport{"DequantizeLinear", kQnt, n, n, n},
    OpSupport{"Div", kEw, n, y, n},
    OpSupport{"Elu", kEw, n, y, n},
    OpSupport{"Equal", kEw, n, n, n},
    OpSupport{"Erf", kEw, n, y, n},
    OpSupport{"Exp", kEw, n, y, n},
    OpSupport{"Flatten", kOpq, n, n, y},
    OpSupport{"Floor", kEw, n, y, n},
    OpSupport{"Gather", kOpq, n, n, y},
    OpSupport{"Gelu", kEw, n, n, n},
    OpSupport{"Gemm", kCon, n, n, y},
    OpSupport{"GlobalAveragePool", kRed, n, n, y},
    OpSupport{"GlobalMaxPool", kRed, n, n, y},
    OpSupport{"Greater", kEw, n, n, n},
    OpSupport{"GreaterOrEqual", kEw, n, n, n},
    OpSupport{"HardSigmoid", kEw, y, y, n},
    OpSupport{"HardSwish", kEw, y, y, n},
    OpSupport{"Identity", kEw, n, y, n},
    OpSupport{"InstanceNormalization", kNorm, n, n, n},
    OpSupport{"IsInf", kEw, n, n, n},
    OpSupport{"IsNaN", kEw, n, n, n},
    OpSupport{"LayerNormalization", kNorm, n, n, y},
    OpSupport{"LeakyRelu", kEw, y, y, n},
    OpSupport{"Less", kEw, n, n, n},
    OpSupport{"LessOrEqual", kEw, n, n, n},
    OpSupport{"Log", kEw, n, y, n},
    OpSupport{"LogSoftmax", kNorm, n, n, y},
    OpSupport{"LpNormalization", kNorm, n, n, n},
    OpSupport{"MatMul", kCon, n, n, y},
    OpSupport{"Max", kEw, n, y, n},
    OpSupport{"MaxPool", kOpq, n, n, y},
    OpSupport{"MeanVarianceNormalization", kNorm, n, n, n},
    OpSupport{"Min", kEw, n, y, n},
    OpSupport{"Mish", kEw, n, n, n},
    OpSupport{"Mod", kEw, n, n, n},
    OpSupport{"Mul", kEw, n, y, n},
    OpSupport{"Neg", kEw, n, y, n},
    OpSupport{"Not", kEw, n, n, n},
    OpSupport{"Or", kEw, n, n, n},
    OpSupport{"PRelu", kEw, n, y, n},
    OpSupport{"Pow", kEw, n, y, n},
    OpSupport{"QuantizeLinear", kQnt, n, n, n},
    OpSupport{"Reciprocal", kEw, n, y, n},
    OpSupport{"ReduceL1", kRed, n, n, y},
    OpSupport{"ReduceL2", kRed, n, n, y},
    OpSupport{"ReduceLogSum", kRed, n, n, n},
    OpSupport{"ReduceLogSumExp", kRed, n, n, y},
    OpSupport{"ReduceMax", kRed, n, n, y},
    OpSupport{"ReduceMean", kRed, n, n, y},
    OpSupport{"ReduceMin", kRed, n, n, y},
    OpSupport{"ReduceProd", kRed, n, n, y},
    OpSupport{"ReduceSum", kRed, n, n, y},
    OpSupport{"ReduceSumSquare", kRed, n, n, y},
    OpSupport{"Relu", kEw, y, y, n},
    OpSupport{"Reshape", kOpq, n, n, y},
    OpSupport{"Round", kEw, n, y, n},
    OpSupport{"Selu", kEw, n, y, n},
    OpSupport{"Shrink", kEw, n, n, n},
    OpSupport{"Sigmoid", kEw, y, y, n},
    OpSupport{"Sign", kEw, n, n, n},
    OpSupport{"Sin", kEw, n, y, n},
    OpSupport{"Sinh", kEw, n, n, n},
    OpSupport{"Slice", kOpq, n, n, y},
    OpSupport{"Softmax", kNorm, n, n, y},
    OpSupport{"Softplus", kEw, n, y, n},
    OpSupport{"Softsign", kEw, n, y, n},
    OpSupport{"Sqrt", kEw, n, y, n},
    OpSupport{"Squeeze", kOpq, n, n, y},
    OpSupport{"Sub", kEw, n, y, n},
    OpSupport{"Sum", kEw, n, y, n},
    OpSupport{"Tan", kEw, n, n, n},
    OpSupport{"Tanh", kEw, y, y, n},
    OpSupport{"ThresholdedRelu", kEw, n, n, n},
    OpSupport{"Transpose", kOpq, n, n, y},
    OpSupport{"Unsqueeze", kOpq, n, n, y},
    OpSupport{"Where", kEw, n, n, n},
    OpSupport{"Xor", kEw, n, n, n},
};

}  // namespace

const char* fusion_role_name(FusionRole role) {
  switch (role) {
    case FusionRole::kElementwise: return "elementwise";
    case FusionRole::kContraction: return "contraction";
    case FusionRole::kNormalization: return "normalization";
    case FusionRole::kReduction: return "reduction";
    case FusionRole::kQuantization: return "quantization";
    case FusionRole::kOpaque: return "opaque";
  }
  return "opaque";
}

std::span<const OpSupport> op_support_table() { return kTable; }

const OpSupport* find_op_support(std::string_view op_type) {
  const auto it =
      std::lower_bound(kTable.begin(), kTable.end(), op_type,
                       [](const OpSupport& row, std::string_view op) { return row.op_type < op; });
  return it != kTable.end() && it->op_type == op_type ? &*it : nullptr;
}

}  // namespace sod2
