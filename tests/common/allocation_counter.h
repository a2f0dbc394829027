// Counts every heap allocation of the test binary that includes this header (in exactly one
// source file: it replaces the global operator new and delete), for tests asserting that a
// steady state allocates nothing. Allocations inside a marked library call (LibraryCall: oneDNN's
// primitive execute) are not ours to avoid and are counted apart, in g_library_allocations.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "runtime/kernels/library_call.h"

inline std::atomic<int64_t> g_allocations{0};
inline std::atomic<int64_t> g_library_allocations{0};

inline void count_allocation() {
  if (sod2::rt::library_call_depth > 0)
    ++g_library_allocations;
  else
    ++g_allocations;
}

// Counts every allocation of this test binary; every plain form is replaced so that no
// allocation made by one allocator is freed by another (AddressSanitizer checks the pairing). GCC
// cannot see that the replaced new and delete pair malloc with free, hence the pragma.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  count_allocation();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  count_allocation();
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop
