#include "app/studio/widgets/summary_page.h"

#include "app/studio/widgets/on_screen.h"

namespace sod2::studio {

SummaryPage::SummaryPage(QWidget* parent) : ReportView(parent) {}

void SummaryPage::documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                                  const std::shared_ptr<const BoundDocument>& bound,
                                  const TimelineModel*) {
  if (!bound) {
    bound_ = nullptr;
    stale_ = false;
    setPlainText(doc ? tr("The plan cannot be evaluated at the initial binding (the status bar "
                          "says why).")
                     : QString());
    return;
  }
  show(bound);
}

void SummaryPage::bindingChanged(const std::shared_ptr<const BoundDocument>& bound,
                                 const TimelineModel*) {
  show(bound);
}

void SummaryPage::show(const std::shared_ptr<const BoundDocument>& bound) {
  bound_ = bound;
  stale_ = !on_screen(*this);
  if (!stale_) setPlainText(QString::fromStdString(bound_->summary()));
}

void SummaryPage::showEvent(QShowEvent* e) {
  ReportView::showEvent(e);
  if (stale_ && bound_) {
    stale_ = false;
    setPlainText(QString::fromStdString(bound_->summary()));
  }
}

}  // namespace sod2::studio
