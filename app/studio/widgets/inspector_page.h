// The Inspector dock (a StudioPage): the selected drawn node at the current binding. A node or a
// fused group's box: the document's report of it (op, class, status, attributes, dims
// symbolic and bound); a name scope's or a shape computation's box: what it holds (its ops and
// classes by count, its first nodes); an If/Loop/Scan: how to open its bodies. The text follows
// the binding; a new document clears it.
#pragma once

#include <memory>
#include <optional>

#include "app/studio/document/studio_page.h"
#include "app/studio/widgets/report_view.h"

namespace sod2::studio {

class InspectorPage : public ReportView, public StudioPage {
  Q_OBJECT

 public:
  explicit InspectorPage(QWidget* parent = nullptr);

  void documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                       const std::shared_ptr<const BoundDocument>& bound,
                       const TimelineModel* timeline) override;
  void bindingChanged(const std::shared_ptr<const BoundDocument>& bound,
                      const TimelineModel* timeline) override;
  void selectionChanged(const PageSelection& selection) override;

 private:
  // The text for the selected node at bound_; empty when there is nothing to say.
  QString text() const;
  // The text for a name scope's or a shape computation's box (of the open model).
  QString boxSummary(const DisplayNode& n) const;
  // "(double-click or Enter opens its 12 body nodes)" under an If/Loop/Scan's report.
  QString bodiesHint(const DisplayNode& n) const;
  void show();

  std::shared_ptr<const OpenDocument> doc_;
  std::shared_ptr<const BoundDocument> bound_;
  // The selected drawn node (a copy: the drawing is replaced when the graph is laid out again)
  // and the hierarchy its scope indexes.
  std::optional<DisplayNode> selected_;
  std::shared_ptr<const GraphHierarchy> hierarchy_;
};

}  // namespace sod2::studio
