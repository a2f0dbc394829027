// The device dock: every device the transports see (refreshed off the GUI thread), the run
// settings, and the "Export & profile" button that starts a profile of the open model on the
// selected device.
#pragma once

#include <QFutureWatcher>
#include <QWidget>

#include "app/studio/device/device_list_model.h"
#include "core/package/package_writer.h"
#include "plugins/device/agent_client.h"

class QComboBox;
class QLabel;
class QLineEdit;
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
  // How the model's float32 weights are sent (sod2 compile --weights): float32, float16 or int8.
  package::WeightStorage weightStorage() const;
  void setWeightStorage(package::WeightStorage storage);
  // The integer inputs' values as typed ("lengths=time, input_ids=0:30000";
  // profiling/int_input_ranges.h reads it).
  QString intInputRanges() const;
  void setIntInputRanges(const QString& text);
  // Inputs read from files as typed ("image=cat.npy, lengths=l.pb"; profiling/input_files.h).
  QString inputFiles() const;
  void setInputFiles(const QString& text);
  // The open model's input names, for Add...: a file goes to the input its stem names, the only
  // input, or the one the person picks.
  void setInputNames(const QStringList& names);
  // Appends "input=path" (input chosen as above when empty); false when the person cancelled.
  bool addInputFile(const QString& path, QString input = {});
  // The sustained run settings() asks for, in seconds (0: none / a tenth of the duration).
  void setSustained(int duration_s, int window_s);
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
  QSpinBox* duration_ = nullptr;  // seconds of sustained running; 0: none
  QSpinBox* window_ = nullptr;    // seconds a window; 0: a tenth of the duration

  QComboBox* weights_ = nullptr;
  QLineEdit* int_inputs_ = nullptr;
  QLineEdit* input_files_ = nullptr;
  QStringList input_names_;
  QFutureWatcher<DeviceListing> watcher_;
};

}  // namespace sod2::studio
