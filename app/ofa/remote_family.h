// A family package running on a device through its agent (PROTOCOL.md §Families): the agent is
// started through the device's transport, greeted, sent the package (skipped when the device has
// it by hash), and then runs the Dynamic-OFA demo as often as asked, streaming every run back.
// What `sod2 ofa --device adb` and the studio's Variants dock (Run demo on a device) share.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "plugins/device/agent_client.h"
#include "plugins/device/device_transport.h"

namespace sod2::ofa {

class RemoteFamily {
 public:
  // `progress` sees each step ("pushing sod2-agent"); `cancel` stops waiting on the device.
  // Errors: the device, the transport, the agent (named), or a package that is not a family.
  static Expected<std::unique_ptr<RemoteFamily>> start(
      const std::string& device, std::shared_ptr<const std::vector<uint8_t>> package,
      const std::atomic<bool>* cancel, const std::function<void(const std::string&)>& progress);
  ~RemoteFamily();

  const std::string& device_id() const { return device_id_; }
  const device::AgentHello& hello() const { return hello_; }
  bool package_was_cached() const { return cached_; }
  // Small to large, as the device orders them.
  const std::vector<device::FamilyVariantInfo>& variants() const { return client_->variants(); }

  Expected<device::FamilyRunReport> run(
      const std::vector<rt::HostTensor>& inputs, const device::FamilyRunSettings& settings,
      const std::function<void(const rt::DemoPoint&)>& on_point = {},
      const std::function<void(const device::FamilyRunReport&)>& on_started = {});

 private:
  RemoteFamily() = default;
  std::unique_ptr<device::DeviceTransport> transport_;
  std::unique_ptr<device::ChildProcess> child_;
  std::unique_ptr<device::AgentClient> client_;
  std::string device_id_;
  device::AgentHello hello_;
  bool cached_ = false;
};

}  // namespace sod2::ofa
