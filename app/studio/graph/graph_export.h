// The graph as a picture (issue #23: Netron's SVG/PNG export): the whole drawing or the part in
// view, as SVG (vector, text stays text) or PNG, chosen by the file's suffix.
#pragma once

#include <QColor>
#include <QRectF>
#include <QString>
#include <optional>

class QGraphicsScene;

namespace sod2::studio {

// The largest PNG side: a 50,000-node drawing is scaled down to fit rather than allocating
// gigabytes.
inline constexpr int kMaxPngSide = 16384;

// Renders `area` of `scene` into `path` (.svg or .png); the error a user can act on, or nullopt.
std::optional<QString> export_scene(QGraphicsScene& scene, const QRectF& area, const QString& path,
                                    const QColor& background);

}  // namespace sod2::studio
