#include "runtime/package/package_loader.h"

#include <climits>
#include <cstring>
#include <vector>

#include "core/status/input_file.h"
#include "runtime/package/format.h"
#include "runtime/package/manifest_reader.h"
#include "runtime/package/mapped_file.h"
#include "runtime/package/sha256.h"
#include "runtime/package/sod2_package.pb.h"

namespace sod2::rt {
namespace {

std::string n(uint64_t v) { return std::to_string(v); }

// The header's layout rules (FORMAT.md §Layout), checked before any section is touched. The
// layout is fully determined by the manifest and blob lengths, so every field is checked for
// equality with where the layout puts it: no gaps, no overlaps, nothing after the trailer.
Status check_layout(const PackageHeader& h, uint64_t actual_size) {
  if (h.version == 0 || h.version > kPackageFormatVersion) {
    if (h.version > kPackageFormatVersion) {
      return unsupported("package format version " + n(h.version) +
                         " is newer than this runtime reads (" + n(kPackageFormatVersion) +
                         "): update the runtime, or compile the model with a matching sod2");
    }
    return parse_error("header: format version 0 is not a valid version");
  }
  if (h.header_size != kPackageHeaderSize) {
    return parse_error("header: header size " + n(h.header_size) + ", expected " +
                       n(kPackageHeaderSize));
  }
  if (h.file_size != actual_size) {
    if (actual_size < h.file_size) {
      return parse_error("the file is truncated: " + n(actual_size) + " bytes of the " +
                         n(h.file_size) + " its header declares");
    }
    return parse_error("the file is " + n(actual_size) + " bytes but its header declares " +
                       n(h.file_size) + ": bytes were appended or the header is corrupt");
  }
  if (h.manifest_offset != kPackageHeaderSize) {
    return parse_error("header: manifest offset " + n(h.manifest_offset) + ", expected " +
                       n(kPackageHeaderSize));
  }
  const uint64_t room = actual_size - kPackageHeaderSize - kPackageTrailerSize;
  if (h.manifest_length > room) {
    return parse_error("header: manifest length " + n(h.manifest_length) +
                       " runs past the end of the file (" + n(actual_size) + " bytes)");
  }
  if (h.blob_offset % kPackageAlignment != 0) {
    return parse_error("header: weight blob offset " + n(h.blob_offset) + " is not " +
                       n(kPackageAlignment) + "-byte aligned");
  }
  const uint64_t blob_at = align_up(h.manifest_offset + h.manifest_length, kPackageAlignment);
  if (h.blob_offset != blob_at) {
    return parse_error("header: weight blob offset " + n(h.blob_offset) +
                       " is not right after the manifest (" + n(blob_at) + ")");
  }
  if (h.blob_offset > actual_size || h.blob_length > actual_size - h.blob_offset ||
      h.blob_length % kPackageAlignment != 0) {
    return parse_error("header: weight blob [" + n(h.blob_offset) + ", +" + n(h.blob_length) +
                       ") is outside the file (" + n(actual_size) +
                       " bytes) or not a multiple of " + n(kPackageAlignment));
  }
  if (h.trailer_offset != h.blob_offset + h.blob_length ||
      h.trailer_offset + kPackageTrailerSize != actual_size) {
    return parse_error("header: trailer offset " + n(h.trailer_offset) +
                       " is not right after the weight blob and " + n(kPackageTrailerSize) +
                       " bytes before the end of the file");
  }
  return Status::ok_status();
}

// A copy of `bytes` whose start is 64-byte aligned, for callers whose buffer is not.
struct AlignedCopy {
  std::vector<uint8_t> storage;
  std::span<const uint8_t> bytes;
};

}  // namespace

Expected<PackageSections> read_package_sections(std::span<const uint8_t> bytes,
                                                std::shared_ptr<const void> keep_alive,
                                                const PackageLoadOptions& options) {
  if (!looks_like_package(bytes)) {
    return parse_error(bytes.size() < 8 ? "not a SoD2 package: the file is " + n(bytes.size()) +
                                              " bytes, shorter than the magic"
                                        : "not a SoD2 package (the file does not start with "
                                          "'SOD2PKG'): compile a model with `sod2 compile`");
  }
  if (bytes.size() < kPackageHeaderSize + kPackageTrailerSize) {
    return parse_error("the file is truncated: " + n(bytes.size()) +
                       " bytes, less than a header and a trailer (" +
                       n(kPackageHeaderSize + kPackageTrailerSize) + ")");
  }
  if (reinterpret_cast<uintptr_t>(bytes.data()) % kPackageAlignment != 0) {
    auto copy = std::make_shared<AlignedCopy>();
    copy->storage.resize(bytes.size() + kPackageAlignment);
    const auto base = reinterpret_cast<uintptr_t>(copy->storage.data());
    const size_t skip = (kPackageAlignment - base % kPackageAlignment) % kPackageAlignment;
    std::memcpy(copy->storage.data() + skip, bytes.data(), bytes.size());
    copy->bytes = std::span<const uint8_t>(copy->storage.data() + skip, bytes.size());
    const std::span<const uint8_t> aligned = copy->bytes;
    return read_package_sections(aligned, std::shared_ptr<const void>(std::move(copy)), options);
  }
  const PackageHeader h = decode_package_header(
      std::span<const uint8_t, kPackageHeaderSize>(bytes.data(), kPackageHeaderSize));
  SOD2_RETURN_IF_ERROR(check_layout(h, bytes.size()));
  const uint8_t* trailer = bytes.data() + h.trailer_offset;
  if (std::memcmp(trailer + kPackageDigestSize, kPackageTrailerMagic, 8) != 0) {
    return parse_error(
        "trailer: the end marker 'SOD2END' is missing: the file is truncated or "
        "corrupt");
  }
  if (options.verify_checksum) {
    const Sha256Digest digest = sha256(bytes.first(h.trailer_offset));
    if (std::memcmp(digest.data(), trailer, kPackageDigestSize) != 0) {
      Sha256Digest stored;
      std::memcpy(stored.data(), trailer, kPackageDigestSize);
      return parse_error("SHA-256 mismatch: the file's bytes hash to " + to_hex(digest) +
                         " but its trailer records " + to_hex(stored) +
                         ": the file is corrupt (re-copy or recompile it)");
    }
  }
  if (h.manifest_length > static_cast<uint64_t>(INT_MAX)) {
    return parse_error("header: manifest length " + n(h.manifest_length) +
                       " is above protobuf's 2 GiB limit");
  }
  PackageSections sections;
  auto manifest = std::make_shared<pkg::Manifest>();
  if (!manifest->ParseFromArray(bytes.data() + h.manifest_offset,
                                static_cast<int>(h.manifest_length))) {
    return parse_error("the manifest (" + n(h.manifest_length) +
                       " bytes) is not a valid protobuf message");
  }
  sections.manifest = std::move(manifest);
  sections.blob = bytes.subspan(h.blob_offset, h.blob_length);
  sections.keep_alive = std::move(keep_alive);
  return sections;
}

Expected<ProgramDesc> load_package(std::span<const uint8_t> bytes,
                                   std::shared_ptr<const void> keep_alive,
                                   const PackageLoadOptions& options) {
  SOD2_ASSIGN_OR_RETURN(PackageSections sections,
                        read_package_sections(bytes, std::move(keep_alive), options));
  if (sections.manifest->has_family()) {
    return invalid_argument("this is a family package ('" + sections.manifest->family().name() +
                            "', " + std::to_string(sections.manifest->family().variants_size()) +
                            " variants), not a single model: run it with `sod2 ofa` or load "
                            "it with load_family_package()");
  }
  SOD2_ASSIGN_OR_RETURN(ProgramDesc program,
                        program_from_manifest(*sections.manifest, sections.blob));
  program.constant_storage = std::move(sections.keep_alive);
  return program;
}

Expected<ProgramDesc> load_package_file(const std::string& path,
                                        const PackageLoadOptions& options) {
  auto file = MappedFile::open(path);
  if (!file.ok()) return file.status();
  const std::span<const uint8_t> bytes = (*file)->bytes();
  auto program = load_package(bytes, *file, options);
  if (!program.ok()) return program.status().with_context("package " + path);
  return program;
}

bool is_package_file(const std::string& path) {
  auto file = InputFile::open(path, kNoInputSizeLimit);
  uint8_t magic[8] = {};
  if (!file.ok() || !file->read_at(0, magic).ok()) return false;
  return looks_like_package(std::span<const uint8_t>(magic, 8));
}

}  // namespace sod2::rt
