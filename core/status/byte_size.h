// Byte counts as people read them, for messages, tables and tooltips: "17 B", "1.5 KiB",
// "312.0 MiB". Header-only: core, the runtime's tools and the studio all print sizes one way.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace sod2 {

inline std::string human_bytes(int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while ((v >= 1024 || v <= -1024) && unit < 4) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  }
  return buf;
}

}  // namespace sod2
