#include "core/opt/plan_text.h"

#include <algorithm>
#include <map>
#include <vector>

#include "core/sym/bounded_text.h"

namespace sod2::opt {
namespace {

// Rows of cells printed with every column padded to its widest cell, two spaces apart.
std::string table(const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string steps(const Lifetime& l) {
  return std::to_string(l.first_step) + ".." + std::to_string(l.last_step);
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
  std::string out = "order    " + plan.order.strategy + ": peak " +
                    std::to_string(plan.order.peak_bytes) +
                    " bytes at the upper bounds (source order " +
                    std::to_string(plan.order.source_peak_bytes) + ")\n";
  std::vector<std::vector<std::string>> rows{{"step", "node", "op"}};
  for (size_t i = 0; i < plan.order.steps.size(); ++i) {
    const auto& nodes = plan.units.nodes[static_cast<size_t>(plan.order.steps[i])];
    std::string name = graph.node(nodes.front()).name, ops;
    if (nodes.size() > 1) name += " (+" + std::to_string(nodes.size() - 1) + ")";
    for (NodeId n : nodes) ops += (ops.empty() ? "" : "+") + graph.node(n).op_type;
    rows.push_back({std::to_string(i), name, ops});
  }
  out += table(rows, "  ");
  const TensorSet& set = plan.tensors;
  out += "tensors  " + std::to_string(set.tensors.size()) + " in the arena, " +
         std::to_string(set.package_constants) + " constants in the package, " +
         std::to_string(set.fused_values) + " kept inside fused groups, " +
         std::to_string(set.off_arena.size()) + " left out\n";
  rows = {{"tensor", "steps", "size", "offset"}};
  const bool segmented =
      std::any_of(plan.segments.begin(), plan.segments.end(), [](int32_t s) { return s > 0; });
  if (segmented) rows[0].push_back("segment");
  for (size_t t = 0; t < set.tensors.size(); ++t) {
    rows.push_back({set.tensors[t].name, steps(plan.lives[t]),
                    sym::bounded_text(plan.symbolic.sizes[t]),
                    sym::bounded_text(plan.symbolic.offsets[t])});
    if (segmented) rows.back().push_back(std::to_string(plan.segments[t]));
  }
  out += table(rows, "  ");
  for (const OffArenaValue& v : set.off_arena)
    out += "  left out: " + v.name + ": " + v.reason + "\n";
  out += "layering " + plan.symbolic.placement + " greedy at " +
         (plan.symbolic.reference == 0
              ? std::string("the upper bounds")
              : "checked binding " + std::to_string(plan.symbolic.reference)) +
         "\n";
  out += "arena    " + sym::bounded_text(plan.symbolic.arena_bytes) + "\n";
  return out;
}

std::string plan_at_binding_text(const MemoryPlan& plan, const PlanAtBinding& at) {
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
  }
  std::vector<std::vector<std::string>> rows{{"tensor", "steps", "size", "offset"}};
  for (size_t t = 0; t < at.tensors.size(); ++t) {
    rows.push_back({plan.tensors.tensors[t].name, steps(at.tensors[t].life),
                    std::to_string(at.tensors[t].size), std::to_string(at.tensors[t].offset)});
  }
  out += table(rows, "  ");
  out += "arena    " + std::to_string(at.arena_bytes) + " bytes; lower bound " +
         std::to_string(at.lower_bound_bytes) + ", greedy " + std::to_string(at.greedy_bytes) +
         ", naive " + std::to_string(at.naive_bytes) + ", source order peak " +
         std::to_string(at.source_order_peak_bytes) + "\n";
  return out;
}

}  // namespace sod2::opt
