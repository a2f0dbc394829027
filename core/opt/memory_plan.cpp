#include "core/opt/memory_plan.h"

#include <algorithm>

#include "core/ops/constant_nodes.h"
#include "core/opt/lifetimes.h"
#include "core/opt/plan_types.h"
#include "core/opt/report_binding.h"
#include "core/opt/segments.h"
#include "core/sym/evaluate.h"
#include "core/sym/ranges.h"
#include "core/sym/transform.h"

namespace sod2::opt {
namespace {

// Tensors times bucket cells that versioning may spend greedy plans on.
constexpr size_t kVersionBudget = 60000;

// Every symbol any size mentions, sorted by name.
std::vector<sym::Symbol> size_symbols(const TensorSet& set) {
  std::vector<sym::Symbol> out;
  for (const ArenaTensor& t : set.tensors) {
    for (const sym::Symbol& s : sym::free_symbols(t.bytes)) {
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const sym::Symbol& a, const sym::Symbol& b) { return a.name() < b.name(); });
  return out;
}

Expected<std::vector<int64_t>> sizes_at(const TensorSet& set, const sym::Binding& binding) {
  std::vector<int64_t> sizes;
  sizes.reserve(set.tensors.size());
  for (const ArenaTensor& t : set.tensors) {
    auto v = sym::evaluate(t.bytes, binding);
    if (!v.ok()) return v.status().with_context("size of '" + t.name + "'");
    sizes.push_back(std::max<int64_t>(*v, 0));
  }
  return sizes;
}

// Sizes at the upper bounds, for heuristics only: a size that overflows there takes a large
// stand-in so that sums of a few thousand of them still fit in int64.
std::vector<int64_t> reference_sizes(const TensorSet& set, const sym::Binding& reference) {
  constexpr int64_t kHuge = int64_t{1} << 40;
  std::vector<int64_t> sizes;
  sizes.reserve(set.tensors.size());
  for (const ArenaTensor& t : set.tensors) {
    auto v = sym::evaluate(t.bytes, reference);
    sizes.push_back(v.ok() ? std::clamp<int64_t>(*v, 0, kHuge) : kHuge);
  }
  return sizes;
}

// Sizes at `binding` (input symbols) with the execution symbols at their report value (their
// bound at this binding), and, when there are any, also at half of it and at their low end:
// execution symbols are not bucketed, so a layering must hold up across their whole span, not
// only where a report puts them.
std::vector<std::vector<int64_t>> exec_spread_sizes(const TensorSet& set, const RdpResult& rdp,
                                                    std::span<const sym::Symbol> symbols,
                                                    const sym::Binding& binding) {
  const sym::Binding full = complete_binding(rdp, symbols, binding);
  std::vector<std::vector<int64_t>> out{reference_sizes(set, full)};
  bool any = false;
  for (const sym::Symbol& s : symbols) any = any || rdp.is_execution_symbol(s);
  if (!any) return out;
  for (int64_t num : {1, 0}) {  // halves, then the low ends
    sym::Binding b = full;
    for (const sym::Symbol& s : symbols) {
      if (!rdp.is_execution_symbol(s) || binding.count(s)) continue;
      const sym::SymbolRange r = rdp.ranges().get(s);
      const int64_t m = std::max<int64_t>(r.multiple, 1);
      const int64_t v = r.lo + (full.at(s) - r.lo) * num / 2;
      b[s] = std::max(r.lo, v / m * m);
    }
    out.push_back(reference_sizes(set, b));
  }
  return out;
}

}  // namespace

namespace {
bool launches_kernel(const Graph& graph, const Node& node) {
  return !is_constant_node(graph, node);
}
}  // namespace

int32_t count_kernels(const Graph& graph) {
  int32_t n = 0;
  for (const Node& node : graph.nodes()) n += launches_kernel(graph, node);
  return n;
}

int32_t count_kernel_steps(const Graph& graph, const StepUnits& units) {
  int32_t n = 0;
  for (const auto& nodes : units.nodes) {
    n += std::any_of(nodes.begin(), nodes.end(),
                     [&](NodeId x) { return launches_kernel(graph, graph.node(x)); });
  }
  return n;
}

sym::Binding typical_binding(const RdpResult& rdp) {
  sym::Binding b;
  for (const SymbolInfo& info : rdp.symbols()) {
    if (info.kind != SymbolKind::kInput) continue;
    const sym::SymbolRange r = rdp.ranges().get(info.symbol);
    const int64_t m = std::max<int64_t>(r.multiple, 1);
    int64_t v = (r.lo + (r.hi - r.lo) / 4 + m / 2) / m * m;
    if (v < r.lo) v += m;
    if (v > r.hi) v -= m;
    b[info.symbol] = std::clamp(v, r.lo, r.hi);
  }
  return b;
}

Expected<MemoryPlan> plan_memory(const Graph& graph, const RdpResult& rdp,
                                 const MemoryPlanOptions& options) {
  MemoryPlan plan;
  if (options.fusion) {
    plan.fusion = *options.fusion;
    plan.units = units_of_fusion(graph, plan.fusion);
    plan.tensors = arena_tensors(graph, rdp, &plan.fusion);
  } else {
    plan.fusion.group_of.assign(graph.num_nodes(), -1);
    plan.fusion.kernels_unfused = count_kernels(graph);
    plan.units = units_per_node(graph);
    plan.tensors = arena_tensors(graph, rdp);
  }
  const std::vector<sym::Symbol> symbols = size_symbols(plan.tensors);
  plan.reference = complete_binding(rdp, symbols);
  const std::vector<int64_t> ref_sizes = reference_sizes(plan.tensors, plan.reference);

  std::vector<std::vector<int64_t>> check_sizes;  // the sizes at the checked bindings
  for (const sym::Binding& b : options.check_bindings) {
    auto sizes = sizes_at(plan.tensors, complete_binding(rdp, symbols, b));
    if (sizes.ok()) check_sizes.push_back(std::move(*sizes));
  }
  // Also a typical size, whatever the caller checks: an order chosen at the upper bounds alone
  // can peak far above the file's order at the small sizes models mostly run at (moe_tiny at
  // batch 1, seq 16: 62,592 against 37,888 bytes).
  sym::Binding low;
  for (const SymbolInfo& info : rdp.symbols())
    if (info.kind == SymbolKind::kInput) low[info.symbol] = rdp.ranges().get(info.symbol).lo;
  for (const sym::Binding& b : {typical_binding(rdp), low}) {
    if (auto sizes = sizes_at(plan.tensors, complete_binding(rdp, symbols, b)); sizes.ok())
      check_sizes.push_back(std::move(*sizes));
  }
  SOD2_ASSIGN_OR_RETURN(std::vector<int32_t> source, source_unit_order(graph, plan.units));
  if (options.reorder) {
    SOD2_ASSIGN_OR_RETURN(plan.order, choose_execution_order(graph, plan.units, plan.tensors,
                                                             ref_sizes, check_sizes));
  } else {
    plan.order.steps = source;
    plan.order.order = node_order(plan.units, source);
    plan.order.strategy = "source";
  }
  SOD2_ASSIGN_OR_RETURN(plan.lives,
                        tensor_lifetimes(graph, plan.units, plan.order.steps, plan.tensors));
  SOD2_ASSIGN_OR_RETURN(plan.source_lives,
                        tensor_lifetimes(graph, plan.units, source, plan.tensors));
  plan.order.peak_bytes = peak_live_bytes(ref_sizes, plan.lives);
  plan.order.source_peak_bytes = peak_live_bytes(ref_sizes, plan.source_lives);

  SOD2_ASSIGN_OR_RETURN(std::vector<int32_t> step_of,
                        steps_of(graph, plan.units, plan.order.steps));
  plan.segments = tensor_segments(graph, rdp, plan.tensors, step_of);

  std::vector<sym::SymExpr> sizes;
  sizes.reserve(plan.tensors.tensors.size());
  for (const ArenaTensor& t : plan.tensors.tensors) sizes.push_back(t.bytes);
  // Layerings are built at the upper bounds and at each checked binding, and judged at all.
  std::vector<std::vector<int64_t>> points{ref_sizes};
  points.insert(points.end(), check_sizes.begin(), check_sizes.end());
  // Judged also with the execution symbols lower (exec_spread_sizes).
  std::vector<std::vector<int64_t>> judges = points;
  std::vector<sym::Binding> judged_at{sym::Binding{}};
  judged_at.insert(judged_at.end(), options.check_bindings.begin(), options.check_bindings.end());
  for (const sym::Binding& b : judged_at) {
    std::vector<std::vector<int64_t>> spread = exec_spread_sizes(plan.tensors, rdp, symbols, b);
    judges.insert(judges.end(), std::make_move_iterator(spread.begin() + 1),
                  std::make_move_iterator(spread.end()));
  }
  SymbolicPlanRequest request;
  request.sizes = sizes;
  request.lives = plan.lives;
  request.references = points;
  request.judges = judges;
  request.segments = plan.segments;
  request.ranges = &rdp.ranges();
  plan.symbolic = plan_symbolic(request);
  SOD2_ASSIGN_OR_RETURN(plan.program, PlanProgram::compile(plan.symbolic));

  if (options.versions) {
    std::vector<sym::Symbol> inputs;
    for (const sym::Symbol& s : symbols)
      if (!rdp.is_execution_symbol(s)) inputs.push_back(s);
    VersionRequest vr;
    vr.sizes = sizes;
    vr.lives = plan.lives;
    vr.segments = plan.segments;
    vr.ranges = &rdp.ranges();
    vr.whole_range = &plan.symbolic;
    vr.sizes_at = [&](const sym::Binding& b) {
      return reference_sizes(plan.tensors, complete_binding(rdp, symbols, b));
    };
    vr.more_judges_at = [&](const sym::Binding& b) {
      std::vector<std::vector<int64_t>> spread = exec_spread_sizes(plan.tensors, rdp, symbols, b);
      spread.erase(spread.begin());  // sizes_at's
      return spread;
    };
    // Each cell costs a few greedy plans over every tensor: fewer cells for big graphs keep
    // planning time near the single plan's.
    const size_t max_cells = std::clamp<size_t>(
        kVersionBudget / std::max<size_t>(plan.tensors.tensors.size(), 1), 1, 27);
    SOD2_ASSIGN_OR_RETURN(plan.versions,
                          plan_versions(make_bucket_grid(rdp.ranges(), inputs, 3, max_cells), vr));
  }
  return plan;
}

int32_t MemoryPlan::version_for(const sym::Binding& binding) const {
  if (versions.version_of_cell.empty()) return -1;
  return versions.version_of_cell[versions.grid.cell_of(binding)];
}

const SymbolicPlan& MemoryPlan::symbolic_of(int32_t version) const {
  return version < 0 ? symbolic : versions.versions[static_cast<size_t>(version)].symbolic;
}

const PlanProgram& MemoryPlan::program_of(int32_t version) const {
  return version < 0 ? program : versions.versions[static_cast<size_t>(version)].program;
}

bool binding_greedy_applies(const MemoryPlan& plan, const RdpResult& rdp) {
  const auto symbols = plan.program.symbols();
  return std::none_of(symbols.begin(), symbols.end(),
                      [&](const sym::Symbol& s) { return rdp.is_execution_symbol(s); });
}

namespace {

// A plan program that fails at a binding (a size past int64, mostly where execution symbols
// stand at bounds RDP could not make small): the first tensor whose size fails, its size and the
// execution symbols in it, so the message says what to bind. The program's own error where no
// tensor's size alone fails (an offset or the arena).
Status explain_plan_failure(const MemoryPlan& plan, const RdpResult& rdp,
                            const sym::Binding& binding, const Status& failure) {
  for (const ArenaTensor& t : plan.tensors.tensors) {
    if (sym::evaluate(t.bytes, binding).ok()) continue;
    std::string unbound;
    for (const sym::Symbol& s : sym::free_symbols(t.bytes)) {
      if (!rdp.is_execution_symbol(s)) continue;
      const auto it = binding.find(s);
      unbound += (unbound.empty() ? "" : ", ") + s.name() +
                 (it == binding.end() ? "" : " = " + std::to_string(it->second));
    }
    std::string message = "the memory plan at this binding: tensor '" + t.name + "' would take " +
                          t.bytes.to_string() + " bytes, past int64";
    if (!unbound.empty())
      message +=
          "; it depends on execution symbols, sizes only running tells, taken at the "
          "upper bounds RDP derived (" +
          unbound +
          "): bind them with --bind to plan at "
          "given sizes";
    return invalid_argument(message);
  }
  return failure;
}

}  // namespace

Expected<PlanAtBinding> evaluate_plan(const MemoryPlan& plan, const RdpResult& rdp,
                                      const sym::Binding& binding, std::optional<int32_t> version,
                                      bool greedy_yardstick) {
  PlanAtBinding at;
  at.binding = complete_binding(rdp, plan.program.symbols(), binding);
  at.version = version ? *version : plan.version_for(at.binding);
  if (at.version < -1 || at.version >= static_cast<int32_t>(plan.versions.versions.size()))
    return internal_error("no plan version " + std::to_string(at.version));
  const PlanProgram& program = plan.program_of(at.version);
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> inputs, program.inputs_from(at.binding));
  PlanInstance inst = program.make_instance();
  if (Status st = program.instantiate(inputs, &inst); !st.ok())
    return explain_plan_failure(plan, rdp, at.binding, st);
  const size_t n = inst.num_tensors();
  // Sizes, offsets, arena: as the runtime's plan values, so it and this pick the same layout.
  std::vector<int64_t> values(2 * n + 1);
  for (size_t t = 0; t < n; ++t) {
    values[t] = inst.size(t);
    values[n + t] = inst.offset(t);
  }
  values[2 * n] = inst.arena_bytes();
  at.version_arena_bytes = inst.arena_bytes();
  if (!version && binding_greedy_applies(plan, rdp)) {
    // Its buffers and the lifetimes' overlaps carry over to the next binding of the same plan
    // (a sweep evaluates hundreds); what it places depends only on its arguments.
    thread_local plan::GreedyLayout greedy;
    std::vector<int64_t> scratch;
    if (plan::use_greedy_if_smaller(values, plan.lives, &greedy, &scratch))
      at.version = plan::kBindingGreedyVersion;
  }
  const std::vector<int64_t> sizes(values.begin(), values.begin() + static_cast<ptrdiff_t>(n));
  at.tensors.resize(n);
  for (size_t t = 0; t < n; ++t) at.tensors[t] = {values[t], values[n + t], plan.lives[t]};
  at.arena_bytes = values[2 * n];
  at.lower_bound_bytes = peak_live_bytes(sizes, plan.lives);
  at.naive_bytes = total_bytes(sizes);
  if (greedy_yardstick) at.greedy_bytes = plan_greedy_by_size(sizes, plan.lives).arena_bytes;
  at.source_order_peak_bytes = peak_live_bytes(sizes, plan.source_lives);
  return at;
}

}  // namespace sod2::opt
