#include "app/cli/inspect_command.h"

#include <stdexcept>

#include "app/cli/command_line.h"
#include "app/cli/inspect_report.h"
#include "core/onnx/onnx_import.h"

namespace sod2::cli {
namespace {

CommandLine make_parser() {
  return CommandLine({
      {"--json", false, "print one JSON document (schema_version, model, opset, inputs, outputs, "
                        "nodes, values, subgraphs, op_histogram, counts, diagnostics)", ""},
      {"--no-external-data", false, "do not read external weight files (shapes only)", ""},
      {"--help", false, "show this help", ""},
  });
}

std::string usage() {
  return "usage: sod2 inspect MODEL.onnx [--json] [--no-external-data]\n\n"
         "Imports an ONNX model, validates it and summarises it: inputs and outputs with their\n"
         "symbolic dims, an op histogram, node, subgraph and initializer counts, and warnings.\n\n"
         "options:\n" +
         make_parser().flags_help();
}

}  // namespace

int run_inspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl = make_parser();
  try {
    cl.parse(args);
  } catch (const std::invalid_argument& e) {
    err << "sod2 inspect: " << e.what() << "\n";
    return 1;
  }
  if (cl.has("--help")) {
    out << usage();
    return 0;
  }
  if (cl.positional().size() != 1) {
    err << "sod2 inspect: expected exactly one MODEL.onnx (see sod2 inspect --help)\n";
    return 1;
  }
  ImportOptions options;
  options.load_external_data = !cl.has("--no-external-data");
  Expected<Model> model = import_onnx_file(cl.positional()[0], options);
  if (!model.ok()) {
    err << "sod2 inspect: " << model.status().message() << "\n";
    return 1;
  }
  if (cl.has("--json")) {
    out << inspect_json(*model).dump(1) << "\n";
  } else {
    out << inspect_text(*model);
  }
  return 0;
}

}  // namespace sod2::cli
