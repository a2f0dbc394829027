// What the Backend dock places (DESIGN §6): the open model's compiled program (the document's
// pipeline::CompiledModel, with generated shaders for the elementwise groups: what `sod2 plan
// --backend vulkan` places), or the open package as it was compiled. A session on the device
// backend decides where each node runs; the placement is read from it. No Qt: tested without a
// display.
#pragma once

#include <memory>
#include <string>

#include "app/backend/backend_placement.h"
#include "app/studio/document/package_document.h"
#include "app/studio/document/studio_document.h"
#include "core/status/status.h"
#include "runtime/program/program.h"

namespace sod2::studio {

// One of doc or pkg, or neither (nothing open).
struct PlacementSource {
  std::shared_ptr<const StudioDocument> doc;
  std::shared_ptr<const PackageDocument> pkg;
  bool fuse = true;  // the document's fusion setting, for the dock's label (it was compiled so)
  bool empty() const { return !doc && !pkg; }
};

struct PlacementResult {
  backend::BackendPlacement placement;
  // Something the user should know beside the rows: a package compiled without generated
  // shaders runs its elementwise nodes on the CPU for that reason alone.
  std::string note;
};

// The program a session on a device backend runs. Errors: nothing open, compiling failed.
Expected<rt::ProgramDesc> program_for_backend(const PlacementSource& source);

// Compiles (or copies the package's program), makes a session on `device` and reads where each
// main-graph node runs.
Expected<PlacementResult> place_on_backend(const PlacementSource& source,
                                           std::shared_ptr<rt::DeviceBackend> device);

}  // namespace sod2::studio
