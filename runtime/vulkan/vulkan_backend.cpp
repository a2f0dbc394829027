#include "runtime/vulkan/vulkan_backend.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "runtime/vulkan/group_kernel.h"
#include "runtime/vulkan/kernels/builtin_kernels.h"
#include "runtime/vulkan/kernels/data_kernels.h"
#include "runtime/vulkan/kernels/reduction_kernels.h"

namespace sod2::rt::vk {
namespace {

constexpr uint64_t kFenceTimeoutNs = 120ull * 1000 * 1000 * 1000;
constexpr uint32_t kSetsPerPool = 256;
constexpr uint32_t kBuffersPerSet = 8;

std::string vk_error(const char* what, VkResult r) {
  return std::string(what) + " failed (VkResult " + std::to_string(static_cast<int>(r)) + ")";
}

}  // namespace

// The arena's blocks: device buffers the host addresses through their mapping. Growing the arena
// copies bytes on the host, so device work still recorded must finish first.
class VulkanBackend::Memory final : public ArenaMemory {
 public:
  explicit Memory(std::shared_ptr<VulkanContext> c) : context_(std::move(c)) {}
  ~Memory() override {
    for (DeviceBuffer& b : blocks_) context_->release(b);
  }
  uint8_t* allocate(size_t bytes, std::string* error) override {
    if (backend_ && backend_->pending()) {
      Status st = backend_->sync();
      if (!st.ok()) {
        if (error) *error = st.message();
        return nullptr;
      }
    }
    Expected<DeviceBuffer> b = context_->allocate(bytes);
    if (!b.ok()) {
      if (error) *error = b.status().message();
      return nullptr;
    }
    blocks_.push_back(*b);
    return b->mapped;
  }
  void free(uint8_t* data, size_t) override {
    // Recorded work may still name this block (a run that failed midway): let it finish.
    if (backend_ && backend_->pending()) (void)backend_->sync();
    for (size_t i = 0; i < blocks_.size(); ++i) {
      if (blocks_[i].mapped != data) continue;
      context_->release(blocks_[i]);
      blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
  const DeviceBuffer* find(const void* p, size_t bytes) const {
    const auto* q = static_cast<const uint8_t*>(p);
    for (const DeviceBuffer& b : blocks_)
      if (q >= b.mapped && q + bytes <= b.mapped + b.size) return &b;
    return nullptr;
  }
  VulkanBackend* backend_ = nullptr;

 private:
  std::shared_ptr<VulkanContext> context_;
  std::vector<DeviceBuffer> blocks_;
};

Expected<std::shared_ptr<VulkanBackend>> VulkanBackend::create(
    std::shared_ptr<VulkanContext> context) {
  std::shared_ptr<VulkanBackend> b(new VulkanBackend());
  b->context_ = std::move(context);
  b->memory_ = std::make_shared<Memory>(b->context_);
  b->memory_->backend_ = b.get();
  VkDevice dev = b->context_->device();
  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = b->context_->queue_family();
  VkResult r = vkCreateCommandPool(dev, &pool, nullptr, &b->command_pool_);
  if (r != VK_SUCCESS) return internal_error(vk_error("vkCreateCommandPool", r));
  VkCommandBufferAllocateInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cb.commandPool = b->command_pool_;
  cb.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cb.commandBufferCount = 1;
  r = vkAllocateCommandBuffers(dev, &cb, &b->commands_);
  if (r != VK_SUCCESS) return internal_error(vk_error("vkAllocateCommandBuffers", r));
  VkFenceCreateInfo f{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = vkCreateFence(dev, &f, nullptr, &b->fence_);
  if (r != VK_SUCCESS) return internal_error(vk_error("vkCreateFence", r));
  return b;
}

VulkanBackend::~VulkanBackend() {
  if (!context_) return;
  VkDevice dev = context_->device();
  if (recorded_ > 0 && lost_.empty()) (void)sync();
  vkDeviceWaitIdle(dev);
  if (memory_) memory_->backend_ = nullptr;
  pipelines_.clear();
  for (VkDescriptorPool p : descriptor_pools_) vkDestroyDescriptorPool(dev, p, nullptr);
  if (fence_) vkDestroyFence(dev, fence_, nullptr);
  if (command_pool_) vkDestroyCommandPool(dev, command_pool_, nullptr);
  context_->release(constants_);
  context_->release(staging_);
  for (DeviceBuffer& s : retired_staging_) context_->release(s);
}

std::string VulkanBackend::name() const {
  return "vulkan (" + context_->info().name + ", " + context_->info().type + ")";
}

namespace {

// The node reads these constants (main-graph value storage), which then go to the device.
void note_constants(const ProgramDesc& p, std::span<const int32_t> inputs,
                    std::vector<int32_t>& constants) {
  const GraphDesc& g = p.graphs[0];
  for (int32_t v : inputs) {
    if (v < 0 || static_cast<size_t>(v) >= g.values.size()) continue;
    const ValueDesc& d = g.values[static_cast<size_t>(v)];
    if (d.storage == ValueStorage::kConstant) constants.push_back(d.constant);
  }
}

}  // namespace

ShaderFamily shader_family(const std::string& domain, const std::string& op_type) {
  if (builtin_shader_op(domain, op_type)) return ShaderFamily::kContraction;
  if (reduction_shader_op(domain, op_type)) return ShaderFamily::kReduction;
  if (data_shader_op(domain, op_type)) return ShaderFamily::kData;
  return ShaderFamily::kNone;
}

Expected<std::unique_ptr<Kernel>> VulkanBackend::make_kernel(const ProgramDesc& program,
                                                             const NodeDesc& node,
                                                             const KernelRegistry& cpu,
                                                             Decline* why) {
  const GraphDesc& g = program.graphs[0];
  for (int32_t v : node.outputs) {
    if (v < 0) continue;
    if (static_cast<size_t>(v) >= g.values.size() ||
        g.values[static_cast<size_t>(v)].storage != ValueStorage::kArena) {
      *why = {CpuReason::kNotInArena, node.info.op_type + ": its output is not in the memory plan"};
      return std::unique_ptr<Kernel>();
    }
  }
  const ShaderFamily family = shader_family(node.info.domain, node.info.op_type);
  if (family == ShaderFamily::kNone) {
    // These read no tensor bytes (the session lets them run without waiting for the device).
    const bool shape_only =
        node.info.domain.empty() && (node.info.op_type == "Shape" || node.info.op_type == "Size");
    *why =
        shape_only
            ? Decline{CpuReason::kHostOnly, node.info.op_type + ": reads only a shape, on the host"}
            : Decline{CpuReason::kNoShader, node.info.op_type + ": no hand-written shader"};
    return std::unique_ptr<Kernel>();
  }
  // Only the family written for the op is asked, so its reason for declining is the one given.
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> cpu_kernel, cpu.create(node.info));
  std::unique_ptr<Kernel> k;
  std::string detail;
  switch (family) {
    case ShaderFamily::kReduction: {
      SOD2_ASSIGN_OR_RETURN(k, make_reduction_kernel(*this, node.info, cpu_kernel, &detail));
      break;
    }
    case ShaderFamily::kData: {
      SOD2_ASSIGN_OR_RETURN(k, make_data_kernel(*this, node.info, cpu_kernel, &detail));
      break;
    }
    case ShaderFamily::kContraction: {
      SOD2_ASSIGN_OR_RETURN(k,
                            make_builtin_kernel(*this, node.info, std::move(cpu_kernel), &detail));
      break;
    }
    case ShaderFamily::kNone: break;
  }
  if (!k) *why = {CpuReason::kCaseNotCovered, std::move(detail)};
  if (k) note_constants(program, node.inputs, device_constants_);
  return k;
}

Expected<std::unique_ptr<Kernel>> VulkanBackend::make_group_kernel(const ProgramDesc& program,
                                                                   size_t group, Decline* why) {
  const GpuKernelDesc& d = program.gpu_kernels[group];
  const GraphDesc& g = program.graphs[0];
  if (d.output < 0 || static_cast<size_t>(d.output) >= g.values.size() ||
      g.values[static_cast<size_t>(d.output)].storage != ValueStorage::kArena) {
    *why = {CpuReason::kNotInArena, "its output is not in the memory plan"};
    return std::unique_ptr<Kernel>();
  }
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, make_elementwise_group_kernel(*this, d));
  note_constants(program, d.inputs, device_constants_);
  return k;
}

Status VulkanBackend::prepare(const ProgramDesc& program) {
  std::vector<int32_t> ids = device_constants_;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const size_t align = std::max<size_t>(context_->offset_alignment(), 64);
  size_t total = 0;
  std::vector<size_t> offsets;
  for (int32_t c : ids) {
    if (c < 0 || static_cast<size_t>(c) >= program.constants.size())
      return invalid_model("a node reads constant " + std::to_string(c) + ", which does not exist");
    offsets.push_back(total);
    total += (program.constants[static_cast<size_t>(c)].view().bytes() + align - 1) / align * align;
  }
  constant_ranges_.clear();
  context_->release(constants_);
  if (ids.empty()) return Status::ok_status();
  SOD2_ASSIGN_OR_RETURN(constants_, context_->allocate(total));
  for (size_t i = 0; i < ids.size(); ++i) {
    const Tensor t = program.constants[static_cast<size_t>(ids[i])].view();
    if (t.bytes() == 0) continue;
    std::memcpy(constants_.mapped + offsets[i], t.data, t.bytes());
    const auto* begin = static_cast<const uint8_t*>(t.data);
    constant_ranges_.push_back(
        {begin, begin + t.bytes(), constants_.buffer, offsets[i], constants_.size});
  }
  std::sort(constant_ranges_.begin(), constant_ranges_.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  return Status::ok_status();
}

std::shared_ptr<ArenaMemory> VulkanBackend::arena_memory() { return memory_; }

const VulkanBackend::Range* VulkanBackend::find(const void* p, size_t bytes) const {
  const auto* q = static_cast<const uint8_t*>(p);
  auto it = std::upper_bound(constant_ranges_.begin(), constant_ranges_.end(), q,
                             [](const uint8_t* x, const Range& r) { return x < r.begin; });
  if (it != constant_ranges_.begin()) {
    --it;
    if (q >= it->begin && q + bytes <= it->end) return &*it;
  }
  for (const Range& r : staged_)
    if (q == r.begin && q + bytes <= r.end) return &r;
  return nullptr;
}

BufferRef VulkanBackend::ref(VkBuffer buffer, VkDeviceSize buffer_size, VkDeviceSize offset) const {
  const VkDeviceSize align = context_->offset_alignment();
  BufferRef r;
  r.buffer = buffer;
  r.bind_offset = offset / align * align;
  r.range = std::min(buffer_size - r.bind_offset, context_->max_range());
  r.word = static_cast<uint32_t>((offset - r.bind_offset) / 4);
  return r;
}

Expected<BufferRef> VulkanBackend::read_buffer(const Tensor& t) {
  const size_t bytes = t.bytes();
  // Arena tensors are 64-byte aligned and constants' copies 256; host bytes anywhere else are
  // staged into aligned memory.
  if (reinterpret_cast<uintptr_t>(t.data) % 4 != 0) return stage(t);
  if (const DeviceBuffer* b = memory_->find(t.data, bytes)) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    next_reads_.push_back({p, p + bytes});
    return ref(b->buffer, b->size, p - b->mapped);
  }
  if (const Range* r = find(t.data, bytes))
    return ref(r->buffer, r->size, r->offset + (static_cast<const uint8_t*>(t.data) - r->begin));
  // Host memory the device does not see: stage a copy for this segment of the run.
  return stage(t);
}

Expected<BufferRef> VulkanBackend::read_buffer_copy(const Tensor& t) {
  // Work recorded before may still write those bytes.
  if (pending()) SOD2_RETURN_IF_ERROR(sync());
  return stage(t);
}

Expected<BufferRef> VulkanBackend::stage(const Tensor& t) {
  const size_t bytes = t.bytes();
  const size_t align = std::max<size_t>(context_->offset_alignment(), 64);
  size_t at = (staging_used_ + align - 1) / align * align;
  if (!staging_.buffer || at + std::max<size_t>(bytes, 4) > staging_.size) {
    // Room for twice what the full buffer held: a run's uploads soon fit in one buffer.
    const size_t size = std::max<size_t>(2 * (staging_used_ + bytes), size_t{1} << 20);
    SOD2_ASSIGN_OR_RETURN(DeviceBuffer fresh, context_->allocate(size));
    if (staging_.buffer) retired_staging_.push_back(staging_);
    staging_ = fresh;
    at = 0;
  }
  if (bytes > 0) std::memcpy(staging_.mapped + at, t.data, bytes);
  staging_used_ = at + std::max<size_t>(bytes, 4);
  const auto* begin = static_cast<const uint8_t*>(t.data);
  staged_.push_back({begin, begin + bytes, staging_.buffer, at, staging_.size});
  ++counters_.uploads;
  counters_.upload_bytes += static_cast<int64_t>(bytes);
  return ref(staging_.buffer, staging_.size, at);
}

Expected<BufferRef> VulkanBackend::write_buffer(const Tensor& t) {
  if (reinterpret_cast<uintptr_t>(t.data) % 4 != 0)
    return internal_error("a shader's output " + t.shape.to_string() + " is not 4-byte aligned");
  if (const DeviceBuffer* b = memory_->find(t.data, t.bytes())) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    next_writes_.push_back({p, p + t.bytes()});
    return ref(b->buffer, b->size, p - b->mapped);
  }
  return internal_error("a shader's output " + t.shape.to_string() + " is not in the device arena");
}

Expected<const ComputePipeline*> VulkanBackend::pipeline(const std::string& name,
                                                         const std::vector<uint32_t>& spirv,
                                                         uint32_t num_buffers,
                                                         uint32_t push_bytes) {
  auto it = pipelines_.find(name);
  if (it != pipelines_.end()) return it->second.get();
  if (num_buffers > kBuffersPerSet)
    return internal_error("shader '" + name + "' binds more than 8 buffers");
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<ComputePipeline> p,
                        ComputePipeline::create(context_, name, spirv, num_buffers, push_bytes));
  const ComputePipeline* raw = p.get();
  pipelines_.emplace(name, std::move(p));
  return raw;
}

Status VulkanBackend::ensure_recording() {
  if (recorded_ > 0) return Status::ok_status();
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  const VkResult r = vkBeginCommandBuffer(commands_, &begin);
  if (r != VK_SUCCESS) return internal_error(vk_error("vkBeginCommandBuffer", r));
  return Status::ok_status();
}

Expected<VkDescriptorSet> VulkanBackend::descriptor_set(const ComputePipeline& p) {
  VkDevice dev = context_->device();
  VkDescriptorSetLayout layout = p.set_layout();
  for (;;) {
    if (descriptor_pool_ == descriptor_pools_.size()) {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kBuffersPerSet};
      VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      info.maxSets = kSetsPerPool;
      info.poolSizeCount = 1;
      info.pPoolSizes = &size;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      const VkResult r = vkCreateDescriptorPool(dev, &info, nullptr, &pool);
      if (r != VK_SUCCESS) return internal_error(vk_error("vkCreateDescriptorPool", r));
      descriptor_pools_.push_back(pool);
    }
    VkDescriptorSetAllocateInfo a{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    a.descriptorPool = descriptor_pools_[descriptor_pool_];
    a.descriptorSetCount = 1;
    a.pSetLayouts = &layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    const VkResult r = vkAllocateDescriptorSets(dev, &a, &set);
    if (r == VK_SUCCESS) return set;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
      return internal_error(vk_error("vkAllocateDescriptorSets", r));
    ++descriptor_pool_;  // this one is full until the next run
  }
}

Status VulkanBackend::dispatch(const ComputePipeline& p, std::initializer_list<BufferRef> buffers,
                               const void* push, uint32_t gx, uint32_t gy, uint32_t gz) {
  if (buffers.size() != p.num_buffers()) {
    return internal_error("shader '" + p.name() + "' binds " + std::to_string(p.num_buffers()) +
                          " buffers, got " + std::to_string(buffers.size()));
  }
  if (gx == 0 || gy == 0 || gz == 0) return Status::ok_status();  // nothing to compute
  if (gx > 65535 || gy > 65535 || gz > 65535)
    return internal_error("shader '" + p.name() + "' asks for a grid beyond 65535 workgroups");
  SOD2_RETURN_IF_ERROR(ensure_recording());
  SOD2_ASSIGN_OR_RETURN(VkDescriptorSet set, descriptor_set(p));
  VkDescriptorBufferInfo infos[kBuffersPerSet];
  VkWriteDescriptorSet writes[kBuffersPerSet];
  uint32_t i = 0;
  for (const BufferRef& b : buffers) {
    infos[i] = {b.buffer, b.bind_offset, b.range};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
    ++i;
  }
  vkUpdateDescriptorSets(context_->device(), i, writes, 0, nullptr);
  vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline());
  vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout(), 0, 1, &set, 0,
                          nullptr);
  if (p.push_bytes() > 0)
    vkCmdPushConstants(commands_, p.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, p.push_bytes(), push);
  vkCmdDispatch(commands_, gx, gy, gz);
  // Each dispatch may read what the one before wrote; the host reads after the last.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask =
      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                       &barrier, 0, nullptr, 0, nullptr);
  ++recorded_;
  ++counters_.dispatches;
  pending_reads_.insert(pending_reads_.end(), next_reads_.begin(), next_reads_.end());
  pending_writes_.insert(pending_writes_.end(), next_writes_.begin(), next_writes_.end());
  next_reads_.clear();
  next_writes_.clear();
  return Status::ok_status();
}

Status VulkanBackend::sync() {
  if (!lost_.empty()) return internal_error(lost_);
  if (recorded_ > 0) {
    recorded_ = 0;
    VkResult r = vkEndCommandBuffer(commands_);
    if (r != VK_SUCCESS) return internal_error(vk_error("vkEndCommandBuffer", r));
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands_;
    r = vkQueueSubmit(context_->queue(), 1, &submit, fence_);
    if (r != VK_SUCCESS) return internal_error(vk_error("vkQueueSubmit", r));
    r = vkWaitForFences(context_->device(), 1, &fence_, VK_TRUE, kFenceTimeoutNs);
    if (r != VK_SUCCESS) {
      // The command buffer may still be running: nothing it uses may be reused or freed.
      lost_ = r == VK_TIMEOUT ? "the Vulkan device did not finish its work within 120 s"
                              : vk_error("vkWaitForFences", r);
      vkDeviceWaitIdle(context_->device());
      return internal_error(lost_);
    }
    vkResetFences(context_->device(), 1, &fence_);
    vkResetCommandBuffer(commands_, 0);
    ++counters_.syncs;
  }
  pending_reads_.clear();
  pending_writes_.clear();
  // A CPU kernel may now rewrite the host bytes staged so far: later reads copy them again. The
  // staging bytes themselves stay until the next run, so refs taken before this sync (by the
  // kernel that asked for it) stay valid.
  staged_.clear();
  return Status::ok_status();
}

bool VulkanBackend::conflicts(std::span<const ByteRange> reads,
                              std::span<const ByteRange> writes) const {
  if (recorded_ == 0) return false;
  auto overlap = [](const ByteRange& a, const ByteRange& b) {
    return a.begin < b.end && b.begin < a.end;
  };
  for (const ByteRange& w : pending_writes_) {
    for (const ByteRange& r : reads)
      if (overlap(r, w)) return true;
    for (const ByteRange& x : writes)
      if (overlap(x, w)) return true;
  }
  for (const ByteRange& r : pending_reads_)
    for (const ByteRange& x : writes)
      if (overlap(x, r)) return true;
  return false;
}

Status VulkanBackend::attach() {
  if (attached_) {
    return invalid_argument(
        "this Vulkan backend already serves a session: make one backend per session");
  }
  attached_ = true;
  device_constants_.clear();
  constant_ranges_.clear();
  context_->release(constants_);
  return Status::ok_status();
}

void VulkanBackend::detach() {
  if (recorded_ > 0) (void)sync();
  attached_ = false;
}

Status VulkanBackend::begin_run() {
  if (!lost_.empty()) return internal_error(lost_);
  if (recorded_ > 0) SOD2_RETURN_IF_ERROR(sync());
  for (VkDescriptorPool p : descriptor_pools_) vkResetDescriptorPool(context_->device(), p, 0);
  descriptor_pool_ = 0;
  staged_.clear();
  staging_used_ = 0;
  next_reads_.clear();
  next_writes_.clear();
  for (DeviceBuffer& b : retired_staging_) context_->release(b);
  retired_staging_.clear();
  return Status::ok_status();
}

}  // namespace sod2::rt::vk
