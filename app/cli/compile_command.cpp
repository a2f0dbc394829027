#include "app/cli/compile_command.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "app/cli/command_line.h"
#include "app/cli/symbol_args.h"
#include "app/profiling/run_inputs.h"
#include "core/family/family_writer.h"
#include "core/onnx/onnx_import.h"
#include "core/package/package_writer.h"
#include "core/pipeline/compiled_model.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/package/package_loader.h"

namespace sod2::cli {
namespace {

CommandLine make_parser() {
  return CommandLine({
      {"-o", true, "the package to write (default: MODEL with the extension .sod2)", "FILE"},
      {"--range", true, "declare symbol ranges; MULTIPLE defaults to 1", "k=lo:hi[:multiple],..."},
      {"--ranges", true,
       "read ranges from a JSON file: {\"height\": [32, 1024, 32]} or a models.json entry", "FILE"},
      {"--family", true,
       "compile every variant a family file lists into one family package with shared weights "
       "(Dynamic-OFA; run it with `sod2 ofa`)",
       "variants.json"},
      {"--no-fusion", false,
       "run every node alone with every value in the arena, instead of the fused kernels the "
       "CPU runtime has",
       ""},
      {"--no-gpu-kernels", false,
       "do not generate compute shaders for the fused elementwise groups (the Vulkan backend "
       "then runs those nodes on the CPU)",
       ""},
      {"--weights", true,
       "fp32 (default), fp16 or int8: store float32 weights narrower for a smaller download, "
       "widened at load: fp16 where float16 holds them in range, int8 (weights of rank >= 2) as "
       "codes with one scale per output channel; small constants stay float32. Prints the size "
       "against the float32 package and the output error it causes",
       "fp32|fp16|int8"},
      {"--help", false, "show this help", ""},
  });
}

// One binding inside every input symbol's range: 32, or the nearest allowed value.
std::map<std::string, int64_t> check_binding(const rt::ProgramDesc& program) {
  std::map<std::string, int64_t> bind;
  for (const rt::SymbolDesc& s : program.symbols) {
    if (s.execution) continue;
    const int64_t m = std::max<int64_t>(s.multiple, 1);
    int64_t v = std::clamp<int64_t>(32, s.lo, s.hi);
    v = (v + m - 1) / m * m;
    if (v > s.hi) v -= m;
    bind[s.name] = std::max(v, s.lo);
  }
  return bind;
}

// Runs the program as compiled and as loaded from the package with narrower weights on the same
// random inputs; prints the largest error over the float outputs.
Status report_weights_error(const rt::ProgramDesc& program, const std::string& package,
                            std::ostream& out) {
  SOD2_ASSIGN_OR_RETURN(rt::ProgramDesc loaded, rt::load_package_file(package));
  const std::map<std::string, int64_t> bind = check_binding(program);
  SOD2_ASSIGN_OR_RETURN(std::vector<rt::Shape> shapes,
                        profiling::bound_input_shapes(program, bind));
  const std::vector<rt::HostTensor> inputs = profiling::random_inputs(program, shapes, {}, 1);
  std::vector<rt::Tensor> views;
  for (const rt::HostTensor& h : inputs) views.push_back(h.view());
  SOD2_ASSIGN_OR_RETURN(auto full,
                        rt::Session::create(program, rt::KernelRegistry::standard(), {}));
  SOD2_ASSIGN_OR_RETURN(auto half,
                        rt::Session::create(std::move(loaded), rt::KernelRegistry::standard(), {}));
  SOD2_ASSIGN_OR_RETURN(std::span<const rt::Tensor> a, full->run(views));
  SOD2_ASSIGN_OR_RETURN(std::span<const rt::Tensor> b, half->run(views));
  double max_abs = 0, max_ref = 0;
  for (size_t o = 0; o < a.size() && o < b.size(); ++o) {
    if (a[o].dtype != rt::DType::kFloat || b[o].dtype != rt::DType::kFloat ||
        a[o].shape != b[o].shape) {
      continue;
    }
    const float* x = a[o].as<float>();
    const float* y = b[o].as<float>();
    for (int64_t i = 0; i < a[o].shape.numel(); ++i) {
      max_abs = std::max(max_abs, std::fabs(static_cast<double>(x[i]) - y[i]));
      max_ref = std::max(max_ref, std::fabs(static_cast<double>(x[i])));
    }
  }
  out << "  output error against the float32 weights at " << profiling::bindings_text(bind)
      << " (random inputs): max abs " << std::scientific << std::setprecision(2) << max_abs
      << ", relative to the largest output " << (max_ref > 0 ? max_abs / max_ref : 0.0)
      << std::defaultfloat << "\n";
  return Status::ok_status();
}

std::string usage() {
  return "usage: sod2 compile MODEL.onnx [-o MODEL.sod2] [--range k=lo:hi[:multiple],...] "
         "[--ranges FILE] [--no-fusion] [--weights fp16|int8]\n"
         "       sod2 compile --family FAMILY/variants.json -o FAMILY.sod2 [same options]\n\n"
         "Compiles a model for the runtime (RDP under the declared ranges, memory plan) and\n"
         "writes one .sod2 package: a manifest with the graphs, the plan and the symbol ranges,\n"
         "and every weight in a 64-byte-aligned blob, sealed with a SHA-256. Run it with\n"
         "`sod2 run MODEL.sod2` or the runtime API; input sizes must lie inside the ranges\n"
         "given here. Each fused elementwise group also gets a generated compute shader\n"
         "(GLSL compiled to SPIR-V) for `sod2 run --backend vulkan`.\n\n"
         "With --family, every variant of the family file is compiled with its own RDP, fusion\n"
         "and memory plan into one package whose weights are stored once: identical tensors\n"
         "once, and a tensor that is a window of a larger one (leading channels, a centred\n"
         "kernel crop), possibly times a per-channel scale, as a view of it, verified bit for\n"
         "bit.\n\n"
         "options:\n" +
         make_parser().flags_help();
}

int compile_family(const std::string& family_file, std::optional<std::string> output_arg,
                   const pipeline::CompileOptions& compile_options, std::ostream& out,
                   std::ostream& err) {
  auto fail = [&](const Status& st) {
    err << "sod2 compile: " << st.message() << "\n";
    return 1;
  };
  Expected<family::FamilySpec> spec = family::read_family_spec(family_file);
  if (!spec.ok()) return fail(spec.status());
  const std::string output = output_arg.value_or(
      (std::filesystem::path(family_file).parent_path() / (spec->name + ".sod2")).string());
  family::FamilyCompileOptions options;
  options.compile = compile_options;
  options.progress = [&](const std::string& step) { err << "  " << step << "...\n"; };
  const auto t0 = std::chrono::steady_clock::now();
  family::FamilyPackageStats stats;
  Status written = family::write_family_package(*spec, options, output, &stats);
  if (!written.ok()) return fail(written);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const family::WeightSharingStats& w = stats.sharing;
  out << "wrote " << output << ": family '" << spec->name << "', " << spec->variants.size()
      << " variants, " << stats.package.file_bytes << " bytes; sha256 " << stats.package.sha256
      << "; " << std::fixed << std::setprecision(1) << ms << " ms\n";
  out << "  separate packages: " << stats.separate_bytes << " bytes (";
  for (size_t i = 0; i < spec->variants.size(); ++i) {
    out << (i ? ", " : "") << spec->variants[i].name << " " << stats.variant_package_bytes[i];
  }
  out << ")\n  family / separate: " << std::setprecision(3)
      << static_cast<double>(stats.package.file_bytes) /
             static_cast<double>(std::max<uint64_t>(1, stats.separate_bytes))
      << "\n  weights: " << w.constants << " constants -> " << w.stored << " stored ("
      << w.stored_bytes << " bytes), " << w.identical << " identical, " << w.windows << " windows, "
      << w.scaled << " scaled windows (" << w.view_bytes << " bytes of scales and residuals, "
      << w.escapes << " escaped elements)\n";
  return 0;
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
  if (cl.has("--family")) {
    if (cl.has("--weights")) {
      err << "sod2 compile: --weights applies to single-model packages; a family package "
          << "stores its weights once, shared between variants\n";
      return 1;
    }
    if (!cl.positional().empty()) {
      err << "sod2 compile: --family takes the models from the family file; drop "
          << cl.positional()[0] << "\n";
      return 1;
    }
    pipeline::CompileOptions compile_options;
    compile_options.rdp = options;
    if (cl.has("--no-fusion")) compile_options.fuse = false;
    return compile_family(*cl.value("--family"), cl.value("-o"), compile_options, out, err);
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
  const std::string weights = cl.value("--weights").value_or("fp32");
  const Expected<package::WeightStorage> storage = package::parse_weight_storage(weights);
  if (!storage.ok()) return fail(storage.status());
  const auto t0 = std::chrono::steady_clock::now();
  pipeline::CompileOptions compile_options;
  compile_options.rdp = options;
  if (cl.has("--no-fusion")) compile_options.fuse = false;
  // The package carries the generated shaders unless asked not to: any device may run it.
  compile_options.target =
      cl.has("--no-gpu-kernels") ? pipeline::Target::kCpu : pipeline::Target::kVulkan;
  Expected<pipeline::CompiledModel> compiled = pipeline::compile_file(input, compile_options);
  if (!compiled.ok()) return fail(compiled.status());
  const rt::ProgramDesc* program = &compiled->program;
  package::PackageOptions package_options;
  package_options.weights = *storage;
  package::PackageStats stats;
  Status written = package::write_package(*program, output, &stats, package_options);
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
  if (!program->gpu_kernels.empty()) {
    size_t grouped = 0;
    std::set<std::string> shaders;
    for (const rt::GpuKernelDesc& k : program->gpu_kernels) {
      grouped += k.nodes.size();
      shaders.insert(k.source);
    }
    out << "  " << program->gpu_kernels.size() << " generated compute shaders for fused "
        << "elementwise groups (" << grouped << " nodes, " << shaders.size() << " distinct)\n";
  }
  for (const rt::SymbolDesc& s : program->symbols) {
    if (s.execution) continue;
    out << "  " << s.name << " in " << s.lo << ":" << s.hi;
    if (s.multiple > 1) out << ":" << s.multiple;
    out << "\n";
  }
  if (package_options.weights != package::WeightStorage::kAsIs) {
    package::PackageStats full;
    auto bytes = package::serialize_package(*program, &full);
    if (!bytes.ok()) return fail(bytes.status());
    out << "  weights " << weights << ": " << stats.narrow_constants << " of " << stats.constants
        << " constants stored as " << weights << "; " << stats.file_bytes << " bytes against "
        << full.file_bytes << " with float32 weights (" << std::fixed << std::setprecision(3)
        << static_cast<double>(stats.file_bytes) /
               static_cast<double>(std::max<uint64_t>(full.file_bytes, 1))
        << "x)\n";
    // The package is written either way; random inputs may not suit every model (an input
    // that must hold valid indices), so a failed check is reported, not fatal.
    Status checked = report_weights_error(*program, output, out);
    if (!checked.ok()) out << "  output error not measured: " << checked.message() << "\n";
  }
  return 0;
}

}  // namespace sod2::cli
