// The studio's main window (DESIGN §8): the graph in the centre; inspector, shapes, memory-plan
// timeline, plan comparison and summary docks; the device side's docks (devices, profile,
// history, variants, backend placement); the bindings bar. It shows an ONNX model or a compiled
// package through one OpenDocument, bound at the sliders' values. Opening and graph layout run on
// worker threads with progress and cancel; a new binding only re-evaluates the plan and the dims.
#pragma once

#include <QFutureWatcher>
#include <QImage>
#include <QMainWindow>
#include <QPointF>
#include <QPointer>
#include <QStringList>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "app/profiling/profile_job.h"
#include "app/profiling/profile_sweep.h"
#include "app/studio/document/open_document.h"
#include "app/studio/document/studio_page.h"
#include "app/studio/graph/display_graph.h"
#include "app/studio/graph/graph_layout.h"
#include "app/studio/widgets/dock_pages.h"

class QLabel;
class QLineEdit;
class QProgressDialog;
class QSortFilterProxyModel;

namespace sod2::studio {

class BackendView;
class BindingsBar;
class DevicePanel;
class FindBar;
class GraphView;
class HistoryView;
class InspectorPage;
class ProfileView;
class PlanCompare;
class SummaryPage;
class SweepView;
class ShapesPage;
class TimelineModel;
class TimelineView;
class VariantsView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens in the background (progress dialog, cancel); errors are shown, never thrown.
  void openModel(const QString& path, const OpenOptions& options = {});
  // Opens and lays out on the calling thread: for --screenshot and tests. Returns the error text.
  std::optional<QString> openModelNow(const QString& path, const OpenOptions& options = {});
  bool applyBinding(const std::map<std::string, int64_t>& values, QString* error = nullptr);

  // For --screenshot and tests.
  QWidget* viewWidget(StudioView view) const;
  // The view rendered at exactly `size` (--screenshot): the graph with every dock out of its
  // way, a docked view floating with its content at that size. Shows the window.
  QImage grabView(StudioView view, QSize size);
  void showView(StudioView view);
  // The dock holding a view; nullptr for the graph (the central widget) and the whole window.
  QDockWidget* dockOf(StudioView view) const;
  // What is open, model or package; null when nothing is.
  const OpenDocument* opened() const { return open_.get(); }
  // The open ONNX model: null when a package (or nothing) is open.
  const StudioDocument* document() const { return doc_.get(); }
  // The open .sod2 package (File > Open, the command line): null when a model is open.
  const PackageDocument* package() const { return open_ ? open_->package() : nullptr; }
  // The symbols' starting values of what is open (model or package); empty when nothing is.
  std::map<std::string, int64_t> initialValues() const;
  GraphView* graphView() const { return graph_view_; }
  FindBar* findBar() const { return find_bar_; }  // View > Find (Ctrl+F), over the graph
  TimelineView* timelineView() const { return timeline_view_; }
  PlanCompare* planCompare() const { return compare_; }
  SweepView* sweepView() const { return sweep_; }
  const TimelineModel* timelineModel() const { return timeline_.get(); }
  QString inspectorText() const;
  // The value id of the shapes table's selected row; kNoValue when none is selected.
  ValueId selectedShapesValue() const;
  void selectCoreNode(NodeId node);
  // The model's symbols at the current binding; empty for a package or nothing open.
  const sym::Binding& currentBinding() const;
  // Opens or closes the bodies of an If/Loop/Scan (any depth) and lays the graph out again; with
  // `now`, on the calling thread (tests, screenshots).
  void toggleBodies(const Node* control, bool now = false);
  // Opens or closes a name scope (GraphHierarchy id) or a shape computation the same way.
  void toggleScope(int scope, bool now = false);
  void toggleShapes(int cluster, bool now = false);
  // Opens every closed scope and shape computation holding main-graph node `node`, then
  // selects and centres it (laid out on the calling thread with `now`).
  void revealCoreNode(NodeId node, bool now = false);
  const GraphHierarchy* graphHierarchy() const { return hierarchy_.get(); }
  // Undo and redo opening and closing boxes, bodies and scopes (Edit menu, Ctrl+Z).
  void undoView(bool now = false);
  void redoView(bool now = false);
  // Lays the whole graph out afresh (Edit menu), closing the gaps that opening and closing
  // left; it can move everything.
  void layOutAgain(bool now = false);
  // Whether the drawing shown was made from the one before it (incremental_layout.h).
  bool drawingIsIncremental() const { return !drawings_.empty() && drawings_.back().incremental; }
  const GraphLayout* graphLayout() const { return layout_.get(); }
  // Writes the whole graph or the part in view as SVG or PNG (by suffix); the error or nullopt.
  std::optional<QString> exportGraph(const QString& path, bool whole);
  // Help > Keyboard shortcuts, as an HTML table.
  static QString keyboardShortcutsHtml();
  // Main-graph nodes whose name or op contains `text` (case-insensitive), in node order.
  QList<NodeId> coreNodesMatching(const QString& text) const;
  const DisplayState& displayState() const { return display_state_; }
  const DisplayGraph* displayGraph() const { return display_.get(); }

  // Export & profile: compiles what is open, runs it on the device panel's device and shows the
  // result in the profile view and the history; in the background with progress and cancel.
  void exportAndProfile();
  // The same on the calling thread (tests, --screenshot); the error text on failure.
  std::optional<QString> profileNow(const QString& device, const device::RunSettings& settings);
  // The Sweep view's "Measure on device": one package run at each of these values of `symbol`
  // on the device panel's device, the other symbols at the current binding; in the background
  // with progress and cancel, then drawn over the plan's curves and recorded in the history.
  void measureSweep(const QString& symbol, qint64 lo, qint64 hi, qint64 step);
  // The same on the calling thread (tests, --screenshot); the error text on failure.
  std::optional<QString> measureSweepNow(const QString& symbol, qint64 lo, qint64 hi, qint64 step,
                                         const QString& device,
                                         const device::RunSettings& settings);
  // The profile store the studio records into ("" : the default one).
  void setProfileDatabase(const std::string& path);
  DevicePanel* devicePanel() const { return devices_; }
  ProfileView* profileView() const { return profile_view_; }
  HistoryView* historyView() const { return history_view_; }
  VariantsView* variantsView() const { return variants_view_; }
  BackendView* backendView() const { return backend_view_; }

  // What the graph's nodes are coloured by (View ▸ Colour nodes by): their class, or a run's
  // figures per fused group — the last profile's measured time or output bytes, or the change
  // in time between the two runs the History dock compared last.
  enum class NodeColouring { kClass, kMeasuredTime, kOutputBytes, kRunChange, kBackend };
  // False, with the class colours kept and the reason in the status bar, when there is nothing
  // to show: no model open, no profile of it yet, no comparison. kBackend places the model on
  // Vulkan first when the Backend dock has not (in the background: the colours follow).
  bool setNodeColouring(NodeColouring colouring);
  NodeColouring nodeColouring() const { return colouring_; }
  QString statusText() const;

 signals:
  // After openModel's background work: the document is shown (ok), or why not (error text, also
  // shown in a message box and the status bar).
  void openFinished(bool ok, const QString& error);

 protected:
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;
  void closeEvent(QCloseEvent* e) override;
  void showEvent(QShowEvent* e) override;

 private:
  // What the docks show for a new document, made off the GUI thread.
  struct Views {
    Expected<Bound> bound = invalid_argument("not bound");  // at the initial values
    // What each page (pages_, in order) prepared for it (StudioPage::prepare).
    std::vector<std::unique_ptr<PreparedPageData>> prepared;
    std::shared_ptr<const GraphHierarchy> hierarchy;
  };
  struct OpenResult {
    std::shared_ptr<OpenDocument> doc;
    std::shared_ptr<Views> views;
    QString error;
    bool cancelled = false;
  };
  struct LayoutResult {
    std::shared_ptr<const OpenDocument> doc;  // what it was laid out for
    DisplayState state;                       // with what open
    std::shared_ptr<DisplayGraph> graph;
    std::shared_ptr<GraphLayout> layout;
    // Made from the drawing on screen, moving only what an open or close had to
    // (incremental_layout.h), or a drawing kept from before shown again: it follows from the
    // drawings kept. Else laid out afresh.
    bool incremental = false;
    // Where the first of the drawings kept has its origin in this one: from one drawing to
    // another, what neither moved for room is shifted by the difference.
    QPointF origin;
    QString error;
  };

  void buildMenus();
  void buildDocks();
  // Docks `widget` as the page `view` registers (dock_pages.h): title, area, tabbing. A
  // `page` that follows the document is told what is open, each binding and the selection.
  QDockWidget* addPage(StudioView view, QWidget* widget, StudioPage* page = nullptr);
  // The docks as the user left them (QSettings), unless saved by a studio with another layout
  // version; else the default layout, sized when the window is first shown.
  void restoreLayout();
  void saveLayout();
  void applyDefaultLayout();
  // Drops the open model or package and everything drawn from it (before adopting another).
  void forgetOpened();
  // On the opening worker: `pages` are pages_, whose prepare() is const.
  static std::shared_ptr<Views> prepareViews(const OpenDocument& doc,
                                             const std::vector<StudioPage*>& pages,
                                             const std::atomic<bool>* cancel);
  void adoptOpened(std::shared_ptr<OpenDocument> open, std::shared_ptr<Views> views);
  // The Memory plan dock's title: execution symbols at their bound, if any.
  void showMemoryNote();
  void startLayout();
  void adoptLayout(const LayoutResult& r);
  // Tells every page that drawn node `id` is selected, and raises the inspector.
  void showDisplayNode(int id);
  // What drawn node `n` of display_ stands for, as the pages are told it.
  PageSelection pageSelection(const DisplayNode& n) const;
  void showTensor(int tensor, NodeId producer);
  void rememberRecent(const QString& path);
  void refreshRecentMenu();
  void showError(const QString& title, const QString& text);
  // What to profile: the open model or package, at the current binding. Input files size their
  // inputs: the sliders move to their dims first, so the views show the sizes that run.
  // Errors: nothing open, bad integer inputs or input files.
  Expected<profiling::ProfileRequest> profileRequest(const QString& device,
                                                     const device::RunSettings& settings);
  void adoptProfile(const Expected<profiling::ProfileResult>& result);
  // The open model's or package's absolute path ("" when none).
  QString openPath() const;
  // QSettings only: `text` under the open model's path in the map at `key`.
  void rememberPerModel(const char* key, const QString& text) const;
  // The Devices dock's integer inputs and input files as last used with the open model, and
  // its input names.
  void restoreProfileInputs();
  Expected<profiling::SweepProfileRequest> sweepRequest(const QString& symbol, qint64 lo, qint64 hi,
                                                        qint64 step, const QString& device,
                                                        const device::RunSettings& settings);
  void adoptSweep(const Expected<profiling::ProfileSweep>& result);
  void buildDeviceDocks();
  // Selects in the graph the first of these nodes (by name) that it shows.
  void selectNodesNamed(const QStringList& names);
  // `state` laid out; from `shown`'s drawing when it has one (else, or when the change is not
  // boxes opened and closed, afresh). On any thread; a throw is the result's error.
  static LayoutResult computeLayout(std::shared_ptr<const OpenDocument> doc,
                                    std::shared_ptr<const GraphHierarchy> hierarchy,
                                    const DisplayState& state, const LayoutResult& shown,
                                    const std::atomic<bool>* cancel);
  // The drawing on screen as computeLayout starts from it (none after Lay out again).
  LayoutResult shownDrawing() const;
  // Changes what is open, keeping main-graph node `anchor` where it is on screen once the
  // graph is laid out again (on the calling thread with `now`).
  void changeDisplay(const std::function<void(DisplayState&)>& change, NodeId anchor, bool now);
  // Lays out display_state_ again keeping `anchor` (kNoNode: the node mid-view) still.
  void relayoutKeeping(NodeId anchor, bool now);
  void updateUndoActions();
  // File > Export, Edit > Undo/Redo, Help > Keyboard shortcuts (main_window_graph.cpp).
  void addGraphActions(QMenu* file, QMenu* edit, QMenu* help);
  // The first main-graph node a box or node stands for (its anchor); kNoNode for none.
  NodeId anchorOf(int display_id) const;

  std::shared_ptr<OpenDocument> open_;
  std::shared_ptr<StudioDocument> doc_;         // open_'s model; null for a package
  std::shared_ptr<const BoundDocument> bound_;  // open_ at the current binding
  OpenOptions open_options_;
  std::shared_ptr<DisplayGraph> display_;
  std::shared_ptr<GraphLayout> layout_;
  // What is open: fused groups, If/Loop/Scan bodies (nodes of doc_), name scopes and shape
  // computations of hierarchy_.
  DisplayState display_state_;
  std::shared_ptr<const GraphHierarchy> hierarchy_;
  // Where the node the user opened or closed was on screen: the next layout keeps it there.
  struct Anchor {
    NodeId node = kNoNode;
    QPointF view_pos;
  };
  std::optional<Anchor> anchor_;
  // The drawings of this document made one from another, newest last: going back to what was
  // open (undo, closing what was opened) shows its drawing again exactly.
  static constexpr size_t kMaxDrawings = 12;
  std::vector<LayoutResult> drawings_;
  bool lay_out_afresh_ = false;      // Lay out again: the next layout ignores the drawing shown
  NodeId pending_reveal_ = kNoNode;  // selected once the layout revealing it is shown
  static constexpr size_t kMaxUndo = 200;
  std::vector<DisplayState> undo_states_, redo_states_;
  QAction* undo_action_ = nullptr;
  QAction* redo_action_ = nullptr;

  // The registered pages' docks and widgets (addPage), by view.
  std::map<StudioView, QDockWidget*> docks_;
  std::map<StudioView, QWidget*> page_widgets_;
  std::vector<StudioPage*> pages_;  // the registered pages that follow the document
  GraphView* graph_view_ = nullptr;
  FindBar* find_bar_ = nullptr;
  BindingsBar* bindings_ = nullptr;
  InspectorPage* inspector_ = nullptr;
  SummaryPage* summary_ = nullptr;
  ShapesPage* shapes_page_ = nullptr;
  TimelineView* timeline_view_ = nullptr;
  std::unique_ptr<TimelineModel> timeline_;
  QLabel* status_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QDockWidget* inspector_dock_ = nullptr;
  QDockWidget* shapes_dock_ = nullptr;
  QDockWidget* memory_dock_ = nullptr;
  PlanCompare* compare_ = nullptr;
  QDockWidget* compare_dock_ = nullptr;
  SweepView* sweep_ = nullptr;
  QDockWidget* sweep_dock_ = nullptr;
  QDockWidget* summary_dock_ = nullptr;

  DevicePanel* devices_ = nullptr;
  ProfileView* profile_view_ = nullptr;
  HistoryView* history_view_ = nullptr;
  QDockWidget* devices_dock_ = nullptr;
  QDockWidget* profile_dock_ = nullptr;
  QDockWidget* history_dock_ = nullptr;
  VariantsView* variants_view_ = nullptr;
  QDockWidget* variants_dock_ = nullptr;
  BackendView* backend_view_ = nullptr;
  QDockWidget* backend_dock_ = nullptr;
  std::string profile_db_;  // "" : the store's default path
  NodeColouring colouring_ = NodeColouring::kClass;
  std::map<NodeColouring, QAction*> colouring_actions_;
  // The last profile of the open model: what the time and bytes colourings draw.
  std::shared_ptr<const profiling::ProfileResult> last_profile_;
  QFutureWatcher<Expected<profiling::ProfileResult>> profile_watcher_;
  QFutureWatcher<Expected<profiling::ProfileSweep>> sweep_watcher_;
  std::shared_ptr<std::atomic<bool>> profile_cancel_;
  QPointer<QProgressDialog> profile_progress_;  // while a profile runs

  QFutureWatcher<OpenResult> open_watcher_;
  QFutureWatcher<LayoutResult> layout_watcher_;
  std::shared_ptr<std::atomic<bool>> open_cancel_;
  std::shared_ptr<std::atomic<bool>> layout_cancel_;
  QPointer<QProgressDialog> progress_;   // while a model opens
  bool default_layout_pending_ = false;  // nothing restored: size the docks at the first show
};

}  // namespace sod2::studio
