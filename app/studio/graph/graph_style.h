// The graph view's fixed palette: fills chosen to read with dark text on both light and dark
// window themes, so a node's class looks the same whatever the desktop uses.
#pragma once

#include <QColor>
#include <QList>
#include <QPair>
#include <QString>

#include <optional>

#include "app/studio/graph/display_graph.h"
#include "app/studio/graph/node_overlay.h"

namespace sod2::studio {

// A node's fill: by SoD² class, or the input/output colour.
QColor node_fill(const DisplayNode& node);
QColor class_fill(OpClass c);
QColor io_fill();
// Text drawn on fills, and the selection outline.
QColor node_text_color();
QColor selection_color();
// Edges and their labels: a mid grey that shows on white and on near-black backgrounds.
QColor edge_color();

// An overlay's fill for `value` on a scale ending at `max_abs`: light yellow to deep red for a
// quantity (a heat map), blue through white to red for a change (faster to slower).
QColor overlay_fill(double value, double max_abs, bool diverging);
// A node the overlay has no value for.
QColor overlay_missing_fill();
// Category `index` of a categorical overlay (where nodes run): distinct hues that the dark node
// text reads on; NodeOverlay::kMixed gets a neutral violet.
QColor overlay_category_fill(double index);
// What a drawn node with overlay value `value` (NodeOverlay::value_of) is filled with.
QColor overlay_node_fill(const NodeOverlay& overlay, std::optional<double> value);

// (name, fill) for every colour the view uses, in the legend's order.
QList<QPair<QString, QColor>> graph_legend_entries();

}  // namespace sod2::studio
