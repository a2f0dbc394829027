// How the studio opens a big model (issue: a 10,000-node model must open without freezing the
// window). Writes a synthetic transformer stack as ONNX, opens it in the real MainWindow through
// the asynchronous path a user takes (File > Open), and measures on the GUI thread:
//   - the longest gap between ticks of a 5 ms timer (a stall: the window could not repaint),
//   - the time until the document is shown (docks filled) and until the graph has a picture,
//   - then opening the top name scope, one layer in its middle, and closing that layer again.
// A benchmark, not a test: `make bench` runs it at 10,000 and 50,000 nodes; it prints a table
// and writes OUT_DIR/studio_open_NODES.json.
//
//   studio_open_bench [NODES=10000] [OUT_DIR=build/bench]
#include <QApplication>
#include <QElapsedTimer>
#include <QEvent>
#include <QSettings>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/studio/graph/graph_view.h"
#include "app/studio/widgets/main_window.h"
#include "tests/bench/synthetic_models.h"

namespace {

struct Measurement {
  int64_t nodes = 0;
  double document_ms = -1;  // the docks show the model
  double picture_ms = -1;   // the graph view has its first items
  double complete_ms = -1;  // every item of the graph is in the scene
  double longest_stall_ms = 0;
  int stalls_over_100ms = 0;
  bool used_dot = false;
  std::vector<double> stalls;  // every gap above 50 ms, in order
};

// Times every event the GUI thread delivers, to name what a stall was spent on.
class TimedApplication : public QApplication {
 public:
  using QApplication::QApplication;
  struct Slow {
    double ms;
    std::string what;
  };
  std::vector<Slow> slow;

  bool notify(QObject* receiver, QEvent* event) override {
    QElapsedTimer t;
    t.start();
    const int type = event->type();
    const bool r = QApplication::notify(receiver, event);
    const double ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
    // Timer events nest the events they run: report the innermost (they come first).
    if (ms > 30 && receiver)
      slow.push_back({ms, std::string(receiver->metaObject()->className()) + " event " +
                              std::to_string(type)});
    return r;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const int64_t target_nodes = argc > 1 ? std::stoll(argv[1]) : 10000;
  const std::filesystem::path out_dir = argc > 2 ? argv[2] : "build/bench";
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
      qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  TimedApplication app(argc, argv);
  QApplication::setOrganizationName("SoD2-bench");  // keeps the user's recent files untouched
  // A first open, in the default layout: a layout saved by an earlier run would make other
  // docks the visible ones (and their work the GUI thread's).
  QSettings().clear();

  std::filesystem::create_directories(out_dir);
  const std::filesystem::path model_path =
      std::filesystem::temp_directory_path() /
      ("sod2_studio_open_" + std::to_string(target_nodes) + ".onnx");
  {
    const auto proto = sod2::bench::transformer_like(target_nodes);
    std::ofstream out(model_path, std::ios::binary);
    if (!proto.SerializeToOstream(&out)) {
      std::fprintf(stderr, "cannot write %s\n", model_path.c_str());
      return 1;
    }
  }

  sod2::studio::MainWindow window;
  window.resize(1400, 900);
  window.show();
  QApplication::processEvents();

  Measurement m;
  QElapsedTimer clock;
  QElapsedTimer since_tick;
  QTimer ticker;
  ticker.setInterval(5);
  double done_at = -1;
  QObject::connect(&ticker, &QTimer::timeout, [&] {
    const double gap = static_cast<double>(since_tick.nsecsElapsed()) / 1e6;
    since_tick.restart();
    if (gap > m.longest_stall_ms) m.longest_stall_ms = gap;
    if (gap > 100) ++m.stalls_over_100ms;
    if (gap > 50) m.stalls.push_back(gap);
    const double now = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    if (m.document_ms < 0 && window.timelineModel()) m.document_ms = now;
    if (m.picture_ms < 0 && window.graphView()->nodeCount() > 0) m.picture_ms = now;
    if (m.complete_ms < 0 && m.picture_ms >= 0 && !window.graphView()->isPopulating()) {
      m.complete_ms = now;
      done_at = now;
    }
    // Keep measuring a while after the picture: work queued behind it counts too.
    if ((done_at >= 0 && now - done_at > 1000) || now > 120000) app.quit();
  });

  sod2::studio::OpenOptions options;
  options.rdp.ranges["batch"] = {1, 16, 1};
  options.rdp.ranges["seq"] = {1, 512, 1};
  clock.start();
  since_tick.start();
  ticker.start();
  window.openModel(QString::fromStdString(model_path.string()), options);
  app.exec();
  ticker.stop();  // the rebinding below is timed on its own, not as stalls of the open

  if (!window.document()) {
    std::fprintf(stderr, "the model did not open within 120 s\n");
    return 1;
  }
  m.nodes = static_cast<int64_t>(window.document()->graph().num_nodes());
  // Moving a slider: every view re-evaluated at a new binding, on the GUI thread.
  double slowest_rebind_ms = 0;
  for (int64_t seq : {17, 128, 255, 511, 64}) {
    QElapsedTimer t;
    t.start();
    window.applyBinding({{"batch", 4}, {"seq", seq}});
    QApplication::processEvents();  // the repaint it causes counts too
    slowest_rebind_ms = std::max(slowest_rebind_ms, static_cast<double>(t.nsecsElapsed()) / 1e6);
  }
  const int shown_at_open = window.graphView()->nodeCount();
  // Opening and closing name scopes, laid out and put in the scene on the GUI thread (the
  // worst case: the window lays out on a worker): the encoder, then one layer in its middle.
  struct Toggle {
    std::string what;
    size_t shown = 0;
    double ms = -1;
  };
  std::vector<Toggle> toggles;
  if (const sod2::studio::GraphHierarchy* h = window.graphHierarchy(); h && h->scopes.size() > 1) {
    auto toggle = [&](int scope, const std::string& what) {
      QElapsedTimer t;
      t.start();
      window.toggleScope(scope, /*now=*/true);
      QApplication::processEvents();
      toggles.push_back({what, window.displayGraph() ? window.displayGraph()->nodes.size() : 0,
                         static_cast<double>(t.nsecsElapsed()) / 1e6});
    };
    const int top = h->scopes[0].children.front();
    const bool top_open = window.displayState().expanded_scopes.count(top) != 0;
    if (!top_open) toggle(top, "open " + h->scopes[static_cast<size_t>(top)].path);
    const auto& layers = h->scopes[static_cast<size_t>(top)].children;
    if (!layers.empty()) {
      const int layer = layers[layers.size() / 2];
      const std::string path = h->scopes[static_cast<size_t>(layer)].path;
      toggle(layer, "open " + path);
      toggle(layer, "close " + path);
    }
  }

  std::printf("studio open (%s platform, %lld-node synthetic transformer)\n",
              QApplication::platformName().toLocal8Bit().constData(),
              static_cast<long long>(m.nodes));
  std::printf(
      "| nodes | shown nodes | document shown | first graph picture | whole graph | "
      "longest GUI stall | stalls > 100 ms |\n|---:|---:|---:|---:|---:|---:|---:|\n");
  std::printf("| %lld | %d | %.0f ms | %.0f ms | %.0f ms | %.1f ms | %d |\n",
              static_cast<long long>(m.nodes), shown_at_open, m.document_ms, m.picture_ms,
              m.complete_ms, m.longest_stall_ms, m.stalls_over_100ms);
  std::printf("binding change (5 bindings, views re-evaluated and repainted): slowest %.1f ms\n",
              slowest_rebind_ms);
  if (!m.stalls.empty()) {
    std::printf("gaps above 50 ms:");
    for (double s : m.stalls) std::printf(" %.0f", s);
    std::printf("\n");
  }
  for (const Toggle& t : toggles)
    std::printf("%s: %.1f ms (then %zu display nodes)\n", t.what.c_str(), t.ms, t.shown);
  for (const auto& e : app.slow) std::printf("slow event: %.0f ms in %s\n", e.ms, e.what.c_str());
  std::ofstream json(out_dir / ("studio_open_" + std::to_string(target_nodes) + ".json"));
  json << "{\"nodes\": " << m.nodes << ", \"shown_nodes\": " << shown_at_open
       << ", \"document_ms\": " << m.document_ms << ", \"picture_ms\": " << m.picture_ms
       << ", \"complete_ms\": " << m.complete_ms << ", \"longest_stall_ms\": " << m.longest_stall_ms
       << ", \"stalls_over_100ms\": " << m.stalls_over_100ms
       << ", \"slowest_rebind_ms\": " << slowest_rebind_ms << ", \"toggles\": [";
  for (size_t i = 0; i < toggles.size(); ++i)
    json << (i ? ", " : "") << "{\"what\": \"" << toggles[i].what << "\", \"ms\": " << toggles[i].ms
         << ", \"shown\": " << toggles[i].shown << "}";
  json << "]}\n";
  std::filesystem::remove(model_path);
  return m.complete_ms >= 0 ? 0 : 1;
}
