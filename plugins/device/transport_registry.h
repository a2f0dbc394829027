// Finds and loads transport plugins (libsod2_transport_<name>.so) at run time. They are looked
// for in $SOD2_PLUGIN_DIR, else <host bin>/../lib/sod2/plugins (the build tree and an install
// alike).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "plugins/device/device_transport.h"

namespace sod2::device {

std::string plugin_dir();
// The transports installed, by name, sorted ("adb", "local").
std::vector<std::string> available_transports();
// Errors: no such plugin (naming the ones there), a file that is not a sod2 transport or comes
// from another build.
Expected<std::unique_ptr<DeviceTransport>> load_transport(const std::string& name);

// "local", "adb", "adb:SERIAL" -> transport name and serial. Errors: an empty or malformed id.
struct DeviceId {
  std::string transport;
  std::string serial;
};
Expected<DeviceId> parse_device_id(const std::string& id);

}  // namespace sod2::device
