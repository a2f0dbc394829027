// The agent's side of the protocol, in-process over pipes: what it answers to a good
// conversation and to every kind of bad one (PROTOCOL.md).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "plugins/device/agent_client.h"
#include "plugins/device/child_process.h"
#include "runtime/agent/agent.h"
#include "runtime/agent/agent_protocol.pb.h"
#include "runtime/agent/frame_io.h"
#include "runtime/exec/session.h"
#include "runtime/package/sha256.h"

namespace sod2::agent {
namespace {

namespace fs = std::filesystem;
using wire::AgentMessage;
using wire::HostMessage;

// Tests that need a package the agent can load compile the bundled sample with `sod2 compile`.
const std::string kSod2 = SOD2_BINARY_DIR "/bin/sod2";
const std::string kSample = SOD2_SOURCE_DIR "/resources/models/sample_yolo_tiny.onnx";
const std::string kSampleRanges = SOD2_SOURCE_DIR "/resources/models/sample_yolo_tiny.ranges.json";
// $SOD2_TEST_AGENT runs the process tests against another agent binary (an older build).
const std::string kAgent = std::getenv("SOD2_TEST_AGENT") ? std::getenv("SOD2_TEST_AGENT")
                                                          : SOD2_BINARY_DIR "/bin/sod2-agent";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The sample's input at h x w (NCHW float), zeros.
wire::Tensor sample_input(int64_t h, int64_t w) {
  wire::Tensor t;
  t.set_dtype(1);
  for (int64_t d : {int64_t{1}, int64_t{3}, h, w}) t.add_dims(d);
  t.set_data(std::string(static_cast<size_t>(3 * h * w * 4), '\0'));
  return t;
}

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sod2_agent_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    int to_agent[2], from_agent[2];
    ASSERT_EQ(::pipe(to_agent), 0);
    ASSERT_EQ(::pipe(from_agent), 0);
    host_write_ = to_agent[1];
    host_read_ = from_agent[0];
    agent_read_ = to_agent[0];
    agent_write_ = from_agent[1];
    options_.dir = dir_.string();
    options_.software = "sod2 test";
    const int fd = agent_read_;
    options_.host_readable = [fd](int timeout_ms) {
      pollfd p{fd, POLLIN, 0};
      return ::poll(&p, 1, timeout_ms) > 0;
    };
    configure(options_);
    thread_ = std::thread([this] {
      result_ = serve(fd_reader(agent_read_), fd_writer(agent_write_), options_);
      ::close(agent_write_);
    });
    reader_ = std::make_unique<FrameReader>(fd_reader(host_read_));
  }
  // Lets a test's fixture change the agent's options before it starts.
  virtual void configure(AgentOptions&) {}
  void close_host_stream() {
    ::close(host_write_);
    host_write_ = -1;
  }
  void TearDown() override {
    if (host_write_ >= 0) ::close(host_write_);
    if (thread_.joinable()) thread_.join();
    ::close(host_read_);
    ::close(agent_read_);
    fs::remove_all(dir_);
  }

  void send(const HostMessage& m) { ASSERT_TRUE(write_frame(fd_writer(host_write_), m).ok()); }
  AgentMessage receive() {
    std::string frame;
    auto more = reader_->read_frame(&frame);
    EXPECT_TRUE(more.ok() && *more) << (more.ok() ? "end of stream" : more.status().message());
    AgentMessage m;
    EXPECT_TRUE(m.ParseFromString(frame));
    return m;
  }
  void greet(uint32_t version = kProtocolVersion) {
    ASSERT_TRUE(reader_->read_preamble().ok());
    AgentMessage hello = receive();
    ASSERT_EQ(hello.body_case(), AgentMessage::kHello);
    EXPECT_EQ(hello.hello().protocol_version(), kProtocolVersion);
    EXPECT_GT(hello.hello().device().cores(), 0u);
    HostMessage h;
    h.mutable_hello()->set_protocol_version(version);
    h.mutable_hello()->set_software("sod2 host-test");
    send(h);
  }
  // Offers `bytes` (with `digest_of` hashed for the offer) and sends them.
  AgentMessage offer_and_send(const std::string& bytes, const std::string& digest_of) {
    const rt::Sha256Digest d =
        rt::sha256({reinterpret_cast<const uint8_t*>(digest_of.data()), digest_of.size()});
    HostMessage offer;
    offer.mutable_offer()->set_sha256(std::string(d.begin(), d.end()));
    offer.mutable_offer()->set_size(bytes.size());
    send(offer);
    AgentMessage status = receive();
    EXPECT_EQ(status.body_case(), AgentMessage::kPackageStatus);
    if (!status.package_status().cached()) {
      HostMessage chunk;
      chunk.mutable_chunk()->set_offset(0);
      chunk.mutable_chunk()->set_data(bytes);
      send(chunk);
    }
    HostMessage end;
    end.mutable_end();
    send(end);
    return receive();
  }
  // Reads messages until the agent closes its stream.
  std::vector<AgentMessage> receive_all() {
    std::vector<AgentMessage> out;
    std::string frame;
    for (;;) {
      auto more = reader_->read_frame(&frame);
      if (!more.ok() || !*more) return out;
      out.emplace_back();
      EXPECT_TRUE(out.back().ParseFromString(frame));
    }
  }
  std::string sample_package() {
    const std::string out = (dir_ / "sample.sod2").string();
    const std::string cmd = kSod2 + " compile " + kSample + " --ranges " + kSampleRanges + " -o " +
                            out + " > /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(out, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path dir_;
  int host_write_ = -1, host_read_ = -1, agent_read_ = -1, agent_write_ = -1;
  AgentOptions options_;
  std::thread thread_;
  Status result_;
  std::unique_ptr<FrameReader> reader_;
};

TEST_F(AgentTest, RefusesAnotherProtocolVersionNamingBoth) {
  greet(kProtocolVersion + 1);
  AgentMessage m = receive();
  ASSERT_EQ(m.body_case(), AgentMessage::kError);
  EXPECT_EQ(m.error().code(), wire::Error::VERSION_MISMATCH);
  EXPECT_NE(m.error().message().find("protocol " + std::to_string(kProtocolVersion + 1)),
            std::string::npos)
      << m.error().message();
  EXPECT_NE(m.error().message().find("sod2 host-test"), std::string::npos);
  thread_.join();
  EXPECT_FALSE(result_.ok());
}

TEST_F(AgentTest, ADamagedPackageIsRefusedAndNothingIsKept) {
  greet();
  AgentMessage m = offer_and_send("some bytes", "other bytes");
  ASSERT_EQ(m.body_case(), AgentMessage::kError);
  EXPECT_EQ(m.error().code(), wire::Error::PACKAGE_CHECKSUM);
  EXPECT_NE(m.error().message().find("damaged"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(dir_ / "packages"));
}

TEST_F(AgentTest, BytesThatAreNotAPackageAreRejectedByTheRuntime) {
  greet();
  const std::string junk(300, 'x');
  AgentMessage m = offer_and_send(junk, junk);
  ASSERT_EQ(m.body_case(), AgentMessage::kError);
  EXPECT_EQ(m.error().code(), wire::Error::PACKAGE_REJECTED);
  EXPECT_FALSE(fs::exists(
      dir_ / "packages" /
      (rt::to_hex(rt::sha256({reinterpret_cast<const uint8_t*>(junk.data()), junk.size()})) +
       ".sod2")));
}

TEST_F(AgentTest, RunsAPackageStreamsEveryRunAndCachesIt) {
  greet();
  const std::string pkg = sample_package();
  ASSERT_FALSE(pkg.empty());
  AgentMessage loaded = offer_and_send(pkg, pkg);
  ASSERT_EQ(loaded.body_case(), AgentMessage::kLoaded) << loaded.error().message();
  ASSERT_GT(loaded.loaded().nodes(), 0u);
  ASSERT_EQ(loaded.loaded().inputs_size(), 1);

  // Wrong inputs first: a clear error, and the agent keeps serving.
  HostMessage bad;
  bad.mutable_run()->set_runs(1);
  wire::Tensor* t = bad.mutable_run()->add_inputs();
  t->set_dtype(1);
  t->add_dims(2);
  t->set_data(std::string(4, '\0'));
  send(bad);
  AgentMessage err = receive();
  ASSERT_EQ(err.body_case(), AgentMessage::kError);
  EXPECT_EQ(err.error().code(), wire::Error::BAD_INPUTS);
  EXPECT_NE(err.error().message().find("4 bytes for 2 elements"), std::string::npos);

  HostMessage run;
  run.mutable_run()->set_runs(2);
  run.mutable_run()->set_warmup(1);
  run.mutable_run()->set_threads(1);
  wire::Tensor* in = run.mutable_run()->add_inputs();
  in->set_dtype(1);
  for (int64_t d : {1, 3, 64, 64}) in->add_dims(d);
  in->set_data(std::string(3 * 64 * 64 * 4, '\0'));
  send(run);
  for (int i = 0; i < 3; ++i) {
    AgentMessage r = receive();
    ASSERT_EQ(r.body_case(), AgentMessage::kResult) << r.error().message();
    EXPECT_EQ(r.result().index(), static_cast<uint32_t>(i));
    EXPECT_EQ(r.result().warmup(), i == 0);
    EXPECT_EQ(r.result().group_ms_size(), static_cast<int>(loaded.loaded().nodes()));
    EXPECT_GT(r.result().arena_bytes(), 0);
  }
  AgentMessage done = receive();
  ASSERT_EQ(done.body_case(), AgentMessage::kDone);
  EXPECT_EQ(done.done().group_shapes_size(), static_cast<int>(loaded.loaded().nodes()));
  EXPECT_EQ(done.done().threads(), 1u);

  // Offered again: the agent has it and needs no bytes.
  AgentMessage again = offer_and_send(pkg, pkg);
  EXPECT_EQ(again.body_case(), AgentMessage::kLoaded);
}

TEST_F(AgentTest, ACancelStopsARunRequestBetweenRuns) {
  greet();
  const std::string pkg = sample_package();
  ASSERT_EQ(offer_and_send(pkg, pkg).body_case(), AgentMessage::kLoaded);
  HostMessage run;
  run.mutable_run()->set_runs(100000);
  wire::Tensor* in = run.mutable_run()->add_inputs();
  in->set_dtype(1);
  for (int64_t d : {1, 3, 64, 64}) in->add_dims(d);
  in->set_data(std::string(3 * 64 * 64 * 4, '\0'));
  send(run);
  ASSERT_EQ(receive().body_case(), AgentMessage::kResult);
  HostMessage cancel;
  cancel.mutable_cancel();
  send(cancel);
  for (;;) {
    AgentMessage m = receive();
    if (m.body_case() == AgentMessage::kResult) continue;
    ASSERT_EQ(m.body_case(), AgentMessage::kError);
    EXPECT_EQ(m.error().code(), wire::Error::CANCELLED);
    break;
  }
}

// A host may send its next request before the runs finished: the agent handles it afterwards
// (it used to refuse anything but a Cancel during a run request).
TEST_F(AgentTest, MessagesSentAheadAreHandledAfterTheRuns) {
  greet();
  const std::string pkg = sample_package();
  ASSERT_EQ(offer_and_send(pkg, pkg).body_case(), AgentMessage::kLoaded);
  HostMessage run;
  run.mutable_run()->set_runs(3);
  wire::Tensor* in = run.mutable_run()->add_inputs();
  in->set_dtype(1);
  for (int64_t d : {1, 3, 64, 64}) in->add_dims(d);
  in->set_data(std::string(3 * 64 * 64 * 4, '\0'));
  send(run);
  send(run);  // ahead of the first request's results
  for (int request = 0; request < 2; ++request) {
    for (int i = 0; i < 3; ++i) {
      AgentMessage r = receive();
      ASSERT_EQ(r.body_case(), AgentMessage::kResult) << r.error().message();
    }
    ASSERT_EQ(receive().body_case(), AgentMessage::kDone);
  }
}

// Found by agent_stream_fuzzer: a host that left mid-upload left the partial file in the
// packages folder and its descriptor open (one per interrupted upload, until none were left).
TEST_F(AgentTest, AnUploadTheHostAbandonsLeavesNothingBehind) {
  auto open_fds = [] {
    return std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator());
  };
  const auto fds_before = open_fds();
  greet();
  const std::string bytes(1000, 'p');
  const rt::Sha256Digest d =
      rt::sha256({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  HostMessage offer;
  offer.mutable_offer()->set_sha256(std::string(d.begin(), d.end()));
  offer.mutable_offer()->set_size(bytes.size());
  send(offer);
  ASSERT_EQ(receive().body_case(), AgentMessage::kPackageStatus);
  HostMessage chunk;
  chunk.mutable_chunk()->set_offset(0);
  chunk.mutable_chunk()->set_data(bytes.substr(0, 400));
  send(chunk);
  close_host_stream();
  thread_.join();
  EXPECT_TRUE(result_.ok()) << result_.message();
  EXPECT_TRUE(fs::is_empty(dir_ / "packages")) << "a partial upload was left behind";
  // The test's own pipe to the agent is closed now; the agent's ends are closed in TearDown.
  EXPECT_LE(open_fds(), fds_before - 1) << "the agent kept a descriptor of the partial upload";
}

TEST_F(AgentTest, ChunksWithoutAnOfferAreAProtocolError) {
  greet();
  HostMessage chunk;
  chunk.mutable_chunk()->set_offset(0);
  chunk.mutable_chunk()->set_data("abc");
  send(chunk);
  AgentMessage m = receive();
  ASSERT_EQ(m.body_case(), AgentMessage::kError);
  EXPECT_EQ(m.error().code(), wire::Error::BAD_MESSAGE);
}

TEST(FrameReader, RejectsOversizedAndTruncatedFrames) {
  std::string bytes = "\xff\xff\xff\x7f";
  size_t pos = 0;
  auto reader_of = [&](const std::string& data) {
    pos = 0;
    return [&data, &pos](uint8_t* buf, size_t n) -> Expected<size_t> {
      const size_t k = std::min(n, data.size() - pos);
      std::memcpy(buf, data.data() + pos, k);
      pos += k;
      return k;
    };
  };
  std::string out;
  FrameReader big(reader_of(bytes));
  auto r = big.read_frame(&out);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("corrupt"), std::string::npos);
  const std::string truncated(
      "\x10\x00\x00\x00"
      "abc",
      7);
  FrameReader cut(reader_of(truncated));
  r = cut.read_frame(&out);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("3 of 16 bytes"), std::string::npos) << r.status().message();
  const std::string shell = "/system/bin/sh: sod2-agent: not found\n";
  FrameReader not_agent(reader_of(shell));
  Status st = not_agent.read_preamble();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not found"), std::string::npos) << st.message();
}

// Family runs (protocol 2) asked for where they do not apply, and their bounds.
TEST_F(AgentTest, FamilyRunRequestsOutOfPlaceAreProtocolErrors) {
  greet();
  HostMessage family_run;
  family_run.mutable_family_run()->set_budget_ms(5);
  family_run.mutable_family_run()->set_duration_s(1);
  send(family_run);
  AgentMessage m = receive();
  ASSERT_EQ(m.body_case(), AgentMessage::kError);
  EXPECT_NE(m.error().message().find("before a family package"), std::string::npos);

  const std::string pkg = sample_package();
  ASSERT_EQ(offer_and_send(pkg, pkg).body_case(), AgentMessage::kLoaded);
  send(family_run);
  m = receive();
  ASSERT_EQ(m.body_case(), AgentMessage::kError);
  EXPECT_NE(m.error().message().find("for a single model"), std::string::npos);

  // A family package: the hand-built one of the fuzz seeds.
  std::ifstream in(SOD2_SOURCE_DIR "/tests/fuzz/seeds/package_load/small_family.sod2",
                   std::ios::binary);
  const std::string fam((std::istreambuf_iterator<char>(in)), {});
  AgentMessage loaded = offer_and_send(fam, fam);
  ASSERT_EQ(loaded.body_case(), AgentMessage::kLoaded) << loaded.error().message();
  ASSERT_EQ(loaded.loaded().variants_size(), 2);
  HostMessage run;
  run.mutable_run()->set_runs(1);
  send(run);
  m = receive();
  ASSERT_EQ(m.body_case(), AgentMessage::kError);
  EXPECT_NE(m.error().message().find("family package"), std::string::npos);

  HostMessage too_long = family_run;
  too_long.mutable_family_run()->set_duration_s(1e9);
  send(too_long);
  m = receive();
  ASSERT_EQ(m.body_case(), AgentMessage::kError);
  EXPECT_NE(m.error().message().find("duration"), std::string::npos);

  HostMessage wrong_expected = family_run;
  wrong_expected.mutable_family_run()->add_expected_ms(1);
  send(wrong_expected);
  m = receive();
  ASSERT_EQ(m.body_case(), AgentMessage::kError);
  EXPECT_NE(m.error().message().find("1 expected latencies for 2 variants"), std::string::npos);

  HostMessage bad_load = family_run;
  bad_load.mutable_family_run()->set_load_processes(2);
  bad_load.mutable_family_run()->set_load_start_s(3);
  bad_load.mutable_family_run()->set_load_stop_s(1);
  send(bad_load);
  m = receive();
  ASSERT_EQ(m.body_case(), AgentMessage::kError);
  EXPECT_NE(m.error().message().find("0 <= start < stop"), std::string::npos);
}

// Issue 22: a host could ask for 1,000,000 threads; starting them threw std::system_error out of
// the agent. Now the request is refused naming the limit, and the agent serves on.
TEST_F(AgentTest, ARunRequestForAMillionThreadsIsRefusedNamingTheLimit) {
  greet();
  const std::string pkg = sample_package();
  ASSERT_EQ(offer_and_send(pkg, pkg).body_case(), AgentMessage::kLoaded);
  HostMessage run;
  run.mutable_run()->set_runs(1);
  run.mutable_run()->set_threads(1000000);
  *run.mutable_run()->add_inputs() = sample_input(32, 32);
  send(run);
  AgentMessage m = receive();
  ASSERT_EQ(m.body_case(), AgentMessage::kError);
  EXPECT_EQ(m.error().code(), wire::Error::RESOURCE_EXHAUSTED);
  const int hw = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_NE(m.error().message().find("1000000 threads: this device takes at most " +
                                     std::to_string(rt::kMaxThreadsPerCore * hw)),
            std::string::npos)
      << m.error().message();
  EXPECT_NE(m.error().message().find("ask for fewer"), std::string::npos);
  run.mutable_run()->set_threads(1);
  send(run);
  EXPECT_EQ(receive().body_case(), AgentMessage::kResult);
  EXPECT_EQ(receive().body_case(), AgentMessage::kDone);
}

// Issue 22: a Cancel was seen only between runs, so a run in progress could not be stopped.
TEST_F(AgentTest, ACancelStopsTheRunInProgress) {
  greet();
  const std::string pkg = sample_package();
  ASSERT_EQ(offer_and_send(pkg, pkg).body_case(), AgentMessage::kLoaded);
  HostMessage run;
  run.mutable_run()->set_runs(2);
  run.mutable_run()->set_threads(1);
  *run.mutable_run()->add_inputs() = sample_input(1024, 1024);  // about 0.1 s a run
  send(run);
  // The first result means the second (and last) run has begun: the Cancel arrives during it.
  ASSERT_EQ(receive().body_case(), AgentMessage::kResult);
  HostMessage cancel;
  cancel.mutable_cancel();
  send(cancel);
  AgentMessage m = receive();
  ASSERT_EQ(m.body_case(), AgentMessage::kError)
      << "the run in progress finished instead of being cancelled (body " << m.body_case() << ")";
  EXPECT_EQ(m.error().code(), wire::Error::CANCELLED);
  // Run 2 was stopped, or (on a loaded machine) never began after result 1 went out.
  const std::string& why = m.error().message();
  EXPECT_TRUE(why.find("during run 2 of 2") != std::string::npos ||
              why.find("after 1 runs") != std::string::npos)
      << why;
  // A Cancel acts on what was sent before it only: the next request runs.
  run.mutable_run()->set_runs(1);
  *run.mutable_run()->mutable_inputs(0) = sample_input(32, 32);
  send(run);
  EXPECT_EQ(receive().body_case(), AgentMessage::kResult);
  EXPECT_EQ(receive().body_case(), AgentMessage::kDone);
}

// Issue 22: a closed stream stopped the agent only after the run in progress.
TEST_F(AgentTest, ClosingTheStreamCancelsTheRunInProgressAndEndsCleanly) {
  greet();
  const std::string pkg = sample_package();
  ASSERT_EQ(offer_and_send(pkg, pkg).body_case(), AgentMessage::kLoaded);
  HostMessage run;
  run.mutable_run()->set_runs(1000);
  run.mutable_run()->set_threads(1);
  *run.mutable_run()->add_inputs() = sample_input(1024, 1024);
  send(run);
  ASSERT_EQ(receive().body_case(), AgentMessage::kResult);
  // The second run is in progress: closing the stream cancels it, so no result follows.
  const auto t0 = std::chrono::steady_clock::now();
  close_host_stream();
  for (const AgentMessage& m : receive_all()) {
    ASSERT_EQ(m.body_case(), AgentMessage::kError) << "a run completed after the host left";
    EXPECT_EQ(m.error().code(), wire::Error::CANCELLED);
    const std::string& why = m.error().message();
    EXPECT_TRUE(why.find("during run 2 of 1000") != std::string::npos ||
                why.find("after 1 runs") != std::string::npos)
        << why;
  }
  thread_.join();
  EXPECT_TRUE(result_.ok()) << result_.message();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST_F(AgentTest, ARequestsRunLimitsEndItsRunWithResourceExhausted) {
  greet();
  const std::string pkg = sample_package();
  ASSERT_EQ(offer_and_send(pkg, pkg).body_case(), AgentMessage::kLoaded);
  HostMessage run;
  run.mutable_run()->set_runs(1);
  run.mutable_run()->set_threads(1);
  run.mutable_run()->set_max_bytes(4096);
  *run.mutable_run()->add_inputs() = sample_input(64, 64);
  send(run);
  AgentMessage m = receive();
  ASSERT_EQ(m.body_case(), AgentMessage::kError);
  EXPECT_EQ(m.error().code(), wire::Error::RESOURCE_EXHAUSTED);
  EXPECT_NE(m.error().message().find("max_bytes"), std::string::npos) << m.error().message();
  // The limit was the request's: the next one without it runs.
  run.mutable_run()->set_max_bytes(0);
  send(run);
  EXPECT_EQ(receive().body_case(), AgentMessage::kResult);
  EXPECT_EQ(receive().body_case(), AgentMessage::kDone);
}

// Issue 24: a sustained run keeps the package running after its measured runs and reports a
// window of time at a time, with the device's sensors (a fake sysfs tree here).
class AgentSustainedTest : public AgentTest {
  void configure(AgentOptions& o) override {
    const fs::path sys = dir_ / "sys";
    fs::create_directories(sys / "class/thermal/thermal_zone0");
    std::ofstream(sys / "class/thermal/thermal_zone0/type") << "cpu-thermal\n";
    std::ofstream(sys / "class/thermal/thermal_zone0/temp") << "45000\n";
    o.sysfs_root = sys.string();
  }

 protected:
  HostMessage sustained_request(double duration_s, double window_s) {
    HostMessage run;
    run.mutable_run()->set_runs(2);
    run.mutable_run()->set_warmup(1);
    run.mutable_run()->set_threads(1);
    run.mutable_run()->set_duration_s(duration_s);
    run.mutable_run()->set_window_s(window_s);
    *run.mutable_run()->add_inputs() = sample_input(64, 64);
    return run;
  }
};

TEST_F(AgentSustainedTest, RunsForItsDurationAndReportsEachWindow) {
  greet();
  const std::string pkg = sample_package();
  AgentMessage loaded = offer_and_send(pkg, pkg);
  ASSERT_EQ(loaded.body_case(), AgentMessage::kLoaded);
  send(sustained_request(0.6, 0.2));
  int results = 0;
  std::vector<wire::SustainedWindow> windows;
  AgentMessage m;
  for (m = receive(); m.body_case() != AgentMessage::kDone; m = receive()) {
    ASSERT_NE(m.body_case(), AgentMessage::kError) << m.error().message();
    if (m.body_case() == AgentMessage::kResult) ++results;
    if (m.body_case() == AgentMessage::kWindow) windows.push_back(m.window());
  }
  EXPECT_EQ(results, 3);  // warm-up and measured runs in full, as without a duration
  EXPECT_FALSE(m.done().stopped_early());
  ASSERT_GE(windows.size(), 1u);
  EXPECT_LE(windows.size(), 4u);
  uint64_t runs = 0;
  for (size_t i = 0; i < windows.size(); ++i) {
    const wire::SustainedWindow& w = windows[i];
    EXPECT_EQ(w.index(), i);
    EXPECT_NEAR(w.start_s(), 0.2 * static_cast<double>(i), 1e-9);
    runs += w.runs();
    if (w.runs() > 0) {
      EXPECT_LE(w.min_ms(), w.p50_ms());
      EXPECT_LE(w.p99_ms(), w.max_ms());
      EXPECT_EQ(w.group_mean_ms_size(), static_cast<int>(loaded.loaded().nodes()));
    }
    ASSERT_GE(w.sensors_size(), 1);
    EXPECT_EQ(w.sensors(0).name(), "thermal:cpu-thermal");
    EXPECT_DOUBLE_EQ(w.sensors(0).max(), 45);
    EXPECT_GT(w.rss_bytes(), 0);
  }
  EXPECT_GE(windows.back().end_s(), 0.6);
  EXPECT_GT(runs, 2u);  // it ran on after the measured runs (which count in window 0)
  // No cpufreq in the fake tree: said once, in the first window.
  ASSERT_EQ(windows[0].unreadable_size(), 1);
  EXPECT_NE(windows[0].unreadable(0).find("CPU frequencies"), std::string::npos);
  for (size_t i = 1; i < windows.size(); ++i) EXPECT_EQ(windows[i].unreadable_size(), 0);
}

TEST_F(AgentSustainedTest, ACancelEndsItWithWhatItMeasured) {
  greet();
  const std::string pkg = sample_package();
  ASSERT_EQ(offer_and_send(pkg, pkg).body_case(), AgentMessage::kLoaded);
  send(sustained_request(600, 0.1));
  AgentMessage m = receive();
  for (int windows = 0; windows < 2; m = receive()) {
    ASSERT_NE(m.body_case(), AgentMessage::kError) << m.error().message();
    if (m.body_case() == AgentMessage::kWindow) ++windows;
  }
  HostMessage cancel;
  cancel.mutable_cancel();
  send(cancel);
  const auto t0 = std::chrono::steady_clock::now();
  for (; m.body_case() != AgentMessage::kDone; m = receive())
    ASSERT_NE(m.body_case(), AgentMessage::kError) << m.error().message();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_TRUE(m.done().stopped_early());
  // It serves on.
  HostMessage run = sustained_request(0, 0);
  send(run);
  for (m = receive(); m.body_case() == AgentMessage::kResult; m = receive()) {
  }
  EXPECT_EQ(m.body_case(), AgentMessage::kDone);
}

TEST_F(AgentSustainedTest, DurationsAndWindowsOutsideTheProtocolAreRefused) {
  greet();
  const std::string pkg = sample_package();
  ASSERT_EQ(offer_and_send(pkg, pkg).body_case(), AgentMessage::kLoaded);
  for (const auto& [duration, window_s] : std::vector<std::pair<double, double>>{
           {10, 0.01}, {10, 61}, {10, NAN}, {-1, 1}, {NAN, 1}, {1e9, 60}}) {
    send(sustained_request(duration, window_s));
    AgentMessage m = receive();
    ASSERT_EQ(m.body_case(), AgentMessage::kError) << duration << " s in " << window_s << " s";
    EXPECT_EQ(m.error().code(), wire::Error::BAD_MESSAGE);
    EXPECT_NE(m.error().message().find("sustained run"), std::string::npos) << m.error().message();
  }
}

// Issue 22: messages sent ahead of a request in progress were bounded by count (64) only, with
// frames up to 256 MiB each: 2.4 GB resident was seen. Now the agent stops reading at a byte
// limit (here 1 MiB) until the request is done, and loses nothing.
class AgentQueueTest : public AgentTest {
  void configure(AgentOptions& o) override { o.max_queued_bytes = 1 << 20; }
};

TEST_F(AgentQueueTest, SendingAheadIsBoundedByBytesAndLosesNothing) {
  greet();
  const std::string pkg = sample_package();
  ASSERT_EQ(offer_and_send(pkg, pkg).body_case(), AgentMessage::kLoaded);
  HostMessage run;
  run.mutable_run()->set_threads(1);
  *run.mutable_run()->add_inputs() = sample_input(32, 32);
  // A request of about 2 s whatever the machine's speed: 20 runs tell how long one takes.
  run.mutable_run()->set_runs(20);
  send(run);
  double ms = 0;
  for (int i = 0; i < 20; ++i) {
    AgentMessage r = receive();
    ASSERT_EQ(r.body_case(), AgentMessage::kResult) << r.error().message();
    ms += r.result().latency_ms();
  }
  ASSERT_EQ(receive().body_case(), AgentMessage::kDone);
  const int runs = static_cast<int>(std::clamp(2000.0 / std::max(ms / 20, 1e-3), 50.0, 1e6));
  run.mutable_run()->set_runs(static_cast<uint32_t>(runs));
  send(run);
  ASSERT_EQ(receive().body_case(), AgentMessage::kResult);

  // 16 messages of 1 MiB each sent ahead, from another thread (the writes block when the agent
  // stops reading). Each is a cheap error to answer afterwards: a run request for zero runs.
  constexpr int kAhead = 16;
  HostMessage ahead;
  ahead.mutable_run()->set_runs(0);
  wire::Tensor* t = ahead.mutable_run()->add_inputs();
  t->set_dtype(1);
  t->add_dims(1 << 18);
  t->set_data(std::string(1 << 20, '\0'));
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 0; i < kAhead; ++i) {
      if (!write_frame(fd_writer(host_write_), ahead).ok()) return;
      ++written;
    }
  });
  // Read results until the writer has made no progress for 300 ms (or is done).
  int results = 1, last = -1;
  auto since = std::chrono::steady_clock::now();
  bool request_done = false;
  while (written.load() < kAhead) {
    AgentMessage m = receive();
    if (m.body_case() == AgentMessage::kDone) {
      request_done = true;
      break;
    }
    ASSERT_EQ(m.body_case(), AgentMessage::kResult) << m.error().message();
    ++results;
    if (written.load() != last) {
      last = written.load();
      since = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - since > std::chrono::milliseconds(300)) {
      break;
    }
  }
  ASSERT_FALSE(request_done) << "the " << runs
                             << " runs ended before the check (the machine's speed varies)";
  // The agent took one message whole (its queue holds 1 MiB) and the next one's header at most.
  EXPECT_LE(written.load(), 2) << "the agent read " << written.load()
                               << " MiB ahead of a running request (limit 1 MiB)";
  // The request finishes, then every message sent ahead is answered, in order.
  for (;;) {
    AgentMessage m = receive();
    if (m.body_case() == AgentMessage::kDone) break;
    ASSERT_EQ(m.body_case(), AgentMessage::kResult) << m.error().message();
    ++results;
  }
  EXPECT_EQ(results, runs);
  writer.join();
  EXPECT_EQ(written.load(), kAhead);
  for (int i = 0; i < kAhead; ++i) {
    AgentMessage m = receive();
    ASSERT_EQ(m.body_case(), AgentMessage::kError);
    EXPECT_NE(m.error().message().find("a run request for zero runs"), std::string::npos)
        << m.error().message();
  }
}

// The real agent binary, to see it survive what kills a process: an allocation that fails, a
// thread the system refuses. Its address space is limited with prlimit(2) once it runs.
class AgentProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sod2_agent_process_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto child = device::ChildProcess::start({kAgent, "--dir", dir_.string()});
    ASSERT_TRUE(child.ok()) << child.status().message();
    child_ = std::move(*child);
    child_->set_idle_timeout(std::chrono::seconds(60));
    client_ = std::make_unique<device::AgentClient>(*child_);
    auto hello = client_->hello("sod2 test");
    ASSERT_TRUE(hello.ok()) << hello.status().message();
    // One answer first, so the agent's reader thread runs and has allocated.
    expect_rejected();
  }
  void TearDown() override {
    if (limited_) ::prlimit(child_->pid(), RLIMIT_AS, &old_, nullptr);  // it may be gone
    client_.reset();
    child_.reset();
    fs::remove_all(dir_);
  }

  void expect_rejected() {
    const std::vector<uint8_t> junk(300, 'x');
    auto r = client_->send_package(junk);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel) << r.status().message();
  }
  int64_t vm_size() {
    std::ifstream in("/proc/" + std::to_string(child_->pid()) + "/status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("VmSize:", 0) == 0) return std::stoll(line.substr(7)) * 1024;
    return 0;
  }
  // The agent's address space: what it has now plus `headroom`.
  void limit_address_space(int64_t headroom) {
    const int64_t now = vm_size();
    ASSERT_GT(now, 0);
    rlimit lim{};
    ASSERT_EQ(::prlimit(child_->pid(), RLIMIT_AS, nullptr, &old_), 0) << std::strerror(errno);
    lim.rlim_cur = static_cast<rlim_t>(now + headroom);
    lim.rlim_max = old_.rlim_max;
    ASSERT_EQ(::prlimit(child_->pid(), RLIMIT_AS, &lim, nullptr), 0) << std::strerror(errno);
    limited_ = true;
  }
  void restore_limit() {
    ASSERT_EQ(::prlimit(child_->pid(), RLIMIT_AS, &old_, nullptr), 0) << std::strerror(errno);
    limited_ = false;
  }

  fs::path dir_;
  std::unique_ptr<device::ChildProcess> child_;
  std::unique_ptr<device::AgentClient> client_;
  rlimit old_{};
  bool limited_ = false;
};

// Issue 22: std::bad_alloc escaped the agent (SIGABRT). A 100 MB message that does not fit is
// now skipped and answered, and the agent serves on.
TEST_F(AgentProcessTest, AnAllocationFailureIsAnErrorReplyAndTheAgentServesOn) {
  limit_address_space(int64_t{64} << 20);
  rt::HostTensor big(rt::DType::kFloat, rt::Shape(std::vector<int64_t>{25'000'000}));
  device::RunSettings s;
  s.runs = 1;
  s.warmup = 0;
  auto r = client_->run({big}, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().message();
  EXPECT_NE(r.status().message().find("no memory to receive a message of"), std::string::npos)
      << r.status().message();
  restore_limit();
  expect_rejected();
  EXPECT_EQ(child_->wait_and_describe(std::chrono::milliseconds(0)), "still running");
}

// Issue 22: std::system_error (a thread the system refuses) escaped the agent. Now it is an
// error reply for that request, and the next request runs.
TEST_F(AgentProcessTest, AThreadTheSystemRefusesIsAnErrorReplyAndTheAgentServesOn) {
  std::string pkg;
  {
    const std::string out = (dir_ / "sample.sod2").string();
    const std::string cmd = kSod2 + " compile " + kSample + " --ranges " + kSampleRanges + " -o " +
                            out + " > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    pkg = read_file(out);
  }
  auto sent = client_->send_package({reinterpret_cast<const uint8_t*>(pkg.data()), pkg.size()});
  ASSERT_TRUE(sent.ok()) << sent.status().message();
  rt::HostTensor in(rt::DType::kFloat, rt::Shape(std::vector<int64_t>{1, 3, 32, 32}));
  device::RunSettings s;
  s.runs = 1;
  s.warmup = 0;
  // As many threads as the agent allows, each wanting its stack, in 4 MiB more address space.
  s.threads =
      rt::kMaxThreadsPerCore * std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  limit_address_space(int64_t{4} << 20);
  auto r = client_->run({in}, s);
  restore_limit();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().message();
  EXPECT_NE(r.status().message().find("keeps serving"), std::string::npos) << r.status().message();
  s.threads = 1;
  auto again = client_->run({in}, s);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->runs.size(), 1u);
}

// The real agent exits by itself, with status 0, when its stdin closes mid-run.
TEST_F(AgentProcessTest, ClosingStdinMidRunEndsTheAgentCleanly) {
  const std::string out = (dir_ / "sample.sod2").string();
  const std::string cmd =
      kSod2 + " compile " + kSample + " --ranges " + kSampleRanges + " -o " + out + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string pkg = read_file(out);
  auto sent = client_->send_package({reinterpret_cast<const uint8_t*>(pkg.data()), pkg.size()});
  ASSERT_TRUE(sent.ok()) << sent.status().message();
  rt::HostTensor in(rt::DType::kFloat, rt::Shape(std::vector<int64_t>{1, 3, 512, 512}));
  device::RunSettings s;
  s.runs = 1000;
  s.warmup = 0;
  s.threads = 1;
  std::chrono::steady_clock::time_point closed;
  auto r = client_->run({in}, s, [&](int done, int) {
    if (done == 1) {
      child_->close_stdin();
      closed = std::chrono::steady_clock::now();
    }
  });
  // The stream ends without RunDone: the agent stopped when the host left.
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(child_->wait_and_describe(std::chrono::seconds(5)), "exited with status 0")
      << r.status().message() << "; agent stderr: " << child_->stderr_tail();
  EXPECT_LT(std::chrono::steady_clock::now() - closed, std::chrono::seconds(5));
}

}  // namespace
}  // namespace sod2::agent
