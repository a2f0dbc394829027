// Two memory plans side by side (issue #6): the current plan at the current binding on the left,
// and on the right either the same plan at a second binding (its own sliders) or the plan made
// without fusion at the current binding — what fusing the groups saves. Both timelines keep the
// same byte scale, so the picture compares sizes honestly.
#pragma once

#include <QFutureWatcher>
#include <QWidget>
#include <memory>

#include "app/studio/document/studio_document.h"
#include "app/studio/document/studio_page.h"
#include "app/studio/plan/timeline_model.h"

class QComboBox;
class QLabel;

namespace sod2::studio {

class BindingsBar;
class TimelineView;

class PlanCompare : public QWidget, public StudioPage {
  Q_OBJECT

 public:
  enum class Mode { kOtherBinding, kWithoutFusion };

  explicit PlanCompare(QWidget* parent = nullptr);
  ~PlanCompare() override;

  // A new document: `current` is the main window's timeline (not owned; null when the plan could
  // not be instantiated). Forgets the unfused plan of the previous document.
  void setDocument(std::shared_ptr<const StudioDocument> doc, const TimelineModel* current,
                   const sym::Binding& binding);
  // The main binding changed (the `current` model was rebound or replaced).
  void setCurrent(const TimelineModel* current, const sym::Binding& binding);
  // StudioPage: what the window tells every page.
  void documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                       const std::shared_ptr<const BoundDocument>& bound,
                       const TimelineModel* timeline) override;
  void bindingChanged(const std::shared_ptr<const BoundDocument>& bound,
                      const TimelineModel* timeline) override;
  void setMode(Mode mode);
  Mode mode() const { return mode_; }
  // Sets the right-hand binding (kOtherBinding). Returns false with a message on a bad binding.
  bool setOtherBinding(const std::map<std::string, int64_t>& values, QString* error = nullptr);

  // The plan without fusion is made on a worker (about a second at 10,000 nodes); this waits for
  // it and shows it (screenshots, tests). No-op when nothing is being planned.
  void finishPlanning();
  bool isPlanning() const { return unfused_watcher_.isRunning(); }

  // The right-hand plan is made only while the view can be seen (it instantiates a plan and a
  // timeline on the GUI thread: ~170 ms at 50,000 nodes); asking for it makes it now (waiting
  // for the plan without fusion if it is being made).
  const TimelineModel* rightModel();
  QString rightCaption();
  // Makes the right-hand plan asked for while hidden, if the view is on screen now (its dock's
  // tab was raised).
  void refreshIfStale();

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  // `now`: even while hidden.
  void refreshRight(bool now = false);
  void refreshCaptions();
  void shareScale();

  std::shared_ptr<const StudioDocument> doc_;
  const TimelineModel* current_ = nullptr;
  sym::Binding binding_;
  Mode mode_ = Mode::kOtherBinding;
  std::map<std::string, int64_t> other_values_;
  struct Unfused {
    std::shared_ptr<const StudioDocument> doc;  // the document it was planned for
    std::shared_ptr<opt::MemoryPlan> plan;
    QString error;
  };
  void adoptUnfused(const Unfused& r);

  std::shared_ptr<opt::MemoryPlan> unfused_plan_;  // made on first use, per document
  QString unfused_error_;
  QFutureWatcher<Unfused> unfused_watcher_;
  std::unique_ptr<TimelineModel> right_model_;
  QString right_error_;
  bool right_stale_ = false;  // refreshRight was asked while hidden

  QComboBox* mode_box_ = nullptr;
  BindingsBar* other_bar_ = nullptr;
  TimelineView* left_ = nullptr;
  TimelineView* right_ = nullptr;
  QLabel* left_caption_ = nullptr;
  QLabel* right_caption_ = nullptr;
};

}  // namespace sod2::studio
