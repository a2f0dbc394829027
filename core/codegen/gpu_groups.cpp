#include "core/codegen/gpu_groups.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include "core/codegen/elementwise_shader.h"
#include "core/codegen/spirv_compiler.h"

namespace sod2::codegen {
namespace {

using rt::DType;
using rt::GraphDesc;
using rt::NodeDesc;
using rt::ProgramDesc;
using rt::ValueStorage;

// A float32 constant of one element, inlined as a literal.
bool scalar_constant(const ProgramDesc& p, int32_t v, float* value) {
  const rt::ValueDesc& d = p.graphs[0].values[static_cast<size_t>(v)];
  if (d.storage != ValueStorage::kConstant || d.constant < 0 ||
      static_cast<size_t>(d.constant) >= p.constants.size())
    return false;
  const rt::Tensor t = p.constants[static_cast<size_t>(d.constant)].view();
  if (t.dtype != DType::kFloat || t.numel() != 1 || !t.data) return false;
  *value = *static_cast<const float*>(t.data);
  return true;
}

// The one-step program of a lone ai.onnx elementwise node the generator takes (float32 in and
// out, one output, Clip's bounds scalar constants), with a literal per scalar constant input;
// nullopt for any other node.
std::optional<ElementwiseShader> lone_node_shader(const ProgramDesc& p, const NodeDesc& n) {
  if (!n.info.domain.empty() || !is_elementwise_op(n.info.op_type)) return std::nullopt;
  if (n.outputs.empty() || n.outputs[0] < 0) return std::nullopt;
  for (size_t o = 1; o < n.outputs.size(); ++o)
    if (n.outputs[o] >= 0) return std::nullopt;
  if (n.info.output_dtypes.empty() || n.info.output_dtypes[0] != DType::kFloat) return std::nullopt;
  const bool clip = n.info.op_type == "Clip";
  ElementwiseShader s;
  std::vector<rt::EwOperand> args;
  std::optional<float> bounds[2];
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0) {
      if (clip && i > 0) continue;
      return std::nullopt;
    }
    if (i >= n.info.input_dtypes.size() || n.info.input_dtypes[i] != DType::kFloat)
      return std::nullopt;
    float value;
    const bool scalar = scalar_constant(p, n.inputs[i], &value);
    if (clip && i > 0) {
      if (!scalar) return std::nullopt;
      bounds[i - 1] = value;
      continue;
    }
    args.push_back({false, static_cast<int32_t>(s.literals.size())});
    s.literals.push_back(scalar ? std::optional<float>(value) : std::nullopt);
  }
  auto attr = [&](const char* name) -> std::optional<float> {
    const Expected<float> v = n.info.attrs.get_float(name, 0.f);
    if (!n.info.attrs.has(name) || !v.ok()) return std::nullopt;
    return *v;
  };
  Expected<rt::EwStep> step = rt::elementwise_step(n.info.op_type, n.info.opset, std::move(args),
                                                   attr, bounds[0], bounds[1]);
  if (!step.ok()) return std::nullopt;
  s.program.steps.push_back(std::move(*step));
  return s;
}

// A sod2:FusedElementwise node's program, with a literal per scalar constant input. Errors: a
// program that does not decode (a package is hostile input).
Expected<ElementwiseShader> fused_node_shader(const ProgramDesc& p, const NodeDesc& n) {
  ElementwiseShader s;
  SOD2_ASSIGN_OR_RETURN(s.program, rt::elementwise_program_from(n.info.attrs, n.inputs.size()));
  if (s.program.quantize)
    return invalid_model("FusedElementwise '" + n.info.name +
                         "' quantizes its output, which only the CPU runs");
  for (int32_t v : n.inputs) {
    float value;
    if (v < 0) return invalid_model("FusedElementwise '" + n.info.name + "' has an absent input");
    s.literals.push_back(scalar_constant(p, v, &value) ? std::optional<float>(value)
                                                       : std::nullopt);
  }
  return s;
}

bool is_fused_elementwise(const NodeDesc& n) {
  return rt::is_fused_elementwise(n.info.domain, n.info.op_type);
}

}  // namespace

Status add_gpu_kernels(ProgramDesc& p, const std::function<int(const std::string&)>& rank_of,
                       GpuCodegenStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  p.gpu_kernels.clear();
  if (p.graphs.empty()) return Status::ok_status();
  const GraphDesc& g = p.graphs[0];
  std::map<std::string, std::vector<uint32_t>> compiled;  // by source
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const NodeDesc& n = g.nodes[ni];
    std::optional<ElementwiseShader> shader;
    if (is_fused_elementwise(n)) {
      SOD2_ASSIGN_OR_RETURN(shader, fused_node_shader(p, n));
    } else {
      shader = lone_node_shader(p, n);
    }
    if (!shader || n.outputs.empty() || n.outputs[0] < 0 ||
        static_cast<size_t>(n.outputs[0]) >= g.values.size())
      continue;
    shader->rank = rank_of(g.values[static_cast<size_t>(n.outputs[0])].name);
    int tensors = 0;
    for (const auto& l : shader->literals) tensors += !l.has_value();
    // Beyond a shader's push constants (a program compiled for the CPU, whose groups may be
    // larger): the CPU runs the node.
    if (shader->rank < 0 || shader->rank > rt::kMaxGpuRank || tensors > rt::kMaxGpuKernelInputs ||
        rt::gpu_group_push_words(uint32_t(tensors), uint32_t(shader->rank)) > 32)
      continue;
    rt::GpuKernelDesc k;
    k.name = "ew" + std::to_string(p.gpu_kernels.size());
    SOD2_ASSIGN_OR_RETURN(k.source, generate_elementwise_glsl(*shader));
    auto it = compiled.find(k.source);
    if (it == compiled.end()) {
      SOD2_ASSIGN_OR_RETURN(std::vector<uint32_t> spirv, compile_compute_shader(k.source, k.name));
      it = compiled.emplace(k.source, std::move(spirv)).first;
    }
    k.spirv = it->second;
    k.nodes = {static_cast<int32_t>(ni)};
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (!shader->literals[i]) k.inputs.push_back(n.inputs[i]);
    k.output = n.outputs[0];
    k.rank = shader->rank;
    if (stats)
      stats->grouped_nodes += is_fused_elementwise(n) ? static_cast<int>(n.fused_nodes.size()) : 1;
    p.gpu_kernels.push_back(std::move(k));
  }
  if (stats) {
    stats->groups = static_cast<int>(p.gpu_kernels.size());
    stats->shaders = static_cast<int>(compiled.size());
    stats->compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  return Status::ok_status();
}

}  // namespace sod2::codegen
