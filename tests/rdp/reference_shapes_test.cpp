// RDP against reality: for every model of the shared corpus and each of its test sets, bind the
// input dims from input_*.pb, instantiate every graph output's dims from RDP, and require them to
// equal the reference output_*.pb dims exactly. Dims that involve an execution symbol are known
// only at run time: for those outputs the rank and the other dims are checked.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/onnx/onnx_import.h"
#include "core/rdp/binding.h"
#include "core/rdp/rdp.h"

namespace sod2 {
namespace {

const std::filesystem::path kModels = std::filesystem::path(SOD2_SHARED_DIR) / "models";

nlohmann::json manifest() {
  std::ifstream in(kModels / "models.json");
  return nlohmann::json::parse(in);
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  if (!std::filesystem::exists(kModels / "models.json")) return names;
  for (const auto& e : manifest()) names.push_back(e["name"]);
  return names;
}

RdpOptions options_for(const nlohmann::json& entry) {
  RdpOptions o;
  for (const auto& [name, r] : entry["ranges"].items())
    o.ranges[name] = *sym::SymbolRange::from_step(r[0], r[1], r[2]);
  return o;
}

class ReferenceShapes : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceShapes, OutputDimsMatchEveryTestSet) {
  nlohmann::json entry;
  for (const auto& e : manifest())
    if (e["name"] == GetParam()) entry = e;
  const std::filesystem::path file = kModels / entry["file"].get<std::string>();
  auto model = import_onnx_file(file.string());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto rdp = run_rdp(*model, options_for(entry));
  ASSERT_TRUE(rdp.ok()) << rdp.status().to_string();
  const Graph& g = *model->graph;

  std::vector<std::filesystem::path> sets;
  for (const auto& d : std::filesystem::directory_iterator(file.parent_path()))
    if (d.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(d.path());
  std::sort(sets.begin(), sets.end());
  ASSERT_FALSE(sets.empty());

  for (const auto& set : sets) {
    SCOPED_TRACE(set.filename().string());
    std::map<std::string, int64_t> values;
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      auto t = read_tensor_file((set / ("input_" + std::to_string(i) + ".pb")).string());
      ASSERT_TRUE(t.ok()) << t.status().to_string();
      const TensorFact& f = rdp->fact(g, g.inputs()[i]);
      ASSERT_TRUE(f.dims.has_value());
      ASSERT_EQ(f.dims->size(), t->dims().size());
      for (size_t d = 0; d < f.dims->size(); ++d) {
        const auto& dim = *(*f.dims)[d];
        if (auto s = dim.as_symbol()) values[s->name()] = t->dims()[d];
        else ASSERT_EQ(dim.constant_value(), t->dims()[d]);
      }
    }
    auto binding = make_binding(*rdp, values);
    ASSERT_TRUE(binding.ok()) << binding.status().to_string();

    for (size_t o = 0; o < g.outputs().size(); ++o) {
      const Value& out = g.value(g.outputs()[o]);
      auto ref = read_tensor_file((set / ("output_" + std::to_string(o) + ".pb")).string());
      ASSERT_TRUE(ref.ok()) << ref.status().to_string();
      const TensorFact& f = rdp->fact(g, g.outputs()[o]);
      ASSERT_TRUE(f.dims.has_value()) << out.name << ": rank unknown after RDP";
      ASSERT_EQ(f.dims->size(), ref->dims().size()) << out.name << ": " << f.to_string();
      for (size_t d = 0; d < f.dims->size(); ++d) {
        const Dim& dim = (*f.dims)[d];
        ASSERT_TRUE(dim.has_value()) << out.name << " dim " << d << " unknown: " << f.to_string();
        if (rdp->involves_execution(*dim)) {
          // Known only at run time; it must still admit the reference size.
          const auto b = sym::bounds(*dim, rdp->ranges());
          EXPECT_LE(b.lo, ref->dims()[d]) << out.name << " dim " << d << " = " << dim->to_string();
          EXPECT_GE(b.hi, ref->dims()[d]) << out.name << " dim " << d << " = " << dim->to_string();
          continue;
        }
        auto v = dim_at(dim, *binding);
        ASSERT_TRUE(v.has_value()) << out.name << " dim " << d << " = " << dim->to_string();
        EXPECT_EQ(*v, ref->dims()[d]) << out.name << " dim " << d << " = " << dim->to_string();
      }
    }
  }
}

// The bench target, held as a test: no dim is unknown, and no rank is unknown, anywhere.
TEST_P(ReferenceShapes, NoUnknownDims) {
  nlohmann::json entry;
  for (const auto& e : manifest())
    if (e["name"] == GetParam()) entry = e;
  auto model = import_onnx_file((kModels / entry["file"].get<std::string>()).string());
  ASSERT_TRUE(model.ok());
  auto rdp = run_rdp(*model, options_for(entry));
  ASSERT_TRUE(rdp.ok());
  for (const Diagnostic& d : rdp->diagnostics())
    EXPECT_NE(d.severity, Severity::kError) << d.message << " [" << d.node << "]";
  visit_graphs(*model->graph, [&](const Graph& g, const Node*) {
    for (const Node& n : g.nodes())
      for (ValueId id : n.outputs) {
        if (id == kNoValue) continue;
        const TensorFact& f = rdp->fact(g, id);
        if (f.category != TypeCategory::kTensor) continue;
        ASSERT_TRUE(f.dims.has_value()) << n.name << " (" << n.op_type << ") rank unknown";
        for (const Dim& d : *f.dims)
          EXPECT_TRUE(d.has_value()) << n.name << " (" << n.op_type << "): " << f.to_string();
      }
  });
}

INSTANTIATE_TEST_SUITE_P(SharedModels, ReferenceShapes, ::testing::ValuesIn(model_names()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace sod2
