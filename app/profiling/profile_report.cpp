#include "app/profiling/profile_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/opt/model_work.h"
#include "core/text/text_table.h"
#include "runtime/program/binding_layout.h"

namespace sod2::profiling {
namespace {

using text::Align;
using text::fixed;
using text::TextTable;

std::string kib(int64_t bytes) { return fixed(static_cast<double>(bytes) / 1024.0, 1); }

// A group's achieved GOP/s, "-" where its operations are not counted.
std::string gops(const GroupProfile& g) {
  const double v = g.gops_per_s();
  return v < 0 ? "-" : fixed(v, 1);
}

// In execution order: cum % is how much of the groups' time has passed when the group ends. An
// If/Loop/Scan group's body nodes follow it, indented by depth, where % is of the node holding
// them and `nodes` is how often one ran per run.
std::string execution_order_table(const std::vector<GroupProfile>& groups) {
  TextTable table({{"#", Align::kRight},
                   {"op types", Align::kLeft, 40},
                   {"nodes", Align::kRight},
                   {"avg ms", Align::kRight},
                   {"%", Align::kRight},
                   {"cum %", Align::kRight},
                   {"GOP/s", Align::kRight},
                   {"out KiB", Align::kRight},
                   {"shape", Align::kLeft, 32},
                   {"name", Align::kLeft, 64}});
  for (const GroupProfile& g : groups) {
    table.add_row({std::to_string(g.index), g.op_label(), std::to_string(g.nodes.size()),
                   fixed(g.avg_ms), fixed(g.percent, 2), fixed(g.cumulative_percent, 2), gops(g),
                   kib(g.output_bytes), g.shape, g.name});
    for (const BodyNodeProfile& b : g.body) {
      table.add_row(
          {"", std::string(2 * static_cast<size_t>(b.depth), ' ') + b.body + ": " + b.op_label(),
           "x" + calls_per_run_text(b.calls_per_run), fixed(b.avg_ms),
           fixed(b.percent_of_parent, 2), "", "-", "", "", b.name});
    }
  }
  return table.str();
}

// Slowest first. The execution order's cum % means nothing once sorted by time, so this table
// carries its own running sum ("the 3 slowest groups take 62% of the time"), and each group's
// step (#) to find it in the table above.
std::string top_table(const std::vector<const GroupProfile*>& by_time, size_t top) {
  TextTable table({{"rank", Align::kRight},
                   {"#", Align::kRight},
                   {"op types", Align::kLeft, 40},
                   {"nodes", Align::kRight},
                   {"avg ms", Align::kRight},
                   {"% of total", Align::kRight},
                   {"cum % of top", Align::kRight},
                   {"GOP/s", Align::kRight},
                   {"out KiB", Align::kRight},
                   {"shape", Align::kLeft, 32},
                   {"name", Align::kLeft, 64}});
  double cum = 0;
  for (size_t i = 0; i < by_time.size() && i < top; ++i) {
    const GroupProfile& g = *by_time[i];
    cum += g.percent;
    table.add_row({std::to_string(i + 1), std::to_string(g.index), g.op_label(),
                   std::to_string(g.nodes.size()), fixed(g.avg_ms), fixed(g.percent, 2),
                   fixed(std::min(cum, 100.0), 2), gops(g), kib(g.output_bytes), g.shape, g.name});
  }
  return table.str();
}

}  // namespace

std::string calls_per_run_text(double calls) {
  return calls == std::floor(calls) ? fixed(calls, 0) : fixed(calls, 2);
}

void print_profile_table(const ProfileResult& r, std::ostream& out, int top) {
  const device::AgentHello& a = r.agent;
  // What the device said about itself and the model's name are shown, never acted on.
  using text::visible;
  out << "Device: " << visible(r.device.id)
      << (r.device.model.empty() ? "" : " (" + visible(r.device.model) + ")") << ", "
      << visible(a.arch) << ", " << a.cores << " cores, "
      << human_bytes(static_cast<int64_t>(a.memory_bytes)) << ", " << visible(a.os) << "; agent "
      << visible(a.software) << "\n";
  out << "Model: " << visible(r.model_name) << " (sha256 " << visible(r.model_sha256.substr(0, 12))
      << "), package " << human_bytes(r.package_bytes)
      << (r.package_cached ? " (cached on the device)" : " (sent)") << "\n";
  const int32_t version = r.plan_version();
  out << "Binding: " << (r.bindings.empty() ? "(none)" : visible(r.bindings)) << ", threads "
      << r.report.threads << ", plan version " << plan::version_text(version) << "\n\n";
  const LatencyStats& s = r.stats;
  out << "Latency (ms): count=" << s.count << " first=" << fixed(s.first_ms)
      << " warmup_avg=" << fixed(s.warmup_avg_ms) << " avg=" << fixed(s.avg_ms)
      << " std=" << fixed(s.std_ms) << " min=" << fixed(s.min_ms) << " max=" << fixed(s.max_ms)
      << " p50=" << fixed(s.p50_ms) << " p90=" << fixed(s.p90_ms) << "\n";
  size_t left_out = 0;
  const int64_t run_ops = r.counted_ops(&left_out);
  if (run_ops >= 0 && s.avg_ms > 0) {
    out << "Work: " << opt::human_ops(static_cast<double>(run_ops))
        << (r.counted_ops_at_most() ? " at most" : "") << " per run, "
        << fixed(static_cast<double>(run_ops) / (s.avg_ms * 1e6), 1)
        << " GOP/s at the average latency"
        << (left_out ? "; " + std::to_string(left_out) + " groups not counted" : std::string())
        << "\n";
  }
  const int64_t arena = r.arena_bytes();
  std::string planned = "planned for this binding";
  if (r.predicted_arena_bytes >= 0) {
    planned = r.arena_mismatch()
                  ? "MISMATCH: the plan predicted " + human_bytes(r.predicted_arena_bytes) +
                        " here; please report it with the model"
                  : std::string(r.prediction_exact ? "the plan's at these sizes"
                                                   : "within the plan's at the bounds, ") +
                        (r.prediction_exact ? "" : human_bytes(r.predicted_arena_bytes));
  }
  out << "Memory: arena " << human_bytes(arena) << " (" << planned << "), held "
      << human_bytes(static_cast<int64_t>(r.report.arena_capacity)) << ", body values "
      << human_bytes(static_cast<int64_t>(r.report.value_buffer_bytes)) << ", agent peak RSS "
      << human_bytes(r.report.peak_rss_bytes) << "\n";
  if (r.run_id > 0) out << "Recorded as run " << r.run_id << " in " << r.db_path << "\n";
  print_group_tables(r, out, top);
}

void print_group_tables(const ProfileResult& r, std::ostream& out, int top) {
  const LatencyStats& s = r.stats;
  out << "\n============================== Per group (execution order) "
         "==============================\n";
  out << execution_order_table(r.groups);

  std::vector<const GroupProfile*> by_time;
  for (const GroupProfile& g : r.groups) by_time.push_back(&g);
  std::stable_sort(
      by_time.begin(), by_time.end(),
      [](const GroupProfile* a, const GroupProfile* b) { return a->avg_ms > b->avg_ms; });
  const size_t shown = std::min<size_t>(by_time.size(), static_cast<size_t>(std::max(top, 0)));
  out << "\n============================== Top " << shown
      << " by time ==============================\n";
  out << top_table(by_time, shown);

  struct OpSum {
    int count = 0;
    double ms = 0;
    int64_t bytes = 0;
  };
  std::map<std::string, OpSum> ops;
  double total = 0;
  for (const GroupProfile& g : r.groups) {
    OpSum& o = ops[g.op_label()];
    ++o.count;
    o.ms += g.avg_ms;
    o.bytes += g.output_bytes;
    total += g.avg_ms;
  }
  std::vector<std::pair<std::string, OpSum>> sorted(ops.begin(), ops.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  out << "\n============================== Summary by op type "
         "==============================\n";
  TextTable by_op({{"op types", Align::kLeft, 40},
                   {"count", Align::kRight},
                   {"avg ms", Align::kRight},
                   {"%", Align::kRight},
                   {"cum %", Align::kRight},
                   {"out KiB", Align::kRight}});
  double cum = 0;
  for (const auto& [label, o] : sorted) {
    const double pct = total > 0 ? 100.0 * o.ms / total : 0;
    cum += pct;
    by_op.add_row(
        {label, std::to_string(o.count), fixed(o.ms), fixed(pct, 2), fixed(cum, 2), kib(o.bytes)});
  }
  out << by_op.str();
  out << "\nGroups: " << r.groups.size() << ", sum of group averages " << fixed(total) << " ms of "
      << fixed(s.avg_ms) << " ms per run\n";
  size_t control_flow = 0, body_nodes = 0;
  for (const GroupProfile& g : r.groups) {
    control_flow += !g.body.empty();
    body_nodes += g.body.size();
  }
  if (control_flow > 0) {
    out << "Bodies: " << body_nodes << " nodes ran inside " << control_flow
        << " control-flow groups (indented above: % of the node holding them, x calls per run)\n";
  }
}

namespace {

// Body nodes are summed over the runs, not timed per run, so they are listed beside the
// timeline (per control-flow group) rather than drawn on it.
nlohmann::json bodies_json(const std::vector<GroupProfile>& groups) {
  nlohmann::json out = nlohmann::json::array();
  for (const GroupProfile& g : groups) {
    if (g.body.empty()) continue;
    nlohmann::json rows = nlohmann::json::array();
    for (const BodyNodeProfile& b : g.body) rows.push_back(body_node_json(b));
    out.push_back({{"group", g.index}, {"name", g.name}, {"nodes", rows}});
  }
  return out;
}

}  // namespace

nlohmann::json body_node_json(const BodyNodeProfile& b) {
  return {{"depth", b.depth},
          {"body", b.body},
          {"graph", b.graph},
          {"node", b.node},
          {"name", b.name},
          {"op_types", b.op_types},
          {"avg_ms", b.avg_ms},
          {"calls_per_run", b.calls_per_run},
          {"percent_of_parent", b.percent_of_parent}};
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string trace_json(const ProfileResult& r) {
  using nlohmann::json;
  json events = json::array();
  const int pid = 1;
  auto meta = [&](const char* name, int tid, const std::string& value) {
    events.push_back(
        {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", value}}}});
  };
  meta("process_name", 0, "sod2 " + r.device.id + ": " + r.model_name);
  meta("thread_name", 0, "runs");
  meta("thread_name", 1, "fused groups");
  double t = 0;  // µs; runs are laid end to end
  for (size_t i = 0; i < r.report.runs.size(); ++i) {
    const device::RunSample& s = r.report.runs[i];
    events.push_back({{"name", (s.warmup ? "warm-up run " : "run ") + std::to_string(i)},
                      {"cat", "run"},
                      {"ph", "X"},
                      {"pid", pid},
                      {"tid", 0},
                      {"ts", t},
                      {"dur", s.latency_ms * 1000.0},
                      {"args", {{"warmup", s.warmup}, {"plan_version", s.plan_version}}}});
    events.push_back({{"name", "memory"},
                      {"ph", "C"},
                      {"pid", pid},
                      {"ts", t},
                      {"args", {{"arena_bytes", s.arena_bytes}, {"rss_bytes", s.rss_bytes}}}});
    for (size_t g = 0; g < r.groups.size() && g < s.group_ms.size(); ++g) {
      const GroupProfile& p = r.groups[g];
      events.push_back({{"name", p.op_label()},
                        {"cat", "group"},
                        {"ph", "X"},
                        {"pid", pid},
                        {"tid", 1},
                        {"ts", t + s.group_start_ms[g] * 1000.0},
                        {"dur", s.group_ms[g] * 1000.0},
                        {"args",
                         {{"group", p.index},
                          {"nodes", p.nodes},
                          {"op_types", p.op_types},
                          {"shape", p.shape},
                          {"dims", p.dims},
                          {"output_bytes", p.output_bytes},
                          {"ops", p.ops},
                          {"run", i}}}});
    }
    t += s.latency_ms * 1000.0;
  }
  json doc = {{"traceEvents", events},
              {"displayTimeUnit", "ms"},
              {"otherData",
               {{"device", r.device.id},
                {"device_model", r.device.model},
                {"agent", r.agent.software},
                {"model", r.model_name},
                {"model_sha256", r.model_sha256},
                {"package_sha256", r.package_sha256},
                {"bindings", r.bindings},
                {"threads", r.report.threads},
                {"avg_ms", r.stats.avg_ms},
                {"run_id", r.run_id},
                {"bodies", bodies_json(r.groups)}}}};
  return json_text(doc);
}

Status write_trace(const ProfileResult& r, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return io_error("cannot write the trace " + path);
    out << trace_json(r);
    if (!out.flush()) return io_error("writing the trace " + path + " failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return io_error("cannot write the trace " + path);
  return Status::ok_status();
}

}  // namespace sod2::profiling
