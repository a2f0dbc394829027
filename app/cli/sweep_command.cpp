#include "app/cli/sweep_command.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "app/cli/command_line.h"
#include "app/cli/symbol_args.h"
#include "core/opt/model_work.h"
#include "core/opt/plan_text.h"
#include "core/pipeline/compiled_model.h"
#include "core/pipeline/plan_sweep.h"
#include "core/status/byte_size.h"
#include "core/text/text_table.h"
#include "runtime/program/binding_layout.h"

namespace sod2::cli {
namespace {

using text::fixed;

CommandLine make_parser() {
  return CommandLine({
      {"--sym", true,
       "the input symbol to sweep and its values: NAME=lo:hi[:step] (step defaults to the "
       "symbol's multiple), or NAME alone for its whole range in at most 64 points",
       "NAME[=lo:hi[:step]]"},
      {"--bind", true,
       "the other input symbols (and execution symbols, else at their bound at each point); "
       "symbols left out are held at the top of their range",
       "k=v,..."},
      {"--range", true, "declare symbol ranges; MULTIPLE defaults to 1", "k=lo:hi[:multiple],..."},
      {"--ranges", true,
       "read ranges from a JSON file: {\"height\": [32, 1024, 32]} or a models.json entry", "FILE"},
      {"--json", false,
       "print one JSON document (schema_version, model, symbol, held, points with value, "
       "version, layout, arena_bytes, lower_bound_bytes, greedy_bytes with --greedy, or error, "
       "version_changes, summary)",
       ""},
      {"--greedy", false,
       "also place every point greedy by size, the yardstick `sod2 plan` prints (slower)", ""},
      {"--no-fusion", false, "plan one node per step, as an unfused runtime would", ""},
      {"--groups", false,
       "also each fused group's operations and bytes moved at every point (per-group curves: "
       "in the JSON, per point; as text, the groups with the most operations at the last point, "
       "with their growth and operations per byte at both ends)",
       ""},
      {"--top", true, "with --groups: groups in the text table (default 10)", "N"},
      {"--help", false, "show this help", ""},
  });
}

std::string usage() {
  return "usage: sod2 sweep MODEL.onnx --sym NAME[=lo:hi[:step]] [options]\n\n"
         "The memory plan as a curve of one input symbol: compiles the model once, then\n"
         "instantiates the plan the runtime would run (its size-bucketed version, or the layout\n"
         "made at the binding) at every value, the other symbols held at --bind. Prints per\n"
         "point the arena, the lower bound (the peak of live bytes) and which layout runs\n"
         "(--greedy: also greedy by size); marks where the layout changes, and points that\n"
         "cannot be planned (an assumption broken, a size too large) with their reason.\n\n"
         "options:\n" +
         make_parser().flags_help();
}

// The groups the per-point arrays index: id, kind, nodes and op types.
nlohmann::ordered_json groups_json(const pipeline::CompiledModel& compiled) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const Graph& g = compiled.graph();
  const auto& groups = compiled.plan.fusion.groups;
  for (size_t i = 0; i < groups.size(); ++i) {
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array(),
                           ops = nlohmann::ordered_json::array();
    for (NodeId n : groups[i].nodes) {
      nodes.push_back(g.node(n).name);
      ops.push_back(g.node(n).op_type);
    }
    out.push_back({{"id", i}, {"kind", groups[i].kind}, {"nodes", nodes}, {"op_types", ops}});
  }
  return out;
}

// The groups with the most operations at the last planned point: their operations and bytes at
// the first and last planned points, how each grew, and operations per byte at both ends (a
// group whose bytes grow faster than its work slides towards the memory-bound side).
void print_group_curves(const pipeline::CompiledModel& compiled, const pipeline::PlanSweep& sw,
                        const std::string& symbol, int top, std::ostream& out) {
  const pipeline::SweepPoint* first = nullptr;
  const pipeline::SweepPoint* last = nullptr;
  for (const pipeline::SweepPoint& p : sw.points) {
    if (!p.at) continue;
    if (!first) first = &p;
    last = &p;
  }
  if (!first || last->group_ops.empty()) return;
  const Graph& g = compiled.graph();
  const auto& groups = compiled.plan.fusion.groups;
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return last->group_ops[a] > last->group_ops[b]; });
  auto ratio = [&](int64_t a, int64_t b) {
    return a > 0 && b >= 0 ? fixed(static_cast<double>(b) / static_cast<double>(a), 2) + "x"
                           : std::string("-");
  };
  auto per_byte = [&](int64_t ops, int64_t bytes) {
    return ops >= 0 && bytes > 0 ? fixed(static_cast<double>(ops) / static_cast<double>(bytes), 2)
                                 : std::string("-");
  };
  text::TextTable table({{"group", text::Align::kRight},
                         {"op types", text::Align::kLeft, 36},
                         {"ops first", text::Align::kRight},
                         {"ops last", text::Align::kRight},
                         {"ops x", text::Align::kRight},
                         {"bytes first", text::Align::kRight},
                         {"bytes last", text::Align::kRight},
                         {"bytes x", text::Align::kRight},
                         {"ops/B first", text::Align::kRight},
                         {"ops/B last", text::Align::kRight},
                         {"name", text::Align::kLeft, 48}},
                        "  ");
  for (size_t r = 0; r < order.size() && r < static_cast<size_t>(std::max(top, 0)); ++r) {
    const size_t i = order[r];
    std::string types;
    for (NodeId n : groups[i].nodes) types += (types.empty() ? "" : "+") + g.node(n).op_type;
    auto ops_text = [](int64_t v) {
      return v >= 0 ? opt::human_ops(static_cast<double>(v)) : std::string("-");
    };
    auto bytes_text = [](int64_t v) { return v >= 0 ? human_bytes(v) : std::string("-"); };
    table.add_row(
        {std::to_string(i), types, ops_text(first->group_ops[i]), ops_text(last->group_ops[i]),
         ratio(first->group_ops[i], last->group_ops[i]), bytes_text(first->group_bytes[i]),
         bytes_text(last->group_bytes[i]), ratio(first->group_bytes[i], last->group_bytes[i]),
         per_byte(first->group_ops[i], first->group_bytes[i]),
         per_byte(last->group_ops[i], last->group_bytes[i]), g.node(groups[i].nodes.front()).name});
  }
  out << "groups   by operations at " << symbol << "=" << last->value << ", from " << symbol << "="
      << first->value << " (bytes: read from outside the group and materialised, once each)\n"
      << table.str() << "\n";
}

}  // namespace

int run_sweep(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl = make_parser();
  RdpOptions options;
  std::map<std::string, int64_t> held;
  SweepSpec spec;
  int top = 10;
  try {
    cl.parse(args);
    if (cl.has("--help")) {
      out << usage();
      return 0;
    }
    options = rdp_options_from(cl.value("--ranges"), cl.value("--range"));
    if (auto b = cl.value("--bind")) held = parse_bindings(*b);
    auto s = cl.value("--sym");
    if (!s) throw std::invalid_argument("--sym NAME[=lo:hi[:step]] is required");
    spec = parse_sweep_spec(*s, "--sym");
    top = parse_count(cl.value("--top"), 10, "--top", 0);
    if (cl.has("--top") && !cl.has("--groups"))
      throw std::invalid_argument("--top goes with --groups");
  } catch (const std::invalid_argument& e) {
    err << "sod2 sweep: " << e.what() << "\n";
    return 1;
  }
  if (cl.positional().size() != 1) {
    err << "sod2 sweep: expected exactly one MODEL.onnx (see sod2 sweep --help)\n";
    return 1;
  }
  if (held.count(spec.name)) {
    err << "sod2 sweep: '" << spec.name << "' is both swept (--sym) and held (--bind)\n";
    return 1;
  }
  pipeline::CompileOptions compile_options;
  compile_options.rdp = options;
  compile_options.fuse = !cl.has("--no-fusion");
  const auto compile_start = std::chrono::steady_clock::now();
  Expected<pipeline::CompiledModel> compiled =
      pipeline::compile_file(cl.positional()[0], compile_options);
  if (!compiled.ok()) {
    err << "sod2 sweep: " << compiled.status().message() << "\n";
    return 1;
  }
  const double compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - compile_start)
          .count();
  const bool greedy = cl.has("--greedy");
  pipeline::SweepRequest request;
  request.symbol = spec.name;
  request.lo = spec.lo;
  request.hi = spec.hi;
  request.step = spec.step;
  request.held = held;
  request.greedy_yardstick = greedy;
  request.per_group = cl.has("--groups");
  Expected<pipeline::PlanSweep> swept = pipeline::sweep_plan(*compiled, request);
  if (!swept.ok()) {
    err << "sod2 sweep: --sym: " << swept.status().message() << "\n";
    return 1;
  }
  const pipeline::PlanSweep& sw = *swept;
  const auto& points = sw.points;
  const int64_t lo = sw.lo, hi = sw.hi, step = sw.step;
  const size_t versions = compiled->plan.versions.versions.size();
  int64_t min_arena = INT64_MAX, max_arena = 0;
  for (const pipeline::SweepPoint& p : points) {
    if (!p.at) continue;
    min_arena = std::min(min_arena, p.at->arena_bytes);
    max_arena = std::max(max_arena, p.at->arena_bytes);
  }
  const size_t failed = sw.failed;
  std::string held_text;
  for (const auto& [k, v] : sw.held)
    held_text += (held_text.empty() ? "" : ", ") + k + "=" + std::to_string(v);

  if (cl.has("--json")) {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["model"] = cl.positional()[0];
    j["symbol"] = {{"name", spec.name}, {"lo", lo}, {"hi", hi}, {"step", step}};
    j["held"] = sw.held;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const pipeline::SweepPoint& p : points) {
      nlohmann::ordered_json o;
      o["value"] = p.value;
      if (!p.at) {
        o["error"] = p.error;
      } else {
        o["version"] = p.at->version;
        o["layout"] = plan::version_text(p.at->version, versions);
        o["arena_bytes"] = p.at->arena_bytes;
        o["lower_bound_bytes"] = p.at->lower_bound_bytes;
        if (greedy) o["greedy_bytes"] = p.at->greedy_bytes;
        o["ops"] = p.ops ? nlohmann::ordered_json(*p.ops) : nlohmann::ordered_json(nullptr);
        if (request.per_group) {
          // By group id (top-level "groups"); -1 where a group is not countable there.
          o["group_ops"] = p.group_ops;
          o["group_bytes"] = p.group_bytes;
        }
      }
      list.push_back(std::move(o));
    }
    j["points"] = std::move(list);
    nlohmann::ordered_json ch = nlohmann::ordered_json::array();
    for (const auto& c : sw.changes)
      ch.push_back({{"at", c.at},
                    {"from", plan::version_text(c.from, versions)},
                    {"to", plan::version_text(c.to, versions)}});
    j["version_changes"] = std::move(ch);
    if (request.per_group) j["groups"] = groups_json(*compiled);
    j["summary"] = {{"points", points.size()},
                    {"failed", failed},
                    {"worst_arena_over_lower_bound", sw.worst_ratio},
                    {"worst_at", sw.worst_at},
                    {"compile_ms", compile_ms},
                    {"sweep_ms", sw.sweep_ms}};
    out << j.dump(1) << "\n";
    return 0;
  }
  out << "model    " << cl.positional()[0] << "\n"
      << "sweep    " << spec.name << " = " << lo << ".." << hi << " step " << step << " ("
      << points.size() << " points)" << (held_text.empty() ? "" : "; held: " + held_text)
      << "; execution symbols not bound take their bound at each point\n\n";
  const int w = static_cast<int>(std::max<size_t>(spec.name.size(), 6));
  out << std::setw(w) << spec.name << "  " << std::setw(14) << "arena"
      << "  " << std::setw(14) << "lower bound"
      << "  " << std::setw(8) << "arena/LB"
      << "  " << (greedy ? "        greedy  " : "") << std::setw(12) << "operations"
      << "  layout\n";
  for (const pipeline::SweepPoint& p : points) {
    out << std::setw(w) << p.value << "  ";
    if (!p.at) {
      out << "cannot be planned: " << p.error << "\n";
      continue;
    }
    std::ostringstream ratio;
    ratio << std::fixed << std::setprecision(3)
          << static_cast<double>(p.at->arena_bytes) /
                 static_cast<double>(std::max<int64_t>(p.at->lower_bound_bytes, 1));
    out << std::setw(14) << p.at->arena_bytes << "  " << std::setw(14) << p.at->lower_bound_bytes
        << "  " << std::setw(8) << ratio.str() << "  ";
    if (greedy) out << std::setw(14) << p.at->greedy_bytes << "  ";
    out << std::setw(12) << (p.ops ? opt::human_ops(static_cast<double>(*p.ops)) : "-") << "  "
        << plan::version_text(p.at->version, versions) << "\n";
  }
  out << "\n";
  for (const auto& c : sw.changes) {
    out << "layout   from " << spec.name << "=" << c.at << ": "
        << plan::version_text(c.to, versions) << " (was " << plan::version_text(c.from, versions)
        << ")\n";
  }
  if (request.per_group) print_group_curves(*compiled, sw, spec.name, top, out);
  std::ostringstream summary;
  summary << std::fixed << std::setprecision(3);
  summary << "summary  " << points.size() - failed << " of " << points.size() << " points planned";
  if (failed < points.size()) {
    summary << "; arena " << min_arena << ".." << max_arena << " bytes; worst arena/LB "
            << sw.worst_ratio << " at " << spec.name << "=" << sw.worst_at;
  }
  summary << std::setprecision(1) << "; compile " << compile_ms << " ms, sweep " << sw.sweep_ms
          << " ms (" << std::setprecision(3) << sw.sweep_ms / static_cast<double>(points.size())
          << " ms per point, no recompiling)\n";
  out << summary.str();
  return 0;
}

}  // namespace sod2::cli
