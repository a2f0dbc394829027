#include "runtime/agent/device_sensors.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>

namespace sod2::agent {
namespace {

namespace fs = std::filesystem;

// The N of "thermal_zoneN" / "cpuN", or -1 when the name is not the prefix and digits.
long numbered(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return -1;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return -1;
  return std::strtol(digits.c_str(), nullptr, 10);
}

// The numbered entries of `dir` in numeric order, at most `limit`.
std::vector<std::pair<long, fs::path>> numbered_entries(const fs::path& dir,
                                                        const std::string& prefix, size_t limit) {
  std::vector<std::pair<long, fs::path>> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const long n = numbered(it->path().filename().string(), prefix);
    if (n >= 0) out.emplace_back(n, it->path());
  }
  std::sort(out.begin(), out.end());
  if (out.size() > limit) out.resize(limit);
  return out;
}

// The first line of a small sysfs file (at most its first 128 bytes: a value or a name, never
// more on a sane device): "" and `why` set when it cannot be read.
std::string first_line(const std::string& path, std::string* why) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *why = errno ? std::strerror(errno) : "cannot be opened";
    return {};
  }
  char buf[128];
  in.read(buf, sizeof buf);
  if (in.bad()) {
    *why = errno ? std::strerror(errno) : "cannot be read";
    return {};
  }
  std::string s(buf, static_cast<size_t>(in.gcount()));
  s = s.substr(0, s.find('\n'));
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// A zone's type names it; text the kernel (or a vendor) wrote is kept printable and short.
std::string printable(std::string s) {
  if (s.size() > 48) s.resize(48);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return s;
}

}  // namespace

DeviceSensors::DeviceSensors(std::string root) {
  const fs::path thermal = fs::path(root) / "class/thermal";
  std::map<std::string, int> seen;
  for (const auto& [n, dir] : numbered_entries(thermal, "thermal_zone", kMaxSensors)) {
    std::string why;
    std::string type = printable(first_line((dir / "type").string(), &why));
    const std::string zone = "thermal_zone" + std::to_string(n);
    if (type.empty()) type = zone;
    // Phones name several zones alike; the zone number keeps them apart.
    std::string name = "thermal:" + type;
    if (seen[type]++ > 0) name += "#" + std::to_string(n);
    sources_.push_back({name, (dir / "temp").string(), zone + " (" + type + ")", 1, true});
  }
  if (std::none_of(sources_.begin(), sources_.end(),
                   [](const Source& s) { return s.millidegrees; }))
    missing_.push_back("thermal zones: none under " + thermal.string());
  const fs::path cpus = fs::path(root) / "devices/system/cpu";
  size_t freqs = 0;
  for (const auto& [n, dir] : numbered_entries(cpus, "cpu", kMaxSensors)) {
    std::error_code ec;
    if (!fs::is_directory(dir / "cpufreq", ec)) continue;
    const std::string cpu = "cpu" + std::to_string(n);
    // kHz; scaling_cur_freq is the one unprivileged readers may see.
    sources_.push_back({cpu + " MHz", (dir / "cpufreq/scaling_cur_freq").string(),
                        cpu + " frequency", 1e-3, false});
    ++freqs;
  }
  if (freqs == 0)
    missing_.push_back("CPU frequencies: no cpuN/cpufreq under " + cpus.string() +
                       " (the kernel, or a container, does not expose them)");
}

SensorSnapshot DeviceSensors::read() const {
  SensorSnapshot snap;
  snap.unreadable = missing_;
  for (const Source& s : sources_) {
    std::string why;
    const std::string text = first_line(s.path, &why);
    char* end = nullptr;
    errno = 0;
    const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
    if (text.empty() || errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(v)) {
      if (why.empty()) why = text.empty() ? "empty" : "not a number (\"" + printable(text) + "\")";
      snap.unreadable.push_back(s.label + ": " + why);
      continue;
    }
    double value = v * s.scale;
    // Linux reports millidegrees; some vendors' zones report whole (or tenth) degrees. No
    // device runs at 200 degrees, so a reading past that is milli.
    if (s.millidegrees) value = std::fabs(v) >= 200 ? v / 1000 : v;
    snap.values.push_back({s.name, value});
  }
  return snap;
}

}  // namespace sod2::agent
