// The agent's side of the protocol, in-process over pipes: what it answers to a good
// conversation and to every kind of bad one (PROTOCOL.md).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "runtime/agent/agent.h"
#include "runtime/agent/agent_protocol.pb.h"
#include "runtime/agent/frame_io.h"
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
    options_.host_has_data = [fd] {
      pollfd p{fd, POLLIN, 0};
      return ::poll(&p, 1, 0) > 0;
    };
    thread_ = std::thread([this] {
      result_ = serve(fd_reader(agent_read_), fd_writer(agent_write_), options_);
      ::close(agent_write_);
    });
    reader_ = std::make_unique<FrameReader>(fd_reader(host_read_));
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

}  // namespace
}  // namespace sod2::agent
