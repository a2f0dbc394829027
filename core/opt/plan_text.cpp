#include "core/opt/plan_text.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

#include "core/sym/bounded_text.h"
#include "core/text/text_table.h"

namespace sod2::opt {
namespace {

using text::Align;
using text::TextTable;

// Names past this many columns lose their middle; their ends tell layers apart.
constexpr size_t kNameWidth = 48;
// A symbolic size this long is unreadable in a table anyway; the JSON has it whole.
constexpr size_t kExpressionWidth = 72;

std::string steps(const Lifetime& l) {
  return std::to_string(l.first_step) + ".." + std::to_string(l.last_step);
}

std::string order_line(const MemoryPlan& plan) {
  return "order    " + plan.order.strategy + ": peak " + std::to_string(plan.order.peak_bytes) +
         " bytes at the upper bounds (source order " +
         std::to_string(plan.order.source_peak_bytes) + ")";
}

std::string tensors_line(const TensorSet& set) {
  size_t views = 0;
  for (const ArenaTensor& t : set.tensors) views += t.views.size();
  // A view (a Reshape's output...) is its input's bytes: counted, never placed.
  const std::string viewing =
      views == 0 ? "" : " (and " + std::to_string(views) + " views of their bytes)";
  return "tensors  " + std::to_string(set.tensors.size()) + " in the arena" + viewing + ", " +
         std::to_string(set.package_constants) + " constants in the package, " +
         std::to_string(set.fused_values) + " kept inside fused groups, " +
         std::to_string(set.off_arena.size()) + " left out\n";
}

std::string layering_and_arena_lines(const MemoryPlan& plan) {
  return "layering " + plan.symbolic.placement + " greedy at " +
         (plan.symbolic.reference == 0
              ? std::string("the upper bounds")
              : "checked binding " + std::to_string(plan.symbolic.reference)) +
         "\n" + "arena    " + sym::bounded_text(plan.symbolic.arena_bytes) + "\n";
}

// The binding line and, where it is not the whole-range plan, which layout runs there.
std::string binding_lines(const MemoryPlan& plan, const PlanAtBinding& at) {
  std::string out = "binding  " + binding_text(at.binding) + "\n";
  if (at.version >= 0) {
    const PlanVersions& v = plan.versions;
    out += "version  " + std::to_string(at.version) + " of " + std::to_string(v.versions.size()) +
           " bucketed, for " + v.grid.cell_text(v.grid.cell_of(at.binding)) + "\n";
  } else if (at.version == plan::kBindingGreedyVersion) {
    out +=
        "layout   greedy by size at this binding: every size is known before the first step, "
        "and it needs less than the ahead-of-time plan (" +
        std::to_string(at.version_arena_bytes) + " bytes)\n";
  } else if (at.version == plan::kBindingLayeringVersion) {
    out +=
        "layout   laid out at this binding: a layering chosen at these input sizes with the "
        "execution symbols at their bounds here, half of them and their low ends, which the "
        "runtime evaluates as each is bound (the plan's own layout needs " +
        std::to_string(at.version_arena_bytes) + " bytes here)\n";
  }
  return out;
}

std::string arena_at_binding_line(const PlanAtBinding& at) {
  return "arena    " + std::to_string(at.arena_bytes) + " bytes; lower bound " +
         std::to_string(at.lower_bound_bytes) + ", greedy " + std::to_string(at.greedy_bytes) +
         ", naive " + std::to_string(at.naive_bytes) + ", source order peak " +
         std::to_string(at.source_order_peak_bytes) + "\n";
}

TextTable placed_table() {
  return TextTable({{"tensor", Align::kLeft, kNameWidth},
                    {"steps"},
                    {"size", Align::kRight},
                    {"offset", Align::kRight}},
                   "  ");
}

void add_placed_row(TextTable& table, const MemoryPlan& plan, const PlanAtBinding& at, size_t t) {
  table.add_row({plan.tensors.tensors[t].name, steps(at.tensors[t].life),
                 std::to_string(at.tensors[t].size), std::to_string(at.tensors[t].offset)});
}

}  // namespace

std::string binding_text(const sym::Binding& binding) {
  std::map<std::string, int64_t> sorted;
  for (const auto& [s, v] : binding) sorted[s.name()] = v;
  std::string out;
  for (const auto& [name, v] : sorted)
    out += (out.empty() ? "" : ", ") + name + "=" + std::to_string(v);
  return out.empty() ? "(no symbols)" : out;
}

std::string symbolic_plan_text(const Graph& graph, const MemoryPlan& plan) {
  std::string out = order_line(plan) + "\n";
  TextTable order({{"step", Align::kRight}, {"node", Align::kLeft, kNameWidth}, {"op"}}, "  ");
  for (size_t i = 0; i < plan.order.steps.size(); ++i) {
    const auto& nodes = plan.units.nodes[static_cast<size_t>(plan.order.steps[i])];
    // The count goes after the elided name so that eliding never hides it.
    std::string name = text::elide_middle(graph.node(nodes.front()).name, kNameWidth - 8), ops;
    if (nodes.size() > 1) name += " (+" + std::to_string(nodes.size() - 1) + ")";
    for (NodeId n : nodes) ops += (ops.empty() ? "" : "+") + graph.node(n).op_type;
    order.add_row({std::to_string(i), name, ops});
  }
  out += order.str();
  const TensorSet& set = plan.tensors;
  out += tensors_line(set);
  const bool segmented =
      std::any_of(plan.segments.begin(), plan.segments.end(), [](int32_t s) { return s > 0; });
  // The offset goes last: it is the longest cell, and nothing after it needs aligning.
  std::vector<text::Column> columns{{"tensor", Align::kLeft, kNameWidth}, {"steps"}};
  if (segmented) columns.push_back({"segment", Align::kRight});
  columns.push_back({"size", Align::kLeft, kExpressionWidth});
  columns.push_back({"offset"});
  TextTable tensors(std::move(columns), "  ");
  for (size_t t = 0; t < set.tensors.size(); ++t) {
    std::vector<std::string> row{set.tensors[t].name, steps(plan.lives[t])};
    if (segmented) row.push_back(std::to_string(plan.segments[t]));
    row.push_back(sym::bounded_text(plan.symbolic.sizes[t]));
    row.push_back(sym::bounded_text(plan.symbolic.offsets[t]));
    tensors.add_row(std::move(row));
  }
  out += tensors.str();
  for (const OffArenaValue& v : set.off_arena)
    out += "  left out: " + text::visible(v.name) + ": " + text::visible(v.reason) + "\n";
  return out + layering_and_arena_lines(plan);
}

std::string symbolic_plan_summary_text(const MemoryPlan& plan) {
  return order_line(plan) + ", " + std::to_string(plan.order.steps.size()) + " steps\n" +
         tensors_line(plan.tensors) + layering_and_arena_lines(plan);
}

std::string plan_at_binding_text(const MemoryPlan& plan, const PlanAtBinding& at) {
  std::string out = binding_lines(plan, at);
  TextTable table = placed_table();
  for (size_t t = 0; t < at.tensors.size(); ++t) add_placed_row(table, plan, at, t);
  return out + table.str() + arena_at_binding_line(at);
}

std::string plan_at_binding_summary_text(const MemoryPlan& plan, const PlanAtBinding& at,
                                         size_t largest) {
  std::string out = binding_lines(plan, at);
  std::vector<size_t> by_size(at.tensors.size());
  std::iota(by_size.begin(), by_size.end(), size_t{0});
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](size_t a, size_t b) { return at.tensors[a].size > at.tensors[b].size; });
  by_size.resize(std::min(largest, by_size.size()));
  if (!by_size.empty()) {
    out += "largest  " + std::to_string(by_size.size()) + " of " +
           std::to_string(at.tensors.size()) + " tensors at this binding\n";
    TextTable table = placed_table();
    for (size_t t : by_size) add_placed_row(table, plan, at, t);
    out += table.str();
  }
  return out + arena_at_binding_line(at);
}

}  // namespace sod2::opt
