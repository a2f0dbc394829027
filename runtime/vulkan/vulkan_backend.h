// The Vulkan backend of a session (DeviceBackend): which nodes and generated groups run as
// compute shaders, the memory they see, and the command stream they are recorded into.
//
// Memory: the session's arena is one host-visible device buffer (grown like any arena), so a
// planned tensor has the same offset for the CPU kernels and the shaders and nothing is copied
// between them. Constants that shaders read are copied to one device buffer when the session is
// created. Anything else a shader reads (graph inputs, values outside the plan) is copied into a
// staging buffer when the dispatch is recorded: those are the counted uploads.
//
// Execution: dispatches are recorded into one command buffer with a barrier between them and
// submitted at sync(), which the session calls before a CPU kernel runs and at the end of a run.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/exec/device_backend.h"
#include "runtime/vulkan/vulkan_context.h"

namespace sod2::rt::vk {

// Which hand-written shader family is written for an op, whatever its dtypes, attributes and
// shapes (the family's kernel factory then checks those and says why it declines); kNone when
// only the CPU runs it. The per-op table (core/ops/op_support.h) declares the same, which
// tests/ops/op_support_test.cpp checks.
enum class ShaderFamily : uint8_t { kNone, kContraction, kReduction, kData };
ShaderFamily shader_family(const std::string& domain, const std::string& op_type);

// Where a tensor's bytes are for a shader: bind `buffer` at `bind_offset` (`range` bytes), and
// the tensor's first element is `word` 4-byte words past that (a push constant).
struct BufferRef {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize bind_offset = 0, range = 0;
  uint32_t word = 0;
};

class VulkanBackend final : public DeviceBackend,
                            public std::enable_shared_from_this<VulkanBackend> {
 public:
  static Expected<std::shared_ptr<VulkanBackend>> create(std::shared_ptr<VulkanContext> context);
  ~VulkanBackend() override;

  // DeviceBackend
  std::string name() const override;
  Expected<std::unique_ptr<Kernel>> make_kernel(const ProgramDesc& program, const NodeDesc& node,
                                                const KernelRegistry& cpu,
                                                Decline* why) override;
  Expected<std::unique_ptr<Kernel>> make_group_kernel(const ProgramDesc& program, size_t group,
                                                      Decline* why) override;
  Status prepare(const ProgramDesc& program) override;
  std::shared_ptr<ArenaMemory> arena_memory() override;
  Status attach() override;
  void detach() override;
  Status begin_run() override;
  Status sync() override;
  bool pending() const override { return recorded_ > 0; }
  bool conflicts(std::span<const ByteRange> reads,
                 std::span<const ByteRange> writes) const override;
  const BackendCounters& counters() const override { return counters_; }
  void reset_counters() override { counters_ = {}; }
  void on_cpu_kernel() override {
    ++counters_.cpu_kernels;
    staged_.clear();
  }

  // For kernels, while recording a run.
  // A tensor a shader reads: its arena or constant copy, else staged now (an upload).
  Expected<BufferRef> read_buffer(const Tensor& t);
  // A copy of a tensor's bytes, taken after the work recorded so far has run, for a shader whose
  // output may overwrite them. Refs taken before stay valid (staging is reused only per run).
  Expected<BufferRef> read_buffer_copy(const Tensor& t);
  // A tensor a shader writes: it must lie in the arena.
  Expected<BufferRef> write_buffer(const Tensor& t);
  // A pipeline, created on first use and cached by name.
  Expected<const ComputePipeline*> pipeline(const std::string& name,
                                            const std::vector<uint32_t>& spirv,
                                            uint32_t num_buffers, uint32_t push_bytes);
  // Records one dispatch of `groups` workgroups; `push` is pipeline.push_bytes() long.
  Status dispatch(const ComputePipeline& pipeline, std::initializer_list<BufferRef> buffers,
                  const void* push, uint32_t groups_x, uint32_t groups_y = 1,
                  uint32_t groups_z = 1);
  // A device kernel gave this run to its CPU kernel (after sync()).
  void count_runtime_fallback() { ++counters_.runtime_fallbacks; }

  VulkanContext& context() { return *context_; }
  const VulkanContext& context() const { return *context_; }
  std::shared_ptr<VulkanContext> context_ptr() const { return context_; }

 private:
  class Memory;
  VulkanBackend() = default;
  struct Range {  // host bytes [begin, end) are readable by shaders at buffer + offset
    const uint8_t* begin;
    const uint8_t* end;
    VkBuffer buffer;
    VkDeviceSize offset;  // of `begin` in `buffer`
    VkDeviceSize size;    // of the buffer
  };
  const Range* find(const void* p, size_t bytes) const;
  Expected<BufferRef> stage(const Tensor& t);
  BufferRef ref(VkBuffer buffer, VkDeviceSize buffer_size, VkDeviceSize offset) const;
  Status ensure_recording();
  Expected<VkDescriptorSet> descriptor_set(const ComputePipeline& pipeline);

  std::shared_ptr<VulkanContext> context_;
  std::shared_ptr<Memory> memory_;  // the arena's blocks (registered as ranges)
  std::vector<Range> constant_ranges_;
  DeviceBuffer constants_;
  std::vector<int32_t> device_constants_;  // constants (ProgramDesc::constants) shaders read
  // Staging: this run's uploads, never reused within a run; buffers that filled up wait for the
  // next run's begin.
  DeviceBuffer staging_;
  size_t staging_used_ = 0;
  std::vector<DeviceBuffer> retired_staging_;
  std::vector<Range> staged_;  // this run's uploads, so a tensor read twice is copied once
  std::map<std::string, std::unique_ptr<ComputePipeline>> pipelines_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> descriptor_pools_;
  size_t descriptor_pool_ = 0;  // the pool sets come from now
  int recorded_ = 0;            // dispatches since the last submit
  bool attached_ = false;       // to a session
  std::string lost_;            // why the device can no longer be used ("" while it can)
  // The arena bytes the dispatches since the last submit read and write (shaders read constants
  // and staged copies too, but no CPU kernel writes those), and those of the refs taken for the
  // dispatch being prepared: a sync a kernel asks for between its refs and its dispatch must not
  // forget them.
  std::vector<ByteRange> pending_reads_, pending_writes_, next_reads_, next_writes_;
  BackendCounters counters_;
};

}  // namespace sod2::rt::vk
