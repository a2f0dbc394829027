#include "core/pipeline/compiled_model.h"

#include <utility>

#include "core/codegen/gpu_groups.h"
#include "core/package/program_builder.h"

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

// The plan's groups from the candidates and the verdicts: a refused candidate is split into one
// group per node, each saying why it runs alone.
opt::FusionPlan runnable_groups(const Graph& graph, const opt::FusionPlan& candidates,
                                const std::vector<package::FusionVerdict>& verdicts) {
  std::vector<std::string> split_because(verdicts.size());
  for (size_t i = 0; i < verdicts.size() && i < candidates.groups.size(); ++i) {
    if (verdicts[i].kernel) continue;
    split_because[i] = "the CPU has no fused kernel for its " + candidates.groups[i].kind +
                       " group: " + package::fusion_refusal_text(verdicts[i].refusal) + " (at '" +
                       verdicts[i].at_node + "')";
  }
  return opt::restrict_fusion(graph, candidates, split_because);
}

}  // namespace

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
  CompiledModel c{std::move(model), std::move(rdp), options, {}, {}, {}, {}};
  if (!options.plan) return c;
  const Graph& graph = c.graph();

  opt::MemoryPlanOptions plan_options;
  plan_options.fuse = options.fuse;
  plan_options.reorder = options.reorder;
  plan_options.versions = options.plan_versions;
  plan_options.check_bindings = options.check_bindings;
  // Fusion is decided here, once: what RDP allows, then what the target runs fused. The plan is
  // made over exactly those groups, and the program runs exactly those kernels.
  opt::FusionPlan runnable;
  std::vector<std::optional<package::FusedKernel>> kernels;
  if (options.fuse) {
    SOD2_RETURN_IF_ERROR(stage(0.45, "deciding fusion"));
    SOD2_ASSIGN_OR_RETURN(c.candidates, opt::fuse(graph, c.rdp));
    std::vector<package::FusionVerdict> verdicts =
        package::match_fused_kernels(graph, c.rdp, c.candidates);
    for (const package::FusionVerdict& v : verdicts) c.decisions.push_back({v.refusal, v.at_node});
    runnable = runnable_groups(graph, c.candidates, verdicts);
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

Expected<opt::PlanAtBinding> plan_at(const CompiledModel& compiled, const sym::Binding& binding) {
  if (!compiled.options.plan)
    return invalid_argument("the model was compiled up to RDP only (CompileOptions::plan): no plan");
  return opt::evaluate_plan(compiled.plan, compiled.rdp, binding);
}

}  // namespace sod2::pipeline
