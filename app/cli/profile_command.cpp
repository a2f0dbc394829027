#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <optional>

#include "app/cli/command_line.h"
#include "app/cli/device_commands.h"
#include "app/cli/symbol_args.h"
#include "app/ofa/family_profile.h"
#include "app/ofa/family_source.h"
#include "app/profiling/profile_job.h"
#include "app/profiling/profile_report.h"
#include "app/profiling/profile_sweep.h"
#include "app/profiling/sustained_report.h"
#include "app/profiling/sweep_report.h"

namespace sod2::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted = true; }

CommandLine make_parser() {
  return CommandLine({
      {"--device", true, "local (default), adb, or adb:SERIAL (see sod2 devices)", "ID"},
      {"--bind", true, "sizes of the model's symbols, e.g. batch=1,seq=128", "k=v,..."},
      {"--runs", true, "measured runs (default 20)", "N"},
      {"--warmup", true, "warm-up runs before them (default 3)", "K"},
      {"--threads", true, "worker threads on the device (default 0: one per core)", "T"},
      {"--trace", true, "write a Chrome-trace / Perfetto JSON of every run", "OUT.json"},
      {"--db", true, "the profile store (default ~/.local/share/sod2/profiles.db; '' : none)",
       "PATH"},
      {"--range", true, "symbol ranges for an .onnx model, e.g. seq=1:512", "k=lo:hi[:m],..."},
      {"--ranges", true, "symbol ranges from a JSON file (a models.json entry works)", "FILE"},
      {"--int-range", true,
       "values of integer inputs, [lo, hi) or one value, bounds may use the model's symbols: "
       "input_ids=0:1000,lengths=time",
       "name=lo:hi|value,..."},
      {"--input", true,
       "inputs read from files instead of random values: NumPy .npy or ONNX TensorProto .pb; "
       "their dims bind the symbols --bind leaves out",
       "name=FILE,..."},
      {"--seed", true, "seed of the random inputs (default 1)", "S"},
      {"--no-fusion", false, "compile without fused kernels", ""},
      {"--weights", true,
       "fp32 (default), fp16 or int8: send an .onnx model's float32 weights narrower (see sod2 "
       "compile --weights)",
       "fp32|fp16|int8"},
      {"--top", true, "groups in the 'top by time' section (default 10)", "N"},
      {"--sweep", true,
       "run the package at each value of one input symbol (the others from --bind): its whole "
       "range, or lo:hi[:step]; each point is recorded",
       "NAME[=lo:hi[:step]]"},
      {"--duration", true,
       "after the runs, keep running this long (90s, 10m, 1h; at most 24h): latency p50/p90/p99, "
       "the agent's memory, the device's temperatures and CPU frequencies per window; Ctrl-C "
       "stops it and keeps what was measured",
       "TIME"},
      {"--window", true,
       "with --duration: the window of time each line summarises (default a tenth of the "
       "duration, from 1s to 60s)",
       "TIME"},
      {"--points", true, "with --sweep over a whole range: at most N points (default 16)", "N"},
      {"--json", false, "with --sweep: print the measured sweep as JSON", ""},
      {"--family", false,
       "MODEL is a family (package or variants.json): profile every variant and print the "
       "latency-MACs Pareto front",
       ""},
      {"--help", false, "show this help", ""},
  });
}

int profile_family(const profiling::ProfileRequest& req, const profiling::ProfileProgress& progress,
                   std::ostream& out, std::ostream& err) {
  Expected<rt::FamilyProgram> family = ofa::load_family(req.model_path, req.rdp, {});
  if (!family.ok()) {
    err << "sod2 profile: " << family.status().message() << "\n";
    return 1;
  }
  auto profiles = ofa::profile_family(*family, req, progress);
  if (!profiles.ok()) {
    err << "sod2 profile: " << profiles.status().message() << "\n";
    return 1;
  }
  const bool accuracy = std::all_of(profiles->begin(), profiles->end(),
                                    [](const ofa::VariantProfile& p) { return p.has_accuracy; });
  const profiling::ProfileResult& first = profiles->front().result;
  out << "family " << family->name << " on " << first.device.id << " (" << first.bindings << "), "
      << first.stats.count << " runs each\n\n"
      << "  variant        MMACs     params   accuracy    avg ms    std ms    min ms    run  "
         "front\n";
  for (const ofa::VariantProfile& p : *profiles) {
    const profiling::LatencyStats& st = p.result.stats;
    out << "  " << std::left << std::setw(10) << p.name << std::right << std::fixed
        << std::setprecision(1) << std::setw(10) << static_cast<double>(p.macs) / 1e6
        << std::setw(11) << p.params << std::setw(11);
    if (p.has_accuracy) {
      out << std::setprecision(3) << p.accuracy;
    } else {
      out << "-";
    }
    out << std::setprecision(2) << std::setw(10) << st.avg_ms << std::setw(10) << st.std_ms
        << std::setw(10) << st.min_ms << std::setw(7)
        << (p.result.run_id ? "#" + std::to_string(p.result.run_id) : std::string("-"))
        << (p.on_front ? "    *" : "") << "\n";
  }
  out << "\nPareto front (low latency, high " << (accuracy ? "accuracy" : "MACs") << "):";
  for (const ofa::VariantProfile& p : *profiles) {
    if (p.on_front)
      out << " " << p.name << " (" << std::setprecision(2) << p.result.stats.avg_ms << " ms)";
  }
  out << "\n";
  if (!profiles->front().result.db_path.empty()) {
    out << "Recorded as " << family->name << "/<variant>: `sod2 ofa` takes its expected latencies "
        << "from these runs at the same bindings.\n";
  }
  return 0;
}

}  // namespace

int run_profile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl = make_parser();
  profiling::ProfileRequest req;
  int top = 10;
  std::optional<SweepSpec> sweep;
  int64_t points = 16;
  try {
    cl.parse(args);
    if (cl.has("--help")) {
      out << "usage: sod2 profile MODEL(.onnx|.sod2) [--device local|adb[:SERIAL]] --bind k=v,... "
             "[--runs N] [--warmup K] [--threads T] [--trace OUT.json]\n"
             "       sod2 profile MODEL --sweep NAME[=lo:hi[:step]] [--bind others] [--points N] "
             "[--json]\n"
             "       sod2 profile MODEL --bind k=v,... --duration TIME [--window TIME]\n"
             "       sod2 profile --family FAMILY(.sod2|/variants.json) [same options]\n\n"
             "Compiles the model (unless it is a package), sends it to the device's agent, runs it "
             "and prints\nthe latency and where the time goes per fused group; the run is "
             "recorded in the profile store\n(see sod2 history). With --sweep, one package runs at "
             "each value of the symbol:\nlatency p50/p90, work and GOP/s, the arena the plan "
             "predicted beside the one the device\nreported, and the groups whose time grows "
             "faster than their work.\nWith --duration, the package keeps running after the "
             "measured runs: "
             "each window of time\nprints its latency percentiles, the agent's memory and the "
             "device's temperatures and\nCPU frequencies, then the first window (cold) beside the "
             "last and the groups that slowed\nmost; what the device does not let the agent read "
             "is said.\n\noptions:\n"
          << cl.flags_help();
      return 0;
    }
    if (cl.positional().size() != 1) throw std::invalid_argument("expected exactly one MODEL");
    req.model_path = cl.positional()[0];
    req.device = cl.value("--device").value_or("local");
    if (auto b = cl.value("--bind")) req.bind = parse_bindings(*b);
    req.settings.runs = parse_count(cl.value("--runs"), 20, "--runs", 1);
    req.settings.warmup = parse_count(cl.value("--warmup"), 3, "--warmup", 0);
    req.settings.threads = parse_count(cl.value("--threads"), 0, "--threads", 0);
    req.seed = static_cast<uint32_t>(parse_count(cl.value("--seed"), 1, "--seed", 0));
    top = parse_count(cl.value("--top"), 10, "--top", 0);
    req.rdp = rdp_options_from(cl.value("--ranges"), cl.value("--range"));
    req.fuse = !cl.has("--no-fusion");
    const std::string weights = cl.value("--weights").value_or("fp32");
    const auto storage = package::parse_weight_storage(weights);
    if (!storage.ok()) throw std::invalid_argument(storage.status().message());
    req.weights = *storage;
    // Bounds may name the model's symbols (lengths=seq), valued at each run's sizes.
    if (auto r = cl.value("--int-range")) req.int_ranges = parse_int_ranges(*r);
    if (auto f = cl.value("--input")) req.input_files = parse_input_files(*f);
    if (auto db = cl.value("--db")) req.db_path = *db;
    if (auto s = cl.value("--sweep")) {
      sweep = parse_sweep_spec(*s, "--sweep");
      if (cl.has("--family")) throw std::invalid_argument("--sweep and --family do not combine");
      if (cl.has("--trace")) throw std::invalid_argument("--trace does not combine with --sweep");
    } else if (cl.has("--points") || cl.has("--json")) {
      throw std::invalid_argument(std::string(cl.has("--points") ? "--points" : "--json") +
                                  " goes with --sweep");
    }
    points = parse_count(cl.value("--points"), 16, "--points", 2);
    if (auto d = cl.value("--duration")) {
      if (sweep || cl.has("--family"))
        throw std::invalid_argument(std::string("--duration does not combine with ") +
                                    (sweep ? "--sweep" : "--family"));
      req.settings.duration_s = parse_duration_s(d, 0, "--duration", 24 * 3600);
      req.settings.window_s =
          parse_duration_s(cl.value("--window"),
                           std::clamp(req.settings.duration_s / 10, 1.0, 60.0), "--window", 60);
      if (req.settings.window_s < 0.1) throw std::invalid_argument("--window takes at least 0.1s");
    } else if (cl.has("--window")) {
      throw std::invalid_argument("--window goes with --duration");
    }
  } catch (const std::invalid_argument& e) {
    err << "sod2 profile: " << e.what() << " (see sod2 profile --help)\n";
    return 1;
  }
  // Ctrl-C stops the run between messages and still records it as failed ("cancelled").
  g_interrupted = false;
  auto previous = std::signal(SIGINT, on_interrupt);
  const bool tty = &err == &std::cerr && isatty(2);
  profiling::ProfileProgress progress;
  progress.cancel = &g_interrupted;
  std::string last;
  progress.report = [&](const std::string& stage, double f) {
    if (!tty || stage == last) return;
    last = stage;
    err << "\r\033[K[" << static_cast<int>(f * 100) << "%] " << stage << std::flush;
  };
  if (cl.has("--family")) {
    const int status = profile_family(req, progress, out, err);
    std::signal(SIGINT, previous);
    if (tty) err << "\r\033[K" << std::flush;
    return status;
  }
  if (sweep) {
    profiling::SweepProfileRequest request;
    request.profile = req;
    request.symbol = sweep->name;
    request.lo = sweep->lo;
    request.hi = sweep->hi;
    request.step = sweep->step;
    request.max_points = points;
    auto measured = profiling::profile_sweep(request, progress);
    std::signal(SIGINT, previous);
    if (tty) err << "\r\033[K" << std::flush;
    if (!measured.ok()) {
      err << "sod2 profile: " << measured.status().message() << "\n";
      return 1;
    }
    if (cl.has("--json")) {
      out << profiling::json_text(profiling::sweep_json(*measured), 2) << "\n";
    } else {
      profiling::print_sweep_table(*measured, out, top);
    }
    // Failed points are part of the curve; a plan that is not what ran is a failure.
    return measured->arena_mismatches > 0 ? 1 : 0;
  }
  auto result = profiling::profile(req, progress);
  std::signal(SIGINT, previous);
  if (tty) err << "\r\033[K" << std::flush;
  if (!result.ok()) {
    err << "sod2 profile: " << result.status().message() << "\n";
    return 1;
  }
  profiling::print_profile_table(*result, out, top);
  if (req.settings.duration_s > 0)
    profiling::print_sustained_table(profiling::sustained_from(*result), out);
  if (auto trace = cl.value("--trace")) {
    Status st = profiling::write_trace(*result, *trace);
    if (!st.ok()) {
      err << "sod2 profile: " << st.message() << "\n";
      return 1;
    }
    out << "Trace: " << *trace << " (open in https://ui.perfetto.dev or chrome://tracing)\n";
  }
  return 0;
}

}  // namespace sod2::cli
