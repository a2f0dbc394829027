#include "app/studio/graph/graph_style.h"

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
    case DisplayNodeKind::kGroup: break;
  }
  return class_fill(node.op_class);
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
