// The shapes table's view (DESIGN §8). Value and producer names are long paths
// ("/encoder/layers.3/self_attn/MatMul_1") that differ at their end: they take the width the
// short columns leave and elide in the middle, so the layer index stays readable. The short
// columns fit their contents and headers ("dims at binding"); every column stays resizable.
#pragma once

#include <QTableView>

namespace sod2::studio {

class ShapesTableView : public QTableView {
  Q_OBJECT

 public:
  explicit ShapesTableView(QWidget* parent = nullptr);

  // Columns are those of ShapesTableModel (directly or through a proxy that keeps them).
  void setModel(QAbstractItemModel* model) override;
  // Fits the columns to the view's width: done for each new model and on every resize until the
  // user resizes a column by hand.
  void fitColumns();
  // Fits now if a new model arrived while the table was not on screen (fitting samples a
  // thousand rows' text: ~30 ms, left until the table's tab is raised).
  void fitColumnsIfPending();

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  QMetaObject::Connection refit_on_reset_;
  bool user_sized_ = false;
  bool fitting_ = false;
  bool fit_pending_ = false;
};

}  // namespace sod2::studio
