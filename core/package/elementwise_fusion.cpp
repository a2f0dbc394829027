#include "core/package/elementwise_fusion.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "core/package/program_builder.h"
#include "runtime/kernels/elementwise_program.h"
#include "runtime/program/program.h"

namespace sod2::package {
namespace {

// The group's trailing QuantizeLinear as the program's output quantization: per tensor, a
// constant positive finite scale, a constant 8-bit zero point (or none: uint8 0), not blocked.
std::optional<rt::EwQuantize> trailing_quantize(const Graph& g, const RdpResult& rdp,
                                                const Node& q) {
  if (q.inputs.size() < 2 || q.outputs.size() != 1) return std::nullopt;
  if (const Attribute* b = q.attribute("block_size"); b && b->i != 0) return std::nullopt;
  const std::optional<float> scale = constant_float_scalar(g, rdp, q.inputs[1]);
  if (!scale || !(*scale > 0.f) || !std::isfinite(*scale)) return std::nullopt;
  rt::EwQuantize out;
  out.scale = *scale;
  const DataType type = rdp.fact(g, q.outputs[0]).dtype;
  if (type != DataType::kUint8 && type != DataType::kInt8) return std::nullopt;
  out.type = type == DataType::kInt8 ? rt::DType::kInt8 : rt::DType::kUint8;
  if (q.inputs.size() > 2 && q.inputs[2] != kNoValue) {
    const Tensor* z = constant_tensor(g, q.inputs[2]);
    if (!z || z->numel() != 1) return std::nullopt;
    const std::optional<double> v = z->double_at(0);
    if (!v) return std::nullopt;
    out.zero_point = static_cast<int32_t>(*v);
  }
  return out;
}

}  // namespace

namespace {

// The program nodes[0, steps) evaluate, their outside inputs appended to k->inputs; a refusal
// when one is not float32 or not an op a program evaluates, or when a node's result is read by
// no later node (every node must feed the last).
std::optional<FusionVerdict> build_program(const Graph& g, const RdpResult& rdp,
                                           std::span<const NodeId> nodes, FusedKernel* k,
                                           rt::ElementwiseProgram* program) {
  auto is_float = [&](ValueId v) { return rdp.fact(g, v).dtype == DataType::kFloat; };
  std::map<ValueId, int32_t> step_of;  // values the group computes
  std::vector<bool> read(nodes.size(), false);
  for (size_t j = 0; j < nodes.size(); ++j) {
    const NodeId id = nodes[j];
    const Node& n = g.node(id);
    if (!n.domain.empty() || n.outputs.size() != 1 || n.outputs[0] == kNoValue)
      return refused(g, FusionRefusal::kNotInFusedElementwise, id);
    if (!is_float(n.outputs[0])) return refused(g, FusionRefusal::kNotFloat32, id);
    const bool clip = n.op_type == "Clip";
    std::optional<float> lo, hi;
    std::vector<rt::EwOperand> args;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const ValueId v = n.inputs[i];
      if (v == kNoValue) {
        if (clip && i > 0) continue;  // an absent bound
        return refused(g, FusionRefusal::kNotInFusedElementwise, id);
      }
      if (!is_float(v)) return refused(g, FusionRefusal::kNotFloat32, id);
      if (clip && i > 0) {
        const std::optional<float> bound = constant_float_scalar(g, rdp, v);
        if (!bound || n.opset < 11) return refused(g, FusionRefusal::kNotInFusedElementwise, id);
        (i == 1 ? lo : hi) = bound;
        continue;
      }
      rt::EwOperand o;
      if (auto it = step_of.find(v); it != step_of.end()) {
        o.temp = true;
        o.index = it->second;
        read[static_cast<size_t>(it->second)] = true;
      } else {
        auto at = std::find(k->inputs.begin(), k->inputs.end(), v);
        if (at == k->inputs.end()) at = k->inputs.insert(k->inputs.end(), v);
        o.index = static_cast<int32_t>(at - k->inputs.begin());
      }
      args.push_back(o);
    }
    auto attr = [&](const char* name) -> std::optional<float> {
      const Attribute* a = n.attribute(name);
      return a ? std::optional<float>(a->f) : std::nullopt;
    };
    Expected<rt::EwStep> step =
        rt::elementwise_step(n.op_type, static_cast<int>(n.opset), std::move(args), attr, lo, hi);
    if (!step.ok()) return refused(g, FusionRefusal::kNotInFusedElementwise, id);
    program->steps.push_back(std::move(*step));
    step_of[n.outputs[0]] = static_cast<int32_t>(j);
  }
  for (size_t j = 0; j + 1 < nodes.size(); ++j)
    if (!read[j]) return refused(g, FusionRefusal::kNotAChain, nodes[j]);
  return std::nullopt;
}

// The node's fields for a program over k's inputs, all float32.
void describe(const rt::ElementwiseProgram& program, const char* op, const char* domain,
              const std::string& name, FusedKernel* k) {
  k->info.name = name;
  k->info.op_type = op;
  k->info.domain = domain;
  k->info.opset = 1;
  k->info.attrs = rt::to_attrs(program);
  k->info.input_present.assign(k->inputs.size(), true);
  k->info.input_dtypes.assign(k->inputs.size(), rt::DType::kFloat);
  k->info.output_dtypes = {program.output_type()};
  k->info.num_outputs = 1;
}

}  // namespace

FusionVerdict match_elementwise_group(const Graph& g, const RdpResult& rdp,
                                      const opt::FusionGroup& grp, Target target) {
  if (grp.nodes.size() < 2) return refused(g, FusionRefusal::kSingleNode, grp.nodes.front());
  FusedKernel k;
  rt::ElementwiseProgram program;
  // A trailing QuantizeLinear (the kernel writes 8 bits; CPU only) is no step of the program.
  size_t steps = grp.nodes.size();
  const Node& tail = g.node(grp.nodes.back());
  if (tail.op_type == "QuantizeLinear" && tail.domain.empty()) {
    program.quantize = trailing_quantize(g, rdp, tail);
    if (!program.quantize || target != Target::kCpu)
      return refused(g, FusionRefusal::kUnsupportedQuantization, grp.nodes.back());
    if (tail.inputs[0] != g.node(grp.nodes[steps - 2]).outputs[0])
      return refused(g, FusionRefusal::kNotAChain, grp.nodes[steps - 2]);
    --steps;
  }
  if (auto refusal = build_program(g, rdp, std::span(grp.nodes).first(steps), &k, &program))
    return std::move(*refusal);
  // One value leaves the group, and every node feeds it: the kernel computes only that value,
  // whose shape is the broadcast of the group's inputs.
  const ValueId out = g.node(grp.nodes.back()).outputs[0];
  if (grp.outputs.size() != 1 || grp.outputs[0] != out)
    return refused(g, FusionRefusal::kSeveralOutputs, grp.nodes.front());
  if (target == Target::kVulkan) {
    uint32_t tensors = 0;
    for (ValueId v : k.inputs) tensors += !constant_float_scalar(g, rdp, v).has_value();
    const int64_t rank = rdp.fact(g, out).rank();
    if (rank < 0 || rank > rt::kMaxGpuRank || tensors > rt::kMaxGpuKernelInputs ||
        rt::gpu_group_push_words(tensors, static_cast<uint32_t>(rank)) > 32)
      return refused(g, FusionRefusal::kShaderLimits, grp.nodes.front());
  }
  describe(program, rt::kFusedElementwiseOp, rt::kFusedElementwiseDomain,
           g.node(grp.nodes.front()).name, &k);
  k.output = out;
  FusionVerdict v;
  v.kernel = std::move(k);
  return v;
}

FusionVerdict match_softmax_group(const Graph& g, const RdpResult& rdp, const opt::FusionGroup& grp,
                                  Target target) {
  if (grp.nodes.size() < 2) return refused(g, FusionRefusal::kSingleNode, grp.nodes.front());
  const NodeId at = grp.nodes.back();
  const Node& s = g.node(at);
  if (target != Target::kCpu || s.op_type != "Softmax" || !s.domain.empty() ||
      s.inputs.size() != 1 || s.outputs.size() != 1)
    return refused(g, FusionRefusal::kUnsupportedNormalization, at);
  const ValueId in = s.inputs[0], out = s.outputs[0];
  if (grp.outputs.size() != 1 || grp.outputs[0] != out)
    return refused(g, FusionRefusal::kSeveralOutputs, grp.nodes.front());
  const NodeId last = grp.nodes[grp.nodes.size() - 2];
  if (g.node(last).outputs.size() != 1 || g.node(last).outputs[0] != in)
    return refused(g, FusionRefusal::kNotAChain, last);
  // Rows the kernel normalises: dims [axis, rank), contiguous. From opset 13 one axis, so only
  // the last; before, the input coerced to 2-D at axis.
  const TensorFact& f = rdp.fact(g, in);
  const int64_t rank = f.rank();
  const Attribute* a = s.attribute("axis");
  int64_t axis = a ? a->i : (s.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  const bool rows = s.opset >= 13 ? axis == rank - 1 : axis >= 0 && axis <= rank;
  if (rank < 1 || !rows || f.dtype != DataType::kFloat)
    return refused(g, FusionRefusal::kUnsupportedNormalization, at);
  FusedKernel k;
  rt::ElementwiseProgram program;
  if (auto refusal =
          build_program(g, rdp, std::span(grp.nodes).first(grp.nodes.size() - 1), &k, &program))
    return std::move(*refusal);
  describe(program, rt::kFusedSoftmaxOp, rt::kFusedSoftmaxDomain, s.name, &k);
  rt::AttrValue axis_attr;
  axis_attr.kind = rt::AttrValue::Kind::kInt;
  axis_attr.i = axis;
  k.info.attrs.set("axis", std::move(axis_attr));
  k.output = out;
  FusionVerdict v;
  v.kernel = std::move(k);
  return v;
}

}  // namespace sod2::package
