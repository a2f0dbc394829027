// The `local` transport: this machine is a device. It starts the host's own sod2-agent as a child
// process; packages are cached in $SOD2_AGENT_DIR, else $XDG_CACHE_HOME/sod2/agent (~/.cache).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "plugins/device/agent_binary.h"
#include "plugins/device/device_transport.h"

namespace sod2::device {
namespace {

std::string agent_dir() {
  if (const char* e = std::getenv("SOD2_AGENT_DIR"); e && *e) return e;
  if (const char* e = std::getenv("XDG_CACHE_HOME"); e && *e) return std::string(e) + "/sod2/agent";
  if (const char* e = std::getenv("HOME"); e && *e) return std::string(e) + "/.cache/sod2/agent";
  return "/tmp/sod2-agent";
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      std::string v = line.substr(line.find(':') + 1);
      return v.substr(v.find_first_not_of(' ') == std::string::npos ? 0 : v.find_first_not_of(' '));
    }
  }
  return host_arch();
}

class LocalTransport final : public DeviceTransport {
 public:
  std::string name() const override { return "local"; }

  Expected<std::vector<DeviceEntry>> list() override { return std::vector<DeviceEntry>{entry()}; }

  Expected<std::unique_ptr<ChildProcess>> start_agent(const AgentStart& start) override {
    if (!start.serial.empty())
      return invalid_argument("the local device has no serial: use --device local");
    SOD2_ASSIGN_OR_RETURN(const std::string agent, find_agent_binary(host_arch()));
    const std::string dir = agent_dir();
    if (start.progress) start.progress("starting " + agent);
    // The folder's parents are made here; the agent makes the last level itself.
    std::string parent = dir.substr(0, dir.rfind('/'));
    for (size_t i = 1; i <= parent.size(); ++i)
      if (i == parent.size() || parent[i] == '/') ::mkdir(parent.substr(0, i).c_str(), 0755);
    return ChildProcess::start({agent, "--dir", dir});
  }

  DeviceEntry connected_device() const override { return entry(); }

 private:
  static DeviceEntry entry() {
    DeviceEntry e;
    e.id = "local";
    e.transport = "local";
    e.model = cpu_name();
    e.state = "device";
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    e.detail = std::string("this machine (") + host + ", " + host_arch() + ")";
    return e;
  }
};

}  // namespace
}  // namespace sod2::device

extern "C" __attribute__((visibility("default"))) sod2::device::DeviceTransport*
sod2_create_transport(int abi) {
  if (abi != sod2::device::kTransportAbi) return nullptr;
  return new sod2::device::LocalTransport();
}
