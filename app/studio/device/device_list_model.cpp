#include "app/studio/device/device_list_model.h"

#include <QBrush>
#include <QColor>

#include "plugins/device/transport_registry.h"

namespace sod2::studio {

DeviceListing DeviceListModel::fetch() {
  DeviceListing out;
  const std::vector<std::string> names = device::available_transports();
  if (names.empty()) {
    out.problems << QString("no transport plugins in %1 (set SOD2_PLUGIN_DIR)")
                        .arg(QString::fromStdString(device::plugin_dir()));
  }
  for (const std::string& name : names) {
    auto t = device::load_transport(name);
    if (!t.ok()) {
      out.problems << QString::fromStdString(t.status().message());
      continue;
    }
    auto list = (*t)->list();
    if (!list.ok()) {
      out.problems << QString::fromStdString(name + ": " + list.status().message());
      continue;
    }
    for (device::DeviceEntry& e : *list) out.devices.push_back(std::move(e));
  }
  return out;
}

void DeviceListModel::setListing(DeviceListing listing) {
  beginResetModel();
  listing_ = std::move(listing);
  endResetModel();
}

QString DeviceListModel::idAt(int row) const {
  if (row < 0 || row >= static_cast<int>(listing_.devices.size())) return {};
  return QString::fromStdString(listing_.devices[static_cast<size_t>(row)].id);
}

int DeviceListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(listing_.devices.size());
}

int DeviceListModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant DeviceListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const device::DeviceEntry& d = listing_.devices[static_cast<size_t>(index.row())];
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kId: return QString::fromStdString(d.id);
      case kState: return QString::fromStdString(d.state);
      case kModel: return QString::fromStdString(d.model);
      case kDetail: return QString::fromStdString(d.detail);
    }
  }
  if (role == Qt::ForegroundRole && index.column() == kState && !d.usable())
    return QBrush(QColor(0xc0, 0x39, 0x2b));
  if (role == Qt::ToolTipRole && !d.usable()) {
    if (d.state == "unauthorized") return tr("Accept the USB debugging prompt on the device.");
    if (d.state == "offline") return tr("Unplug and replug the device.");
    return QString::fromStdString(d.detail);
  }
  return {};
}

QVariant DeviceListModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Device", "State", "Model", "Detail"};
  return section >= 0 && section < kColumns ? tr(names[section]) : QVariant();
}

}  // namespace sod2::studio
