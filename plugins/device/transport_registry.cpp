#include "plugins/device/transport_registry.h"

#include "runtime/exec/process_info.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "plugins/device/agent_binary.h"

namespace sod2::device {
namespace {
constexpr const char* kPrefix = "libsod2_transport_";
constexpr const char* kSuffix = ".so";
}  // namespace

std::string plugin_dir() {
  if (const char* e = std::getenv("SOD2_PLUGIN_DIR"); e && *e) return e;
  return rt::executable_dir() + "/../lib/sod2/plugins";
}

std::vector<std::string> available_transports() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(plugin_dir(), ec)) {
    const std::string f = entry.path().filename().string();
    const std::string prefix = kPrefix, suffix = kSuffix;
    if (f.size() > prefix.size() + suffix.size() && f.rfind(prefix, 0) == 0 &&
        f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0)
      names.push_back(f.substr(prefix.size(), f.size() - prefix.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

Expected<std::unique_ptr<DeviceTransport>> load_transport(const std::string& name) {
  const std::string path = plugin_dir() + "/" + kPrefix + name + kSuffix;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    std::string have;
    for (const std::string& n : available_transports()) have += (have.empty() ? "" : ", ") + n;
    return not_found("no device transport '" + name + "' (" +
                     (have.empty() ? "no transport plugins in " + plugin_dir() +
                                         "; set SOD2_PLUGIN_DIR to the folder holding them"
                                   : "have: " + have) +
                     ")");
  }
  // Plugins stay loaded for the life of the process: transports may outlive their creator's scope.
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) return io_error("cannot load transport plugin " + path + ": " + ::dlerror());
  auto create = reinterpret_cast<CreateTransportFn>(::dlsym(lib, "sod2_create_transport"));
  if (!create) return invalid_argument(path + " is not a sod2 transport plugin");
  DeviceTransport* t = create(kTransportAbi);
  if (!t) {
    return unsupported(path + " was built for another version of sod2 (transport ABI " +
                       std::to_string(kTransportAbi) + " expected): rebuild it");
  }
  return std::unique_ptr<DeviceTransport>(t);
}

Expected<DeviceId> parse_device_id(const std::string& id) {
  if (id.empty()) return invalid_argument("an empty device id (try `sod2 devices`)");
  const size_t colon = id.find(':');
  DeviceId d;
  d.transport = id.substr(0, colon);
  if (colon != std::string::npos) {
    d.serial = id.substr(colon + 1);
    if (d.serial.empty())
      return invalid_argument("device '" + id +
                              "' has an empty serial (adb:SERIAL, see `sod2 devices`)");
  }
  if (d.transport.empty()) return invalid_argument("device '" + id + "' names no transport");
  return d;
}

}  // namespace sod2::device
