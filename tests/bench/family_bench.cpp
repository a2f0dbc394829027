// `make bench` part 4: Dynamic-OFA families (every */variants.json of the corpus). For each: the
// family package against the separate packages (target <= 0.45), loading, the cost of a switch
// (target <= 1 ms) and of the first run after one, and the manager holding a budget under a
// competing CPU load against the largest variant alone, in the same run. Prints a markdown table
// and writes build/bench/family.json.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/profiling/run_inputs.h"
#include "core/family/family_writer.h"
#include "runtime/family/family_demo.h"
#include "runtime/family/family_session.h"
#include "runtime/kernels/kernel_registry.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int bench_family(const fs::path& file, const fs::path& models, nlohmann::json* out) {
  auto spec = sod2::family::read_family_spec(file.string());
  if (!spec.ok()) {
    std::cerr << spec.status().message() << "\n";
    return 1;
  }
  // The family's ranges: the models.json entry of its first variant, when there is one.
  sod2::family::FamilyCompileOptions options;
  std::ifstream in(models / "models.json");
  const auto manifest = nlohmann::json::parse(in, nullptr, false);
  const std::string first = fs::relative(spec->variants.front().model_path, models).string();
  if (manifest.is_array()) {
    for (const auto& e : manifest) {
      if (e.value("file", "") != first || !e.contains("ranges")) continue;
      for (const auto& [name, r] : e["ranges"].items()) {
        auto range = sod2::sym::SymbolRange::from_step(r[0].get<int64_t>(), r[1].get<int64_t>(),
                                                       r[2].get<int64_t>());
        if (range.ok()) options.compile.rdp.ranges[name] = *range;
      }
    }
  }
  sod2::family::FamilyPackageStats stats;
  auto t0 = Clock::now();
  auto bytes = sod2::family::build_family_package(*spec, options, &stats);
  const double compile_ms = ms_since(t0);
  if (!bytes.ok()) {
    std::cerr << bytes.status().message() << "\n";
    return 1;
  }
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(*bytes));
  t0 = Clock::now();
  auto family = sod2::rt::load_family_package(*owned, owned);
  const double load_ms = ms_since(t0);
  if (!family.ok()) {
    std::cerr << family.status().message() << "\n";
    return 1;
  }
  const double ratio =
      static_cast<double>(owned->size()) / static_cast<double>(stats.separate_bytes);
  const sod2::rt::FamilyLoadStats load = family->stats;

  sod2::rt::FamilySessionOptions so;
  auto session =
      sod2::rt::FamilySession::create(std::move(*family), sod2::rt::KernelRegistry::standard(), so);
  if (!session.ok()) {
    std::cerr << session.status().message() << "\n";
    return 1;
  }
  sod2::rt::FamilySession& s = **session;
  std::map<std::string, int64_t> bind;
  for (const auto& sym : s.variant(0).program.symbols) {
    if (sym.execution) continue;
    bind[sym.name] = sym.name == "batch" ? 1 : std::clamp<int64_t>(224, sym.lo, sym.hi);
  }
  auto shapes = sod2::profiling::bound_input_shapes(s.variant(0).program, bind);
  if (!shapes.ok()) {
    std::cerr << shapes.status().message() << "\n";
    return 1;
  }
  const auto inputs = sod2::profiling::random_inputs(s.variant(0).program, *shapes, {}, 1);
  std::vector<sod2::rt::Tensor> views;
  for (const auto& h : inputs) views.push_back(h.view());
  if (auto st = s.warm_up(views, 5); !st.ok()) {
    std::cerr << st.message() << "\n";
    return 1;
  }
  // A switch: choosing another ready session.
  constexpr int kSwitches = 1000000;
  t0 = Clock::now();
  for (int i = 0; i < kSwitches; ++i) (void)s.set_variant(i % s.variants());
  const double switch_us = ms_since(t0) * 1000 / kSwitches;
  // The first run after a switch against the variant's steady run (caches hold another variant).
  double first_sum = 0, steady_sum = 0;
  for (int round = 0; round < 20; ++round) {
    for (int v = 0; v < s.variants(); ++v) {
      (void)s.set_variant(v);
      (void)s.run(views);
      first_sum += s.last_measured_ms();
      (void)s.run(views);
      steady_sum += s.last_measured_ms();
    }
  }
  const double first_penalty = first_sum / steady_sum;

  // The demo: a budget between the two largest variants' expected latencies, made tight by one
  // busy process per core for the middle half of the run.
  const std::vector<double>& expected = s.expected_ms();
  const size_t n = expected.size();
  const double budget = n >= 2 ? 1.5 * expected[n - 1] : expected[0] * 1.5;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  sod2::rt::DemoOptions demo;
  demo.duration_s = 8;
  demo.load = sod2::rt::LoadSchedule{2, 6, 2 * cores};
  if (auto st = s.set_budget(budget); !st.ok()) {
    std::cerr << st.message() << "\n";
    return 1;
  }
  demo.managed = true;
  auto managed = sod2::rt::run_demo(s, views, demo);
  demo.managed = false;
  auto fixed = sod2::rt::run_demo(s, views, demo);
  if (!managed.ok() || !fixed.ok()) {
    std::cerr << (managed.ok() ? fixed.status() : managed.status()).message() << "\n";
    return 1;
  }
  const auto& m = managed->summary;
  const auto& f = fixed->summary;
  std::cout << "| " << spec->name << " | " << s.variants() << " | " << owned->size() << " | "
            << stats.separate_bytes << " | " << std::fixed << std::setprecision(3) << ratio
            << (ratio <= 0.45 ? " ✓" : " ✗") << " | " << std::setprecision(0) << compile_ms << " | "
            << std::setprecision(1) << load_ms << " | " << std::setprecision(3) << switch_us
            << (switch_us <= 1000 ? " ✓" : " ✗") << " | " << std::setprecision(2) << first_penalty
            << " | " << std::setprecision(1) << budget << " | "
            << 100 * m.fraction_within_under_load() << "% / "
            << 100 * f.fraction_within_under_load() << "% | " << 100 * m.fraction_within() << "% / "
            << 100 * f.fraction_within() << "% | " << m.mean_macs / 1e6 << " / "
            << f.mean_macs / 1e6 << " | " << m.switches << " |\n";
  (*out)[spec->name] = {{"variants", s.variants()},
                        {"family_bytes", owned->size()},
                        {"separate_bytes", stats.separate_bytes},
                        {"ratio", ratio},
                        {"compile_ms", compile_ms},
                        {"load_ms", load_ms},
                        {"views_built_bytes", load.built_bytes},
                        {"switch_us", switch_us},
                        {"first_run_after_switch_over_steady", first_penalty},
                        {"budget_ms", budget},
                        {"expected_ms", expected},
                        {"load", {{"start_s", 2}, {"stop_s", 6}, {"processes", 2 * cores}}},
                        {"managed",
                         {{"within", m.fraction_within()},
                          {"within_under_load", m.fraction_within_under_load()},
                          {"switches", m.switches},
                          {"mean_macs", m.mean_macs},
                          {"p90_ms", m.p90_ms},
                          {"runs", m.runs}}},
                        {"largest_alone",
                         {{"within", f.fraction_within()},
                          {"within_under_load", f.fraction_within_under_load()},
                          {"mean_macs", f.mean_macs},
                          {"p90_ms", f.p90_ms},
                          {"runs", f.runs}}}};
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: family_bench MODELS_DIR OUT_DIR\n";
    return 2;
  }
  const fs::path models = argv[1], out_dir = argv[2];
  std::vector<fs::path> families;
  for (const auto& e : fs::recursive_directory_iterator(models))
    if (e.path().filename() == "variants.json") families.push_back(e.path());
  std::sort(families.begin(), families.end());
  std::cout
      << "\n## Dynamic-OFA families (budget 1.5x the largest variant's warm-up latency; 2 busy "
         "processes per core from 2 to 6 s of 8 s; manager / largest alone)\n\n"
      << "| family | variants | family bytes | separate bytes | ratio (≤ 0.45) | compile ms | "
         "load ms | switch µs (≤ 1000) | first run after switch / steady | budget ms | "
         "within budget under load | within overall | mean MMACs | switches |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  nlohmann::json out = nlohmann::json::object();
  int status = 0;
  for (const fs::path& f : families) status |= bench_family(f, models, &out);
  if (families.empty()) std::cout << "(no */variants.json under " << models << ")\n";
  fs::create_directories(out_dir);
  std::ofstream(out_dir / "family.json") << out.dump(2) << "\n";
  return status;
}
