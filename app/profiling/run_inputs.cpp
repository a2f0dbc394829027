#include "app/profiling/run_inputs.h"

#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/status/input_file.h"

namespace sod2::profiling {
namespace {

// mulberry32, the generator ort_bench.js uses, so equal seeds give comparable data.
struct Mulberry32 {
  uint32_t a;
  double next() {
    a += 0x6D2B79F5u;
    uint32_t t = a;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return static_cast<double>(t ^ (t >> 14)) / 4294967296.0;
  }
};

rt::DType dtype_of_ort(const std::string& s) {
  static const std::map<std::string, rt::DType> m{
      {"float32", rt::DType::kFloat}, {"float64", rt::DType::kDouble},
      {"int64", rt::DType::kInt64},   {"int32", rt::DType::kInt32},
      {"int16", rt::DType::kInt16},   {"int8", rt::DType::kInt8},
      {"uint8", rt::DType::kUint8},   {"uint16", rt::DType::kUint16},
      {"uint32", rt::DType::kUint32}, {"uint64", rt::DType::kUint64},
      {"bool", rt::DType::kBool}};
  auto it = m.find(s);
  return it == m.end() ? rt::DType::kUndefined : it->second;
}

template <typename T>
void fill_ints(rt::HostTensor& t, Mulberry32& rng, int64_t lo, int64_t hi) {
  T* p = t.data<T>();
  for (int64_t i = 0; i < t.shape().numel(); ++i)
    p[i] = static_cast<T>(lo + static_cast<int64_t>(rng.next() * static_cast<double>(hi - lo)));
}

}  // namespace

Expected<std::vector<rt::Shape>> bound_input_shapes(const rt::ProgramDesc& program,
                                                    const std::map<std::string, int64_t>& bind) {
  std::vector<rt::Shape> shapes;
  for (const rt::InputSignature& sig : program.inputs) {
    if (sig.type != rt::ValueType::kTensor) {
      return unsupported("input '" + sig.name + "' is a " + rt::value_type_name(sig.type) +
                         ": inputs made from --bind are tensors; give the values in a test-data "
                         "folder (sod2 run --test-data DIR)");
    }
    rt::Shape s;
    s.set_rank(sig.rank);
    shapes.push_back(s);
  }
  for (const rt::InputDimDesc& d : program.input_dims) {
    int64_t v = d.fixed;
    if (d.symbol >= 0) {
      const std::string& name = program.symbols[static_cast<size_t>(d.symbol)].name;
      auto it = bind.find(name);
      if (it == bind.end()) {
        return invalid_argument("--bind needs a value for '" + name + "' (input '" +
                                program.inputs[static_cast<size_t>(d.input)].name + "' dim " +
                                std::to_string(d.dim) + ")");
      }
      v = it->second;
    }
    shapes[static_cast<size_t>(d.input)][d.dim] = v;
  }
  return shapes;
}

std::vector<rt::HostTensor> random_inputs(
    const rt::ProgramDesc& program, const std::vector<rt::Shape>& shapes,
    const std::map<std::string, std::pair<int64_t, int64_t>>& int_ranges, uint32_t seed) {
  Mulberry32 rng{seed};
  std::vector<rt::HostTensor> out;
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    const rt::InputSignature& sig = program.inputs[i];
    const rt::DType dtype = sig.dtype == rt::DType::kUndefined ? rt::DType::kFloat : sig.dtype;
    rt::HostTensor t(dtype, shapes[i]);
    auto r = int_ranges.find(sig.name);
    const int64_t lo = r == int_ranges.end() ? 0 : r->second.first;
    const int64_t hi = r == int_ranges.end() ? 2 : r->second.second;
    const int64_t n = shapes[i].numel();
    switch (dtype) {
      case rt::DType::kFloat:
        for (int64_t k = 0; k < n; ++k) t.data<float>()[k] = static_cast<float>(2 * rng.next() - 1);
        break;
      case rt::DType::kDouble:
        for (int64_t k = 0; k < n; ++k) t.data<double>()[k] = 2 * rng.next() - 1;
        break;
      case rt::DType::kBool:
        for (int64_t k = 0; k < n; ++k) t.data<uint8_t>()[k] = rng.next() < 0.5;
        break;
      case rt::DType::kInt64: fill_ints<int64_t>(t, rng, lo, hi); break;
      case rt::DType::kInt32: fill_ints<int32_t>(t, rng, lo, hi); break;
      case rt::DType::kInt8: fill_ints<int8_t>(t, rng, lo, hi); break;
      case rt::DType::kUint8: fill_ints<uint8_t>(t, rng, lo, hi); break;
      default: break;  // zeros
    }
    out.push_back(std::move(t));
  }
  return out;
}

Expected<std::vector<rt::HostTensor>> read_saved_inputs(const rt::ProgramDesc& program,
                                                        const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path manifest_path = fs::path(dir) / "inputs.json";
  Expected<std::string> text = read_input_text(manifest_path.string());
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound)
      return not_found("no " + manifest_path.string() +
                       " (write it with ort_bench.js --save-inputs)");
    return text.status();
  }
  nlohmann::json manifest = nlohmann::json::parse(*text, nullptr, false);
  if (manifest.is_discarded() || !manifest.contains("inputs") || !manifest["inputs"].is_array())
    return parse_error(manifest_path.string() + " is not an inputs manifest");
  std::vector<rt::HostTensor> out;
  for (const rt::InputSignature& sig : program.inputs) {
    const nlohmann::json* entry = nullptr;
    for (const auto& e : manifest["inputs"])
      if (e.is_object() && e.value("name", "") == sig.name) entry = &e;
    if (!entry) return not_found(manifest_path.string() + " has no input '" + sig.name + "'");
    const rt::DType dtype = dtype_of_ort(entry->value("type", ""));
    if (dtype == rt::DType::kUndefined ||
        (sig.dtype != rt::DType::kUndefined && dtype != sig.dtype)) {
      return invalid_argument("input '" + sig.name + "' in " + manifest_path.string() +
                              " has type '" + entry->value("type", "") + "', the model wants " +
                              rt::dtype_name(sig.dtype));
    }
    std::vector<int64_t> dims;
    for (const auto& d : entry->value("dims", nlohmann::json::array())) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        return parse_error("input '" + sig.name + "' has a bad dim in " + manifest_path.string());
      dims.push_back(d.get<int64_t>());
    }
    if (!rt::Shape::fits(dims.size()))
      return unsupported("input '" + sig.name + "': rank too high");
    // The size the dims ask for, overflow-checked, must be the file's (at most
    // kMaxInputFileBytes) before anything is allocated: the dims are as untrusted as the file.
    const rt::Shape shape{std::span<const int64_t>(dims)};
    const Expected<size_t> want = rt::checked_tensor_bytes(dtype, shape);
    if (!want.ok())
      return want.status().with_context("input '" + sig.name + "' in " + manifest_path.string());
    const fs::path file = fs::path(dir) / entry->value("file", "");
    SOD2_ASSIGN_OR_RETURN(const InputFile bin, InputFile::open(file.string()));
    if (bin.size() != *want) {
      return invalid_argument(file.string() + " is " + std::to_string(bin.size()) +
                              " bytes, not the " + std::to_string(*want) + " bytes of input '" +
                              sig.name + "'");
    }
    rt::HostTensor t(dtype, shape);
    SOD2_RETURN_IF_ERROR(bin.read_at(0, t.bytes()));
    out.push_back(std::move(t));
  }
  return out;
}

std::string bindings_text(const std::map<std::string, int64_t>& bind) {
  std::string out;
  for (const auto& [k, v] : bind) out += (out.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return out;
}

}  // namespace sod2::profiling
