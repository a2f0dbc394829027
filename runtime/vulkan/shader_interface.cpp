#include "runtime/vulkan/shader_interface.h"

#include "runtime/program/program.h"

#include <spirv-tools/libspirv.h>

#include <cstring>
#include <map>
#include <memory>
#include <set>

namespace sod2::rt::vk {
namespace {

// SPIR-V opcodes, decorations and storage classes this check reads (SPIR-V spec §3).
constexpr uint32_t kOpCapability = 17, kOpEntryPoint = 15, kOpExecutionMode = 16;
constexpr uint32_t kCapabilityShader = 1, kModelGLCompute = 5, kModeLocalSize = 17;
constexpr uint32_t kOpTypeInt = 21, kOpTypeFloat = 22, kOpTypeStruct = 30, kOpTypePointer = 32,
                   kOpVariable = 59, kOpDecorate = 71, kOpMemberDecorate = 72;
constexpr uint32_t kDecorationBinding = 33, kDecorationDescriptorSet = 34, kDecorationOffset = 35;
constexpr uint32_t kStoragePushConstant = 9;

}  // namespace

Status check_shader_interface(const std::vector<uint32_t>& spirv, uint32_t num_buffers,
                              uint32_t push_bytes, const std::string& name) {
  auto bad = [&](const std::string& why) { return invalid_model("shader '" + name + "' " + why); };
  std::unique_ptr<spv_context_t, decltype(&spvContextDestroy)> context(
      spvContextCreate(SPV_ENV_VULKAN_1_1), &spvContextDestroy);
  spv_diagnostic diagnostic = nullptr;
  const spv_result_t valid =
      spvValidateBinary(context.get(), spirv.data(), spirv.size(), &diagnostic);
  if (valid != SPV_SUCCESS) {
    const std::string why = diagnostic && diagnostic->error ? diagnostic->error : "invalid";
    spvDiagnosticDestroy(diagnostic);
    return bad("is not valid SPIR-V for Vulkan 1.1: " + why);
  }
  spvDiagnosticDestroy(diagnostic);
  // The validator has checked the instruction stream's framing; walk it for the interface.
  std::map<uint32_t, uint32_t> scalar_width;  // type id -> bits, for int and float types
  std::map<uint32_t, std::vector<uint32_t>> struct_members;
  std::map<uint32_t, uint32_t> pointee;  // pointer type id -> pointee, push-constant ones
  std::set<uint32_t> push_structs;
  std::map<uint32_t, uint32_t> max_offset;  // struct id -> largest member offset
  int entry_points = 0;
  bool local_size_ok = false;
  for (size_t i = 5; i < spirv.size();) {
    const uint32_t count = spirv[i] >> 16, op = spirv[i] & 0xFFFF;
    if (count == 0 || i + count > spirv.size()) return bad("has a malformed instruction");
    const uint32_t* w = &spirv[i];
    // Only what the generator emits: a capability the device lacks is undefined behaviour.
    if (op == kOpCapability && count >= 2 && w[1] != kCapabilityShader)
      return bad("needs SPIR-V capability " + std::to_string(w[1]));
    if (op == kOpEntryPoint && count >= 4) {
      ++entry_points;
      const char* entry_name = reinterpret_cast<const char*>(w + 3);
      if (w[1] != kModelGLCompute ||
          std::string(entry_name, strnlen(entry_name, 4 * (count - 3))) != "main")
        return bad("has an entry point other than a compute shader's main");
    }
    if (op == kOpExecutionMode && count >= 6 && w[2] == kModeLocalSize)
      local_size_ok = w[3] == kGpuGroupLocalSize && w[4] == 1 && w[5] == 1;
    if ((op == kOpTypeInt || op == kOpTypeFloat) && count >= 3) scalar_width[w[1]] = w[2];
    if (op == kOpTypeStruct && count >= 2) struct_members[w[1]].assign(w + 2, w + count);
    if (op == kOpTypePointer && count >= 4 && w[2] == kStoragePushConstant) pointee[w[1]] = w[3];
    if (op == kOpVariable && count >= 4 && w[3] == kStoragePushConstant) {
      const auto p = pointee.find(w[1]);
      if (p == pointee.end()) return bad("pushes constants of an unknown type");
      push_structs.insert(p->second);
    }
    if (op == kOpDecorate && count >= 4) {
      if (w[2] == kDecorationDescriptorSet && w[3] != 0) return bad("uses a descriptor set but 0");
      if (w[2] == kDecorationBinding && w[3] >= num_buffers)
        return bad("reads binding " + std::to_string(w[3]) + ", beyond its " +
                   std::to_string(num_buffers) + " buffers");
    }
    if (op == kOpMemberDecorate && count >= 5 && w[3] == kDecorationOffset)
      max_offset[w[1]] = std::max(max_offset[w[1]], w[4]);
    i += count;
  }
  if (entry_points != 1) return bad("has " + std::to_string(entry_points) + " entry points, not 1");
  if (!local_size_ok)
    return bad("does not run " + std::to_string(kGpuGroupLocalSize) + " invocations per workgroup");
  for (uint32_t s : push_structs) {
    for (uint32_t member : struct_members[s]) {
      const auto width = scalar_width.find(member);
      if (width == scalar_width.end() || width->second != 32)
        return bad("pushes a constant that is not a 32-bit scalar");
    }
    if (!struct_members[s].empty() && max_offset[s] + 4 > push_bytes)
      return bad("pushes " + std::to_string(max_offset[s] + 4) +
                 " bytes of constants, more than "
                 "the " +
                 std::to_string(push_bytes) + " its group provides");
  }
  return Status::ok_status();
}

}  // namespace sod2::rt::vk
