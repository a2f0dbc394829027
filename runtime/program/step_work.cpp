#include "runtime/program/step_work.h"

#include <algorithm>

#include "runtime/program/execution_bounds.h"

namespace sod2::plan {
namespace {

// Bodies nest only as deep as the package reader allowed; this bounds the recursion anyway.
constexpr int kMaxDepth = 64;

bool is_constant_true(const rt::ProgramDesc& p, const rt::GraphDesc& g, int32_t v) {
  if (v < 0 || static_cast<size_t>(v) >= g.values.size()) return false;
  const rt::ValueDesc& d = g.values[static_cast<size_t>(v)];
  if (d.storage != rt::ValueStorage::kConstant || d.constant < 0 ||
      static_cast<size_t>(d.constant) >= p.constants.size())
    return false;
  const rt::Tensor t = p.constants[static_cast<size_t>(d.constant)].view();
  if (t.numel() != 1 || !t.data) return false;
  const auto* bytes = static_cast<const unsigned char*>(t.data);
  return std::any_of(bytes, bytes + t.bytes(), [](unsigned char b) { return b != 0; });
}

// The node of `g` writing value `v`, nullptr for an input or a constant.
const rt::NodeDesc* writer_of(const rt::GraphDesc& g, int32_t v) {
  for (const rt::NodeDesc& n : g.nodes)
    if (std::find(n.outputs.begin(), n.outputs.end(), v) != n.outputs.end()) return &n;
  return nullptr;
}

// Whether a Loop body's condition output is its condition input passed on (through Identity
// nodes) or a constant true: the body then never ends the loop.
bool body_keeps_going(const rt::ProgramDesc& p, const rt::GraphDesc& body) {
  if (body.inputs.size() < 2 || body.outputs.empty()) return false;
  int32_t v = body.outputs[0];
  for (size_t hops = 0; hops <= body.nodes.size(); ++hops) {
    if (v == body.inputs[1] || is_constant_true(p, body, v)) return true;
    const rt::NodeDesc* w = writer_of(body, v);
    if (!w || w->info.op_type != "Identity" || w->inputs.empty()) return false;
    v = w->inputs[0];
  }
  return false;
}

bool is_bound(const rt::ProgramDesc& p, int32_t graph, const rt::NodeDesc& node, int depth) {
  if (depth > kMaxDepth || graph < 0 || static_cast<size_t>(graph) >= p.graphs.size()) return true;
  const rt::GraphDesc& g = p.graphs[static_cast<size_t>(graph)];
  const std::string& op = node.info.op_type;
  if (node.info.domain.empty() && op == "If") return true;
  if (node.info.domain.empty() && op == "Loop") {
    if (node.inputs.empty() || node.inputs[0] < 0) return true;  // no M: until cond ends it
    if (node.subgraphs.size() != 1) return true;
    const int32_t cond = node.inputs.size() > 1 ? node.inputs[1] : -1;
    if (cond >= 0) {
      const auto b = static_cast<size_t>(node.subgraphs[0]);
      if (!is_constant_true(p, g, cond) || b >= p.graphs.size() ||
          !body_keeps_going(p, p.graphs[b]))
        return true;
    }
  }
  for (int32_t sub : node.subgraphs) {
    if (sub < 0 || static_cast<size_t>(sub) >= p.graphs.size()) return true;
    for (const rt::NodeDesc& n : p.graphs[static_cast<size_t>(sub)].nodes)
      if (is_bound(p, sub, n, depth + 1)) return true;
  }
  return false;
}

// Per output of `work`, whether it reads an input marked in `unbound`.
std::vector<char> outputs_reading(const rt::ShapeProgram& work, const std::vector<char>& unbound) {
  std::vector<char> reg(work.scratch_size(), 0), out(work.num_outputs(), 0);
  auto r = [&](int32_t i) {
    return i >= 0 && static_cast<size_t>(i) < reg.size() ? reg[static_cast<size_t>(i)] : char{0};
  };
  for (const rt::ShapeInstruction& ins : work.instructions()) {
    const auto dst = static_cast<size_t>(ins.dst);
    switch (ins.op) {
      case rt::ShapeOp::kLoadImm:
        if (dst < reg.size()) reg[dst] = 0;
        break;
      case rt::ShapeOp::kLoadInput:
        if (dst < reg.size())
          reg[dst] = ins.a >= 0 && static_cast<size_t>(ins.a) < unbound.size()
                         ? unbound[static_cast<size_t>(ins.a)]
                         : char{0};
        break;
      case rt::ShapeOp::kStore:
        if (dst < out.size()) out[dst] = r(ins.a);
        break;
      case rt::ShapeOp::kAddImm:
      case rt::ShapeOp::kMulImm:
      case rt::ShapeOp::kPowImm:
        if (dst < reg.size()) reg[dst] = r(ins.a);
        break;
      default:  // two registers in
        if (dst < reg.size()) reg[dst] = static_cast<char>(r(ins.a) || r(ins.b));
        break;
    }
  }
  return out;
}

}  // namespace

bool node_count_is_bound(const rt::ProgramDesc& program, int32_t graph, const rt::NodeDesc& node) {
  return is_bound(program, graph, node, 0);
}

Expected<StepWork> step_work_at(const rt::ProgramDesc& program, std::span<const int64_t> values,
                                std::span<const char> bound) {
  const rt::ShapeProgram& work = program.step_work;
  if (work.num_outputs() == 0)
    return not_found("the program carries no operation counts (compiled before they existed)");
  if (values.size() != program.symbols.size() || (!bound.empty() && bound.size() != values.size()))
    return invalid_argument("step work: " + std::to_string(values.size()) + " values for " +
                            std::to_string(program.symbols.size()) + " symbols");
  std::vector<int64_t> at(values.begin(), values.end());
  StepWork out;
  std::vector<char> at_bound(at.size(), 0);
  for (size_t k = 0; k < at.size(); ++k) {
    if (!program.symbols[k].execution || bound.empty() || bound[k]) continue;
    out.at_most = true;
    at_bound[k] = 1;
  }
  out.bound = outputs_reading(work, at_bound);
  if (!program.graphs.empty()) {
    const std::vector<rt::NodeDesc>& steps = program.graphs[0].nodes;
    for (size_t i = 0; i < out.bound.size() && i < steps.size(); ++i)
      if (node_count_is_bound(program, 0, steps[i])) out.bound[i] = 1;
  }
  if (out.at_most) {
    // Only the unbound execution symbols take their bounds; bound_all sets them all, so the
    // bound ones are put back.
    ExecutionBounds bounds;
    std::vector<int64_t> with_bounds = at;
    SOD2_RETURN_IF_ERROR(bounds.bound_all(program, with_bounds));
    for (size_t k = 0; k < at.size(); ++k)
      if (program.symbols[k].execution && !bound[k]) at[k] = with_bounds[k];
  }
  out.ops.resize(work.num_outputs());
  std::vector<int64_t> scratch(work.scratch_size());
  SOD2_RETURN_IF_ERROR(work.run(at, out.ops, scratch));
  for (int64_t ops : out.ops) {
    if (ops < 0) {
      ++out.uncounted;
      continue;
    }
    if (out.total > INT64_MAX - ops)
      return invalid_argument("step work: the total overflows at these sizes");
    out.total += ops;
  }
  return out;
}

}  // namespace sod2::plan
