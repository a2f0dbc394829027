#include "app/ofa/family_source.h"

#include <memory>
#include <vector>

#include "core/family/family_writer.h"

namespace sod2::ofa {

Expected<rt::FamilyProgram> load_family(const std::string& path, const RdpOptions& rdp,
                                        const std::function<void(const std::string&)>& progress) {
  if (path.size() >= 5 && path.substr(path.size() - 5) == ".json") {
    SOD2_ASSIGN_OR_RETURN(const family::FamilySpec spec, family::read_family_spec(path));
    family::FamilyCompileOptions options;
    options.compile.rdp = rdp;
    options.progress = progress;
    SOD2_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, family::build_family_package(spec, options));
    auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
    const std::span<const uint8_t> view(*owned);
    return rt::load_family_package(view, owned);
  }
  return rt::load_family_package_file(path);
}

}  // namespace sod2::ofa
