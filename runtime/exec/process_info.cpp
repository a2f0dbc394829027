#include "runtime/exec/process_info.h"

#include <limits.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace sod2::rt {

std::string executable_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

ResidentBytes resident_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  ResidentBytes r;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string key;
    int64_t kb = 0;
    s >> key >> kb;
    if (key == "VmRSS:") r.current = kb * 1024;
    if (key == "VmHWM:") r.peak = kb * 1024;
  }
  return r;
}

bool restart_peak_resident() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

int64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<int64_t>(pages) * page;
}

}  // namespace sod2::rt
