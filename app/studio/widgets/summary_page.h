// The Summary dock (a StudioPage): the open document's report at the current binding — ops by
// class, dims resolved, arena against its bounds. The report walks every tensor (15-25 ms at
// 50,000 nodes), so it is written when the page can be seen, not at every slider move behind
// another tab.
#pragma once

#include "app/studio/document/studio_page.h"
#include "app/studio/widgets/report_view.h"

namespace sod2::studio {

class SummaryPage : public ReportView, public StudioPage {
  Q_OBJECT

 public:
  explicit SummaryPage(QWidget* parent = nullptr);

  void documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                       const std::shared_ptr<const BoundDocument>& bound,
                       const TimelineModel* timeline) override;
  void bindingChanged(const std::shared_ptr<const BoundDocument>& bound,
                      const TimelineModel* timeline) override;

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  void show(const std::shared_ptr<const BoundDocument>& bound);

  std::shared_ptr<const BoundDocument> bound_;
  bool stale_ = false;  // bound_ not yet written
};

}  // namespace sod2::studio
