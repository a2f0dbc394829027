// Marks calls into a third-party library that allocate on the heap in ways we cannot avoid:
// oneDNN's primitive execute builds a small map of its arguments on every call (a few
// allocations, freed before it returns). The steady-state tests count every heap allocation of a
// warm run and must tell these from ours, which stay at zero.
#pragma once

namespace sod2::rt {

// How many marked library calls the current thread is inside.
inline thread_local int library_call_depth = 0;

class LibraryCall {
 public:
  LibraryCall() { ++library_call_depth; }
  ~LibraryCall() { --library_call_depth; }
  LibraryCall(const LibraryCall&) = delete;
  LibraryCall& operator=(const LibraryCall&) = delete;
};

}  // namespace sod2::rt
