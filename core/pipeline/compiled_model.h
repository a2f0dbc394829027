// The one compiled model (DESIGN §1): import → RDP → the backend's fusion capability → fusion
// decided once → execution order → memory plan with its versions → the program the runtime
// executes. Every tool reads this object — `sod2 inspect/plan/compile/run/profile/ofa`, the
// studio's document and Backend dock, family compilation — so the groups, order, tensors and
// offsets a view shows are the ones the runtime runs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/onnx/onnx_import.h"
#include "core/opt/fusion.h"
#include "core/opt/memory_plan.h"
#include "core/opt/model_work.h"
#include "core/package/kernel_fusion.h"
#include "core/rdp/rdp.h"
#include "core/status/status.h"
#include "runtime/program/plan_layout.h"
#include "runtime/program/program.h"

namespace sod2::pipeline {

// Which backend the program is compiled for (package::Target): fusion is decided by what it runs
// fused, so the memory plan is the plan of what runs there. Both run the same fused kernels;
// Vulkan also compiles a shader per fused elementwise group and per lone elementwise node
// (core/codegen/gpu_groups.h), and splits the elementwise groups beyond a shader's inputs.
using Target = package::Target;

struct CompileOptions {
  RdpOptions rdp;
  ImportOptions import;  // for compile_file
  Target target = Target::kCpu;
  // Run the groups the target has fused kernels for as one kernel each, their inside values out
  // of the arena; false: every node alone, every value in the arena.
  bool fuse = true;
  bool reorder = true;  // false: keep the file's node order
  // Also make size-bucketed plan versions (plan_versions.h); the runtime runs each binding with
  // its cell's version.
  bool plan_versions = true;
  // false: stop after the plan (`program` stays empty): for models imported without their
  // external weights, which a program would need. The plan is the same either way.
  bool build_program = true;
  // false: stop after RDP (no fusion, plan or program): what `sod2 inspect` shows.
  bool plan = true;
  // Bindings the execution order is also judged at (besides the upper bounds).
  std::vector<sym::Binding> check_bindings;
  // Called before each stage with the fraction done and the stage's name; an error (say, the
  // user cancelled) ends the compile with it.
  std::function<Status(double fraction, const char* stage)> progress;
};

// A fused group's place in the one fusion decision.
struct GroupDecision {
  package::FusionRefusal refusal = package::FusionRefusal::kNone;  // kNone: runs fused
  std::string at_node;  // where the target's matcher stopped, when refused
};

struct CompiledModel {
  Model model;  // shares its graphs: RdpResult's facts are keyed by their addresses
  RdpResult rdp;
  CompileOptions options;
  // What RDP's shape facts allow (opt::fuse), and per candidate group the target's verdict. The
  // plan's groups (plan.fusion) are the candidates the target runs fused plus one group per node
  // of each refused candidate.
  opt::FusionPlan candidates;
  std::vector<GroupDecision> decisions;  // per candidate group
  opt::MemoryPlan plan;
  rt::ProgramDesc program;  // built from exactly `plan` (empty without options.build_program)
  // The program's arena tensors' lifetimes over its main-graph steps, as a session derives them
  // (runtime/program/program_dataflow.h): what a layout made at a binding is made over.
  std::vector<plan::Lifetime> program_lives;
  // What each node computes (op_work.h) over RDP's facts: the roofline's numerator, per node,
  // per group and in total (also when compiled up to RDP only).
  opt::ModelWork work;

  const Graph& graph() const { return *model.graph; }
  // Candidate groups of more than one node that run as one kernel, and that are split.
  int fused_groups() const;
  int refused_groups() const;
};

// Errors: RDP's, the planner's and the program builder's (a value the runtime cannot represent),
// each naming what failed.
Expected<CompiledModel> compile(Model model, const CompileOptions& options = {});
// compile, keeping only the program (for what runs a model and needs no view of it).
Expected<rt::ProgramDesc> compile_program(Model model, const CompileOptions& options = {});
// The plan `compiled` would have with fuse = false, everything else as it was compiled (one node
// per step, every value in the arena): what fusion saves, made from the same RDP without
// importing or propagating again.
Expected<opt::MemoryPlan> plan_unfused(const CompiledModel& compiled);
// import_onnx_file with options.import, then compile.
Expected<CompiledModel> compile_file(const std::string& path, const CompileOptions& options = {});

// The compiled program for `target`: a copy of compiled.program, with the generated compute
// shaders when the target is Vulkan and the model was compiled for the CPU (the studio's Backend
// dock asks this of the document's model without planning again).
Expected<rt::ProgramDesc> program_for(const CompiledModel& compiled, Target target);

// The plan as a view shows it at `binding` (input symbols; unbound execution symbols take their
// report value): opt::evaluate_plan on the compiled plan. The runtime instantiates the same plan
// program at the same binding (tests/pipeline check that, tensor by tensor).
Expected<opt::PlanAtBinding> plan_at(const CompiledModel& compiled, const sym::Binding& binding,
                                     bool greedy_yardstick = true);

}  // namespace sod2::pipeline
