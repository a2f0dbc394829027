// The Backend dock (DESIGN §6, §8): where each node of the open model or package runs on the
// Vulkan backend — a header line (the device, what runs on it and on the CPU), "Place on Vulkan",
// the nodes as a table (CPU rows tinted, a "CPU only" filter) and the CPU's reasons with counts,
// as `sod2 plan --backend vulkan` prints them. Placing compiles shaders and makes a session: on a
// worker thread, or on the calling one for --screenshot and tests. A machine without a Vulkan
// device shows why in the header instead of rows.
#pragma once

#include <QFutureWatcher>
#include <QWidget>
#include <memory>
#include <optional>

#include "app/studio/backend/backend_placer.h"
#include "app/studio/backend/backend_table_model.h"
#include "app/studio/document/studio_page.h"

class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace sod2::studio {

class BackendView : public QWidget, public StudioPage {
  Q_OBJECT

 public:
  explicit BackendView(QWidget* parent = nullptr);
  ~BackendView() override;

  // What is open now. Once placed, a new source is placed again (in the background); before,
  // the old rows just go.
  void setSource(PlacementSource source);
  // Places in the background; the view fills in when done.
  void place();
  // Places on the calling thread; the error text (also shown in the header) on failure.
  std::optional<QString> placeNow();
  bool placing() const { return watcher_.isRunning(); }

  const BackendTableModel* model() const { return &model_; }
  QString headerText() const;
  QString reasonsText() const;
  void setCpuOnly(bool on);
  // Selects the row running this graph node (the graph's selection); false if none is shown.
  bool selectNode(const std::string& node_name);
  // StudioPage: what the window tells every page.
  void documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                       const std::shared_ptr<const BoundDocument>& bound,
                       const TimelineModel* timeline) override;
  void selectionChanged(const PageSelection& selection) override;

 signals:
  // The user picked a row: the graph nodes it stands for.
  void nodesActivated(const QStringList& nodes);
  // A placement of the open source ended, placed (model()->placement() has its rows) or not
  // (headerText() says why).
  void placementChanged();

 private:
  struct Outcome {
    std::shared_ptr<rt::DeviceBackend> device;  // made once, kept for later placements
    Expected<PlacementResult> result = invalid_argument("not placed");
  };
  static Outcome run(const PlacementSource& source, std::shared_ptr<rt::DeviceBackend> device);
  void adopt(Outcome outcome);
  void showMessage(const QString& text, bool error);

  BackendTableModel model_;
  PlacementSource source_;
  std::shared_ptr<rt::DeviceBackend> device_;
  bool placed_once_ = false;
  bool stale_ = false;      // the source changed while a placement ran
  bool selecting_ = false;  // following the graph: not a pick to send back
  QFutureWatcher<Outcome> watcher_;

  QLabel* header_ = nullptr;
  QPushButton* place_ = nullptr;
  QCheckBox* cpu_only_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* table_ = nullptr;
  QPlainTextEdit* reasons_ = nullptr;
};

}  // namespace sod2::studio
