#include "app/ofa/remote_family.h"

#include <chrono>

#include "core/version.h"
#include "plugins/device/transport_registry.h"

namespace sod2::ofa {

Expected<std::unique_ptr<RemoteFamily>> RemoteFamily::start(
    const std::string& device, std::shared_ptr<const std::vector<uint8_t>> package,
    const std::atomic<bool>* cancel, const std::function<void(const std::string&)>& progress) {
  std::unique_ptr<RemoteFamily> r(new RemoteFamily());
  SOD2_ASSIGN_OR_RETURN(const device::DeviceId id, device::parse_device_id(device));
  SOD2_ASSIGN_OR_RETURN(r->transport_, device::load_transport(id.transport));
  device::AgentStart start;
  start.serial = id.serial;
  start.cancel = cancel;
  start.progress = progress;
  SOD2_ASSIGN_OR_RETURN(r->child_, r->transport_->start_agent(start));
  r->child_->set_cancel_flag(cancel);
  r->child_->set_idle_timeout(std::chrono::seconds(120));
  r->client_ = std::make_unique<device::AgentClient>(*r->child_);
  SOD2_ASSIGN_OR_RETURN(r->hello_, r->client_->hello(std::string("sod2 ") + SOD2_VERSION_STRING));
  r->device_id_ = r->transport_->connected_device().id;
  if (progress) progress("sending the family package");
  SOD2_ASSIGN_OR_RETURN(r->cached_, r->client_->send_package(*package));
  if (r->client_->variants().empty()) {
    return invalid_argument(
        "the package is a single model, not a family: compile one with "
        "`sod2 compile --family`");
  }
  return r;
}

RemoteFamily::~RemoteFamily() {
  if (child_) child_->close_stdin();
}

Expected<device::FamilyRunReport> RemoteFamily::run(
    const std::vector<rt::HostTensor>& inputs, const device::FamilyRunSettings& settings,
    const std::function<void(const rt::DemoPoint&)>& on_point,
    const std::function<void(const device::FamilyRunReport&)>& on_started) {
  return client_->run_family(inputs, settings, on_point, on_started);
}

}  // namespace sod2::ofa
