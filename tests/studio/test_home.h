// Studio tests make windows that open the profile store and save settings: both go to a folder
// under the temporary directory instead of the user's home (XDG_DATA_HOME, XDG_CONFIG_HOME).
// Call before the QApplication is made.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace sod2::testing {

inline void use_test_home() {
  const std::string dir = (std::filesystem::temp_directory_path() / "sod2-studio-tests").string();
  ::setenv("XDG_DATA_HOME", (dir + "/data").c_str(), 1);
  ::setenv("XDG_CONFIG_HOME", (dir + "/config").c_str(), 1);
}

}  // namespace sod2::testing
