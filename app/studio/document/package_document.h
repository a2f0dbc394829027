// A compiled .sod2 package as the studio shows it (issue #6: "also opens a compiled package"):
// the graph that runs (fused kernels as compiled, in execution order), its symbols and ranges,
// and its memory plan at any binding, evaluated with the package's own plan programs and
// versions — exactly what the runtime would lay out — and each value's dtype, storage and the
// symbolic dims RDP gave it (Value.dims). No Qt: tested without a display.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/studio/document/studio_document.h"
#include "app/studio/graph/display_graph.h"
#include "app/studio/plan/timeline_model.h"
#include "core/status/status.h"
#include "runtime/program/plan_layout.h"
#include "runtime/program/program.h"
#include "runtime/program/program_plan_at.h"

namespace sod2::studio {

// The package's plan at one binding, as a session lays it out.
using PackagePlanAt = plan::ProgramPlanAt;

class PackageDocument {
 public:
  // Loads and validates the package as the runtime does (every offset, index and program);
  // errors name the file and the problem.
  static Expected<std::unique_ptr<PackageDocument>> open(const std::string& path);

  const std::string& path() const { return path_; }
  const rt::ProgramDesc& program() const { return program_; }
  // The input symbols with their ranges, starting at their upper bounds; then the execution
  // symbols up to their (constant) bounds.
  const std::vector<SymbolControl>& symbols() const { return symbols_; }
  std::map<std::string, int64_t> initial_values() const;

  // An execution symbol absent from `values` takes its bound at the input symbols' values
  // (runtime/program/execution_bounds.h). Errors: an input symbol missing, outside its range or
  // off its multiple, or an execution symbol above its bound (named).
  Expected<PackagePlanAt> plan_at(const std::map<std::string, int64_t>& values) const;
  // The bound of execution symbol `name` at `values` (the input symbols, and the execution
  // symbols given; the others at their bounds), for the bindings bar's slider.
  Expected<int64_t> execution_upper(const std::string& name,
                                    const std::map<std::string, int64_t>& values) const;
  // One rectangle per arena tensor: its steps in the main graph's execution order.
  TimelineModel timeline(const PackagePlanAt& at) const;

  // The main graph as it runs: one display node per compiled node, inputs and outputs. With a
  // hierarchy (hierarchy()), the nodes of a closed name scope are drawn as the scope's box and the
  // open ones framed, as a model's are (apply_name_scopes).
  DisplayGraph display_graph(const GraphHierarchy* hierarchy = nullptr,
                             const std::set<int>& expanded_scopes = {}) const;
  // The name scopes of the compiled nodes' names ("/encoder/layers.3/attention/MatMul": a fused
  // kernel keeps its first node's name), with the readable depth open.
  GraphHierarchy hierarchy() const;
  // Main-graph compiled node `node` (in range): its name, op type and class.
  const std::string& node_name(int node) const;
  const std::string& node_op(int node) const;
  OpClass node_class(int node) const;
  size_t num_nodes() const { return program_.graphs.empty() ? 0 : program_.graphs[0].nodes.size(); }
  // Op, name, attributes count, inputs and outputs with dtype and storage (arena offset and
  // bytes at `at`).
  std::string node_report(int node, const PackagePlanAt& at) const;
  std::string summary_report(const PackagePlanAt& at) const;

 private:
  PackageDocument() = default;
  std::string value_text(int32_t value, const PackagePlanAt& at) const;

  std::string path_;
  rt::ProgramDesc program_;
  std::vector<SymbolControl> symbols_;
  // Per arena tensor: the first and last step it is live, and a value that lives there.
  std::vector<plan::Lifetime> lives_;     // per arena tensor, as the session derives them
  std::vector<int32_t> value_of_tensor_;  // per arena tensor: its main-graph value, or -1
  std::vector<std::vector<int32_t>> views_of_tensor_;  // per arena tensor: values viewing it
  std::shared_ptr<const CoreNodeNames> names_;         // the compiled nodes', for every drawing
};

}  // namespace sod2::studio
