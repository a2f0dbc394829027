#include "runtime/package/format.h"

#include <cstring>

namespace sod2::rt {
namespace {

void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{p[i]} << (8 * i);
  return v;
}
uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

}  // namespace

void encode_package_header(const PackageHeader& h, std::span<uint8_t, kPackageHeaderSize> out) {
  uint8_t* p = out.data();
  std::memset(p, 0, kPackageHeaderSize);
  std::memcpy(p, kPackageMagic, 8);
  put_u32(p + 8, h.version);
  put_u32(p + 12, h.header_size);
  put_u64(p + 16, h.file_size);
  put_u64(p + 24, h.manifest_offset);
  put_u64(p + 32, h.manifest_length);
  put_u64(p + 40, h.blob_offset);
  put_u64(p + 48, h.blob_length);
  put_u64(p + 56, h.trailer_offset);
}

PackageHeader decode_package_header(std::span<const uint8_t, kPackageHeaderSize> bytes) {
  const uint8_t* p = bytes.data();
  PackageHeader h;
  h.version = get_u32(p + 8);
  h.header_size = get_u32(p + 12);
  h.file_size = get_u64(p + 16);
  h.manifest_offset = get_u64(p + 24);
  h.manifest_length = get_u64(p + 32);
  h.blob_offset = get_u64(p + 40);
  h.blob_length = get_u64(p + 48);
  h.trailer_offset = get_u64(p + 56);
  return h;
}

bool looks_like_package(std::span<const uint8_t> bytes) {
  return bytes.size() >= 8 && std::memcmp(bytes.data(), kPackageMagic, 8) == 0;
}

}  // namespace sod2::rt
