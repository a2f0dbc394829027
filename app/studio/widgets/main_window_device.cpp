// The main window's device side (DESIGN §8): the Devices, Profile, History, Variants and Backend
// docks and Export & profile.
#include "app/studio/widgets/main_window.h"

#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QPointer>
#include <QProgressDialog>
#include <QSettings>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>
#include <map>
#include <set>

#include "app/profiling/input_files.h"
#include "app/profiling/int_input_ranges.h"
#include "app/studio/backend/backend_overlay.h"
#include "app/studio/backend/backend_view.h"
#include "app/studio/device/device_panel.h"
#include "app/studio/device/history_view.h"
#include "app/studio/device/profile_view.h"
#include "app/studio/device/run_overlays.h"
#include "app/studio/graph/graph_style.h"
#include "app/studio/graph/graph_view.h"
#include "app/studio/ofa/variants_view.h"
#include "app/studio/widgets/bindings_bar.h"
#include "app/studio/widgets/progress_dialog.h"
#include "app/studio/widgets/sweep_view.h"
#include "core/ops/op_registry.h"
#include "runtime/package/package_loader.h"

namespace sod2::studio {

void MainWindow::buildDeviceDocks() {
  devices_ = new DevicePanel(this);
  devices_dock_ = addPage(StudioView::kDevices, devices_);
  connect(devices_, &DevicePanel::exportAndProfile, this, &MainWindow::exportAndProfile);

  profile_view_ = new ProfileView(this);
  profile_dock_ = addPage(StudioView::kProfile, profile_view_, profile_view_);
  // A group picked in the profile selects its node in the graph (when the model is open).
  connect(profile_view_, &ProfileView::groupActivated, this, [this](const QString& name) {
    if (!doc_) return;
    const std::string n = name.toStdString();
    const Graph& g = doc_->graph();
    for (size_t i = 0; i < g.num_nodes(); ++i) {
      if (g.node(static_cast<NodeId>(i)).name != n) continue;
      selectCoreNode(static_cast<NodeId>(i));
      return;
    }
  });

  history_view_ = new HistoryView(this);
  history_dock_ = addPage(StudioView::kHistory, history_view_);
  connect(history_view_, &HistoryView::showChangeOnGraph, this,
          [this] { setNodeColouring(NodeColouring::kRunChange); });

  // Dynamic-OFA: a family of its own (not the open model), measured on the selected device.
  variants_view_ = new VariantsView(this);
  variants_view_->setDeviceSource([this] { return devices_->selectedDevice(); });
  variants_dock_ = addPage(StudioView::kVariants, variants_view_);
  // Where each node runs on the Vulkan backend: placed on demand (it compiles shaders).
  backend_view_ = new BackendView(this);
  backend_dock_ = addPage(StudioView::kBackend, backend_view_, backend_view_);
  connect(backend_view_, &BackendView::nodesActivated, this, &MainWindow::selectNodesNamed);
  connect(backend_view_, &BackendView::placementChanged, this, [this] {
    if (colouring_ != NodeColouring::kBackend) return;
    if (backend_view_->model()->placement().rows.empty()) {
      setNodeColouring(NodeColouring::kClass);
      status_->setText(backend_view_->headerText());
      return;
    }
    setNodeColouring(NodeColouring::kBackend);
  });
  // Device listing and the store are read when the studio is up, not while it starts.
  QTimer::singleShot(0, this, [this] {
    devices_->refresh();
    if (history_view_->database().empty()) history_view_->setDatabase(profile_db_);
  });
}

QString MainWindow::statusText() const { return status_->text(); }

bool MainWindow::setNodeColouring(NodeColouring colouring) {
  std::shared_ptr<const NodeOverlay> overlay;
  QString why;
  if (colouring != NodeColouring::kClass && !doc_) {
    why = tr("Open an ONNX model first: runs are drawn on its nodes");
  } else if (colouring == NodeColouring::kMeasuredTime ||
             colouring == NodeColouring::kOutputBytes) {
    if (!last_profile_) {
      why = tr("Export & profile the model first (Ctrl+P): its measured groups colour the graph");
    } else {
      overlay = std::make_shared<const NodeOverlay>(
          colouring == NodeColouring::kMeasuredTime
              ? measured_time_overlay(*last_profile_, doc_->graph())
              : output_bytes_overlay(*last_profile_, doc_->graph()));
    }
  } else if (colouring == NodeColouring::kBackend) {
    const backend::BackendPlacement& placed = backend_view_->model()->placement();
    if (placed.rows.empty()) {
      // Placing compiles shaders: in the background, the colours follow (placementChanged).
      if (!backend_view_->placing()) backend_view_->place();
      colouring_ = colouring;
      graph_view_->setOverlay(nullptr);
      status_->setText(
          tr("Placing the model on Vulkan; the nodes take their colours when it is "
             "done (the Backend dock shows the rows)"));
      for (auto& [c, action] : colouring_actions_) action->setChecked(c == colouring_);
      return true;
    }
    overlay = std::make_shared<const NodeOverlay>(backend_overlay(placed, doc_->graph()));
  } else if (colouring == NodeColouring::kRunChange) {
    const auto& pair = history_view_->compared();
    if (!pair) {
      why = tr("Compare two runs in the History dock first (select two, Compare selected)");
    } else {
      overlay = std::make_shared<const NodeOverlay>(
          run_delta_overlay(pair->first, pair->second, doc_->graph()));
    }
  }
  const bool ok = why.isEmpty();
  if (ok) {
    colouring_ = colouring;
    graph_view_->setOverlay(overlay);
    if (overlay) {
      size_t coloured = 0;
      for (int g : overlay->group_of_node) coloured += g >= 0;
      status_->setText(tr("Nodes coloured by %1: %2 of %3 nodes ran in the run's groups")
                           .arg(QString::fromStdString(overlay->title))
                           .arg(coloured)
                           .arg(overlay->group_of_node.size()));
    }
  } else {
    status_->setText(why);
  }
  // The menu shows what is drawn, whichever way it was asked for.
  for (auto& [c, action] : colouring_actions_) action->setChecked(c == colouring_);
  return ok;
}

void MainWindow::selectNodesNamed(const QStringList& names) {
  if (doc_) {
    std::map<std::string, NodeId> by_name;
    const Graph& g = doc_->graph();
    for (size_t i = 0; i < g.num_nodes(); ++i)
      by_name.emplace(g.node(static_cast<NodeId>(i)).name, static_cast<NodeId>(i));
    for (const QString& n : names) {
      auto it = by_name.find(n.toStdString());
      if (it == by_name.end()) continue;
      selectCoreNode(it->second);
      return;
    }
    return;
  }
  // A package's graph shows its compiled nodes: the one of that name, else the first match.
  if (!display_) return;
  for (const QString& n : names) {
    const QList<int> hits = graph_view_->findNodes(n);
    if (hits.isEmpty()) continue;
    int pick = hits.front();
    for (int id : hits) {
      if (display_->nodes[static_cast<size_t>(id)].label == n.toStdString()) {
        pick = id;
        break;
      }
    }
    graph_view_->selectNode(pick, true);
    return;
  }
}

void MainWindow::setProfileDatabase(const std::string& path) {
  profile_db_ = path;
  history_view_->setDatabase(path);
  variants_view_->setDatabase(path);
  sweep_->setDatabase(path);
}

namespace {
// QSettings keys of what Export & profile feeds the inputs, typed per model: maps from the
// model's absolute path.
constexpr const char* kIntInputsKey = "profile/int_inputs";
constexpr const char* kInputFilesKey = "profile/input_files";
}  // namespace

Expected<profiling::ProfileRequest> MainWindow::profileRequest(
    const QString& device, const device::RunSettings& settings) {
  if (!open_) return invalid_argument("open a model or a package first");
  profiling::ProfileRequest r;
  open_->describe_profile(r, devices_ ? devices_->weightStorage() : package::WeightStorage::kAsIs);
  r.device = device.toStdString();
  r.bind = bindings_->values();
  r.settings = settings;
  r.db_path = profile_db_.empty() ? store::ProfileStore::default_path() : profile_db_;
  if (devices_) {
    // Remembered per model; the ranges' bounds are valued at each run's sizes (a sweep's too).
    // The files are read here for their dims, which move the sliders, and read again when the
    // profile starts (ProfileConnection::open, the CLI's path too).
    const QString ranges_text = devices_->intInputRanges();
    const QString files_text = devices_->inputFiles();
    rememberPerModel(kIntInputsKey, ranges_text);
    rememberPerModel(kInputFilesKey, files_text);
    SOD2_ASSIGN_OR_RETURN(r.int_ranges,
                          profiling::parse_int_input_ranges(ranges_text.toStdString()));
    SOD2_ASSIGN_OR_RETURN(r.input_files, profiling::parse_input_files(files_text.toStdString()));
    const rt::ProgramDesc& program = open_->program();
    if (!r.input_files.empty() && !program.inputs.empty()) {
      SOD2_ASSIGN_OR_RETURN(const profiling::InputFileTensors files,
                            profiling::load_input_files(program, r.input_files));
      SOD2_ASSIGN_OR_RETURN(const auto from_files,
                            profiling::bind_with_input_files(program, files, {}));
      std::map<std::string, int64_t> moved = r.bind;
      for (const auto& [name, v] : from_files) moved[name] = v;
      if (moved != r.bind) {
        QString why;
        if (!applyBinding(moved, &why))
          return invalid_argument("the input files' sizes: " + why.toStdString());
        r.bind = bindings_->values();
      }
    }
  }
  return r;
}

QString MainWindow::openPath() const {
  return open_ ? QFileInfo(QString::fromStdString(open_->path())).absoluteFilePath() : QString();
}

void MainWindow::rememberPerModel(const char* key, const QString& text) const {
  const QString path = openPath();
  if (path.isEmpty()) return;
  QSettings settings;
  QVariantMap saved = settings.value(key).toMap();
  if (text.trimmed().isEmpty())
    saved.remove(path);
  else
    saved[path] = text;
  settings.setValue(key, saved);
}

void MainWindow::restoreProfileInputs() {
  if (!devices_) return;
  const QString path = openPath();
  auto saved = [&](const char* key) {
    return path.isEmpty() ? QString() : QSettings().value(key).toMap().value(path).toString();
  };
  devices_->setIntInputRanges(saved(kIntInputsKey));
  devices_->setInputFiles(saved(kInputFilesKey));
  QStringList inputs;
  if (open_)
    for (const std::string& name : open_->input_names()) inputs << QString::fromStdString(name);
  devices_->setInputNames(inputs);
}

void MainWindow::adoptProfile(const Expected<profiling::ProfileResult>& result) {
  history_view_->refresh();  // a failed run is recorded too
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kCancelled) {
      status_->setText(tr("Profiling cancelled"));
      return;
    }
    showError(tr("Export & profile failed"), QString::fromStdString(result.status().message()));
    return;
  }
  auto shared = std::make_shared<const profiling::ProfileResult>(*result);
  if (doc_) {
    last_profile_ = shared;
    // A colouring by the last profile follows the new one.
    if (colouring_ == NodeColouring::kMeasuredTime || colouring_ == NodeColouring::kOutputBytes)
      setNodeColouring(colouring_);
  }
  // Bars take the colour of the anchor node's operator class, as in the graph.
  std::shared_ptr<const StudioDocument> doc = doc_;
  std::map<std::string, NodeId> by_name;
  if (doc) {
    for (size_t i = 0; i < doc->graph().num_nodes(); ++i)
      by_name[doc->graph().node(static_cast<NodeId>(i)).name] = static_cast<NodeId>(i);
  }
  profile_view_->setResult(shared, [doc, by_name](const profiling::GroupProfile& g) {
    auto it = by_name.find(g.name);
    if (!doc || it == by_name.end()) return QColor(0x8a, 0x94, 0xa6);
    return class_fill(op_class_of(doc->graph().node(it->second)));
  });
  profile_dock_->show();
  profile_dock_->raise();
  QString text = tr("Profiled on %1: %2 ms average over %3 runs")
                     .arg(QString::fromStdString(result->device.id))
                     .arg(result->stats.avg_ms, 0, 'f', 3)
                     .arg(result->stats.count);
  if (!result->report.windows.empty()) {
    text += tr(", then %1 s sustained in %2 windows%3")
                .arg(result->report.windows.back().end_s, 0, 'f', 1)
                .arg(result->report.windows.size())
                .arg(result->report.stopped_early ? tr(" (stopped early)") : QString());
  }
  status_->setText(text);
}

std::optional<QString> MainWindow::profileNow(const QString& device,
                                              const device::RunSettings& settings) {
  auto request = profileRequest(device, settings);
  if (!request.ok()) return QString::fromStdString(request.status().message());
  Expected<profiling::ProfileResult> result = profiling::profile(*request);
  adoptProfile(result);
  if (!result.ok()) return QString::fromStdString(result.status().message());
  return std::nullopt;
}

void MainWindow::exportAndProfile() {
  if (profile_watcher_.isRunning() || sweep_watcher_.isRunning()) {
    status_->setText(tr("A profile is still running"));
    return;
  }
  devices_dock_->show();
  auto request = profileRequest(devices_->selectedDevice(), devices_->settings());
  if (!request.ok()) {
    showError(tr("Export & profile"), QString::fromStdString(request.status().message()));
    return;
  }
  profile_cancel_ = std::make_shared<std::atomic<bool>>(false);
  auto cancel = profile_cancel_;
  profile_progress_ = start_progress_dialog(
      this, tr("Export & profile"),
      tr("Profiling on %1").arg(QString::fromStdString(request->device)), 0, cancel);
  profile_progress_->show();
  QPointer<QProgressDialog> dialog = profile_progress_;
  disconnect(&profile_watcher_, nullptr, this, nullptr);
  connect(&profile_watcher_, &QFutureWatcher<Expected<profiling::ProfileResult>>::finished, this,
          [this, dialog] {
            end_progress_dialog(dialog);
            adoptProfile(profile_watcher_.result());
          });
  profile_watcher_.setFuture(QtConcurrent::run([r = *request, cancel, dialog]() {
    profiling::ProfileProgress progress;
    progress.cancel = cancel.get();
    progress.report = [dialog](const std::string& stage, double f) {
      report_progress(dialog, f, stage);
    };
    // As for opening: a throw would surface from result() in the GUI thread's slot.
    try {
      return profiling::profile(r, progress);
    } catch (const std::exception& e) {
      return Expected<profiling::ProfileResult>(
          internal_error(std::string("Export & profile failed: ") + e.what()));
    }
  }));
}

Expected<profiling::SweepProfileRequest> MainWindow::sweepRequest(
    const QString& symbol, qint64 lo, qint64 hi, qint64 step, const QString& device,
    const device::RunSettings& settings) {
  SOD2_ASSIGN_OR_RETURN(profiling::ProfileRequest profile, profileRequest(device, settings));
  profiling::SweepProfileRequest r;
  r.symbol = symbol.toStdString();
  profile.bind = sweep_->held();
  r.profile = std::move(profile);
  r.lo = lo;
  r.hi = hi;
  r.step = step;
  return r;
}

void MainWindow::adoptSweep(const Expected<profiling::ProfileSweep>& result) {
  history_view_->refresh();  // its points are runs, failed ones too
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kCancelled) {
      status_->setText(tr("Measuring the sweep cancelled"));
      return;
    }
    showError(tr("Measure on device"), QString::fromStdString(result.status().message()));
    return;
  }
  sweep_->setMeasured(std::make_shared<const profiling::ProfileSweep>(*result));
  sweep_dock_->show();
  sweep_dock_->raise();
  status_->setText(tr("Measured %1 point(s) of %2 (%3 failed, arena equal to the plan's at %4)")
                       .arg(result->points.size())
                       .arg(QString::fromStdString(result->symbol))
                       .arg(result->failed)
                       .arg(result->points.size() - result->failed - result->arena_mismatches));
}

std::optional<QString> MainWindow::measureSweepNow(const QString& symbol, qint64 lo, qint64 hi,
                                                   qint64 step, const QString& device,
                                                   const device::RunSettings& settings) {
  auto request = sweepRequest(symbol, lo, hi, step, device, settings);
  if (!request.ok()) return QString::fromStdString(request.status().message());
  Expected<profiling::ProfileSweep> result = profiling::profile_sweep(*request);
  adoptSweep(result);
  if (!result.ok()) return QString::fromStdString(result.status().message());
  return std::nullopt;
}

void MainWindow::measureSweep(const QString& symbol, qint64 lo, qint64 hi, qint64 step) {
  if (profile_watcher_.isRunning() || sweep_watcher_.isRunning()) {
    status_->setText(tr("A profile is still running"));
    return;
  }
  devices_dock_->show();
  auto request =
      sweepRequest(symbol, lo, hi, step, devices_->selectedDevice(), devices_->settings());
  if (!request.ok()) {
    showError(tr("Measure on device"), QString::fromStdString(request.status().message()));
    return;
  }
  profile_cancel_ = std::make_shared<std::atomic<bool>>(false);
  auto cancel = profile_cancel_;
  profile_progress_ = start_progress_dialog(
      this, tr("Measure on device"),
      tr("Measuring %1 on %2").arg(symbol, QString::fromStdString(request->profile.device)), 0,
      cancel);
  profile_progress_->show();
  QPointer<QProgressDialog> dialog = profile_progress_;
  disconnect(&sweep_watcher_, nullptr, this, nullptr);
  connect(&sweep_watcher_, &QFutureWatcher<Expected<profiling::ProfileSweep>>::finished, this,
          [this, dialog] {
            end_progress_dialog(dialog);
            adoptSweep(sweep_watcher_.result());
          });
  sweep_watcher_.setFuture(QtConcurrent::run([r = *request, cancel, dialog]() {
    profiling::ProfileProgress progress;
    progress.cancel = cancel.get();
    progress.report = [dialog](const std::string& stage, double f) {
      report_progress(dialog, f, stage);
    };
    try {
      return profiling::profile_sweep(r, progress);
    } catch (const std::exception& e) {
      return Expected<profiling::ProfileSweep>(
          internal_error(std::string("Measuring the sweep failed: ") + e.what()));
    }
  }));
}

}  // namespace sod2::studio
