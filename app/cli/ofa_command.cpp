#include "app/cli/ofa_command.h"

#include <algorithm>
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
#include "app/ofa/remote_family.h"
#include "app/ofa/variant_latencies.h"
#include "app/profiling/run_inputs.h"
#include "core/status/byte_size.h"
#include "core/store/profile_store.h"
#include "plugins/device/agent_client.h"
#include "runtime/family/family_demo.h"
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
       "busy processes (default: one per core of where the family runs) from T0 to T1 seconds "
       "into each run, standing in for other apps",
       "T0:T1[:THREADS]"},
      {"--bind", true, "sizes of the model's symbols (default: each symbol's lowest value)",
       "k=v,..."},
      {"--threads", true, "threads per inference (default: one per core)", "N"},
      {"--floor", true, "the smallest variant the manager may use", "NAME"},
      {"--min-macs", true, "use no variant with fewer MACs than this (a MAC floor)", "N"},
      {"--min-accuracy", true, "use no variant less accurate than this (from the family file)",
       "A"},
      {"--device", true,
       "where to run: local (in this process; the default), adb, adb:SERIAL, or any device "
       "`sod2 devices` lists (through its agent)",
       "ID"},
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
         "                [--bind k=v,...] [--device local|adb[:SERIAL]] [--threads N]\n"
         "                [--floor NAME | --min-macs N | --min-accuracy A] [--no-compare]\n\n"
         "The Dynamic-OFA demo: runs inferences back to back on a family of sub-networks (a\n"
         "family package from `sod2 compile --family`, or its variants.json, compiled first).\n"
         "After every run the manager picks the variant of the next one: it steps to a smaller\n"
         "variant when the recent median misses the budget and back up when the next larger one\n"
         "is predicted to fit with headroom. Expected latencies come from the profile store\n"
         "(`sod2 profile --family`) when it has every variant at these bindings, else from a\n"
         "warm-up run of each. --load starts busy processes for part of the run. Prints a\n"
         "timeline and a summary, then the same run on the largest variant alone. With\n"
         "--device adb, the family package goes to the phone's agent, which runs all of it\n"
         "there (the manager and the load) and streams every run back.\n\n"
         "options:\n" +
         make_parser().flags_help();
}

std::string mmacs(uint64_t macs) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << static_cast<double>(macs) / 1e6 << " MMACs";
  return s.str();
}

void print_point(const rt::DemoPoint& p, const std::vector<std::string>& names, std::ostream& out) {
  out << "  " << std::setw(7) << std::fixed << std::setprecision(2) << p.t_s << " s  " << std::left
      << std::setw(10) << names[static_cast<size_t>(p.variant)] << std::right << std::setw(9)
      << std::setprecision(1) << p.latency_ms << " ms " << (p.latency_ms <= p.budget_ms ? " " : "!")
      << " " << std::setw(6) << p.budget_ms << " ms  " << (p.load_active ? "load" : "    ");
  if (p.switched) out << "  -> " << p.decision;
  out << "\n";
}

void print_summary(const rt::DemoSummary& s, const std::vector<std::string>& names,
                   std::ostream& out) {
  out << "summary: " << s.runs << " runs (" << std::fixed << std::setprecision(1) << s.runs_per_s
      << "/s), within budget " << 100 * s.fraction_within() << "%";
  if (s.runs_under_load) {
    out << " (under load " << 100 * s.fraction_within_under_load() << "% of " << s.runs_under_load
        << ")";
  }
  out << ", switches " << s.switches << ", mean " << mmacs(static_cast<uint64_t>(s.mean_macs))
      << "\n    latency p50 " << std::setprecision(1) << s.p50_ms << " ms, p90 " << s.p90_ms
      << " ms, p99 " << s.p99_ms << " ms, max " << s.max_ms << " ms; runs per variant:";
  for (size_t i = 0; i < names.size(); ++i) out << " " << names[i] << " " << s.runs_per_variant[i];
  out << "\n";
}

// What both ways of running (in this process, or on a device's agent) provide: the variants
// small to large, and one demo run with or without the manager.
struct Runner {
  std::vector<std::string> names;
  std::vector<uint64_t> macs;
  std::function<Expected<rt::DemoResult>(bool managed,
                                         const std::function<void(const rt::DemoPoint&)>&)>
      run;
};

struct Settings {
  double budget = 0, duration = 10, timeline_s = 0.25;
  std::optional<rt::LoadSchedule> load;
  bool load_threads_given = false;  // else one busy process per core of where the family runs
  int threads = 0;
  double min_macs = 0, min_accuracy = 0;
  std::string floor, device = "local", db_path;
  bool compare = true;
};

// Expected latencies from the store in small-to-large order (`names`), or empty.
Expected<std::vector<double>> stored_in_order(const Settings& st, const rt::FamilyProgram& family,
                                              const std::string& device,
                                              const std::string& bindings,
                                              const std::vector<std::string>& names) {
  SOD2_ASSIGN_OR_RETURN(auto stored, ofa::stored_latencies(st.db_path, family, device, bindings));
  if (!stored) return std::vector<double>{};
  return stored->reordered(names).expected_ms;
}

// Runs both phases and prints them, then the comparison. Returns the exit status.
int run_phases(const Settings& st, const Runner& runner, std::ostream& out, std::ostream& err) {
  g_interrupted = false;
  auto previous = std::signal(SIGINT, on_interrupt);
  std::vector<std::pair<const char*, bool>> phases = {{"with the manager", true}};
  if (st.compare) phases.push_back({"largest variant alone", false});
  std::vector<rt::DemoSummary> summaries;
  for (const auto& [title, managed] : phases) {
    // The title comes with the first point: a device reports its warm-up before that.
    bool titled = false;
    auto print_title = [&, title = title] {
      if (!titled) out << title << ":\n      time  variant      latency   budget\n";
      titled = true;
    };
    double next_line = 0;
    auto result = runner.run(managed, [&](const rt::DemoPoint& p) {
      print_title();
      if (p.switched || p.t_s >= next_line) {
        print_point(p, runner.names, out);
        while (next_line <= p.t_s) next_line += st.timeline_s;
      }
    });
    if (!result.ok()) {
      std::signal(SIGINT, previous);
      err << "sod2 ofa: " << result.status().message() << "\n";
      return g_interrupted ? 130 : 1;
    }
    print_title();
    print_summary(result->summary, runner.names, out);
    out << "\n";
    summaries.push_back(result->summary);
    if (result->cancelled) break;
  }
  std::signal(SIGINT, previous);
  if (summaries.size() == 2) {
    out << "comparison (budget " << std::setprecision(1) << st.budget << " ms):\n"
        << "                     within budget   under load   switches   mean MMACs   p90 ms\n";
    const char* labels[2] = {"with the manager", "largest alone"};
    for (size_t i = 0; i < 2; ++i) {
      const rt::DemoSummary& x = summaries[i];
      out << "  " << std::left << std::setw(18) << labels[i] << std::right << std::setw(13)
          << 100 * x.fraction_within() << "%" << std::setw(12)
          << (x.runs_under_load ? 100 * x.fraction_within_under_load() : 0) << "%" << std::setw(11)
          << x.switches << std::setw(13) << x.mean_macs / 1e6 << std::setw(9) << x.p90_ms << "\n";
    }
  }
  if (g_interrupted) {
    err << "sod2 ofa: interrupted\n";
    return 130;
  }
  return 0;
}

void print_header(const rt::FamilyProgram& family, const std::string& bindings, std::ostream& out) {
  out << "family " << family.name << ": " << family.variants.size() << " variants (";
  std::vector<const rt::VariantDesc*> by_macs;
  for (const rt::VariantDesc& v : family.variants) by_macs.push_back(&v);
  std::stable_sort(by_macs.begin(), by_macs.end(),
                   [](const auto* a, const auto* b) { return a->macs < b->macs; });
  for (size_t i = 0; i < by_macs.size(); ++i)
    out << (i ? ", " : "") << by_macs[i]->name << " " << mmacs(by_macs[i]->macs);
  out << "); inputs " << bindings << "\n";
}

void print_expected(const std::vector<std::string>& names, const std::vector<double>& ms,
                    const std::string& source, std::ostream& out) {
  out << "  expected latency: ";
  for (size_t i = 0; i < names.size() && i < ms.size(); ++i)
    out << (i ? ", " : "") << names[i] << " " << std::setprecision(2) << ms[i] << " ms";
  out << " (" << source << ")\n";
}

void print_settings(const Settings& st, std::ostream& out) {
  out << std::fixed << "  budget " << std::setprecision(1) << st.budget << " ms, " << st.duration
      << " s per run";
  if (st.load) {
    out << ", load " << st.load->start_s << "-" << st.load->stop_s << " s on " << st.load->threads
        << " busy processes";
  }
  out << "\n";
}

int run_here(const Settings& st, const std::string& path, const RdpOptions& rdp,
             std::map<std::string, int64_t> bind, std::ostream& out, std::ostream& err) {
  auto fail = [&](const Status& s) {
    err << "sod2 ofa: " << s.message() << "\n";
    return 1;
  };
  Expected<rt::FamilyProgram> family =
      ofa::load_family(path, rdp, [&](const std::string& step) { err << "  " << step << "...\n"; });
  if (!family.ok()) return fail(family.status());
  Expected<std::vector<rt::HostTensor>> inputs = ofa::family_inputs(*family, &bind);
  if (!inputs.ok()) return fail(inputs.status());
  std::vector<rt::Tensor> views;
  for (const rt::HostTensor& h : *inputs) views.push_back(h.view());
  const std::string bindings = profiling::bindings_text(bind);
  print_header(*family, bindings, out);

  rt::FamilySessionOptions options;
  options.session.threads = st.threads;
  options.budget_ms = st.budget;
  options.floor_variant = st.floor;
  options.min_macs = static_cast<uint64_t>(st.min_macs);
  options.min_accuracy = st.min_accuracy;
  auto stored = ofa::stored_latencies(st.db_path, *family, "local", bindings);
  if (!stored.ok()) return fail(stored.status());
  if (*stored) options.expected_ms = (*stored)->expected_ms;
  const rt::FamilyLoadStats load_stats = family->stats;
  auto session =
      rt::FamilySession::create(std::move(*family), rt::KernelRegistry::standard(), options);
  if (!session.ok()) return fail(session.status());
  rt::FamilySession& s = **session;
  out << "  weights: " << load_stats.stored << " stored, " << load_stats.views_in_place
      << " views in place, " << load_stats.views_built << " views built at load ("
      << load_stats.built_bytes << " bytes in " << std::fixed << std::setprecision(1)
      << load_stats.build_ms << " ms)\n";
  err << "  warming up every variant...\n";
  if (Status warm = s.warm_up(views, 3); !warm.ok()) return fail(warm);
  Runner runner;
  for (int i = 0; i < s.variants(); ++i) {
    runner.names.push_back(s.variant(i).name);
    runner.macs.push_back(s.variant(i).macs);
  }
  print_expected(runner.names, s.expected_ms(),
                 *stored ? "from the profile store" : "measured: median of 3 warm-up runs", out);
  int64_t separate = 0;
  out << "  memory: one arena of " << human_bytes(static_cast<int64_t>(s.arena_capacity()))
      << " shared by the variants (their plans:";
  for (int i = 0; i < s.variants(); ++i) {
    separate += s.session(i).arena_bytes();
    out << (i ? ", " : " ") << human_bytes(s.session(i).arena_bytes());
  }
  out << "; " << human_bytes(separate) << " if each had its own)\n";
  // A switch is the choice of another ready session: time it over every pair.
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
  print_settings(st, out);
  out << "\n";
  runner.run = [&](bool managed, const std::function<void(const rt::DemoPoint&)>& on_point) {
    rt::DemoOptions demo;
    demo.duration_s = st.duration;
    demo.managed = managed;
    demo.load = st.load;
    demo.cancel = &g_interrupted;
    return rt::run_demo(s, views, demo, on_point);
  };
  return run_phases(st, runner, out, err);
}

int run_on_device(Settings st, const std::string& path, const RdpOptions& rdp,
                  std::map<std::string, int64_t> bind, std::ostream& out, std::ostream& err) {
  auto fail = [&](const Status& s) {
    err << "sod2 ofa: " << s.message() << "\n";
    return 1;
  };
  auto bytes = ofa::family_package_bytes(
      path, rdp, [&](const std::string& step) { err << "  " << step << "...\n"; });
  if (!bytes.ok()) return fail(bytes.status());
  // Loaded here too: the inputs, the variants' accuracies and the store's latencies need it.
  Expected<rt::FamilyProgram> family = rt::load_family_package(**bytes, *bytes);
  if (!family.ok()) return fail(family.status().with_context(path));
  Expected<std::vector<rt::HostTensor>> inputs = ofa::family_inputs(*family, &bind);
  if (!inputs.ok()) return fail(inputs.status());
  const std::string bindings = profiling::bindings_text(bind);
  print_header(*family, bindings, out);

  auto remote = ofa::RemoteFamily::start(st.device, *bytes, &g_interrupted,
                                         [&](const std::string& s) { err << "  " << s << "\n"; });
  if (!remote.ok()) return fail(remote.status());
  ofa::RemoteFamily& device = **remote;
  const std::string device_id = device.device_id();
  const device::AgentHello& hello = device.hello();
  out << "  device " << device_id << ": " << hello.cpu << ", " << hello.cores << " cores, "
      << hello.os << " (" << hello.arch << ")\n";
  out << "  package: " << (*bytes)->size() << " bytes "
      << (device.package_was_cached() ? "(on the device already)" : "sent") << "\n";
  if (st.load && !st.load_threads_given && hello.cores > 0)
    st.load->threads = static_cast<int>(hello.cores);
  Runner runner;
  for (const device::FamilyVariantInfo& v : device.variants()) {
    runner.names.push_back(v.name);
    runner.macs.push_back(v.macs);
  }
  auto expected = stored_in_order(st, *family, device_id, bindings, runner.names);
  if (!expected.ok()) return fail(expected.status());
  // The floor by MACs or accuracy: the smallest variant that meets both.
  std::string floor = st.floor;
  if (floor.empty() && (st.min_macs > 0 || st.min_accuracy > 0)) {
    for (size_t i = 0; i < runner.names.size() && floor.empty(); ++i) {
      for (const rt::VariantDesc& v : family->variants) {
        if (v.name != runner.names[i] || static_cast<double>(v.macs) < st.min_macs) continue;
        if (st.min_accuracy > 0 && (!v.has_accuracy || v.accuracy < st.min_accuracy)) continue;
        floor = v.name;
      }
    }
    if (floor.empty()) return fail(invalid_argument("no variant meets the MAC/accuracy floor"));
  }
  print_settings(st, out);
  bool header_done = false;  // the device's expected latencies: printed once
  runner.run =
      [&](bool managed,
          const std::function<void(const rt::DemoPoint&)>& on_point) -> Expected<rt::DemoResult> {
    device::FamilyRunSettings fs;
    fs.budget_ms = st.budget;
    fs.duration_s = st.duration;
    fs.threads = st.threads;
    fs.managed = managed;
    fs.expected_ms = *expected;
    fs.load = st.load;
    fs.floor_variant = floor;
    auto on_started = [&](const device::FamilyRunReport& report) {
      if (header_done) return;
      print_expected(runner.names, report.expected_ms,
                     expected->empty() ? "measured on the device: median of 3 warm-up runs"
                                       : "from the profile store",
                     out);
      out << "  memory: one arena of " << human_bytes(static_cast<int64_t>(report.arena_bytes))
          << " shared by the variants on the device, " << report.threads << " threads\n\n";
      header_done = true;
    };
    SOD2_ASSIGN_OR_RETURN(device::FamilyRunReport report,
                          device.run(*inputs, fs, on_point, on_started));
    rt::DemoResult r;
    r.points = std::move(report.points);
    r.summary = rt::summarize(runner.macs, r.points);
    return r;
  };
  return run_phases(st, runner, out, err);
}

}  // namespace

int run_ofa(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl = make_parser();
  Settings st;
  std::map<std::string, int64_t> bind;
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
    st.budget = parse_real(cl.value("--budget-ms"), 0, "--budget-ms", true);
    st.duration = parse_real(cl.value("--duration-s"), 10, "--duration-s", true);
    st.timeline_s = parse_real(cl.value("--timeline-ms"), 250, "--timeline-ms", true) / 1000;
    st.threads = parse_count(cl.value("--threads"), 0, "--threads", 0);
    if (cl.has("--min-macs"))
      st.min_macs = parse_real(cl.value("--min-macs"), 0, "--min-macs", true);
    if (cl.has("--min-accuracy"))
      st.min_accuracy = parse_real(cl.value("--min-accuracy"), 0, "--min-accuracy", true);
    st.floor = cl.value("--floor").value_or("");
    if (auto b = cl.value("--bind")) bind = parse_bindings(*b);
    st.device = cl.value("--device").value_or("local");
    if (auto l = cl.value("--load")) {
      // One busy process per core of this machine unless given; a device's own count replaces it
      // once the device has said how many it has.
      const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      auto parsed = rt::parse_load_schedule(*l, cores);
      if (!parsed.ok()) throw std::invalid_argument(parsed.status().message());
      st.load = *parsed;
      st.load_threads_given = std::count(l->begin(), l->end(), ':') == 2;
    }
    st.compare = !cl.has("--no-compare");
    st.db_path = cl.value("--db").value_or(store::ProfileStore::default_path());
    rdp = rdp_options_from(cl.value("--ranges"), cl.value("--range"));
  } catch (const std::invalid_argument& e) {
    err << "sod2 ofa: " << e.what() << " (see sod2 ofa --help)\n";
    return 1;
  }
  if (st.device == "local") return run_here(st, cl.positional()[0], rdp, bind, out, err);
  return run_on_device(st, cl.positional()[0], rdp, bind, out, err);
}

}  // namespace sod2::cli
