// The plan a view shows (pipeline::plan_at on the compiled model: what `sod2 plan --bind` prints
// and the studio's timeline draws) is the plan the runtime instantiates (what `sod2 run
// --dump-plan` writes): same version, arena, steps, and every tensor's size and offset. On every
// shared model at its three bindings, fused and unfused, on the CPU, at its smallest binding
// with the Vulkan backend (where a Vulkan device exists), and on every model of ONNX's backend test
// suite the runtime runs (tensor, sequence and optional test data alike), on the CPU and on the
// Vulkan target: those with dynamic input dims, and the many whose execution symbols (NonZero,
// TopK, Unique, NMS, Loop) make the plan depend on data.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>

#include "../opt/corpus.h"
#include "app/backend/backend_placement.h"
#include "app/cli/test_data_run.h"
#include "app/profiling/run_inputs.h"
#include "core/onnx/onnx_import.h"
#include "core/ops/constant_nodes.h"
#include "core/opt/memory_plan.h"
#include "core/pipeline/compiled_model.h"
#include "core/rdp/binding.h"
#include "runtime/exec/instantiated_plan.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2 {
namespace {

namespace fs = std::filesystem;

// The steps a view shows: the plan's units in order, leaving out those that launch no kernel
// (Constant nodes, whose values the program stores).
std::vector<std::vector<std::string>> shown_steps(const pipeline::CompiledModel& c) {
  std::vector<std::vector<std::string>> out;
  const Graph& g = c.graph();
  for (int32_t unit : c.plan.order.steps) {
    std::vector<std::string> names;
    for (NodeId n : c.plan.units.nodes[static_cast<size_t>(unit)]) {
      const Node& node = g.node(n);
      if (is_constant_node(g, node)) continue;  // its value is in the package: nothing runs
      names.push_back(node.name);
    }
    if (!names.empty()) out.push_back(std::move(names));
  }
  return out;
}

// Compares the shown plan at the run's own binding (input symbols and the execution symbols the
// run bound) with what the session ran. Returns "" when they agree, else the first difference.
std::string compare(const pipeline::CompiledModel& c, const rt::Session& session,
                    bool device = false) {
  const rt::InstantiatedPlan ran = rt::instantiated_plan(session);
  std::map<std::string, int64_t> values;
  for (const auto& [name, v] : ran.symbols) values[name] = v;
  auto binding = make_binding(c.rdp, values);
  if (!binding.ok()) return "binding the run's symbols: " + binding.status().to_string();
  auto shown = pipeline::plan_at(c, *binding);
  if (!shown.ok()) return "plan_at: " + shown.status().to_string();
  if (shown->version != ran.version)
    return "version: shown " + std::to_string(shown->version) + ", ran " +
           std::to_string(ran.version);
  if (shown->arena_bytes != ran.arena_bytes)
    return "arena: shown " + std::to_string(shown->arena_bytes) + ", ran " +
           std::to_string(ran.arena_bytes);
  if (shown->tensors.size() != ran.tensors.size())
    return "tensors: shown " + std::to_string(shown->tensors.size()) + ", ran " +
           std::to_string(ran.tensors.size());
  for (size_t t = 0; t < ran.tensors.size(); ++t) {
    const std::string& name = c.plan.tensors.tensors[t].name;
    const opt::PlacedTensor& s = shown->tensors[t];
    const rt::InstantiatedTensor& r = ran.tensors[t];
    if (name != r.name || s.size != r.size || s.offset != r.offset)
      return "tensor " + std::to_string(t) + ": shown " + name + " " + std::to_string(s.size) +
             " B at " + std::to_string(s.offset) + ", ran " + r.name + " " +
             std::to_string(r.size) + " B at " + std::to_string(r.offset);
    // The values viewing its bytes (compiled in node order, run in step order).
    std::vector<std::string> shown_views, ran_views = r.views;
    for (ValueId v : c.plan.tensors.tensors[t].views)
      shown_views.push_back(c.model.graph->value(v).name);
    std::sort(shown_views.begin(), shown_views.end());
    std::sort(ran_views.begin(), ran_views.end());
    if (shown_views != ran_views)
      return "tensor " + std::to_string(t) + " (" + name + "): shown " +
             std::to_string(shown_views.size()) + " views, ran " + std::to_string(ran_views.size());
  }
  // The same nodes in the same order. A device backend may run a generated elementwise group
  // (several steps of the plan, whose inside values the plan still holds) as one dispatch: then
  // one step ran what several shown steps list, consecutively.
  const auto steps = shown_steps(c);
  std::vector<std::string> shown_nodes, ran_nodes;
  for (const auto& step : steps) shown_nodes.insert(shown_nodes.end(), step.begin(), step.end());
  for (const auto& step : ran.steps) ran_nodes.insert(ran_nodes.end(), step.begin(), step.end());
  if (shown_nodes != ran_nodes)
    return "steps: shown " + std::to_string(steps.size()) + " (" +
           std::to_string(shown_nodes.size()) + " nodes), ran " + std::to_string(ran.steps.size()) +
           " (" + std::to_string(ran_nodes.size()) + " nodes)";
  if (!device && steps != ran.steps)
    return "steps: shown " + std::to_string(steps.size()) + ", ran " +
           std::to_string(ran.steps.size());
  return "";
}

// Runs `session` once on random inputs of the sizes `bind` gives and expects the plan it ran to be
// the one `c` shows there.
void run_and_compare(const pipeline::CompiledModel& c, rt::Session& session,
                     const std::map<std::string, int64_t>& bind, const char* what, bool device) {
  const std::string where = profiling::bindings_text(bind) + what;
  auto shapes = profiling::bound_input_shapes(c.program, bind);
  ASSERT_TRUE(shapes.ok()) << where << ": " << shapes.status().to_string();
  const auto inputs = profiling::random_inputs(c.program, *shapes, {}, 1);
  std::vector<rt::Tensor> views;
  for (const auto& h : inputs) views.push_back(h.view());
  auto out = session.run(views);
  ASSERT_TRUE(out.ok()) << where << ": " << out.status().to_string();
  EXPECT_EQ(compare(c, session, device), "") << where;
}

class PlanShownIsRun : public ::testing::TestWithParam<std::string> {};

TEST_P(PlanShownIsRun, AtEveryDeclaredBindingFusedAndUnfused) {
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  for (const bool fuse : {true, false}) {
    pipeline::CompileOptions options;
    options.rdp = m->options;
    options.fuse = fuse;
    auto c = pipeline::compile_file(m->file.string(), options);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    auto session = rt::Session::create(c->program, rt::KernelRegistry::standard(), {1});
    ASSERT_TRUE(session.ok()) << session.status().to_string();
    for (const auto& bind : m->bindings)
      run_and_compare(*c, **session, bind, fuse ? " fused" : " unfused", /*device=*/false);
  }
}

// The Vulkan target's plan, run by a session whose backend places nodes on the device: the arena
// the device addresses is laid out by the same plan.
TEST_P(PlanShownIsRun, OnTheVulkanBackend) {
  auto device = backend::make_backend(backend::BackendChoice{.vulkan = true});
  if (!device.ok()) GTEST_SKIP() << "no Vulkan device: " << device.status().message();
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  pipeline::CompileOptions options;
  options.rdp = m->options;
  options.target = pipeline::Target::kVulkan;
  auto c = pipeline::compile_file(m->file.string(), options);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  rt::SessionOptions session_options;
  session_options.threads = 1;
  session_options.backend = *device;
  auto session = rt::Session::create(c->program, rt::KernelRegistry::standard(), session_options);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  int on_device = 0;
  for (const rt::NodeBackend& b : (*session)->node_backends()) on_device += b.device;
  EXPECT_GT(on_device, 0) << "nothing runs on the device";
  // The smallest declared binding only: a software device (lavapipe) takes minutes on the
  // largest, and the CPU test above covers all three with the same plan.
  ASSERT_FALSE(m->bindings.empty());
  run_and_compare(*c, **session, m->bindings.front(), " vulkan", /*device=*/true);
}

// moe_tiny routes tokens with NonZero: eight execution symbols. Compiled without fusion, at
// batch 1, seq 64 its plan (the whole-range one, chosen for the top of the ranges) needs 214,592
// bytes at the routing of these random inputs, where a layering chosen at these sizes needs
// 165,440 (greedy by size 164,032). The run lays the binding out that way, and the report shows
// the same. (Fused, its attention scores stay inside FusedSoftmax and the whole-range plan is
// within 1% of the lower bound at the sizes tried, so no binding is laid out anew.)
TEST(PlanShownIsRunWithExecutionSymbols, MoeTinyIsLaidOutAtItsBinding) {
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "moe_tiny");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  pipeline::CompileOptions options;
  options.rdp = m->options;
  options.fuse = false;
  auto c = pipeline::compile_file(m->file.string(), options);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  ASSERT_FALSE(c->program.arena_known_steps.empty());
  ASSERT_GT(c->program.execution_bounds.num_outputs(), 0u);
  auto session = rt::Session::create(c->program, rt::KernelRegistry::standard(), {1});
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  const std::map<std::string, int64_t> bind{{"batch", 1}, {"seq", 64}};
  // Another binding in between: the session keeps the layouts of the last few.
  for (const auto& b : {bind, std::map<std::string, int64_t>{{"batch", 2}, {"seq", 40}}, bind})
    run_and_compare(*c, **session, b, " unfused", /*device=*/false);
  EXPECT_EQ((*session)->plan_version(), plan::kBindingLayeringVersion);
  const rt::InstantiatedPlan ran = rt::instantiated_plan(**session);
  std::map<std::string, int64_t> values;
  for (const auto& [name, v] : ran.symbols) values[name] = v;
  auto binding = make_binding(c->rdp, values);
  ASSERT_TRUE(binding.ok()) << binding.status().to_string();
  auto shown = pipeline::plan_at(*c, *binding);
  ASSERT_TRUE(shown.ok()) << shown.status().to_string();
  EXPECT_LT(shown->arena_bytes, shown->version_arena_bytes);
  EXPECT_LE(static_cast<double>(shown->arena_bytes),
            1.02 * static_cast<double>(shown->greedy_bytes));
  // With every execution symbol at its bound the report shows the plan a run may need at most.
  auto inputs_only = make_binding(c->rdp, bind);
  ASSERT_TRUE(inputs_only.ok()) << inputs_only.status().to_string();
  auto at_bound = pipeline::plan_at(*c, *inputs_only);
  ASSERT_TRUE(at_bound.ok()) << at_bound.status().to_string();
  EXPECT_GE(at_bound->arena_bytes, shown->arena_bytes);
}

INSTANTIATE_TEST_SUITE_P(SharedModels, PlanShownIsRun,
                         ::testing::ValuesIn(testing::corpus_names(SOD2_SHARED_DIR "/models")),
                         [](const auto& info) { return testing::gtest_safe_name(info.param); });

// Whether any main-graph input has a dim that is not a constant.
bool has_dynamic_input(const Model& model) {
  const Graph& g = *model.graph;
  for (ValueId v : g.inputs()) {
    const Value& value = g.value(v);
    if (value.kind != ValueKind::kGraphInput) continue;
    if (!value.shape) continue;
    for (const DimDecl& d : *value.shape)
      if (!d.is_constant()) return true;
  }
  return false;
}

struct SuiteComparison {
  int compared = 0, dynamic = 0, dynamic_compared = 0, with_execution_symbols = 0;
  int on_device = 0;  // models with a node the device ran
  std::vector<std::string> mismatches, dynamic_not_run;
};

// Every model of ONNX's backend suite the runtime compiles and runs, on the CPU or (with
// `device`) placed on it as the Vulkan target, its plan compared with the one shown.
SuiteComparison compare_suite(const fs::path& root, std::shared_ptr<rt::DeviceBackend> device) {
  SuiteComparison r;
  for (const auto& suite : fs::directory_iterator(root)) {
    if (!suite.is_directory()) continue;
    for (const auto& kase : fs::directory_iterator(suite.path())) {
      const fs::path file = kase.path() / "model.onnx";
      const fs::path data = kase.path() / "test_data_set_0";
      if (!fs::is_regular_file(file) || !fs::is_directory(data)) continue;
      auto model = import_onnx_file(file.string());
      if (!model.ok()) continue;
      const bool is_dynamic = has_dynamic_input(*model);
      r.dynamic += is_dynamic;
      if (is_dynamic) r.dynamic_not_run.push_back(kase.path().filename().string());
      // Models the runtime cannot compile or run are the conformance suite's business.
      pipeline::CompileOptions options;
      if (device) options.target = pipeline::Target::kVulkan;
      auto c = pipeline::compile(std::move(*model), options);
      if (!c.ok()) continue;
      rt::SessionOptions session_options;
      session_options.threads = 1;
      session_options.backend = device;
      auto session =
          rt::Session::create(c->program, rt::KernelRegistry::standard(), session_options);
      if (!session.ok()) continue;
      if (auto inputs = testing::read_test_data(data, "input_"); inputs.ok()) {
        std::vector<rt::Tensor> views;
        for (const auto& h : *inputs) views.push_back(h.view());
        if (!(*session)->run(views).ok()) continue;
      } else {
        // Sequences and optionals (the suite's dynamic-input models): as `sod2 run --test-data`
        // reads and runs them.
        std::ostringstream quiet;
        if (cli::run_test_data(**session, data, 1e-3, 1e-3, 0, quiet, quiet) != 0) continue;
      }
      ++r.compared;
      const auto placed = (*session)->node_backends();
      r.on_device += std::any_of(placed.begin(), placed.end(),
                                 [](const rt::NodeBackend& b) { return b.device; });
      if (is_dynamic) {
        ++r.dynamic_compared;
        r.dynamic_not_run.pop_back();
      }
      for (const SymbolInfo& info : c->rdp.symbols()) {
        if (info.kind == SymbolKind::kExecution) {
          ++r.with_execution_symbols;
          break;
        }
      }
      const std::string diff = compare(*c, **session, device != nullptr);
      if (!diff.empty()) r.mismatches.push_back(kase.path().filename().string() + ": " + diff);
    }
  }
  // test_sequence_model8 feeds a dim of 0, below every symbol's default range (1..65536): it
  // fails in `make conformance` too. Any other dynamic-input model must run and be compared.
  std::erase(r.dynamic_not_run, "test_sequence_model8");
  return r;
}

TEST(PlanShownIsRunOnOnnxBackendSuite, EveryModelTheRuntimeRuns) {
  const fs::path root = "/usr/share/libonnx-testdata/data";
  if (!fs::is_directory(root)) GTEST_SKIP() << "libonnx-testdata is not installed (make deps)";
  const SuiteComparison r = compare_suite(root, nullptr);
  std::cout << r.compared << " models compiled and run (" << r.with_execution_symbols
            << " with execution symbols; " << r.dynamic_compared << " of " << r.dynamic
            << " with dynamic inputs)\n";
  EXPECT_GT(r.dynamic, 0);
  EXPECT_TRUE(r.dynamic_not_run.empty())
      << "dynamic-input models not compared: " << r.dynamic_not_run.front();
  EXPECT_GT(r.compared, 900);
  EXPECT_GT(r.with_execution_symbols, 20);
  EXPECT_TRUE(r.mismatches.empty())
      << r.mismatches.size() << " differ, the first: " << r.mismatches[0];
}

// The same on the Vulkan target, each node the device runs placed there (lavapipe where there is
// no GPU): the arena the device addresses is laid out by the plan shown.
TEST(PlanShownIsRunOnOnnxBackendSuite, EveryModelTheRuntimeRunsOnVulkan) {
  const fs::path root = "/usr/share/libonnx-testdata/data";
  if (!fs::is_directory(root)) GTEST_SKIP() << "libonnx-testdata is not installed (make deps)";
  auto device = backend::make_backend(backend::BackendChoice{.vulkan = true});
  if (!device.ok()) GTEST_SKIP() << "no Vulkan device: " << device.status().message();
  const SuiteComparison r = compare_suite(root, *device);
  std::cout << r.compared << " models compiled and run on Vulkan (" << r.on_device
            << " with nodes on the device, " << r.with_execution_symbols
            << " with execution symbols)\n";
  EXPECT_GT(r.compared, 900);
  EXPECT_GT(r.on_device, 300);
  EXPECT_TRUE(r.mismatches.empty())
      << r.mismatches.size() << " differ, the first: " << r.mismatches[0];
}

}  // namespace
}  // namespace sod2
