// A family to run or profile, from what the user names: a family package as it is, or a family
// file (variants.json) compiled in memory first.
#pragma once

#include <functional>
#include <string>

#include "core/rdp/rdp.h"
#include "core/status/status.h"
#include "runtime/family/family_package.h"

namespace sod2::ofa {

// `progress` sees each compile step of a family file; may be empty.
Expected<rt::FamilyProgram> load_family(const std::string& path, const RdpOptions& rdp,
                                        const std::function<void(const std::string&)>& progress);

}  // namespace sod2::ofa
