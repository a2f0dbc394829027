#include "runtime/vulkan/vulkan_context.h"

#include <algorithm>
#include <cstring>

namespace sod2::rt::vk {
namespace {

std::string vk_error(const char* what, VkResult r) {
  return std::string(what) + " failed (VkResult " + std::to_string(static_cast<int>(r)) + ")";
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

// Lower is preferred: a real GPU before a software one.
int preference(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

bool has_layer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

Expected<VkInstance> make_instance(bool validation) {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "sod2";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  if (validation) {
    if (!has_layer(layer)) {
      return not_found(
          "Vulkan validation was asked for but VK_LAYER_KHRONOS_validation is not installed "
          "(Debian: apt-get install vulkan-validationlayers)");
    }
    info.enabledLayerCount = 1;
    info.ppEnabledLayerNames = &layer;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = &ext;
  }
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult r = vkCreateInstance(&info, nullptr, &instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED) {
    return not_found(
        "no Vulkan driver is installed (for a CPU implementation on Debian: apt-get install "
        "mesa-vulkan-drivers)");
  }
  if (r != VK_SUCCESS) return not_found(vk_error("vkCreateInstance", r));
  return instance;
}

std::vector<VkPhysicalDevice> physical_devices(VkInstance instance) {
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(instance, &n, devices.data());
  devices.resize(n);
  return devices;
}

int compute_family(VkPhysicalDevice d) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(d, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(d, &n, families.data());
  for (uint32_t i = 0; i < n; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return static_cast<int>(i);
  return -1;
}

VulkanDeviceInfo describe(VkPhysicalDevice d, int index) {
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(d, &p);
  VulkanDeviceInfo info;
  info.index = index;
  info.name = p.deviceName;
  info.type = type_name(p.deviceType);
  info.api = std::to_string(VK_API_VERSION_MAJOR(p.apiVersion)) + "." +
             std::to_string(VK_API_VERSION_MINOR(p.apiVersion)) + "." +
             std::to_string(VK_API_VERSION_PATCH(p.apiVersion));
  info.has_compute = compute_family(d) >= 0;
  return info;
}

}  // namespace

Expected<std::vector<VulkanDeviceInfo>> list_vulkan_devices() {
  SOD2_ASSIGN_OR_RETURN(VkInstance instance, make_instance(false));
  std::vector<VulkanDeviceInfo> out;
  const auto devices = physical_devices(instance);
  for (size_t i = 0; i < devices.size(); ++i) out.push_back(describe(devices[i], int(i)));
  vkDestroyInstance(instance, nullptr);
  if (out.empty()) return not_found("the Vulkan driver reports no device");
  return out;
}

VKAPI_ATTR VkBool32 VKAPI_CALL VulkanContext::on_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* self) {
  auto* c = static_cast<VulkanContext*>(self);
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    std::lock_guard<std::mutex> lock(c->messages_mutex_);
    ++c->errors_;
    if (c->messages_.size() < 64) c->messages_.push_back(data->pMessage ? data->pMessage : "");
  }
  return VK_FALSE;
}

Expected<std::shared_ptr<VulkanContext>> VulkanContext::create(const VulkanOptions& options) {
  std::shared_ptr<VulkanContext> c(new VulkanContext());
  SOD2_ASSIGN_OR_RETURN(c->instance_, make_instance(options.validation));
  if (options.validation) {
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(c->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (!create_messenger) return not_found("the validation layer has no debug messenger");
    VkDebugUtilsMessengerCreateInfoEXT m{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    m.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
    m.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    m.pfnUserCallback = &VulkanContext::on_message;
    m.pUserData = c.get();
    if (create_messenger(c->instance_, &m, nullptr, &c->messenger_) != VK_SUCCESS)
      return not_found("cannot attach to the Vulkan validation layer");
  }
  const auto devices = physical_devices(c->instance_);
  if (devices.empty()) {
    return not_found(
        "no Vulkan device: the driver reports none (for a CPU implementation on Debian: "
        "apt-get install mesa-vulkan-drivers)");
  }
  int chosen = -1;
  if (options.device >= 0) {
    if (options.device >= static_cast<int>(devices.size())) {
      return invalid_argument("Vulkan device " + std::to_string(options.device) +
                              " does not exist: " + std::to_string(devices.size()) +
                              " found (sod2 devices --vulkan)");
    }
    if (compute_family(devices[options.device]) < 0)
      return unsupported("Vulkan device " + std::to_string(options.device) +
                         " has no compute queue");
    chosen = options.device;
  } else {
    int best = 99;
    for (size_t i = 0; i < devices.size(); ++i) {
      if (compute_family(devices[i]) < 0) continue;
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(devices[i], &p);
      if (preference(p.deviceType) < best) {
        best = preference(p.deviceType);
        chosen = static_cast<int>(i);
      }
    }
    if (chosen < 0) return not_found("no Vulkan device has a compute queue");
  }
  c->physical_ = devices[static_cast<size_t>(chosen)];
  c->info_ = describe(c->physical_, chosen);
  c->queue_family_ = static_cast<uint32_t>(compute_family(c->physical_));

  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(c->physical_, &props);
  c->offset_alignment_ = std::max<VkDeviceSize>(props.limits.minStorageBufferOffsetAlignment, 4);
  c->max_range_ = props.limits.maxStorageBufferRange;

  // Memory both sides address without copies: host-visible and coherent, device-local first.
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(c->physical_, &mem);
  const VkMemoryPropertyFlags need =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int type = -1;
  for (int pass = 0; pass < 2 && type < 0; ++pass) {
    for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
      const VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
      if ((f & need) != need) continue;
      if (pass == 0 && !(f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) continue;
      type = static_cast<int>(i);
      break;
    }
  }
  if (type < 0) return unsupported("the Vulkan device has no host-visible coherent memory");
  c->memory_type_ = static_cast<uint32_t>(type);

  const float priority = 1.f;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = c->queue_family_;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  // A package's shaders are untrusted: with robust buffer access an index past a binding reads
  // zero and writes nothing instead of touching other memory.
  VkPhysicalDeviceFeatures supported{};
  vkGetPhysicalDeviceFeatures(c->physical_, &supported);
  VkPhysicalDeviceFeatures enabled{};
  enabled.robustBufferAccess = supported.robustBufferAccess;
  VkDeviceCreateInfo d{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  d.queueCreateInfoCount = 1;
  d.pQueueCreateInfos = &q;
  d.pEnabledFeatures = &enabled;
  const VkResult r = vkCreateDevice(c->physical_, &d, nullptr, &c->device_);
  if (r != VK_SUCCESS) return not_found(vk_error("vkCreateDevice", r));
  vkGetDeviceQueue(c->device_, c->queue_family_, 0, &c->queue_);
  return c;
}

VulkanContext::~VulkanContext() {
  if (device_) vkDestroyDevice(device_, nullptr);
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

Expected<DeviceBuffer> VulkanContext::allocate(size_t bytes) {
  DeviceBuffer b;
  b.size = std::max<size_t>(bytes, 256);
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = b.size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vkCreateBuffer(device_, &info, nullptr, &b.buffer);
  if (r != VK_SUCCESS) return io_error(vk_error("vkCreateBuffer", r));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, b.buffer, &req);
  if (!(req.memoryTypeBits & (1u << memory_type_))) {
    vkDestroyBuffer(device_, b.buffer, nullptr);
    return unsupported("the Vulkan device cannot place storage buffers in host-visible memory");
  }
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = memory_type_;
  r = vkAllocateMemory(device_, &alloc, nullptr, &b.memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(device_, b.buffer, nullptr);
    return io_error("cannot allocate " + std::to_string(b.size) + " bytes of Vulkan memory (" +
                    vk_error("vkAllocateMemory", r) + ")");
  }
  vkBindBufferMemory(device_, b.buffer, b.memory, 0);
  void* p = nullptr;
  r = vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &p);
  if (r != VK_SUCCESS) {
    vkFreeMemory(device_, b.memory, nullptr);
    vkDestroyBuffer(device_, b.buffer, nullptr);
    return io_error(vk_error("vkMapMemory", r));
  }
  b.mapped = static_cast<uint8_t*>(p);
  return b;
}

void VulkanContext::release(DeviceBuffer& b) {
  if (b.memory) {
    vkUnmapMemory(device_, b.memory);
    vkFreeMemory(device_, b.memory, nullptr);
  }
  if (b.buffer) vkDestroyBuffer(device_, b.buffer, nullptr);
  b = DeviceBuffer{};
}

int VulkanContext::validation_errors() const {
  std::lock_guard<std::mutex> lock(messages_mutex_);
  return errors_;
}

std::vector<std::string> VulkanContext::validation_messages() const {
  std::lock_guard<std::mutex> lock(messages_mutex_);
  return messages_;
}

Expected<std::unique_ptr<ComputePipeline>> ComputePipeline::create(
    std::shared_ptr<VulkanContext> context, std::string name, const std::vector<uint32_t>& spirv,
    uint32_t num_buffers, uint32_t push_bytes) {
  if (spirv.empty() || spirv[0] != 0x07230203u)
    return invalid_model("shader '" + name + "' is not SPIR-V");
  if (push_bytes > 128) return internal_error("shader '" + name + "' pushes over 128 bytes");
  std::unique_ptr<ComputePipeline> p(new ComputePipeline());
  p->context_ = std::move(context);
  p->name_ = std::move(name);
  p->num_buffers_ = num_buffers;
  p->push_bytes_ = push_bytes;
  VkDevice dev = p->context_->device();
  VkShaderModuleCreateInfo m{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  m.codeSize = spirv.size() * 4;
  m.pCode = spirv.data();
  VkResult r = vkCreateShaderModule(dev, &m, nullptr, &p->module_);
  if (r != VK_SUCCESS)
    return invalid_model("shader '" + p->name_ + "': " + vk_error("vkCreateShaderModule", r));
  std::vector<VkDescriptorSetLayoutBinding> bindings(num_buffers);
  for (uint32_t i = 0; i < num_buffers; ++i) {
    bindings[i] = {};
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo sl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sl.bindingCount = num_buffers;
  sl.pBindings = bindings.data();
  r = vkCreateDescriptorSetLayout(dev, &sl, nullptr, &p->set_layout_);
  if (r != VK_SUCCESS) return internal_error(vk_error("vkCreateDescriptorSetLayout", r));
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &p->set_layout_;
  pl.pushConstantRangeCount = push_bytes > 0 ? 1 : 0;
  pl.pPushConstantRanges = &range;
  r = vkCreatePipelineLayout(dev, &pl, nullptr, &p->layout_);
  if (r != VK_SUCCESS) return internal_error(vk_error("vkCreatePipelineLayout", r));
  VkComputePipelineCreateInfo c{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  c.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  c.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  c.stage.module = p->module_;
  c.stage.pName = "main";
  c.layout = p->layout_;
  r = vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &c, nullptr, &p->pipeline_);
  if (r != VK_SUCCESS)
    return invalid_model("shader '" + p->name_ + "': " + vk_error("vkCreateComputePipelines", r));
  return p;
}

ComputePipeline::~ComputePipeline() {
  VkDevice dev = context_ ? context_->device() : VK_NULL_HANDLE;
  if (!dev) return;
  if (pipeline_) vkDestroyPipeline(dev, pipeline_, nullptr);
  if (layout_) vkDestroyPipelineLayout(dev, layout_, nullptr);
  if (set_layout_) vkDestroyDescriptorSetLayout(dev, set_layout_, nullptr);
  if (module_) vkDestroyShaderModule(dev, module_, nullptr);
}

}  // namespace sod2::rt::vk
