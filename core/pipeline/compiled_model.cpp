#include "core/pipeline/compiled_model.h"

#include <map>
#include <utility>

#include "core/codegen/gpu_groups.h"
#include "core/ops/op_support.h"
#include "core/opt/fusion_rules.h"
#include "core/package/program_builder.h"
#include "runtime/program/binding_layout.h"
#include "runtime/program/program_dataflow.h"

namespace sod2::pipeline {
namespace {

Status add_shaders(const CompiledModel& c, rt::ProgramDesc& program) {
  const Graph& graph = c.graph();
  auto rank_of = [&](const std::string& name) -> int {
    const ValueId v = graph.find(name);
    if (v == kNoValue) return -1;
    return static_cast<int>(c.rdp.fact(graph, v).rank());
  };
  return codegen::add_gpu_kernels(program, rank_of);
}

// Why a refused candidate's nodes do not run as one kernel on `target`.
std::string refused_because(Target target, const opt::FusionGroup& group,
                            const package::FusionVerdict& verdict) {
  return std::string(target == Target::kVulkan ? "Vulkan" : "the CPU") +
         " has no fused kernel for its " + group.kind +
         " group: " + package::fusion_refusal_text(verdict.refusal) + " (at '" + verdict.at_node +
         "')";
}

// The candidates and their verdicts on `target`. A contraction, normalization or reduction the
// target does not run with its neighbours leaves them, which it may still run fused as
// elementwise groups: such an anchor is peeled off and the sides asked again.
std::vector<package::FusionVerdict> decide_fusion(const Graph& graph, const RdpResult& rdp,
                                                  Target target, opt::FusionPlan* candidates) {
  std::vector<package::FusionVerdict> verdicts =
      package::match_fused_kernels(graph, rdp, *candidates, target);
  // A contraction joined with the quantized residual join after it that does not run as one
  // kernel: each side asked again on its own (the join as a QAdd).
  std::vector<std::string> split(verdicts.size());
  bool any = false;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const opt::FusionGroup& g = candidates->groups[i];
    if (verdicts[i].kernel || !opt::quantized_join_sides(graph, g)) continue;
    split[i] = refused_because(target, g, verdicts[i]);
    any = true;
  }
  if (any) {
    *candidates = opt::split_quantized_joins(graph, *candidates, split);
    verdicts = package::match_fused_kernels(graph, rdp, *candidates, target);
  }
  std::vector<std::string> peel(verdicts.size());
  any = false;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const opt::FusionGroup& g = candidates->groups[i];
    if (verdicts[i].kernel || g.nodes.size() < 3) continue;
    // One anchor and elementwise ops (a QDQ group's quantization nodes stay with it).
    int anchors = 0, others = 0;
    for (NodeId n : g.nodes) {
      const FusionRole r = opt::fusion_role(graph.node(n));
      const bool anchor = r == FusionRole::kContraction || r == FusionRole::kNormalization ||
                          r == FusionRole::kReduction;
      anchors += anchor;
      // A MatMul's operand Transposes stay with it (opt::peel_anchors).
      const bool operand = graph.node(n).op_type == "Transpose";
      others += !anchor && !operand && r != FusionRole::kElementwise;
    }
    if (anchors != 1 || others != 0) continue;
    peel[i] = refused_because(target, g, verdicts[i]);
    any = true;
  }
  if (any) {
    *candidates = opt::peel_anchors(graph, *candidates, peel);
    verdicts = package::match_fused_kernels(graph, rdp, *candidates, target);
  }
  // Elementwise ops that only a normalization reads (attention's scale and mask, peeled off the
  // MatMul before them, then its Softmax): joined where the target runs them as one kernel.
  std::vector<std::optional<opt::FusionGroup>> joined(candidates->groups.size());
  any = false;
  for (size_t i = 0; i < candidates->groups.size(); ++i) {
    std::optional<opt::FusionGroup> g = opt::join_with_normalization(graph, *candidates, i);
    if (!g) continue;
    opt::FusionPlan trial;
    trial.groups = {*g};
    if (!package::match_fused_kernels(graph, rdp, trial, target)[0].kernel) continue;
    joined[i] = std::move(g);
    any = true;
  }
  if (!any) return verdicts;
  *candidates = opt::join_normalizations(graph, *candidates, joined);
  return package::match_fused_kernels(graph, rdp, *candidates, target);
}

// The plan's groups from the candidates and the verdicts: a refused candidate is split into one
// group per node, each saying why it runs alone.
opt::FusionPlan runnable_groups(const Graph& graph, const opt::FusionPlan& candidates,
                                const std::vector<package::FusionVerdict>& verdicts,
                                Target target) {
  std::vector<std::string> split_because(verdicts.size());
  for (size_t i = 0; i < verdicts.size() && i < candidates.groups.size(); ++i)
    if (!verdicts[i].kernel)
      split_because[i] = refused_because(target, candidates.groups[i], verdicts[i]);
  return opt::restrict_fusion(graph, candidates, split_because);
}

// How the plan is made for `options` (fusion apart, which compile() decides).
opt::MemoryPlanOptions memory_plan_options(const CompileOptions& options) {
  opt::MemoryPlanOptions plan_options;
  plan_options.reorder = options.reorder;
  plan_options.versions = options.plan_versions;
  plan_options.check_bindings = options.check_bindings;
  return plan_options;
}

}  // namespace

Expected<opt::MemoryPlan> plan_unfused(const CompiledModel& compiled) {
  if (!compiled.options.plan)
    return invalid_argument(
        "the model was compiled up to RDP only (CompileOptions::plan): no plan");
  CompileOptions options = compiled.options;
  options.fuse = false;
  return opt::plan_memory(compiled.graph(), compiled.rdp, memory_plan_options(options));
}

int CompiledModel::fused_groups() const {
  int n = 0;
  for (size_t i = 0; i < candidates.groups.size() && i < decisions.size(); ++i)
    n += candidates.groups[i].nodes.size() > 1 &&
         decisions[i].refusal == package::FusionRefusal::kNone;
  return n;
}

int CompiledModel::refused_groups() const {
  int n = 0;
  for (size_t i = 0; i < candidates.groups.size() && i < decisions.size(); ++i)
    n += candidates.groups[i].nodes.size() > 1 &&
         decisions[i].refusal != package::FusionRefusal::kNone;
  return n;
}

Expected<CompiledModel> compile(Model model, const CompileOptions& options) {
  auto stage = [&](double f, const char* name) {
    return options.progress ? options.progress(f, name) : Status::ok_status();
  };
  if (!model.graph) return invalid_argument("the model has no graph");
  SOD2_RETURN_IF_ERROR(stage(0.2, "propagating ranks and dims (RDP)"));
  SOD2_ASSIGN_OR_RETURN(RdpResult rdp, run_rdp(model, options.rdp));
  CompiledModel c{std::move(model), std::move(rdp), options, {}, {}, {}, {}, {}, {}};
  c.work = opt::count_work(c.model, c.rdp);
  if (!options.plan) return c;
  const Graph& graph = c.graph();

  opt::MemoryPlanOptions plan_options = memory_plan_options(options);
  // Fusion is decided here, once: what RDP allows, then what the target runs fused. The plan is
  // made over exactly those groups, and the program runs exactly those kernels.
  opt::FusionPlan runnable;
  std::vector<std::optional<package::FusedKernel>> kernels;
  if (options.fuse) {
    SOD2_RETURN_IF_ERROR(stage(0.45, "deciding fusion"));
    SOD2_ASSIGN_OR_RETURN(c.candidates, opt::fuse(graph, c.rdp));
    std::vector<package::FusionVerdict> verdicts =
        decide_fusion(graph, c.rdp, options.target, &c.candidates);
    for (const package::FusionVerdict& v : verdicts) c.decisions.push_back({v.refusal, v.at_node});
    runnable = runnable_groups(graph, c.candidates, verdicts, options.target);
    // Per runnable group, its kernel: a kept candidate keeps its place among the groups in order.
    kernels.resize(runnable.groups.size());
    for (size_t i = 0; i < c.candidates.groups.size(); ++i) {
      if (!verdicts[i].kernel) continue;
      const NodeId first = c.candidates.groups[i].nodes.front();
      kernels[static_cast<size_t>(runnable.group_of[static_cast<size_t>(first)])] =
          std::move(verdicts[i].kernel);
    }
    plan_options.fusion = &runnable;
  }
  SOD2_RETURN_IF_ERROR(stage(0.5, "planning memory"));
  SOD2_ASSIGN_OR_RETURN(c.plan, opt::plan_memory(graph, c.rdp, plan_options));
  if (!options.build_program) return c;
  SOD2_RETURN_IF_ERROR(stage(0.9, "building the program"));
  SOD2_ASSIGN_OR_RETURN(
      c.program, package::build_program(c.model, c.rdp, c.plan, options.fuse ? &kernels : nullptr));
  // The program carries the versions only when every bucketed symbol is one of its inputs; the
  // plan a view shows must then not pick one either.
  if (c.program.plan_versions.empty()) c.plan.versions = {};
  // As a session derives them: what a binding's own layout is made over.
  SOD2_ASSIGN_OR_RETURN(rt::ArenaLifetimes lives, rt::check_program_dataflow(c.program));
  c.program_lives = std::move(lives.life);
  if (options.target == Target::kVulkan) SOD2_RETURN_IF_ERROR(add_shaders(c, c.program));
  return c;
}

Expected<rt::ProgramDesc> compile_program(Model model, const CompileOptions& options) {
  SOD2_ASSIGN_OR_RETURN(CompiledModel c, compile(std::move(model), options));
  return std::move(c.program);
}

Expected<CompiledModel> compile_file(const std::string& path, const CompileOptions& options) {
  if (options.progress) SOD2_RETURN_IF_ERROR(options.progress(0.0, "importing"));
  SOD2_ASSIGN_OR_RETURN(Model model, import_onnx_file(path, options.import));
  return compile(std::move(model), options);
}

Expected<rt::ProgramDesc> program_for(const CompiledModel& compiled, Target target) {
  if (!compiled.options.build_program || compiled.program.graphs.empty())
    return invalid_argument(
        "the model was compiled without its program (its external weights "
        "were not loaded): open it with its weights to run or place it");
  rt::ProgramDesc program = compiled.program;
  if (target == Target::kVulkan && program.gpu_kernels.empty())
    SOD2_RETURN_IF_ERROR(add_shaders(compiled, program));
  return program;
}

Expected<opt::PlanAtBinding> plan_at(const CompiledModel& compiled, const sym::Binding& binding,
                                     bool greedy_yardstick) {
  if (!compiled.options.plan)
    return invalid_argument(
        "the model was compiled up to RDP only (CompileOptions::plan): no plan");
  SOD2_ASSIGN_OR_RETURN(
      opt::PlanAtBinding at,
      opt::evaluate_plan(compiled.plan, compiled.rdp, binding, std::nullopt, greedy_yardstick));
  const rt::ProgramDesc& p = compiled.program;
  if (p.graphs.empty() || !plan::execution_layout_applies(p)) return at;
  // A session lays such a binding out with a layering it chooses there (binding_layout.h): the
  // same choice, over the same program, lifetimes and bounds.
  std::map<std::string, int64_t> by_name;
  for (const auto& [s, v] : at.binding) by_name[s.name()] = v;
  std::vector<int64_t> values(p.symbols.size(), 0);
  for (size_t k = 0; k < p.symbols.size(); ++k) {
    auto it = by_name.find(p.symbols[k].name);
    if (it == by_name.end()) return at;  // a symbol the report left out: nothing runs there
    values[k] = it->second;
  }
  if (at.version >= static_cast<int32_t>(p.plan_versions.size())) return at;
  const rt::ShapeProgram& version =
      at.version < 0 ? p.plan_program : p.plan_versions[static_cast<size_t>(at.version)];
  plan::ExecutionLayout layout;
  const Expected<bool> used = layout.choose(p, version, compiled.program_lives, values);
  if (!used.ok() || !*used) return at;  // as the session: the version holds
  std::vector<int64_t> out(version.num_outputs()), scratch(version.scratch_size());
  SOD2_RETURN_IF_ERROR(version.run(values, out, scratch));
  layout.apply(out);
  const size_t n = p.num_arena_tensors;
  if (at.tensors.size() != n) return internal_error("the plan and its program differ in tensors");
  for (size_t t = 0; t < n; ++t) at.tensors[t].offset = out[n + t];
  at.arena_bytes = out[2 * n];
  at.version = plan::kBindingLayeringVersion;
  return at;
}

}  // namespace sod2::pipeline
