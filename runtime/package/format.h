// The fixed parts of a .sod2 package (FORMAT.md): the 64-byte header, the 40-byte trailer and the
// layout rules both the writer (core/package) and the loader follow. All integers little-endian.
//
//   [header 64][manifest][zero pad to 64][weight blob, every tensor 64-aligned][trailer 40]
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace sod2::rt {

inline constexpr uint8_t kPackageMagic[8] = {'S', 'O', 'D', '2', 'P', 'K', 'G', 0};
inline constexpr uint8_t kPackageTrailerMagic[8] = {'S', 'O', 'D', '2', 'E', 'N', 'D', 0};
// Bumped on any change a loader of the previous version would misread.
inline constexpr uint32_t kPackageFormatVersion = 1;
inline constexpr size_t kPackageHeaderSize = 64;
inline constexpr size_t kPackageDigestSize = 32;
inline constexpr size_t kPackageTrailerSize = kPackageDigestSize + 8;  // digest, then magic
// The blob's start and every tensor in it: a cache line, and what SIMD loads want.
inline constexpr size_t kPackageAlignment = 64;

struct PackageHeader {
  uint32_t version = kPackageFormatVersion;
  uint32_t header_size = kPackageHeaderSize;
  uint64_t file_size = 0;
  uint64_t manifest_offset = 0;
  uint64_t manifest_length = 0;
  uint64_t blob_offset = 0;
  uint64_t blob_length = 0;
  uint64_t trailer_offset = 0;
};

// Writes the magic and the fields into out[0, kPackageHeaderSize).
void encode_package_header(const PackageHeader& h, std::span<uint8_t, kPackageHeaderSize> out);
// Reads the fields (not the magic, not validated) from bytes[0, kPackageHeaderSize).
PackageHeader decode_package_header(std::span<const uint8_t, kPackageHeaderSize> bytes);

// Whether `bytes` starts like a package (the magic): how `sod2 run` tells it from an ONNX file.
bool looks_like_package(std::span<const uint8_t> bytes);

inline constexpr uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace sod2::rt
