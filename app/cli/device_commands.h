// The device commands (DESIGN §7):
//   sod2 devices                      every device of every transport, with its state
//   sod2 profile MODEL --device ID    compile, push, run and time per fused group (profile_job.h)
//   sod2 history [--model M] [--device D] | --compare RUN_A RUN_B   runs in the profile store
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sod2::cli {

// Each returns the process exit status and writes one line on `err` per failure.
int run_devices(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_profile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_history(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace sod2::cli
