#include "core/package/compile.h"

#include "core/codegen/gpu_groups.h"
#include "core/opt/fusion.h"
#include "core/opt/memory_plan.h"
#include "core/package/kernel_fusion.h"
#include "core/package/program_builder.h"

namespace sod2::package {

Expected<rt::ProgramDesc> compile_model(const Model& model, const CompileOptions& options) {
  SOD2_ASSIGN_OR_RETURN(RdpResult rdp, run_rdp(model, options.rdp));
  opt::MemoryPlanOptions plan_options;
  plan_options.fuse = options.fuse;
  opt::FusionPlan runnable;
  std::vector<std::optional<FusedKernel>> kernels;
  if (options.fuse) {
    SOD2_ASSIGN_OR_RETURN(opt::FusionPlan groups, opt::fuse(*model.graph, rdp));
    const auto matched = match_fused_kernels(*model.graph, rdp, groups);
    std::vector<char> keep;
    for (const auto& k : matched) keep.push_back(k.has_value());
    runnable = opt::restrict_fusion(*model.graph, groups, keep);
    kernels = match_fused_kernels(*model.graph, rdp, runnable);
    plan_options.fusion = &runnable;
  }
  plan_options.versions = options.plan_versions;
  SOD2_ASSIGN_OR_RETURN(opt::MemoryPlan plan, opt::plan_memory(*model.graph, rdp, plan_options));
  SOD2_ASSIGN_OR_RETURN(rt::ProgramDesc program,
                        build_program(model, rdp, plan, options.fuse ? &kernels : nullptr));
  if (options.gpu_kernels) {
    const Graph& graph = *model.graph;
    auto rank_of = [&](const std::string& name) -> int {
      const ValueId v = graph.find(name);
      if (v == kNoValue) return -1;
      return static_cast<int>(rdp.fact(graph, v).rank());
    };
    SOD2_RETURN_IF_ERROR(codegen::add_gpu_kernels(program, rank_of));
  }
  return program;
}

}  // namespace sod2::package
