// The graph in the studio's centre (DESIGN §8): a DisplayGraph drawn at a GraphLayout's
// positions. Nodes are coloured by SoD² class (legend top-left). Boxes — collapsed fused groups,
// closed name scopes, folded shape computations — have a double border and open on double-click
// (groupActivated, scopeActivated, shapesActivated: the owner rebuilds the DisplayGraph and lays
// it out again on a worker); open ones are framed, and double-clicking the frame closes them.
// If/Loop/Scan nodes open their bodies the same way (bodyActivated), drawn in amber frames.
// Ctrl+wheel or +/- zoom, drag pans, 0 or F fits, arrows walk to neighbours, Enter toggles a group,
// Escape clears.
#pragma once

#include <QGraphicsView>
#include <QList>
#include <QPair>
#include <optional>
#include <set>
#include <vector>

#include "app/studio/graph/display_graph.h"
#include "app/studio/graph/graph_items.h"
#include "app/studio/graph/graph_layout.h"
#include "app/studio/graph/node_overlay.h"

namespace sod2::studio {

class GraphLegend;
class GraphMinimap;
}  // namespace sod2::studio

class QMenu;
class QTimer;

namespace sod2::studio {

class GraphView : public QGraphicsView {
  Q_OBJECT

 public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  // Shows `graph` at `layout`'s positions (both copied); nullptr clears the view. The selection
  // is not carried over: ids change when groups expand. A big graph enters the scene in slices
  // on the event loop (populated() when complete) so the window never freezes; selecting,
  // searching and the keyboard complete it first.
  void setGraph(const DisplayGraph* graph, const GraphLayout* layout);
  // Nodes in the scene so far.
  int nodeCount() const { return static_cast<int>(nodes_.size()); }
  bool isPopulating() const { return populating_; }
  void finishPopulating();

  // Display node ids whose name (or box label) or op contains `text`, case-insensitively, in id
  // order; empty for empty text.
  QList<int> findNodes(const QString& text) const;
  // Selects node `id` (emits nodeSelected), and with `center` scrolls it to the middle at a
  // readable zoom. An unknown id clears the selection.
  void selectNode(int id, bool center);
  int selectedNode() const;  // -1 when none

  bool edgeLabelsVisible() const { return settings_.edge_labels; }
  double zoomFactor() const;
  // The colours nodes take, by class, in the legend's order.
  static QList<QPair<QString, QColor>> legend();
  void setLegendVisible(bool visible);
  // The minimap (bottom right) is shown while the drawing is larger than the view, unless
  // turned off here (View > Minimap).
  void setMinimapEnabled(bool enabled);
  bool minimapShown() const;
  GraphMinimap* minimap() const { return minimap_; }
  // Colours nodes by the overlay's values instead of their class (nullptr: by class again); it
  // stays across setGraph, so expanding a group keeps the colouring.
  void setOverlay(std::shared_ptr<const NodeOverlay> overlay);
  // Where the display node holding main-graph node `node` is now (its top-left corner), in
  // viewport coordinates; and
  // scrolling (at the current zoom) so that it is at `view_pos`: what keeps the drawing still
  // when a box opens or closes and the graph is laid out again. false: not drawn.
  std::optional<QPointF> viewPositionOf(NodeId node) const;
  bool placeAt(NodeId node, const QPointF& view_pos);
  // Scrolls so that scene point `scene` shows at `view_pos`, growing the scene if it must.
  void placeScenePointAt(const QPointF& scene, const QPointF& view_pos);
  // The scene point mid-view.
  QPointF viewCentreInScene() const;
  // The display node nearest the middle of the viewport; -1 when nothing is drawn.
  int nodeNearestViewCentre() const;
  // Writes the whole drawing, or the part in view, to `path` (.svg or .png); the error, or
  // nullopt. The selection is not drawn.
  std::optional<QString> exportImage(const QString& path, bool whole);
  // The context menu for what is at `view_pos` (a node, box or frame): open/close, close the
  // enclosing scope, copy the name, show in the shapes table or the memory timeline; null over
  // empty space. Owned by the caller.
  QMenu* contextMenuAt(const QPoint& view_pos);
  const NodeOverlay* overlay() const { return overlay_.get(); }
  // A node's fill as drawn now, and its tooltip (tests; -1 or an unknown id: invalid / empty).
  QColor nodeFill(int id) const;
  QString nodeToolTip(int id) const;

 public slots:
  void fitAll();
  // What a freshly opened graph shows: all of it when that is readable, else its top (the
  // inputs) at a readable zoom. Re-applied when the view is resized, until the user moves it.
  void showStart();
  void setEdgeLabelsVisible(bool visible);
  void zoomIn();
  void zoomOut();

 signals:
  void nodeSelected(int id);       // by click, keyboard or selectNode; -1 when cleared
  void groupActivated(int group);  // double-click or Enter on a group box or a group's frame
  void populated();                // every item of the last setGraph is in the scene
  // Double-click or Enter on an If/Loop/Scan node (open or closed) or on an open body's frame:
  // the owner toggles that node's bodies and lays the graph out again. `id` is the control-flow
  // node's display id.
  void bodyActivated(int id);
  // Double-click or Enter on a name scope's box or frame (GraphHierarchy scope id), and on a
  // shape computation's box or frame, or Enter on one of its nodes.
  void scopeActivated(int scope);
  void shapesActivated(int cluster);
  // The context menu's "Show in shapes table" / "Show in memory timeline" on display node `id`
  // (already selected).
  void showInShapesRequested(int id);
  void showInTimelineRequested(int id);

 protected:
  void wheelEvent(QWheelEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void contextMenuEvent(QContextMenuEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void changeEvent(QEvent* e) override;

 private:
  void zoomBy(double factor);
  void onSelectionChanged();
  // The neighbour an arrow key leads to from `id`; -1 when there is none.
  int neighbourTowards(int id, int key) const;
  void addGroupFrames(const DisplayGraph& graph, const GraphLayout& layout);
  // Emits what opening or closing display node `id` means: its box, its bodies, or (with
  // `or_enclosing`, for Enter) the open fused group or shape computation it is drawn in.
  void activate(int id, bool or_enclosing);
  // What double-clicking a frame of this kind around `target` means (GroupFrameItem::target).
  void activateFrame(GroupFrameItem::Kind kind, int target);
  // Adds items for about `budget_ms`; true when the graph is complete.
  bool populateSlice(double budget_ms);
  void applyOverlay(NodeItem* item) const;
  // Outlines the part in view on the minimap, shows or hides it and keeps it in its corner.
  void updateMinimap();

  GraphPaintSettings settings_;
  DisplayGraph graph_;  // what setGraph was given, while and after it populates
  GraphLayout layout_;
  size_t next_node_ = 0, next_edge_ = 0;
  bool populating_ = false;
  QTimer* populate_timer_ = nullptr;
  std::vector<NodeItem*> nodes_;  // by display node id; owned by the scene
  std::vector<std::vector<int>> preds_, succs_;
  std::set<int> framed_groups_;  // expanded groups with a frame: Enter on a member collapses
  GraphLegend* legend_ = nullptr;
  GraphMinimap* minimap_ = nullptr;
  bool minimap_enabled_ = true;
  std::shared_ptr<const NodeOverlay> overlay_;
  int last_emitted_ = -1;
  bool start_view_ = false;
};

}  // namespace sod2::studio
