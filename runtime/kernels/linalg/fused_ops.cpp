#include "runtime/kernels/linalg/fused_ops.h"

#include <string>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/linalg_kernels.h"

namespace sod2::rt {

Expected<Epilogue> read_fused_epilogue(const NodeInfo& node, const char* op) {
  Epilogue e;
  std::string act;
  SOD2_ATTR(act, node.attrs.get_string("activation", ""));
  if (!act.empty() && !activation_from_name(act, &e.activation))
    return invalid_argument(std::string(op) + ": unknown activation '" + act + "'");
  // ONNX defaults when the producer left alpha / beta out.
  float def_alpha = 0.f, def_beta = 0.f;
  switch (e.activation) {
    case Activation::kLeakyRelu: def_alpha = 0.01f; break;
    case Activation::kHardSigmoid:
      def_alpha = 0.2f;
      def_beta = 0.5f;
      break;
    case Activation::kClip:
      def_alpha = -3.402823466e38f;
      def_beta = 3.402823466e38f;
      break;
    case Activation::kGeluErf:  // torch's Div(x, sqrt(2))
      def_alpha = 1.41421354f;
      def_beta = 1.f;
      break;
    default: break;
  }
  SOD2_ATTR(e.alpha, node.attrs.get_float("alpha", def_alpha));
  SOD2_ATTR(e.beta, node.attrs.get_float("beta", def_beta));
  int64_t bias = -1, residual = -1, before = 1;
  SOD2_ATTR(bias, node.attrs.get_int("bias_input", -1));
  SOD2_ATTR(residual, node.attrs.get_int("residual_input", -1));
  SOD2_ATTR(before, node.attrs.get_int("residual_before_activation", 1));
  const int64_t inputs = static_cast<int64_t>(node.input_dtypes.size());
  auto check_slot = [&](int64_t slot, const char* name) -> Status {
    if (slot == -1) return Status::ok_status();
    if (slot < 2 || slot >= inputs)
      return invalid_argument(std::string(op) + ": " + name + " " + std::to_string(slot) +
                              " is not an extra input slot (2.." + std::to_string(inputs - 1) +
                              ", or -1)");
    if (static_cast<size_t>(slot) < node.input_present.size() && !node.input_present[slot])
      return invalid_argument(std::string(op) + ": " + name + " " + std::to_string(slot) +
                              " names an omitted input");
    return Status::ok_status();
  };
  SOD2_RETURN_IF_ERROR(check_slot(bias, "bias_input"));
  SOD2_RETURN_IF_ERROR(check_slot(residual, "residual_input"));
  if (bias >= 0 && bias == residual)
    return invalid_argument(std::string(op) + ": bias_input and residual_input are both " +
                            std::to_string(bias));
  if (before != 0 && before != 1)
    return invalid_argument(std::string(op) + ": residual_before_activation must be 0 or 1");
  e.bias_input = static_cast<int>(bias);
  e.residual_input = static_cast<int>(residual);
  e.residual_before_activation = before != 0;
  return e;
}

Expected<std::unique_ptr<Kernel>> make_fused_conv(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(Epilogue e, read_fused_epilogue(node, "FusedConv"));
  return make_conv_kernel(node, e);
}

Expected<std::unique_ptr<Kernel>> make_fused_matmul(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(Epilogue e, read_fused_epilogue(node, "FusedMatMul"));
  for (size_t i = 0; i < node.input_dtypes.size(); ++i) {
    const bool present = i >= node.input_present.size() || node.input_present[i];
    const DType t = node.input_dtypes[i];
    if (present && t != DType::kFloat && t != DType::kUndefined)
      return unsupported_dtype("FusedMatMul", std::to_string(i).c_str(), t);
  }
  return make_matmul_kernel(node, e);
}

Expected<std::unique_ptr<Kernel>> make_fused_gemm(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(Epilogue e, read_fused_epilogue(node, "FusedGemm"));
  // "alpha" / "beta" are the activation's here; Gemm's own are gemm_alpha / gemm_beta.
  float ga = 1.f, gb = 1.f;
  SOD2_ATTR(ga, node.attrs.get_float("gemm_alpha", 1.f));
  SOD2_ATTR(gb, node.attrs.get_float("gemm_beta", 1.f));
  NodeInfo gemm = node;
  AttrValue v;
  v.kind = AttrValue::Kind::kFloat;
  v.f = ga;
  gemm.attrs.set("alpha", v);
  v.f = gb;
  gemm.attrs.set("beta", v);
  return make_gemm_kernel(gemm, e);
}

}  // namespace sod2::rt
