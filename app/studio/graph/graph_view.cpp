#include "app/studio/graph/graph_view.h"

#include <QClipboard>
#include <QContextMenuEvent>
#include <QElapsedTimer>
#include <QGraphicsScene>
#include <QGuiApplication>
#include <QKeyEvent>
#include <QMenu>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QTimer>
#include <QWheelEvent>
#include <cmath>
#include <limits>
#include <map>

#include "app/studio/graph/display_frames.h"
#include "app/studio/graph/graph_export.h"
#include "app/studio/graph/graph_legend.h"
#include "app/studio/graph/graph_minimap.h"
#include "app/studio/graph/graph_style.h"

namespace sod2::studio {
namespace {

constexpr double kMinZoom = 0.01;
constexpr double kMaxZoom = 8.0;
constexpr double kZoomStep = 1.25;
constexpr double kFitMaxZoom = 1.5;    // a small graph is not blown up to fill the window
constexpr double kReadableZoom = 1.0;  // where selectNode(center) goes when zoomed far out
// Graphs up to this many items (nodes + edges) go into the scene at once; bigger ones in slices
// of kSliceMs between which the window repaints and takes input (10,000 nodes take ~300 ms).
constexpr size_t kSyncItems = 3000;
constexpr double kSliceMs = 25;
constexpr double kStartMinZoom = 0.6;  // below this node labels are unreadable: showStart zooms in
constexpr double kStartZoom = 0.9;

// A node's box in scene coordinates (NodeBox holds its centre).
QRectF box_rect(const NodeBox& b) { return QRectF(b.x - b.w / 2, b.y - b.h / 2, b.w, b.h); }

}  // namespace

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent) {
  auto* scene = new QGraphicsScene(this);
  // The scene is rebuilt, never animated: a BSP index makes painting and hit tests on 10,000+
  // static items cheap.
  scene->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  setScene(scene);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(QGraphicsView::ScrollHandDrag);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setResizeAnchor(QGraphicsView::AnchorViewCenter);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setOptimizationFlags(QGraphicsView::DontSavePainterState |
                       QGraphicsView::DontAdjustForAntialiasing);
  setCacheMode(QGraphicsView::CacheBackground);
  setBackgroundBrush(palette().color(QPalette::Base));
  setFocusPolicy(Qt::StrongFocus);
  settings_.node_font = font();
  settings_.node_font.setPointSizeF(9);
  settings_.edge_font = font();
  settings_.edge_font.setPointSizeF(7.5);
  legend_ = new GraphLegend(this);
  legend_->move(viewport()->geometry().topLeft() + QPoint(8, 8));
  minimap_ = new GraphMinimap(this);
  connect(minimap_, &GraphMinimap::centreRequested, this, [this](QPointF scene) {
    start_view_ = false;
    centerOn(scene);
  });
  connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, [this] { updateMinimap(); });
  connect(verticalScrollBar(), &QScrollBar::valueChanged, this, [this] { updateMinimap(); });
  connect(scene, &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);
  populate_timer_ = new QTimer(this);
  populate_timer_->setInterval(0);
  connect(populate_timer_, &QTimer::timeout, this, [this] { populateSlice(kSliceMs); });
}

GraphView::~GraphView() {
  // The scene is a child: it dies in ~QObject, after this class's part is gone, and clearing its
  // items emits selectionChanged into onSelectionChanged (UBSan: a downcast to a dead GraphView).
  populate_timer_->stop();
  scene()->disconnect(this);
}

QList<QPair<QString, QColor>> GraphView::legend() { return graph_legend_entries(); }

void GraphView::setLegendVisible(bool visible) { legend_->setVisible(visible); }

void GraphView::setMinimapEnabled(bool enabled) {
  minimap_enabled_ = enabled;
  updateMinimap();
}

bool GraphView::minimapShown() const { return minimap_->isVisible(); }

void GraphView::updateMinimap() {
  const QRectF in_view = mapToScene(viewport()->rect()).boundingRect();
  const QRectF drawing(0, 0, layout_.width, layout_.height);
  const bool show = minimap_enabled_ && minimap_->hasGraph() && !in_view.contains(drawing);
  minimap_->setVisible(show);
  if (!show) return;
  minimap_->setVisibleArea(in_view);
  minimap_->move(viewport()->geometry().bottomRight() -
                 QPoint(minimap_->width() + 8, minimap_->height() + 8));
  minimap_->raise();
}

void GraphView::setOverlay(std::shared_ptr<const NodeOverlay> overlay) {
  overlay_ = std::move(overlay);
  legend_->setOverlay(overlay_);
  for (NodeItem* item : nodes_) applyOverlay(item);
}

void GraphView::applyOverlay(NodeItem* item) const {
  if (!overlay_) return item->clearOverlay();
  const DisplayNode& node = graph_.nodes[static_cast<size_t>(item->nodeId())];
  if (node.kind == DisplayNodeKind::kGraphInput || node.kind == DisplayNodeKind::kGraphOutput)
    return item->clearOverlay();
  const std::optional<double> v = overlay_->value_of(node);
  item->setOverlay(overlay_node_fill(*overlay_, v),
                   QString::fromStdString(overlay_->describe(node)));
}

QColor GraphView::nodeFill(int id) const {
  if (id < 0 || static_cast<size_t>(id) >= nodes_.size()) return {};
  return nodes_[static_cast<size_t>(id)]->fill();
}

QString GraphView::nodeToolTip(int id) const {
  if (id < 0 || static_cast<size_t>(id) >= nodes_.size()) return {};
  return nodes_[static_cast<size_t>(id)]->toolTip();
}

void GraphView::setGraph(const DisplayGraph* graph, const GraphLayout* layout) {
  populate_timer_->stop();
  {
    const QSignalBlocker block(scene());
    scene()->clear();
  }
  nodes_.clear();
  preds_.clear();
  succs_.clear();
  framed_groups_.clear();
  graph_ = DisplayGraph{};
  layout_ = GraphLayout{};
  next_node_ = next_edge_ = 0;
  if (last_emitted_ != -1) {
    last_emitted_ = -1;
    emit nodeSelected(-1);
  }
  if (!graph || !layout || layout->nodes.size() != graph->nodes.size()) {
    scene()->setSceneRect(QRectF());
    minimap_->setGraph(graph_, layout_, [](const DisplayNode& n) { return node_fill(n); });
    updateMinimap();
    return;
  }
  graph_ = *graph;
  layout_ = *layout;
  minimap_->setGraph(graph_, layout_, [](const DisplayNode& n) { return node_fill(n); });
  const size_t n = graph_.nodes.size();
  nodes_.reserve(n);
  preds_.assign(n, {});
  succs_.assign(n, {});
  for (const DisplayEdge& e : graph_.edges) {
    if (e.from >= 0 && e.to >= 0 && static_cast<size_t>(e.from) < n &&
        static_cast<size_t>(e.to) < n) {
      succs_[static_cast<size_t>(e.from)].push_back(e.to);
      preds_[static_cast<size_t>(e.to)].push_back(e.from);
    }
  }
  scene()->setSceneRect(QRectF(0, 0, layout_.width, layout_.height).adjusted(-20, -20, 20, 20));
  populating_ = true;
  // Items go in without an index (one pass at the end builds it), so each slice costs only its
  // own items.
  scene()->setItemIndexMethod(QGraphicsScene::NoIndex);
  if (n + graph_.edges.size() <= kSyncItems)
    finishPopulating();
  else
    populate_timer_->start();
}

bool GraphView::populateSlice(double budget_ms) {
  QElapsedTimer clock;
  clock.start();
  const auto over = [&](size_t i) { return (i & 63) == 0 && clock.elapsed() >= budget_ms; };
  const size_t n = graph_.nodes.size();
  for (; next_node_ < n; ++next_node_) {
    if (over(next_node_)) return false;
    auto* item = new NodeItem(graph_.nodes[next_node_], layout_.nodes[next_node_], &settings_);
    if (overlay_) applyOverlay(item);
    scene()->addItem(item);
    nodes_.push_back(item);
  }
  const size_t drawn_edges = std::min(graph_.edges.size(), layout_.edges.size());
  for (; next_edge_ < drawn_edges; ++next_edge_) {
    if (over(next_edge_)) return false;
    scene()->addItem(new EdgeItem(graph_.edges[next_edge_], layout_.edges[next_edge_], &settings_));
  }
  addGroupFrames(graph_, layout_);
  scene()->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  populating_ = false;
  populate_timer_->stop();
  emit populated();
  return true;
}

void GraphView::finishPopulating() {
  if (populating_) populateSlice(std::numeric_limits<double>::infinity());
}

void GraphView::addGroupFrames(const DisplayGraph& graph, const GraphLayout& layout) {
  double scope_z = 0;
  for (const DisplayFrame& f : display_frames(graph, layout.nodes)) {
    const QRectF members(QPointF(f.members.left, f.members.top),
                         QPointF(f.members.right, f.members.bottom));
    const QString title = QString::fromStdString(f.title);
    GroupFrameItem* item = nullptr;
    switch (f.kind) {
      case DisplayFrameKind::kFusedGroup:
        framed_groups_.insert(f.target);
        item = new GroupFrameItem(GroupFrameItem::Kind::kFusedGroup, f.target, title, members,
                                  &settings_);
        break;
      case DisplayFrameKind::kShapes:
        item =
            new GroupFrameItem(GroupFrameItem::Kind::kShapes, f.target, title, members, &settings_);
        break;
      case DisplayFrameKind::kScope:
        item =
            new GroupFrameItem(GroupFrameItem::Kind::kScope, f.target, title, members, &settings_);
        item->setZValue(item->zValue() + 0.001 * scope_z++);  // inner over outer
        break;
      case DisplayFrameKind::kBody:
        item =
            new GroupFrameItem(GroupFrameItem::Kind::kBody, f.target, title, members, &settings_);
        break;
    }
    scene()->addItem(item);
  }
}

QList<int> GraphView::findNodes(const QString& text) const {
  QList<int> hits;
  const QString needle = text.trimmed().toLower();
  if (needle.isEmpty()) return hits;
  // From the graph, not the items: a graph still entering the scene is searched whole.
  for (const DisplayNode& node : graph_.nodes)
    if (NodeItem::searchTextOf(node).contains(needle)) hits.append(node.id);
  return hits;
}

void GraphView::selectNode(int id, bool center) {
  finishPopulating();
  const bool valid = id >= 0 && static_cast<size_t>(id) < nodes_.size();
  {
    // One nodeSelected per call, whether or not the selection changes.
    const QSignalBlocker block(scene());
    scene()->clearSelection();
    if (valid) nodes_[static_cast<size_t>(id)]->setSelected(true);
  }
  scene()->update();
  last_emitted_ = valid ? id : -1;
  emit nodeSelected(last_emitted_);
  if (!valid || !center) return;
  start_view_ = false;
  if (zoomFactor() < kReadableZoom * 0.6) zoomBy(kReadableZoom / zoomFactor());
  centerOn(nodes_[static_cast<size_t>(id)]);
}

int GraphView::selectedNode() const {
  for (QGraphicsItem* item : scene()->selectedItems())
    if (item->type() == NodeItem::Type) return static_cast<NodeItem*>(item)->nodeId();
  return -1;
}

void GraphView::onSelectionChanged() {
  const int id = selectedNode();
  if (id == last_emitted_) return;
  last_emitted_ = id;
  emit nodeSelected(id);
}

double GraphView::zoomFactor() const { return transform().m11(); }

void GraphView::zoomBy(double factor) {
  const double target = std::clamp(zoomFactor() * factor, kMinZoom, kMaxZoom);
  const double f = target / zoomFactor();
  if (std::isfinite(f) && f > 0) scale(f, f);
  updateMinimap();
}

void GraphView::zoomIn() {
  start_view_ = false;
  zoomBy(kZoomStep);
}
void GraphView::zoomOut() {
  start_view_ = false;
  zoomBy(1 / kZoomStep);
}

void GraphView::fitAll() {
  const QRectF r = scene()->sceneRect();
  if (r.isEmpty()) return;
  fitInView(r.adjusted(-10, -10, 10, 10), Qt::KeepAspectRatio);
  if (zoomFactor() > kFitMaxZoom) zoomBy(kFitMaxZoom / zoomFactor());
  if (zoomFactor() < kMinZoom) zoomBy(kMinZoom / zoomFactor());
  updateMinimap();
}

void GraphView::showStart() {
  fitAll();
  start_view_ = true;
  if (zoomFactor() >= kStartMinZoom || layout_.nodes.empty()) return;
  zoomBy(kStartZoom / zoomFactor());
  // The top of the drawing, where the inputs are: the topmost node, horizontally centred.
  const NodeBox* top = &layout_.nodes.front();
  for (const NodeBox& b : layout_.nodes)
    if (b.y < top->y) top = &b;
  const double visible_height = viewport()->height() / zoomFactor();
  centerOn(top->x, top->y - top->h / 2 - 30 + visible_height / 2);
}

void GraphView::mousePressEvent(QMouseEvent* e) {
  start_view_ = false;
  QGraphicsView::mousePressEvent(e);
}

void GraphView::setEdgeLabelsVisible(bool visible) {
  if (settings_.edge_labels == visible) return;
  settings_.edge_labels = visible;
  viewport()->update();
}

void GraphView::wheelEvent(QWheelEvent* e) {
  start_view_ = false;
  if (!(e->modifiers() & Qt::ControlModifier)) {
    QGraphicsView::wheelEvent(e);  // plain wheel scrolls
    return;
  }
  const double steps = e->angleDelta().y() / 120.0;
  if (steps != 0) zoomBy(std::pow(1.15, steps));
  e->accept();
}

int GraphView::neighbourTowards(int id, int key) const {
  const NodeItem* from = nodes_[static_cast<size_t>(id)];
  const QPointF at = from->pos();
  if (key == Qt::Key_Up || key == Qt::Key_Down) {
    // Along an edge: the predecessor or successor nearest in x.
    const auto& list =
        key == Qt::Key_Up ? preds_[static_cast<size_t>(id)] : succs_[static_cast<size_t>(id)];
    int best = -1;
    double best_dx = 0;
    for (int n : list) {
      const double dx = std::abs(nodes_[static_cast<size_t>(n)]->pos().x() - at.x());
      if (best < 0 || dx < best_dx) best = n, best_dx = dx;
    }
    return best;
  }
  // Sideways: the nearest node on that side whose box overlaps this one's row.
  const double row = from->boundingRect().height() / 2;
  const bool left = key == Qt::Key_Left;
  int best = -1;
  double best_dx = 0;
  for (const NodeItem* item : nodes_) {
    const QPointF p = item->pos();
    if (item == from || std::abs(p.y() - at.y()) > row) continue;
    const double dx = left ? at.x() - p.x() : p.x() - at.x();
    if (dx <= 0) continue;
    if (best < 0 || dx < best_dx) best = item->nodeId(), best_dx = dx;
  }
  return best;
}

void GraphView::keyPressEvent(QKeyEvent* e) {
  finishPopulating();
  start_view_ = false;
  const int selected = selectedNode();
  switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomIn(); return;
    case Qt::Key_Minus: zoomOut(); return;
    case Qt::Key_0:
    case Qt::Key_F: fitAll(); return;
    case Qt::Key_Escape: selectNode(-1, false); return;
    case Qt::Key_Return:
    case Qt::Key_Enter:
      if (selected >= 0) activate(selected, /*or_enclosing=*/true);
      return;
    case Qt::Key_Up:
    case Qt::Key_Down:
    case Qt::Key_Left:
    case Qt::Key_Right: {
      if (nodes_.empty()) break;
      if (selected < 0) {  // the first arrow picks the top node
        selectNode(0, true);
        return;
      }
      const int next = neighbourTowards(selected, e->key());
      if (next >= 0) {
        selectNode(next, false);
        ensureVisible(nodes_[static_cast<size_t>(next)], 40, 40);
      }
      return;
    }
    default: break;
  }
  QGraphicsView::keyPressEvent(e);
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* e) {
  for (QGraphicsItem* item : items(e->pos())) {
    if (item->type() == NodeItem::Type) {
      activate(static_cast<NodeItem*>(item)->nodeId(), /*or_enclosing=*/false);
      e->accept();
      return;
    }
    if (item->type() == GroupFrameItem::Type) {
      const auto* frame = static_cast<GroupFrameItem*>(item);
      activateFrame(frame->kind(), frame->target());
      e->accept();
      return;
    }
  }
  QGraphicsView::mouseDoubleClickEvent(e);
}

void GraphView::activate(int id, bool or_enclosing) {
  if (id < 0 || static_cast<size_t>(id) >= graph_.nodes.size()) return;
  const DisplayNode& d = graph_.nodes[static_cast<size_t>(id)];
  switch (d.kind) {
    case DisplayNodeKind::kGroup: emit groupActivated(d.group); return;
    case DisplayNodeKind::kScope: emit scopeActivated(d.scope); return;
    case DisplayNodeKind::kShapes: emit shapesActivated(d.shape_cluster); return;
    case DisplayNodeKind::kGraphInput:
    case DisplayNodeKind::kGraphOutput: return;
    case DisplayNodeKind::kOp: break;
  }
  if (d.has_subgraphs) {
    emit bodyActivated(d.id);
    return;
  }
  if (!or_enclosing) return;
  // Enter on a node of an open box closes the box: the innermost first.
  if (d.group >= 0 && framed_groups_.count(d.group))
    emit groupActivated(d.group);
  else if (d.shape_cluster >= 0)
    emit shapesActivated(d.shape_cluster);
}

void GraphView::activateFrame(GroupFrameItem::Kind kind, int target) {
  switch (kind) {
    case GroupFrameItem::Kind::kFusedGroup: emit groupActivated(target); return;
    case GroupFrameItem::Kind::kBody: emit bodyActivated(target); return;
    case GroupFrameItem::Kind::kScope: emit scopeActivated(target); return;
    case GroupFrameItem::Kind::kShapes: emit shapesActivated(target); return;
  }
}

std::optional<QPointF> GraphView::viewPositionOf(NodeId node) const {
  const int id = graph_.display_node_of(node);
  if (id < 0 || static_cast<size_t>(id) >= layout_.nodes.size()) return std::nullopt;
  // The top-left corner: a box that opens grows right and down from where it was.
  return mapFromScene(box_rect(layout_.nodes[static_cast<size_t>(id)]).topLeft());
}

bool GraphView::placeAt(NodeId node, const QPointF& view_pos) {
  const int id = graph_.display_node_of(node);
  if (id < 0 || static_cast<size_t>(id) >= layout_.nodes.size()) return false;
  if (!(zoomFactor() > 0)) return false;
  placeScenePointAt(box_rect(layout_.nodes[static_cast<size_t>(id)]).topLeft(), view_pos);
  return true;
}

void GraphView::placeScenePointAt(const QPointF& scene_point, const QPointF& view_pos) {
  start_view_ = false;
  // Centring c puts it mid-viewport: shift c so the point lands at view_pos instead.
  const QPointF mid(viewport()->width() / 2.0, viewport()->height() / 2.0);
  const double zoom = zoomFactor();
  if (!(zoom > 0)) return;
  const QPointF centre = scene_point + (mid - view_pos) / zoom;
  // A drawing smaller than the window would be re-centred by the view: the scene grows so that
  // the place asked for can be scrolled to.
  const QSizeF half(viewport()->width() / 2.0 / zoom, viewport()->height() / 2.0 / zoom);
  scene()->setSceneRect(
      scene()->sceneRect().united(QRectF(centre - QPointF(half.width(), half.height()), 2 * half)));
  centerOn(centre);
}

QPointF GraphView::viewCentreInScene() const { return mapToScene(viewport()->rect().center()); }

int GraphView::nodeNearestViewCentre() const {
  const QPointF centre = mapToScene(viewport()->rect().center());
  int best = -1;
  double best_d = 0;
  for (size_t i = 0; i < layout_.nodes.size(); ++i) {
    const double dx = layout_.nodes[i].x - centre.x(), dy = layout_.nodes[i].y - centre.y();
    const double d = dx * dx + dy * dy;
    if (best < 0 || d < best_d) best = static_cast<int>(i), best_d = d;
  }
  return best;
}

std::optional<QString> GraphView::exportImage(const QString& path, bool whole) {
  finishPopulating();
  const QRectF area = whole ? scene()->itemsBoundingRect().adjusted(-10, -10, 10, 10)
                            : mapToScene(viewport()->rect()).boundingRect();
  // A picture of the graph, not of this session's selection.
  const QList<QGraphicsItem*> selected = scene()->selectedItems();
  {
    const QSignalBlocker block(scene());
    scene()->clearSelection();
  }
  auto error = export_scene(*scene(), area, path, palette().color(QPalette::Base));
  {
    const QSignalBlocker block(scene());
    for (QGraphicsItem* item : selected) item->setSelected(true);
  }
  return error;
}

QMenu* GraphView::contextMenuAt(const QPoint& view_pos) {
  finishPopulating();
  const NodeItem* node = nullptr;
  const GroupFrameItem* frame = nullptr;
  for (QGraphicsItem* item : items(view_pos)) {
    if (item->type() == NodeItem::Type) {
      node = static_cast<NodeItem*>(item);
      break;
    }
    if (!frame && item->type() == GroupFrameItem::Type) frame = static_cast<GroupFrameItem*>(item);
  }
  if (!node && !frame) return nullptr;
  auto* menu = new QMenu(this);
  if (!node) {
    // The frame may be gone by the time the action runs: its kind and target are kept.
    menu->addAction(tr("Close"), this, [this, kind = frame->kind(), target = frame->target()] {
      activateFrame(kind, target);
    });
    return menu;
  }
  const int id = node->nodeId();
  selectNode(id, false);
  const DisplayNode& d = graph_.nodes[static_cast<size_t>(id)];
  if (is_box(d))
    menu->addAction(tr("Open"), this, [this, id] { activate(id, false); });
  else if (d.has_subgraphs)
    menu->addAction(d.body_expanded ? tr("Close bodies") : tr("Open bodies"), this,
                    [this, id] { activate(id, false); });
  if (d.kind == DisplayNodeKind::kOp && d.group >= 0 && framed_groups_.count(d.group))
    menu->addAction(tr("Collapse fused group %1").arg(d.group), this,
                    [this, g = d.group] { emit groupActivated(g); });
  if (d.kind == DisplayNodeKind::kOp && d.shape_cluster >= 0 && !d.body_of)
    menu->addAction(tr("Fold shape computation"), this,
                    [this, c = d.shape_cluster] { emit shapesActivated(c); });
  if (d.in_scope >= 0 && static_cast<size_t>(d.in_scope) < graph_.open_scopes.size()) {
    const DisplayScopeFrame& f = graph_.open_scopes[static_cast<size_t>(d.in_scope)];
    menu->addAction(tr("Close scope %1").arg(QString::fromStdString(f.title)), this,
                    [this, scope = f.scope] { emit scopeActivated(scope); });
  }
  if (!menu->isEmpty()) menu->addSeparator();
  menu->addAction(tr("Copy name"), this, [label = d.label] {
    QGuiApplication::clipboard()->setText(QString::fromStdString(label));
  });
  if (d.kind != DisplayNodeKind::kGraphInput && d.kind != DisplayNodeKind::kGraphOutput) {
    menu->addAction(tr("Show in shapes table"), this,
                    [this, id] { emit showInShapesRequested(id); });
    menu->addAction(tr("Show in memory timeline"), this,
                    [this, id] { emit showInTimelineRequested(id); });
  }
  return menu;
}

void GraphView::contextMenuEvent(QContextMenuEvent* e) {
  QMenu* menu = contextMenuAt(e->pos());
  if (!menu) return QGraphicsView::contextMenuEvent(e);
  menu->setAttribute(Qt::WA_DeleteOnClose);
  menu->popup(e->globalPos());
  e->accept();
}

void GraphView::changeEvent(QEvent* e) {
  QGraphicsView::changeEvent(e);
  // A theme switch: the cached background was painted in the old palette.
  if (e->type() == QEvent::PaletteChange) {
    setBackgroundBrush(palette().color(QPalette::Base));
    resetCachedContent();
    viewport()->update();
  }
}

void GraphView::resizeEvent(QResizeEvent* e) {
  QGraphicsView::resizeEvent(e);
  if (start_view_) showStart();
  legend_->move(viewport()->geometry().topLeft() + QPoint(8, 8));
  legend_->raise();
  updateMinimap();
}

}  // namespace sod2::studio
