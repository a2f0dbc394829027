#include "plugins/device/agent_binary.h"

#include "runtime/exec/process_info.h"

#include <limits.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

#include "plugins/device/child_process.h"

namespace sod2::device {

std::string host_arch() {
  struct utsname u {};
  return uname(&u) == 0 ? std::string(u.machine) : std::string();
}

Expected<std::string> find_agent_binary(const std::string& arch_in) {
  // 32-bit Arm userlands on arm64 kernels report armv8l; the agent is built for arm64 only.
  const std::string arch = arch_in == "arm64" ? "aarch64" : arch_in;
  std::string env_name = "SOD2_AGENT_";
  for (char c : arch)
    env_name += std::isalnum(static_cast<unsigned char>(c)) ? std::toupper(c) : '_';
  std::vector<std::string> tried;
  auto check = [&](const std::string& p) {
    tried.push_back(p);
    return !find_executable(p).empty();
  };
  if (const char* e = std::getenv(env_name.c_str()); e && *e && check(e)) return std::string(e);
  const bool native = arch == host_arch();
  if (native) {
    if (const char* e = std::getenv("SOD2_AGENT"); e && *e && check(e)) return std::string(e);
    if (const std::string p = rt::executable_dir() + "/sod2-agent"; check(p)) return p;
  }
  if (const std::string p = rt::executable_dir() + "/agents/" + arch + "/sod2-agent"; check(p))
    return p;
  std::string list;
  for (const std::string& t : tried) list += (list.empty() ? "" : ", ") + t;
  return not_found("no sod2-agent for " + arch + " (looked at $" + env_name +
                   (native ? ", $SOD2_AGENT" : "") + (list.empty() ? "" : ", " + list) + "); " +
                   (arch == "aarch64" ? "build one with `make cross-arm64`, or set $" + env_name
                                      : "set $" + env_name + " to an agent built for " + arch));
}

}  // namespace sod2::device
