// `plan_bench [MODELS_DIR] [OUT_DIR]`: the memory plan against its yardsticks on every model of
// the corpus at its three bindings (arena / lower bound, arena / greedy, chosen order's peak vs
// the source order's), and plan instantiation time on corpus models and on synthetic
// transformer-like graphs of 1k and 10k nodes. Prints markdown tables and writes
// OUT_DIR/plan.json. A program, not a test: ctest never times anything.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../bench/synthetic_models.h"
#include "candidate_plan.h"
#include "core/onnx/onnx_import.h"
#include "core/opt/fusion.h"
#include "core/opt/memory_plan.h"
#include "core/opt/plan_text.h"
#include "core/opt/report_binding.h"
#include "core/pipeline/compiled_model.h"
#include "core/pipeline/plan_sweep.h"
#include "core/rdp/binding.h"
#include "corpus.h"
#include "runtime/program/binding_layout.h"
#include "runtime/program/program_dataflow.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace sod2;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Median wall time of one instantiation, in µs, over `runs` runs.
double instantiate_us(const opt::MemoryPlan& plan, const sym::Binding& binding, int runs) {
  auto inputs = plan.program.inputs_from(binding);
  if (!inputs.ok()) return -1;
  opt::PlanInstance inst = plan.program.make_instance();
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    Status st = plan.program.instantiate(*inputs, &inst);
    t.push_back(1000.0 * ms_since(t0));
    if (!st.ok()) return -1;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Median wall time, in µs over `runs` runs, of choosing the binding's layout as a session does
// on a binding it has not seen (runtime/program/binding_layout.h); 0 where it does not apply.
double binding_layout_us(const pipeline::CompiledModel& c, const opt::PlanAtBinding& at, int runs) {
  const opt::MemoryPlan& plan = c.plan;
  const RdpResult& rdp = c.rdp;
  const rt::ProgramDesc& p = c.program;
  if (plan::execution_layout_applies(p)) {
    // With execution symbols: the layering a session chooses at a new binding.
    auto lives = rt::check_program_dataflow(p);
    if (!lives.ok()) return -1;
    std::vector<int64_t> values(p.symbols.size(), 0);
    for (size_t k = 0; k < p.symbols.size(); ++k)
      for (const auto& [s, v] : at.binding)
        if (s.name() == p.symbols[k].name) values[k] = v;
    const int32_t version = plan.version_for(at.binding);
    const rt::ShapeProgram& program =
        version < 0 || static_cast<size_t>(version) >= p.plan_versions.size()
            ? p.plan_program
            : p.plan_versions[static_cast<size_t>(version)];
    plan::ExecutionLayout layout;
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
      const auto t0 = Clock::now();
      if (!layout.choose(p, program, lives->life, values).ok()) return -1;
      t.push_back(1000.0 * ms_since(t0));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
  if (!opt::binding_greedy_applies(plan, rdp)) return 0;
  auto own = opt::evaluate_plan(plan, rdp, at.binding, plan.version_for(at.binding));
  if (!own.ok()) return -1;
  const size_t n = own->tensors.size();
  std::vector<int64_t> planned(2 * n + 1);
  for (size_t t = 0; t < n; ++t) {
    planned[t] = own->tensors[t].size;
    planned[n + t] = own->tensors[t].offset;
  }
  planned[2 * n] = own->arena_bytes;
  plan::GreedyLayout greedy;
  std::vector<int64_t> values, scratch;
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    values = planned;
    const auto t0 = Clock::now();
    plan::use_greedy_if_smaller(values, plan.lives, &greedy, &scratch);
    t.push_back(1000.0 * ms_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::string fixed3(double v) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(3) << v;
  return s.str();
}

std::string ratio(int64_t a, int64_t b) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(3) << (b > 0 ? static_cast<double>(a) / b : 1.0);
  return s.str();
}

// Random bindings inside the ranges (multiples respected, execution symbols inside their bounds)
// that satisfy RDP's assumptions, from a fixed seed.
std::vector<sym::Binding> random_bindings(const RdpResult& rdp, int count, uint64_t seed) {
  std::vector<sym::Binding> out;
  uint64_t state = seed;
  auto draw = [&](int64_t lo, int64_t hi) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<int64_t>((state >> 17) % static_cast<uint64_t>(hi - lo + 1));
  };
  for (int attempt = 0; attempt < 50 * count && static_cast<int>(out.size()) < count; ++attempt) {
    std::map<std::string, int64_t> values;
    // The input symbols first; then each execution symbol (oldest first) up to its bound at the
    // values drawn so far, not over the whole ranges (most such draws would be refused).
    for (const bool execution : {false, true}) {
      sym::Binding so_far;
      if (execution) {
        auto b = make_binding(rdp, values);
        if (!b.ok()) break;
        so_far = std::move(*b);
      }
      for (const SymbolInfo& info : rdp.symbols()) {
        if ((info.kind != SymbolKind::kInput) != execution) continue;
        const sym::SymbolRange r = rdp.ranges().get(info.symbol);
        int64_t hi = opt::report_upper_bound(rdp, info.symbol);
        if (execution) {
          if (auto limit = execution_limit(rdp, info.symbol, so_far)) hi = std::min(hi, *limit);
          if (hi < r.lo) continue;
        }
        const int64_t v = r.lo + r.multiple * draw(0, (hi - r.lo) / r.multiple);
        values[info.symbol.name()] = v;
        if (execution) so_far[info.symbol] = v;
      }
    }
    if (auto b = make_binding(rdp, values); b.ok()) out.push_back(*b);
  }
  return out;
}

std::string binding_text(const std::map<std::string, int64_t>& b) {
  std::string s;
  for (const auto& [k, v] : b) s += (s.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return s;
}

int corpus_table(const std::filesystem::path& models, nlohmann::json* out) {
  auto corpus = testing::read_corpus(models);
  if (!corpus.ok()) {
    std::cerr << "plan_bench: " << corpus.status().message() << "\n";
    return 1;
  }
  std::vector<std::vector<std::string>> spread, launches;
  std::cout << "## Memory plan per model and binding (bytes)\n\n"
            << "| model | binding | tensors | arena | lower bound | arena/LB | greedy | "
               "arena/greedy | naive | order peak | source peak | order | compile ms | "
               "instantiate µs | binding layout µs | unfused arena | fused/unfused |\n"
            << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|"
               "\n";
  // A model that fails is named and skipped: a corpus of models never seen is where failures
  // are found, and the others still deserve their numbers.
  std::vector<std::string> failed;
  for (const testing::CorpusModel& m : *corpus) {
    const bool ok = [&]() -> bool {
      // RDP alone first, to bind the benchmark bindings the order is also judged at.
      auto analysed = pipeline::compile_file(m.file.string(), [&] {
        pipeline::CompileOptions o;
        o.rdp = m.options;
        o.plan = false;
        return o;
      }());
      if (!analysed.ok()) {
        std::cerr << m.name << ": " << analysed.status().message() << "\n";
        return false;
      }
      std::vector<sym::Binding> bindings;
      for (const auto& b : m.bindings) {
        auto binding = make_binding(analysed->rdp, b);
        if (!binding.ok()) {
          std::cerr << m.name << ": " << binding.status().message() << "\n";
          return false;
        }
        bindings.push_back(*binding);
      }
      // The plan the runtime runs: the pipeline's, over the groups the CPU has fused kernels for.
      pipeline::CompileOptions options;
      options.rdp = m.options;
      options.check_bindings = bindings;
      // With the program: a binding of a plan with execution symbols runs a layout the session
      // chooses from it (pipeline::plan_at makes the same choice).
      const auto t0 = Clock::now();
      auto compiled = pipeline::compile_file(m.file.string(), options);
      const double plan_ms = ms_since(t0);  // import, RDP, fusion, order, plan, versions, program
      // The same model planned one node per step with every value materialised: what fusion
      // saves in memory on top of what it saves in launches.
      pipeline::CompileOptions unfused_options = options;
      unfused_options.fuse = false;
      auto compiled_unfused = pipeline::compile_file(m.file.string(), unfused_options);
      if (!compiled.ok() || !compiled_unfused.ok()) {
        std::cerr << m.name << ": "
                  << (compiled.ok() ? compiled_unfused : compiled).status().message() << "\n";
        return false;
      }
      const Model* model = &compiled->model;
      const RdpResult* rdp = &compiled->rdp;
      const opt::MemoryPlan* plan = &compiled->plan;
      const opt::MemoryPlan* unfused = &compiled_unfused->plan;
      for (size_t i = 0; i < bindings.size(); ++i) {
        // What runs there (pipeline::plan_at: a binding's own layout where it beats the version).
        auto at = pipeline::plan_at(*compiled, bindings[i]);
        auto at_unfused = pipeline::plan_at(*compiled_unfused, bindings[i]);
        if (!at.ok() || !at_unfused.ok()) {
          std::cerr << m.name << ": " << (at.ok() ? at_unfused : at).status().message() << "\n";
          return false;
        }
        const double us = instantiate_us(*plan, at->binding, 201);
        const double layout_us = binding_layout_us(*compiled, *at, 21);
        std::cout << "| " << m.name << " | " << binding_text(m.bindings[i]) << " | "
                  << at->tensors.size() << " | " << at->arena_bytes << " | "
                  << at->lower_bound_bytes << " | " << ratio(at->arena_bytes, at->lower_bound_bytes)
                  << " | " << at->greedy_bytes << " | " << ratio(at->arena_bytes, at->greedy_bytes)
                  << " | " << at->naive_bytes << " | " << at->lower_bound_bytes << " | "
                  << at->source_order_peak_bytes << " | " << plan->order.strategy << " | "
                  << std::fixed << std::setprecision(1) << plan_ms << " | " << std::setprecision(2)
                  << us << " | " << layout_us << " | " << at_unfused->arena_bytes << " | "
                  << ratio(at->arena_bytes, at_unfused->arena_bytes) << " |\n";
        (*out)["bindings"].push_back({{"model", m.name},
                                      {"binding", m.bindings[i]},
                                      {"tensors", at->tensors.size()},
                                      {"arena_bytes", at->arena_bytes},
                                      {"lower_bound_bytes", at->lower_bound_bytes},
                                      {"greedy_bytes", at->greedy_bytes},
                                      {"naive_bytes", at->naive_bytes},
                                      {"source_order_peak_bytes", at->source_order_peak_bytes},
                                      {"order", plan->order.strategy},
                                      {"unfused_arena_bytes", at_unfused->arena_bytes},
                                      {"compile_ms", plan_ms},
                                      {"plan_instantiate_us", us},
                                      {"binding_layout_us", layout_us}});
      }
      // Beyond the three benchmark bindings: the upper bounds and random bindings.
      double worst_lb = 0, worst_greedy = 0, sum_lb = 0, worst_whole = 0;
      std::string worst_greedy_at;  // the random binding where the plan is furthest above greedy
      const std::vector<sym::Binding> random = random_bindings(*rdp, 50, 7);
      for (const sym::Binding& b : random) {
        auto at = pipeline::plan_at(*compiled, b);
        auto whole = opt::evaluate_plan(*plan, *rdp, b, -1);  // without the bucketed versions
        if (!at.ok() || !whole.ok()) {
          std::cerr << m.name << ": " << (at.ok() ? whole : at).status().message() << "\n";
          return false;
        }
        worst_whole = std::max(worst_whole, static_cast<double>(whole->arena_bytes) /
                                                std::max<int64_t>(whole->lower_bound_bytes, 1));
        const double lb =
            static_cast<double>(at->arena_bytes) / std::max<int64_t>(at->lower_bound_bytes, 1);
        worst_lb = std::max(worst_lb, lb);
        sum_lb += lb;
        const double over_greedy =
            static_cast<double>(at->arena_bytes) / std::max<int64_t>(at->greedy_bytes, 1);
        if (over_greedy > worst_greedy) {
          worst_greedy = over_greedy;
          worst_greedy_at =
              opt::binding_text(at->binding) + " (version " + std::to_string(at->version) + ")";
        }
      }
      const opt::FusionPlan* fusion = &plan->fusion;
      std::map<std::string, int> kinds;
      int known_values = 0;  // single groups whose every output value RDP already knows
      for (const opt::FusionGroup& g : fusion->groups) {
        ++kinds[g.kind];
        bool known = g.nodes.size() == 1 && !g.outputs.empty();
        for (ValueId v : g.outputs) known = known && rdp->fact(*model->graph, v).value.has_value();
        known_values += known;
      }
      std::string kind_text;
      for (const auto& [k, c] : kinds)
        kind_text += (kind_text.empty() ? "" : ", ") + k + " " + std::to_string(c);
      launches.push_back({m.name, std::to_string(fusion->kernels_unfused),
                          std::to_string(fusion->groups.size()),
                          fixed3(static_cast<double>(fusion->groups.size()) /
                                 std::max(fusion->kernels_unfused, 1)),
                          kind_text, std::to_string(known_values)});
      (*out)["fusion"].push_back({{"model", m.name},
                                  {"kernels_unfused", fusion->kernels_unfused},
                                  {"groups", fusion->groups.size()},
                                  {"kinds", kinds}});
      auto ub = pipeline::plan_at(*compiled, plan->reference);
      if (!ub.ok()) return false;
      spread.push_back({m.name, ratio(ub->arena_bytes, ub->lower_bound_bytes),
                        std::to_string(random.size()),
                        fixed3(sum_lb / std::max<size_t>(random.size(), 1)), fixed3(worst_lb),
                        fixed3(worst_greedy), fixed3(worst_whole),
                        std::to_string(plan->versions.versions.size()) + " / " +
                            std::to_string(plan->versions.version_of_cell.size())});
      (*out)["spread"].push_back(
          {{"model", m.name},
           {"upper_bound_arena_over_lower_bound",
            static_cast<double>(ub->arena_bytes) / std::max<int64_t>(ub->lower_bound_bytes, 1)},
           {"random_bindings", random.size()},
           {"mean_arena_over_lower_bound", sum_lb / std::max<size_t>(random.size(), 1)},
           {"worst_arena_over_lower_bound", worst_lb},
           {"worst_arena_over_greedy", worst_greedy},
           {"worst_arena_over_greedy_at", worst_greedy_at},
           {"worst_arena_over_lower_bound_whole_range_plan", worst_whole},
           {"plan_versions", plan->versions.versions.size()},
           {"bucket_cells", plan->versions.version_of_cell.size()}});
      return true;
    }();
    if (!ok) failed.push_back(m.name);
  }
  std::cout << "\n## Beyond the benchmark bindings: upper bounds and 50 random bindings\n\n"
            << "| model | arena/LB at upper bounds | random bindings | mean arena/LB | worst "
               "arena/LB | worst arena/greedy | worst arena/LB, whole-range plan only | "
               "versions / bucket cells |\n"
            << "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& row : spread) {
    std::cout << "|";
    for (const std::string& cell : row) std::cout << " " << cell << " |";
    std::cout << "\n";
  }
  std::cout << "\n## Kernel launches before and after fusion\n\n"
            << "| model | kernels unfused | groups | groups/kernels | groups by kind | single "
               "groups whose values RDP knows |\n"
            << "|---|---:|---:|---:|---|---:|\n";
  for (const auto& row : launches) {
    std::cout << "|";
    for (const std::string& cell : row) std::cout << " " << cell << " |";
    std::cout << "\n";
  }
  if (!failed.empty()) {
    std::cout << "\nFailed (reason on stderr):";
    for (const std::string& name : failed) std::cout << " " << name;
    std::cout << "\n";
    (*out)["failed"] = failed;
  }
  return failed.empty() ? 0 : 1;
}

Expected<Model> synthetic_model(int64_t nodes) {
  const std::string bytes = bench::transformer_like(nodes).SerializeAsString();
  return import_onnx_bytes(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                           "", "synthetic");
}

int synthetic_table(nlohmann::json* out) {
  std::cout << "\n## Plan instantiation on synthetic transformer-like graphs\n\n"
            << "| nodes | tensors | program instructions | plan ms | instantiate µs (median of "
               "1001) | arena/LB at upper bound |\n"
            << "|---:|---:|---:|---:|---:|---:|\n";
  for (int64_t n : {1000, 10000}) {
    auto model = synthetic_model(n);
    if (!model.ok()) {
      std::cerr << model.status().message() << "\n";
      return 1;
    }
    RdpOptions options;
    options.ranges["batch"] = {1, 64, 1};
    options.ranges["seq"] = {1, 4096, 1};
    auto rdp = run_rdp(*model, options);
    if (!rdp.ok()) return 1;
    const auto t0 = Clock::now();
    auto plan = testing::plan_over_candidates(*model->graph, *rdp);
    const double plan_ms = ms_since(t0);
    if (!plan.ok()) {
      std::cerr << "synthetic: " << plan.status().message() << "\n";
      return 1;
    }
    auto at = opt::evaluate_plan(*plan, *rdp, plan->reference);
    if (!at.ok()) return 1;
    const double us = instantiate_us(*plan, plan->reference, 1001);
    std::cout << "| " << model->graph->num_nodes() << " | " << at->tensors.size() << " | "
              << plan->program.program().instructions().size() << " | " << std::fixed
              << std::setprecision(1) << plan_ms << " | " << std::setprecision(2) << us << " | "
              << ratio(at->arena_bytes, at->lower_bound_bytes) << " |\n";
    (*out)["synthetic"].push_back({{"nodes", model->graph->num_nodes()},
                                   {"tensors", at->tensors.size()},
                                   {"instructions", plan->program.program().instructions().size()},
                                   {"plan_ms", plan_ms},
                                   {"plan_instantiate_us", us}});
  }
  return 0;
}

// Issue 24's target: a predicted curve of 512 points over a 1,000-node model in under 50 ms,
// instantiating the compiled plan at each point (no recompiling). On the synthetic graphs: seq
// from 1 to 512 at batch 4, the median of 5 sweeps.
int sweep_table(nlohmann::json* out) {
  std::cout << "\n## Predicted curves: 512 points of seq at batch 4 (pipeline::sweep_plan)\n\n"
            << "| nodes | tensors | compile ms | sweep ms (median of 5) | ms per point | layouts "
               "| target |\n"
            << "|---:|---:|---:|---:|---:|---|---|\n";
  for (int64_t n : {1000, 3000}) {
    auto model = synthetic_model(n);
    if (!model.ok()) {
      std::cerr << model.status().message() << "\n";
      return 1;
    }
    const int64_t nodes = model->graph->num_nodes();
    pipeline::CompileOptions options;
    options.rdp.ranges["batch"] = {1, 64, 1};
    options.rdp.ranges["seq"] = {1, 4096, 1};
    const auto t0 = Clock::now();
    auto compiled = pipeline::compile(std::move(*model), options);
    const double compile_ms = ms_since(t0);
    if (!compiled.ok()) {
      std::cerr << "sweep: " << compiled.status().message() << "\n";
      return 1;
    }
    pipeline::SweepRequest request;
    request.symbol = "seq";
    request.lo = 1;
    request.hi = 512;
    request.step = 1;
    request.held["batch"] = 4;
    std::vector<double> times;
    std::set<std::string> layouts;
    for (int i = 0; i < 5; ++i) {
      auto sweep = pipeline::sweep_plan(*compiled, request);
      if (!sweep.ok() || sweep->failed > 0) {
        std::cerr << "sweep: " << (sweep.ok() ? "a point failed" : sweep.status().message())
                  << "\n";
        return 1;
      }
      times.push_back(sweep->sweep_ms);
      for (const pipeline::SweepPoint& p : sweep->points)
        layouts.insert(plan::version_text(p.at->version));
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    std::string which;
    for (const std::string& l : layouts) which += (which.empty() ? "" : ", ") + l;
    std::cout << "| " << nodes << " | " << compiled->program.num_arena_tensors << " | "
              << std::fixed << std::setprecision(1) << compile_ms << " | " << median << " | "
              << std::setprecision(3) << median / 512 << " | " << which << " | "
              << (n == 1000 ? (median < 50 ? "under 50 ms" : "ABOVE 50 ms") : "-") << " |\n";
    (*out)["sweep"].push_back({{"nodes", nodes},
                               {"points", 512},
                               {"compile_ms", compile_ms},
                               {"sweep_ms", median},
                               {"layouts", which}});
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path models = argc > 1 ? argv[1] : SOD2_SHARED_DIR "/models";
  const std::filesystem::path out_dir = argc > 2 ? argv[2] : "build/bench";
  nlohmann::json doc;
  doc["schema_version"] = 1;
  // A model that failed still leaves the others' numbers in the JSON; the exit status says so.
  const int corpus_rc = corpus_table(models, &doc);
  if (int rc = synthetic_table(&doc)) return rc;
  if (int rc = sweep_table(&doc)) return rc;
  std::filesystem::create_directories(out_dir);
  std::ofstream(out_dir / "plan.json") << doc.dump(1) << "\n";
  std::cout << "\nwrote " << (out_dir / "plan.json").string() << "\n";
  return corpus_rc;
}
