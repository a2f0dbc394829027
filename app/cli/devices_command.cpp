#include <iomanip>

#include "app/cli/command_line.h"
#include "app/cli/device_commands.h"
#include "plugins/device/transport_registry.h"
#include "runtime/vulkan/vulkan_context.h"

namespace sod2::cli {

int run_devices(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl({{"--vulkan", false, "list the Vulkan devices of this machine instead", ""},
                  {"--help", false, "show this help", ""}});
  try {
    cl.parse(args);
  } catch (const std::invalid_argument& e) {
    err << "sod2 devices: " << e.what() << "\n";
    return 1;
  }
  if (cl.has("--help")) {
    out << "usage: sod2 devices [--vulkan]\n\nLists the devices every transport sees (local: this "
           "machine; adb: Android devices over USB).\nUse the ID with `sod2 profile --device ID`.\n"
           "With --vulkan: this machine's Vulkan devices; use the index with --vulkan-device N.\n";
    return 0;
  }
  if (cl.has("--vulkan")) {
    auto devices = rt::vk::list_vulkan_devices();
    if (!devices.ok()) {
      err << "sod2 devices: " << devices.status().message() << "\n";
      return 1;
    }
    out << std::left << std::setw(8) << "INDEX" << std::setw(18) << "TYPE" << std::setw(10)
        << "VULKAN"
        << "NAME\n";
    for (const auto& d : *devices) {
      out << std::setw(8) << d.index << std::setw(18) << d.type << std::setw(10) << d.api << d.name
          << (d.has_compute ? "" : "  (no compute queue)") << "\n";
    }
    return 0;
  }
  const std::vector<std::string> transports = device::available_transports();
  if (transports.empty()) {
    err << "sod2 devices: no transport plugins in " << device::plugin_dir()
        << " (set SOD2_PLUGIN_DIR to the folder holding libsod2_transport_*.so)\n";
    return 1;
  }
  out << std::left << std::setw(28) << "ID" << std::setw(16) << "STATE" << std::setw(34) << "MODEL"
      << "DETAIL\n";
  int problems = 0;
  for (const std::string& name : transports) {
    auto t = device::load_transport(name);
    if (!t.ok()) {
      err << "sod2 devices: " << t.status().message() << "\n";
      ++problems;
      continue;
    }
    auto list = (*t)->list();
    if (!list.ok()) {
      // One transport failing (adb missing) must not hide the others' devices.
      out << std::setw(28) << (name + ":*") << std::setw(16) << "unavailable" << std::setw(34) << ""
          << list.status().message() << "\n";
      continue;
    }
    for (const device::DeviceEntry& d : *list) {
      out << std::setw(28) << d.id << std::setw(16) << d.state << std::setw(34)
          << (d.model.empty() ? "-" : d.model) << d.detail << "\n";
    }
    if (list->empty()) {
      out << std::setw(28) << (name + ":*") << std::setw(16) << "none" << std::setw(34) << ""
          << "no device attached"
          << "\n";
    }
  }
  return problems ? 1 : 0;
}

}  // namespace sod2::cli
