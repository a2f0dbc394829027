// Execution symbols in the studio (a NonZero's count: known only while running): the document
// lists each after the input symbols, up to its bound at the binding; binding one below its bound
// gives a plan no larger than at the bound, above it an error naming the symbol and the limit;
// the summary and the memory dock say which the plan sizes at its bound. The bindings bar
// re-ranges an execution symbol's slider when an input slider moves and leaves out of values()
// one that follows its bound. A compiled package does the same up to its constant bound.
#include <gtest/gtest.h>

#include <QApplication>
#include <QDockWidget>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../../onnx/proto_builder.h"
#include "../test_home.h"
#include "app/cli/compile_command.h"
#include "app/studio/document/package_document.h"
#include "app/studio/document/studio_document.h"
#include "app/studio/widgets/bindings_bar.h"
#include "app/studio/widgets/main_window.h"

namespace sod2::studio {
namespace {

constexpr const char* kNz = "nz.out0.d1";

QApplication& app() {
  static int argc = 1;
  static char name[] = "studio_execution_symbols_test";
  static char* argv[] = {name, nullptr};
  static QApplication* a = (sod2::testing::use_test_home(), new QApplication(argc, argv));
  return *a;
}

// x[h, w] -> NonZero 'nz' -> [2, nz] int64 -> Cast -> Relu -> y: two arena tensors sized by the
// count, whose bound is h*w.
std::string nonzero_model() {
  using namespace sod2::testing;
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("h"), std::string("w")});
  add_node(g, "NonZero", {"x"}, {"idx"}, "nz");
  auto* cast = add_node(g, "Cast", {"idx"}, {"f"}, "cast");
  add_int_attr(cast, "to", onnx::TensorProto::FLOAT);
  add_node(g, "Relu", {"f"}, {"r"}, "relu");
  add_node(g, "Transpose", {"r"}, {"y"}, "transpose");
  add_output(g, "y");
  const auto dir = std::filesystem::temp_directory_path() / "studio_execution_symbols";
  std::filesystem::create_directories(dir);
  const auto path = dir / "nonzero.onnx";
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path.string();
}

OpenOptions ranges() {
  OpenOptions o;
  o.rdp.ranges["h"] = {1, 64, 1};
  o.rdp.ranges["w"] = {1, 32, 1};
  return o;
}

std::unique_ptr<StudioDocument> open_nonzero() {
  auto doc = StudioDocument::open(nonzero_model(), ranges());
  EXPECT_TRUE(doc.ok()) << doc.status().to_string();
  return doc.ok() ? std::move(*doc) : nullptr;
}

const SymbolControl* control(const std::vector<SymbolControl>& symbols, const std::string& name) {
  for (const SymbolControl& c : symbols)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(StudioExecutionSymbols, ListedAfterTheInputsUpToTheirBound) {
  auto doc = open_nonzero();
  ASSERT_TRUE(doc);
  const auto& symbols = doc->symbols();
  ASSERT_EQ(symbols.size(), 3u);
  EXPECT_EQ(symbols[0].name, "h");
  EXPECT_EQ(symbols[1].name, "w");
  EXPECT_FALSE(symbols[0].execution);
  const SymbolControl& nz = symbols[2];
  EXPECT_EQ(nz.name, kNz);
  EXPECT_TRUE(nz.execution);
  EXPECT_EQ(nz.lo, 0);
  // Its bound at the initial binding: h and w a quarter of the way up 1..64 and 1..32.
  EXPECT_EQ(nz.hi, 16 * 8);
  EXPECT_EQ(nz.initial, nz.hi);
  EXPECT_EQ(nz.bound, "h*w");
  EXPECT_NE(nz.origin.find("nz"), std::string::npos) << nz.origin;
  // It starts at its bound: the initial values leave it out.
  const auto initial = doc->initial_values();
  EXPECT_EQ(initial.count(kNz), 0u);
  EXPECT_EQ(initial.at("h"), 16);
  EXPECT_EQ(initial.at("w"), 8);

  auto upper = doc->execution_upper(kNz, {{"h", 4}, {"w", 5}});
  ASSERT_TRUE(upper.ok()) << upper.status().to_string();
  EXPECT_EQ(*upper, 20);
  EXPECT_FALSE(doc->execution_upper("h", {{"h", 4}, {"w", 5}}).ok());
  EXPECT_FALSE(doc->execution_upper("nope", {}).ok());
}

TEST(StudioExecutionSymbols, BelowTheBoundPlansNoMoreAboveItIsAnError) {
  auto doc = open_nonzero();
  ASSERT_TRUE(doc);
  auto at_bound = doc->binding({{"h", 4}, {"w", 5}});
  ASSERT_TRUE(at_bound.ok()) << at_bound.status().to_string();
  EXPECT_EQ(at_bound->at(sym::symbol(kNz)), 20);
  auto below = doc->binding({{"h", 4}, {"w", 5}, {kNz, 19}});
  ASSERT_TRUE(below.ok()) << below.status().to_string();
  EXPECT_EQ(below->at(sym::symbol(kNz)), 19);  // kept, not replaced by the bound
  auto few = doc->binding({{"h", 4}, {"w", 5}, {kNz, 1}});
  ASSERT_TRUE(few.ok()) << few.status().to_string();

  auto plan_bound = doc->instantiate(*at_bound);
  auto plan_below = doc->instantiate(*below);
  auto plan_few = doc->instantiate(*few);
  ASSERT_TRUE(plan_bound.ok()) << plan_bound.status().to_string();
  ASSERT_TRUE(plan_below.ok()) << plan_below.status().to_string();
  ASSERT_TRUE(plan_few.ok()) << plan_few.status().to_string();
  EXPECT_LE(plan_below->arena_bytes, plan_bound->arena_bytes);
  EXPECT_LT(plan_few->arena_bytes, plan_bound->arena_bytes);

  auto above = doc->binding({{"h", 4}, {"w", 5}, {kNz, 21}});
  ASSERT_FALSE(above.ok());
  const std::string& message = above.status().message();
  EXPECT_NE(message.find(kNz), std::string::npos) << message;
  EXPECT_NE(message.find("bound 20"), std::string::npos) << message;

  // The summary says which symbol the plan sizes at its bound, and only then.
  const std::string summary = doc->summary_report(*plan_bound);
  EXPECT_NE(summary.find(std::string(kNz) + " at its bound 20 (<= h*w"), std::string::npos)
      << summary;
  ASSERT_EQ(doc->executions_at_bound(*at_bound).size(), 1u);
  EXPECT_EQ(doc->executions_at_bound(*at_bound).front().value, 20);
  EXPECT_TRUE(doc->executions_at_bound(*below).empty());
  EXPECT_EQ(doc->summary_report(*plan_below).find("at its bound"), std::string::npos);
}

QSlider* slider_of(BindingsBar& bar, const std::string& name) {
  for (QSpinBox* spin : bar.findChildren<QSpinBox*>())
    if (spin->accessibleName().toStdString() == name)
      return spin->parentWidget()->findChild<QSlider*>();
  return nullptr;
}

TEST(StudioExecutionSymbols, TheBarReRangesTheExecutionSliderWhenAnInputMoves) {
  app();
  auto doc = open_nonzero();
  ASSERT_TRUE(doc);
  const StudioDocument* d = doc.get();
  BindingsBar bar;
  bar.setSymbols(doc->symbols(), doc->initial_values(),
                 [d](const std::string& name, const std::map<std::string, int64_t>& values) {
                   auto u = d->execution_upper(name, values);
                   return u.ok() ? std::optional<int64_t>(*u) : std::nullopt;
                 });
  EXPECT_EQ(bar.maximum(kNz), 16 * 8);
  EXPECT_TRUE(bar.followsBound(kNz));
  EXPECT_EQ(bar.value(kNz), 16 * 8);
  EXPECT_EQ(bar.values(), (std::map<std::string, int64_t>{{"h", 16}, {"w", 8}}));

  QSignalSpy changed(&bar, &BindingsBar::bindingChanged);
  // Moving the input slider h to 4 re-ranges nz, which follows its bound.
  QSlider* h = slider_of(bar, "h");
  ASSERT_NE(h, nullptr);
  h->setValue(3);  // position k is lo + k
  EXPECT_EQ(bar.values().at("h"), 4);
  EXPECT_EQ(bar.maximum(kNz), 4 * 8);
  EXPECT_EQ(bar.value(kNz), 4 * 8);
  EXPECT_EQ(bar.values().count(kNz), 0u);

  // Moving nz's slider binds it explicitly.
  QSlider* nz = slider_of(bar, kNz);
  ASSERT_NE(nz, nullptr);
  EXPECT_EQ(nz->maximum(), 4 * 8);
  nz->setValue(30);
  EXPECT_FALSE(bar.followsBound(kNz));
  EXPECT_EQ(bar.values().at(kNz), 30);

  // A smaller input clamps the explicit value to the new bound.
  bar.setValue("w", 5);
  EXPECT_EQ(bar.maximum(kNz), 20);
  EXPECT_EQ(bar.values().at(kNz), 20);
  EXPECT_FALSE(bar.followsBound(kNz));
  // A larger one leaves it where it is.
  bar.setValue("w", 10);
  EXPECT_EQ(bar.maximum(kNz), 40);
  EXPECT_EQ(bar.values().at(kNz), 20);

  // Back to following the bound: left out of values() again.
  bar.setFollowsBound(kNz, true);
  EXPECT_EQ(bar.value(kNz), 40);
  EXPECT_EQ(bar.values().count(kNz), 0u);

  // Every change above is one bindingChanged, once the event loop turns.
  EXPECT_EQ(changed.count(), 0);
  for (int i = 0; i < 100 && changed.count() == 0; ++i) QCoreApplication::processEvents();
  EXPECT_EQ(changed.count(), 1);

  // Whatever the bar gives binds.
  auto b = doc->binding(bar.values());
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->at(sym::symbol(kNz)), 40);

  // A whole binding shown at once: the inputs first, so an explicit value above the old bound
  // but within the new one stays; an execution symbol absent follows its bound.
  bar.setValues({{"h", 64}, {"w", 32}, {kNz, 1000}});
  EXPECT_EQ(bar.maximum(kNz), 2048);
  EXPECT_EQ(bar.values(), (std::map<std::string, int64_t>{{"h", 64}, {"w", 32}, {kNz, 1000}}));
  bar.setValues({{"h", 4}, {"w", 5}});
  EXPECT_TRUE(bar.followsBound(kNz));
  EXPECT_EQ(bar.value(kNz), 20);
  EXPECT_EQ(bar.values(), (std::map<std::string, int64_t>{{"h", 4}, {"w", 5}}));
}

TEST(StudioExecutionSymbols, TheWindowSaysWhenThePlanIsAtTheBound) {
  app();
  MainWindow w;
  ASSERT_FALSE(w.openModelNow(QString::fromStdString(nonzero_model()), ranges()).has_value());
  QDockWidget* memory = w.dockOf(StudioView::kMemory);
  ASSERT_NE(memory, nullptr);
  EXPECT_TRUE(memory->windowTitle().contains("at its bound 128"))
      << memory->windowTitle().toStdString();
  ASSERT_TRUE(w.applyBinding({{"h", 4}, {"w", 5}, {kNz, 7}}));
  EXPECT_FALSE(memory->windowTitle().contains("at its bound"))
      << memory->windowTitle().toStdString();
  auto* bar = w.findChild<BindingsBar*>("bindings", Qt::FindDirectChildrenOnly);
  ASSERT_NE(bar, nullptr);
  EXPECT_EQ(bar->values().at(kNz), 7);
  EXPECT_EQ(bar->maximum(kNz), 20);

  QString error;
  EXPECT_FALSE(w.applyBinding({{"h", 4}, {"w", 5}, {kNz, 21}}, &error));
  EXPECT_TRUE(error.contains(kNz)) << error.toStdString();
  EXPECT_TRUE(error.contains("20")) << error.toStdString();
}

TEST(StudioExecutionSymbols, APackageBindsThemUpToItsBound) {
  const std::string model = nonzero_model();
  const std::string package =
      (std::filesystem::path(model).parent_path() / "nonzero.sod2").string();
  std::ostringstream out, err;
  ASSERT_EQ(cli::run_compile({model, "-o", package, "--range", "h=1:64,w=1:32"}, out, err), 0)
      << err.str();
  auto doc = PackageDocument::open(package);
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  const PackageDocument& p = **doc;
  const SymbolControl* nz = control(p.symbols(), kNz);
  ASSERT_NE(nz, nullptr);
  EXPECT_TRUE(nz->execution);
  EXPECT_EQ(nz->hi, 64 * 32);
  EXPECT_EQ(p.symbols().back().name, kNz);  // after the input symbols
  EXPECT_EQ(p.initial_values().count(kNz), 0u);

  // Not given, it takes its bound at these sizes: at most h*w elements are nonzero.
  auto at_bound = p.plan_at({{"h", 4}, {"w", 5}});
  ASSERT_TRUE(at_bound.ok()) << at_bound.status().to_string();
  EXPECT_EQ(at_bound->values.at(kNz), 20);
  EXPECT_EQ(at_bound->bounds.at(kNz), 20);
  auto upper = p.execution_upper(kNz, {{"h", 4}, {"w", 5}});
  ASSERT_TRUE(upper.ok()) << upper.status().to_string();
  EXPECT_EQ(*upper, 20);
  EXPECT_NE(p.summary_report(*at_bound).find("(at its bound)"), std::string::npos);
  auto few = p.plan_at({{"h", 4}, {"w", 5}, {kNz, 3}});
  ASSERT_TRUE(few.ok()) << few.status().to_string();
  EXPECT_EQ(few->values.at(kNz), 3);
  EXPECT_LT(few->arena_bytes, at_bound->arena_bytes);
  EXPECT_EQ(p.summary_report(*few).find("(at its bound)"), std::string::npos);

  auto above = p.plan_at({{"h", 4}, {"w", 5}, {kNz, 21}});
  ASSERT_FALSE(above.ok());
  EXPECT_NE(above.status().message().find(kNz), std::string::npos) << above.status().message();
  EXPECT_NE(above.status().message().find("above its bound 20"), std::string::npos)
      << above.status().message();
}

}  // namespace
}  // namespace sod2::studio
