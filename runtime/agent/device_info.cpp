#include "runtime/agent/device_info.h"

#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace sod2::agent {
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  const size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// x86 says "model name"; arm64 kernels often only "Hardware" or nothing but "CPU part".
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, hardware, part;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if (key == "model name" && !value.empty()) return value;
    if (key == "Hardware" && hardware.empty()) hardware = value;
    if (key == "CPU part" && part.empty()) part = "CPU part " + value;
  }
  return !hardware.empty() ? hardware : part;
}

uint64_t physical_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  while (in >> key >> kb) {
    if (key == "MemTotal:") return kb * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

}  // namespace

MachineInfo machine_info(const std::string& dir) {
  MachineInfo m;
  m.cpu = cpu_model();
  m.cores = std::thread::hardware_concurrency();
  m.memory_bytes = physical_memory();
  struct utsname u {};
  if (uname(&u) == 0) {
    m.os = std::string(u.sysname) + " " + u.release;
    m.arch = u.machine;
    m.hostname = u.nodename;
  }
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) == 0)
    m.free_disk_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  return m;
}

}  // namespace sod2::agent
