#include "app/studio/graph/graph_export.h"

#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>

namespace sod2::studio {

std::optional<QString> export_scene(QGraphicsScene& scene, const QRectF& area, const QString& path,
                                    const QColor& background) {
  if (area.isEmpty() || !std::isfinite(area.width()) || !std::isfinite(area.height()))
    return QStringLiteral("nothing to export: the graph is empty");
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix != QLatin1String("svg") && suffix != QLatin1String("png"))
    return QStringLiteral("%1: export writes .svg or .png files").arg(path);
  // Written whole or not at all: a failed export leaves an older file as it was.
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly))
    return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
  if (suffix == QLatin1String("svg")) {
    QSvgGenerator svg;
    svg.setOutputDevice(&file);
    svg.setSize(area.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), area.size()));
    svg.setTitle(QFileInfo(path).completeBaseName());
    svg.setDescription(QStringLiteral("SoD2 Studio graph"));
    QPainter painter(&svg);
    painter.fillRect(QRectF(QPointF(0, 0), area.size()), background);
    scene.render(&painter, QRectF(QPointF(0, 0), area.size()), area);
    painter.end();
  } else {
    const double scale =
        std::min(1.0, static_cast<double>(kMaxPngSide) / std::max(area.width(), area.height()));
    const QSize size(std::max(1, static_cast<int>(std::ceil(area.width() * scale))),
                     std::max(1, static_cast<int>(std::ceil(area.height() * scale))));
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull())
      return QStringLiteral("cannot allocate a %1x%2 image").arg(size.width()).arg(size.height());
    image.fill(background);
    QPainter painter(&image);
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    scene.render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), area);
    painter.end();
    if (!image.save(&file, "PNG")) return QStringLiteral("cannot encode %1 as PNG").arg(path);
  }
  if (!file.commit()) return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
  return std::nullopt;
}

}  // namespace sod2::studio
