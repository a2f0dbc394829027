// SHA-256 against the FIPS 180-2 test vectors (appendix B), plus incremental hashing: any split
// of the input into update() calls gives the one-shot digest.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/package/sha256.h"

namespace sod2::rt {
namespace {

std::string hex_of(const std::string& s) {
  return to_hex(
      sha256(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size())));
}

TEST(Sha256, Fips180_2OneBlock) {
  EXPECT_EQ(hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, Fips180_2MultiBlock) {
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, Fips180_2MillionAs) {
  EXPECT_EQ(hex_of(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, EmptyInput) {
  EXPECT_EQ(hex_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// Lengths around the padding boundaries (55, 56, 63, 64 bytes mod 64) split at every point.
TEST(Sha256, IncrementalMatchesOneShot) {
  std::vector<uint8_t> data(200);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
  for (size_t len : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 200}) {
    const std::span<const uint8_t> all(data.data(), len);
    const Sha256Digest want = sha256(all);
    for (size_t cut = 0; cut <= len; ++cut) {
      Sha256 h;
      h.update(all.first(cut));
      h.update(all.subspan(cut));
      EXPECT_EQ(h.finish(), want) << "length " << len << " split at " << cut;
    }
  }
}

}  // namespace
}  // namespace sod2::rt
