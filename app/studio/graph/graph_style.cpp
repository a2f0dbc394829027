#include "app/studio/graph/graph_style.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace sod2::studio {

QColor class_fill(OpClass c) {
  switch (c) {
    case OpClass::kISDO: return QColor(0x9e, 0xca, 0xe1);    // blue: shape-only ops
    case OpClass::kISDOS: return QColor(0xa1, 0xd9, 0x9b);   // green: static-shape compute
    case OpClass::kISVDOS: return QColor(0xfd, 0xd4, 0x9e);  // amber: shape needs values
    case OpClass::kEDO: return QColor(0xfc, 0x92, 0x72);     // red: shape known after running
    case OpClass::kUnknown: return QColor(0xd0, 0xd0, 0xd0);
  }
  return QColor(0xd0, 0xd0, 0xd0);
}

QColor io_fill() { return QColor(0xc9, 0xb8, 0xe8); }

QColor node_fill(const DisplayNode& node) {
  switch (node.kind) {
    case DisplayNodeKind::kGraphInput:
    case DisplayNodeKind::kGraphOutput: return io_fill();
    case DisplayNodeKind::kOp:
    case DisplayNodeKind::kGroup:
    case DisplayNodeKind::kScope:
    case DisplayNodeKind::kShapes: break;
  }
  return class_fill(node.op_class);
}

namespace {
QColor mix(const QColor& a, const QColor& b, double t) {
  t = std::clamp(t, 0.0, 1.0);
  return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                          static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                          static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
}
}  // namespace

QColor overlay_fill(double value, double max_abs, bool diverging) {
  // Dark ends stay light enough for the dark node text to read on them.
  const QColor white(0xf7, 0xf7, 0xf7), red(0xe0, 0x4a, 0x3a), blue(0x4f, 0x8f, 0xd0);
  if (!(max_abs > 0) || !std::isfinite(value)) return diverging ? white : QColor(0xff, 0xf5, 0xc8);
  const double t = std::clamp(value / max_abs, -1.0, 1.0);
  if (diverging) return t >= 0 ? mix(white, red, t) : mix(white, blue, -t);
  // Sequential through amber: a heat map where the hottest groups stand out.
  const QColor cold(0xff, 0xf5, 0xc8), warm(0xfd, 0xae, 0x61);
  return t < 0.5 ? mix(cold, warm, t * 2) : mix(warm, red, (t - 0.5) * 2);
}

QColor overlay_missing_fill() { return QColor(0xe4, 0xe4, 0xe4); }

QColor overlay_category_fill(double index) {
  // The device first (green), then the CPU's reasons: light, distinct, none of them grey.
  static const QColor kPalette[] = {{0x8f, 0xd1, 0x7f}, {0xf6, 0xc1, 0x77}, {0x9e, 0xc5, 0xf0},
                                    {0xf2, 0x9a, 0x8e}, {0xe8, 0xe0, 0x7a}, {0x8e, 0xd9, 0xd3},
                                    {0xf0, 0xa8, 0xd0}, {0xc9, 0xb2, 0x8f}};
  if (index < 0 || !std::isfinite(index)) return QColor(0xc8, 0xb6, 0xe8);
  return kPalette[static_cast<size_t>(index) % std::size(kPalette)];
}

QColor overlay_node_fill(const NodeOverlay& overlay, std::optional<double> value) {
  if (!value) return overlay_missing_fill();
  if (overlay.categorical()) return overlay_category_fill(*value);
  return overlay_fill(*value, overlay.max_abs(), overlay.diverging);
}

QColor node_text_color() { return QColor(0x1a, 0x1a, 0x1a); }
QColor selection_color() { return QColor(0x1f, 0x6f, 0xeb); }
QColor edge_color() { return QColor(0x8c, 0x8c, 0x8c); }

QList<QPair<QString, QColor>> graph_legend_entries() {
  QList<QPair<QString, QColor>> out;
  for (OpClass c :
       {OpClass::kISDO, OpClass::kISDOS, OpClass::kISVDOS, OpClass::kEDO, OpClass::kUnknown})
    out.append({QString::fromLatin1(op_class_name(c)), class_fill(c)});
  out.append({QStringLiteral("input / output"), io_fill()});
  return out;
}

}  // namespace sod2::studio
