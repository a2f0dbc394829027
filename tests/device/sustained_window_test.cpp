// What a sustained run's window says (issue 24 item 3): the agent's per-window summary of its
// runs, and the thermal zones and CPU frequencies it reads from a sysfs tree (a fake one here,
// laid out as Linux and Android lay out theirs).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "runtime/agent/device_sensors.h"
#include "runtime/agent/sustained_window.h"

namespace sod2::agent {
namespace {

namespace fs = std::filesystem;

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("sod2_sysfs_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  fs::path root_;
};

const SensorValue* find(const SensorSnapshot& s, const std::string& name) {
  auto it = std::find_if(s.values.begin(), s.values.end(),
                         [&](const SensorValue& v) { return v.name == name; });
  return it == s.values.end() ? nullptr : &*it;
}

TEST_F(FakeSysfs, ReadsThermalZonesAndCpuFrequenciesInTheirUnits) {
  write("class/thermal/thermal_zone0/type", "cpu-0-0-usr\n");
  write("class/thermal/thermal_zone0/temp", "48300\n");  // millidegrees
  write("class/thermal/thermal_zone1/type", "battery\n");
  write("class/thermal/thermal_zone1/temp", "31\n");           // a vendor's whole degrees
  write("class/thermal/thermal_zone2/type", "cpu-0-0-usr\n");  // the same name again
  write("class/thermal/thermal_zone2/temp", "50000\n");
  write("class/thermal/cooling_device0/type", "fan\n");                    // not a zone
  write("devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "1804800\n");  // kHz
  write("devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "300000\n");
  fs::create_directories(root_ / "devices/system/cpu/cpufreq");  // policy folder, not a CPU
  const SensorSnapshot s = DeviceSensors(root_.string()).read();
  EXPECT_TRUE(s.unreadable.empty()) << s.unreadable.front();
  ASSERT_EQ(s.values.size(), 5u);
  ASSERT_NE(find(s, "thermal:cpu-0-0-usr"), nullptr);
  EXPECT_DOUBLE_EQ(find(s, "thermal:cpu-0-0-usr")->value, 48.3);
  ASSERT_NE(find(s, "thermal:cpu-0-0-usr#2"), nullptr);
  EXPECT_DOUBLE_EQ(find(s, "thermal:battery")->value, 31);
  EXPECT_DOUBLE_EQ(find(s, "cpu0 MHz")->value, 1804.8);
  EXPECT_DOUBLE_EQ(find(s, "cpu1 MHz")->value, 300);
}

TEST_F(FakeSysfs, WhatCannotBeReadIsSaidWithTheReason) {
  write("class/thermal/thermal_zone0/type", "modem\n");
  fs::create_directories(root_ / "class/thermal/thermal_zone0/temp");  // read fails
  write("class/thermal/thermal_zone1/type", "skin\n");
  write("class/thermal/thermal_zone1/temp", "hot\n");
  write("class/thermal/thermal_zone2/type", "gpu\n");                 // no temp file at all
  fs::create_directories(root_ / "devices/system/cpu/cpu0/cpufreq");  // no scaling_cur_freq
  const SensorSnapshot s = DeviceSensors(root_.string()).read();
  EXPECT_TRUE(s.values.empty());
  ASSERT_EQ(s.unreadable.size(), 4u);
  EXPECT_EQ(s.unreadable[0].rfind("thermal_zone0 (modem): ", 0), 0u) << s.unreadable[0];
  EXPECT_EQ(s.unreadable[1], "thermal_zone1 (skin): not a number (\"hot\")");
  EXPECT_EQ(s.unreadable[2], "thermal_zone2 (gpu): No such file or directory");
  EXPECT_EQ(s.unreadable[3], "cpu0 frequency: No such file or directory");
}

TEST_F(FakeSysfs, ADeviceWithoutSensorsSaysSoOnce) {
  fs::create_directories(root_ / "devices/system/cpu/cpu0");
  const SensorSnapshot s = DeviceSensors(root_.string()).read();
  EXPECT_TRUE(s.values.empty());
  ASSERT_EQ(s.unreadable.size(), 2u);
  EXPECT_NE(s.unreadable[0].find("thermal zones: none under"), std::string::npos);
  EXPECT_NE(s.unreadable[1].find("CPU frequencies: no cpuN/cpufreq"), std::string::npos);
}

TEST_F(FakeSysfs, HostileSysfsTextIsKeptShortAndPrintable) {
  write("class/thermal/thermal_zone0/type", std::string(500, 'z') + "\x01\x7f");
  write("class/thermal/thermal_zone0/temp", "1e400\n");  // not finite
  const SensorSnapshot s = DeviceSensors(root_.string()).read();
  ASSERT_FALSE(s.unreadable.empty());
  const std::string& zone = s.unreadable.back();
  EXPECT_EQ(zone.rfind("thermal_zone0 (zzz", 0), 0u) << zone;
  EXPECT_NE(zone.find("not a number (\"1e400\")"), std::string::npos) << zone;
  EXPECT_LT(zone.size(), 120u);
  for (char c : zone) EXPECT_TRUE(c >= 0x20 && c <= 0x7e) << zone;
}

TEST(SustainedWindowBuilder, SummarisesItsRunsAndStartsTheNextWindowEmpty) {
  SustainedWindowBuilder b(2, nullptr);
  for (int i = 1; i <= 100; ++i) {
    const double node[2] = {0.25 * i, 1.0};
    b.add_run(i, node);
  }
  wire::SustainedWindow w = b.close(0, 0, 1, 4096);
  EXPECT_EQ(w.runs(), 100u);
  EXPECT_DOUBLE_EQ(w.min_ms(), 1);
  EXPECT_DOUBLE_EQ(w.p50_ms(), 50);  // nearest rank
  EXPECT_DOUBLE_EQ(w.p90_ms(), 90);
  EXPECT_DOUBLE_EQ(w.p99_ms(), 99);
  EXPECT_DOUBLE_EQ(w.max_ms(), 100);
  EXPECT_DOUBLE_EQ(w.mean_ms(), 50.5);
  ASSERT_EQ(w.group_mean_ms_size(), 2);
  EXPECT_DOUBLE_EQ(w.group_mean_ms(0), 0.25 * 50.5);
  EXPECT_DOUBLE_EQ(w.group_mean_ms(1), 1.0);
  EXPECT_EQ(w.rss_bytes(), 4096);

  const double node[2] = {3, 3};
  b.add_run(7, node);
  wire::SustainedWindow next = b.close(1, 1, 2, 0);
  EXPECT_EQ(next.runs(), 1u);
  EXPECT_DOUBLE_EQ(next.p99_ms(), 7);
  EXPECT_DOUBLE_EQ(next.group_mean_ms(0), 3);

  wire::SustainedWindow empty = b.close(2, 2, 3, 0);
  EXPECT_EQ(empty.runs(), 0u);
  EXPECT_EQ(empty.group_mean_ms_size(), 0);
  EXPECT_EQ(empty.max_ms(), 0);
}

TEST(SustainedWindowBuilder, AWindowOfMoreRunsThanItKeepsStaysBoundedAndInsideItsExtremes) {
  SustainedWindowBuilder b(0, nullptr);
  const uint64_t n = SustainedWindowBuilder::kMaxKept * 2;
  for (uint64_t i = 0; i < n; ++i) b.add_run(1.0 + static_cast<double>(i % 1000) / 1000, {});
  wire::SustainedWindow w = b.close(0, 0, 1, 0);
  EXPECT_EQ(w.runs(), n);
  EXPECT_DOUBLE_EQ(w.min_ms(), 1.0);
  EXPECT_DOUBLE_EQ(w.max_ms(), 1.999);
  EXPECT_NEAR(w.p50_ms(), 1.5, 0.01);  // a uniform sample of a uniform spread
  EXPECT_NEAR(w.p99_ms(), 1.99, 0.01);
  EXPECT_LE(w.p99_ms(), w.max_ms());
}

TEST_F(FakeSysfs, SensorsAreAveragedPerWindowAndAnUnreadableOneIsSaidOnce) {
  write("class/thermal/thermal_zone0/type", "cpu\n");
  write("class/thermal/thermal_zone0/temp", "40000\n");
  write("class/thermal/thermal_zone1/type", "modem\n");
  fs::create_directories(root_ / "class/thermal/thermal_zone1/temp");
  write("devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "1000000\n");
  const DeviceSensors sensors(root_.string());
  SustainedWindowBuilder b(0, &sensors);
  b.sample_sensors(0);
  write("class/thermal/thermal_zone0/temp", "50000\n");
  b.sample_sensors(0.5);  // under a second since the last reading: not read
  b.sample_sensors(1.0);
  b.add_run(1, {});
  wire::SustainedWindow w = b.close(0, 0, 1, 0);
  ASSERT_EQ(w.sensors_size(), 2);
  EXPECT_EQ(w.sensors(0).name(), "thermal:cpu");
  EXPECT_EQ(w.sensors(1).name(), "cpu0 MHz");
  EXPECT_DOUBLE_EQ(w.sensors(1).mean(), 1000);
  EXPECT_DOUBLE_EQ(w.sensors(0).mean(), 45);
  EXPECT_DOUBLE_EQ(w.sensors(0).max(), 50);
  ASSERT_EQ(w.unreadable_size(), 1);
  EXPECT_EQ(w.unreadable(0).rfind("thermal_zone1 (modem): ", 0), 0u);

  b.sample_sensors(1.2);  // a new window reads at once
  b.add_run(1, {});
  wire::SustainedWindow next = b.close(1, 1, 2, 0);
  ASSERT_EQ(next.sensors_size(), 2);
  EXPECT_DOUBLE_EQ(next.sensors(0).mean(), 50);
  EXPECT_EQ(next.unreadable_size(), 0);  // said in the first window
}

}  // namespace
}  // namespace sod2::agent
