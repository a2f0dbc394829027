// A family to run or profile, from what the user names: a family package as it is, or a family
// file (variants.json) compiled in memory first; and the inputs its variants run on.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/rdp/rdp.h"
#include "core/status/status.h"
#include "runtime/family/family_package.h"

namespace sod2::ofa {

// The family package's bytes: the file, or a family file compiled (`progress` sees each step;
// may be empty).
Expected<std::shared_ptr<const std::vector<uint8_t>>> family_package_bytes(
    const std::string& path, const RdpOptions& rdp,
    const std::function<void(const std::string&)>& progress);

// The family loaded from those bytes (a package file is mapped rather than read).
Expected<rt::FamilyProgram> load_family(const std::string& path, const RdpOptions& rdp,
                                        const std::function<void(const std::string&)>& progress);

// Random inputs of the bound shapes for the family's variants (they share their inputs); a
// symbol `bind` leaves out takes its lowest value, and `bind` is completed with it.
Expected<std::vector<rt::HostTensor>> family_inputs(const rt::FamilyProgram& family,
                                                    std::map<std::string, int64_t>* bind);

}  // namespace sod2::ofa
