// A view that follows the open document (issue #23 item 7): the window tells every page it
// registers (MainWindow::addPage) what is open, each new binding and the selection, one way for
// all of them; a page takes what it needs (a model's RDP facts through doc->model(), a
// package's program) and ignores the rest.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/studio/document/open_document.h"

namespace sod2::studio {

// What the graph's selection stands for: the main-graph nodes of a drawn node (a box: its
// members), by name and, for an open model, by id in its graph (empty for a package).
struct PageSelection {
  std::vector<std::string> names;
  std::vector<NodeId> nodes;
};

class StudioPage {
 public:
  virtual ~StudioPage() = default;
  // `doc` is what is now open; `bound` and `timeline` are it at the current binding (null when
  // it cannot be bound there, or has no timeline). A page may keep `bound`; `timeline` is the
  // window's, valid until the next call.
  virtual void documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                               const std::shared_ptr<const BoundDocument>& bound,
                               const TimelineModel* timeline) = 0;
  // The sliders moved: the document at the new binding.
  virtual void bindingChanged(const std::shared_ptr<const BoundDocument>& bound,
                              const TimelineModel* timeline) {
    (void)bound;
    (void)timeline;
  }
  // The graph's selection.
  virtual void selectionChanged(const PageSelection& selection) { (void)selection; }
};

}  // namespace sod2::studio
