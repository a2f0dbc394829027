// How the host reaches a device (DESIGN §7): a transport lists its devices and starts sod2-agent
// on one, giving back the agent's stdin/stdout as a child process of the host. Transports live in
// plugins loaded at run time (transport_registry.h); `local` and `adb` ship with sod2.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "plugins/device/child_process.h"

namespace sod2::device {

struct DeviceEntry {
  std::string id;         // what --device takes: "local", "adb:SERIAL"
  std::string transport;  // "local", "adb"
  std::string serial;     // "" for local
  std::string model;      // "Pixel 7", or this machine's CPU
  std::string state;      // "device" (usable), "unauthorized", "offline", ...
  std::string detail;     // transport-specific text, e.g. "usb:1-1 product:panther"
  bool usable() const { return state == "device"; }
};

struct AgentStart {
  std::string serial;  // "" lets the transport pick its only device (or explain why it cannot)
  std::function<void(const std::string&)> progress;  // "pushing sod2-agent (3.1 MiB)"
  const std::atomic<bool>* cancel = nullptr;
};

class DeviceTransport {
 public:
  virtual ~DeviceTransport() = default;
  virtual std::string name() const = 0;
  // The devices this transport sees now. Errors: its tool is missing or fails (with a fix).
  virtual Expected<std::vector<DeviceEntry>> list() = 0;
  // Starts the agent (installing or updating it first where needed) and returns it running.
  virtual Expected<std::unique_ptr<ChildProcess>> start_agent(const AgentStart& start) = 0;
  // The device the last start_agent used ("adb:SERIAL"), once known.
  virtual DeviceEntry connected_device() const = 0;
};

// Plugins export `extern "C" sod2::device::DeviceTransport* sod2_create_transport(int abi)`,
// returning nullptr when `abi` is not kTransportAbi (a plugin from another build).
inline constexpr int kTransportAbi = 1;
using CreateTransportFn = DeviceTransport* (*)(int abi);

}  // namespace sod2::device
