#include "app/cli/run_command.h"

#include <algorithm>
#include <chrono>

#include "app/cli/backend_args.h"
#include "app/cli/command_line.h"
#include "app/cli/plan_dump.h"
#include "app/cli/run_benchmark.h"
#include "app/cli/symbol_args.h"
#include "app/cli/test_data_run.h"
#include "core/pipeline/compiled_model.h"
#include "core/rdp/rdp.h"
#include "runtime/exec/session.h"
#include "runtime/package/package_loader.h"

namespace sod2::cli {
namespace {

CommandLine make_parser() {
  std::vector<CommandLine::Flag> flags = {
      {"--test-data", true,
       "a folder with input_K.pb and output_K.pb (the ONNX test-data layout): run on the inputs "
       "and compare with the outputs",
       "DIR"},
      {"--bind", true, "benchmark on random inputs of these sizes", "k=v,..."},
      {"--inputs", true,
       "benchmark on the exact inputs ort_bench.js --save-inputs DIR wrote (inputs.json + .bin)",
       "DIR"},
      {"--input", true,
       "benchmark with these inputs read from files (NumPy .npy or ONNX TensorProto .pb), the "
       "rest random; their dims bind the symbols --bind leaves out",
       "name=FILE,..."},
      {"--runs", true, "timed runs when benchmarking (default 20)", "N"},
      {"--warmup", true, "untimed runs before them, the first included (default 3)", "K"},
      {"--int-range", true,
       "integer inputs' values for random inputs, [lo, hi) or one value; bounds may use "
       "the model's symbols (default 0:2)",
       "name=lo:hi|value,..."},
      {"--seed", true, "random inputs' seed (default 1)", "S"},
      {"--json", false, "benchmark results as one JSON line", ""},
      {"--profile", false,
       "with a benchmark: time per op type, the slowest nodes and what ran inside control flow",
       ""},
      {"--profile-nodes", true,
       "with --profile: how many of the slowest nodes to list (default 10; 0 lists every node)",
       "N"},
      {"--no-fusion", false, "run every node alone, every value in the arena", ""},
      {"--plain-layout", false,
       "hold every value NCHW (by default, values passed between the kernels that take them "
       "- convolutions, pools, concats, elementwise arithmetic - stay channel-blocked)",
       ""},
      {"--no-winograd", false,
       "run every 3x3 convolution directly (by default, those whose transformed weights and "
       "scratchpads take no more memory than their output run as Winograd F(2x2, 3x3) where "
       "oneDNN offers it, which rounds differently)",
       ""},
      {"--dump-plan", true,
       "after the runs, write the memory plan the runtime ran with (binding, version, tensors "
       "with size and offset, arena, steps) as JSON, to compare with sod2 plan --bind --json",
       "FILE"},
      {"--rtol", true, "relative tolerance (default 1e-3)", "R"},
      {"--atol", true, "absolute tolerance (default 1e-4)", "A"},
      {"--threads", true, "worker threads (default: all cores)", "T"},
      {"--max-run-mb", true, "memory one run may hold (default: half the physical memory)", "MB"},
      {"--max-loop-iterations", true, "iterations per Loop/Scan node and run (default 1e7)", "N"},
      {"--max-run-ms", true, "wall-clock limit of one run (default: none)", "MS"},
      {"--range", true, "declare symbol ranges; MULTIPLE defaults to 1", "k=lo:hi[:multiple],..."},
      {"--ranges", true, "read ranges from a JSON file (see sod2 plan --help)", "FILE"},
      {"--help", false, "show this help", ""},
  };
  for (auto& f : backend_flags()) flags.push_back(std::move(f));
  return CommandLine(std::move(flags));
}

std::string usage() {
  return "usage: sod2 run MODEL.onnx|MODEL.sod2 --test-data DIR [options]\n"
         "       sod2 run MODEL.onnx|MODEL.sod2 (--bind k=v,... | --input name=FILE,... | --inputs "
         "DIR)\n"
         "                [--runs N] [--json]\n\n"
         "Compiles the model in memory (RDP, memory plan) and runs it with the CPU runtime, or\n"
         "with --backend vulkan on a Vulkan device (the CPU runs what the device cannot).\n"
         "With --test-data: runs on the inputs in DIR and compares every output with the\n"
         "reference; prints the largest absolute and relative error per output and exits 1 if\n"
         "any element is outside atol + rtol * |reference|.\n"
         "With --bind, --input or --inputs: benchmarks; prints median_ms, p90_ms, min_ms, "
         "first_run_ms,\n"
         "load_ms, arena_bytes, peak_rss_bytes (the peak since the load, where Linux allows\n"
         "restarting it: peak_since_load), rss_after_load_bytes and working_bytes (the two's "
         "difference).\n\n"
         "options:\n" +
         make_parser().flags_help();
}

// A package (told by its magic bytes, whatever its extension) is loaded as compiled; an ONNX
// model is compiled in memory under the --range/--ranges options.
Expected<rt::ProgramDesc> load_program(const CommandLine& cl, const RdpOptions& options,
                                       bool gpu_kernels) {
  const std::string& path = cl.positional()[0];
  if (rt::is_package_file(path)) {
    if (cl.has("--range") || cl.has("--ranges")) {
      return invalid_argument(path +
                              " is a compiled package: its ranges were fixed by `sod2 "
                              "compile`; drop --range/--ranges or recompile the model");
    }
    return rt::load_package_file(path);
  }
  pipeline::CompileOptions compile_options;
  compile_options.rdp = options;
  compile_options.fuse = !cl.has("--no-fusion");
  compile_options.target = gpu_kernels ? pipeline::Target::kVulkan : pipeline::Target::kCpu;
  SOD2_ASSIGN_OR_RETURN(pipeline::CompiledModel compiled,
                        pipeline::compile_file(path, compile_options));
  return std::move(compiled.program);
}

}  // namespace

int run_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl = make_parser();
  RdpOptions options;
  double rtol = 1e-3, atol = 1e-4;
  int threads = 0;
  rt::RunLimits limits;
  BenchmarkOptions bench;
  BackendChoice backend_choice;
  try {
    cl.parse(args);
    if (cl.has("--help")) {
      out << usage();
      return 0;
    }
    options = rdp_options_from(cl.value("--ranges"), cl.value("--range"));
    rtol = parse_real(cl.value("--rtol"), rtol, "--rtol", false);
    atol = parse_real(cl.value("--atol"), atol, "--atol", false);
    threads = static_cast<int>(parse_real(cl.value("--threads"), 0, "--threads", false));
    // Clamped below 2^63 before converting: a huge number means "no practical limit".
    auto limit = [&](const char* flag, double scale) {
      return static_cast<int64_t>(
          std::min(parse_real(cl.value(flag), 0, flag, false) * scale, 9e18));
    };
    limits.max_bytes = limit("--max-run-mb", 1024.0 * 1024.0);
    limits.max_loop_iterations = limit("--max-loop-iterations", 1.0);
    limits.max_run_ms = limit("--max-run-ms", 1.0);
    bench = benchmark_options_from(cl);
    backend_choice = backend_choice_from(cl);
  } catch (const std::invalid_argument& e) {
    err << "sod2 run: " << e.what() << "\n";
    return 1;
  }
  if (cl.positional().size() != 1) {
    err << "sod2 run: expected exactly one MODEL.onnx (see sod2 run --help)\n";
    return 1;
  }
  const bool random = cl.has("--bind") || cl.has("--input");
  const int modes = cl.has("--test-data") + (random || cl.has("--inputs"));
  if (modes != 1 || (random && cl.has("--inputs"))) {
    err << "sod2 run: give one of --test-data DIR, --bind k=v,... (with --input name=FILE,...) "
           "or --inputs DIR (see sod2 run --help)\n";
    return 1;
  }
  auto fail = [&](const Status& st) {
    err << "sod2 run: " << st.message() << "\n";
    return 1;
  };
  const auto t0 = std::chrono::steady_clock::now();
  Expected<rt::ProgramDesc> program = load_program(cl, options, backend_choice.vulkan);
  if (!program.ok()) return fail(program.status());
  rt::SessionOptions session_options;
  session_options.threads = threads;
  session_options.limits = limits;
  session_options.profile = cl.has("--profile");
  session_options.channel_blocked = !cl.has("--plain-layout");
  session_options.winograd = !cl.has("--no-winograd");
  auto backend = make_backend(backend_choice);
  if (!backend.ok()) return fail(backend.status());
  session_options.backend = *backend;
  auto session =
      rt::Session::create(std::move(*program), rt::KernelRegistry::standard(), session_options);
  if (!session.ok()) return fail(session.status());
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // The JSON line stays the only line of stdout.
  const bool json = cl.has("--json") && !cl.has("--test-data");
  std::ostream& report = json ? err : out;
  print_backend_placement(**session, report);
  int status = 0;
  if (cl.has("--test-data")) {
    status = run_test_data(**session, *cl.value("--test-data"), rtol, atol, load_ms, out, err);
  } else {
    bench.load_ms = load_ms;
    status = run_benchmark(**session, bench, out, err);
  }
  if (print_backend_counters(**session, backend_choice, report) > 0 && status == 0) status = 1;
  if (auto dump = cl.value("--dump-plan")) {
    const Status st = write_plan_dump(*dump, rt::instantiated_plan(**session));
    if (!st.ok()) {
      err << "sod2 run: " << st.message() << "\n";
      return 1;
    }
  }
  return status;
}

}  // namespace sod2::cli
