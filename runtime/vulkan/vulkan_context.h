// One Vulkan instance and logical device with a compute queue (DESIGN §6). Device choice: the
// first discrete GPU, else integrated, else virtual, else a CPU implementation (Mesa's lavapipe
// on a machine without a GPU), or the index the user gives. Memory is host-visible and
// host-coherent, mapped for its whole life: on the phones and integrated GPUs this backend is
// for, that memory is the device's own, so the CPU kernels and the shaders share one arena.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace sod2::rt::vk {

struct VulkanDeviceInfo {
  int index = 0;
  std::string name;  // "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string type;  // "discrete GPU" | "integrated GPU" | "virtual GPU" | "CPU" | "other"
  std::string api;   // "1.3.230"
  bool has_compute = false;
};

struct VulkanOptions {
  int device = -1;          // index into list_vulkan_devices(); -1: chosen as above
  bool validation = false;  // VK_LAYER_KHRONOS_validation, its errors counted
};

// The physical devices with a compute queue (and why each other one is unusable). Error: no
// Vulkan loader or driver, or no device at all.
Expected<std::vector<VulkanDeviceInfo>> list_vulkan_devices();

// A host-visible, host-coherent buffer, mapped while it lives.
struct DeviceBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint8_t* mapped = nullptr;
  size_t size = 0;
};

class VulkanContext {
 public:
  static Expected<std::shared_ptr<VulkanContext>> create(const VulkanOptions& options);
  ~VulkanContext();
  VulkanContext(const VulkanContext&) = delete;
  VulkanContext& operator=(const VulkanContext&) = delete;

  const VulkanDeviceInfo& info() const { return info_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  // Descriptor offsets must be multiples of this; a binding may span at most max_range bytes.
  VkDeviceSize offset_alignment() const { return offset_alignment_; }
  VkDeviceSize max_range() const { return max_range_; }

  Expected<DeviceBuffer> allocate(size_t bytes);
  void release(DeviceBuffer& buffer);

  // Validation-layer messages of error severity since creation (with options.validation).
  int validation_errors() const;
  std::vector<std::string> validation_messages() const;

 private:
  VulkanContext() = default;
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                   void* self);

  VulkanDeviceInfo info_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint32_t memory_type_ = 0;
  VkDeviceSize offset_alignment_ = 256;
  VkDeviceSize max_range_ = 1u << 27;
  mutable std::mutex messages_mutex_;
  std::vector<std::string> messages_;
  int errors_ = 0;
};

// A compute pipeline: one shader whose bindings 0..num_buffers-1 are storage buffers (set 0) and
// whose push constants are `push_bytes` long.
class ComputePipeline {
 public:
  static Expected<std::unique_ptr<ComputePipeline>> create(std::shared_ptr<VulkanContext> context,
                                                           std::string name,
                                                           const std::vector<uint32_t>& spirv,
                                                           uint32_t num_buffers,
                                                           uint32_t push_bytes);
  ~ComputePipeline();
  const std::string& name() const { return name_; }
  VkPipeline pipeline() const { return pipeline_; }
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  uint32_t num_buffers() const { return num_buffers_; }
  uint32_t push_bytes() const { return push_bytes_; }

 private:
  ComputePipeline() = default;
  std::shared_ptr<VulkanContext> context_;
  std::string name_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  uint32_t num_buffers_ = 0, push_bytes_ = 0;
};

}  // namespace sod2::rt::vk
