#include "app/profiling/input_files.h"

#include <filesystem>

#include "app/profiling/npy_file.h"
#include "core/onnx/onnx_import.h"
#include "core/package/program_builder.h"
#include "core/status/input_file.h"

namespace sod2::profiling {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Items at commas and new lines outside double quotes; a path's quotes are kept for the item's
// parse to strip.
std::vector<std::string_view> split_items(std::string_view text) {
  std::vector<std::string_view> out;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '"') quoted = !quoted;
    if (i == text.size() || (!quoted && (text[i] == ',' || text[i] == '\n'))) {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string unquote(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return std::string(s);
}

std::string input_names(const rt::ProgramDesc& program) {
  std::string names;
  for (const rt::InputSignature& s : program.inputs) names += (names.empty() ? "" : ", ") + s.name;
  return names.empty() ? "it has none" : names;
}

}  // namespace

Expected<std::map<std::string, std::string>> parse_input_files(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view raw : split_items(text)) {
    const std::string_view item = trim(raw);
    if (item.empty()) continue;
    // "name=path", unless the '=' is inside the quoted path.
    const size_t eq = item.find('=');
    const bool named = eq != std::string_view::npos && item.find('"') > eq;
    std::string path = unquote(named ? item.substr(eq + 1) : item);
    std::string name =
        named ? std::string(trim(item.substr(0, eq))) : std::filesystem::path(path).stem().string();
    if (path.empty())
      return invalid_argument("input file \"" + std::string(item) + "\": the path is empty");
    if (name.empty())
      return invalid_argument("input file \"" + std::string(item) +
                              "\": write name=FILE (the input's name is missing)");
    if (out.count(name)) return invalid_argument("input " + name + " is given two files");
    out.emplace(std::move(name), std::move(path));
  }
  return out;
}

Expected<rt::HostTensor> read_input_tensor(const std::string& path) {
  SOD2_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, read_input_file(path));
  if (is_npy(bytes)) return parse_npy(bytes, path);
  Expected<Tensor> proto = read_tensor_file(path);
  if (!proto.ok()) {
    if (proto.status().code() == StatusCode::kParseError)
      return invalid_argument(path +
                              ": neither a NumPy .npy file nor a serialized ONNX TensorProto");
    return proto.status();
  }
  return package::to_host_tensor(*proto, path);
}

Expected<InputFileTensors> load_input_files(const rt::ProgramDesc& program,
                                            const std::map<std::string, std::string>& files) {
  InputFileTensors out(program.inputs.size());
  for (const auto& [name, path] : files) {
    size_t index = program.inputs.size();
    for (size_t i = 0; i < program.inputs.size(); ++i)
      if (program.inputs[i].name == name) index = i;
    if (index == program.inputs.size())
      return invalid_argument("input file " + path + ": the model has no input '" + name +
                              "' (its inputs: " + input_names(program) + ")");
    const rt::InputSignature& sig = program.inputs[index];
    if (sig.type != rt::ValueType::kTensor)
      return unsupported("input file " + path + ": input '" + name + "' is a " +
                         rt::value_type_name(sig.type) + "; files give tensors");
    Expected<rt::HostTensor> t = read_input_tensor(path);
    if (!t.ok()) return t.status().with_context("input '" + name + "'");
    if (sig.dtype != rt::DType::kUndefined && t->dtype() != sig.dtype)
      return invalid_argument(
          "input file " + path + " holds " + rt::dtype_name(t->dtype()) + ", input '" + name +
          "' is " + rt::dtype_name(sig.dtype) + " (numpy: save a.astype(np." +
          (sig.dtype == rt::DType::kFloat ? std::string("float32") : rt::dtype_name(sig.dtype)) +
          "))");
    if (t->shape().rank() != sig.rank)
      return invalid_argument("input file " + path + " has rank " +
                              std::to_string(t->shape().rank()) + " " + t->shape().to_string() +
                              ", input '" + name + "' has rank " + std::to_string(sig.rank));
    for (const rt::InputDimDesc& d : program.input_dims) {
      if (static_cast<size_t>(d.input) != index || d.fixed < 0) continue;
      if (t->shape()[d.dim] != d.fixed)
        return invalid_argument("input file " + path + " has dims " + t->shape().to_string() +
                                ", input '" + name + "' dim " + std::to_string(d.dim) +
                                " must be " + std::to_string(d.fixed));
    }
    out[index] = InputFileTensor{path, std::move(*t)};
  }
  return out;
}

Expected<std::map<std::string, int64_t>> bind_with_input_files(
    const rt::ProgramDesc& program, const InputFileTensors& files,
    std::map<std::string, int64_t> bind) {
  std::map<std::string, std::string> given_by;  // symbol -> the file that bound it
  for (const rt::InputDimDesc& d : program.input_dims) {
    if (d.symbol < 0 || static_cast<size_t>(d.input) >= files.size() || !files[d.input]) continue;
    const InputFileTensor& f = *files[d.input];
    const rt::SymbolDesc& s = program.symbols[static_cast<size_t>(d.symbol)];
    const int64_t v = f.tensor.shape()[d.dim];
    const std::string where = "input file " + f.path + " (dim " + std::to_string(d.dim) + " of '" +
                              program.inputs[static_cast<size_t>(d.input)].name + "')";
    auto it = bind.find(s.name);
    if (it != bind.end() && it->second != v) {
      auto by = given_by.find(s.name);
      return invalid_argument(
          where + " gives " + s.name + "=" + std::to_string(v) + ", " +
          (by == given_by.end() ? std::string("the binding") : "input file " + by->second) +
          " gives " + std::to_string(it->second));
    }
    if (v < s.lo || v > s.hi || (s.multiple > 1 && v % s.multiple != 0))
      return invalid_argument(
          where + " gives " + s.name + "=" + std::to_string(v) + ", outside its range [" +
          std::to_string(s.lo) + ", " + std::to_string(s.hi) + "]" +
          (s.multiple > 1 ? " (a multiple of " + std::to_string(s.multiple) + ")" : std::string()));
    bind[s.name] = v;
    given_by.emplace(s.name, f.path);
  }
  return bind;
}

Status use_input_files(const InputFileTensors& files, std::vector<rt::HostTensor>& inputs) {
  for (size_t i = 0; i < files.size() && i < inputs.size(); ++i) {
    if (!files[i]) continue;
    const rt::HostTensor& f = files[i]->tensor;
    const rt::Shape& bound = inputs[i].shape();
    if (f.shape() != bound)
      return invalid_argument("input file " + files[i]->path + " has dims " +
                              f.shape().to_string() + ", the binding gives its input " +
                              bound.to_string());
    inputs[i] = f;
  }
  return Status::ok_status();
}

}  // namespace sod2::profiling
