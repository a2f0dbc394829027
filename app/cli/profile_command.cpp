#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iostream>

#include "app/cli/command_line.h"
#include "app/cli/device_commands.h"
#include "app/cli/symbol_args.h"
#include "app/profiling/profile_job.h"
#include "app/profiling/profile_report.h"

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
      {"--int-range", true, "value range of integer inputs, e.g. input_ids=0:1000", "name=lo:hi"},
      {"--seed", true, "seed of the random inputs (default 1)", "S"},
      {"--no-fusion", false, "compile without fused kernels", ""},
      {"--top", true, "groups in the 'top by time' section (default 10)", "N"},
      {"--help", false, "show this help", ""},
  });
}

}  // namespace

int run_profile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl = make_parser();
  profiling::ProfileRequest req;
  int top = 10;
  try {
    cl.parse(args);
    if (cl.has("--help")) {
      out << "usage: sod2 profile MODEL(.onnx|.sod2) [--device local|adb[:SERIAL]] --bind k=v,... "
             "[--runs N] [--warmup K] [--threads T] [--trace OUT.json]\n\n"
             "Compiles the model (unless it is a package), sends it to the device's agent, runs it "
             "and prints\nthe latency and where the time goes per fused group; the run is "
             "recorded in the profile store\n(see sod2 history).\n\noptions:\n"
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
    if (auto r = cl.value("--int-range")) {
      for (const auto& [name, range] : parse_ranges(*r)) {
        if (range.hi <= range.lo)
          throw std::invalid_argument("--int-range " + name + " needs lo < hi");
        req.int_ranges[name] = {range.lo, range.hi};
      }
    }
    if (auto db = cl.value("--db")) req.db_path = *db;
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
  auto result = profiling::profile(req, progress);
  std::signal(SIGINT, previous);
  if (tty) err << "\r\033[K" << std::flush;
  if (!result.ok()) {
    err << "sod2 profile: " << result.status().message() << "\n";
    return 1;
  }
  profiling::print_profile_table(*result, out, top);
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
