#include "app/cli/plan_report.h"

#include <algorithm>
#include <map>

#include "core/opt/plan_text.h"
#include "core/opt/report_binding.h"
#include "core/sym/bounded_text.h"
#include "core/text/text_table.h"

namespace sod2::cli {
namespace {

using text::fixed;

using Json = nlohmann::ordered_json;

// Where a symbol's value in the report comes from: --bind, the top of its range (an input
// symbol without --bind), its bound at the binding (an execution symbol), or a stand-in (an
// execution symbol RDP could not bound).
const char* value_source(const PlanReportData& d, const sym::Symbol& s) {
  if (d.user_bound.count(s.name())) return "bind";
  if (!d.rdp.is_execution_symbol(s)) return "range_upper";
  return opt::has_no_useful_bound(d.rdp, s) ? "stand_in" : "execution_bound";
}

// A value's source in the report: bound by the user, or its upper bound (DESIGN §5).
Json symbols_json(const PlanReportData& d) {
  Json arr = Json::array();
  for (const SymbolInfo& info : d.rdp.symbols()) {
    const sym::SymbolRange r = d.rdp.ranges().get(info.symbol);
    Json j;
    j["name"] = info.symbol.name();
    j["kind"] = info.kind == SymbolKind::kInput ? "input" : "execution";
    j["range"] = {r.lo, r.hi, r.multiple};
    auto it = d.at.binding.find(info.symbol);
    if (it == d.at.binding.end()) {
      j["value"] = nullptr;  // the plan does not depend on it
    } else {
      j["value"] = it->second;
      j["value_source"] = value_source(d, info.symbol);
    }
    j["unbounded"] = opt::has_no_useful_bound(d.rdp, info.symbol);
    if (info.kind != SymbolKind::kInput) {
      if (auto b = d.rdp.direct_execution_bound(info.symbol)) j["bound"] = b->to_string();
    }
    arr.push_back(j);
  }
  return arr;
}

Json summary_json(const PlanReportData& d) {
  Json s;
  s["arena_bytes"] = d.at.arena_bytes;
  s["lower_bound_bytes"] = d.at.lower_bound_bytes;
  s["naive_bytes"] = d.at.naive_bytes;
  s["greedy_bytes"] = d.at.greedy_bytes;
  s["source_order_peak_bytes"] = d.at.source_order_peak_bytes;
  s["groups"] = opt::count_kernel_steps(*d.model.graph, d.plan.units);
  s["kernels_unfused"] = d.plan.fusion.kernels_unfused;
  s["plan_instantiate_us"] = d.instantiate_us;
  return s;
}

// The default report's table of tensors: enough to see what dominates the arena.
constexpr size_t kLargestTensorsShown = 5;

// "120 contraction, 119 single": how the groups split by kind, most common first.
std::string group_kinds_text(const opt::FusionPlan& fusion) {
  std::map<std::string, size_t> counts;
  for (const opt::FusionGroup& g : fusion.groups) ++counts[g.kind];
  std::vector<std::pair<std::string, size_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [kind, n] : sorted)
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
  return out;
}

// A count at the report's binding, JSON null where it cannot be told.
Json count_json(const std::optional<sym::SymExpr>& e, const sym::Binding& binding) {
  if (!e) return nullptr;
  const std::optional<int64_t> v = opt::ops_at(*e, binding);
  return v ? Json(*v) : Json(nullptr);
}

// The model's work (core/ops/op_work.h): symbolic, at the binding, and what it leaves out.
Json work_json(const PlanReportData& d) {
  const opt::ModelWork& w = *d.work;
  Json j;
  j["ops"] = sym::bounded_text(w.total_ops);
  j["ops_at_binding"] = count_json(w.total_ops, d.at.binding);
  // With execution symbols at their bounds, the count is the most a run does at these sizes.
  j["at_most"] = w.involves_execution;
  j["uncounted"] = w.uncounted;
  return j;
}

// "work     3.64 GOP at this binding (= 2*batch*h*w*... ); 1 node not counted: ...".
std::string work_text(const PlanReportData& d) {
  const opt::ModelWork& w = *d.work;
  const std::optional<int64_t> at = opt::ops_at(w.total_ops, d.at.binding);
  std::string out = "work     ";
  out += at ? opt::human_ops(static_cast<double>(*at)) + (w.involves_execution ? " at most" : "") +
                  " at this binding"
            : std::string("not known at this binding");
  out += " (" + sym::bounded_text(w.total_ops, 160) + ")\n";
  if (!w.uncounted.empty()) {
    out += "         " + std::to_string(w.uncounted.size()) + " node" +
           (w.uncounted.size() == 1 ? "" : "s") + " not counted, e.g. " + w.uncounted.front() +
           "\n";
  }
  return out;
}

}  // namespace

nlohmann::ordered_json plan_json(const PlanReportData& d) {
  const Graph& g = *d.model.graph;
  const opt::MemoryPlan& p = d.plan;
  Json doc;
  doc["schema_version"] = kPlanSchemaVersion;
  doc["model"] = d.model.path;
  doc["symbols"] = symbols_json(d);

  Json order;
  order["strategy"] = p.order.strategy;
  order["peak_bytes_at_upper_bounds"] = p.order.peak_bytes;
  order["source_peak_bytes_at_upper_bounds"] = p.order.source_peak_bytes;
  Json steps = Json::array();
  for (size_t i = 0; i < p.order.steps.size(); ++i) {
    const int32_t unit = p.order.steps[i];
    Json nodes = Json::array(), ops = Json::array();
    for (NodeId n : p.units.nodes[static_cast<size_t>(unit)]) {
      nodes.push_back(g.node(n).name);
      ops.push_back(g.node(n).op_type);
    }
    // A unit below the group count is that fused group; the others are single Constant nodes.
    const bool grouped = static_cast<size_t>(unit) < p.fusion.groups.size();
    steps.push_back({{"step", i}, {"group", grouped ? unit : -1}, {"nodes", nodes}, {"ops", ops}});
  }
  order["steps"] = steps;
  doc["order"] = order;

  Json groups = Json::array();
  auto names = [&](const std::vector<ValueId>& ids) {
    Json arr = Json::array();
    for (ValueId v : ids) arr.push_back(g.value(v).name);
    return arr;
  };
  for (size_t i = 0; i < d.plan.fusion.groups.size(); ++i) {
    const opt::FusionGroup& grp = d.plan.fusion.groups[i];
    Json nodes = Json::array();
    for (NodeId n : grp.nodes) nodes.push_back(g.node(n).name);
    Json group = {{"id", i},
                  {"kind", grp.kind},
                  {"nodes", nodes},
                  {"inputs", names(grp.inputs)},
                  {"outputs", names(grp.outputs)},
                  {"not_fused", grp.not_fused}};
    if (d.work) {
      // At the report's binding: what a roofline of this group divides by its time.
      group["ops"] = count_json(opt::group_ops(*d.work, grp), d.at.binding);
      group["bytes_moved"] = count_json(opt::group_bytes(g, d.rdp, grp), d.at.binding);
    }
    groups.push_back(std::move(group));
  }
  doc["groups"] = groups;

  Json plan;
  plan["alignment"] = opt::kTensorAlignment;
  plan["arena_bytes"] = sym::bounded_text(p.symbolic.arena_bytes);
  // Which greedy layering the offsets follow: the placement order, and where it was built
  // (0: the upper bounds; k: the k-th checked binding, i.e. --bind).
  plan["layering"] = {{"placement", p.symbolic.placement}, {"reference", p.symbolic.reference}};
  Json tensors = Json::array();
  for (size_t t = 0; t < p.tensors.tensors.size(); ++t) {
    Json j;
    j["name"] = p.tensors.tensors[t].name;
    j["size"] = sym::bounded_text(p.symbolic.sizes[t]);
    j["offset"] = sym::bounded_text(p.symbolic.offsets[t]);
    j["first_step"] = p.lives[t].first_step;
    j["last_step"] = p.lives[t].last_step;
    j["segment"] = p.segments[t];
    j["graph_output"] = p.tensors.tensors[t].graph_output;
    // Values that are these bytes under another shape (Reshape, Squeeze...): never copied.
    Json views = Json::array();
    for (ValueId v : p.tensors.tensors[t].views) views.push_back(g.value(v).name);
    j["views"] = views;
    tensors.push_back(j);
  }
  plan["tensors"] = tensors;
  Json left_out = Json::array();
  for (const opt::OffArenaValue& v : p.tensors.off_arena)
    left_out.push_back({{"name", v.name}, {"reason", v.reason}});
  plan["left_out"] = left_out;
  plan["package_constants"] = p.tensors.package_constants;
  // Size-bucketed versions: which grid cells use which, and each version's arena. Cells not
  // listed use the whole-range plan above.
  Json versions = Json::array();
  for (size_t v = 0; v < p.versions.versions.size(); ++v) {
    Json cells = Json::array();
    for (size_t c = 0; c < p.versions.version_of_cell.size(); ++c)
      if (p.versions.version_of_cell[c] == static_cast<int32_t>(v))
        cells.push_back(p.versions.grid.cell_text(c));
    versions.push_back(
        {{"version", v},
         {"cells", cells},
         {"arena_bytes", sym::bounded_text(p.versions.versions[v].symbolic.arena_bytes)}});
  }
  plan["versions"] = versions;
  plan["bucket_cells"] = p.versions.version_of_cell.size();
  doc["plan"] = plan;

  Json binding;
  binding["kind"] = d.bound ? "bound" : "upper_bounds";
  Json values = Json::object();
  for (const SymbolInfo& info : d.rdp.symbols()) {
    auto it = d.at.binding.find(info.symbol);
    if (it != d.at.binding.end()) values[info.symbol.name()] = it->second;
  }
  binding["values"] = values;
  // -1: the whole-range plan; -2: greedy by size at this binding (runtime/program/binding_layout.h)
  binding["version"] = d.at.version;
  binding["layout"] = plan::version_text(d.at.version, p.versions.versions.size());
  binding["version_arena_bytes"] = d.at.version_arena_bytes;
  doc["binding"] = binding;

  Json inst = Json::array();
  for (size_t t = 0; t < d.at.tensors.size(); ++t) {
    const opt::PlacedTensor& pt = d.at.tensors[t];
    inst.push_back({{"name", p.tensors.tensors[t].name},
                    {"size", pt.size},
                    {"offset", pt.offset},
                    {"first_step", pt.life.first_step},
                    {"last_step", pt.life.last_step}});
  }
  doc["tensors"] = inst;
  doc["summary"] = summary_json(d);
  if (d.work) doc["work"] = work_json(d);
  doc["warnings"] = d.warnings;
  return doc;
}

std::string plan_text(const PlanReportData& d, bool verbose) {
  const Graph& g = *d.model.graph;
  std::string out = "model    " + d.model.path + "\n";
  if (d.plan.fusion.groups.empty()) {
    out +=
        "groups   none, planned without fusion: " + std::to_string(d.plan.fusion.kernels_unfused) +
        " kernels, one node each\n";
  } else {
    out += "groups   " + std::to_string(d.plan.fusion.groups.size()) + " (" +
           std::to_string(d.plan.fusion.kernels_unfused) +
           " kernels unfused): " + group_kinds_text(d.plan.fusion) + "\n";
  }
  if (verbose) {
    text::TextTable groups({{"id", text::Align::kRight}, {"group"}}, "  ");
    groups.show_header(false);
    for (size_t i = 0; i < d.plan.fusion.groups.size(); ++i) {
      const opt::FusionGroup& grp = d.plan.fusion.groups[i];
      std::string nodes;
      for (NodeId n : grp.nodes) nodes += (nodes.empty() ? "" : ", ") + g.node(n).name;
      groups.add_row({std::to_string(i), grp.kind + ": " + nodes});
      for (const std::string& why : grp.not_fused) groups.add_row({"", "  " + why});
    }
    out += groups.str();
    out += opt::symbolic_plan_text(g, d.plan);
  } else {
    out += opt::symbolic_plan_summary_text(d.plan);
  }
  out += d.bound ? "" : "(no --bind: the plan at the upper bounds)\n";
  // Execution symbols the plan sizes at their bound: what the numbers below assume.
  for (const SymbolInfo& info : d.rdp.symbols()) {
    const sym::Symbol& s = info.symbol;
    const auto it = d.at.binding.find(s);
    if (it == d.at.binding.end() || info.kind == SymbolKind::kInput || d.user_bound.count(s.name()))
      continue;
    const int64_t v = it->second;
    const auto b = d.rdp.direct_execution_bound(s);
    out += "execution symbol " + s.name() + " = " + std::to_string(v) +
           (opt::has_no_useful_bound(d.rdp, s) || !b
                ? " (no bound known: a stand-in; --bind " + s.name() + "=N to size it)\n"
                : " (at its bound " + b->to_string() + "; --bind " + s.name() + "=N for less)\n");
  }
  out += verbose ? opt::plan_at_binding_text(d.plan, d.at)
                 : opt::plan_at_binding_summary_text(d.plan, d.at, kLargestTensorsShown);
  const Json s = summary_json(d);
  const double lb = static_cast<double>(d.at.arena_bytes) /
                    static_cast<double>(std::max<int64_t>(d.at.lower_bound_bytes, 1));
  out += "summary  arena " + std::to_string(d.at.arena_bytes) + " bytes = " + fixed(lb, 3) +
         " x lower bound; " + std::to_string(s["groups"].get<int>()) + " groups (" +
         std::to_string(s["kernels_unfused"].get<int>()) + " kernels unfused); instantiated in " +
         fixed(d.instantiate_us, 2) + " us\n";
  if (d.work) out += work_text(d);
  if (!verbose) out += "(--verbose: every group, step and tensor; --json: all of it for tools)\n";
  return out;
}

}  // namespace sod2::cli
