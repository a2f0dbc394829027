#include "app/profiling/sweep_report.h"

#include <algorithm>
#include <cstdio>

#include "app/profiling/profile_report.h"
#include "app/profiling/run_inputs.h"
#include "core/opt/model_work.h"
#include "core/status/byte_size.h"
#include "core/text/text_table.h"
#include "runtime/program/binding_layout.h"

namespace sod2::profiling {
namespace {

using text::Align;
using text::fixed;
using text::TextTable;

constexpr double kWorseThanWork = 1.25;

}  // namespace

std::vector<GroupScaling> group_scaling(const ProfileSweep& sweep) {
  const ProfileResult* first = nullptr;
  const ProfileResult* last = nullptr;
  for (const MeasuredPoint& p : sweep.points) {
    if (!p.result) continue;
    if (!first) first = &*p.result;
    last = &*p.result;
  }
  std::vector<GroupScaling> out;
  if (!first || first == last || first->groups.size() != last->groups.size()) return out;
  for (size_t i = 0; i < last->groups.size(); ++i) {
    const GroupProfile& a = first->groups[i];
    const GroupProfile& b = last->groups[i];
    if (a.p50_ms <= 0 || b.p50_ms <= 0) continue;  // did not run (a branch not taken)
    GroupScaling s;
    s.index = b.index;
    s.name = b.name;
    s.op_types = b.op_label();
    s.first_ms = a.p50_ms;
    s.last_ms = b.p50_ms;
    s.first_ops = a.ops;
    s.last_ops = b.ops;
    s.last_p90_ms = b.p90_ms;
    s.time_growth = b.p50_ms / a.p50_ms;
    if (a.ops > 0 && b.ops >= 0) {
      s.ops_growth = static_cast<double>(b.ops) / static_cast<double>(a.ops);
      s.worse_than_work = s.time_growth > kWorseThanWork * s.ops_growth;
    }
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const GroupScaling& x, const GroupScaling& y) {
    return x.last_ms > y.last_ms;
  });
  return out;
}

void print_sweep_table(const ProfileSweep& sweep, std::ostream& out, int top) {
  const ProfileResult* any = nullptr;
  for (const MeasuredPoint& p : sweep.points)
    if (p.result && !any) any = &*p.result;
  out << "Sweep of " << sweep.symbol << " = " << sweep.lo << ".." << sweep.hi << " step "
      << sweep.step << ", " << sweep.points.size() << " points";
  if (!sweep.held.empty()) out << ", held " << bindings_text(sweep.held);
  if (any) {
    out << "\nDevice: " << any->device.id
        << (any->device.model.empty() ? "" : " (" + any->device.model + ")") << ", "
        << any->agent.arch << ", " << any->agent.cores << " cores; model " << any->model_name
        << ", one package (" << human_bytes(any->package_bytes) << "), " << any->stats.count
        << " runs per point, threads " << any->report.threads;
  }
  out << "\n\n";
  TextTable table({{sweep.symbol, Align::kRight},
                   {"p50 ms", Align::kRight},
                   {"p90 ms", Align::kRight},
                   {"min ms", Align::kRight},
                   {"work", Align::kRight},
                   {"GOP/s", Align::kRight},
                   {"plan arena", Align::kRight},
                   {"run arena", Align::kRight},
                   {"", Align::kLeft},
                   {"version", Align::kLeft},
                   {"peak RSS", Align::kRight},
                   {"run", Align::kRight}});
  for (const MeasuredPoint& p : sweep.points) {
    // "<= ": the execution symbols at their bounds (the device did not say what its run bound).
    const bool exact = !p.result || p.result->prediction_exact;
    const std::string predicted = p.predicted_arena_bytes >= 0
                                      ? (exact ? "" : "<= ") + human_bytes(p.predicted_arena_bytes)
                                      : "-";
    if (!p.result) {
      table.add_row({std::to_string(p.value), "failed", "", "", "", "", predicted});
      table.add_line("      " + text::elide_middle(p.error, 160));
      continue;
    }
    const ProfileResult& r = *p.result;
    const int64_t ops = r.counted_ops();
    const bool mismatch = r.arena_mismatch();
    table.add_row({std::to_string(p.value), fixed(r.stats.p50_ms), fixed(r.stats.p90_ms),
                   fixed(r.stats.min_ms), ops >= 0 ? opt::human_ops(static_cast<double>(ops)) : "-",
                   ops >= 0 && r.stats.p50_ms > 0
                       ? fixed(static_cast<double>(ops) / (r.stats.p50_ms * 1e6), 1)
                       : "-",
                   predicted, human_bytes(r.arena_bytes()), mismatch ? "MISMATCH" : "",
                   plan::version_text(r.plan_version()), human_bytes(r.report.peak_rss_bytes),
                   r.run_id > 0 ? "#" + std::to_string(r.run_id) : "-"});
  }
  out << table.str();
  const size_t measured = sweep.points.size() - sweep.failed;
  out << "\n";
  if (sweep.failed > 0)
    out << sweep.failed << " of " << sweep.points.size() << " points failed (reasons above).\n";
  if (sweep.arena_mismatches == 0) {
    if (measured > 0)
      out << "Arena: the plan's prediction equals the device's at all " << measured
          << " measured points.\n";
  } else {
    out << "Arena: the device ran in another arena than the plan predicted at "
        << sweep.arena_mismatches << " of " << measured
        << " points (MISMATCH above): the plan shown is not the plan that ran there; please "
           "report it with the model.\n";
  }

  const std::vector<GroupScaling> scaling = group_scaling(sweep);
  if (!scaling.empty() && top > 0) {
    size_t worse = 0;
    for (const GroupScaling& s : scaling) worse += s.worse_than_work ? 1 : 0;
    auto rate = [](int64_t ops, double ms) {
      return ops >= 0 && ms > 0 ? fixed(static_cast<double>(ops) / (ms * 1e6), 1)
                                : std::string("-");
    };
    auto table = [&](const std::vector<const GroupScaling*>& rows) {
      TextTable groups({{"#", Align::kRight},
                        {"op types", Align::kLeft, 40},
                        {"first p50", Align::kRight},
                        {"last p50", Align::kRight},
                        {"last p90", Align::kRight},
                        {"time x", Align::kRight},
                        {"work x", Align::kRight},
                        {"GOP/s first", Align::kRight},
                        {"GOP/s last", Align::kRight},
                        {"", Align::kLeft},
                        {"name", Align::kLeft, 64}},
                       "  ");
      for (const GroupScaling* s : rows) {
        groups.add_row({std::to_string(s->index), s->op_types, fixed(s->first_ms),
                        fixed(s->last_ms), fixed(s->last_p90_ms), fixed(s->time_growth, 2),
                        s->ops_growth > 0 ? fixed(s->ops_growth, 2) : "-",
                        rate(s->first_ops, s->first_ms), rate(s->last_ops, s->last_ms),
                        s->worse_than_work ? "worse than its work" : "", s->name});
      }
      return groups.str();
    };
    std::vector<const GroupScaling*> slowest, worst;
    for (const GroupScaling& s : scaling) {
      if (slowest.size() < static_cast<size_t>(top)) slowest.push_back(&s);
      if (s.worse_than_work && worst.size() < static_cast<size_t>(top)) worst.push_back(&s);
    }
    const std::string at = sweep.symbol + "=" + std::to_string(sweep.points.back().value);
    out << "\nGroups by time at " << at
        << ", with how their time and work grew from the first measured point:\n"
        << table(slowest);
    if (worse > 0) {
      out << "\n"
          << worse << " group(s) grow more than " << fixed(kWorseThanWork, 2)
          << "x their work; the slowest at " << at << ":\n"
          << table(worst);
    }
  }
  if (sweep.sweep_id > 0)
    out << "\nRecorded as sweep " << sweep.sweep_id << " in " << sweep.db_path
        << " (sod2 history --sweep " << sweep.sweep_id << ")\n";
}

nlohmann::json sweep_json(const ProfileSweep& sweep) {
  nlohmann::json j;
  j["symbol"] = sweep.symbol;
  j["lo"] = sweep.lo;
  j["hi"] = sweep.hi;
  j["step"] = sweep.step;
  j["held"] = sweep.held;
  j["failed"] = sweep.failed;
  j["arena_mismatches"] = sweep.arena_mismatches;
  if (sweep.sweep_id > 0) j["sweep_id"] = sweep.sweep_id;
  j["points"] = nlohmann::json::array();
  for (const MeasuredPoint& p : sweep.points) {
    nlohmann::json q;
    q["value"] = p.value;
    q["ok"] = p.result.has_value();
    if (p.predicted_arena_bytes >= 0) q["predicted_arena_bytes"] = p.predicted_arena_bytes;
    if (!p.result) {
      q["error"] = p.error;
      j["points"].push_back(std::move(q));
      continue;
    }
    const ProfileResult& r = *p.result;
    const LatencyStats& s = r.stats;
    q["runs"] = s.count;
    q["p50_ms"] = s.p50_ms;
    q["p90_ms"] = s.p90_ms;
    q["avg_ms"] = s.avg_ms;
    q["min_ms"] = s.min_ms;
    q["max_ms"] = s.max_ms;
    q["arena_bytes"] = r.arena_bytes();
    q["prediction_exact"] = r.prediction_exact;
    q["plan_version"] = r.plan_version();
    q["peak_rss_bytes"] = r.report.peak_rss_bytes;
    const int64_t ops = r.counted_ops();
    if (ops >= 0) {
      q["ops"] = ops;
      q["ops_at_most"] = r.ops_at_most;
    }
    if (r.run_id > 0) q["run_id"] = r.run_id;
    q["groups"] = nlohmann::json::array();
    for (const GroupProfile& g : r.groups) {
      nlohmann::json gj{{"index", g.index},   {"name", g.name},     {"op_types", g.op_label()},
                        {"avg_ms", g.avg_ms}, {"p50_ms", g.p50_ms}, {"p90_ms", g.p90_ms}};
      if (g.ops >= 0) gj["ops"] = g.ops;
      // An If/Loop/Scan group's body nodes that ran, depth first, as the trace lists them;
      // empty for other groups.
      gj["body"] = nlohmann::json::array();
      for (const BodyNodeProfile& b : g.body) gj["body"].push_back(body_node_json(b));
      q["groups"].push_back(std::move(gj));
    }
    j["points"].push_back(std::move(q));
  }
  return j;
}

}  // namespace sod2::profiling
