// One opened model as the studio shows it (DESIGN §8): the compiled model (pipeline::compile:
// the imported graph, RDP's facts, the fused groups the CPU runs, the memory plan and the program
// the runtime executes), made once when the model is opened; a binding of the input symbols then
// only re-evaluates (the compiled plan program and the symbolic dims), never re-analyses. No Qt:
// the widgets and the tests read it alike.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/onnx/onnx_shape_io.h"
#include "core/opt/fusion.h"
#include "core/opt/memory_plan.h"
#include "core/pipeline/compiled_model.h"
#include "core/rdp/rdp.h"
#include "core/status/status.h"

namespace sod2::studio {

struct OpenOptions {
  RdpOptions rdp;  // symbol ranges (from --ranges / --range)
  // Where input symbols start: a ranges file's "default"s (read_range_defaults). Without one,
  // the ranges file beside the model gives them; else a typical size.
  std::map<std::string, int64_t> start_values;
  bool fuse = true;  // plan over fused groups, as the runtime runs them
  bool load_external_data = true;
};

// A symbol the bindings bar shows: its range and the value it starts at. Input symbols first,
// then execution symbols (a NonZero's count, a TopK's k, a Loop's trip count: known only while
// running), each of which may be bound up to its bound at the input symbols' values.
struct SymbolControl {
  std::string name;
  int64_t lo = 1, hi = 1, multiple = 1;
  // A typical size: a quarter of the way up a declared range, on its multiple; for a symbol
  // without one (its range is RDP's default 1..65536) 64, so the first picture is not of a
  // 64k-token input. For an execution symbol, `hi`: it starts "at its bound", following the bound
  // as the input symbols move (initial_values() leaves it out).
  int64_t initial = 1;
  bool declared = false;
  std::string origin;  // "input image dim 2", "node /NonZero output 0 dim 1"
  // An execution symbol: `hi` is its bound at the initial binding (StudioDocument::
  // execution_upper gives it at others) and `bound` the bound's expression ("h*w"; empty when the
  // op's rule knows none and a report takes a fixed value).
  bool execution = false;
  std::string bound;
};

// An execution symbol the plan at a binding sizes at its bound (not bound by the user, or bound
// to the most it can be).
struct ExecutionAtBound {
  std::string name;
  int64_t value = 0;
  std::string bound;  // "h*w", or empty: no bound expression
  std::string origin;
};

// Called between the stages of open() with a fraction in [0, 1] and what runs next.
using ProgressFn = std::function<void(double fraction, const std::string& stage)>;

class StudioDocument {
 public:
  // Imports and compiles (pipeline::compile). `cancel` (if given) is polled between stages: a
  // cancelled open returns a Cancelled-style error. Errors name the file and the stage that failed.
  static Expected<std::unique_ptr<StudioDocument>> open(const std::string& path,
                                                        const OpenOptions& options,
                                                        const ProgressFn& progress = {},
                                                        const std::atomic<bool>* cancel = nullptr);

  const std::string& path() const { return path_; }
  // The one compiled model: what `sod2 compile` packages and `sod2 run` executes.
  const pipeline::CompiledModel& compiled() const { return *compiled_; }
  const Model& model() const { return compiled_->model; }
  const Graph& graph() const { return compiled_->graph(); }
  const RdpResult& rdp() const { return compiled_->rdp; }
  // The groups the runtime runs (each a step of the plan).
  const opt::FusionPlan& fusion() const { return compiled_->plan.fusion; }
  const opt::MemoryPlan& plan() const { return compiled_->plan; }
  const std::vector<SymbolControl>& symbols() const { return symbols_; }
  // Where the ranges came from: "--ranges/--range", "MODEL.ranges.json beside the model" or
  // "none declared".
  const std::string& ranges_source() const { return ranges_source_; }
  // The ranges RDP ran under (from the options or the file beside the model): what compiling
  // this model for a device uses too.
  const RdpOptions& rdp_options() const { return rdp_options_; }
  // What libonnx's own shape inference resolves on the same file (the baseline RDP beats); empty
  // when it failed (the summary says so) or when the file is a package.
  const std::optional<OnnxInferenceCounts>& onnx_counts() const { return onnx_counts_; }

  // The values of the input symbols, validated (range, multiple, assumptions). An execution
  // symbol in `values` takes that value (an error naming the symbol and the limit above its
  // bound at this binding); one absent takes its report bound. Errors name the symbol.
  Expected<sym::Binding> binding(const std::map<std::string, int64_t>& values) const;
  // The input symbols' initial values (execution symbols absent: they start at their bound).
  std::map<std::string, int64_t> initial_values() const;
  // The most execution symbol `name` can be when the other symbols take `values` (input symbols
  // absent from it at the top of their ranges, execution symbols at their bounds): the slider's
  // maximum. Errors: `name` is not an execution symbol of this model.
  Expected<int64_t> execution_upper(const std::string& name,
                                    const std::map<std::string, int64_t>& values) const;
  // The execution symbols `binding` (a complete one, from binding()) sizes at their bound.
  std::vector<ExecutionAtBound> executions_at_bound(const sym::Binding& binding) const;
  // The plan at a binding: offsets, sizes, lower bound, naive and greedy sizes.
  Expected<opt::PlanAtBinding> instantiate(const sym::Binding& binding) const;
  // Another plan of the same graph with the same options except fusion: one node per step and
  // every value in the arena (what fusion saves). Planned anew on each call.
  Expected<std::unique_ptr<opt::MemoryPlan>> plan_without_fusion() const;
  Expected<opt::PlanAtBinding> instantiate(const opt::MemoryPlan& plan,
                                           const sym::Binding& binding) const;

  // What the inspector shows for a node, as plain text lines (op, class, status, attributes,
  // inputs and outputs with symbolic dims and, at `binding`, concrete dims and bytes; its fused
  // group and why neighbours were not fused; diagnostics about it).
  std::string node_report(NodeId node, const sym::Binding& binding) const;
  // The same for a node of any graph of the model (an If/Loop/Scan body). Dims in a body may
  // use the body's execution symbols, which a binding leaves unknown ("?").
  std::string node_report(const Graph& g, NodeId node, const sym::Binding& binding) const;
  // The summary view: op histogram by class, dims resolved, arena vs lower bound vs naive, and
  // which execution symbols the plan sizes at their bound.
  std::string summary_report(const opt::PlanAtBinding& at) const;

  // "[batch,seq,128]" (symbolic) and "[1,16,128]" (at a binding; "?" where unknown).
  std::string dims_text(ValueId v) const;
  std::string dims_at_text(ValueId v, const sym::Binding& binding) const;
  std::optional<int64_t> bytes_at(ValueId v, const sym::Binding& binding) const;
  std::string dims_text(const Graph& g, ValueId v) const;
  std::string dims_at_text(const Graph& g, ValueId v, const sym::Binding& binding) const;
  std::optional<int64_t> bytes_at(const Graph& g, ValueId v, const sym::Binding& binding) const;

 private:
  StudioDocument() = default;

  std::string path_;
  RdpOptions rdp_options_;
  std::unique_ptr<pipeline::CompiledModel> compiled_;
  std::vector<SymbolControl> symbols_;
  std::string ranges_source_;
  std::optional<OnnxInferenceCounts> onnx_counts_;
  std::string onnx_counts_error_;
};

// Where a slider starts without a ranges file's default: a quarter of the way up the range, on
// the nearest value of its multiple, so the first picture is of a typical input (batch 4 of
// 1..16, 224 of 64..640 step 32) and not of the largest one (issue #23).
int64_t typical_size(int64_t lo, int64_t hi, int64_t multiple);

// MODEL.ranges.json for MODEL.onnx (any extension replaced), whether or not it exists.
std::string ranges_file_beside(const std::string& model_path);

}  // namespace sod2::studio
