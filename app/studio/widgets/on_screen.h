// Whether a view can be seen now: what decides if a view does its (GUI-thread) work or leaves it
// until it is shown.
#pragma once

#include <QRegion>
#include <QWidget>

namespace sod2::studio {

// isVisible() alone is not enough: the docks tabbed behind the current one stay "visible" with
// nothing of them on screen.
inline bool on_screen(const QWidget& w) { return w.isVisible() && !w.visibleRegion().isEmpty(); }

}  // namespace sod2::studio
