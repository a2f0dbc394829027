#include "app/cli/ofa_command.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iomanip>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "app/cli/command_line.h"
#include "app/cli/symbol_args.h"
#include "app/ofa/family_source.h"
#include "app/ofa/ofa_demo.h"
#include "app/ofa/variant_latencies.h"
#include "app/profiling/run_inputs.h"
#include "core/status/byte_size.h"
#include "core/store/profile_store.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2::cli {
namespace {

std::atomic<bool> g_interrupted{false};
void on_interrupt(int) { g_interrupted = true; }

CommandLine make_parser() {
  return CommandLine({
      {"--budget-ms", true, "the latency budget per inference (required)", "MS"},
      {"--duration-s", true, "how long each run lasts (default 10)", "S"},
      {"--load", true,
       "busy threads (default: one per core) from T0 to T1 seconds into each run, standing in "
       "for other apps",
       "T0:T1[:THREADS]"},
      {"--bind", true, "sizes of the model's symbols (default: each symbol's lowest value)",
       "k=v,..."},
      {"--threads", true, "threads per inference (default: one per core)", "N"},
      {"--floor", true, "the smallest variant the manager may use", "NAME"},
      {"--min-macs", true, "use no variant with fewer MACs than this (a MAC floor)", "N"},
      {"--min-accuracy", true, "use no variant less accurate than this (from the family file)",
       "A"},
      {"--device", true, "where to run: local (this machine; the default)", "ID"},
      {"--db", true, "the profile store for expected latencies (default: the user's)", "FILE"},
      {"--timeline-ms", true, "a timeline line per this much time, and one per switch (250)", "MS"},
      {"--no-compare", false, "skip the run on the largest variant alone", ""},
      {"--range", true, "symbol ranges when compiling a family file", "k=lo:hi[:multiple],..."},
      {"--ranges", true, "symbol ranges from a JSON file when compiling a family file", "FILE"},
      {"--help", false, "show this help", ""},
  });
}

std::string usage() {
  return "usage: sod2 ofa FAMILY(.sod2|/variants.json) --budget-ms B [--duration-s S] "
         "[--load T0:T1[:THREADS]]\n"
         "                [--bind k=v,...] [--threads N] [--floor NAME | --min-macs N | "
         "--min-accuracy A]\n                [--no-compare]\n\n"
         "The Dynamic-OFA demo: runs inferences back to back on a family of sub-networks (a\n"
         "family package from `sod2 compile --family`, or its variants.json, compiled first).\n"
         "After every run the manager picks the variant of the next one: it steps to a smaller\n"
         "variant when the recent median misses the budget and back up when the next larger one\n"
         "is predicted to fit with headroom. Expected latencies come from the profile store\n"
         "(`sod2 profile --family`) when it has every variant at these bindings, else from a\n"
         "warm-up run of each. --load starts busy processes for part of the run. Prints a\n"
         "timeline and a summary, then the same run on the largest variant alone.\n\n"
         "options:\n" +
         make_parser().flags_help();
}

double parse_positive(const std::optional<std::string>& v, double fallback, const char* flag) {
  if (!v) return fallback;
  try {
    size_t used = 0;
    const double d = std::stod(*v, &used);
    if (used == v->size() && d > 0 && d < 1e9) return d;
  } catch (...) {
  }
  throw std::invalid_argument(std::string(flag) + " expects a positive number, got '" + *v + "'");
}

std::string mmacs(uint64_t macs) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << static_cast<double>(macs) / 1e6 << " MMACs";
  return s.str();
}

void print_point(const ofa::DemoPoint& p, const rt::FamilySession& s, std::ostream& out) {
  out << "  " << std::setw(7) << std::fixed << std::setprecision(2) << p.t_s << " s  " << std::left
      << std::setw(10) << s.variant(p.variant).name << std::right << std::setw(9)
      << std::setprecision(1) << p.latency_ms << " ms " << (p.latency_ms <= p.budget_ms ? " " : "!")
      << " " << std::setw(6) << p.budget_ms << " ms  " << (p.load_active ? "load" : "    ");
  if (p.switched) out << "  -> " << p.decision;
  out << "\n";
}

void print_summary(const std::string& title, const ofa::DemoSummary& s,
                   const rt::FamilySession& session, std::ostream& out) {
  out << title << ": " << s.runs << " runs (" << std::fixed << std::setprecision(1) << s.runs_per_s
      << "/s), within budget " << 100 * s.fraction_within() << "%";
  if (s.runs_under_load) {
    out << " (under load " << 100 * s.fraction_within_under_load() << "% of " << s.runs_under_load
        << ")";
  }
  out << ", switches " << s.switches << ", mean " << mmacs(static_cast<uint64_t>(s.mean_macs))
      << "\n    latency p50 " << std::setprecision(1) << s.p50_ms << " ms, p90 " << s.p90_ms
      << " ms, p99 " << s.p99_ms << " ms, max " << s.max_ms << " ms; runs per variant:";
  for (int i = 0; i < session.variants(); ++i) {
    out << " " << session.variant(i).name << " " << s.runs_per_variant[static_cast<size_t>(i)];
  }
  out << "\n";
}

}  // namespace

int run_ofa(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl = make_parser();
  double budget = 0, duration = 10, timeline_s = 0.25;
  std::optional<ofa::LoadSchedule> load;
  std::map<std::string, int64_t> bind;
  int threads = 0;
  double min_macs = 0, min_accuracy = 0;
  RdpOptions rdp;
  try {
    cl.parse(args);
    if (cl.has("--help")) {
      out << usage();
      return 0;
    }
    if (cl.positional().size() != 1) {
      throw std::invalid_argument("expected exactly one FAMILY (.sod2 or variants.json)");
    }
    if (!cl.has("--budget-ms")) throw std::invalid_argument("--budget-ms is required");
    budget = parse_positive(cl.value("--budget-ms"), 0, "--budget-ms");
    duration = parse_positive(cl.value("--duration-s"), 10, "--duration-s");
    timeline_s = parse_positive(cl.value("--timeline-ms"), 250, "--timeline-ms") / 1000;
    threads = parse_count(cl.value("--threads"), 0, "--threads", 0);
    if (cl.has("--min-macs")) min_macs = parse_positive(cl.value("--min-macs"), 0, "--min-macs");
    if (cl.has("--min-accuracy"))
      min_accuracy = parse_positive(cl.value("--min-accuracy"), 0, "--min-accuracy");
    if (auto b = cl.value("--bind")) bind = parse_bindings(*b);
    if (auto l = cl.value("--load")) {
      const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      auto parsed = ofa::parse_load_schedule(*l, cores);
      if (!parsed.ok()) throw std::invalid_argument(parsed.status().message());
      load = *parsed;
    }
    const std::string device = cl.value("--device").value_or("local");
    if (device != "local") {
      throw std::invalid_argument(
          "--device " + device +
          ": the demo runs the family in this process (local) only; the device agent runs "
          "single packages, so measure the variants on a device with `sod2 profile --family "
          "--device " +
          device + "`");
    }
    rdp = rdp_options_from(cl.value("--ranges"), cl.value("--range"));
  } catch (const std::invalid_argument& e) {
    err << "sod2 ofa: " << e.what() << " (see sod2 ofa --help)\n";
    return 1;
  }
  auto fail = [&](const Status& st) {
    err << "sod2 ofa: " << st.message() << "\n";
    return 1;
  };
  Expected<rt::FamilyProgram> family = ofa::load_family(
      cl.positional()[0], rdp, [&](const std::string& step) { err << "  " << step << "...\n"; });
  if (!family.ok()) return fail(family.status());

  // Inputs of the bound shapes; a symbol left unbound takes its lowest value.
  const rt::ProgramDesc& first = family->variants.front().program;
  for (const rt::SymbolDesc& s : first.symbols) {
    if (!s.execution && !bind.count(s.name)) bind[s.name] = std::max<int64_t>(s.lo, 1);
  }
  Expected<std::vector<rt::Shape>> shapes = profiling::bound_input_shapes(first, bind);
  if (!shapes.ok()) return fail(shapes.status());
  const std::vector<rt::HostTensor> inputs = profiling::random_inputs(first, *shapes, {}, 1);
  std::vector<rt::Tensor> views;
  for (const rt::HostTensor& h : inputs) views.push_back(h.view());
  std::string bindings;
  for (const auto& [k, v] : bind)
    bindings += (bindings.empty() ? "" : ",") + k + "=" + std::to_string(v);

  rt::FamilySessionOptions options;
  options.session.threads = threads;
  options.budget_ms = budget;
  options.floor_variant = cl.value("--floor").value_or("");
  options.min_macs = static_cast<uint64_t>(min_macs);
  options.min_accuracy = min_accuracy;
  const std::string db_path = cl.value("--db").value_or(store::ProfileStore::default_path());
  auto stored = ofa::stored_latencies(db_path, *family, "local", bindings);
  if (!stored.ok()) return fail(stored.status());
  if (*stored) options.expected_ms = (*stored)->expected_ms;
  const std::string family_name = family->name;
  const rt::FamilyLoadStats load_stats = family->stats;
  auto session =
      rt::FamilySession::create(std::move(*family), rt::KernelRegistry::standard(), options);
  if (!session.ok()) return fail(session.status());
  rt::FamilySession& s = **session;

  out << "family " << family_name << ": " << s.variants() << " variants (";
  for (int i = 0; i < s.variants(); ++i) {
    out << (i ? ", " : "") << s.variant(i).name << " " << mmacs(s.variant(i).macs);
  }
  out << "); inputs " << bindings << "\n  weights: " << load_stats.stored << " stored, "
      << load_stats.views_in_place << " views in place, " << load_stats.views_built
      << " views built at load (" << load_stats.built_bytes << " bytes in " << std::fixed
      << std::setprecision(1) << load_stats.build_ms << " ms)\n";
  err << "  warming up every variant...\n";
  Status warm = s.warm_up(views, 3);
  if (!warm.ok()) return fail(warm);
  out << "  expected latency: ";
  for (int i = 0; i < s.variants(); ++i) {
    out << (i ? ", " : "") << s.variant(i).name << " " << std::setprecision(2)
        << s.expected_ms()[static_cast<size_t>(i)] << " ms";
  }
  out << (*stored ? " (from the profile store)" : " (measured: median of 3 warm-up runs)") << "\n";
  {
    int64_t separate = 0;
    out << "  memory: one arena of " << human_bytes(static_cast<int64_t>(s.arena_capacity()))
        << " shared by the variants (their plans:";
    for (int i = 0; i < s.variants(); ++i) {
      separate += s.session(i).arena_bytes();
      out << (i ? ", " : " ") << human_bytes(s.session(i).arena_bytes());
    }
    out << "; " << human_bytes(separate) << " if each had its own)\n";
  }

  // A switch is the choice of another session: time it over every pair.
  {
    const auto t0 = std::chrono::steady_clock::now();
    int pairs = 0;
    for (int a = 0; a < s.variants(); ++a) {
      for (int b = 0; b < s.variants(); ++b, ++pairs) {
        (void)s.set_manager_enabled(false);
        (void)s.set_variant(a);
        (void)s.set_variant(b);
      }
    }
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    out << "  switching variant: " << std::setprecision(3) << us / pairs / 2
        << " us (a pointer to another ready session: no copy, no allocation)\n";
  }
  out << "  budget " << std::setprecision(1) << budget << " ms, " << duration << " s per run";
  if (load) {
    out << ", load " << load->start_s << "-" << load->stop_s << " s on " << load->threads
        << " busy processes";
  }
  out << "\n\n";

  g_interrupted = false;
  auto previous = std::signal(SIGINT, on_interrupt);
  struct Phase {
    const char* title;
    bool managed;
    std::optional<ofa::DemoResult> result;
  };
  std::vector<Phase> phases = {{"with the manager", true, {}}};
  if (!cl.has("--no-compare")) phases.push_back({"largest variant alone", false, {}});
  for (Phase& phase : phases) {
    out << phase.title << ":\n      time  variant      latency   budget\n";
    ofa::DemoOptions demo;
    demo.duration_s = duration;
    demo.managed = phase.managed;
    demo.load = load;
    demo.cancel = &g_interrupted;
    double next_line = 0;
    auto result = ofa::run_demo(s, views, demo, [&](const ofa::DemoPoint& p) {
      if (p.switched || p.t_s >= next_line) {
        print_point(p, s, out);
        while (next_line <= p.t_s) next_line += timeline_s;
      }
    });
    if (!result.ok()) {
      std::signal(SIGINT, previous);
      return fail(result.status());
    }
    print_summary("summary", result->summary, s, out);
    out << "\n";
    phase.result = std::move(*result);
    if (phase.result->cancelled) break;
  }
  std::signal(SIGINT, previous);
  if (phases.size() == 2 && phases[1].result) {
    const ofa::DemoSummary& m = phases[0].result->summary;
    const ofa::DemoSummary& f = phases[1].result->summary;
    out << "comparison (budget " << std::setprecision(1) << budget << " ms):\n"
        << "                     within budget   under load   switches   mean MMACs   p90 ms\n";
    for (const auto& [name, x] :
         {std::pair{"with the manager", &m}, std::pair{"largest alone", &f}}) {
      out << "  " << std::left << std::setw(18) << name << std::right << std::setw(13)
          << 100 * x->fraction_within() << "%" << std::setw(12)
          << (x->runs_under_load ? 100 * x->fraction_within_under_load() : 0) << "%"
          << std::setw(11) << x->switches << std::setw(13) << x->mean_macs / 1e6 << std::setw(9)
          << x->p90_ms << "\n";
    }
  }
  if (g_interrupted) {
    err << "sod2 ofa: interrupted\n";
    return 130;
  }
  return 0;
}

}  // namespace sod2::cli
