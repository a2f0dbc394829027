// libFuzzer target for the NumPy .npy reader (app/profiling/npy_file.h), which reads files a
// person names with `--input` or the studio's "Input files": any bytes are either an error or a
// tensor whose byte size is its element count times its element size. Never a crash, a sanitizer
// report or an allocation beyond the file's own size.
//
// Built as npy_fuzzer with SOD2_FUZZ=ON and as npy_fuzz_replay, which ctest runs over
// seeds/npy and the saved reproducers.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "app/profiling/npy_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto t = sod2::profiling::parse_npy(std::span<const uint8_t>(data, size), "fuzz.npy");
  if (t.ok()) {
    const size_t expected =
        static_cast<size_t>(t->shape().numel()) * sod2::rt::dtype_size(t->dtype());
    if (t->bytes().size() != expected || t->bytes().size() > size) std::abort();
  }
  return 0;
}
