// Runs a compiled package on inputs of given shapes and prints each output's shape and first
// values: the smallest complete use of the public runtime API (runtime/include/sod2/runtime.h).
//
//   sod2 compile model.onnx -o model.sod2 --range batch=1:8,seq=1:512
//   run_package model.sod2 input_ids=1x16 attention_mask=1x16 [--threads 2] [--vulkan]
//
// Inputs are filled with a fixed pattern (integers 1, floats i/100 wrapped to [0, 1)), so a run is
// reproducible; a real app passes its own data the same way.
#include <sod2/runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

bool parse_shape(const std::string& text, std::vector<int64_t>* shape) {
  shape->clear();
  if (text == "scalar") return true;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t x = text.find('x', start);
    const std::string part =
        text.substr(start, x == std::string::npos ? std::string::npos : x - start);
    char* end = nullptr;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < 0) return false;
    shape->push_back(v);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return true;
}

// Fills `bytes` with the pattern for `type`.
void fill(sod2::api::ElementType type, std::vector<unsigned char>* bytes) {
  using T = sod2::api::ElementType;
  const size_t n = bytes->size() / sod2::api::element_size(type);
  for (size_t i = 0; i < n; ++i) {
    unsigned char* p = bytes->data() + i * sod2::api::element_size(type);
    switch (type) {
      case T::kFloat32: {
        const float f = static_cast<float>(i % 100) / 100.0f;
        std::memcpy(p, &f, 4);
        break;
      }
      case T::kFloat64: {
        const double d = static_cast<double>(i % 100) / 100.0;
        std::memcpy(p, &d, 8);
        break;
      }
      case T::kInt64: {
        const int64_t v = 1;
        std::memcpy(p, &v, 8);
        break;
      }
      case T::kInt32: {
        const int32_t v = 1;
        std::memcpy(p, &v, 4);
        break;
      }
      default: p[0] = 1; break;  // bool, 8-bit: 1; wider types get a small nonzero value
    }
  }
}

// Element i as a double, or NaN for a type this example does not print.
double value(const sod2::api::TensorView& t, size_t i) {
  using T = sod2::api::ElementType;
  switch (t.type) {
    case T::kFloat32: return static_cast<double>(t.as<float>()[i]);
    case T::kFloat64: return t.as<double>()[i];
    case T::kInt64: return static_cast<double>(t.as<int64_t>()[i]);
    case T::kInt32: return static_cast<double>(t.as<int32_t>()[i]);
    case T::kBool:
    case T::kUint8: return static_cast<double>(t.as<uint8_t>()[i]);
    default: return std::nan("");
  }
}

// The first four values, then two sums over every element: of |v|, and of |v| weighted by
// 1 + i % 7 (a value moved to another position changes it). Comparing two runs' lines (the
// cross tests: arm64 against the host) then covers the whole tensor, not its first values.
void print_values(const sod2::api::TensorView& t) {
  const size_t n = t.size_bytes() / std::max<size_t>(sod2::api::element_size(t.type), 1);
  const size_t show = std::min<size_t>(n, 4);
  for (size_t i = 0; i < show; ++i) {
    using T = sod2::api::ElementType;
    switch (t.type) {  // integers exactly, not through a double
      case T::kInt64: std::printf(" %lld", static_cast<long long>(t.as<int64_t>()[i])); break;
      case T::kInt32: std::printf(" %d", t.as<int32_t>()[i]); break;
      case T::kBool:
      case T::kUint8: std::printf(" %u", t.as<uint8_t>()[i]); break;
      case T::kFloat32:
      case T::kFloat64: std::printf(" %g", value(t, i)); break;
      default: std::printf(" ?"); break;
    }
  }
  if (n > show) std::printf(" ...");
  double abs_sum = 0, weighted = 0;
  for (size_t i = 0; i < n; ++i) {
    const double a = std::fabs(value(t, i));
    abs_sum += a;
    weighted += a * static_cast<double>(1 + i % 7);
  }
  std::printf(" | abs sum %.9g weighted %.9g", abs_sum, weighted);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.sod2 [NAME=DxDx...]... [--threads T] [--vulkan]\n",
                 argv[0]);
    return 2;
  }
  sod2::api::SessionConfig config;
  std::map<std::string, std::vector<int64_t>> shapes;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      config.threads = std::atoi(argv[++i]);
      continue;
    }
    if (arg == "--vulkan") {
      config.backend = sod2::api::Backend::kVulkan;
      continue;
    }
    const size_t eq = arg.find('=');
    std::vector<int64_t> shape;
    if (eq == std::string::npos || !parse_shape(arg.substr(eq + 1), &shape)) {
      std::fprintf(stderr, "bad input shape '%s': expected NAME=DxDx... (or NAME=scalar)\n",
                   arg.c_str());
      return 2;
    }
    shapes[arg.substr(0, eq)] = shape;
  }

  std::shared_ptr<const sod2::api::Package> package;
  sod2::api::Status st = sod2::api::Package::load(argv[1], &package);
  if (!st.ok()) {
    std::fprintf(stderr, "load: %s\n", st.message().c_str());
    return 1;
  }
  std::unique_ptr<sod2::api::Session> session;
  st = sod2::api::Session::create(package, config, &session);
  if (!st.ok()) {
    std::fprintf(stderr, "session: %s\n", st.message().c_str());
    return 1;
  }

  std::vector<std::vector<unsigned char>> buffers;
  std::vector<sod2::api::TensorView> inputs;
  for (const sod2::api::IoInfo& in : package->inputs()) {
    auto it = shapes.find(in.name);
    if (it == shapes.end()) {
      std::fprintf(stderr, "give the shape of input '%s' (rank %d) as %s=Dx...\n", in.name.c_str(),
                   in.rank, in.name.c_str());
      return 2;
    }
    sod2::api::TensorView v;
    v.type = in.type;
    v.shape = it->second;
    buffers.emplace_back(v.size_bytes());
    fill(v.type, &buffers.back());
    inputs.push_back(v);
  }
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i].data = buffers[i].data();

  std::vector<sod2::api::TensorView> outputs;
  st = session->run(inputs, &outputs);
  if (!st.ok()) {
    std::fprintf(stderr, "run: %s\n", st.message().c_str());
    return 1;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::printf("%s [", package->outputs()[i].name.c_str());
    for (size_t d = 0; d < outputs[i].shape.size(); ++d)
      std::printf("%s%lld", d ? "," : "", static_cast<long long>(outputs[i].shape[d]));
    std::printf("]:");
    print_values(outputs[i]);
    std::printf("\n");
  }
  return 0;
}
