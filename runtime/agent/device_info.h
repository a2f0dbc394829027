// What the agent tells the host about the machine it runs on, and its own memory figures. Read
// from /proc and uname; on Android from the same files (getprop needs no libraries either way).
#pragma once

#include <cstdint>
#include <string>

namespace sod2::agent {

struct MachineInfo {
  std::string cpu;  // the CPU's model name, or "" when /proc/cpuinfo does not say
  uint32_t cores = 0;
  uint64_t memory_bytes = 0;
  std::string os;    // "Linux 6.1.0-18-amd64"
  std::string arch;  // "x86_64", "aarch64"
  std::string hostname;
  uint64_t free_disk_bytes = 0;  // in `dir`
};

MachineInfo machine_info(const std::string& dir);

}  // namespace sod2::agent
