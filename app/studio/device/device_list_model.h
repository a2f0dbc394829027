// The devices every transport sees, as a table (the studio's device panel). Listing runs adb, so
// fetch() is called off the GUI thread; the model only holds its result.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>
#include <vector>

#include "plugins/device/device_transport.h"

namespace sod2::studio {

struct DeviceListing {
  std::vector<device::DeviceEntry> devices;
  QStringList problems;  // a transport that could not list ("adb is not installed ...")
};

class DeviceListModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kId, kState, kModel, kDetail, kColumns };
  using QAbstractTableModel::QAbstractTableModel;

  // Every transport's devices; blocking (adb may take seconds).
  static DeviceListing fetch();

  void setListing(DeviceListing listing);
  const DeviceListing& listing() const { return listing_; }
  // The row's device id ("local", "adb:SERIAL"); "" for a row out of range.
  QString idAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  DeviceListing listing_;
};

}  // namespace sod2::studio
