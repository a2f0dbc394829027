#include "app/studio/graph/graph_items.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QtMath>

#include "app/studio/graph/graph_style.h"

namespace sod2::studio {
namespace {

// Below these scales a detail is too small to read, so it is not drawn at all.
constexpr double kTextDetail = 0.45;
constexpr double kBorderDetail = 0.2;
constexpr double kArrowDetail = 0.3;
constexpr double kEdgeLabelDetail = 0.7;
constexpr double kArrowSize = 6;

QString qs(const std::string& s) { return QString::fromStdString(s); }

double detail(const QStyleOptionGraphicsItem* option, const QPainter* p) {
  return option->levelOfDetailFromTransform(p->worldTransform());
}

}  // namespace

QString NodeItem::searchTextOf(const DisplayNode& node) {
  return (qs(node.label) + QLatin1Char('\n') + qs(node.op)).toLower();
}

NodeItem::NodeItem(const DisplayNode& node, const NodeBox& box, const GraphPaintSettings* settings)
    : id_(node.id),
      group_(node.group),
      group_box_(is_box(node)),
      rect_(-box.w / 2, -box.h / 2, box.w, box.h),
      fill_(node_fill(node)),
      class_fill_(fill_),
      settings_(settings) {
  setPos(box.x, box.y);
  setFlag(ItemIsSelectable);
  setZValue(1);
  const QFontMetricsF fm(settings->node_font);
  const double room = box.w - 8;
  QString first, second;
  switch (node.kind) {
    case DisplayNodeKind::kGraphInput:
    case DisplayNodeKind::kGraphOutput: first = qs(node.label); break;
    case DisplayNodeKind::kGroup:
    case DisplayNodeKind::kScope:
    case DisplayNodeKind::kShapes:
      first = qs(node.label);
      second = qs(node.op);
      break;
    case DisplayNodeKind::kOp:
      first = qs(node.op);
      second = qs(node.label);
      break;
  }
  if (node.has_subgraphs) first += QStringLiteral(" [+%1]").arg(node.subgraph_nodes);
  first_line_ = fm.elidedText(first, Qt::ElideRight, room);
  second_line_ = fm.elidedText(second, Qt::ElideMiddle, room);
  search_text_ = searchTextOf(node);
  QString tip =
      QStringLiteral("%1\n%2 (%3)")
          .arg(qs(node.label), qs(node.op), QString::fromLatin1(display_class_name(node)));
  if (node.is_group_box)
    tip += QStringLiteral("\nfused group %1, %2 nodes; double-click to expand")
               .arg(node.group)
               .arg(node.members.size());
  if (node.kind == DisplayNodeKind::kScope)
    tip += QStringLiteral("\nname scope, %1 nodes; double-click to open").arg(node.members.size());
  if (node.kind == DisplayNodeKind::kShapes)
    tip += QStringLiteral(
               "\n%1 nodes computing shapes from shapes and constants; double-click "
               "to open")
               .arg(node.members.size());
  if (node.has_subgraphs)
    tip += QStringLiteral("\n%1 nodes in its bodies").arg(node.subgraph_nodes);
  tip_ = tip;
  setToolTip(tip);
}

void NodeItem::setOverlay(const QColor& fill, const QString& line) {
  fill_ = fill;
  setToolTip(line.isEmpty() ? tip_ : tip_ + QLatin1Char('\n') + line);
  update();
}

void NodeItem::clearOverlay() {
  fill_ = class_fill_;
  setToolTip(tip_);
  update();
}

QRectF NodeItem::boundingRect() const { return rect_.adjusted(-2, -2, 2, 2); }

void NodeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = detail(option, p);
  const bool selected = isSelected();
  if (lod < kBorderDetail && !selected) {
    p->fillRect(rect_, fill_);
    return;
  }
  p->setBrush(fill_);
  p->setPen(selected ? QPen(selection_color(), 2.5) : QPen(fill_.darker(160), 1));
  p->drawRect(rect_);
  if (group_box_) {  // a double border says "more inside"
    p->setBrush(Qt::NoBrush);
    p->setPen(QPen(fill_.darker(160), 1));
    p->drawRect(rect_.adjusted(3, 3, -3, -3));
  }
  if (lod < kTextDetail) return;
  p->setFont(settings_->node_font);
  p->setPen(node_text_color());
  if (second_line_.isEmpty()) {
    p->drawText(rect_, Qt::AlignCenter, first_line_);
    return;
  }
  const QRectF top(rect_.left(), rect_.top() + 2, rect_.width(), rect_.height() / 2 - 2);
  const QRectF bottom(rect_.left(), rect_.center().y(), rect_.width(), rect_.height() / 2 - 2);
  QFont bold = settings_->node_font;
  bold.setBold(true);
  p->setFont(bold);
  p->drawText(top, Qt::AlignCenter, first_line_);
  p->setFont(settings_->node_font);
  p->drawText(bottom, Qt::AlignCenter, second_line_);
}

EdgeItem::EdgeItem(const DisplayEdge& edge, const EdgePath& path,
                   const GraphPaintSettings* settings)
    : label_(qs(edge.label)), settings_(settings) {
  setAcceptedMouseButtons(Qt::NoButton);  // a press on an edge pans like the background
  setZValue(0);
  const auto& pts = path.points;
  if (!pts.empty()) path_.moveTo(pts[0].x, pts[0].y);
  if (path.bezier) {
    for (size_t i = 1; i + 2 < pts.size(); i += 3)
      path_.cubicTo(pts[i].x, pts[i].y, pts[i + 1].x, pts[i + 1].y, pts[i + 2].x, pts[i + 2].y);
  } else {
    for (size_t i = 1; i < pts.size(); ++i) path_.lineTo(pts[i].x, pts[i].y);
  }
  // The arrowhead points along the last segment of non-zero length.
  if (pts.size() >= 2) {
    const QPointF tip(pts.back().x, pts.back().y);
    QPointF from = tip;
    for (size_t i = pts.size() - 1; i-- > 0 && from == tip;) from = QPointF(pts[i].x, pts[i].y);
    const QPointF d = tip - from;
    const double len = std::hypot(d.x(), d.y());
    if (len > 0) {
      const QPointF u = d / len, n(-u.y(), u.x());
      const QPointF base = tip - u * kArrowSize;
      arrow_ << tip << base + n * (kArrowSize / 2) << base - n * (kArrowSize / 2);
    }
  }
  if (!label_.isEmpty()) {
    const QFontMetricsF fm(settings->edge_font);
    const double w = fm.horizontalAdvance(label_) + 4;
    const double h = fm.height();
    // Beside the line rather than on it, so the label does not hide the edge.
    label_rect_ = QRectF(path.label_x + 3, path.label_y - h / 2, w, h);
  }
  bounds_ = path_.boundingRect().united(arrow_.boundingRect()).adjusted(-2, -2, 2, 2);
  if (!label_rect_.isNull()) bounds_ = bounds_.united(label_rect_);
}

void EdgeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = detail(option, p);
  p->setBrush(Qt::NoBrush);
  QPen pen(edge_color(), 1);
  pen.setCosmetic(true);  // one device pixel at any zoom: edges stay visible when zoomed out
  p->setPen(pen);
  p->drawPath(path_);
  if (lod >= kArrowDetail && !arrow_.isEmpty()) {
    p->setBrush(edge_color());
    p->drawPolygon(arrow_);
  }
  if (settings_->edge_labels && lod >= kEdgeLabelDetail && !label_rect_.isNull()) {
    p->setFont(settings_->edge_font);
    p->setPen(edge_color().darker(115));
    p->drawText(label_rect_, Qt::AlignLeft | Qt::AlignVCenter, label_);
  }
}

GroupFrameItem::GroupFrameItem(Kind kind, int target, const QString& title,
                               const QRectF& members_rect, const GraphPaintSettings* settings)
    : kind_(kind),
      target_(target),
      title_(title),
      rect_(frameRect(members_rect)),
      settings_(settings) {
  // Under nodes and edges; bodies and fused groups over the scopes that hold them.
  switch (kind) {
    case Kind::kFusedGroup:
      setZValue(-1);
      setToolTip(
          QStringLiteral("fused group %1 (%2); double-click to collapse").arg(target).arg(title));
      break;
    case Kind::kShapes:
      setZValue(-1);
      setToolTip(QStringLiteral("%1; double-click to fold it again").arg(title));
      break;
    case Kind::kBody:
      setZValue(-2);
      setToolTip(QStringLiteral("%1; double-click to close").arg(title));
      break;
    case Kind::kScope:
      setZValue(-3);
      setToolTip(QStringLiteral("name scope %1; double-click to close").arg(title));
      break;
  }
}

void GroupFrameItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  // Bodies in amber (control flow), fused groups in the selection blue, shape arithmetic in its
  // class's blue, scopes in a quiet grey that nests without noise.
  QColor frame;
  switch (kind_) {
    case Kind::kFusedGroup: frame = selection_color(); break;
    case Kind::kBody: frame = QColor(0xd0, 0x8a, 0x1c); break;
    case Kind::kShapes: frame = class_fill(OpClass::kISDO).darker(150); break;
    case Kind::kScope: frame = QColor(0x80, 0x80, 0x80); break;
  }
  QColor back = frame;
  back.setAlpha(kind_ == Kind::kScope ? 10 : 18);
  p->setBrush(back);
  p->setPen(QPen(frame, 1, kind_ == Kind::kScope ? Qt::SolidLine : Qt::DashLine));
  p->drawRoundedRect(rect_, 6, 6);
  if (detail(option, p) < kTextDetail) return;
  p->setFont(settings_->edge_font);
  p->setPen(frame.darker(kind_ == Kind::kScope ? 130 : 100));
  const QString text =
      kind_ == Kind::kFusedGroup ? QStringLiteral("group %1: %2").arg(target_).arg(title_) : title_;
  // Long scope paths keep their end, where the layer is named.
  const QFontMetricsF fm(settings_->edge_font);
  p->drawText(rect_.adjusted(6, 2, -6, 0), Qt::AlignLeft | Qt::AlignTop,
              fm.elidedText(text, Qt::ElideLeft, rect_.width() - 12));
}

}  // namespace sod2::studio
