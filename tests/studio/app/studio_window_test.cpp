// The studio window on every corpus model, offscreen: it opens the model, selecting a node shows
// its op, class and dims in the inspector, and after a binding change the memory timeline's
// rectangles are exactly what `sod2 plan --json --bind` reports at that binding.
#include <gtest/gtest.h>

#include <QApplication>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../../opt/corpus.h"
#include "app/cli/plan_command.h"
#include "app/studio/plan/timeline_model.h"
#include "app/studio/widgets/main_window.h"

namespace sod2::studio {
namespace {

QApplication& app() {
  static int argc = 1;
  static char name[] = "studio_window_test";
  static char* argv[] = {name, nullptr};
  static QApplication* a = new QApplication(argc, argv);
  return *a;
}

std::string ranges_file(const testing::CorpusModel& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, r] : m.options.ranges) j[name] = {r.lo, r.hi, r.multiple};
  const auto path = std::filesystem::temp_directory_path() /
                    ("studio_ranges_" + testing::gtest_safe_name(m.name) + ".json");
  std::ofstream(path) << j.dump();
  return path.string();
}

class StudioWindowCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(StudioWindowCorpus, OpensSelectsRebindsAndMatchesThePlanReport) {
  app();
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  OpenOptions options;
  options.rdp = m->options;
  MainWindow w;
  w.resize(1200, 800);
  auto err = w.openModelNow(QString::fromStdString(m->file.string()), options);
  ASSERT_FALSE(err.has_value()) << err->toStdString();

  // Select the first node with an output: the inspector names its op and dims.
  const Graph& g = w.document()->graph();
  NodeId chosen = kNoNode;
  for (size_t i = 0; i < g.num_nodes() && chosen == kNoNode; ++i) {
    const Node& n = g.node(static_cast<NodeId>(i));
    if (n.op_type != "Constant" && !n.outputs.empty() && n.outputs[0] != kNoValue)
      chosen = static_cast<NodeId>(i);
  }
  ASSERT_NE(chosen, kNoNode);
  w.selectCoreNode(chosen);
  const std::string inspector = w.inspectorText().toStdString();
  EXPECT_NE(inspector.find("op       " + g.node(chosen).op_type), std::string::npos) << inspector;
  EXPECT_NE(inspector.find(w.document()->dims_text(g.node(chosen).outputs[0])), std::string::npos)
      << inspector;

  // A new binding: the timeline equals the CLI's plan report there.
  const auto& values = m->bindings[1];
  QString bind_error;
  ASSERT_TRUE(w.applyBinding(values, &bind_error)) << bind_error.toStdString();
  std::string bind_arg;
  for (const auto& [k, v] : values)
    bind_arg += (bind_arg.empty() ? "" : ",") + k + "=" + std::to_string(v);
  std::ostringstream out, cli_err;
  ASSERT_EQ(
      cli::run_plan({m->file.string(), "--ranges", ranges_file(*m), "--bind", bind_arg, "--json"},
                    out, cli_err),
      0)
      << cli_err.str();
  const nlohmann::json report = nlohmann::json::parse(out.str());
  const TimelineModel* t = w.timelineModel();
  ASSERT_NE(t, nullptr);
  const auto& tensors = report.at("tensors");
  ASSERT_EQ(t->rects().size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TimelineRect& r = t->rects()[i];
    EXPECT_EQ(r.name, tensors[i].at("name").get<std::string>()) << i;
    EXPECT_EQ(r.offset, tensors[i].at("offset").get<int64_t>()) << r.name;
    EXPECT_EQ(r.size, tensors[i].at("size").get<int64_t>()) << r.name;
    EXPECT_EQ(r.first_step, tensors[i].at("first_step").get<int64_t>()) << r.name;
    EXPECT_EQ(r.last_step, tensors[i].at("last_step").get<int64_t>()) << r.name;
  }
  // The inspector follows the binding.
  w.selectCoreNode(chosen);
  auto b = w.document()->binding(values);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(w.inspectorText().toStdString().find(
                "at binding " + w.document()->dims_at_text(g.node(chosen).outputs[0], *b)),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Models, StudioWindowCorpus,
                         ::testing::ValuesIn(testing::corpus_names(SOD2_SHARED_DIR "/models")),
                         [](const auto& info) { return testing::gtest_safe_name(info.param); });

TEST(StudioWindow, ABadFileIsAReadableError) {
  app();
  MainWindow w;
  auto err = w.openModelNow("/nonexistent/model.onnx");
  ASSERT_TRUE(err.has_value());
  EXPECT_TRUE(err->contains("/nonexistent/model.onnx")) << err->toStdString();
}

}  // namespace
}  // namespace sod2::studio
