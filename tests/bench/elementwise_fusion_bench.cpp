// What a fused elementwise group saves on the CPU: the groups fusion makes in the corpus's
// models (GELU after a MatMul, Swish, attention's scale and mask, ConvNeXt's layer scale and
// residual), timed as sod2:FusedElementwise against the same ops as separate kernels, in one
// process, alternating, at 1 and 2 threads. Minimum of the repetitions (the machine's noise only
// ever adds). Prints a table and writes OUT_DIR/elementwise_fusion.json.
//
//   elementwise_fusion_bench OUT_DIR
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernels/elementwise_program.h"
#include "runtime/kernels/kernel_registry.h"

namespace {

using namespace sod2;
using namespace sod2::rt;

// Outputs in buffers made once, so the timings hold kernels only.
class FixedAllocator : public OutputAllocator {
 public:
  Expected<Tensor*> output(size_t index, DType dtype, const Shape& shape) override {
    if (index != 0) return internal_error("one output");
    if (!buffer_ || !(buffer_->view().shape == shape))
      buffer_ = std::make_unique<HostTensor>(dtype, shape);
    view_ = buffer_->view();
    return &view_;
  }
  Expected<void*> scratch(size_t bytes) override {
    if (scratch_.size() < bytes + 64) scratch_.resize(bytes + 64);
    auto p = reinterpret_cast<uintptr_t>(scratch_.data());
    return reinterpret_cast<void*>((p + 63) & ~uintptr_t{63});
  }
  const HostTensor& result() const { return *buffer_; }

 private:
  std::unique_ptr<HostTensor> buffer_;
  Tensor view_;
  std::vector<uint8_t> scratch_;
};

struct Op {
  std::string type;
  std::vector<int> args;  // >= 0: a group input; < 0: -1 - j, op j's result
  float alpha = 0;
};

struct Case {
  std::string name;
  std::vector<Shape> inputs;
  std::vector<Op> ops;
};

HostTensor random_tensor(const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  HostTensor t(DType::kFloat, s);
  for (int64_t i = 0; i < t.view().numel(); ++i) t.view().as<float>()[i] = d(rng);
  return t;
}

NodeInfo info(const std::string& op, const std::string& domain, size_t inputs, Attrs attrs) {
  NodeInfo n;
  n.name = op;
  n.op_type = op;
  n.domain = domain;
  n.opset = domain.empty() ? 17 : 1;
  n.attrs = std::move(attrs);
  n.input_dtypes.assign(inputs, DType::kFloat);
  n.input_present.assign(inputs, true);
  n.output_dtypes = {DType::kFloat};
  n.num_outputs = 1;
  return n;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Each op as its own kernel, its result in its own buffer (as the arena would hold it).
struct Separate {
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<FixedAllocator> outs;
};

int run(const std::string& out_dir) {
  const KernelRegistry& registry = KernelRegistry::standard();
  const std::vector<Case> cases = {
      {"GELU after a MatMul (Add bias, Div, Erf, Add, Mul, Mul)",
       {Shape{8, 197, 1536}, Shape{1536}, Shape{}, Shape{}, Shape{}},
       {{"Add", {0, 1}},
        {"Div", {-1, 2}},
        {"Erf", {-2}},
        {"Add", {-3, 3}},
        {"Mul", {-1, -4}},
        {"Mul", {-5, 4}}}},
      {"Swish (Sigmoid, Mul)", {Shape{8, 96, 56, 56}}, {{"Sigmoid", {0}}, {"Mul", {0, -1}}}},
      {"attention scale and mask (Div, Add)",
       {Shape{8, 6, 197, 197}, Shape{}, Shape{8, 1, 1, 197}},
       {{"Div", {0, 1}}, {"Add", {-1, 2}}}},
      {"layer scale and residual (Mul, Add)",
       {Shape{8, 56, 56, 96}, Shape{96}, Shape{8, 56, 56, 96}},
       {{"Mul", {0, 1}}, {"Add", {-1, 2}}}},
  };
  nlohmann::json rows = nlohmann::json::array();
  std::printf("## Fused elementwise groups on the CPU: one FusedElementwise against its ops\n\n");
  std::printf("| group | output elements | threads | separate ms | fused ms | fused/separate |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  for (const Case& c : cases) {
    std::vector<HostTensor> inputs;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      inputs.push_back(random_tensor(c.inputs[i], static_cast<uint32_t>(i) + 1));
    std::vector<Tensor> in_views;
    for (const HostTensor& h : inputs) in_views.push_back(h.view());

    ElementwiseProgram program;
    for (const Op& op : c.ops) {
      std::vector<EwOperand> args;
      for (int a : op.args) args.push_back(a >= 0 ? EwOperand{false, a} : EwOperand{true, -1 - a});
      auto step = elementwise_step(op.type, 17, args, [](const char*) { return std::nullopt; });
      if (!step.ok()) {
        std::fprintf(stderr, "%s: %s\n", c.name.c_str(), step.status().message().c_str());
        return 1;
      }
      program.steps.push_back(*step);
    }
    auto fused =
        registry.create(info("FusedElementwise", "sod2", inputs.size(), to_attrs(program)));
    if (!fused.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), fused.status().message().c_str());
      return 1;
    }
    Separate sep;
    sep.outs.resize(c.ops.size());
    for (const Op& op : c.ops) {
      auto k = registry.create(info(op.type, "", op.args.size(), {}));
      if (!k.ok()) return 1;
      sep.kernels.push_back(std::move(*k));
    }
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      FixedAllocator fused_out;
      auto run_fused = [&]() -> Status {
        std::vector<const Tensor*> ptrs;
        for (const Tensor& t : in_views) ptrs.push_back(&t);
        KernelContext ctx(ptrs, &fused_out, &pool);
        return (*fused)->run(ctx);
      };
      std::vector<Tensor> results(c.ops.size());
      auto run_separate = [&]() -> Status {
        for (size_t j = 0; j < c.ops.size(); ++j) {
          std::vector<const Tensor*> ptrs;
          for (int a : c.ops[j].args)
            ptrs.push_back(a >= 0 ? &in_views[static_cast<size_t>(a)]
                                  : &results[static_cast<size_t>(-1 - a)]);
          KernelContext ctx(ptrs, &sep.outs[j], &pool);
          SOD2_RETURN_IF_ERROR(sep.kernels[j]->run(ctx));
          results[j] = sep.outs[j].result().view();
        }
        return Status::ok_status();
      };
      double best_fused = 1e30, best_separate = 1e30;
      for (int rep = 0; rep < 15; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        if (!run_separate().ok()) return 1;
        best_separate = std::min(best_separate, ms_since(t0));
        t0 = std::chrono::steady_clock::now();
        if (!run_fused().ok()) return 1;
        best_fused = std::min(best_fused, ms_since(t0));
      }
      // The same numbers, or the timing means nothing.
      const HostTensor& a = fused_out.result();
      const HostTensor& b = sep.outs.back().result();
      if (std::memcmp(a.view().data, b.view().data, a.view().bytes()) != 0) {
        std::fprintf(stderr, "%s: the fused result differs from the ops'\n", c.name.c_str());
        return 1;
      }
      const int64_t n = a.view().numel();
      std::printf("| %s | %lld | %d | %.3f | %.3f | %.2f |\n", c.name.c_str(),
                  static_cast<long long>(n), threads, best_separate, best_fused,
                  best_fused / best_separate);
      rows.push_back({{"group", c.name},
                      {"elements", n},
                      {"threads", threads},
                      {"separate_ms", best_separate},
                      {"fused_ms", best_fused},
                      {"fused_over_separate", best_fused / best_separate}});
    }
  }
  std::filesystem::create_directories(out_dir);
  std::ofstream(out_dir + "/elementwise_fusion.json") << rows.dump(2) << "\n";
  std::printf("\nwrote %s/elementwise_fusion.json\n", out_dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: elementwise_fusion_bench OUT_DIR\n");
    return 2;
  }
  return run(argv[1]);
}
