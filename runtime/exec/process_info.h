// Facts about this process that the agent, the transports and the CLI report or need: the folder
// of its executable, its resident memory, and the machine's physical memory.
#pragma once

#include <cstdint>
#include <string>

namespace sod2::rt {

// The folder holding this executable ("." when /proc/self/exe cannot be read).
std::string executable_dir();

// VmRSS and VmHWM of this process in bytes (0 where /proc is unavailable).
struct ResidentBytes {
  int64_t current = 0;
  int64_t peak = 0;
};
ResidentBytes resident_bytes();

// Restarts VmHWM from the current VmRSS (Linux 4.0+, /proc/self/clear_refs), so a later peak
// counts only what happened since, not a transient peak before (a model's load holds its parsed
// protobuf and its tensors at once). False where the kernel refuses; the peak then still
// covers the process's whole life.
bool restart_peak_resident();

// The machine's physical memory in bytes (0 where the system does not say).
int64_t physical_memory_bytes();

}  // namespace sod2::rt
