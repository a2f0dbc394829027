// The `adb` transport: Android devices over USB (or adb over TCP). Every adb call names the
// device with -s SERIAL; without a serial the only attached device is used. The agent is pushed
// to /data/local/tmp/sod2/ when missing or different (compared by SHA-256), then started with
// `adb shell -T` — no pty, so the protocol's bytes pass unchanged in both directions (`adb
// exec-out` only carries the device's output and cannot be used).
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "plugins/device/agent_binary.h"
#include "plugins/device/device_transport.h"
#include "runtime/package/sha256.h"

namespace sod2::device {
namespace {

using namespace std::chrono_literals;

constexpr const char* kRemoteDir = "/data/local/tmp/sod2";
constexpr const char* kRemoteAgent = "/data/local/tmp/sod2/sod2-agent";

std::string first_line(const std::string& s) {
  std::string t = s.substr(0, s.find('\n'));
  while (!t.empty() && (t.back() == '\r' || t.back() == ' ')) t.pop_back();
  return t;
}

// Turns adb's own wording into what to do about it.
Status adb_failure(const std::string& serial, const std::string& what, const CommandResult& r) {
  const std::string said = first_line(!r.err.empty() ? r.err : r.out);
  std::string hint;
  if (said.find("not found") != std::string::npos && said.find("device") != std::string::npos)
    hint = " (device " + serial + " is not attached: unplugged? see `sod2 devices`)";
  else if (said.find("unauthorized") != std::string::npos)
    hint = " (accept the USB debugging prompt on the device)";
  else if (said.find("offline") != std::string::npos)
    hint = " (the device is offline: unplug and replug it)";
  else if (said.find("No space left") != std::string::npos)
    hint = " (the device's disk is full: free some space)";
  return io_error(what + " on " + serial + " failed" + (said.empty() ? "" : ": " + said) + hint);
}

class AdbTransport final : public DeviceTransport {
 public:
  std::string name() const override { return "adb"; }

  Expected<std::vector<DeviceEntry>> list() override {
    SOD2_ASSIGN_OR_RETURN(const std::string adb, adb_path());
    SOD2_ASSIGN_OR_RETURN(CommandResult r, run_command({adb, "devices", "-l"}, 20s));
    if (r.exit_code != 0) {
      return io_error("`adb devices -l` failed: " + first_line(r.err.empty() ? r.out : r.err) +
                      " (is the adb server able to start? try `adb kill-server`)");
    }
    std::vector<DeviceEntry> out;
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '*' || line.rfind("List of devices", 0) == 0) continue;
      std::istringstream f(line);
      DeviceEntry e;
      f >> e.serial >> e.state;
      if (e.serial.empty() || e.state.empty()) continue;
      e.transport = "adb";
      e.id = "adb:" + e.serial;
      std::string kv;
      while (f >> kv) {
        if (kv.rfind("model:", 0) == 0) {
          e.model = kv.substr(6);
          for (char& c : e.model)
            if (c == '_') c = ' ';
        } else {
          e.detail += (e.detail.empty() ? "" : " ") + kv;
        }
      }
      // "no permissions (user ... is not in the plugdev group)": the state is several words.
      if (e.state == "no") {
        e.state = "no permissions";
        e.detail =
            "add a udev rule for the device (Debian: apt install "
            "android-sdk-platform-tools-common)";
      }
      out.push_back(std::move(e));
    }
    return out;
  }

  Expected<std::unique_ptr<ChildProcess>> start_agent(const AgentStart& start) override {
    SOD2_ASSIGN_OR_RETURN(const std::string adb, adb_path());
    SOD2_ASSIGN_OR_RETURN(device_, pick(start.serial));
    const std::string& s = device_.serial;
    auto adb_run = [&](std::vector<std::string> args, std::chrono::milliseconds t,
                       const std::string& what) -> Expected<CommandResult> {
      args.insert(args.begin(), {adb, "-s", s});
      SOD2_ASSIGN_OR_RETURN(CommandResult r, run_command(args, t, start.cancel));
      if (r.exit_code != 0) return adb_failure(s, what, r);
      return r;
    };
    SOD2_ASSIGN_OR_RETURN(CommandResult arch, adb_run({"shell", "uname", "-m"}, 30s, "`uname -m`"));
    SOD2_ASSIGN_OR_RETURN(const std::string local_agent, find_agent_binary(first_line(arch.out)));
    SOD2_ASSIGN_OR_RETURN(const std::string local_hash, file_sha256(local_agent));
    // toybox's sha256sum (Android 8+); anything else than a matching digest means push.
    Expected<CommandResult> remote =
        run_command({adb, "-s", s, "shell", "sha256sum", kRemoteAgent}, 30s, start.cancel);
    const bool current =
        remote.ok() && remote->exit_code == 0 && remote->out.substr(0, 64) == local_hash;
    if (!current) {
      if (start.progress) start.progress("pushing sod2-agent to " + s);
      SOD2_RETURN_IF_ERROR(
          adb_run({"shell", "mkdir", "-p", kRemoteDir}, 30s, "making " + std::string(kRemoteDir))
              .status());
      SOD2_RETURN_IF_ERROR(
          adb_run({"push", local_agent, kRemoteAgent}, 300s, "pushing the agent").status());
      SOD2_RETURN_IF_ERROR(
          adb_run({"shell", "chmod", "755", kRemoteAgent}, 30s, "chmod of the agent").status());
    }
    if (start.progress) start.progress("starting the agent on " + s);
    return ChildProcess::start({adb, "-s", s, "shell", "-T", kRemoteAgent, "--dir", kRemoteDir});
  }

  DeviceEntry connected_device() const override { return device_; }

 private:
  static Expected<std::string> adb_path() {
    if (const char* e = std::getenv("SOD2_ADB"); e && *e) {
      if (find_executable(e).empty())
        return not_found(std::string("SOD2_ADB is ") + e + ", which is not an executable");
      return std::string(e);
    }
    std::string p = find_executable("adb");
    if (p.empty()) {
      return not_found(
          "adb is not installed: install it (Debian: apt install adb) or set SOD2_ADB to its path");
    }
    return p;
  }

  Expected<DeviceEntry> pick(const std::string& serial) {
    SOD2_ASSIGN_OR_RETURN(const std::vector<DeviceEntry> all, list());
    if (!serial.empty()) {
      for (const DeviceEntry& e : all) {
        if (e.serial != serial) continue;
        if (e.usable()) return e;
        return io_error("device " + serial + " is " + e.state +
                        (e.state == "unauthorized" ? ": accept the USB debugging prompt on it"
                         : e.state == "offline"    ? ": unplug and replug it"
                                                   : ""));
      }
      std::string have;
      for (const DeviceEntry& e : all) have += (have.empty() ? "" : ", ") + e.serial;
      return not_found("no device " + serial + " attached (" +
                       (have.empty() ? "adb sees none" : "adb sees " + have) + ")");
    }
    std::vector<DeviceEntry> usable;
    for (const DeviceEntry& e : all)
      if (e.usable()) usable.push_back(e);
    if (usable.empty()) {
      std::string why = all.empty() ? "adb sees none" : "";
      for (const DeviceEntry& e : all)
        why += (why.empty() ? "" : ", ") + e.serial + " is " + e.state;
      return not_found("no Android device attached (" + why +
                       "): connect one by USB with USB debugging on");
    }
    if (usable.size() > 1) {
      std::string ids;
      for (const DeviceEntry& e : usable) ids += (ids.empty() ? "" : ", ") + e.id;
      return invalid_argument("several devices attached (" + ids +
                              "): pick one with --device adb:SERIAL");
    }
    return usable[0];
  }

  static Expected<std::string> file_sha256(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return io_error("cannot read " + path);
    rt::Sha256 h;
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0)
      h.update({reinterpret_cast<const uint8_t*>(buf), static_cast<size_t>(in.gcount())});
    return rt::to_hex(h.finish());
  }

  DeviceEntry device_;
};

}  // namespace
}  // namespace sod2::device

extern "C" __attribute__((visibility("default"))) sod2::device::DeviceTransport*
sod2_create_transport(int abi) {
  if (abi != sod2::device::kTransportAbi) return nullptr;
  return new sod2::device::AdbTransport();
}
