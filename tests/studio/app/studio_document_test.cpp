// The studio's document on every corpus model: it opens with the corpus's ranges, binds each
// benchmark binding and instantiates the plan there, and its reports name what a user needs (op,
// class, symbolic and concrete dims, group); bad input and cancellation give clear errors.
#include "app/studio/document/studio_document.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "../../opt/corpus.h"

namespace sod2::studio {
namespace {

class StudioDocumentCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(StudioDocumentCorpus, OpensBindsAndReports) {
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  OpenOptions options;
  options.rdp = m->options;
  std::vector<std::string> stages;
  auto doc = StudioDocument::open(m->file.string(), options,
                                  [&](double, const std::string& s) { stages.push_back(s); });
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  EXPECT_EQ(stages.front(), "importing");
  EXPECT_EQ(stages.back(), "done");
  const StudioDocument& d = **doc;
  ASSERT_FALSE(d.symbols().empty());
  for (const SymbolControl& c : d.symbols()) {
    EXPECT_LE(c.lo, c.initial);
    EXPECT_LE(c.initial, c.hi);
  }
  int64_t previous_arena = -1;
  for (const auto& values : m->bindings) {
    auto b = d.binding(values);
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    auto at = d.instantiate(*b);
    ASSERT_TRUE(at.ok()) << at.status().to_string();
    EXPECT_GE(at->arena_bytes, at->lower_bound_bytes);
    EXPECT_NE(at->arena_bytes, previous_arena);  // the three bindings differ in size
    previous_arena = at->arena_bytes;
    const std::string summary = d.summary_report(*at);
    EXPECT_NE(summary.find("lower bound"), std::string::npos);
  }
  // The first node with an output: its report has the op, the class and both dims forms.
  auto b = d.binding(m->bindings.front());
  ASSERT_TRUE(b.ok());
  const Graph& g = d.graph();
  for (size_t i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(static_cast<NodeId>(i));
    if (n.op_type == "Constant" || n.outputs.empty() || n.outputs[0] == kNoValue) continue;
    const std::string r = d.node_report(static_cast<NodeId>(i), *b);
    EXPECT_NE(r.find("op       " + n.op_type), std::string::npos) << r;
    EXPECT_NE(r.find("class    "), std::string::npos) << r;
    EXPECT_NE(r.find(d.dims_text(n.outputs[0])), std::string::npos) << r;
    EXPECT_NE(r.find("at binding " + d.dims_at_text(n.outputs[0], *b)), std::string::npos) << r;
    break;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, StudioDocumentCorpus,
                         ::testing::ValuesIn(testing::corpus_names(SOD2_SHARED_DIR "/models")),
                         [](const auto& info) { return testing::gtest_safe_name(info.param); });

TEST(StudioDocument, ABindingOutsideTheRangeNamesTheSymbol) {
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "bert_tiny");
  ASSERT_TRUE(m.ok());
  OpenOptions options;
  options.rdp = m->options;
  auto doc = StudioDocument::open(m->file.string(), options);
  ASSERT_TRUE(doc.ok());
  auto values = m->bindings.front();
  values["seq"] = 1 << 20;
  auto b = (*doc)->binding(values);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("seq"), std::string::npos) << b.status().message();
}

// A copy of the sample model in a fresh folder, with `ranges` (if any) as its sidecar file.
std::string sample_copy(const std::string& folder, const char* ranges) {
  const auto dir = std::filesystem::temp_directory_path() / folder;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto model = dir / "m.onnx";
  std::filesystem::copy_file(SOD2_SOURCE_DIR "/resources/models/sample_yolo_tiny.onnx", model);
  if (ranges) std::ofstream(dir / "m.ranges.json") << ranges;
  return model.string();
}

TEST(StudioDocument, ReadsTheRangesFileBesideTheModel) {
  auto doc = StudioDocument::open(
      sample_copy("studio_sidecar", R"({"height": [32, 512, 32], "width": [32, 256, 32]})"), {});
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  EXPECT_EQ((*doc)->ranges_source(), "m.ranges.json beside the model");
  // Sliders start a quarter of the way up, on the multiple: 32 + 480/4 = 152 -> 160; 32 + 224/4 =
  // 88 -> 96 (they started at the upper ends: a 1280x1280 first picture).
  const auto initial = (*doc)->initial_values();
  EXPECT_EQ(initial.at("height"), 160);
  EXPECT_EQ(initial.at("width"), 96);
  for (const SymbolControl& c : (*doc)->symbols()) {
    if (!c.execution) {
      EXPECT_TRUE(c.declared) << c.name;
    }
  }
}

TEST(StudioDocument, StartsWhereTheRangesFileSays) {
  const char* ranges =
      R"({"height": {"range": [32, 512, 32], "default": 320}, "width": [32, 256, 32]})";
  auto doc = StudioDocument::open(sample_copy("studio_defaults", ranges), {});
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  EXPECT_EQ((*doc)->initial_values().at("height"), 320);
  EXPECT_EQ((*doc)->initial_values().at("width"), 96);  // no default: a quarter of the way up
  // Start values given with --ranges win over the file beside the model.
  OpenOptions options;
  options.start_values = {{"width", 224}};
  auto given = StudioDocument::open(sample_copy("studio_defaults_given", ranges), options);
  ASSERT_TRUE(given.ok()) << given.status().to_string();
  EXPECT_EQ((*given)->initial_values().at("width"), 224);
}

// Without any range a symbol spans RDP's default 1..65536: the first picture is at a small
// typical size, not at a 65536-pixel image (an 8.9 GiB plan).
TEST(StudioDocument, SymbolsWithoutARangeStartAtATypicalSize) {
  auto doc = StudioDocument::open(sample_copy("studio_no_ranges", nullptr), {});
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  EXPECT_EQ((*doc)->ranges_source().rfind("none declared", 0), 0u) << (*doc)->ranges_source();
  for (const SymbolControl& c : (*doc)->symbols()) {
    EXPECT_FALSE(c.declared);
    if (!c.execution) {
      EXPECT_EQ(c.initial, 64) << c.name;  // an execution symbol starts at its bound
    }
  }
}

TEST(StudioDocument, ABrokenRangesFileIsAnErrorNamingIt) {
  auto doc = StudioDocument::open(sample_copy("studio_bad_ranges", "{\"height\": [32"), {});
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("m.ranges.json"), std::string::npos)
      << doc.status().message();
}

TEST(StudioDocument, APackageIsAClearUnsupportedError) {
  const std::string package =
      SOD2_SOURCE_DIR "/tests/fuzz/seeds/package_load/tiny_all_features.sod2";
  auto doc = StudioDocument::open(package, {});
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(doc.status().message().find(".sod2 package"), std::string::npos)
      << doc.status().message();
}

TEST(StudioDocument, AMissingFileIsAnErrorNamingIt) {
  auto doc = StudioDocument::open("/nonexistent/model.onnx", {});
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("/nonexistent/model.onnx"), std::string::npos);
}

TEST(StudioDocument, CancellingStopsBeforeTheNextStage) {
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "bert_tiny");
  ASSERT_TRUE(m.ok());
  std::atomic<bool> cancel{false};
  OpenOptions options;
  options.rdp = m->options;
  auto doc = StudioDocument::open(
      m->file.string(), options,
      [&](double, const std::string& stage) {
        if (stage == "importing") cancel = true;
      },
      &cancel);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace sod2::studio
