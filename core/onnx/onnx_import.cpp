#include "core/onnx/onnx_import.h"

#include <algorithm>
#include <filesystem>
#include <new>

#include <google/protobuf/io/coded_stream.h>

#include "core/onnx/graph_import.h"
#include "core/onnx/import_limits.h"
#include "core/onnx/op_definitions.h"
#include "core/onnx/op_schema_check.h"
#include "core/status/input_file.h"

namespace sod2 {
namespace {

Expected<Model> import_model(const onnx::ModelProto& proto, const std::string& base_dir,
                             const ImportOptions& options) {
  if (!proto.has_graph()) return parse_error("does not look like an ONNX model: it holds no graph");
  Model model;
  model.ir_version = proto.ir_version();
  model.producer_name = proto.producer_name();
  model.producer_version = proto.producer_version();
  model.domain = proto.domain();
  model.model_version = proto.model_version();
  if (model.ir_version <= 0) {
    model.diagnostics.push_back(
        {Severity::kWarning, "the model does not state its ir_version", ""});
  }
  for (const auto& o : proto.opset_import()) {
    const std::string domain = o.domain() == "ai.onnx" ? std::string() : o.domain();
    if (o.version() <= 0)
      return invalid_model("opset_import of domain '" + o.domain() + "' has version " +
                           std::to_string(o.version()));
    if (model.opset(domain) != 0) {
      model.diagnostics.push_back({Severity::kWarning,
                                   "domain '" + o.domain() + "' is imported twice; the first wins",
                                   ""});
      continue;
    }
    model.opset_imports.push_back({domain, o.version()});
  }
  // Before IR version 3 models had no opset_import and meant opset 1.
  if (model.opset("") == 0 && model.ir_version > 0 && model.ir_version < 3) {
    model.opset_imports.push_back({"", 1});
  }
  const int64_t known = max_known_onnx_opset();
  if (model.opset("") > known) {
    model.diagnostics.push_back(
        {Severity::kWarning,
         "the model imports opset " + std::to_string(model.opset("")) +
             " of the ONNX default domain; this build defines operators up to opset " +
             std::to_string(known) + " and reads each op with its newest known definition",
         ""});
  }

  onnx_import::ModelScope scope;
  scope.model = &model;
  scope.tensors.base_dir = base_dir;
  scope.tensors.load_external_data = options.load_external_data;
  scope.diagnostics = &model.diagnostics;
  onnx_import::GraphImporter importer(&scope, nullptr, 0);
  SOD2_ASSIGN_OR_RETURN(model.graph, importer.import(proto.graph(), "main"));
  SOD2_RETURN_IF_ERROR(onnx_import::check_four_bit_uses(*model.graph, &scope.four_bit_values));
  return model;
}

Expected<Model> import_guarded(std::span<const uint8_t> bytes, const std::string& base_dir,
                               const ImportOptions& options) {
  if (bytes.size() > options.max_model_bytes || bytes.size() > static_cast<size_t>(INT32_MAX))
    return unsupported("is " + std::to_string(bytes.size()) +
                       " bytes; protobuf models must stay under 2 GiB (keep weights in external "
                       "data files)");
  if (bytes.empty()) return parse_error("is empty (0 bytes), not an ONNX model");
  onnx::ModelProto proto;
  google::protobuf::io::CodedInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT32_MAX);
  // Each subgraph level costs protobuf 3 message levels (attribute, graph, node). Parsing far
  // past kMaxGraphDepth lets a too-deep model get the importer's own, clearer error; the limit
  // still bounds protobuf's recursion (and stack) on hostile files.
  stream.SetRecursionLimit(3 * 8 * onnx_import::kMaxGraphDepth);
  if (!proto.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return parse_error(
        "is not a valid ONNX protobuf (truncated, corrupted, nested too deeply, or another "
        "format)");
  return import_model(proto, base_dir, options);
}

}  // namespace

// libonnx's schemas up to its opset, then the project's own table (op_definitions.h).
int64_t max_known_onnx_opset() {
  return std::max(onnx_import::max_known_opset(""), onnx_import::kNewestDefinedOpset);
}

Expected<Model> import_onnx_bytes(std::span<const uint8_t> bytes, const std::string& base_dir,
                                  const std::string& display_name, const ImportOptions& options) {
  // libonnx and protobuf may throw (allocation failures on absurd sizes); nothing escapes core.
  Expected<Model> result = internal_error("import did not run");
  try {
    result = import_guarded(bytes, base_dir, options);
  } catch (const std::bad_alloc&) {
    result = Status(StatusCode::kUnsupported, "ran out of memory while importing");
  } catch (const std::exception& e) {
    result = Status(StatusCode::kInternal, std::string("unexpected error: ") + e.what());
  }
  if (!result.ok()) return result.status().with_context(display_name);
  return result;
}

Expected<Model> import_onnx_file(const std::string& path, const ImportOptions& options) {
  const std::filesystem::path p(path);
  Expected<InputFile> file = InputFile::open(path, kNoInputSizeLimit);
  if (!file.ok()) return file.status();
  if (file->size() > options.max_model_bytes)
    return unsupported(path + ": is " + std::to_string(file->size()) +
                       " bytes; protobuf models must stay under 2 GiB (keep weights in external "
                       "data files)");
  SOD2_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, file->read_all());
  const std::string base_dir = p.parent_path().empty() ? "." : p.parent_path().string();
  SOD2_ASSIGN_OR_RETURN(Model model, import_onnx_bytes(bytes, base_dir, path, options));
  model.path = path;
  return model;
}

}  // namespace sod2
