#include "app/backend/backend_placement.h"

#include "runtime/vulkan/vulkan_backend.h"

namespace sod2::backend {

Expected<std::shared_ptr<rt::DeviceBackend>> make_backend(const BackendChoice& choice) {
  if (!choice.vulkan) return std::shared_ptr<rt::DeviceBackend>();
  rt::vk::VulkanOptions options;
  options.device = choice.vulkan_device;
  options.validation = choice.validation;
  SOD2_ASSIGN_OR_RETURN(std::shared_ptr<rt::vk::VulkanContext> context,
                        rt::vk::VulkanContext::create(options));
  SOD2_ASSIGN_OR_RETURN(std::shared_ptr<rt::vk::VulkanBackend> backend,
                        rt::vk::VulkanBackend::create(context));
  return std::shared_ptr<rt::DeviceBackend>(backend);
}

int validation_errors(const rt::DeviceBackend* backend, std::vector<std::string>* messages) {
  const auto* vb = dynamic_cast<const rt::vk::VulkanBackend*>(backend);
  if (!vb) return 0;
  if (messages) *messages = vb->context().validation_messages();
  return vb->context().validation_errors();
}

BackendPlacement placement_of(const rt::Session& session) {
  BackendPlacement p;
  const rt::DeviceBackend* b = session.backend();
  if (!b) return p;
  p.backend = b->name();
  const rt::GraphDesc& g = session.program().graphs[0];
  const auto& where = session.node_backends();
  for (size_t n = 0; n < where.size() && n < g.nodes.size(); ++n) {
    const rt::NodeDesc& node = g.nodes[n];
    PlacementRow row{node.info.name,  node.info.op_type, node.fused_nodes, node.fused_op_types,
                     where[n].device, where[n].reason,   where[n].why_cpu};
    if (row.device) {
      if (row.op == "GpuElementwise") {
        ++p.groups;
        p.grouped_nodes += static_cast<int>(row.fused_nodes.size());
      } else {
        ++p.device_nodes;
      }
    } else {
      ++p.cpu_nodes;
      ++p.why_counts[row.why_cpu];
      ++p.reason_counts[row.reason];
    }
    p.rows.push_back(std::move(row));
  }
  return p;
}

std::map<std::string, std::vector<std::string>> why_examples(const BackendPlacement& p,
                                                             size_t per_reason) {
  std::map<std::string, std::vector<std::string>> examples;
  for (const PlacementRow& r : p.rows) {
    if (r.device) continue;
    auto& e = examples[r.why_cpu];
    if (e.size() < per_reason) e.push_back(r.node);
  }
  return examples;
}

}  // namespace sod2::backend
