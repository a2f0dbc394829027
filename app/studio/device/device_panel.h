// The device dock: every device the transports see (refreshed off the GUI thread), the run
// settings, and the "Export & profile" button that starts a profile of the open model on the
// selected device.
#pragma once

#include <QFutureWatcher>
#include <QWidget>

#include "app/studio/device/device_list_model.h"
#include "plugins/device/agent_client.h"

class QCheckBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableView;

namespace sod2::studio {

class DevicePanel : public QWidget {
  Q_OBJECT

 public:
  explicit DevicePanel(QWidget* parent = nullptr);

  // The selected device's id; "local" when none is selected.
  QString selectedDevice() const;
  void selectDevice(const QString& id);
  device::RunSettings settings() const;
  // Whether to send the model's float32 weights at half width (sod2 compile --weights fp16).
  bool halfWidthWeights() const;
  DeviceListModel* model() { return &model_; }
  // Lists devices on this thread (tests, screenshots).
  void refreshNow();

 public slots:
  void refresh();

 signals:
  void exportAndProfile();

 private:
  void adopt(DeviceListing listing);

  DeviceListModel model_;
  QTableView* table_ = nullptr;
  QLabel* state_ = nullptr;
  QPushButton* refresh_ = nullptr;
  QSpinBox* runs_ = nullptr;
  QSpinBox* warmup_ = nullptr;
  QSpinBox* threads_ = nullptr;
  QCheckBox* half_width_ = nullptr;
  QFutureWatcher<DeviceListing> watcher_;
};

}  // namespace sod2::studio
