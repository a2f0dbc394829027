// Light and dark palettes (issue #6: "light and dark palettes"). The system theme is whatever the
// platform gives; light and dark are Fusion palettes of our own, so they look the same on every
// desktop. The choice persists in QSettings under "view/theme".
#pragma once

#include <QString>

namespace sod2::studio {

enum class Theme { kSystem, kLight, kDark };

// "system", "light", "dark"; anything else is nullopt-like kSystem with ok = false.
Theme theme_from_name(const QString& name, bool* ok = nullptr);
QString theme_name(Theme theme);

// Applies to the whole application (call after QApplication exists).
void apply_theme(Theme theme);
Theme saved_theme();
void save_theme(Theme theme);

}  // namespace sod2::studio
