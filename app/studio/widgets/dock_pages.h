// Every view of the studio window, and the docked ones registered in one place (issue #23 item 7):
// the dock's object name (saved layouts key on it), title, area, the dock it is tabbed with and
// whether the default layout shows it. The window makes each dock from this table with
// MainWindow::addPage(view, widget); dockOf, viewWidget, showView, the View menu and the
// default layout read it, so a new view is its widget's files, an enum value and one row here.
#pragma once

#include <Qt>
#include <vector>

namespace sod2::studio {

enum class StudioView {
  kWindow,
  kGraph,
  kInspector,
  kShapes,
  kMemory,
  kCompare,
  kSweep,
  kSummary,
  kDevices,
  kProfile,
  kHistory,
  kVariants,
  kBackend
};

struct DockPage {
  StudioView view;
  const char* name;   // QDockWidget::objectName: QMainWindow::saveState keys the layout by it
  const char* title;  // translated in the MainWindow context
  Qt::DockWidgetArea area;
  StudioView tab_with;  // tabbed behind this page's dock; kWindow: not tabbed
  bool shown;           // in the default layout (else opened from the View or Device menu)
};

// In the order the docks are made: a page is tabbed with one made before it.
const std::vector<DockPage>& dock_pages();
const DockPage* dock_page(StudioView view);

}  // namespace sod2::studio
