// sod2-studio [MODEL.onnx] [--ranges FILE] [--range k=lo:hi[:m],...] [--bind k=v,...] [--db PATH]
//             [--screenshot OUT.png [--view
//             window|graph|inspector|shapes|memory|compare|sweep|summary|
//             devices|profile|history|variants|backend] [--compare nofusion|k=v,...]
//             [--theme system|light|dark] [--open TEXT] [--select TEXT] [--profile-on DEVICE]
//             [--compare-runs A,B] [--colour-by class|time|bytes|change|backend]]
#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QIcon>
#include <QImage>
#include <QPainter>
#include <QStyleFactory>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <thread>

#include "app/studio/backend/backend_view.h"
#include "app/studio/device/device_panel.h"
#include "app/studio/device/history_view.h"
#include "app/studio/graph/graph_view.h"
#include "app/studio/ofa/variants_view.h"
#include "app/studio/widgets/main_window.h"
#include "app/studio/widgets/plan_compare.h"
#include "app/studio/widgets/theme.h"
#include "core/rdp/symbol_text.h"

namespace {

bool has_display() {
  const char* platform = std::getenv("QT_QPA_PLATFORM");
  if (platform && *platform) return true;
  return (std::getenv("DISPLAY") && *std::getenv("DISPLAY")) ||
         (std::getenv("WAYLAND_DISPLAY") && *std::getenv("WAYLAND_DISPLAY"));
}

// The flags QCommandLineParser answers by printing and exiting (addHelpOption, addVersionOption).
bool asks_for_help_or_version(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (a == "-h" || a == "-?" || a == "--help" || a == "--help-all" || a == "-v" ||
        a == "--version")
      return true;
  }
  return false;
}

int fail(const QString& text) {
  std::fprintf(stderr, "sod2-studio: %s\n", text.toLocal8Bit().constData());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication::setOrganizationName("SoD2");
  QCoreApplication::setApplicationName("SoD2 Studio");
  QCoreApplication::setApplicationVersion("0.1.0");

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Inspect a dynamic ONNX model: operator classes, propagated symbolic shapes, fused groups "
      "and the memory plan at any input size.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument("model", "the ONNX model to open");
  QCommandLineOption ranges(QStringLiteral("ranges"),
                            "symbol ranges as JSON ({\"seq\": [1, 512, 1]})", "FILE");
  QCommandLineOption range(QStringLiteral("range"), "symbol ranges", "k=lo:hi[:multiple],...");
  QCommandLineOption bind(QStringLiteral("bind"), "start at these sizes", "k=v,...");
  QCommandLineOption shot(QStringLiteral("screenshot"), "render a view to a PNG and exit",
                          "OUT.png");
  QCommandLineOption view(QStringLiteral("view"),
                          "the view to render: window, graph, inspector, shapes, memory, compare, "
                          "sweep, summary, devices, "
                          "profile, history, variants or backend",
                          "VIEW", "graph");
  QCommandLineOption select(QStringLiteral("select"),
                            "select the first node whose name or op contains TEXT", "TEXT");
  QCommandLineOption compare(QStringLiteral("compare"),
                             "the right-hand plan of the compare view: nofusion, or a binding",
                             "nofusion|k=v,...");
  QCommandLineOption theme(QStringLiteral("theme"),
                           "system, light or dark (default: the last one chosen in View > Theme)",
                           "THEME");
  QCommandLineOption open_bodies(QStringLiteral("open"),
                                 "open the bodies of the If/Loop/Scan nodes whose name or op "
                                 "contains TEXT",
                                 "TEXT");
  QCommandLineOption size(QStringLiteral("size"), "window size for --screenshot", "WxH",
                          "1400x900");
  QCommandLineOption db(QStringLiteral("db"),
                        "the profile store (default ~/.local/share/sod2/profiles.db)", "PATH");
  QCommandLineOption profile_on(QStringLiteral("profile-on"),
                                "with --screenshot: Export & profile on DEVICE first (10 runs)",
                                "DEVICE");
  QCommandLineOption compare_runs(QStringLiteral("compare-runs"),
                                  "with --screenshot: the history view compares these two runs",
                                  "RUN_A,RUN_B");
  QCommandLineOption colour_by(QStringLiteral("colour-by"),
                               "with --screenshot: colour the graph's nodes by class, time or "
                               "bytes (of --profile-on's run), change (of --compare-runs) or "
                               "backend (where each runs on Vulkan)",
                               "class|time|bytes|change|backend");
  QCommandLineOption family(QStringLiteral("family"),
                            "open a Dynamic-OFA family (package or variants.json) in the "
                            "Variants dock",
                            "FAMILY");
  QCommandLineOption family_bind(QStringLiteral("family-bind"), "the family's input sizes",
                                 "k=v,...");
  QCommandLineOption ofa_measure(QStringLiteral("ofa-measure"),
                                 "with --screenshot: measure the family's variants on DEVICE",
                                 "DEVICE");
  QCommandLineOption ofa_demo(QStringLiteral("ofa-demo"),
                              "with --screenshot: run the family demo first (budget ms, seconds, "
                              "optional load T0:T1[:THREADS])",
                              "B:S[:T0:T1[:N]]");
  parser.addOptions({ranges, range, bind, shot, view, select, compare, theme, open_bodies, size, db,
                     profile_on, compare_runs, colour_by, family, family_bind, ofa_measure,
                     ofa_demo});
  // --help and --version print and exit: they need no display, so no QApplication either.
  if (asks_for_help_or_version(argc, argv)) {
    QCoreApplication text_only(argc, argv);
    parser.process(text_only);  // prints, then exits 0
  }
  // A screenshot needs no screen: render offscreen when there is none.
  bool screenshot = false;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--screenshot") screenshot = true;
  if (!has_display()) {
    if (!screenshot) {
      std::fprintf(stderr,
                   "sod2-studio: no display found. Run it under a virtual X server "
                   "(xvfb-run -a make run) or render offscreen (QT_QPA_PLATFORM=offscreen), or use "
                   "--screenshot OUT.png to write a view to a file.\n");
      return 2;
    }
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  QApplication app(argc, argv);
  QApplication::setWindowIcon(QIcon(":/sod2/sod2-studio.svg"));
  parser.process(app);
  if (parser.isSet(theme)) {
    bool ok = false;
    const auto t = sod2::studio::theme_from_name(parser.value(theme), &ok);
    if (!ok) return fail("--theme must be system, light or dark");
    sod2::studio::apply_theme(t);
  } else {
    sod2::studio::apply_theme(sod2::studio::saved_theme());
  }

  sod2::studio::OpenOptions options;
  std::map<std::string, int64_t> bind_values;
  {
    std::optional<std::string> ranges_file, range_text;
    if (parser.isSet(ranges)) ranges_file = parser.value(ranges).toStdString();
    if (parser.isSet(range)) range_text = parser.value(range).toStdString();
    auto rdp = sod2::rdp_options_from(ranges_file, range_text);
    if (!rdp.ok()) return fail(QString::fromStdString(rdp.status().message()));
    options.rdp = *rdp;
    if (ranges_file) {
      auto defaults = sod2::read_range_defaults(*ranges_file);
      if (!defaults.ok()) return fail(QString::fromStdString(defaults.status().message()));
      options.start_values = *defaults;
    }
    if (parser.isSet(bind)) {
      auto b = sod2::parse_bindings(parser.value(bind).toStdString());
      if (!b.ok()) return fail(QString::fromStdString(b.status().message()));
      bind_values = *b;
    }
  }
  const QStringList models = parser.positionalArguments();
  sod2::studio::MainWindow window;
  if (parser.isSet(db)) window.setProfileDatabase(parser.value(db).toStdString());

  if (parser.isSet(family)) {
    sod2::studio::VariantsView* variants = window.variantsView();
    if (parser.isSet(family_bind)) {
      if (auto err = variants->setBindings(parser.value(family_bind)))
        return fail("--family-bind: " + *err);
    }
    if (auto err = variants->openFamily(parser.value(family))) return fail("--family: " + *err);
    window.dockOf(sod2::studio::StudioView::kVariants)->raise();
  }
  if (parser.isSet(shot)) {
    const bool family_only = parser.isSet(family) && parser.value(view) == "variants";
    if (models.size() != 1 && !family_only)
      return fail("--screenshot needs exactly one MODEL.onnx (or --family with --view variants)");
    const QStringList wh = parser.value(size).split('x');
    const QSize shot_size(wh.value(0).toInt() > 0 ? wh.value(0).toInt() : 1400,
                          wh.value(1).toInt() > 0 ? wh.value(1).toInt() : 900);
    window.resize(shot_size);
    if (!models.isEmpty()) {
      if (auto err = window.openModelNow(models.front(), options)) return fail(*err);
    }
    if (!bind_values.empty() && !models.isEmpty()) {
      auto values = window.initialValues();
      for (const auto& [k, v] : bind_values) values[k] = v;
      QString error;
      if (!window.applyBinding(values, &error)) return fail("--bind: " + error);
    }
    if (parser.isSet(ofa_measure)) {
      if (auto err = window.variantsView()->measureNow(parser.value(ofa_measure)))
        return fail("--ofa-measure: " + *err);
    }
    if (parser.isSet(ofa_demo)) {
      const QStringList p = parser.value(ofa_demo).split(':');
      bool ok_b = false, ok_s = false;
      const double budget = p.value(0).toDouble(&ok_b), seconds = p.value(1).toDouble(&ok_s);
      if (!ok_b || !ok_s || (p.size() != 2 && p.size() != 4 && p.size() != 5))
        return fail("--ofa-demo takes BUDGET_MS:SECONDS[:T0:T1[:THREADS]]");
      std::optional<sod2::rt::LoadSchedule> load;
      if (p.size() > 2) {
        auto parsed = sod2::rt::parse_load_schedule(
            p.mid(2).join(':').toStdString(),
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
        if (!parsed.ok()) return fail(QString::fromStdString(parsed.status().message()));
        load = *parsed;
      }
      if (auto err = window.variantsView()->runDemoNow(budget, seconds, load))
        return fail("--ofa-demo: " + *err);
    }
    if (parser.value(view) == "backend" && !models.isEmpty()) {
      // Placed before rendering (and before --select, which the table follows); no Vulkan
      // device is shown in the view, not a failure.
      if (auto err = window.backendView()->placeNow())
        std::fprintf(stderr, "sod2-studio: warning: --view backend: %s\n",
                     err->toLocal8Bit().constData());
    }
    if (parser.isSet(open_bodies)) {
      std::vector<const sod2::Node*> controls;
      for (int id : window.graphView()->findNodes(parser.value(open_bodies))) {
        const auto& n = window.displayGraph()->nodes[static_cast<size_t>(id)];
        if (n.has_subgraphs && n.kind == sod2::studio::DisplayNodeKind::kOp && n.node)
          controls.push_back(n.node);
      }
      // Main-graph ones inside a closed scope are revealed first.
      if (controls.empty() && window.document()) {
        const sod2::Graph& g = window.document()->graph();
        for (sod2::NodeId id : window.coreNodesMatching(parser.value(open_bodies))) {
          if (g.node(id).subgraphs().empty()) continue;
          window.revealCoreNode(id, true);
          controls.push_back(&g.node(id));
        }
      }
      if (controls.empty())
        return fail("--open: no If/Loop/Scan matches \"" + parser.value(open_bodies) + "\"");
      for (const sod2::Node* c : controls) window.toggleBodies(c, true);
    }
    if (parser.isSet(select)) {
      // A main-graph node by its own name or op, revealed if a closed scope or shape
      // computation holds it; else whatever is drawn (an input, a body's node).
      const QList<sod2::NodeId> core = window.coreNodesMatching(parser.value(select));
      const QList<int> hits = window.graphView()->findNodes(parser.value(select));
      if (!core.isEmpty())
        window.revealCoreNode(core.front(), true);
      else if (!hits.isEmpty())
        window.graphView()->selectNode(hits.front(), true);
      else
        return fail("--select: no node matches \"" + parser.value(select) + "\"");
    }
    if (parser.isSet(compare)) {
      const QString c = parser.value(compare);
      if (c == "nofusion") {
        window.planCompare()->setMode(sod2::studio::PlanCompare::Mode::kWithoutFusion);
        window.planCompare()->finishPlanning();
      } else {
        auto parsed = sod2::parse_bindings(c.toStdString());
        if (!parsed.ok())
          return fail(QString("--compare: ") + QString::fromStdString(parsed.status().message()));
        const std::map<std::string, int64_t>& other = *parsed;
        auto values = window.initialValues();
        for (const auto& [k, val] : other) values[k] = val;
        QString error;
        if (!window.planCompare()->setOtherBinding(values, &error))
          return fail("--compare: " + error);
      }
    }
    const QString v = parser.value(view);
    using sod2::studio::StudioView;
    static const std::map<QString, StudioView> kViews = {
        {"window", StudioView::kWindow},       {"graph", StudioView::kGraph},
        {"inspector", StudioView::kInspector}, {"shapes", StudioView::kShapes},
        {"memory", StudioView::kMemory},       {"compare", StudioView::kCompare},
        {"sweep", StudioView::kSweep},         {"summary", StudioView::kSummary},
        {"devices", StudioView::kDevices},     {"profile", StudioView::kProfile},
        {"history", StudioView::kHistory},     {"variants", StudioView::kVariants},
        {"backend", StudioView::kBackend}};
    const auto found = kViews.find(v);
    if (found == kViews.end())
      return fail(
          "--view must be window, graph, inspector, shapes, memory, compare, sweep, summary, "
          "devices, "
          "profile, history, variants or backend");
    const StudioView which = found->second;
    if (parser.isSet(profile_on)) {
      window.devicePanel()->refreshNow();
      sod2::device::RunSettings settings;
      settings.runs = 10;
      settings.warmup = 2;
      if (auto err = window.profileNow(parser.value(profile_on), settings))
        return fail("--profile-on: " + *err);
    }
    if (parser.isSet(compare_runs)) {
      const QStringList ab = parser.value(compare_runs).split(',');
      bool ok_a = false, ok_b = false;
      const qlonglong a = ab.value(0).toLongLong(&ok_a), b = ab.value(1).toLongLong(&ok_b);
      if (ab.size() != 2 || !ok_a || !ok_b) return fail("--compare-runs takes RUN_A,RUN_B");
      window.historyView()->refresh();
      if (!window.historyView()->compare(a, b))
        return fail("--compare-runs: run " + ab.value(0) + " or " + ab.value(1) +
                    " cannot be compared (see the history)");
    }
    if (parser.isSet(colour_by)) {
      using C = sod2::studio::MainWindow::NodeColouring;
      const std::map<QString, C> kColourings = {{"class", C::kClass},
                                                {"time", C::kMeasuredTime},
                                                {"bytes", C::kOutputBytes},
                                                {"change", C::kRunChange},
                                                {"backend", C::kBackend}};
      const auto c = kColourings.find(parser.value(colour_by));
      if (c == kColourings.end())
        return fail("--colour-by must be class, time, bytes, change or backend");
      // A screenshot waits for the placement the colours come from.
      if (c->second == C::kBackend) {
        if (const auto error = window.backendView()->placeNow())
          return fail("--colour-by backend: " + *error);
      }
      if (!window.setNodeColouring(c->second)) return fail("--colour-by: " + window.statusText());
    }
    // Rendered at the requested size, whatever the view (the graph was a strip under the docks).
    const QImage image = window.grabView(which, shot_size);
    if (image.isNull() || !image.save(parser.value(shot)))
      return fail("cannot write " + parser.value(shot));
    std::printf("wrote %s (%dx%d, view %s)\n", parser.value(shot).toLocal8Bit().constData(),
                image.width(), image.height(), v.toLocal8Bit().constData());
    return 0;
  }

  window.show();
  if (!models.isEmpty()) {
    if (!bind_values.empty()) {
      // Bind once the model is open: on the calling thread, so the binding applies to it.
      if (auto err = window.openModelNow(models.front(), options)) return fail(*err);
      auto values = window.initialValues();
      for (const auto& [k, v] : bind_values) values[k] = v;
      QString error;
      if (!window.applyBinding(values, &error)) return fail("--bind: " + error);
    } else {
      window.openModel(models.front(), options);
    }
  }
  return app.exec();
}
