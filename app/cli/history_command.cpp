#include <algorithm>
#include <cstdio>

#include "app/cli/command_line.h"
#include "app/cli/device_commands.h"
#include "app/profiling/profile_report.h"
#include "app/profiling/run_compare.h"
#include "core/store/profile_store.h"

namespace sod2::cli {
namespace {

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string cell(std::string s, size_t w, bool left = false) {
  if (s.size() > w) s = s.substr(0, w - 1) + "~";
  return left ? s + std::string(w - s.size(), ' ') : std::string(w - s.size(), ' ') + s;
}

int64_t parse_run_id(const std::string& s) {
  try {
    size_t used = 0;
    const long long v = std::stoll(s, &used);
    if (used == s.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("run ids are positive numbers (see sod2 history), got '" + s + "'");
}

void print_runs(const std::vector<store::RunRecord>& runs, std::ostream& out) {
  out << cell("RUN", 6) << "  " << cell("WHEN (UTC)", 20, true) << "  " << cell("DEVICE", 18, true)
      << "  " << cell("MODEL", 22, true) << "  " << cell("BINDING", 20, true) << cell("THR", 4)
      << cell("AVG MS", 10) << cell("STD", 8) << cell("ARENA", 10) << cell("PEAK RSS", 10)
      << "  STATUS\n";
  for (const store::RunRecord& r : runs) {
    out << cell(std::to_string(r.id), 6) << "  " << cell(r.started_at, 20, true) << "  "
        << cell(r.device.device_id, 18, true) << "  " << cell(r.model_name, 22, true) << "  "
        << cell(r.bindings, 20, true) << cell(std::to_string(r.threads), 4)
        << cell(r.ok ? ms(r.avg_ms) : "-", 10) << cell(r.ok ? ms(r.std_ms) : "-", 8)
        << cell(r.ok ? human_bytes(r.arena_bytes) : "-", 10)
        << cell(r.ok ? human_bytes(r.peak_rss_bytes) : "-", 10) << "  "
        << (r.ok ? "ok" : "failed: " + r.failure) << "\n";
  }
  if (runs.empty()) out << "(no runs recorded yet: sod2 profile MODEL records one)\n";
}

int compare(store::ProfileStore& db, int64_t a_id, int64_t b_id, std::ostream& out,
            std::ostream& err) {
  auto a = db.run(a_id);
  auto b = db.run(b_id);
  for (const auto* r : {&a, &b}) {
    if (!r->ok()) {
      err << "sod2 history: " << r->status().message() << "\n";
      return 1;
    }
    if (!(*r)->ok) {
      err << "sod2 history: run " << (*r)->id << " failed (" << (*r)->failure
          << "): it has no timings to compare\n";
      return 1;
    }
  }
  out << "A: run " << a->id << "  " << a->model_name << "  " << a->device.device_id << "  "
      << a->bindings << "  " << a->started_at << "\n";
  out << "B: run " << b->id << "  " << b->model_name << "  " << b->device.device_id << "  "
      << b->bindings << "  " << b->started_at << "\n";
  auto pct = [](double from, double to) {
    if (from <= 0) return std::string("-");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * (to - from) / from);
    return std::string(buf);
  };
  out << "latency avg: " << ms(a->avg_ms) << " -> " << ms(b->avg_ms) << " ms ("
      << pct(a->avg_ms, b->avg_ms) << "), arena " << human_bytes(a->arena_bytes) << " -> "
      << human_bytes(b->arena_bytes) << ", peak RSS " << human_bytes(a->peak_rss_bytes) << " -> "
      << human_bytes(b->peak_rss_bytes) << "\n\n";
  const std::vector<profiling::GroupDelta> rows = profiling::compare_groups(*a, *b);
  out << cell("op types", 26, true) << cell("A ms", 10) << cell("B ms", 10) << cell("delta ms", 10)
      << cell("delta", 10) << "  group\n";
  for (const profiling::GroupDelta& r : rows) {
    out << cell(r.op_types, 26, true) << cell(r.a_ms < 0 ? "-" : ms(r.a_ms), 10)
        << cell(r.b_ms < 0 ? "-" : ms(r.b_ms), 10) << cell(r.in_both() ? ms(r.delta_ms()) : "-", 10)
        << cell(r.in_both() ? pct(r.a_ms, r.b_ms) : (r.a_ms < 0 ? "only B" : "only A"), 10) << "  "
        << r.name << "\n";
  }
  return 0;
}

}  // namespace

int run_history(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl(
      {{"--model", true, "only runs of this model (name, path or hash prefix)", "M"},
       {"--device", true, "only runs on this device (local, adb:SERIAL)", "D"},
       {"--limit", true, "at most this many runs, newest first (default 50)", "N"},
       {"--compare", false, "compare two runs group by group: --compare RUN_A RUN_B", ""},
       {"--db", true, "the profile store (default ~/.local/share/sod2/profiles.db)", "PATH"},
       {"--help", false, "show this help", ""}});
  store::RunFilter filter;
  try {
    cl.parse(args);
    if (cl.has("--help")) {
      out << "usage: sod2 history [--model M] [--device D] [--limit N]\n"
             "       sod2 history --compare RUN_A RUN_B\n\nRuns recorded by sod2 profile and the "
             "studio, newest first; --compare shows per-group deltas.\n\noptions:\n"
          << cl.flags_help();
      return 0;
    }
    filter.model = cl.value("--model").value_or("");
    filter.device = cl.value("--device").value_or("");
    filter.limit = parse_count(cl.value("--limit"), 50, "--limit", 1);
    if (cl.has("--compare") ? cl.positional().size() != 2 : !cl.positional().empty())
      throw std::invalid_argument(cl.has("--compare")
                                      ? "--compare takes two run ids"
                                      : "unexpected argument '" + cl.positional()[0] + "'");
  } catch (const std::invalid_argument& e) {
    err << "sod2 history: " << e.what() << "\n";
    return 1;
  }
  const std::string path = cl.value("--db").value_or(store::ProfileStore::default_path());
  auto db = store::ProfileStore::open(path);
  if (!db.ok()) {
    err << "sod2 history: " << db.status().message() << "\n";
    return 1;
  }
  if (cl.has("--compare")) {
    try {
      return compare(**db, parse_run_id(cl.positional()[0]), parse_run_id(cl.positional()[1]), out,
                     err);
    } catch (const std::invalid_argument& e) {
      err << "sod2 history: " << e.what() << "\n";
      return 1;
    }
  }
  auto runs = (*db)->runs(filter);
  if (!runs.ok()) {
    err << "sod2 history: " << runs.status().message() << "\n";
    return 1;
  }
  print_runs(*runs, out);
  return 0;
}

}  // namespace sod2::cli
