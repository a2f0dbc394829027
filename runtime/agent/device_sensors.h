// The device's thermal zones and CPU frequencies, as Linux and Android expose them under /sys:
// what a sustained run reports beside its latencies, so throttling shows as what it is. Phones
// restrict many of these files; what cannot be read is said, with the reason, instead of being
// left out silently.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sod2::agent {

struct SensorValue {
  std::string name;  // "thermal:cpu-0-0" (degrees Celsius), "cpu0 MHz"
  double value = 0;
};

struct SensorSnapshot {
  std::vector<SensorValue> values;
  // "thermal_zone3 (battery): Permission denied", "CPU frequencies: none under ...".
  std::vector<std::string> unreadable;
};

class DeviceSensors {
 public:
  // Finds the sensors under `sysfs_root` ("/sys"; tests use a folder of their own), at most
  // kMaxSensors of each kind.
  explicit DeviceSensors(std::string sysfs_root);
  SensorSnapshot read() const;

  static constexpr size_t kMaxSensors = 64;

 private:
  struct Source {
    std::string name, path, label;  // label: how an unreadable file is named
    double scale = 1;               // the file's unit to the reported one
    bool millidegrees = false;      // a thermal zone: millidegrees, or degrees on some devices
  };
  std::vector<Source> sources_;
  std::vector<std::string> missing_;  // kinds of sensor the device exposes none of
};

}  // namespace sod2::agent
