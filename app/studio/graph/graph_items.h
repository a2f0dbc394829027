// The scene items of the graph view: one per node, per edge and per expanded group's frame.
// Each paints with a level of detail (text only where it can be read, arrowheads only where
// they show) so a 10,000-node scene stays smooth when zoomed out.
#pragma once

#include <QColor>
#include <QFont>
#include <QGraphicsItem>
#include <QPainterPath>
#include <QString>

#include "app/studio/graph/display_frames.h"
#include "app/studio/graph/display_graph.h"
#include "app/studio/graph/graph_layout.h"

namespace sod2::studio {

// What every item reads when it paints; owned by the view, changed by its toggles.
struct GraphPaintSettings {
  bool edge_labels = true;
  QFont node_font;
  QFont edge_font;
};

class NodeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 1 };
  NodeItem(const DisplayNode& node, const NodeBox& box, const GraphPaintSettings* settings);

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  int nodeId() const { return id_; }
  static QString searchTextOf(const DisplayNode& node);
  int group() const { return group_; }
  bool isGroupBox() const { return group_box_; }
  // What search matches: the node's name (or box label) and op, lower-cased.
  const QString& searchText() const { return search_text_; }
  // An overlay's colour and tooltip line in place of the class colour (empty line: none).
  void setOverlay(const QColor& fill, const QString& line);
  void clearOverlay();
  const QColor& fill() const { return fill_; }

 private:
  int id_;
  int group_;
  bool group_box_;
  QRectF rect_;
  QColor fill_, class_fill_;
  QString tip_;                       // the node's own tooltip, without an overlay's line
  QString first_line_, second_line_;  // elided to the box
  QString search_text_;
  const GraphPaintSettings* settings_;
};

class EdgeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 2 };
  EdgeItem(const DisplayEdge& edge, const EdgePath& path, const GraphPaintSettings* settings);

  int type() const override { return Type; }
  QRectF boundingRect() const override { return bounds_; }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

 private:
  QPainterPath path_;
  QPolygonF arrow_;
  QString label_;
  QRectF label_rect_;
  QRectF bounds_;
  const GraphPaintSettings* settings_;
};

// The dashed frame around what an open box drew node by node: an expanded fused group, an open
// If/Loop/Scan body, an open name scope or shape computation. Double-click closes it.
class GroupFrameItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 3 };
  enum class Kind { kFusedGroup, kBody, kScope, kShapes };
  // `target`: the fused group, the control-flow node's display id, the scope (GraphHierarchy)
  // or the shape cluster.
  GroupFrameItem(Kind kind, int target, const QString& title, const QRectF& members_rect,
                 const GraphPaintSettings* settings);

  int type() const override { return Type; }
  QRectF boundingRect() const override { return rect_.adjusted(-1, -1, 1, 1); }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  Kind kind() const { return kind_; }
  int target() const { return target_; }
  int group() const { return kind_ == Kind::kFusedGroup ? target_ : -1; }
  int bodyControl() const { return kind_ == Kind::kBody ? target_ : -1; }
  // The frame drawn around `members_rect`: what an enclosing frame must hold.
  static QRectF frameRect(const QRectF& members_rect) {
    return members_rect.adjusted(-kFrameSide, -kFrameTop, kFrameSide, kFrameBottom);
  }

 private:
  Kind kind_;
  int target_;
  QString title_;
  QRectF rect_;
  const GraphPaintSettings* settings_;
};

}  // namespace sod2::studio
