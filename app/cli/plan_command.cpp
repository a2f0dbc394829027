#include "app/cli/plan_command.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>

#include "app/cli/backend_args.h"
#include "app/cli/command_line.h"
#include "app/cli/plan_report.h"
#include "app/cli/symbol_args.h"
#include "core/opt/memory_plan.h"
#include "core/opt/report_binding.h"
#include "core/pipeline/compiled_model.h"
#include "core/rdp/binding.h"

namespace sod2::cli {
namespace {

CommandLine make_parser() {
  std::vector<CommandLine::Flag> flags = {
      {"--bind", true,
       "instantiate the plan at these sizes (input symbols; execution symbols optional, else "
       "their upper bound); without it the plan is shown at the upper bounds",
       "k=v,..."},
      {"--range", true, "declare symbol ranges; MULTIPLE defaults to 1", "k=lo:hi[:multiple],..."},
      {"--ranges", true,
       "read ranges from a JSON file: {\"height\": [32, 1024, 32]} or a models.json entry", "FILE"},
      {"--json", false,
       "print one JSON document (schema_version, symbols, order, groups, plan with symbolic "
       "sizes and offsets, binding, tensors with size/offset/first_step/last_step, summary)",
       ""},
      {"--verbose", false,
       "also print every fused group, every step of the order and every tensor's symbolic and "
       "bound size and offset (thousands of lines on a real model)",
       ""},
      {"--source-order", false, "keep the file's node order instead of choosing one", ""},
      {"--no-fusion", false,
       "plan one node per step with every value materialised, as an unfused runtime would", ""},
      {"--no-external-data", false, "do not read external weight files (shapes only)", ""},
      {"--help", false, "show this help", ""},
  };
  for (auto& f : backend_flags()) flags.push_back(std::move(f));
  return CommandLine(std::move(flags));
}

std::string usage() {
  return "usage: sod2 plan MODEL.onnx [options]\n\n"
         "Plans the memory of a dynamic model: an execution order that keeps few bytes live, and\n"
         "one arena with every tensor's offset as an expression of the input symbols, valid for\n"
         "every size inside the ranges. Shows the plan instantiated at --bind (or at the upper\n"
         "bounds) next to its lower bound, the per-binding greedy plan and no reuse at all.\n"
         "By default a summary: the groups by kind, the order's peak, the arena, the execution\n"
         "symbols it assumes and the few largest tensors; --verbose adds every group, step and\n"
         "tensor, --json gives everything to tools.\n"
         "With --backend vulkan: also where each node runs on that backend (the device, or the\n"
         "CPU and why).\n\n"
         "options:\n" +
         make_parser().flags_help();
}

// Median time of one instantiation over a few runs, in microseconds.
double time_instantiation(const opt::MemoryPlan& plan, const sym::Binding& binding) {
  auto inputs = plan.program.inputs_from(binding);
  if (!inputs.ok()) return 0;
  opt::PlanInstance inst = plan.program.make_instance();
  std::vector<double> us;
  for (int i = 0; i < 101; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    (void)plan.program.instantiate(*inputs, &inst);
    us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(us.begin(), us.begin() + 50, us.end());
  return us[50];
}

}  // namespace

int run_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl = make_parser();
  RdpOptions options;
  std::map<std::string, int64_t> bind_values;
  BackendChoice backend_choice;
  try {
    cl.parse(args);
    if (cl.has("--help")) {
      out << usage();
      return 0;
    }
    options = rdp_options_from(cl.value("--ranges"), cl.value("--range"));
    if (auto b = cl.value("--bind")) bind_values = parse_bindings(*b);
    backend_choice = backend_choice_from(cl);
  } catch (const std::invalid_argument& e) {
    err << "sod2 plan: " << e.what() << "\n";
    return 1;
  }
  if (cl.positional().size() != 1) {
    err << "sod2 plan: expected exactly one MODEL.onnx (see sod2 plan --help)\n";
    return 1;
  }
  pipeline::CompileOptions compile_options;
  compile_options.import.load_external_data = !cl.has("--no-external-data");
  compile_options.build_program = !cl.has("--no-external-data") || backend_choice.vulkan;
  compile_options.rdp = options;
  compile_options.reorder = !cl.has("--source-order");
  compile_options.fuse = !cl.has("--no-fusion");
  compile_options.target =
      backend_choice.vulkan ? pipeline::Target::kVulkan : pipeline::Target::kCpu;
  // The plan shown is the compiled model's: the one `sod2 compile` packages and `sod2 run`
  // executes, over the groups the runtime really runs fused.
  Expected<pipeline::CompiledModel> compiled =
      pipeline::compile_file(cl.positional()[0], compile_options);
  if (!compiled.ok()) {
    err << "sod2 plan: " << compiled.status().message() << "\n";
    return 1;
  }
  const Model& model = compiled->model;
  const RdpResult& rdp = compiled->rdp;
  const opt::MemoryPlan& plan = compiled->plan;
  std::vector<std::string> warnings;
  for (const Diagnostic& d : rdp.diagnostics()) {
    if (d.severity != Severity::kWarning) continue;
    if (d.message.rfind("no range declared", 0) == 0 || d.message.rfind("a range is given", 0) == 0)
      warnings.push_back(d.message);
  }
  std::optional<sym::Binding> binding;
  if (cl.has("--bind")) {
    auto b = make_binding(rdp, bind_values);
    if (!b.ok()) {
      err << "sod2 plan: --bind: " << b.status().message() << "\n";
      return 1;
    }
    binding = std::move(*b);
  }
  Expected<opt::PlanAtBinding> at =
      pipeline::plan_at(*compiled, binding ? *binding : plan.reference);
  if (!at.ok()) {
    err << "sod2 plan: " << (binding ? "--bind: " : "") << at.status().message() << "\n";
    return 1;
  }
  // An execution symbol the plan needs that RDP could not bound: say what the report took.
  for (const sym::Symbol& s : plan.program.symbols()) {
    if (rdp.is_execution_symbol(s) && opt::has_no_useful_bound(rdp, s) &&
        !bind_values.count(s.name())) {
      warnings.push_back("execution symbol " + s.name() + " has no bound; the report takes " +
                         std::to_string(at->binding.at(s)) + " (bind it with --bind " + s.name() +
                         "=N)");
    }
  }
  for (const std::string& w : warnings) err << "sod2 plan: warning: " << w << "\n";
  const double us = time_instantiation(plan, at->binding);
  PlanReportData data{model, rdp,      plan,           *at, binding.has_value(), {},
                      us,    warnings, &compiled->work};
  for (const auto& [name, value] : bind_values) data.user_bound.insert(name);
  if (!backend_choice.vulkan) {
    if (cl.has("--json")) {
      out << plan_json(data).dump(1) << "\n";
    } else {
      out << plan_text(data, cl.has("--verbose"));
    }
    return 0;
  }
  // Where each node runs is decided when a session is made, from the compiled program.
  rt::ProgramDesc program = std::move(compiled->program);
  auto backend = make_backend(backend_choice);
  if (!backend.ok()) {
    err << "sod2 plan: " << backend.status().message() << "\n";
    return 1;
  }
  rt::SessionOptions session_options;
  session_options.threads = 1;
  session_options.backend = *backend;
  auto session =
      rt::Session::create(std::move(program), rt::KernelRegistry::standard(), session_options);
  if (!session.ok()) {
    err << "sod2 plan: " << session.status().message() << "\n";
    return 1;
  }
  if (cl.has("--json")) {
    nlohmann::ordered_json j = plan_json(data);
    j["backend"] = backend_placement_json(**session);
    out << j.dump(1) << "\n";
  } else {
    out << plan_text(data, cl.has("--verbose")) << "\n";
    print_backend_placement(**session, out);
  }
  return 0;
}

}  // namespace sod2::cli
