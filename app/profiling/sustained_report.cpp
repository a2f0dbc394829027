#include "app/profiling/sustained_report.h"

#include <algorithm>
#include <cstdio>

#include "core/status/byte_size.h"
#include "core/text/text_table.h"

namespace sod2::profiling {
namespace {

bool is_thermal(const store::SensorRecord& s) { return s.name.rfind("thermal:", 0) == 0; }
bool is_cpu_frequency(const store::SensorRecord& s) {
  return s.name.size() > 4 && s.name.compare(s.name.size() - 4, 4, " MHz") == 0;
}

std::string seconds(double s) { return text::fixed(s, s < 10 ? 1 : 0); }

}  // namespace

int64_t SustainedRun::total_runs() const {
  int64_t runs = 0;
  for (const store::WindowRecord& w : windows) runs += w.runs;
  return runs;
}

std::pair<const store::WindowRecord*, const store::WindowRecord*> SustainedRun::cold_and_last()
    const {
  const store::WindowRecord *first = nullptr, *last = nullptr;
  for (const store::WindowRecord& w : windows) {
    if (w.runs == 0) continue;
    if (!first) first = &w;
    last = &w;
  }
  if (first == last) return {nullptr, nullptr};
  return {first, last};
}

store::WindowRecord window_record(const device::SustainedWindow& w) {
  store::WindowRecord x;
  x.start_s = w.start_s;
  x.end_s = w.end_s;
  x.runs = static_cast<int64_t>(w.runs);
  x.min_ms = w.min_ms;
  x.p50_ms = w.p50_ms;
  x.p90_ms = w.p90_ms;
  x.p99_ms = w.p99_ms;
  x.max_ms = w.max_ms;
  x.mean_ms = w.mean_ms;
  x.rss_bytes = w.rss_bytes;
  x.group_mean_ms = w.group_mean_ms;
  for (const device::SensorStat& s : w.sensors) x.sensors.push_back({s.name, s.mean, s.max});
  return x;
}

SustainedRun sustained_from(const ProfileResult& result) {
  SustainedRun run;
  run.run_id = result.run_id;
  run.duration_s = result.settings.duration_s;
  run.window_s = result.settings.window_s;
  run.stopped_early = result.report.stopped_early;
  for (const device::SustainedWindow& w : result.report.windows)
    run.windows.push_back(window_record(w));
  run.unreadable_sensors = result.report.unreadable_sensors;
  for (const GroupProfile& g : result.groups)
    run.group_labels.push_back(g.op_label() + " " + g.name);
  return run;
}

SustainedRun sustained_from(const store::RunRecord& r) {
  SustainedRun run;
  run.run_id = r.id;
  run.duration_s = r.duration_s;
  run.window_s = r.window_s;
  run.stopped_early = r.stopped_early;
  run.windows = r.windows;
  run.unreadable_sensors = r.unreadable_sensors;
  for (const store::GroupRecord& g : r.groups) {
    if (g.index < 0 || g.index > (1 << 24)) continue;
    const auto i = static_cast<size_t>(g.index);
    if (run.group_labels.size() <= i) run.group_labels.resize(i + 1);
    run.group_labels[i] = store::names_label(g.op_types, '+') + " " + g.name;
  }
  return run;
}

WindowSensors window_sensors(const store::WindowRecord& w) {
  WindowSensors s;
  double sum = 0;
  for (const store::SensorRecord& r : w.sensors) {
    if (is_thermal(r) && (s.hottest.empty() || r.max > s.hottest_max_c)) {
      s.hottest = r.name.substr(8);
      s.hottest_max_c = r.max;
      s.hottest_mean_c = r.mean;
    } else if (is_cpu_frequency(r)) {
      s.cpu_min_mhz = s.cpus == 0 ? r.mean : std::min(s.cpu_min_mhz, r.mean);
      s.cpu_max_mhz = s.cpus == 0 ? r.mean : std::max(s.cpu_max_mhz, r.mean);
      sum += r.mean;
      ++s.cpus;
    }
  }
  if (s.cpus > 0) s.cpu_mean_mhz = sum / s.cpus;
  return s;
}

std::vector<GroupDrift> group_drift(const SustainedRun& run) {
  const auto [first, last] = run.cold_and_last();
  std::vector<GroupDrift> out;
  if (!first) return out;
  const size_t n = std::min(first->group_mean_ms.size(), last->group_mean_ms.size());
  for (size_t g = 0; g < n; ++g) {
    GroupDrift d;
    d.index = static_cast<int>(g);
    d.label = g < run.group_labels.size() ? run.group_labels[g] : "group " + std::to_string(g);
    d.first_ms = first->group_mean_ms[g];
    d.last_ms = last->group_mean_ms[g];
    out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const GroupDrift& a, const GroupDrift& b) {
    return a.delta_ms() > b.delta_ms();
  });
  return out;
}

void print_sustained_table(const SustainedRun& run, std::ostream& out, int top) {
  const double ran = run.windows.empty() ? 0 : run.windows.back().end_s;
  out << "\nSustained run: ran " << seconds(ran) << " s of the " << seconds(run.duration_s)
      << " s asked, " << run.windows.size() << " windows of " << seconds(run.window_s) << " s, "
      << run.total_runs() << " runs" << (run.stopped_early ? " (stopped early)" : "") << "\n";
  const bool thermal = std::any_of(run.windows.begin(), run.windows.end(), [](const auto& w) {
    return !window_sensors(w).hottest.empty();
  });
  const bool cpus = std::any_of(run.windows.begin(), run.windows.end(),
                                [](const auto& w) { return window_sensors(w).cpus > 0; });
  using text::Align;
  std::vector<text::Column> columns = {
      {"window", Align::kRight}, {"from s", Align::kRight}, {"to s", Align::kRight},
      {"runs", Align::kRight},   {"p50 ms", Align::kRight}, {"p90 ms", Align::kRight},
      {"p99 ms", Align::kRight}, {"max ms", Align::kRight}, {"RSS", Align::kRight}};
  if (thermal) columns.push_back({"hottest C (max)", Align::kRight});
  if (thermal) columns.push_back({"zone", Align::kLeft, 24});
  if (cpus) columns.push_back({"CPU MHz (min-max)", Align::kRight});
  text::TextTable table(std::move(columns), "  ");
  for (size_t i = 0; i < run.windows.size(); ++i) {
    const store::WindowRecord& w = run.windows[i];
    const WindowSensors s = window_sensors(w);
    const bool ran_any = w.runs > 0;
    std::vector<std::string> row = {std::to_string(i),
                                    seconds(w.start_s),
                                    seconds(w.end_s),
                                    std::to_string(w.runs),
                                    ran_any ? text::fixed(w.p50_ms, 2) : "-",
                                    ran_any ? text::fixed(w.p90_ms, 2) : "-",
                                    ran_any ? text::fixed(w.p99_ms, 2) : "-",
                                    ran_any ? text::fixed(w.max_ms, 2) : "-",
                                    human_bytes(w.rss_bytes)};
    if (thermal) {
      row.push_back(s.hottest.empty() ? "-" : text::fixed(s.hottest_max_c, 1));
      row.push_back(s.hottest);
    }
    if (cpus) {
      row.push_back(s.cpus == 0
                        ? "-"
                        : text::fixed(s.cpu_mean_mhz, 0) + " (" + text::fixed(s.cpu_min_mhz, 0) +
                              "-" + text::fixed(s.cpu_max_mhz, 0) + ")");
    }
    table.add_row(std::move(row));
  }
  out << table.str();
  const auto [first, last] = run.cold_and_last();
  if (first) {
    const size_t a = static_cast<size_t>(first - run.windows.data());
    const size_t b = static_cast<size_t>(last - run.windows.data());
    out << "\nWindow " << a << " (cold) -> window " << b << ": p50 "
        << text::fixed(first->p50_ms, 2) << " -> " << text::fixed(last->p50_ms, 2) << " ms ("
        << text::percent_change(first->p50_ms, last->p50_ms) << "), p99 "
        << text::fixed(first->p99_ms, 2) << " -> " << text::fixed(last->p99_ms, 2) << " ms ("
        << text::percent_change(first->p99_ms, last->p99_ms) << "), RSS "
        << human_bytes(first->rss_bytes) << " -> " << human_bytes(last->rss_bytes);
    const WindowSensors sa = window_sensors(*first), sb = window_sensors(*last);
    if (!sa.hottest.empty() && !sb.hottest.empty())
      out << ", hottest " << text::fixed(sa.hottest_max_c, 1) << " -> "
          << text::fixed(sb.hottest_max_c, 1) << " C";
    if (sa.cpus > 0 && sb.cpus > 0)
      out << ", CPU " << text::fixed(sa.cpu_mean_mhz, 0) << " -> "
          << text::fixed(sb.cpu_mean_mhz, 0) << " MHz";
    out << "\n";
    const std::vector<GroupDrift> drift = group_drift(run);
    int shown = 0;
    for (const GroupDrift& d : drift) {
      if (shown >= top || d.delta_ms() <= 0) break;
      if (shown++ == 0)
        out << "Groups that slowed most (mean ms, window " << a << " -> " << b << "):\n";
      out << "  #" << d.index << " " << text::elide_middle(d.label, 60) << "  "
          << text::fixed(d.first_ms, 3) << " -> " << text::fixed(d.last_ms, 3) << " ("
          << text::percent_change(d.first_ms, d.last_ms) << ")\n";
    }
  }
  if (!run.unreadable_sensors.empty()) {
    out << "Not read on this device:";
    for (const std::string& u : run.unreadable_sensors) out << "\n  " << u;
    out << "\n";
  }
  if (run.run_id > 0)
    out << "Recorded as run " << run.run_id << ": sod2 history --windows " << run.run_id
        << " prints this again.\n";
}

nlohmann::json sustained_json(const SustainedRun& run) {
  nlohmann::json j;
  j["run_id"] = run.run_id;
  j["duration_s"] = run.duration_s;
  j["window_s"] = run.window_s;
  j["stopped_early"] = run.stopped_early;
  j["unreadable_sensors"] = run.unreadable_sensors;
  nlohmann::json windows = nlohmann::json::array();
  for (const store::WindowRecord& w : run.windows) {
    nlohmann::json x = {{"start_s", w.start_s},    {"end_s", w.end_s},   {"runs", w.runs},
                        {"min_ms", w.min_ms},      {"p50_ms", w.p50_ms}, {"p90_ms", w.p90_ms},
                        {"p99_ms", w.p99_ms},      {"max_ms", w.max_ms}, {"mean_ms", w.mean_ms},
                        {"rss_bytes", w.rss_bytes}};
    x["group_mean_ms"] = w.group_mean_ms;
    nlohmann::json sensors = nlohmann::json::object();
    for (const store::SensorRecord& s : w.sensors)
      sensors[s.name] = {{"mean", s.mean}, {"max", s.max}};
    x["sensors"] = std::move(sensors);
    windows.push_back(std::move(x));
  }
  j["windows"] = std::move(windows);
  nlohmann::json drift = nlohmann::json::array();
  for (const GroupDrift& d : group_drift(run)) {
    drift.push_back(
        {{"group", d.index}, {"label", d.label}, {"first_ms", d.first_ms}, {"last_ms", d.last_ms}});
  }
  j["group_drift"] = std::move(drift);
  return j;
}

}  // namespace sod2::profiling
