// A view that follows the open document (issue #23 item 7): the window tells every page it
// registers (MainWindow::addPage, dock_pages.h) what is open, each new binding and the
// selection, one way for all of them; a page takes what it needs (a model's RDP facts through
// doc->model(), a package's program, the drawn node selected) and ignores the rest. What a page
// is slow to build for a large document (the Shapes table of 50,000 values) it makes in
// prepare(), which the window runs on the opening worker, and takes back in adoptPrepared() on
// the GUI thread; so the window knows no page's data, and a new view is its own files, a row in
// dock_pages.cpp and one addPage line.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "app/studio/document/open_document.h"

namespace sod2::studio {

// What the graph's selection stands for: the drawn node (a node, a fused group's box, a name
// scope's or a shape computation's box, a body's node) and the main-graph nodes it stands for
// (a box: its members), by name and, for an open model, by id in its graph (both empty for a
// package, whose drawing is its compiled nodes).
struct PageSelection {
  std::vector<std::string> names;
  std::vector<NodeId> nodes;
  // The drawn node, valid during the call (a page keeps a copy); null when none is known.
  const DisplayNode* display = nullptr;
  // The hierarchy `display->scope` and `display->shape_cluster` index; null when none.
  std::shared_ptr<const GraphHierarchy> hierarchy;
};

// What a page's prepare() made for a new document; each page derives its own.
struct PreparedPageData {
  virtual ~PreparedPageData() = default;
};

class StudioPage {
 public:
  virtual ~StudioPage() = default;
  // On the opening worker, before the document is shown: whatever the page is slow to build for
  // `doc` (at its initial binding `bound`, null when it cannot be bound there). It runs while
  // the page still shows the previous document, so it reads nothing of the page's own state;
  // a QObject made here belongs to the worker until moved to the page's thread. Null: nothing.
  virtual std::unique_ptr<PreparedPageData> prepare(const OpenDocument& doc,
                                                    const BoundDocument* bound,
                                                    const std::atomic<bool>* cancel) const {
    (void)doc;
    (void)bound;
    (void)cancel;
    return nullptr;
  }
  // On the GUI thread, just before documentChanged: what prepare() made for that document (null
  // when it made nothing).
  virtual void adoptPrepared(std::unique_ptr<PreparedPageData> data) { (void)data; }
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
