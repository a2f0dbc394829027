#include "app/cli/compile_command.h"

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <stdexcept>

#include "app/cli/command_line.h"
#include "app/cli/symbol_args.h"
#include "core/onnx/onnx_import.h"
#include "core/package/compile.h"
#include "core/package/package_writer.h"

namespace sod2::cli {
namespace {

CommandLine make_parser() {
  return CommandLine({
      {"-o", true, "the package to write (default: MODEL with the extension .sod2)", "FILE"},
      {"--range", true, "declare symbol ranges; MULTIPLE defaults to 1", "k=lo:hi[:multiple],..."},
      {"--ranges", true,
       "read ranges from a JSON file: {\"height\": [32, 1024, 32]} or a models.json entry", "FILE"},
      {"--no-fusion", false,
       "run every node alone with every value in the arena, instead of the fused kernels the "
       "CPU runtime has",
       ""},
      {"--help", false, "show this help", ""},
  });
}

std::string usage() {
  return "usage: sod2 compile MODEL.onnx [-o MODEL.sod2] [--range k=lo:hi[:multiple],...] "
         "[--ranges FILE] [--no-fusion]\n\n"
         "Compiles a model for the runtime (RDP under the declared ranges, memory plan) and\n"
         "writes one .sod2 package: a manifest with the graphs, the plan and the symbol ranges,\n"
         "and every weight in a 64-byte-aligned blob, sealed with a SHA-256. Run it with\n"
         "`sod2 run MODEL.sod2` or the runtime API; input sizes must lie inside the ranges\n"
         "given here.\n\n"
         "options:\n" +
         make_parser().flags_help();
}

}  // namespace

int run_compile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl = make_parser();
  RdpOptions options;
  try {
    cl.parse(args);
    if (cl.has("--help")) {
      out << usage();
      return 0;
    }
    options = rdp_options_from(cl.value("--ranges"), cl.value("--range"));
  } catch (const std::invalid_argument& e) {
    err << "sod2 compile: " << e.what() << "\n";
    return 1;
  }
  if (cl.positional().size() != 1) {
    err << "sod2 compile: expected exactly one MODEL.onnx (see sod2 compile --help)\n";
    return 1;
  }
  auto fail = [&](const Status& st) {
    err << "sod2 compile: " << st.message() << "\n";
    return 1;
  };
  const std::string input = cl.positional()[0];
  const std::string output =
      cl.value("-o").value_or(std::filesystem::path(input).replace_extension(".sod2").string());
  if (std::filesystem::path(output) == std::filesystem::path(input)) {
    return fail(invalid_argument("the output " + output + " would overwrite the model"));
  }
  const auto t0 = std::chrono::steady_clock::now();
  Expected<Model> model = import_onnx_file(input);
  if (!model.ok()) return fail(model.status());
  package::CompileOptions compile_options;
  compile_options.rdp = options;
  if (cl.has("--no-fusion")) compile_options.fuse = false;
  Expected<rt::ProgramDesc> program = package::compile_model(*model, compile_options);
  if (!program.ok()) return fail(program.status());
  package::PackageStats stats;
  Status written = package::write_package(*program, output, &stats);
  if (!written.ok()) return fail(written);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  size_t nodes = 0;
  for (const rt::GraphDesc& g : program->graphs) nodes += g.nodes.size();
  out << "wrote " << output << ": " << stats.file_bytes << " bytes (manifest "
      << stats.manifest_bytes << ", weights " << stats.blob_bytes << " in " << stats.constants
      << " constants), " << program->graphs.size() << " graphs, " << nodes << " nodes, "
      << program->symbols.size() << " symbols; sha256 " << stats.sha256 << "; " << std::fixed
      << std::setprecision(1) << ms << " ms\n";
  for (const rt::SymbolDesc& s : program->symbols) {
    if (s.execution) continue;
    out << "  " << s.name << " in " << s.lo << ":" << s.hi;
    if (s.multiple > 1) out << ":" << s.multiple;
    out << "\n";
  }
  return 0;
}

}  // namespace sod2::cli
