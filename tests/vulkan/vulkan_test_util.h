// What the Vulkan tests share: a backend on the machine's Vulkan device with the validation
// layer on (the test skips when there is no device), and running a program on the CPU and on
// that backend with the same inputs.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/vulkan/vulkan_backend.h"

namespace sod2::testing {

struct VulkanFixture {
  std::shared_ptr<rt::vk::VulkanContext> context;
  std::shared_ptr<rt::vk::VulkanBackend> backend;
  std::string skip_reason;  // non-empty: no device
};

// One context per test binary: instance creation with validation costs ~100 ms.
inline std::shared_ptr<rt::vk::VulkanContext> shared_vulkan_context(std::string* why) {
  static std::shared_ptr<rt::vk::VulkanContext> context;
  static std::string error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    auto c = rt::vk::VulkanContext::create({-1, /*validation=*/true});
    if (c.ok())
      context = *c;
    else
      error = c.status().to_string();
  }
  if (why) *why = error;
  return context;
}

inline VulkanFixture make_vulkan() {
  VulkanFixture f;
  f.context = shared_vulkan_context(&f.skip_reason);
  if (!f.context) return f;
  auto b = rt::vk::VulkanBackend::create(f.context);
  if (!b.ok()) {
    f.skip_reason = b.status().to_string();
    f.context = nullptr;
    return f;
  }
  f.backend = *b;
  return f;
}

#define SOD2_REQUIRE_VULKAN(fixture) \
  if (!(fixture).backend) GTEST_SKIP() << "no Vulkan device: " << (fixture).skip_reason

// Validation errors so far, with the messages, for an EXPECT.
inline std::string validation_report(const rt::vk::VulkanContext& c) {
  std::string s = std::to_string(c.validation_errors()) + " validation errors";
  for (const std::string& m : c.validation_messages()) s += "\n  " + m;
  return s;
}

inline rt::HostTensor random_tensor(const rt::Shape& shape, uint32_t seed, float lo = -2.f,
                                    float hi = 2.f) {
  rt::HostTensor t(rt::DType::kFloat, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < shape.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

}  // namespace sod2::testing
