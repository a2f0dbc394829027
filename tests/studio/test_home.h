// Studio tests make windows that open the profile store and save settings: both go to a folder
// under the temporary directory instead of the user's home (XDG_DATA_HOME, XDG_CONFIG_HOME).
// One folder per test process, removed when it exits: ctest runs each test case as its own
// process, two at a time, and a shared folder let one case's remembered inputs (settings kept
// per model) feed another's run. Call use_test_home before the QApplication is made.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace sod2::testing {

// This process's own folder under the temporary directory, removed when it exits.
inline const std::string& process_dir() {
  static const std::string dir =
      (std::filesystem::temp_directory_path() / ("sod2-studio-tests-" + std::to_string(::getpid())))
          .string();
  static const bool cleanup_registered = [] {
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    });
    return true;
  }();
  (void)cleanup_registered;
  return dir;
}

inline void use_test_home() {
  ::setenv("XDG_DATA_HOME", (process_dir() + "/data").c_str(), 1);
  ::setenv("XDG_CONFIG_HOME", (process_dir() + "/config").c_str(), 1);
}

// A folder for the files a test writes, this process's own: two cases run at once writing the
// same model file read each other's half-written bytes.
inline std::filesystem::path test_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(process_dir()) / name;
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace sod2::testing
