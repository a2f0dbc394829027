// The docked views' one table (issue #23 item 7). Each row's widget is made in
// MainWindow::buildDocks and docked by addPage; a widget that is also a StudioPage
// (studio_page.h: inspector, shapes, memory, compare, sweep, summary, the device side's pages)
// is then told what is open, each binding and the selection, and may prepare its data on the
// opening worker, with no code of its own in the window.
#include "app/studio/widgets/dock_pages.h"

#include <QtGlobal>

namespace sod2::studio {

const std::vector<DockPage>& dock_pages() {
  using V = StudioView;
  static const std::vector<DockPage> kPages = {
      {V::kInspector, "inspector", QT_TRANSLATE_NOOP("MainWindow", "Inspector"),
       Qt::RightDockWidgetArea, V::kWindow, true},
      {V::kShapes, "shapes", QT_TRANSLATE_NOOP("MainWindow", "Shapes"), Qt::BottomDockWidgetArea,
       V::kWindow, true},
      {V::kMemory, "memory", QT_TRANSLATE_NOOP("MainWindow", "Memory plan"),
       Qt::BottomDockWidgetArea, V::kShapes, true},
      {V::kCompare, "compare", QT_TRANSLATE_NOOP("MainWindow", "Compare plans"),
       Qt::BottomDockWidgetArea, V::kMemory, true},
      {V::kSweep, "sweep", QT_TRANSLATE_NOOP("MainWindow", "Sweep"), Qt::BottomDockWidgetArea,
       V::kCompare, true},
      {V::kSummary, "summary", QT_TRANSLATE_NOOP("MainWindow", "Summary"), Qt::RightDockWidgetArea,
       V::kInspector, true},
      // The device side: shown by Export & profile and the Device menu.
      {V::kDevices, "devices", QT_TRANSLATE_NOOP("MainWindow", "Devices"), Qt::LeftDockWidgetArea,
       V::kWindow, false},
      {V::kProfile, "profile", QT_TRANSLATE_NOOP("MainWindow", "Profile"), Qt::BottomDockWidgetArea,
       V::kCompare, false},
      {V::kHistory, "history", QT_TRANSLATE_NOOP("MainWindow", "History"), Qt::BottomDockWidgetArea,
       V::kProfile, false},
      {V::kVariants, "variants", QT_TRANSLATE_NOOP("MainWindow", "Variants"),
       Qt::BottomDockWidgetArea, V::kHistory, false},
      {V::kBackend, "backend", QT_TRANSLATE_NOOP("MainWindow", "Backend"), Qt::BottomDockWidgetArea,
       V::kVariants, false},
  };
  return kPages;
}

const DockPage* dock_page(StudioView view) {
  for (const DockPage& p : dock_pages())
    if (p.view == view) return &p;
  return nullptr;
}

}  // namespace sod2::studio
