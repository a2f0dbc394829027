// The main window's dock layout: the default one, the one the user left (QSettings), which widget
// and dock hold each view, and the views rendered at a requested size (--screenshot).
#include <QApplication>
#include <QDockWidget>
#include <QLayout>
#include <QPlainTextEdit>
#include <QSettings>
#include <QShowEvent>
#include <algorithm>

#include "app/studio/backend/backend_view.h"
#include "app/studio/device/device_panel.h"
#include "app/studio/device/history_view.h"
#include "app/studio/device/profile_view.h"
#include "app/studio/graph/graph_view.h"
#include "app/studio/ofa/variants_view.h"
#include "app/studio/plan/timeline_view.h"
#include "app/studio/widgets/main_window.h"
#include "app/studio/widgets/plan_compare.h"
#include "app/studio/widgets/sweep_view.h"

namespace sod2::studio {
namespace {

// Bumped whenever the docks change in a way a saved layout cannot know about. A layout saved by
// an older studio is dropped rather than restored: version 0 (before this key) let the Backend
// dock, added later, come back as the active bottom tab over 60% of the window.
constexpr int kLayoutVersion = 2;

// Of the window's height: the bottom docks' share by default (the graph keeps the rest, less
// the menu, tool and status bars).
constexpr double kBottomDockShare = 0.27;

}  // namespace

void MainWindow::restoreLayout() {
  // Docks shown on demand (Device menu, Export & profile): closed in the default layout.
  for (const DockPage& page : dock_pages())
    if (!page.shown) dockOf(page.view)->hide();
  memory_dock_->raise();
  const QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  const bool restored = settings.value("window/layout_version").toInt() == kLayoutVersion &&
                        restoreState(settings.value("window/state").toByteArray(), kLayoutVersion);
  default_layout_pending_ = !restored;
}

void MainWindow::saveLayout() {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState(kLayoutVersion));
  settings.setValue("window/layout_version", kLayoutVersion);
}

void MainWindow::applyDefaultLayout() {
  memory_dock_->raise();
  // Dock sizes are only kept once the window has its size: hence at the first show.
  resizeDocks({memory_dock_}, {static_cast<int>(height() * kBottomDockShare)}, Qt::Vertical);
  // The inspector's lines are long (dims at the binding): room, but not half the window.
  resizeDocks({inspector_dock_}, {std::min(460, width() / 3)}, Qt::Horizontal);
}

void MainWindow::showEvent(QShowEvent* e) {
  QMainWindow::showEvent(e);
  if (!default_layout_pending_) return;
  default_layout_pending_ = false;
  applyDefaultLayout();
}

QImage MainWindow::grabView(StudioView view, QSize size) {
  QWidget* frame = this;  // resized until the view has `size`
  if (view == StudioView::kGraph) {
    for (QDockWidget* d : findChildren<QDockWidget*>()) d->hide();
  } else if (QDockWidget* dock = dockOf(view)) {
    dock->setFloating(true);
    dock->show();
    frame = dock;
  }
  resize(size);
  show();
  showView(view);
  if (frame != this) frame->resize(size);
  QWidget* w = viewWidget(view);
  // What surrounds the view (menus, tool and status bars, a dock's title) depends on the style
  // and platform: measured once laid out, then added.
  for (int tries = 0; tries < 4; ++tries) {
    QApplication::processEvents();
    if (frame->layout()) frame->layout()->activate();
    if (w->size() == size) break;
    frame->resize(frame->size() + size - w->size());
  }
  return w->grab().toImage();
}

QWidget* MainWindow::viewWidget(StudioView view) const {
  if (view == StudioView::kWindow) return const_cast<MainWindow*>(this);
  const auto it = page_widgets_.find(view);
  return it != page_widgets_.end() ? it->second : graph_view_;
}

QDockWidget* MainWindow::dockOf(StudioView view) const {
  const auto it = docks_.find(view);
  return it != docks_.end() ? it->second : nullptr;
}

void MainWindow::showView(StudioView view) {
  if (QDockWidget* dock = dockOf(view)) dock->raise();
}

}  // namespace sod2::studio
