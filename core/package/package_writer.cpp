#include "core/package/package_writer.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/package/manifest_builder.h"
#include "runtime/package/sod2_package.pb.h"

namespace sod2::package {

Expected<std::vector<uint8_t>> serialize_package(const rt::ProgramDesc& program,
                                                 PackageStats* stats,
                                                 const PackageOptions& options) {
  pkg::Manifest manifest;
  BlobBuilder blob;
  ManifestBuilder builder(blob, options.weights);
  SOD2_RETURN_IF_ERROR(builder.build(program, &manifest));
  SOD2_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, seal_package(manifest, blob, stats));
  if (stats) {
    stats->constants = program.constants.size();
    stats->narrow_constants = builder.narrow_constants();
  }
  return bytes;
}

Expected<WeightStorage> parse_weight_storage(const std::string& name) {
  if (name == "fp32") return WeightStorage::kAsIs;
  if (name == "fp16") return WeightStorage::kFloat16;
  if (name == "int8") return WeightStorage::kInt8;
  return invalid_argument("--weights must be fp32, fp16 or int8, got '" + name + "'");
}

Status write_package(const rt::ProgramDesc& program, const std::string& path, PackageStats* stats,
                     const PackageOptions& options) {
  SOD2_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, serialize_package(program, stats, options));
  return write_file_atomically(bytes, path);
}

Status write_file_atomically(std::span<const uint8_t> bytes, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path tmp = target.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return io_error("cannot write " + tmp.string() + ": " + std::strerror(errno));
    f.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
    f.flush();
    if (!f) {
      const std::string why = std::strerror(errno);
      f.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      return io_error("cannot write " + tmp.string() + ": " + why);
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return io_error("cannot move the package into place at " + path + ": " + ec.message());
  }
  return Status::ok_status();
}

}  // namespace sod2::package
