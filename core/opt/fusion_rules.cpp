#include "core/opt/fusion_rules.h"

#include <string_view>
#include <unordered_map>

namespace sod2::opt {

const char* fusion_role_name(FusionRole role) {
  switch (role) {
    case FusionRole::kElementwise: return "elementwise";
    case FusionRole::kContraction: return "contraction";
    case FusionRole::kNormalization: return "normalization";
    case FusionRole::kReduction: return "reduction";
    case FusionRole::kOpaque: return "opaque";
  }
  return "opaque";
}

FusionRole fusion_role(const Node& node) {
  static const std::unordered_map<std::string_view, FusionRole> kRoles = [] {
    std::unordered_map<std::string_view, FusionRole> m;
    for (const char* op : {"Abs",         "Acos",
                           "Acosh",       "Add",
                           "And",         "Asin",
                           "Asinh",       "Atan",
                           "Atanh",       "BitShift",
                           "Cast",        "CastLike",
                           "Ceil",        "Celu",
                           "Clip",        "Cos",
                           "Cosh",        "Div",
                           "Elu",         "Equal",
                           "Erf",         "Exp",
                           "Floor",       "Gelu",
                           "Greater",     "GreaterOrEqual",
                           "HardSigmoid", "HardSwish",
                           "Identity",    "IsInf",
                           "IsNaN",       "LeakyRelu",
                           "Less",        "LessOrEqual",
                           "Log",         "Max",
                           "Min",         "Mish",
                           "Mod",         "Mul",
                           "Neg",         "Not",
                           "Or",          "Pow",
                           "PRelu",       "Reciprocal",
                           "Relu",        "Round",
                           "Selu",        "Shrink",
                           "Sigmoid",     "Sign",
                           "Sin",         "Sinh",
                           "Softplus",    "Softsign",
                           "Sqrt",        "Sub",
                           "Sum",         "Tan",
                           "Tanh",        "ThresholdedRelu",
                           "Where",       "Xor"})
      m[op] = FusionRole::kElementwise;
    for (const char* op : {"Conv", "ConvTranspose", "MatMul", "Gemm"})
      m[op] = FusionRole::kContraction;
    for (const char* op : {"Softmax", "LogSoftmax", "LayerNormalization", "InstanceNormalization",
                           "BatchNormalization", "MeanVarianceNormalization", "LpNormalization"})
      m[op] = FusionRole::kNormalization;
    for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
                           "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                           "ReduceSumSquare", "GlobalAveragePool", "GlobalMaxPool"})
      m[op] = FusionRole::kReduction;
    return m;
  }();
  if (!node.domain.empty()) return FusionRole::kOpaque;
  auto it = kRoles.find(node.op_type);
  return it == kRoles.end() ? FusionRole::kOpaque : it->second;
}

}  // namespace sod2::opt
