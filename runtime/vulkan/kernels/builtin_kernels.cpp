#include "runtime/vulkan/kernels/builtin_kernels.h"

#include "runtime/kernels/linalg/fused_ops.h"
#include "runtime/vulkan/kernels/vulkan_kernels_internal.h"

namespace sod2::rt::vk {

Status BuiltinKernelBase::run_on_cpu(KernelContext& ctx, const char* op) {
  if (!cpu_) return unsupported(std::string(op) + ": these shapes are beyond the Vulkan shader");
  SOD2_RETURN_IF_ERROR(backend_->sync());
  backend_->count_runtime_fallback();
  return cpu_->run(ctx);
}

bool binding_covers(const BufferRef& ref, int64_t numel) {
  const uint64_t end = uint64_t{ref.word} + static_cast<uint64_t>(numel);
  return numel >= 0 && end <= ref.range / 4 && end <= uint64_t{UINT32_MAX};
}

Expected<BufferRef> read_input(VulkanBackend& backend, const Tensor& t, const Tensor& out,
                               bool same_index) {
  const auto* a = static_cast<const uint8_t*>(t.data);
  const auto* b = static_cast<const uint8_t*>(out.data);
  const bool overlap = a < b + out.bytes() && b < a + t.bytes();
  if (!overlap || (same_index && a == b)) return backend.read_buffer(t);
  return backend.read_buffer_copy(t);
}

namespace {
// Whether shaders/epilogue.glsl computes `a` (its codes are the enum's values). Every enumerator
// is listed, so a new activation is a compiler warning here and stays on the CPU until the shader
// learns it; the shader's default would otherwise pass values through unchanged.
bool shader_activation(Activation a) {
  switch (a) {
    case Activation::kNone:
    case Activation::kRelu:
    case Activation::kLeakyRelu:
    case Activation::kClip:
    case Activation::kSigmoid:
    case Activation::kHardSigmoid:
    case Activation::kHardSwish:
    case Activation::kTanh:
    case Activation::kSilu: return true;
    case Activation::kGeluErf: return false;
  }
  return false;
}
}  // namespace

Expected<EpilogueBuffers> epilogue_buffers(VulkanBackend& backend, const Epilogue& e,
                                           KernelContext& ctx, const char* op, const Tensor& out,
                                           int64_t channels, const BufferRef& out_ref) {
  // The CPU's resolution checks the inputs (its host pointers are not needed here).
  SOD2_RETURN_IF_ERROR(resolve_epilogue(e, ctx, op, out.shape, channels, nullptr).status());
  EpilogueBuffers b;
  b.bias = b.residual = out_ref;
  b.act = static_cast<uint32_t>(e.activation);
  b.alpha = e.alpha;
  b.beta = e.beta;
  if (e.bias_input >= 0) {
    const Tensor& bias = *ctx.input(static_cast<size_t>(e.bias_input));
    SOD2_ASSIGN_OR_RETURN(b.bias, read_input(backend, bias, out));
    b.flags |= kFlagBias1;
  }
  if (e.residual_input >= 0) {
    // The shaders read residual element i only to write output element i.
    const Tensor& residual = *ctx.input(static_cast<size_t>(e.residual_input));
    SOD2_ASSIGN_OR_RETURN(b.residual, read_input(backend, residual, out, true));
    b.flags |= kFlagResidual;
    if (!e.residual_before_activation) b.flags |= kFlagResidualAfter;
  }
  return b;
}

namespace {

enum class Family { kNone, kMatMul, kGemm, kConv, kPool };

// Which shader family runs the op; `fused` for the sod2 domain's fused contractions.
Family family_of(const std::string& domain, const std::string& op, bool* fused) {
  *fused = false;
  if (domain.empty()) {
    if (op == "MatMul") return Family::kMatMul;
    if (op == "Gemm") return Family::kGemm;
    if (op == "Conv") return Family::kConv;
    if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
        op == "GlobalMaxPool")
      return Family::kPool;
  } else if (domain == "sod2") {
    *fused = true;
    if (op == "FusedMatMul") return Family::kMatMul;
    if (op == "FusedGemm") return Family::kGemm;
    if (op == "FusedConv") return Family::kConv;
  }
  return Family::kNone;
}

}  // namespace

bool builtin_shader_op(const std::string& domain, const std::string& op_type) {
  bool fused = false;
  return family_of(domain, op_type, &fused) != Family::kNone;
}

Expected<std::unique_ptr<Kernel>> make_builtin_kernel(VulkanBackend& backend, const NodeInfo& node,
                                                      std::unique_ptr<Kernel> cpu,
                                                      std::string* why) {
  const std::string& op = node.op_type;
  bool fused = false;
  const Family family = family_of(node.domain, op, &fused);
  if (family == Family::kNone) {
    *why = op + ": no hand-written shader";
    return std::unique_ptr<Kernel>();
  }
  // Types unknown when the model loads would need a check per run; such nodes stay on the CPU.
  for (size_t i = 0; i < node.input_dtypes.size(); ++i) {
    const bool present = i >= node.input_present.size() || node.input_present[i];
    if (present && node.input_dtypes[i] != DType::kFloat) {
      *why = op + ": only float32 is on Vulkan";
      return std::unique_ptr<Kernel>();
    }
  }
  for (DType t : node.output_dtypes) {
    if (t != DType::kFloat && t != DType::kUndefined) {
      *why = op + ": only float32 is on Vulkan";
      return std::unique_ptr<Kernel>();
    }
  }
  std::shared_ptr<VulkanBackend> shared = backend.weak_from_this().lock();
  if (!shared) return internal_error(op + ": the Vulkan backend is not shared-owned");
  Epilogue epi;
  if (fused) {
    SOD2_ASSIGN_OR_RETURN(epi, read_fused_epilogue(node, op.c_str()));
    if (!shader_activation(epi.activation)) {
      *why = op + ": activation " + std::to_string(static_cast<int>(epi.activation)) +
             " has no shader";
      return std::unique_ptr<Kernel>();
    }
  }
  switch (family) {
    case Family::kMatMul: return make_vk_matmul(std::move(shared), node, epi, std::move(cpu), why);
    case Family::kGemm: return make_vk_gemm(std::move(shared), node, epi, std::move(cpu), why);
    case Family::kConv: return make_vk_conv(std::move(shared), node, epi, std::move(cpu), why);
    case Family::kPool: return make_vk_pool(std::move(shared), node, std::move(cpu), why);
    case Family::kNone: break;
  }
  return std::unique_ptr<Kernel>();
}

}  // namespace sod2::rt::vk
