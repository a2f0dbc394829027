#include "app/studio/backend/backend_placer.h"

#include "core/pipeline/compiled_model.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2::studio {

Expected<rt::ProgramDesc> program_for_backend(const PlacementSource& source) {
  if (source.pkg) return source.pkg->program();
  if (!source.doc) return invalid_argument("open a model or a package first");
  // The document's own compiled program (its ranges and fusion as opened), with the generated
  // shaders: the placement is of the program whose plan the timeline shows.
  return pipeline::program_for(source.doc->compiled(), pipeline::Target::kVulkan);
}

Expected<PlacementResult> place_on_backend(const PlacementSource& source,
                                           std::shared_ptr<rt::DeviceBackend> device) {
  if (!device) return invalid_argument("no device backend");
  SOD2_ASSIGN_OR_RETURN(rt::ProgramDesc program, program_for_backend(source));
  PlacementResult r;
  if (source.pkg && program.gpu_kernels.empty())
    r.note =
        "this package carries no generated shaders: its elementwise groups run on the CPU "
        "(compile it without --no-gpu-kernels, or open the .onnx)";
  rt::SessionOptions options;
  options.threads = 1;  // nothing runs: only the kernels are chosen
  options.backend = std::move(device);
  SOD2_ASSIGN_OR_RETURN(
      std::unique_ptr<rt::Session> session,
      rt::Session::create(std::move(program), rt::KernelRegistry::standard(), options));
  r.placement = backend::placement_of(*session);
  return r;
}

}  // namespace sod2::studio
