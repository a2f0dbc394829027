// SHA-256 (FIPS 180-4), small and dependency-free: a package's trailer holds the digest of every
// byte before it, so the loader detects a truncated or corrupted download before trusting any
// offset. Incremental, so the writer can hash while it streams sections to disk.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace sod2::rt {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(std::span<const uint8_t> bytes);
  // Pads and returns the digest; the object must not be updated afterwards.
  Sha256Digest finish();

 private:
  void compress(const uint8_t* block);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

Sha256Digest sha256(std::span<const uint8_t> bytes);
std::string to_hex(const Sha256Digest& digest);

}  // namespace sod2::rt
