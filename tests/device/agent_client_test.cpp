// The host's side of the agent protocol against a scripted device: whatever counts, lengths,
// times and sizes a faulty or hostile agent reports, the host stops with an error naming the
// violation instead of growing, hanging or trusting it (issue 22).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "plugins/device/agent_client.h"
#include "runtime/agent/agent_protocol.pb.h"
#include "runtime/agent/frame_io.h"

namespace sod2::device {
namespace {

using agent::wire::AgentMessage;

std::string framed(const AgentMessage& m) {
  std::string out;
  EXPECT_TRUE(agent::write_frame(
                  [&out](const uint8_t* b, size_t n) {
                    out.append(reinterpret_cast<const char*>(b), n);
                    return Status::ok_status();
                  },
                  m)
                  .ok());
  return out;
}

// A device whose stream is a script: fixed bytes first, then (optionally) messages made on demand
// without end, as a hostile agent would send them. Counts what the host took.
class ScriptedDevice final : public AgentStream {
 public:
  explicit ScriptedDevice(std::string script) : script_(std::move(script)) {}
  // After the script: `endless(i)` gives the i-th message, forever.
  std::function<AgentMessage(uint64_t)> endless;

  Expected<size_t> read(uint8_t* buf, size_t n) override {
    if (pos_ == script_.size() && endless && !killed_) {
      script_ = framed(endless(produced_++));
      pos_ = 0;
    }
    const size_t k = std::min(n, script_.size() - pos_);
    std::memcpy(buf, script_.data() + pos_, k);
    pos_ += k;
    read_bytes_ += k;
    return k;
  }
  Status write(const uint8_t*, size_t n) override {
    written_ += n;
    return Status::ok_status();
  }
  void close_stdin() override {}
  void kill() override { killed_ = true; }
  std::string wait_and_describe(std::chrono::milliseconds) override {
    return killed_ ? "was killed by signal 9 (Killed)" : "exited with status 0";
  }
  std::string stderr_tail() override { return ""; }

  uint64_t produced() const { return produced_; }
  bool killed() const { return killed_; }

 private:
  std::string script_;
  size_t pos_ = 0;
  uint64_t produced_ = 0, read_bytes_ = 0, written_ = 0;
  bool killed_ = false;
};

AgentMessage hello(uint32_t cores = 4) {
  AgentMessage m;
  m.mutable_hello()->set_protocol_version(agent::kProtocolVersion);
  m.mutable_hello()->set_software("sod2 scripted");
  m.mutable_hello()->mutable_device()->set_cores(cores);
  return m;
}
AgentMessage cached() {
  AgentMessage m;
  m.mutable_package_status()->set_cached(true);
  return m;
}
AgentMessage loaded(uint32_t nodes, int variants = 0) {
  AgentMessage m;
  m.mutable_loaded()->set_nodes(nodes);
  m.mutable_loaded()->add_inputs("x");
  for (int i = 0; i < variants; ++i) m.mutable_loaded()->add_variants()->set_name("v");
  return m;
}
AgentMessage result(uint32_t index, uint32_t nodes, bool warmup = false) {
  AgentMessage m;
  auto* r = m.mutable_result();
  r->set_index(index);
  r->set_warmup(warmup);
  r->set_latency_ms(1.5);
  for (uint32_t i = 0; i < nodes; ++i) {
    r->add_group_start_ms(0.1 * i);
    r->add_group_ms(0.1);
  }
  r->set_arena_bytes(1024);
  r->set_rss_bytes(1 << 20);
  return m;
}
AgentMessage done(uint32_t nodes, uint32_t threads = 1) {
  AgentMessage m;
  for (uint32_t i = 0; i < nodes; ++i) {
    m.mutable_done()->add_group_shapes("[1,4]");
    m.mutable_done()->add_group_output_bytes(16);
  }
  m.mutable_done()->set_threads(threads);
  return m;
}

std::string preamble() { return std::string(agent::kPreamble); }

const std::vector<uint8_t> kPackage(256, 7);

// Greets, sends the package (the device has it), and returns the client ready to run.
struct Conversation {
  explicit Conversation(const std::string& after_hello, uint32_t nodes = 2, uint32_t cores = 4)
      : device(preamble() + framed(hello(cores)) + framed(cached()) + framed(loaded(nodes)) +
               after_hello),
        client(device) {}
  ::testing::AssertionResult start() {
    auto h = client.hello("sod2 test");
    if (!h.ok()) return ::testing::AssertionFailure() << h.status().message();
    auto p = client.send_package(kPackage);
    if (!p.ok()) return ::testing::AssertionFailure() << p.status().message();
    return ::testing::AssertionSuccess();
  }
  ScriptedDevice device;
  AgentClient client;
};

RunSettings three_runs() {
  RunSettings s;
  s.runs = 3;
  s.warmup = 0;
  return s;
}

TEST(AgentClientTest, AGoodDeviceIsReportedInFull) {
  Conversation c(framed(result(0, 2, true)) + framed(result(1, 2)) + framed(result(2, 2)) +
                 framed(result(3, 2)) + framed(done(2)));
  ASSERT_TRUE(c.start());
  RunSettings s = three_runs();
  s.warmup = 1;
  auto r = c.client.run({}, s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->runs.size(), 4u);
  EXPECT_TRUE(r->runs[0].warmup);
  EXPECT_EQ(r->group_shapes.size(), 2u);
  EXPECT_FALSE(c.device.killed());
}

// The defect: results past the requested count were all kept (1.9 GB after 18 s).
TEST(AgentClientTest, ResultsBeyondTheRequestedCountStopTheHost) {
  Conversation c("");
  c.device.endless = [](uint64_t i) { return result(static_cast<uint32_t>(i), 2); };
  ASSERT_TRUE(c.start());
  auto r = c.client.run({}, three_runs());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("beyond the 3 runs asked for"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("broke the agent protocol"), std::string::npos);
  EXPECT_EQ(c.device.produced(), 4u);  // not one message more than it took to see it
  EXPECT_TRUE(c.device.killed());
  // The client stays stopped: nothing more is asked of a device that broke the protocol.
  auto again = c.client.run({}, three_runs());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(), r.status().message());
}

TEST(AgentClientTest, EndlessFamilyPointsStopAtTheReportLimit) {
  AgentMessage started;
  started.mutable_family_started()->add_expected_ms(1);
  started.mutable_family_started()->add_expected_ms(2);
  started.mutable_family_started()->set_threads(1);
  ScriptedDevice device(preamble() + framed(hello()) + framed(cached()) + framed(loaded(2, 2)) +
                        framed(started));
  device.endless = [](uint64_t i) {
    AgentMessage m;
    m.mutable_family_point()->set_t_s(0.001 * static_cast<double>(i));
    m.mutable_family_point()->set_latency_ms(1);
    return m;
  };
  AgentClient client(device);
  ASSERT_TRUE(client.hello("sod2 test").ok());
  ASSERT_TRUE(client.send_package(kPackage).ok());
  FamilyRunSettings s;
  s.budget_ms = 5;
  s.duration_s = 1;
  s.max_report_bytes = 64 << 10;
  auto r = client.run_family({}, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("more than 64 KiB of points"), std::string::npos)
      << r.status().message();
  EXPECT_LT(device.produced(), 2000u);
  EXPECT_TRUE(device.killed());
}

// Each of these is one count, length, time or size a device reports, made up.
struct Violation {
  const char* name;
  std::function<std::string()> script;  // after the package loaded (2 nodes)
  const char* expected;                 // in the error
};

TEST(AgentClientTest, EveryMadeUpCountOfARunIsAViolationNamedInTheError) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Violation> cases = {
      {"index out of order", [] { return framed(result(1, 2)); }, "sent run result 1 where run 0"},
      {"warm-up flag", [] { return framed(result(0, 2, true)); }, "(warm-up) where run 0"},
      {"too few group times", [] { return framed(result(0, 1)); }, "1 group times"},
      {"NaN latency",
       [&] {
         AgentMessage m = result(0, 2);
         m.mutable_result()->set_latency_ms(nan);
         return framed(m);
       },
       "non-finite time"},
      {"negative group time",
       [] {
         AgentMessage m = result(0, 2);
         m.mutable_result()->set_group_ms(1, -3);
         return framed(m);
       },
       "negative or non-finite time"},
      {"negative resident set",
       [] {
         AgentMessage m = result(0, 2);
         m.mutable_result()->set_rss_bytes(-1);
         return framed(m);
       },
       "resident set -1 bytes"},
      {"a negative symbol value",
       [] {
         AgentMessage m = result(0, 2);
         m.mutable_result()->add_symbol_values(4);
         m.mutable_result()->add_symbol_values(-7);
         return framed(m);
       },
       "reports 2 symbol values (some negative"},
      {"more symbol values than the package could name",
       [] {
         AgentMessage m = result(0, 2);
         for (int i = 0; i < 1000; ++i) m.mutable_result()->add_symbol_values(1);
         return framed(m);
       },
       "reports 1000 symbol values"},
      {"done too early", [] { return framed(result(0, 2)) + framed(done(2)); },
       "finished after 1 of 3 runs"},
      {"too many shapes",
       [] {
         return framed(result(0, 2)) + framed(result(1, 2)) + framed(result(2, 2)) +
                framed(done(3));
       },
       "3 shapes and 3 output sizes for 2 groups"},
      {"a million threads",
       [] {
         return framed(result(0, 2)) + framed(result(1, 2)) + framed(result(2, 2)) +
                framed(done(2, 1000000));
       },
       "1000000 threads (1 to 16 on its 4 cores)"},
      {"a huge shape",
       [] {
         AgentMessage d = done(2);
         d.mutable_done()->set_group_shapes(0, std::string(100000, '1'));
         return framed(result(0, 2)) + framed(result(1, 2)) + framed(result(2, 2)) + framed(d);
       },
       "a shape of 100000 characters"},
      {"something else", [] { return framed(cached()); }, "an unexpected message during the runs"},
      {"an oversized frame", [] { return std::string("\xff\xff\xff\x0f", 4); },
       "the stream is corrupt"},
      {"bytes that do not parse", [] { return std::string("\x03\x00\x00\x00\xff\xff\xff", 7); },
       "does not parse"},
  };
  for (const Violation& v : cases) {
    SCOPED_TRACE(v.name);
    Conversation c(v.script());
    ASSERT_TRUE(c.start());
    auto r = c.client.run({}, three_runs());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(v.expected), std::string::npos) << r.status().message();
    EXPECT_TRUE(c.device.killed());
  }
}

AgentMessage body_node(uint32_t graph, uint32_t node, double total_ms, uint64_t calls) {
  AgentMessage m;
  auto* b = m.mutable_done()->add_body_nodes();
  b->set_graph(graph);
  b->set_node(node);
  b->set_name("n" + std::to_string(node));
  b->set_op_type("Conv");
  b->set_total_ms(total_ms);
  b->set_calls(calls);
  return m;
}

// Three runs, then a RunDone with these body-node times.
std::string three_runs_then(const std::vector<AgentMessage>& body) {
  AgentMessage d = done(2);
  for (const AgentMessage& b : body) d.MergeFrom(b);
  return framed(result(0, 2)) + framed(result(1, 2)) + framed(result(2, 2)) + framed(d);
}

TEST(AgentClientTest, BodyNodeTimesAreKeptInOrder) {
  Conversation c(three_runs_then(
      {body_node(1, 0, 3.0, 3), body_node(1, 2, 1.5, 3), body_node(3, 0, 9.0, 12)}));
  ASSERT_TRUE(c.start());
  c.client.expect_graphs({2, 3, 1, 1});
  auto r = c.client.run({}, three_runs());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->body_nodes.size(), 3u);
  EXPECT_EQ(r->body_nodes[1].graph, 1u);
  EXPECT_EQ(r->body_nodes[1].node, 2u);
  EXPECT_EQ(r->body_nodes[1].name, "n2");
  EXPECT_EQ(r->body_nodes[1].op_type, "Conv");
  EXPECT_DOUBLE_EQ(r->body_nodes[1].total_ms, 1.5);
  EXPECT_EQ(r->body_nodes[2].calls, 12u);
}

TEST(AgentClientTest, EveryMadeUpBodyNodeTimeIsAViolationNamedInTheError) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    const char* name;
    std::vector<AgentMessage> body;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"a node past its graph's",
       {body_node(1, 3, 1, 1)},
       "a time for body node 3 of graph 1, which has 3 nodes"},
      {"a graph past the package's",
       {body_node(4, 0, 1, 1)},
       "a time for body node 0 of graph 4, but the package has 4 graphs"},
      {"the main graph", {body_node(0, 1, 1, 1)}, "of graph 0, the main graph"},
      {"a negative time",
       {body_node(1, 1, -2, 1)},
       "a negative or non-finite time (-2.000000 ms) for body node 1 of graph 1 'n1'"},
      {"a NaN time", {body_node(1, 1, nan, 1)}, "non-finite time"},
      {"no calls", {body_node(3, 0, 1, 0)}, "body node 0 of graph 3 'n0', which never ran"},
      {"a repeat", {body_node(1, 1, 1, 1), body_node(1, 1, 1, 1)}, "out of order or repeated"},
      {"out of order", {body_node(3, 0, 1, 1), body_node(1, 1, 1, 1)}, "out of order"},
      {"more than the bodies hold",
       {body_node(1, 0, 1, 1), body_node(1, 1, 1, 1), body_node(1, 2, 1, 1), body_node(2, 0, 1, 1),
        body_node(3, 0, 1, 1), body_node(3, 1, 1, 1)},
       "6 body-node times for a package with 5 nodes in its bodies"},
  };
  for (const Case& v : cases) {
    SCOPED_TRACE(v.name);
    Conversation c(three_runs_then(v.body));
    ASSERT_TRUE(c.start());
    c.client.expect_graphs({2, 3, 1, 1});
    auto r = c.client.run({}, three_runs());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(v.expected), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("broke the agent protocol"), std::string::npos);
    EXPECT_TRUE(c.device.killed());
  }
  // Without the package's graphs, indices are bounded by what its bytes could hold.
  Conversation c(three_runs_then({body_node(1, 100000, 1, 1)}));
  ASSERT_TRUE(c.start());
  auto r = c.client.run({}, three_runs());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("beyond what the package's 256 bytes could hold"),
            std::string::npos)
      << r.status().message();
}

TEST(AgentClientTest, MadeUpSizesInHelloAndPackageAreViolations) {
  {
    AgentMessage h = hello();
    h.mutable_hello()->mutable_device()->set_cpu(std::string(100000, 'x'));
    ScriptedDevice device(preamble() + framed(h));
    AgentClient client(device);
    auto r = client.hello("sod2 test");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("100000-byte cpu"), std::string::npos)
        << r.status().message();
  }
  {
    ScriptedDevice device(preamble() + framed(hello(4000000)));
    AgentClient client(device);
    auto r = client.hello("sod2 test");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("4000000 cores"), std::string::npos);
  }
  {
    // A 256-byte package cannot hold 100 million nodes; the report it would need is refused.
    Conversation c("", 100000000);
    auto h = c.client.hello("sod2 test");
    ASSERT_TRUE(h.ok());
    auto p = c.client.send_package(kPackage);
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.status().message().find("256-byte package has 100000000 nodes"), std::string::npos)
        << p.status().message();
  }
  {
    ScriptedDevice device(preamble() + framed(hello()) + framed(cached()) +
                          framed(loaded(2, 5000)));
    AgentClient client(device);
    ASSERT_TRUE(client.hello("sod2 test").ok());
    std::vector<uint8_t> big(1 << 20, 1);
    auto p = client.send_package(big);
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.status().message().find("5000 variants (at most 4096)"), std::string::npos)
        << p.status().message();
  }
}

TEST(AgentClientTest, ARequestWhoseReportWouldNotFitIsRefusedBeforeItIsSent) {
  Conversation c("", 200);
  ASSERT_TRUE(c.start());
  RunSettings s;
  s.runs = 1000000;
  s.max_report_bytes = 64 << 20;
  auto r = c.client.run({}, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("ask for fewer runs"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(c.device.killed());
}

TEST(AgentClientTest, TheDevicesErrorsAreClippedAndKeepTheirKind) {
  AgentMessage e;
  e.mutable_error()->set_code(agent::wire::Error::RESOURCE_EXHAUSTED);
  e.mutable_error()->set_message(std::string(1 << 20, 'e'));
  Conversation c(framed(e));
  ASSERT_TRUE(c.start());
  auto r = c.client.run({}, three_runs());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_LT(r.status().message().size(), 2 * kMaxDeviceText);
}

// ---- Sustained runs (issue 24 item 3): windows of time after the measured runs ----

AgentMessage window(uint32_t index, double start, double end, uint32_t nodes = 2) {
  AgentMessage m;
  auto* w = m.mutable_window();
  w->set_index(index);
  w->set_start_s(start);
  w->set_end_s(end);
  w->set_runs(10);
  w->set_min_ms(1);
  w->set_p50_ms(1.5);
  w->set_p90_ms(2);
  w->set_p99_ms(3);
  w->set_max_ms(4);
  w->set_mean_ms(1.6);
  for (uint32_t i = 0; i < nodes; ++i) w->add_group_mean_ms(0.5);
  w->set_rss_bytes(1 << 20);
  auto* t = w->add_sensors();
  t->set_name("thermal:cpu");
  t->set_mean(40);
  t->set_max(42);
  return m;
}

RunSettings sustained(double duration_s, double window_s) {
  RunSettings s = three_runs();
  s.duration_s = duration_s;
  s.window_s = window_s;
  return s;
}

TEST(AgentClientTest, ASustainedRunsWindowsAreReportedInOrder) {
  AgentMessage first = window(0, 0, 1);
  first.mutable_window()->add_unreadable("thermal_zone1 (battery): Permission denied");
  AgentMessage last_done = done(2);
  last_done.mutable_done()->set_stopped_early(true);
  Conversation c(framed(result(0, 2)) + framed(first) + framed(result(1, 2)) +
                 framed(result(2, 2)) + framed(window(1, 1, 1.4)) + framed(last_done));
  ASSERT_TRUE(c.start());
  std::vector<uint32_t> seen;
  auto r = c.client.run({}, sustained(2, 1), {},
                        [&](const SustainedWindow& w) { seen.push_back(w.index); });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(seen, (std::vector<uint32_t>{0, 1}));
  ASSERT_EQ(r->windows.size(), 2u);
  EXPECT_DOUBLE_EQ(r->windows[1].end_s, 1.4);
  EXPECT_EQ(r->windows[0].group_mean_ms.size(), 2u);
  ASSERT_EQ(r->windows[0].sensors.size(), 1u);
  EXPECT_EQ(r->windows[0].sensors[0].name, "thermal:cpu");
  EXPECT_EQ(r->unreadable_sensors,
            (std::vector<std::string>{"thermal_zone1 (battery): Permission denied"}));
  EXPECT_TRUE(r->stopped_early);
}

// An agent from before sustained runs ignores the duration: the host says so (not a violation:
// the agent still serves ordinary runs).
TEST(AgentClientTest, AnAgentThatIgnoresTheDurationIsNamedAsOlder) {
  Conversation c(framed(result(0, 2)) + framed(result(1, 2)) + framed(result(2, 2)) +
                 framed(done(2)));
  ASSERT_TRUE(c.start());
  auto r = c.client.run({}, sustained(60, 10));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("older than this sod2"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(c.device.killed());
}

TEST(AgentClientTest, EndlessWindowsStopAtWhatTheDurationAllows) {
  Conversation c(framed(result(0, 2)) + framed(result(1, 2)) + framed(result(2, 2)));
  c.device.endless = [](uint64_t i) {
    return window(static_cast<uint32_t>(i), static_cast<double>(i), static_cast<double>(i + 1));
  };
  ASSERT_TRUE(c.start());
  auto r = c.client.run({}, sustained(10, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than the 11 windows"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(c.device.produced(), 12u);
  EXPECT_TRUE(c.device.killed());
}

TEST(AgentClientTest, EveryMadeUpFigureOfAWindowIsAViolationNamedInTheError) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto with = [](std::function<void(agent::wire::SustainedWindow*)> change) {
    AgentMessage m = window(0, 0, 1);
    change(m.mutable_window());
    return framed(m);
  };
  const std::vector<Violation> cases = {
      {"index gap", [&] { return with([](auto* w) { w->set_index(3); }); },
       "sent window 3 where window 0"},
      {"ends before it starts", [&] { return with([](auto* w) { w->set_end_s(-1); }); },
       "times 0.000000 to -1.000000"},
      {"percentiles out of order", [&] { return with([](auto* w) { w->set_p90_ms(0.5); }); },
       "latencies out of order"},
      {"NaN p99", [&] { return with([&](auto* w) { w->set_p99_ms(nan); }); },
       "latencies out of order"},
      {"mean above max", [&] { return with([](auto* w) { w->set_mean_ms(9); }); },
       "latencies out of order"},
      {"group count", [&] { return with([](auto* w) { w->add_group_mean_ms(1); }); },
       "3 group times for 2 groups"},
      {"negative group time", [&] { return with([](auto* w) { w->set_group_mean_ms(0, -1); }); },
       "a group time of -1"},
      {"timings without runs", [&] { return with([](auto* w) { w->set_runs(0); }); },
       "timings without runs"},
      {"negative RSS", [&] { return with([](auto* w) { w->set_rss_bytes(-5); }); },
       "resident set of -5"},
      {"sensor twice", [&] { return with([](auto* w) { *w->add_sensors() = w->sensors(0); }); },
       "the sensor \"thermal:cpu\" twice"},
      {"sensor mean above max",
       [&] { return with([](auto* w) { w->mutable_sensors(0)->set_mean(99); }); },
       "reading mean 99"},
      {"sensor without a name",
       [&] { return with([](auto* w) { w->mutable_sensors(0)->set_name(""); }); }, "a sensor \"\""},
      {"too many sensors",
       [&] {
         return with([](auto* w) {
           for (int i = 0; i < 300; ++i) {
             auto* t = w->add_sensors();
             t->set_name("cpu" + std::to_string(i) + " MHz");
           }
         });
       },
       "301 sensors"},
      {"a huge note",
       [&] { return with([](auto* w) { w->add_unreadable(std::string(1 << 16, 'x')); }); },
       "a sensor note of 65536"},
  };
  for (const Violation& v : cases) {
    SCOPED_TRACE(v.name);
    Conversation c(v.script());
    ASSERT_TRUE(c.start());
    auto r = c.client.run({}, sustained(5, 1));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(v.expected), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("broke the agent protocol"), std::string::npos);
    EXPECT_TRUE(c.device.killed());
  }
}

TEST(AgentClientTest, AWindowForARunWithoutADurationIsAViolation) {
  Conversation c(framed(window(0, 0, 1)));
  ASSERT_TRUE(c.start());
  auto r = c.client.run({}, three_runs());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a sustained window for a run without a duration"),
            std::string::npos)
      << r.status().message();
}

TEST(AgentClientTest, SustainedSettingsOutsideTheProtocolAreRefusedBeforeAsking) {
  Conversation c("");
  ASSERT_TRUE(c.start());
  for (const auto& [duration, window_s] :
       std::vector<std::pair<double, double>>{{10, 0.01}, {10, 61}, {-1, 1}, {NAN, 1}}) {
    auto r = c.client.run({}, sustained(duration, window_s));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().message();
  }
  RunSettings huge = sustained(1e6, 0.1);
  huge.max_report_bytes = 64 << 20;
  auto r = c.client.run({}, huge);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a shorter duration or longer windows"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(c.device.killed());
}

}  // namespace
}  // namespace sod2::device
