#include "app/studio/widgets/main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPointer>
#include <QProgressDialog>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "app/studio/backend/backend_view.h"
#include "app/studio/device/device_panel.h"
#include "app/studio/device/history_view.h"
#include "app/studio/device/profile_view.h"
#include "app/studio/graph/graph_style.h"
#include "app/studio/graph/graph_view.h"
#include "app/studio/graph/incremental_layout.h"
#include "app/studio/ofa/variants_view.h"
#include "app/studio/plan/timeline_model.h"
#include "app/studio/plan/timeline_view.h"
#include "app/studio/widgets/bindings_bar.h"
#include "app/studio/widgets/find_bar.h"
#include "app/studio/widgets/inspector_page.h"
#include "app/studio/widgets/plan_compare.h"
#include "app/studio/widgets/progress_dialog.h"
#include "app/studio/widgets/shapes_page.h"
#include "app/studio/widgets/summary_page.h"
#include "app/studio/widgets/sweep_view.h"
#include "app/studio/widgets/theme.h"
#include "core/ops/op_registry.h"
#include "core/store/profile_store.h"
#include "runtime/package/package_loader.h"
#include "runtime/program/binding_layout.h"

namespace sod2::studio {
namespace {

constexpr int kMaxRecent = 8;

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("SoD2 Studio"));
  setAcceptDrops(true);
  graph_view_ = new GraphView(this);
  // The find bar sits above the graph, hidden until Ctrl+F (buildMenus).
  auto* graph_area = new QWidget(this);
  find_bar_ = new FindBar(graph_view_, graph_area);
  find_bar_->hide();
  auto* graph_column = new QVBoxLayout(graph_area);
  graph_column->setContentsMargins(0, 0, 0, 0);
  graph_column->setSpacing(0);
  graph_column->addWidget(find_bar_);
  graph_column->addWidget(graph_view_, 1);
  setCentralWidget(graph_area);
  bindings_ = new BindingsBar(this);
  addToolBar(Qt::TopToolBarArea, bindings_);
  status_ = new QLabel(this);
  statusBar()->addWidget(status_, 1);
  buildDocks();
  buildDeviceDocks();
  buildMenus();
  connect(bindings_, &BindingsBar::bindingChanged, this,
          [this] { applyBinding(bindings_->values()); });
  connect(graph_view_, &GraphView::nodeSelected, this, &MainWindow::showDisplayNode);
  connect(graph_view_, &GraphView::groupActivated, this, [this](int group) {
    NodeId anchor = kNoNode;
    if (doc_ && group >= 0 && static_cast<size_t>(group) < doc_->fusion().groups.size() &&
        !doc_->fusion().groups[static_cast<size_t>(group)].nodes.empty())
      anchor = doc_->fusion().groups[static_cast<size_t>(group)].nodes.front();
    changeDisplay(
        [group](DisplayState& s) {
          if (!s.expanded_groups.erase(group)) s.expanded_groups.insert(group);
        },
        anchor, false);
  });
  connect(graph_view_, &GraphView::bodyActivated, this, [this](int id) {
    if (display_ && id >= 0 && static_cast<size_t>(id) < display_->nodes.size())
      toggleBodies(display_->nodes[static_cast<size_t>(id)].node);
  });
  connect(graph_view_, &GraphView::scopeActivated, this, [this](int scope) { toggleScope(scope); });
  // Views tabbed behind others do their work when their tab is raised, after the layout has
  // given them their place on screen.
  connect(compare_dock_, &QDockWidget::visibilityChanged, this, [this](bool visible) {
    if (visible) QTimer::singleShot(0, compare_, &PlanCompare::refreshIfStale);
  });
  connect(sweep_dock_, &QDockWidget::visibilityChanged, this, [this](bool visible) {
    if (visible) QTimer::singleShot(0, sweep_, &SweepView::refreshIfStale);
  });
  connect(graph_view_, &GraphView::showInShapesRequested, this, [this] {
    shapes_dock_->show();
    shapes_dock_->raise();
  });
  connect(graph_view_, &GraphView::showInTimelineRequested, this, [this] {
    memory_dock_->show();
    memory_dock_->raise();
  });
  connect(graph_view_, &GraphView::shapesActivated, this,
          [this](int cluster) { toggleShapes(cluster); });
  connect(timeline_view_, &TimelineView::tensorClicked, this, &MainWindow::showTensor);
  connect(&open_watcher_, &QFutureWatcher<OpenResult>::finished, this, [this] {
    end_progress_dialog(progress_);
    const OpenResult r = open_watcher_.result();
    // Cancelled during the last stage (preparing the views), which does not look at the flag:
    // the user said no, so the result is dropped all the same.
    if (r.cancelled || (open_cancel_ && *open_cancel_)) {
      status_->setText(tr("Opening cancelled"));
      emit openFinished(false, tr("Opening cancelled"));
    } else if (!r.doc) {
      showError(tr("Cannot open the model"), r.error);
      emit openFinished(false, r.error);
    } else {
      adoptOpened(r.doc, r.views);
      startLayout();
      emit openFinished(true, QString());
    }
  });
  connect(&layout_watcher_, &QFutureWatcher<LayoutResult>::finished, this,
          [this] { adoptLayout(layout_watcher_.result()); });
  restoreLayout();
  refreshRecentMenu();
}

MainWindow::~MainWindow() {
  if (profile_cancel_) *profile_cancel_ = true;
  profile_watcher_.waitForFinished();
  sweep_watcher_.waitForFinished();
  if (open_cancel_) *open_cancel_ = true;
  if (layout_cancel_) *layout_cancel_ = true;
  open_watcher_.waitForFinished();
  layout_watcher_.waitForFinished();
}

void MainWindow::buildDocks() {
  inspector_ = new InspectorPage(this);
  inspector_dock_ = addPage(StudioView::kInspector, inspector_, inspector_);

  shapes_page_ = new ShapesPage(this);
  connect(shapes_page_, &ShapesPage::producerChosen, this, [this](NodeId node) {
    if (doc_) selectCoreNode(node);
  });
  connect(shapes_page_, &ShapesPage::copied, this,
          [this](int rows) { status_->setText(tr("Copied %1 rows as CSV").arg(rows)); });
  shapes_dock_ = addPage(StudioView::kShapes, shapes_page_, shapes_page_);

  timeline_view_ = new TimelineView(this);
  memory_dock_ = addPage(StudioView::kMemory, timeline_view_, timeline_view_);

  compare_ = new PlanCompare(this);
  compare_dock_ = addPage(StudioView::kCompare, compare_, compare_);

  sweep_ = new SweepView(this);
  sweep_dock_ = addPage(StudioView::kSweep, sweep_, sweep_);
  // A point clicked in the sweep becomes the binding.
  connect(sweep_, &SweepView::valueChosen, this, [this](const QString& symbol, qint64 value) {
    bindings_->setValue(symbol.toStdString(), value);
  });
  connect(sweep_, &SweepView::measureRequested, this, &MainWindow::measureSweep);

  summary_ = new SummaryPage(this);
  summary_dock_ = addPage(StudioView::kSummary, summary_, summary_);
  inspector_dock_->raise();
}

QDockWidget* MainWindow::addPage(StudioView view, QWidget* widget, StudioPage* page) {
  const DockPage* row = dock_page(view);
  auto* dock = new QDockWidget(tr(row->title), this);
  dock->setObjectName(row->name);
  dock->setWidget(widget);
  addDockWidget(row->area, dock);
  if (const auto with = docks_.find(row->tab_with); with != docks_.end())
    tabifyDockWidget(with->second, dock);
  docks_[view] = dock;
  page_widgets_[view] = widget;
  if (page) pages_.push_back(page);
  return dock;
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open..."), this, [this] {
    QSettings settings;
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a model"), settings.value("files/last_dir").toString(),
        tr("ONNX models and sod2 packages (*.onnx *.sod2);;All files (*)"));
    if (path.isEmpty()) return;
    settings.setValue("files/last_dir", QFileInfo(path).absolutePath());
    openModel(path, open_options_);
  });
  open->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  file->addSeparator();
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));

  QMenu* view = menuBar()->addMenu(tr("&View"));
  // Find: the non-modal bar over the graph; F3 steps through its matches from anywhere.
  QAction* find = view->addAction(tr("&Find..."), find_bar_, &FindBar::activate);
  find->setShortcut(QKeySequence::Find);
  QAction* find_next = view->addAction(tr("Find &next"), find_bar_, &FindBar::findNext);
  find_next->setShortcut(QKeySequence(Qt::Key_F3));
  QAction* find_previous = view->addAction(tr("Find pre&vious"), find_bar_, &FindBar::findPrevious);
  find_previous->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F3));
  QAction* fit = view->addAction(tr("&Fit graph"), graph_view_, &GraphView::fitAll);
  fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  QAction* minimap = view->addAction(tr("&Minimap"));
  minimap->setCheckable(true);
  minimap->setChecked(true);
  connect(minimap, &QAction::toggled, graph_view_, &GraphView::setMinimapEnabled);
  QAction* labels = view->addAction(tr("Edge &labels (shapes)"));
  labels->setCheckable(true);
  labels->setChecked(true);
  connect(labels, &QAction::toggled, graph_view_, &GraphView::setEdgeLabelsVisible);
  QMenu* colour_menu = view->addMenu(tr("&Colour nodes by"));
  auto* colourings = new QActionGroup(this);
  for (const auto& [c, label] :
       {std::pair{NodeColouring::kClass, tr("&Class (SoD\u00b2)")},
        std::pair{NodeColouring::kMeasuredTime, tr("&Measured time (last profile)")},
        std::pair{NodeColouring::kOutputBytes, tr("&Output bytes (last profile)")},
        std::pair{NodeColouring::kRunChange, tr("Change between compared &runs (History)")},
        std::pair{NodeColouring::kBackend, tr("&Backend (where each node runs on Vulkan)")}}) {
    QAction* a = colour_menu->addAction(label);
    a->setCheckable(true);
    a->setChecked(c == colouring_);
    colourings->addAction(a);
    colouring_actions_[c] = a;
    connect(a, &QAction::triggered, this, [this, colouring = c] { setNodeColouring(colouring); });
  }
  QMenu* theme_menu = view->addMenu(tr("&Theme"));
  auto* themes = new QActionGroup(this);
  for (const auto& [theme, label] :
       {std::pair{Theme::kSystem, tr("&System")}, std::pair{Theme::kLight, tr("&Light")},
        std::pair{Theme::kDark, tr("&Dark")}}) {
    QAction* a = theme_menu->addAction(label);
    a->setCheckable(true);
    a->setChecked(saved_theme() == theme);
    themes->addAction(a);
    // Copied by name: clang 14 cannot capture a structured binding.
    connect(a, &QAction::triggered, this, [t = theme] {
      apply_theme(t);
      save_theme(t);
    });
  }
  view->addSeparator();
  for (const DockPage& page : dock_pages())
    if (QDockWidget* d = dockOf(page.view)) view->addAction(d->toggleViewAction());
  view->addAction(bindings_->toggleViewAction());

  QMenu* device = menuBar()->addMenu(tr("&Device"));
  QAction* profile =
      device->addAction(tr("&Export && profile"), this, &MainWindow::exportAndProfile);
  profile->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
  device->addAction(tr("&Refresh devices"), devices_, &DevicePanel::refresh);
  device->addAction(tr("&History"), this, [this] {
    history_view_->refresh();
    history_dock_->show();
    history_dock_->raise();
  });
  device->addAction(tr("Dynamic-OFA &variants"), this, [this] {
    variants_dock_->show();
    variants_dock_->raise();
  });
  device->addAction(tr("&Backend placement (Vulkan)"), this, [this] {
    backend_dock_->show();
    backend_dock_->raise();
    backend_view_->place();
  });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  addGraphActions(file, edit, help);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  help->addAction(tr("&About SoD2 Studio"), this, [this] {
    QMessageBox::about(this, tr("About SoD2 Studio"),
                       tr("SoD2 Studio shows how a dynamic model's shapes, fused groups and "
                          "memory plan follow from its input sizes (SoD\u00b2, ASPLOS'24)."));
  });
}

void MainWindow::openModel(const QString& path, const OpenOptions& options) {
  if (open_watcher_.isRunning()) {
    status_->setText(tr("Still opening the previous model"));
    return;
  }
  open_options_ = options;
  open_cancel_ = std::make_shared<std::atomic<bool>>(false);
  auto cancel = open_cancel_;
  progress_ = start_progress_dialog(this, tr("Opening"),
                                    tr("Opening %1").arg(QFileInfo(path).fileName()), 300, cancel);
  QPointer<QProgressDialog> dialog = progress_;
  const std::string file = path.toStdString();
  // pages_ is fixed once the window is built, and the window waits for this worker before
  // its pages go.
  const std::vector<StudioPage*> pages = pages_;
  open_watcher_.setFuture(QtConcurrent::run([file, options, cancel, dialog, pages]() {
    auto report = [dialog](double f, const std::string& stage) {
      report_progress(dialog, f, stage);
    };
    OpenResult r;
    // An exception escaping here would come back out of result() in the GUI thread's slot;
    // whatever fails becomes the error the window shows.
    try {
      auto doc = OpenDocument::open(file, options, report, cancel.get());
      if (doc.ok()) {
        r.doc = std::move(*doc);
        report(1.0, "preparing the views");
        r.views = prepareViews(*r.doc, pages, cancel.get());
      } else {
        r.cancelled = doc.status().code() == StatusCode::kCancelled;
        r.error = QString::fromStdString(doc.status().message());
      }
    } catch (const std::exception& e) {
      r = OpenResult{};
      r.error = tr("Opening %1 failed: %2").arg(QString::fromStdString(file), e.what());
    }
    return r;
  }));
  rememberRecent(path);
}

std::optional<QString> MainWindow::openModelNow(const QString& path, const OpenOptions& options) {
  open_options_ = options;
  auto doc = OpenDocument::open(path.toStdString(), options);
  if (!doc.ok()) return qs(doc.status().message());
  adoptOpened(*doc, prepareViews(**doc, pages_, nullptr));
  adoptLayout(computeLayout(open_, hierarchy_, display_state_, {}, nullptr));
  graph_view_->finishPopulating();
  return std::nullopt;
}

std::shared_ptr<MainWindow::Views> MainWindow::prepareViews(const OpenDocument& doc,
                                                            const std::vector<StudioPage*>& pages,
                                                            const std::atomic<bool>* cancel) {
  auto v = std::make_shared<Views>();
  v->bound = doc.bind(doc.initial_values(), nullptr);
  const BoundDocument* bound = v->bound.ok() ? v->bound->document.get() : nullptr;
  for (const StudioPage* page : pages) v->prepared.push_back(page->prepare(doc, bound, cancel));
  v->hierarchy = doc.build_hierarchy();
  return v;
}

void MainWindow::forgetOpened() {
  // The old drawing names nodes of the old model: it goes before the model does.
  if (layout_cancel_) *layout_cancel_ = true;
  graph_view_->setGraph(nullptr, nullptr);
  find_bar_->setGraph(nullptr);
  display_.reset();
  layout_.reset();
  doc_.reset();
  bound_.reset();
  open_.reset();
  display_state_ = DisplayState{};
  hierarchy_.reset();
  anchor_.reset();
  drawings_.clear();
  undo_states_.clear();
  redo_states_.clear();
  updateUndoActions();
  // Runs of the old model name its nodes, not the new one's.
  last_profile_.reset();
  if (colouring_ != NodeColouring::kClass) setNodeColouring(NodeColouring::kClass);
}

void MainWindow::adoptOpened(std::shared_ptr<OpenDocument> open, std::shared_ptr<Views> views) {
  forgetOpened();
  open_ = std::move(open);
  doc_ = open_->model();
  setWindowTitle(tr("%1 - SoD2 Studio").arg(qs(open_->title())));
  {
    const QSignalBlocker block(bindings_);
    bindings_->setSymbols(open_->symbols(), open_->initial_values(), execution_upper_of(open_));
  }
  hierarchy_ = views->hierarchy;
  if (hierarchy_) display_state_.expanded_scopes = hierarchy_->default_expanded;
  // The old timeline lives until every page has the new one.
  std::unique_ptr<TimelineModel> old_timeline = std::move(timeline_);
  if (views->bound.ok()) {
    bound_ = std::move(views->bound->document);
    timeline_ = std::move(views->bound->timeline);
  }
  showMemoryNote();
  for (size_t i = 0; i < pages_.size(); ++i) {
    pages_[i]->adoptPrepared(i < views->prepared.size() ? std::move(views->prepared[i]) : nullptr);
    pages_[i]->documentChanged(open_, bound_, timeline_.get());
  }
  if (!views->bound.ok())
    summary_->setPlainText(tr("The plan cannot be evaluated at the initial binding: %1")
                               .arg(qs(views->bound.status().message())));
  restoreProfileInputs();
  status_->setText(qs(open_->opened_status()));
}

void MainWindow::showMemoryNote() {
  const QString note = bound_ ? qs(bound_->memory_note()) : QString();
  memory_dock_->setWindowTitle(note.isEmpty() ? tr("Memory plan")
                                              : tr("Memory plan (%1)").arg(note));
}

const sym::Binding& MainWindow::currentBinding() const {
  static const sym::Binding kNone;
  return bound_ ? bound_->binding() : kNone;
}

MainWindow::LayoutResult MainWindow::computeLayout(std::shared_ptr<const OpenDocument> doc,
                                                   std::shared_ptr<const GraphHierarchy> hierarchy,
                                                   const DisplayState& state,
                                                   const LayoutResult& shown,
                                                   const std::atomic<bool>* cancel) {
  LayoutResult r;
  r.doc = doc;
  r.state = state;
  // On a worker: a throw would come out of result() in the GUI thread's slot; it is the
  // layout's error instead (the status bar shows it).
  try {
    r.graph = std::make_shared<DisplayGraph>(doc->display_graph(hierarchy.get(), state));
    if (shown.doc == doc && shown.graph && shown.layout) {
      auto changed = incremental_layout(*shown.graph, *shown.layout, *r.graph, {}, cancel);
      if (!changed.ok()) {
        r.error = qs(changed.status().message());
        return r;
      }
      if (*changed) {
        r.layout = std::make_shared<GraphLayout>(std::move(**changed));
        r.incremental = true;
        r.origin = shown.origin + QPointF(r.layout->moved.x, r.layout->moved.y);
        return r;
      }
    }
    auto layout = layout_graph(*r.graph, LayoutOptions{}, cancel);
    if (!layout.ok()) {
      r.error = qs(layout.status().message());
      return r;
    }
    r.layout = std::make_shared<GraphLayout>(std::move(*layout));
  } catch (const std::exception& e) {
    r.graph.reset();
    r.error = QString::fromUtf8(e.what());
  }
  return r;
}

MainWindow::LayoutResult MainWindow::shownDrawing() const {
  if (lay_out_afresh_ || drawings_.empty()) return {};
  return drawings_.back();
}

void MainWindow::startLayout() {
  if (!open_) return;
  if (layout_cancel_) *layout_cancel_ = true;
  layout_watcher_.waitForFinished();
  layout_cancel_ = std::make_shared<std::atomic<bool>>(false);
  auto cancel = layout_cancel_;
  std::shared_ptr<const OpenDocument> doc = open_;
  auto hierarchy = hierarchy_;
  auto state = display_state_;
  layout_watcher_.setFuture(
      QtConcurrent::run([doc, hierarchy, state, shown = shownDrawing(), cancel] {
        return computeLayout(doc, hierarchy, state, shown, cancel.get());
      }));
}

void MainWindow::adoptLayout(const LayoutResult& r) {
  // Laid out for a document no longer shown, or for what was open before an undo or a close
  // that showed a drawing kept from before.
  if (r.doc != open_ || !(r.state == display_state_)) return;
  if (!r.graph || !r.layout) {
    if (!r.error.isEmpty()) status_->setText(tr("Graph layout failed: %1").arg(r.error));
    return;
  }
  // A drawing made from the one shown: what was not moved for room stays where it is on
  // screen (the box opened grows down from its top); else the anchor stays put.
  std::optional<QPointF> same_place;
  if (r.incremental && display_ && !drawings_.empty())
    same_place = graph_view_->viewCentreInScene() - drawings_.back().origin + r.origin;
  display_ = r.graph;
  layout_ = r.layout;
  lay_out_afresh_ = false;
  // A drawing laid out afresh does not follow from the ones kept: going back to them would
  // jump.
  if (!r.incremental) drawings_.clear();
  std::erase_if(drawings_, [&r](const LayoutResult& d) { return d.state == r.state; });
  drawings_.push_back(r);
  if (drawings_.size() > kMaxDrawings) drawings_.erase(drawings_.begin());
  graph_view_->setGraph(display_.get(), layout_.get());
  // An open or a close laid out afresh keeps the node it was done on still; a new model starts
  // at its top.
  if (same_place)
    graph_view_->placeScenePointAt(*same_place, QPointF(graph_view_->viewport()->rect().center()));
  else if (!anchor_ || !graph_view_->placeAt(anchor_->node, anchor_->view_pos))
    graph_view_->showStart();
  anchor_.reset();
  if (pending_reveal_ != kNoNode) {
    selectCoreNode(pending_reveal_);
    pending_reveal_ = kNoNode;
  }
  find_bar_->setGraph(display_);
  status_->setText(
      r.incremental ? tr("%1 nodes shown; the rest kept in place (Ctrl+L lays the graph out again)")
                          .arg(display_->nodes.size())
                    : tr("%1 nodes shown (%2 layout)")
                          .arg(display_->nodes.size())
                          .arg(layout_->used_dot ? tr("Graphviz dot") : tr("layered")));
}

bool MainWindow::applyBinding(const std::map<std::string, int64_t>& values, QString* error) {
  if (!open_) return false;
  Expected<Bound> bound = open_->bind(values, timeline_.get());
  if (!bound.ok()) {
    status_->setText(qs(bound.status().message()));
    if (error) *error = qs(bound.status().message());
    return false;
  }
  bound_ = std::move(bound->document);
  {
    const QSignalBlocker block(bindings_);
    bindings_->setValues(values);
  }
  // Rebound in place, or a new timeline: the old one lives until every page has the new one.
  std::unique_ptr<TimelineModel> old_timeline;
  if (!bound->rebound) {
    old_timeline = std::move(timeline_);
    timeline_ = std::move(bound->timeline);
  }
  for (StudioPage* page : pages_) page->bindingChanged(bound_, timeline_.get());
  // The pages show the selection at the new binding (the timeline's tensor, a new timeline's
  // too); the inspector stays in its tab.
  const int selected = graph_view_->selectedNode();
  if (display_ && selected >= 0 && static_cast<size_t>(selected) < display_->nodes.size()) {
    const PageSelection selection = pageSelection(display_->nodes[static_cast<size_t>(selected)]);
    for (StudioPage* page : pages_) page->selectionChanged(selection);
  }
  showMemoryNote();
  status_->setText(qs(bound_->status()));
  return true;
}

std::map<std::string, int64_t> MainWindow::initialValues() const {
  return open_ ? open_->initial_values() : std::map<std::string, int64_t>{};
}

QString MainWindow::inspectorText() const { return inspector_->toPlainText(); }

ValueId MainWindow::selectedShapesValue() const { return shapes_page_->selectedValue(); }

void MainWindow::rememberRecent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value("files/recent").toStringList();
  const QString abs = QFileInfo(path).absoluteFilePath();
  recent.removeAll(abs);
  recent.prepend(abs);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue("files/recent", recent);
  refreshRecentMenu();
}

void MainWindow::refreshRecentMenu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value("files/recent").toStringList();
  for (const QString& path : recent)
    recent_menu_->addAction(path, this, [this, path] { openModel(path, open_options_); });
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::showError(const QString& title, const QString& text) {
  status_->setText(text);
  // Window-modal but not blocking: the event loop (and a test driving it) keeps running.
  auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  const auto urls = e->mimeData()->urls();
  if (!urls.isEmpty() && urls.front().isLocalFile())
    openModel(urls.front().toLocalFile(), open_options_);
}

void MainWindow::closeEvent(QCloseEvent* e) {
  saveLayout();
  QMainWindow::closeEvent(e);
}

}  // namespace sod2::studio
