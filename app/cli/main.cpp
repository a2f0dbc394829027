// The `sod2` command-line tool: one subcommand per job, each in its own file.
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/compile_command.h"
#include "app/cli/device_commands.h"
#include "app/cli/inspect_command.h"
#include "app/cli/ofa_command.h"
#include "app/cli/plan_command.h"
#include "app/cli/run_command.h"
#include "app/cli/sweep_command.h"
#include "core/onnx/onnx_import.h"
#include "core/version.h"

namespace {

const char* kHelp =
    "usage: sod2 COMMAND [options]\n\n"
    "SoD2 Studio's command-line tool for dynamic ONNX models.\n\n"
    "commands:\n"
    "  inspect MODEL.onnx    validate a model and summarise inputs, outputs and ops\n"
    "                        (--json for a machine-readable document)\n"
    "  plan MODEL.onnx       execution order and symbolic memory plan, instantiated at\n"
    "                        --bind sizes or the upper bounds (--json)\n"
    "  sweep MODEL.onnx      the memory plan as a curve of one input symbol (--sym\n"
    "                        seq=1:512:8): arena, lower bound and layout per point\n"
    "  run MODEL.onnx        run with the CPU runtime on --test-data DIR and compare with\n"
    "                        the reference outputs\n"
    "  compile MODEL.onnx    write the deployable package MODEL.sod2 (-o FILE, --range);\n"
    "                        `sod2 run MODEL.sod2` runs it; --family variants.json\n"
    "                        writes one package for a family of sub-networks\n"
    "  devices               list devices (this machine; Android devices over adb)\n"
    "  profile MODEL         compile, send to --device, run and time every fused group;\n"
    "                        --trace OUT.json for Perfetto; recorded in the profile store;\n"
    "                        --family: every variant and the latency-MACs Pareto front\n"
    "  history               runs in the profile store; --compare RUN_A RUN_B\n"
    "  ofa FAMILY            Dynamic-OFA: switch among a family's variants to hold\n"
    "                        --budget-ms; --load for competing work; compare to the largest\n\n"
    "options:\n"
    "  --version             print the version and the ONNX opset this build understands\n"
    "  --help                show this help; `sod2 COMMAND --help` explains a command\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kHelp;
    return 1;
  }
  const std::string command = args.front();
  args.erase(args.begin());
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kHelp;
    return 0;
  }
  if (command == "--version") {
    std::cout << "sod2 " << SOD2_VERSION_STRING << " (ONNX opsets up to "
              << sod2::max_known_onnx_opset() << ")\n";
    return 0;
  }
  // Exceptions never cross into the OS: anything unexpected is one line and exit status 1.
  try {
    if (command == "inspect") return sod2::cli::run_inspect(args, std::cout, std::cerr);
    if (command == "plan") return sod2::cli::run_plan(args, std::cout, std::cerr);
    if (command == "sweep") return sod2::cli::run_sweep(args, std::cout, std::cerr);
    if (command == "run") return sod2::cli::run_run(args, std::cout, std::cerr);
    if (command == "compile") return sod2::cli::run_compile(args, std::cout, std::cerr);
    if (command == "devices") return sod2::cli::run_devices(args, std::cout, std::cerr);
    if (command == "profile") return sod2::cli::run_profile(args, std::cout, std::cerr);
    if (command == "history") return sod2::cli::run_history(args, std::cout, std::cerr);
    if (command == "ofa") return sod2::cli::run_ofa(args, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "sod2 " << command << ": unexpected error: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "sod2: unknown command '" << command << "' (see sod2 --help)\n";
  return 1;
}
