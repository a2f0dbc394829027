// The Sweep view: the plan that runs as a curve of one input symbol (pipeline::sweep_plan, what
// `sod2 sweep` prints), the other symbols held at the current binding. It draws the arena and the
// lower bound against the symbol, marks where the layout that runs changes and the points that
// cannot be planned, and shows the current binding as a cursor; clicking a point asks for that
// value (valueChosen), which the main window sets in the bindings bar. Over it, the newest
// sweep measured on a device for the same model file, symbol and held values (`sod2 profile
// --sweep`, or "Measure on device", which asks the main window through measureRequested): p50
// latency per point on its own scale, failed points with their reason, and whether the arena the
// device ran in is the one the plan predicted.
#pragma once

#include <QString>
#include <QWidget>
#include <memory>
#include <optional>

#include "app/profiling/profile_sweep.h"
#include "app/studio/document/studio_document.h"
#include "app/studio/document/studio_page.h"
#include "core/pipeline/plan_sweep.h"

class QComboBox;
class QLabel;
class QPushButton;

namespace sod2::studio {

class SweepPlot;

class SweepView : public QWidget, public StudioPage {
  Q_OBJECT

 public:
  explicit SweepView(QWidget* parent = nullptr);
  ~SweepView() override;

  // A new document (nullptr: none) at `binding`: the symbol box lists its input symbols, the
  // first with more than one value is swept.
  void setDocument(std::shared_ptr<const StudioDocument> doc, const sym::Binding& binding);
  // The binding changed: the held symbols take its values (sweeping again when they changed) and
  // the cursor moves to the swept symbol's value.
  void setBinding(const sym::Binding& binding);
  // StudioPage: what the window tells every page.
  void documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                       const std::shared_ptr<const BoundDocument>& bound,
                       const TimelineModel* timeline) override;
  void bindingChanged(const std::shared_ptr<const BoundDocument>& bound,
                      const TimelineModel* timeline) override;
  void setSymbol(const QString& name);
  // Sweeps now if a sweep was due while the view was not on screen (its dock's tab was raised).
  void refreshIfStale();
  QString symbol() const;

  // The last sweep (nullptr before the first, or when it failed: caption() says why).
  const pipeline::PlanSweep* sweep() const { return sweep_ ? &*sweep_ : nullptr; }
  QString caption() const;
  // The value under the cursor line (the binding's), if the swept symbol has one.
  std::optional<int64_t> cursor() const { return cursor_; }
  // The swept value nearest a position of the plot (in the plot widget's coordinates).
  std::optional<int64_t> valueAt(int plot_x) const;
  QWidget* plot() const;

  // The profile store measured sweeps are read from ("": the default path).
  void setDatabase(const std::string& path);
  // A sweep just measured (or nullptr): drawn when it is of the swept symbol at the held values.
  void setMeasured(std::shared_ptr<const profiling::ProfileSweep> measured);
  // The measured sweep drawn over the plan, if any.
  const profiling::ProfileSweep* measured() const;
  // The other input symbols as the sweep holds them (the current binding's values).
  std::map<std::string, int64_t> held() const;

  // At most this many points per sweep (the whole range, on the symbol's multiple).
  static constexpr int64_t kMaxPoints = 64;
  // "Measure on device" runs at most this many of them (a device run per point costs seconds).
  static constexpr int64_t kMaxMeasuredPoints = 8;

 signals:
  void valueChosen(const QString& symbol, qint64 value);
  // "Measure on device": run the package at the sweep's points on the selected device.
  void measureRequested(const QString& symbol, qint64 lo, qint64 hi, qint64 step);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void resweep();
  // The newest recorded sweep matching the swept symbol and held values, from the store.
  void loadMeasured();

  std::shared_ptr<const StudioDocument> doc_;
  sym::Binding binding_;
  std::optional<pipeline::PlanSweep> sweep_;
  std::map<std::string, int64_t> swept_with_;  // the held values the last sweep was made at
  QString error_;
  std::optional<int64_t> cursor_;
  bool stale_ = true;

  std::string db_path_;
  std::shared_ptr<const profiling::ProfileSweep> measured_;
  std::string model_sha256_;  // of doc_'s file, read once
  QString measured_error_;

  QComboBox* symbol_box_ = nullptr;
  QPushButton* measure_button_ = nullptr;
  QLabel* caption_ = nullptr;
  SweepPlot* plot_ = nullptr;
  friend class SweepPlot;
};

}  // namespace sod2::studio
