#include "app/cli/inspect_command.h"

#include <stdexcept>

#include "app/cli/command_line.h"
#include "app/cli/inspect_report.h"
#include "app/cli/symbol_args.h"
#include "core/onnx/onnx_import.h"
#include "core/onnx/onnx_shape_io.h"
#include "core/pipeline/compiled_model.h"
#include "core/rdp/binding.h"

namespace sod2::cli {
namespace {

CommandLine make_parser() {
  return CommandLine({
      {"--json", false,
       "print one JSON document (schema_version, model, opset, inputs, outputs, symbols, nodes "
       "with class and resolved, values with rank/dims/value, subgraphs, assumptions, summary, "
       "diagnostics)",
       ""},
      {"--bind", true,
       "bind symbols to sizes (execution symbols too) and add dims_at to every value; the "
       "binding is checked against ranges and assumptions",
       "k=v,..."},
      {"--range", true, "declare symbol ranges; MULTIPLE defaults to 1", "k=lo:hi[:multiple],..."},
      {"--ranges", true,
       "read ranges from a JSON file: {\"height\": [32, 1024, 32]} or a models.json entry", "FILE"},
      {"--compare-onnx", false,
       "also count what libonnx's own shape inference (with data propagation) leaves unknown", ""},
      {"--write-shapes", true,
       "write the model with RDP's shapes in value_info (symbolic dims as dim_param)", "OUT.onnx"},
      {"--no-external-data", false, "do not read external weight files (shapes only)", ""},
      {"--help", false, "show this help", ""},
  });
}

std::string usage() {
  return "usage: sod2 inspect MODEL.onnx [options]\n\n"
         "Imports and validates an ONNX model, classifies every operator (ISDO, ISDOS, ISVDOS,\n"
         "EDO) and propagates ranks and dims symbolically (RDP). Prints inputs and outputs, an\n"
         "op histogram, shape counts, assumptions, and a table of every node's output shapes.\n\n"
         "options:\n" +
         make_parser().flags_help();
}

}  // namespace

int run_inspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl = make_parser();
  RdpOptions options;
  std::map<std::string, int64_t> bind_values;
  try {
    cl.parse(args);
    if (cl.has("--help")) {
      out << usage();
      return 0;
    }
    options = rdp_options_from(cl.value("--ranges"), cl.value("--range"));
    if (auto b = cl.value("--bind")) bind_values = parse_bindings(*b);
  } catch (const std::invalid_argument& e) {
    err << "sod2 inspect: " << e.what() << "\n";
    return 1;
  }
  if (cl.positional().size() != 1) {
    err << "sod2 inspect: expected exactly one MODEL.onnx (see sod2 inspect --help)\n";
    return 1;
  }
  const std::string path = cl.positional()[0];
  // The compiled model up to RDP: inspect shows ranks, dims and classes, no plan.
  pipeline::CompileOptions compile_options;
  compile_options.import.load_external_data = !cl.has("--no-external-data");
  compile_options.rdp = options;
  compile_options.plan = false;
  Expected<pipeline::CompiledModel> compiled = pipeline::compile_file(path, compile_options);
  if (!compiled.ok()) {
    err << "sod2 inspect: " << compiled.status().message() << "\n";
    return 1;
  }
  const Model* model = &compiled->model;
  const RdpResult* rdp = &compiled->rdp;
  InspectData data{*model, *rdp, std::nullopt, std::nullopt};
  if (cl.has("--bind")) {
    auto binding = make_binding(*rdp, bind_values);
    if (!binding.ok()) {
      err << "sod2 inspect: --bind: " << binding.status().message() << "\n";
      return 1;
    }
    data.binding = std::move(*binding);
  }
  if (cl.has("--compare-onnx")) {
    auto counts = onnx_inference_counts(path);
    if (!counts.ok()) {
      err << "sod2 inspect: --compare-onnx: " << counts.status().message() << "\n";
      return 1;
    }
    data.onnx = *counts;
  }
  if (auto target = cl.value("--write-shapes")) {
    Status st = write_shapes_to_onnx(path, *target, shape_annotations(*model, *rdp));
    if (!st.ok()) {
      err << "sod2 inspect: --write-shapes: " << st.message() << "\n";
      return 1;
    }
  }
  if (cl.has("--json")) {
    out << inspect_json(data).dump(1) << "\n";
  } else {
    out << inspect_text(data);
  }
  return 0;
}

}  // namespace sod2::cli
