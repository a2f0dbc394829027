#include "runtime/family/family_demo.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <memory>

#include "runtime/family/cpu_load.h"

namespace sod2::rt {
namespace {

// The whole of `s` as a finite number (the runtime does not throw, so no std::stod).
double parse_number(const std::string& s, bool* ok) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  *ok = ec == std::errc() && end == s.data() + s.size() && std::isfinite(v);
  return v;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<size_t>(std::min<double>(
      static_cast<double>(v.size() - 1), std::floor(q * static_cast<double>(v.size()))));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

}  // namespace

Expected<LoadSchedule> parse_load_schedule(const std::string& text, int default_threads) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (true) {
    const size_t colon = text.find(':', at);
    parts.push_back(text.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  const std::string usage =
      "--load expects T0:T1[:THREADS] (seconds into the run, e.g. 3:8:2), got '" + text + "'";
  if (parts.size() < 2 || parts.size() > 3) return invalid_argument(usage);
  LoadSchedule s;
  bool ok0 = false, ok1 = false;
  s.start_s = parse_number(parts[0], &ok0);
  s.stop_s = parse_number(parts[1], &ok1);
  if (!ok0 || !ok1 || s.start_s < 0 || s.stop_s <= s.start_s) {
    return invalid_argument(usage + ": T0 must be >= 0 and T1 > T0");
  }
  s.threads = default_threads;
  if (parts.size() == 3) {
    bool ok = false;
    const double t = parse_number(parts[2], &ok);
    if (!ok || t < 1 || t > 1024 || t != std::floor(t)) {
      return invalid_argument(usage + ": THREADS must be a whole number in 1..1024");
    }
    s.threads = static_cast<int>(t);
  }
  return s;
}

std::vector<uint64_t> variant_macs(const FamilySession& session) {
  std::vector<uint64_t> macs;
  for (int i = 0; i < session.variants(); ++i) macs.push_back(session.variant(i).macs);
  return macs;
}

DemoSummary summarize(const std::vector<uint64_t>& macs_of, const std::vector<DemoPoint>& points) {
  DemoSummary s;
  s.runs_per_variant.assign(macs_of.size(), 0);
  std::vector<double> latencies;
  double macs = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const DemoPoint& p = points[i];
    ++s.runs;
    const bool within = p.latency_ms <= p.budget_ms;
    s.within_budget += within;
    if (p.load_active) {
      ++s.runs_under_load;
      s.within_budget_under_load += within;
    }
    if (i > 0 && points[i - 1].variant != p.variant) ++s.switches;
    const auto v = static_cast<size_t>(p.variant);
    if (v >= macs_of.size()) continue;  // a point of another family: counted as a run only
    ++s.runs_per_variant[v];
    macs += static_cast<double>(macs_of[v]);
    latencies.push_back(p.latency_ms);
  }
  if (s.runs > 0) {
    s.mean_macs = macs / static_cast<double>(s.runs);
    s.p50_ms = percentile(latencies, 0.5);
    s.p90_ms = percentile(latencies, 0.9);
    s.p99_ms = percentile(latencies, 0.99);
    s.max_ms = *std::max_element(latencies.begin(), latencies.end());
    const double span = points.back().t_s;
    s.runs_per_s = span > 0 ? static_cast<double>(s.runs) / span : 0;
  }
  return s;
}

Expected<DemoResult> run_demo(FamilySession& session, std::span<const Tensor> inputs,
                              const DemoOptions& options,
                              const std::function<void(const DemoPoint&)>& on_run) {
  SOD2_RETURN_IF_ERROR(session.set_manager_enabled(options.managed));
  // The baseline: the largest variant throughout.
  if (!options.managed) SOD2_RETURN_IF_ERROR(session.set_variant(session.variants() - 1));
  const double budget = session.controller() ? session.controller()->budget_ms() : 0;
  // Time 0 is when the load's schedule starts, so its interval and the points line up.
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::unique_ptr<CpuLoad> load;
  if (options.load) {
    SOD2_ASSIGN_OR_RETURN(
        load, CpuLoad::start(options.load->threads, options.load->start_s, options.load->stop_s));
    // The load's processes were forked: until they exit they share this process's pages
    // copy-on-write, and the first write to each page copies it (measured: a first run of
    // 80 ms instead of 8). One untimed run per variant takes those copies before the clock starts.
    for (int i = 0; i < session.variants(); ++i) {
      auto out = session.session(i).run(inputs);
      if (!out.ok()) return out.status();
    }
  }
  DemoResult result;
  result.points.reserve(4096);
  while (elapsed() < options.duration_s) {
    if (options.cancel && options.cancel->load()) {
      result.cancelled = true;
      break;
    }
    auto out = session.run(inputs);
    if (!out.ok()) return out.status();
    DemoPoint p;
    p.t_s = elapsed();
    p.variant = session.last_variant();
    p.latency_ms = session.last_latency_ms();
    p.budget_ms = budget;
    p.load_active = options.load && p.t_s >= options.load->start_s && p.t_s < options.load->stop_s;
    p.switched = session.current() != p.variant;
    if (p.switched && session.controller()) {
      p.decision = session.controller()->last_decision().to_string();
    }
    if (on_run) on_run(p);
    result.points.push_back(std::move(p));
  }
  if (load) load->stop();
  result.summary = summarize(variant_macs(session), result.points);
  return result;
}

}  // namespace sod2::rt
