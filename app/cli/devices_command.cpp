#include "app/cli/command_line.h"
#include "app/cli/device_commands.h"
#include "core/text/text_table.h"
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
    text::TextTable table({{"INDEX", text::Align::kRight}, {"TYPE"}, {"VULKAN"}, {"NAME"}});
    for (const auto& d : *devices) {
      table.add_row({std::to_string(d.index), d.type, d.api,
                     d.name + (d.has_compute ? "" : "  (no compute queue)")});
    }
    out << table.str();
    return 0;
  }
  const std::vector<std::string> transports = device::available_transports();
  if (transports.empty()) {
    err << "sod2 devices: no transport plugins in " << device::plugin_dir()
        << " (set SOD2_PLUGIN_DIR to the folder holding libsod2_transport_*.so)\n";
    return 1;
  }
  text::TextTable table(
      {{"ID", text::Align::kLeft, 40}, {"STATE"}, {"MODEL", text::Align::kLeft, 40}, {"DETAIL"}});
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
      table.add_row({name + ":*", "unavailable", "", list.status().message()});
      continue;
    }
    for (const device::DeviceEntry& d : *list) {
      table.add_row({d.id, d.state, d.model.empty() ? "-" : d.model, d.detail});
    }
    if (list->empty()) {
      table.add_row({name + ":*", "none", "", "no device attached"});
    }
  }
  out << table.str();
  return problems ? 1 : 0;
}

}  // namespace sod2::cli
