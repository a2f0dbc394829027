// Which sod2-agent executable runs on a device of a given architecture: the host's own for this
// machine's architecture, a cross-built one (make cross-arm64) for a phone.
#pragma once

#include <string>

#include "core/status/status.h"

namespace sod2::device {

// `arch` as `uname -m` prints it ("x86_64", "aarch64", "armv8l"). Looks, in order, at
// $SOD2_AGENT_<ARCH> (e.g. SOD2_AGENT_AARCH64), at $SOD2_AGENT when arch is this machine's, at
// <host bin>/sod2-agent for this machine's arch, and at <host bin>/agents/<arch>/sod2-agent.
// Errors: none found, naming every place looked at and how to build one.
Expected<std::string> find_agent_binary(const std::string& arch);

// This machine's architecture, as `uname -m` prints it.
std::string host_arch();

}  // namespace sod2::device
