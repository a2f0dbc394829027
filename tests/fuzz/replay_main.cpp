// Runs a libFuzzer target's LLVMFuzzerTestOneInput over files, without libFuzzer: the same fuzzer
// source then builds with gcc, and ctest replays the seeds and every saved crash reproducer on each
// build (under the asan preset with sanitizers, too).
//
//   onnx_import_fuzz_replay DIR_OR_FILE...
//
// Directories are walked recursively in sorted order; dot files and README* are skipped. Exits 1 if
// an argument does not exist or no input was found; a bad input crashes the process (that is the
// test failure), and the name of the file being run is printed before it runs.
//
// Like libFuzzer under scripts/run-fuzzer.sh (-rss_limit_mb=2048, which also caps single
// allocations at 2048 MB), one allocation above kMaxAllocation aborts the replay: an input that
// makes the importer ask for gigabytes fails here at once instead of paging the CI machine.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
#define SOD2_REPLAY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOD2_REPLAY_ASAN 1
#endif
#endif

#ifdef SOD2_REPLAY_ASAN
// ASan owns operator new; its own limit does the same job (the report names the allocation site).
extern "C" const char* __asan_default_options() { return "max_allocation_size_mb=2048"; }
#else
namespace {
constexpr size_t kMaxAllocationMb = 2048;
constexpr size_t kMaxAllocation = kMaxAllocationMb << 20;
}  // namespace

// Replaceable global allocation functions ([new.delete]); the nothrow and aligned forms of
// libstdc++ fall back to these or to malloc/free, so the pairs stay consistent. (GCC's
// -Wmismatched-new-delete cannot see that this operator new is malloc.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(size_t size) {
  if (size > kMaxAllocation) {
    std::fprintf(stderr,
                 "replay: an allocation of %zu bytes exceeds the %zu MB limit the fuzzer runs "
                 "with (-rss_limit_mb): a small input must not make the code under test "
                 "allocate that much\n",
                 size, kMaxAllocationMb);
    std::abort();
  }
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) { return ::operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { ::operator delete(p); }
void operator delete[](void* p, size_t) noexcept { ::operator delete(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

namespace {

bool skipped(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.empty() || name[0] == '.' || name.rfind("README", 0) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
    } else if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> found;
      for (const auto& e : fs::recursive_directory_iterator(arg, ec))
        if (e.is_regular_file() && !skipped(e.path())) found.push_back(e.path());
      if (ec) {
        std::fprintf(stderr, "cannot list %s: %s\n", argv[i], ec.message().c_str());
        return 1;
      }
      std::sort(found.begin(), found.end());
      inputs.insert(inputs.end(), found.begin(), found.end());
    } else {
      std::fprintf(stderr, "%s: no such file or directory\n", argv[i]);
      return 1;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "no inputs found\n");
    return 1;
  }
  for (const fs::path& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", p.c_str());
      return 1;
    }
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
    std::fprintf(stderr, "running %s (%zu bytes)\n", p.c_str(), bytes.size());
    // Copy into an exactly sized buffer, as libFuzzer does, so an over-read is caught by ASan.
    std::vector<uint8_t> exact(bytes);
    exact.shrink_to_fit();
    LLVMFuzzerTestOneInput(exact.empty() ? nullptr : exact.data(), exact.size());
  }
  std::printf("replayed %zu inputs without a crash\n", inputs.size());
  return 0;
}
