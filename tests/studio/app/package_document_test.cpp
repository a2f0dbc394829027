// The studio's view of a compiled package: for corpus models compiled with `sod2 compile`, the
// plan it evaluates at a binding is the one the runtime lays out there (same version, same arena
// as `sod2 run --json` reports), the timeline never puts two live tensors on the same bytes, the
// drawing holds every compiled node, and bad input is a clear error.
#include "app/studio/document/package_document.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../../opt/corpus.h"
#include "app/cli/compile_command.h"
#include "app/cli/run_command.h"

namespace sod2::studio {
namespace {

std::string bind_arg(const std::map<std::string, int64_t>& values) {
  std::string s;
  for (const auto& [k, v] : values) s += (s.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return s;
}

// Compiles corpus model `name` with its ranges into a temporary package.
std::string compiled(const testing::CorpusModel& m) {
  const auto dir = std::filesystem::temp_directory_path() / "studio_package_test";
  std::filesystem::create_directories(dir);
  const auto ranges = dir / (testing::gtest_safe_name(m.name) + ".ranges.json");
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, r] : m.options.ranges) j[name] = {r.lo, r.hi, r.multiple};
  std::ofstream(ranges) << j.dump();
  const auto out = dir / (testing::gtest_safe_name(m.name) + ".sod2");
  std::ostringstream o, e;
  EXPECT_EQ(
      cli::run_compile({m.file.string(), "-o", out.string(), "--ranges", ranges.string()}, o, e), 0)
      << e.str();
  return out.string();
}

class PackageDocumentCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(PackageDocumentCorpus, EvaluatesThePlanTheRuntimeUses) {
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const std::string path = compiled(*m);
  auto doc = PackageDocument::open(path);
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  const PackageDocument& d = **doc;

  const DisplayGraph g = d.display_graph();
  ASSERT_FALSE(d.program().graphs.empty());
  EXPECT_EQ(g.display_of_node.size(), d.program().graphs[0].nodes.size());
  for (int id : g.display_of_node) EXPECT_GE(id, 0);

  const auto& values = m->bindings[1];
  auto at = d.plan_at(values);
  ASSERT_TRUE(at.ok()) << at.status().to_string();
  std::ostringstream out, err;
  ASSERT_EQ(
      cli::run_run({path, "--bind", bind_arg(values), "--runs", "1", "--warmup", "1", "--json"},
                   out, err),
      0)
      << err.str();
  std::string last;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) last = line;
  const nlohmann::json run = nlohmann::json::parse(last);
  EXPECT_EQ(at->version, run.at("plan_version").get<int32_t>());
  // Execution symbols (a NonZero count, a TopK routing) are planned at their bounds here; the
  // runtime binds their real values when their node runs and lays out no more than that.
  bool execution_symbols = false;
  for (const rt::SymbolDesc& s : d.program().symbols) execution_symbols |= s.execution;
  if (execution_symbols)
    EXPECT_GE(at->arena_bytes, run.at("arena_bytes").get<int64_t>());
  else
    EXPECT_EQ(at->arena_bytes, run.at("arena_bytes").get<int64_t>());

  // A valid plan: tensors live at the same step never share bytes, and all fit in the arena.
  const TimelineModel t = d.timeline(*at);
  const auto& r = t.rects();
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_LE(r[i].offset + r[i].size, at->arena_bytes) << r[i].name;
    for (size_t k = i + 1; k < r.size(); ++k) {
      const bool same_time = r[i].first_step <= r[k].last_step && r[k].first_step <= r[i].last_step;
      const bool same_bytes =
          r[i].offset < r[k].offset + r[k].size && r[k].offset < r[i].offset + r[i].size;
      if (r[i].size > 0 && r[k].size > 0)
        EXPECT_FALSE(same_time && same_bytes) << r[i].name << " and " << r[k].name;
    }
  }
  EXPECT_NE(d.summary_report(*at).find("arena"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Models, PackageDocumentCorpus,
                         ::testing::Values("bert_tiny", "yolo_tiny", "skipnet", "moe_tiny"),
                         [](const auto& info) { return testing::gtest_safe_name(info.param); });

TEST(PackageDocument, ABindingOutsideARangeNamesTheSymbol) {
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "yolo_tiny");
  ASSERT_TRUE(m.ok());
  auto doc = PackageDocument::open(compiled(*m));
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  auto values = (*doc)->initial_values();
  values["height"] = 33;  // off the multiple of 32
  auto at = (*doc)->plan_at(values);
  ASSERT_FALSE(at.ok());
  EXPECT_NE(at.status().message().find("height"), std::string::npos) << at.status().message();
}

TEST(PackageDocument, ACorruptedPackageIsAClearError) {
  const auto path = std::filesystem::temp_directory_path() / "studio_corrupt.sod2";
  std::filesystem::copy_file(SOD2_SOURCE_DIR
                             "/tests/fuzz/seeds/package_load/tiny_all_features.sod2",
                             path, std::filesystem::copy_options::overwrite_existing);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x5a');
  }
  auto doc = PackageDocument::open(path.string());
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("studio_corrupt.sod2"), std::string::npos)
      << doc.status().message();
}

}  // namespace
}  // namespace sod2::studio
