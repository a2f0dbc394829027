#include "app/studio/widgets/theme.h"

#include <QApplication>
#include <QPalette>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>

namespace sod2::studio {
namespace {

QPalette dark_palette() {
  QPalette p;
  const QColor window(0x2b, 0x2b, 0x2e), base(0x1e, 0x1e, 0x20), text(0xe6, 0xe6, 0xe6);
  const QColor disabled(0x80, 0x80, 0x80), highlight(0x2f, 0x6f, 0xd6);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, QColor(0x3a, 0x3a, 0x3e));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, disabled);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::red);
  p.setColor(QPalette::Link, QColor(0x6a, 0xa8, 0xff));
  p.setColor(QPalette::Highlight, highlight);
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Light, QColor(0x45, 0x45, 0x4a));
  p.setColor(QPalette::Midlight, QColor(0x3a, 0x3a, 0x3e));
  p.setColor(QPalette::Mid, QColor(0x55, 0x55, 0x5a));
  p.setColor(QPalette::Dark, QColor(0x18, 0x18, 0x1a));
  p.setColor(QPalette::Shadow, Qt::black);
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, disabled);
  return p;
}

}  // namespace

Theme theme_from_name(const QString& name, bool* ok) {
  if (ok) *ok = true;
  if (name == "light") return Theme::kLight;
  if (name == "dark") return Theme::kDark;
  if (name != "system" && ok) *ok = false;
  return Theme::kSystem;
}

QString theme_name(Theme theme) {
  switch (theme) {
    case Theme::kLight: return "light";
    case Theme::kDark: return "dark";
    case Theme::kSystem: break;
  }
  return "system";
}

void apply_theme(Theme theme) {
  // The platform's own style and palette, captured once before we change anything.
  static const QString system_style = QApplication::style()->name();
  static const QPalette system_palette = QApplication::palette();
  if (theme == Theme::kSystem) {
    QApplication::setStyle(QStyleFactory::create(system_style));
    QApplication::setPalette(system_palette);
    return;
  }
  QApplication::setStyle(QStyleFactory::create("Fusion"));
  QApplication::setPalette(theme == Theme::kDark ? dark_palette()
                                                 : QApplication::style()->standardPalette());
}

Theme saved_theme() {
  return theme_from_name(QSettings().value("view/theme", "system").toString());
}

void save_theme(Theme theme) { QSettings().setValue("view/theme", theme_name(theme)); }

}  // namespace sod2::studio
