#include "app/ofa/family_source.h"

#include <algorithm>

#include "app/profiling/run_inputs.h"
#include "core/family/family_writer.h"
#include "core/status/input_file.h"

namespace sod2::ofa {
namespace {

bool is_family_file(const std::string& path) {
  return path.size() >= 5 && path.substr(path.size() - 5) == ".json";
}

}  // namespace

Expected<std::shared_ptr<const std::vector<uint8_t>>> family_package_bytes(
    const std::string& path, const RdpOptions& rdp,
    const std::function<void(const std::string&)>& progress) {
  if (is_family_file(path)) {
    SOD2_ASSIGN_OR_RETURN(const family::FamilySpec spec, family::read_family_spec(path));
    family::FamilyCompileOptions options;
    options.compile.rdp = rdp;
    options.progress = progress;
    SOD2_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, family::build_family_package(spec, options));
    return std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  }
  // A package's size is bounded by its own header, which the loader checks; here only that it
  // is a regular file, so a FIFO or a device cannot block or stream forever.
  SOD2_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_input_file(path, kNoInputSizeLimit));
  return std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
}

Expected<rt::FamilyProgram> load_family(const std::string& path, const RdpOptions& rdp,
                                        const std::function<void(const std::string&)>& progress) {
  if (!is_family_file(path)) return rt::load_family_package_file(path);
  SOD2_ASSIGN_OR_RETURN(auto bytes, family_package_bytes(path, rdp, progress));
  const std::span<const uint8_t> view(*bytes);
  return rt::load_family_package(view, bytes);
}

Expected<std::vector<rt::HostTensor>> family_inputs(const rt::FamilyProgram& family,
                                                    std::map<std::string, int64_t>* bind) {
  if (family.variants.empty()) return invalid_argument("the family has no variants");
  const rt::ProgramDesc& first = family.variants.front().program;
  for (const rt::SymbolDesc& s : first.symbols) {
    if (!s.execution && !bind->count(s.name)) (*bind)[s.name] = std::max<int64_t>(s.lo, 1);
  }
  SOD2_ASSIGN_OR_RETURN(const std::vector<rt::Shape> shapes,
                        profiling::bound_input_shapes(first, *bind));
  return profiling::random_inputs(first, shapes, {}, 1);
}

}  // namespace sod2::ofa
