// What the tests of single Vulkan kernels share: the CPU reference runs on the heap
// (tests/runtime/kernel_harness.h), the Vulkan run allocates in the backend's arena, and each
// test gets a fresh context with the validation layer on and must end with no validation errors.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/vulkan/vulkan_backend.h"
#include "runtime/vulkan/vulkan_context.h"
#include "tests/runtime/kernel_harness.h"

namespace sod2::rt::testing {

// Outputs in the backend's arena memory, where write_buffer finds them (as a session's planned
// tensors are); output 0 may be given an input's bytes (`alias`), as a memory plan may place it
// over an input. Scratch on the heap.
class ArenaAllocator final : public OutputAllocator {
 public:
  explicit ArenaAllocator(std::shared_ptr<ArenaMemory> memory) : memory_(std::move(memory)) {}
  ~ArenaAllocator() override {
    for (auto& [p, bytes] : blocks_) memory_->free(p, bytes);
  }
  Expected<Tensor*> output(size_t index, DType dtype, const Shape& shape) override {
    Tensor t{dtype, shape, nullptr};
    if (index == 0 && alias) {
      if (t.bytes() > alias_bytes) return internal_error("the aliased input is too small");
      t.data = alias;
    } else {
      SOD2_ASSIGN_OR_RETURN(t.data, allocate(std::max<size_t>(t.bytes(), 4)));
    }
    if (views_.size() <= index) views_.resize(index + 1);
    views_[index] = std::make_unique<Tensor>(t);
    return views_[index].get();
  }
  Expected<void*> scratch(size_t bytes) override {
    scratch_.emplace_back(bytes + 64);
    auto p = reinterpret_cast<uintptr_t>(scratch_.back().data());
    return reinterpret_cast<void*>((p + 63) & ~uintptr_t{63});
  }
  // Arena bytes for a test input, so both read_buffer paths (arena, staged) are exercised.
  Expected<void*> allocate(size_t bytes) {
    std::string err;
    uint8_t* p = memory_->allocate(bytes, &err);
    if (!p) return internal_error("arena allocation failed: " + err);
    blocks_.emplace_back(p, bytes);
    return static_cast<void*>(p);
  }
  const Tensor* view(size_t i) const { return i < views_.size() ? views_[i].get() : nullptr; }

  void* alias = nullptr;  // output 0's bytes when set
  size_t alias_bytes = 0;

 private:
  std::shared_ptr<ArenaMemory> memory_;
  std::vector<std::pair<uint8_t*, size_t>> blocks_;
  std::vector<std::unique_ptr<Tensor>> views_;
  std::vector<std::vector<uint8_t>> scratch_;
};

// A fresh context per test (not the shared one of vulkan_test_util.h) so that each test's
// validation errors are its own.
class VulkanKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Expected<std::shared_ptr<vk::VulkanContext>> c =
        vk::VulkanContext::create({.device = -1, .validation = true});
    if (!c.ok()) GTEST_SKIP() << "no Vulkan device: " << c.status().message();
    context_ = *c;
    Expected<std::shared_ptr<vk::VulkanBackend>> b = vk::VulkanBackend::create(context_);
    ASSERT_TRUE(b.ok()) << b.status().message();
    backend_ = *b;
  }
  void TearDown() override {
    if (!context_) return;
    backend_.reset();
    std::string all;
    for (const std::string& m : context_->validation_messages()) all += m + "\n";
    EXPECT_EQ(context_->validation_errors(), 0) << all;
  }

  std::shared_ptr<vk::VulkanContext> context_;
  std::shared_ptr<vk::VulkanBackend> backend_;
};

}  // namespace sod2::rt::testing
