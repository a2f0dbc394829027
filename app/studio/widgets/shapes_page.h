// The Shapes dock (a StudioPage): every value of the open model with its rank and dims, symbolic
// and at the current binding, its bytes and producer; a filter over all columns and a CSV copy.
// The table follows the binding and the graph's selection (the selected node's first output).
// Its model (50,000 rows take a while) is built and bound on the opening worker (prepare). A
// package carries no RDP facts: its page is empty.
#pragma once

#include <QWidget>
#include <memory>

#include "app/studio/document/studio_page.h"
#include "app/studio/plan/shapes_table_model.h"

class QLineEdit;
class QSortFilterProxyModel;

namespace sod2::studio {

class ShapesTableView;

class ShapesPage : public QWidget, public StudioPage {
  Q_OBJECT

 public:
  explicit ShapesPage(QWidget* parent = nullptr);
  ~ShapesPage() override;

  // The table's model; null before a model is opened, and for a package.
  const ShapesTableModel* model() const { return model_.get(); }
  // The value of the selected row; kNoValue when none is selected.
  ValueId selectedValue() const;

  // A model's table, built and bound at the initial binding (on the opening worker, then moved
  // to this page's thread); null for a package.
  std::unique_ptr<PreparedPageData> prepare(const OpenDocument& doc, const BoundDocument* bound,
                                            const std::atomic<bool>* cancel) const override;
  void adoptPrepared(std::unique_ptr<PreparedPageData> data) override;
  void documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                       const std::shared_ptr<const BoundDocument>& bound,
                       const TimelineModel* timeline) override;
  void bindingChanged(const std::shared_ptr<const BoundDocument>& bound,
                      const TimelineModel* timeline) override;
  void selectionChanged(const PageSelection& selection) override;

 signals:
  // A row was clicked: the main-graph node producing its value.
  void producerChosen(NodeId node);
  // "Copy as CSV" put this many rows on the clipboard.
  void copied(int rows);

 protected:
  // A table behind another tab is neither sorted nor fitted when its model arrives: it is when
  // the tab is raised.
  void showEvent(QShowEvent* e) override;

 private:
  std::shared_ptr<const OpenDocument> doc_;
  std::unique_ptr<ShapesTableModel> model_;
  QLineEdit* filter_ = nullptr;
  ShapesTableView* view_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
};

}  // namespace sod2::studio
