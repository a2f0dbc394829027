// The profile dock (DESIGN §8): a profile's latency and memory figures, a timeline of one
// measured run (each fused group a block in time, coloured by operator class), a sustained run's
// windows over time, and the groups as a table with a bar per row, If/Loop/Scan groups' body nodes
// indented under them (ProfileTableModel). Selecting a group selects its node in the graph (a
// body node's row, its group's) and the graph's selection selects the group. Sorting orders the
// groups; body rows stay under their group (ProfileSortProxy).
#pragma once

#include <QWidget>
#include <memory>

#include "app/studio/device/profile_table_model.h"
#include "app/studio/document/studio_page.h"

class QLabel;
class QTableView;

namespace sod2::studio {

class RunTimeline;
class SustainedChart;

class ProfileView : public QWidget, public StudioPage {
  Q_OBJECT

 public:
  explicit ProfileView(QWidget* parent = nullptr);

  void setResult(std::shared_ptr<const profiling::ProfileResult> result,
                 std::function<QColor(const profiling::GroupProfile&)> color_of = {});
  const ProfileTableModel* model() const { return &model_; }
  // Selects the group holding this graph node (from the graph's selection); false if none.
  bool selectNode(const std::string& node_name);
  // StudioPage: a profile is of a run, not of the open document; it follows the selection.
  void documentChanged(const std::shared_ptr<const OpenDocument>&,
                       const std::shared_ptr<const BoundDocument>&, const TimelineModel*) override {
  }
  void selectionChanged(const PageSelection& selection) override;
  QString summaryText() const;
  // A sustained run's windows over time; hidden for a run without a duration.
  const SustainedChart* sustainedChart() const { return sustained_; }

 signals:
  // The user picked a group: its anchor node, to select in the graph.
  void groupActivated(const QString& node_name);

 private:
  ProfileTableModel model_;
  ProfileSortProxy* proxy_ = nullptr;
  QLabel* summary_ = nullptr;
  RunTimeline* timeline_ = nullptr;
  SustainedChart* sustained_ = nullptr;
  QTableView* table_ = nullptr;
  bool selecting_ = false;
};

}  // namespace sod2::studio
