#include "core/codegen/spirv_compiler.h"

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

#include <memory>
#include <mutex>

namespace sod2::codegen {
namespace {

// glslang keeps process-wide tables: initialised once, for the life of the process.
void initialise_glslang() {
  static std::once_flag once;
  std::call_once(once, [] { glslang_initialize_process(); });
}

}  // namespace

Expected<std::vector<uint32_t>> compile_compute_shader(const std::string& glsl,
                                                       const std::string& name) {
  initialise_glslang();
  glslang_input_t input{};
  input.language = GLSLANG_SOURCE_GLSL;
  input.stage = GLSLANG_STAGE_COMPUTE;
  input.client = GLSLANG_CLIENT_VULKAN;
  input.client_version = GLSLANG_TARGET_VULKAN_1_1;
  input.target_language = GLSLANG_TARGET_SPV;
  input.target_language_version = GLSLANG_TARGET_SPV_1_3;
  input.code = glsl.c_str();
  input.default_version = 450;
  input.default_profile = GLSLANG_NO_PROFILE;
  input.messages =
      static_cast<glslang_messages_t>(GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT);
  input.resource = glslang_default_resource();
  std::unique_ptr<glslang_shader_t, decltype(&glslang_shader_delete)> shader(
      glslang_shader_create(&input), &glslang_shader_delete);
  if (!shader) return internal_error("cannot start the shader compiler (glslang)");
  auto failed = [&](const char* stage, const char* log) {
    return internal_error("generated shader '" + name + "' fails to " + stage + ": " +
                          (log ? log : ""));
  };
  if (!glslang_shader_preprocess(shader.get(), &input))
    return failed("preprocess", glslang_shader_get_info_log(shader.get()));
  if (!glslang_shader_parse(shader.get(), &input))
    return failed("compile", glslang_shader_get_info_log(shader.get()));
  std::unique_ptr<glslang_program_t, decltype(&glslang_program_delete)> program(
      glslang_program_create(), &glslang_program_delete);
  glslang_program_add_shader(program.get(), shader.get());
  if (!glslang_program_link(program.get(), input.messages))
    return failed("link", glslang_program_get_info_log(program.get()));
  glslang_spv_options_t spv{};
  spv.disable_optimizer = false;
  spv.strip_debug_info = true;
  glslang_program_SPIRV_generate_with_options(program.get(), GLSLANG_STAGE_COMPUTE, &spv);
  const size_t words = glslang_program_SPIRV_get_size(program.get());
  if (words == 0)
    return failed("generate SPIR-V", glslang_program_SPIRV_get_messages(program.get()));
  std::vector<uint32_t> out(words);
  glslang_program_SPIRV_get(program.get(), out.data());
  return out;
}

}  // namespace sod2::codegen
