#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "app/cli/command_line.h"
#include "app/cli/device_commands.h"
#include "app/profiling/profile_report.h"
#include "app/profiling/recorded_run.h"
#include "app/profiling/run_compare.h"
#include "app/profiling/sustained_report.h"
#include "app/profiling/sweep_report.h"
#include "core/store/profile_store.h"
#include "core/text/text_table.h"

namespace sod2::cli {
namespace {

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

using text::Align;
using text::TextTable;

// The names a person may call a recorded model by: the stored name ("yolo_tiny/model.onnx" for
// a file with a generic name), the path, either's file name and stem, and for
// ".../yolo_tiny/model.onnx" its folder, which is what the model is called.
bool model_matches(const store::RunRecord& r, const std::string& wanted) {
  if (wanted.empty()) return true;
  for (const std::string& stored : {r.model_name, r.model_path}) {
    if (stored.empty()) continue;
    const std::filesystem::path p(stored);
    if (stored == wanted || p.filename() == wanted || p.stem() == wanted ||
        p.parent_path() / p.stem() == wanted)
      return true;
    if (p.stem() == "model" && p.has_parent_path() && p.parent_path().filename() == wanted)
      return true;
  }
  const bool hex = std::all_of(wanted.begin(), wanted.end(),
                               [](unsigned char c) { return std::isxdigit(c) != 0; });
  return hex && r.model_sha256.rfind(wanted, 0) == 0;
}

// Runs of one model: the same file, or the same model under the same name or path (edited or
// re-exported), whose groups are the same nodes.
bool same_model(const store::RunRecord& a, const store::RunRecord& b) {
  return a.model_sha256 == b.model_sha256 ||
         (!a.model_name.empty() && a.model_name == b.model_name) ||
         (!a.model_path.empty() && a.model_path == b.model_path);
}

int64_t parse_run_id(const std::string& s) {
  try {
    size_t used = 0;
    const long long v = std::stoll(s, &used);
    if (used == s.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(
      "run and sweep ids are positive numbers (see sod2 history and --sweeps), got '" + s + "'");
}

void print_runs(const std::vector<store::RunRecord>& runs, std::ostream& out) {
  if (runs.empty()) {
    out << "(no runs recorded yet: sod2 profile MODEL records one)\n";
    return;
  }
  const bool sweeps = std::any_of(runs.begin(), runs.end(),
                                  [](const store::RunRecord& r) { return r.sweep_id > 0; });
  std::vector<text::Column> columns = {{"RUN", Align::kRight},        {"WHEN (UTC)"},
                                       {"DEVICE", Align::kLeft, 24},  {"MODEL", Align::kLeft, 36},
                                       {"BINDING", Align::kLeft, 36}, {"THR", Align::kRight},
                                       {"AVG MS", Align::kRight},     {"STD", Align::kRight},
                                       {"ARENA", Align::kRight},      {"PEAK RSS", Align::kRight}};
  if (sweeps) columns.push_back({"SWEEP", Align::kRight});
  const bool sustained = std::any_of(runs.begin(), runs.end(),
                                     [](const store::RunRecord& r) { return r.duration_s > 0; });
  if (sustained) columns.push_back({"SUSTAINED", Align::kRight});
  columns.push_back({"STATUS"});
  TextTable table(std::move(columns));
  for (const store::RunRecord& r : runs) {
    std::vector<std::string> row = {std::to_string(r.id),
                                    r.started_at,
                                    r.device.device_id,
                                    r.model_name,
                                    r.bindings,
                                    std::to_string(r.threads),
                                    r.ok ? ms(r.avg_ms) : "-",
                                    r.ok ? ms(r.std_ms) : "-",
                                    r.ok ? human_bytes(r.arena_bytes) : "-",
                                    r.ok ? human_bytes(r.peak_rss_bytes) : "-"};
    if (sweeps) row.push_back(r.sweep_id > 0 ? "#" + std::to_string(r.sweep_id) : "");
    if (sustained) row.push_back(r.duration_s > 0 ? text::fixed(r.duration_s, 0) + " s" : "");
    row.push_back(r.ok ? "ok" : "failed: " + r.failure);
    table.add_row(std::move(row));
  }
  out << table.str();
}

int compare(store::ProfileStore& db, int64_t a_id, int64_t b_id, bool force, std::ostream& out,
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
  if (!same_model(*a, *b)) {
    if (!force) {
      err << "sod2 history: run " << a->id << " is of " << a->model_name << " and run " << b->id
          << " of " << b->model_name
          << ": groups of different models are different nodes, so a group-by-group comparison "
             "would pair unrelated ones that happen to share a name; pass --force to compare "
             "them anyway\n";
      return 1;
    }
    out << "warning: different models (" << a->model_name << ", " << b->model_name
        << "): only groups with the same name are paired, and they need not be the same nodes\n";
  }
  out << "A: run " << a->id << "  " << a->model_name << "  " << a->device.device_id << "  "
      << a->bindings << "  " << a->started_at << "\n";
  out << "B: run " << b->id << "  " << b->model_name << "  " << b->device.device_id << "  "
      << b->bindings << "  " << b->started_at << "\n";
  out << "latency avg: " << ms(a->avg_ms) << " -> " << ms(b->avg_ms) << " ms ("
      << text::percent_change(a->avg_ms, b->avg_ms) << "), arena " << human_bytes(a->arena_bytes)
      << " -> " << human_bytes(b->arena_bytes) << ", peak RSS " << human_bytes(a->peak_rss_bytes)
      << " -> " << human_bytes(b->peak_rss_bytes) << "\n\n";
  const std::vector<profiling::GroupDelta> rows = profiling::compare_groups(*a, *b);
  // Control-flow groups both runs broke down have their body nodes under them, indented by
  // depth as in `sod2 profile`, with their calls per run (a loop's iterations may differ).
  const bool bodies = std::any_of(rows.begin(), rows.end(),
                                  [](const profiling::GroupDelta& r) { return !r.body.empty(); });
  std::vector<text::Column> columns = {{"op types", Align::kLeft, 32},
                                       {"A ms", Align::kRight},
                                       {"B ms", Align::kRight},
                                       {"delta ms", Align::kRight},
                                       {"delta", Align::kRight}};
  if (bodies) columns.push_back({"calls", Align::kRight});
  columns.push_back({"group"});
  TextTable table(std::move(columns));
  const auto side = [](double v) { return v < 0 ? std::string("-") : ms(v); };
  for (const profiling::GroupDelta& r : rows) {
    std::vector<std::string> row = {
        r.op_types, side(r.a_ms), side(r.b_ms), r.in_both() ? ms(r.delta_ms()) : "-",
        r.in_both() ? text::percent_change(r.a_ms, r.b_ms) : (r.a_ms < 0 ? "only B" : "only A")};
    if (bodies) row.push_back("");
    row.push_back(r.name);
    table.add_row(std::move(row));
    for (const profiling::BodyDelta& d : r.body) {
      std::vector<std::string> body_row = {
          std::string(2 * static_cast<size_t>(std::max(d.depth, 0)), ' ') + d.body + ": " +
              d.op_types,
          side(d.a_ms), side(d.b_ms), d.in_both() ? ms(d.delta_ms()) : "-",
          d.in_both() ? text::percent_change(d.a_ms, d.b_ms) : (d.a_ms < 0 ? "only B" : "only A")};
      const std::string a_calls = "x" + profiling::calls_per_run_text(d.a_calls);
      const std::string b_calls = "x" + profiling::calls_per_run_text(d.b_calls);
      body_row.push_back(!d.in_both()         ? (d.a_ms < 0 ? b_calls : a_calls)
                         : a_calls == b_calls ? a_calls
                                              : a_calls + " -> " + b_calls);
      body_row.push_back(d.name);
      table.add_row(std::move(body_row));
    }
  }
  out << table.str();
  if (bodies) {
    out << "\nBody nodes of If/Loop/Scan groups are indented under them (ms per run; calls per "
           "run, A -> B where they differ)\n";
  }
  return 0;
}

int compare_sweeps(store::ProfileStore& db, int64_t a_id, int64_t b_id, bool force,
                   std::ostream& out, std::ostream& err) {
  auto a = db.sweep(a_id);
  auto b = db.sweep(b_id);
  for (const auto* w : {&a, &b}) {
    if (!w->ok()) {
      err << "sod2 history: " << w->status().message() << "\n";
      return 1;
    }
  }
  if (a->symbol != b->symbol) {
    err << "sod2 history: sweep " << a->id << " varies " << a->symbol << " and sweep " << b->id
        << " varies " << b->symbol << ": their points are not the same sizes\n";
    return 1;
  }
  const bool same_model = !a->runs.empty() && !b->runs.empty() &&
                          (a->runs.front().model_sha256 == b->runs.front().model_sha256 ||
                           a->model_name == b->model_name);
  if (!same_model || a->held != b->held) {
    if (!force) {
      err << "sod2 history: sweep " << a->id << " is of " << a->model_name << " (held "
          << (a->held.empty() ? "nothing" : a->held) << ") and sweep " << b->id << " of "
          << b->model_name << " (held " << (b->held.empty() ? "nothing" : b->held)
          << "): pass --force to compare them anyway\n";
      return 1;
    }
    out << "warning: different models or held values; points pair by " << a->symbol << " only\n";
  }
  out << "A: sweep " << a->id << "  " << a->model_name << "  " << a->device_id << "  " << a->symbol
      << " " << a->lo << ".." << a->hi << "  " << a->started_at << "\n";
  out << "B: sweep " << b->id << "  " << b->model_name << "  " << b->device_id << "  " << b->symbol
      << " " << b->lo << ".." << b->hi << "  " << b->started_at << "\n\n";
  const std::vector<profiling::SweepPointDelta> rows = profiling::compare_sweeps(*a, *b);
  TextTable table({{a->symbol, Align::kRight},
                   {"A p50 ms", Align::kRight},
                   {"B p50 ms", Align::kRight},
                   {"delta", Align::kRight},
                   {"A arena", Align::kRight},
                   {"B arena", Align::kRight},
                   {"runs", Align::kRight},
                   {"note"}});
  const profiling::SweepPointDelta* worst = nullptr;
  for (const profiling::SweepPointDelta& r : rows) {
    std::string note;
    if (!r.a_failure.empty()) note = "A failed: " + r.a_failure;
    if (!r.b_failure.empty()) note += (note.empty() ? "" : "; ") + ("B failed: " + r.b_failure);
    if (r.in_both() && (!worst || r.delta_percent() > worst->delta_percent())) worst = &r;
    table.add_row({std::to_string(r.value), r.a_p50_ms >= 0 ? ms(r.a_p50_ms) : "-",
                   r.b_p50_ms >= 0 ? ms(r.b_p50_ms) : "-",
                   r.in_both() ? text::signed_percent(r.delta_percent()) : "-",
                   r.a_arena >= 0 ? human_bytes(r.a_arena) : "-",
                   r.b_arena >= 0 ? human_bytes(r.b_arena) : "-",
                   r.in_both() ? std::to_string(r.a_run) + "," + std::to_string(r.b_run) : "",
                   text::elide_middle(note, 100)});
  }
  out << table.str();
  if (worst) {
    out << "\nLargest slowdown at " << a->symbol << "=" << worst->value << " ("
        << text::signed_percent(worst->delta_percent()) << "): sod2 history --compare "
        << worst->a_run << " " << worst->b_run << " shows it group by group.\n";
  }
  return 0;
}

// One recorded run: what the store kept of its header, then the group tables `sod2 profile`
// printed (one printer, profile_report.h), body nodes under their If/Loop/Scan groups.
int show_run(store::ProfileStore& db, int64_t id, int top, std::ostream& out, std::ostream& err) {
  auto run = db.run(id);
  if (!run.ok()) {
    err << "sod2 history: " << run.status().message() << "\n";
    return 1;
  }
  const store::RunRecord& r = *run;
  // What the device said about itself and the model's file name are shown, never acted on.
  using text::visible;
  out << "run " << r.id << "  " << visible(r.model_name) << "  " << visible(r.device.device_id)
      << "  " << (r.bindings.empty() ? "(no symbols)" : visible(r.bindings)) << "  "
      << visible(r.started_at) << "\n";
  out << "Device: " << visible(r.device.device_id)
      << (r.device.model.empty() ? "" : " (" + visible(r.device.model) + ")") << ", "
      << visible(r.device.arch) << ", " << r.device.cores << " cores, "
      << human_bytes(r.device.memory_bytes) << ", " << visible(r.device.os) << "; agent "
      << visible(r.agent_software) << ", host " << visible(r.host_software) << "\n";
  out << "Model: " << visible(r.model_path) << " (sha256 " << visible(r.model_sha256.substr(0, 12))
      << ")";
  if (!r.package_sha256.empty()) out << ", package " << human_bytes(r.package_bytes);
  out << "\nThreads " << r.threads << ", " << r.runs << " runs after " << r.warmup << " warm-up\n";
  if (!r.ok) {
    out << "Failed: " << visible(r.failure) << "\n";
    return 0;
  }
  const profiling::ProfileResult shown = profiling::result_from_record(r);
  const profiling::LatencyStats& s = shown.stats;
  out << "Latency (ms): count=" << s.count << " first=" << ms(r.first_ms)
      << " warmup_avg=" << ms(r.warmup_avg_ms) << " avg=" << ms(r.avg_ms) << " std=" << ms(r.std_ms)
      << " min=" << ms(r.min_ms) << " max=" << ms(r.max_ms) << " p50=" << ms(s.p50_ms)
      << " p90=" << ms(s.p90_ms) << "\n";
  out << "Memory: arena " << human_bytes(r.arena_bytes);
  if (r.predicted_arena_bytes >= 0)
    out << " (the plan's " << (r.prediction_exact ? "at these sizes " : "at the bounds ")
        << human_bytes(r.predicted_arena_bytes) << ")";
  out << ", agent peak RSS " << human_bytes(r.peak_rss_bytes) << "\n";
  profiling::print_group_tables(shown, out, top);
  return 0;
}

void print_sweeps(const std::vector<store::SweepRecord>& sweeps, std::ostream& out) {
  if (sweeps.empty()) {
    out << "(no sweeps recorded yet: sod2 profile MODEL --sweep NAME=lo:hi:step records one)\n";
    return;
  }
  TextTable table({{"SWEEP", Align::kRight},
                   {"WHEN (UTC)"},
                   {"DEVICE", Align::kLeft, 24},
                   {"MODEL", Align::kLeft, 36},
                   {"SYMBOL"},
                   {"VALUES"},
                   {"HELD", Align::kLeft, 36},
                   {"POINTS", Align::kRight},
                   {"FAILED", Align::kRight}});
  for (const store::SweepRecord& w : sweeps) {
    table.add_row(
        {std::to_string(w.id), w.started_at, w.device_id, w.model_name, w.symbol,
         std::to_string(w.lo) + ".." + std::to_string(w.hi) + " step " + std::to_string(w.step),
         w.held, std::to_string(w.points), std::to_string(w.failed)});
  }
  out << table.str();
}

}  // namespace

int run_history(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl(
      {{"--model", true,
        "only runs of this model: its name as recorded (yolo_tiny/model.onnx), its path, file "
        "name or stem, its folder for a model.onnx (yolo_tiny), or a prefix of its sha256",
        "M"},
       {"--device", true, "only runs on this device (local, adb:SERIAL)", "D"},
       {"--limit", true, "at most this many runs, newest first (default 50)", "N"},
       {"--compare", false,
        "compare two runs group by group (If/Loop/Scan groups' body nodes indented under "
        "them): --compare RUN_A RUN_B; runs of different models are refused",
        ""},
       {"--force", false,
        "with --compare or --compare-sweeps: compare runs or sweeps of different models anyway",
        ""},
       {"--compare-sweeps", false,
        "compare two measured sweeps of one symbol point by point: --compare-sweeps SWEEP_A "
        "SWEEP_B",
        ""},
       {"--sweeps", false, "list the measured sweeps (sod2 profile --sweep) instead of runs", ""},
       {"--sweep", true, "one measured sweep, point by point, as sod2 profile --sweep printed it",
        "ID"},
       {"--windows", true,
        "a sustained run (sod2 profile --duration) window by window, its cold start beside its "
        "end",
        "RUN"},
       {"--run", true,
        "one run as sod2 profile printed it: its groups in execution order (If/Loop/Scan "
        "groups' body nodes indented under them), top by time, by op type",
        "RUN"},
       {"--json", false, "with --sweep or --windows: as JSON", ""},
       {"--top", true,
        "with --sweep: groups in the scaling section; with --run: in the top by time (default "
        "10)",
        "N"},
       {"--db", true, "the profile store (default ~/.local/share/sod2/profiles.db)", "PATH"},
       {"--help", false, "show this help", ""}});
  store::RunFilter filter;
  try {
    cl.parse(args);
    if (cl.has("--help")) {
      out << "usage: sod2 history [--model M] [--device D] [--limit N]\n"
             "       sod2 history --compare RUN_A RUN_B [--force]\n"
             "       sod2 history --sweeps [--model M] [--device D] | --sweep ID [--json]\n"
             "       sod2 history --compare-sweeps SWEEP_A SWEEP_B [--force]\n"
             "       sod2 history --run RUN [--top N]\n"
             "       sod2 history --windows RUN [--json]\n\n"
             "Runs recorded by sod2 profile and the studio, newest first. --model matches the\n"
             "model's recorded name, path, file name, stem or folder (yolo_tiny for\n"
             ".../yolo_tiny/model.onnx). --compare shows per-group deltas between two runs of\n"
             "one model (the same file, or the same name or path); it refuses runs of two\n"
             "different models, whose groups are different nodes, unless --force. --sweeps lists\n"
             "the measured sweeps; --sweep ID prints one (each point is also a run). --windows\n"
             "prints a sustained run (sod2 profile --duration) per window of time, and compares\n"
             "its first window (the cold start) with its last. --run prints one run's groups as\n"
             "sod2 profile did, with what ran inside its If/Loop/Scan nodes.\n\noptions:\n"
          << cl.flags_help();
      return 0;
    }
    filter.model = cl.value("--model").value_or("");
    filter.device = cl.value("--device").value_or("");
    filter.limit = parse_count(cl.value("--limit"), 50, "--limit", 1);
    const bool pair = cl.has("--compare") || cl.has("--compare-sweeps");
    if (cl.has("--compare") && cl.has("--compare-sweeps"))
      throw std::invalid_argument("--compare and --compare-sweeps do not combine");
    if (pair ? cl.positional().size() != 2 : !cl.positional().empty())
      throw std::invalid_argument(pair ? std::string(cl.has("--compare")
                                                         ? "--compare takes two run ids"
                                                         : "--compare-sweeps takes two sweep ids")
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
  if (auto id = cl.value("--sweep")) {
    int64_t sweep_id = 0;
    int top = 10;
    try {
      sweep_id = parse_run_id(*id);
      top = parse_count(cl.value("--top"), 10, "--top", 0);
    } catch (const std::invalid_argument& e) {
      err << "sod2 history: --sweep: " << e.what() << "\n";
      return 1;
    }
    auto sweep = (*db)->sweep(sweep_id);
    if (!sweep.ok()) {
      err << "sod2 history: " << sweep.status().message() << "\n";
      return 1;
    }
    profiling::ProfileSweep shown = profiling::sweep_from_record(*sweep);
    shown.db_path = path;
    if (cl.has("--json")) {
      out << profiling::json_text(profiling::sweep_json(shown), 2) << "\n";
    } else {
      profiling::print_sweep_table(shown, out, top);
    }
    return 0;
  }
  if (auto id = cl.value("--run")) {
    try {
      const int64_t run_id = parse_run_id(*id);
      return show_run(**db, run_id, parse_count(cl.value("--top"), 10, "--top", 0), out, err);
    } catch (const std::invalid_argument& e) {
      err << "sod2 history: --run: " << e.what() << "\n";
      return 1;
    }
  }
  if (auto id = cl.value("--windows")) {
    int64_t run_id = 0;
    try {
      run_id = parse_run_id(*id);
    } catch (const std::invalid_argument& e) {
      err << "sod2 history: --windows: " << e.what() << "\n";
      return 1;
    }
    auto run = (*db)->run(run_id);
    if (!run.ok()) {
      err << "sod2 history: " << run.status().message() << "\n";
      return 1;
    }
    if (run->duration_s <= 0) {
      err << "sod2 history: run " << run_id
          << " is not a sustained run (sod2 profile --duration records one); its SUSTAINED "
             "column in sod2 history is empty\n";
      return 1;
    }
    const profiling::SustainedRun shown = profiling::sustained_from(*run);
    if (cl.has("--json")) {
      out << profiling::json_text(profiling::sustained_json(shown), 2) << "\n";
    } else {
      out << "run " << run->id << "  " << run->model_name << "  " << run->device.device_id << "  "
          << run->bindings << "  " << run->started_at << "\n";
      profiling::print_sustained_table(shown, out);
    }
    return 0;
  }
  if (cl.has("--sweeps")) {
    auto sweeps = (*db)->sweeps(filter);
    if (!sweeps.ok()) {
      err << "sod2 history: " << sweeps.status().message() << "\n";
      return 1;
    }
    print_sweeps(*sweeps, out);
    return 0;
  }
  if (cl.has("--compare-sweeps")) {
    try {
      return compare_sweeps(**db, parse_run_id(cl.positional()[0]),
                            parse_run_id(cl.positional()[1]), cl.has("--force"), out, err);
    } catch (const std::invalid_argument& e) {
      err << "sod2 history: --compare-sweeps: " << e.what() << "\n";
      return 1;
    }
  }
  if (cl.has("--compare")) {
    try {
      return compare(**db, parse_run_id(cl.positional()[0]), parse_run_id(cl.positional()[1]),
                     cl.has("--force"), out, err);
    } catch (const std::invalid_argument& e) {
      err << "sod2 history: " << e.what() << "\n";
      return 1;
    }
  }
  // The store matches exact names only; the names people use are matched here, over every run
  // of the device, newest first, before the limit.
  store::RunFilter every = filter;
  every.model.clear();
  every.limit = -1;  // SQLite: no limit
  auto runs = (*db)->runs(every);
  if (!runs.ok()) {
    err << "sod2 history: " << runs.status().message() << "\n";
    return 1;
  }
  std::vector<store::RunRecord> shown;
  for (store::RunRecord& r : *runs)
    if (static_cast<int64_t>(shown.size()) < filter.limit && model_matches(r, filter.model))
      shown.push_back(std::move(r));
  if (shown.empty() && !filter.model.empty() && !runs->empty()) {
    out << "(no runs of a model called " << filter.model
        << ": --model takes its name, path, file name, stem or folder, or a sha256 prefix)\n";
    return 0;
  }
  print_runs(shown, out);
  return 0;
}

}  // namespace sod2::cli
