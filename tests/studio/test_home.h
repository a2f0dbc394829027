// Studio tests make windows that open the profile store and save settings: both go to a folder
// under the temporary directory instead of the user's home (XDG_DATA_HOME, XDG_CONFIG_HOME).
// One folder per test process, removed when it exits: ctest runs each test case as its own
// process, two at a time, and a shared folder let one case's remembered inputs (settings kept
// per model) feed another's run. Call before the QApplication is made.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace sod2::testing {

inline void use_test_home() {
  static const std::string dir =
      (std::filesystem::temp_directory_path() / ("sod2-studio-tests-" + std::to_string(::getpid())))
          .string();
  ::setenv("XDG_DATA_HOME", (dir + "/data").c_str(), 1);
  ::setenv("XDG_CONFIG_HOME", (dir + "/config").c_str(), 1);
  static const bool cleanup_registered = [] {
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    });
    return true;
  }();
  (void)cleanup_registered;
}

}  // namespace sod2::testing
