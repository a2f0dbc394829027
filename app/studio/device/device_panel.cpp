#include "app/studio/device/device_panel.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <algorithm>

namespace sod2::studio {

DevicePanel::DevicePanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  state_ = new QLabel(tr("Devices: not listed yet"), this);
  refresh_ = new QPushButton(tr("Refresh"), this);
  top->addWidget(state_, 1);
  top->addWidget(refresh_);
  layout->addLayout(top);
  table_ = new QTableView(this);
  table_->setModel(&model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->hide();
  layout->addWidget(table_, 1);
  auto* form = new QFormLayout;
  runs_ = new QSpinBox(this);
  runs_->setRange(1, 100000);
  runs_->setValue(20);
  warmup_ = new QSpinBox(this);
  warmup_->setRange(0, 1000);
  warmup_->setValue(3);
  threads_ = new QSpinBox(this);
  threads_->setRange(0, 256);
  threads_->setSpecialValueText(tr("one per core"));
  form->addRow(tr("Runs"), runs_);
  form->addRow(tr("Warm-up runs"), warmup_);
  form->addRow(tr("Threads"), threads_);
  duration_ = new QSpinBox(this);
  duration_->setRange(0, 24 * 3600);
  duration_->setSuffix(tr(" s"));
  duration_->setSpecialValueText(tr("off"));
  duration_->setToolTip(
      tr("After the runs, keep the model running this long and chart each window of time: "
         "latency p50/p99, the agent's memory, the device's temperatures and CPU frequencies "
         "(sod2 profile --duration). Cancel stops it and keeps what was measured."));
  window_ = new QSpinBox(this);
  window_->setRange(0, 60);
  window_->setSuffix(tr(" s"));
  window_->setSpecialValueText(tr("auto (a tenth)"));
  window_->setToolTip(tr("The time each point of the sustained run summarises (1 to 60 s)"));
  form->addRow(tr("Keep running"), duration_);
  form->addRow(tr("Window"), window_);
  weights_ = new QComboBox(this);
  weights_->addItem(tr("float32"), static_cast<int>(package::WeightStorage::kAsIs));
  weights_->addItem(tr("float16 (about half the package)"),
                    static_cast<int>(package::WeightStorage::kFloat16));
  weights_->addItem(tr("int8 per channel (about a quarter)"),
                    static_cast<int>(package::WeightStorage::kInt8));
  weights_->setToolTip(
      tr("How the model's float32 weights are stored in the package sent to the device, as "
         "`sod2 compile --weights` does; they are widened back on the device, so the output "
         "changes by the rounding"));
  form->addRow(tr("Weights"), weights_);
  int_inputs_ = new QLineEdit(this);
  int_inputs_->setObjectName("int_inputs");
  int_inputs_->setPlaceholderText(tr("e.g. lengths=time, input_ids=0:30000"));
  int_inputs_->setClearButtonEnabled(true);
  int_inputs_->setToolTip(
      tr("Values of integer inputs: name=lo:hi draws from [lo, hi), name=value uses one value; "
         "bounds may name the model's symbols (lengths=time follows the time slider). "
         "Remembered per model. Empty: 0 or 1, as sod2 profile does."));
  form->addRow(tr("Integer inputs"), int_inputs_);
  input_files_ = new QLineEdit(this);
  input_files_->setObjectName("input_files");
  input_files_->setPlaceholderText(tr("e.g. image=cat.npy, lengths=lengths.pb"));
  input_files_->setClearButtonEnabled(true);
  input_files_->setToolTip(
      tr("Inputs read from files instead of random values: a NumPy .npy array or an ONNX "
         "TensorProto .pb (the test-data layout's input_0.pb). A file's dims set the sizes of "
         "its input, overriding the sliders. Remembered per model."));
  auto* add_file = new QToolButton(this);
  add_file->setObjectName("add_input_file");
  add_file->setText(tr("Add..."));
  add_file->setToolTip(tr("Choose a .npy or .pb file for one of the model's inputs"));
  connect(add_file, &QToolButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Input file"), QString(),
        tr("Tensors (*.npy *.pb);;NumPy arrays (*.npy);;ONNX TensorProto (*.pb);;All files (*)"));
    if (!path.isEmpty()) addInputFile(path);
  });
  auto* files_row = new QHBoxLayout;
  files_row->addWidget(input_files_, 1);
  files_row->addWidget(add_file);
  form->addRow(tr("Input files"), files_row);
  layout->addLayout(form);
  auto* go = new QPushButton(tr("Export && profile"), this);
  go->setToolTip(
      tr("Compile the open model, send it to the selected device, run it and show "
         "where the time goes (Ctrl+P)"));
  layout->addWidget(go);
  connect(go, &QPushButton::clicked, this, &DevicePanel::exportAndProfile);
  connect(refresh_, &QPushButton::clicked, this, &DevicePanel::refresh);
  connect(&watcher_, &QFutureWatcher<DeviceListing>::finished, this,
          [this] { adopt(watcher_.result()); });
}

void DevicePanel::refresh() {
  if (watcher_.isRunning()) return;
  refresh_->setEnabled(false);
  state_->setText(tr("Listing devices..."));
  watcher_.setFuture(QtConcurrent::run(&DeviceListModel::fetch));
}

void DevicePanel::refreshNow() { adopt(DeviceListModel::fetch()); }

void DevicePanel::adopt(DeviceListing listing) {
  const QString previous = selectedDevice();
  const QStringList problems = listing.problems;
  model_.setListing(std::move(listing));
  refresh_->setEnabled(true);
  int usable = 0;
  for (const auto& d : model_.listing().devices) usable += d.usable();
  QString text = tr("%n device(s) ready", nullptr, usable);
  if (!problems.isEmpty()) text += " · " + problems.join("; ");
  state_->setText(text);
  state_->setToolTip(problems.join("\n"));
  selectDevice(previous);
}

QString DevicePanel::selectedDevice() const {
  const QModelIndexList rows = table_->selectionModel()->selectedRows();
  if (rows.isEmpty()) return QStringLiteral("local");
  const QString id = model_.idAt(rows.front().row());
  return id.isEmpty() ? QStringLiteral("local") : id;
}

void DevicePanel::selectDevice(const QString& id) {
  for (int r = 0; r < model_.rowCount(); ++r) {
    if (model_.idAt(r) == id) {
      table_->selectRow(r);
      return;
    }
  }
  if (model_.rowCount() > 0) table_->selectRow(0);
}

QString DevicePanel::intInputRanges() const { return int_inputs_->text(); }

void DevicePanel::setIntInputRanges(const QString& text) { int_inputs_->setText(text); }

QString DevicePanel::inputFiles() const { return input_files_->text(); }

void DevicePanel::setInputFiles(const QString& text) { input_files_->setText(text); }

void DevicePanel::setInputNames(const QStringList& names) { input_names_ = names; }

bool DevicePanel::addInputFile(const QString& path, QString input) {
  if (input.isEmpty()) {
    const QString stem = QFileInfo(path).completeBaseName();
    if (input_names_.contains(stem))
      input = stem;
    else if (input_names_.size() == 1)
      input = input_names_.front();
    else if (!input_names_.isEmpty()) {
      bool ok = false;
      input = QInputDialog::getItem(this, tr("Input file"),
                                    tr("Which input does %1 hold?").arg(QFileInfo(path).fileName()),
                                    input_names_, 0, false, &ok);
      if (!ok) return false;
    } else {
      input = stem;
    }
  }
  // Quoted when the path would split the list.
  const QString shown = path.contains(',') || path.contains('=') ? '"' + path + '"' : path;
  QString text = input_files_->text().trimmed();
  if (!text.isEmpty()) text += ", ";
  input_files_->setText(text + input + "=" + shown);
  return true;
}

package::WeightStorage DevicePanel::weightStorage() const {
  return static_cast<package::WeightStorage>(weights_->currentData().toInt());
}

void DevicePanel::setWeightStorage(package::WeightStorage storage) {
  weights_->setCurrentIndex(weights_->findData(static_cast<int>(storage)));
}

device::RunSettings DevicePanel::settings() const {
  device::RunSettings s;
  s.runs = runs_->value();
  s.warmup = warmup_->value();
  s.threads = threads_->value();
  if (duration_->value() > 0) {
    s.duration_s = duration_->value();
    s.window_s = window_->value() > 0 ? window_->value() : std::clamp(s.duration_s / 10, 1.0, 60.0);
  }
  return s;
}

void DevicePanel::setSustained(int duration_s, int window_s) {
  duration_->setValue(duration_s);
  window_->setValue(window_s);
}

}  // namespace sod2::studio
