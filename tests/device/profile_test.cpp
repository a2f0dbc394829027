// End to end over the real transports and the real agent: `sod2 profile` over `local`, faults
// (agent killed mid-run, a full disk, something that is not an agent), and the `adb` transport
// against tests/device/fake_adb.sh plus Debian's adb with no device attached.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/cli/device_commands.h"
#include "app/cli/symbol_args.h"
#include "app/profiling/profile_job.h"
#include "app/profiling/profile_report.h"
#include "app/profiling/profile_sweep.h"
#include "app/profiling/sweep_report.h"
#include "core/package/package_writer.h"
#include "core/pipeline/compiled_model.h"
#include "core/store/profile_store.h"
#include "plugins/device/transport_registry.h"
#include "tests/device/profile_test_fixture.h"

namespace sod2 {
namespace {

using namespace profile_testing;

// The agent processes this test started, found through /proc (the local transport's agent is
// our child; the fake adb execs it, so it is our child there too).
std::vector<pid_t> child_agents() {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(e->d_name) + "/stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    if (close == std::string::npos || line.find("(sod2-agent)") == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    pid_t ppid;
    rest >> state >> ppid;
    if (ppid == ::getpid()) out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

// Progress that SIGKILLs the agent once the second run is reported, and says whether it did.
profiling::ProfileProgress killing_the_agent_mid_run(bool* killed) {
  profiling::ProfileProgress p;
  p.report = [killed](const std::string& stage, double) {
    if (*killed || stage.rfind("run 2 of", 0) != 0) return;
    for (pid_t pid : child_agents()) ::kill(pid, SIGKILL);
    *killed = true;
  };
  return p;
}

TEST_F(ProfileTest, LocalProfilePrintsTheTableWritesTheTraceAndRecordsTheRun) {
  const std::string trace = (dir_ / "trace.json").string();
  ASSERT_EQ(cli(cli::run_profile,
                {kModels + "/yolo_tiny/model.onnx", "--device", "local", "--bind",
                 "height=128,width=160", "--ranges", ranges_of("yolo_tiny"), "--runs", "3",
                 "--warmup", "1", "--threads", "1", "--trace", trace, "--db", db_}),
            0)
      << err_.str();
  const std::string table = out_.str();
  for (const char* part : {"Device: local", "Latency (ms): count=3 first=", "warmup_avg=", "std=",
                           "Per group (execution order)", "Top 10 by time", "Summary by op type",
                           "Recorded as run 1", "Conv", "[1,16,64,80]"})
    EXPECT_NE(table.find(part), std::string::npos) << part << "\n" << table;

  // The trace parses; one complete event per group per run, each naming nodes, ops and shapes.
  std::ifstream in(trace);
  const nlohmann::json doc = nlohmann::json::parse(in);
  int runs = 0, groups = 0, counters = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "run") ++runs;
    if (e["ph"] == "C") {
      ++counters;
      EXPECT_GT(e["args"]["arena_bytes"].get<int64_t>(), 0);
    }
    if (e["ph"] == "X" && e["cat"] == "group") {
      ++groups;
      EXPECT_FALSE(e["args"]["nodes"].empty());
      EXPECT_EQ(e["args"]["nodes"].size(), e["args"]["op_types"].size());
      EXPECT_EQ(e["args"]["shape"].get<std::string>().front(), '[');
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(counters, 4);
  const int64_t stored_groups = count("SELECT COUNT(*) FROM group_timings");
  ASSERT_GT(stored_groups, 10);
  EXPECT_EQ(groups, 4 * stored_groups);

  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE status = 'ok' AND avg_ms > 0"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM run_latencies"), 4);
  EXPECT_EQ(count("SELECT COUNT(*) FROM run_latencies WHERE warmup = 1"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM devices WHERE device_id = 'local'"), 1);

  ASSERT_EQ(cli(cli::run_history, {"--db", db_}), 0) << err_.str();
  EXPECT_NE(out_.str().find("yolo_tiny/model.onnx"), std::string::npos) << out_.str();
}

TEST_F(ProfileTest, FusedGroupsAreNamedByTheirNodesAndHistoryComparesRuns) {
  profiling::ProfileRequest r;
  r.model_path = kModels + "/bert_tiny/model.onnx";
  r.bind = {{"batch", 1}, {"seq", 16}};
  r.int_ranges = *profiling::parse_int_input_ranges("input_ids=0:1000");
  r.rdp = cli::rdp_options_from(ranges_of("bert_tiny"), std::nullopt);
  r.settings = {2, 0, 1};
  r.db_path = db_;
  auto a = profiling::profile(r);
  ASSERT_TRUE(a.ok()) << a.status().message();
  bool fused = false;
  for (const profiling::GroupProfile& g : a->groups)
    if (g.nodes.size() > 1) {
      fused = true;
      EXPECT_NE(g.op_label().find('+'), std::string::npos);
      // Named by its kernel's anchor, which a prologue (a MatMul's operand Transpose) precedes.
      EXPECT_NE(std::find(g.nodes.begin(), g.nodes.end(), g.name), g.nodes.end()) << g.name;
    }
  EXPECT_TRUE(fused) << "bert_tiny compiles MatMul+Add into fused kernels";
  r.bind["seq"] = 32;
  auto b = profiling::profile(r);
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(cli(cli::run_history,
                {"--compare", std::to_string(a->run_id), std::to_string(b->run_id), "--db", db_}),
            0)
      << err_.str();
  EXPECT_NE(out_.str().find("delta"), std::string::npos);
  EXPECT_NE(out_.str().find("seq=16"), std::string::npos);
  EXPECT_NE(out_.str().find("seq=32"), std::string::npos);
}

TEST_F(ProfileTest, AProgramTheCallerCompiledIsPackagedAsIs) {
  // The studio hands over its document's program: profiled without compiling the file again, so
  // the groups profiled are the document's (here compiled without fusion, while the request
  // says fuse: the request's own compile would fuse).
  profiling::ProfileRequest r = yolo_request();
  pipeline::CompileOptions options;
  options.rdp = r.rdp;
  options.fuse = false;
  auto unfused = pipeline::compile_file(r.model_path, options);
  ASSERT_TRUE(unfused.ok()) << unfused.status().to_string();
  r.compiled = std::make_shared<const rt::ProgramDesc>(std::move(unfused->program));
  auto given = profiling::profile(r);
  ASSERT_TRUE(given.ok()) << given.status().message();
  EXPECT_EQ(given->groups.size(), r.compiled->graphs[0].nodes.size());
  for (const profiling::GroupProfile& g : given->groups) EXPECT_EQ(g.nodes.size(), 1u) << g.name;
  r.compiled.reset();
  auto own = profiling::profile(r);
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_LT(own->groups.size(), given->groups.size());
  EXPECT_EQ(own->model_sha256, given->model_sha256);  // the same file either way
}

TEST_F(ProfileTest, APackageIsSentOnceThenFoundOnTheDevice) {
  profiling::ProfileRequest r = yolo_request();
  auto first = profiling::profile(r);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_FALSE(first->package_cached);
  auto second = profiling::profile(r);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_TRUE(second->package_cached);
  EXPECT_EQ(first->package_sha256, second->package_sha256);
}

TEST_F(ProfileTest, HalfWidthWeightsSendAboutHalfThePackage) {
  profiling::ProfileRequest r = yolo_request();
  auto full = profiling::profile(r);
  ASSERT_TRUE(full.ok()) << full.status().message();
  r.weights = package::WeightStorage::kFloat16;
  auto half = profiling::profile(r);
  ASSERT_TRUE(half.ok()) << half.status().message();
  EXPECT_NE(half->package_sha256, full->package_sha256);
  EXPECT_LT(static_cast<double>(half->package_bytes),
            0.6 * static_cast<double>(full->package_bytes));
  EXPECT_EQ(half->groups.size(), full->groups.size());
  // A compiled package keeps its weights: asking for half width there is an error, not ignored.
  const std::string package = (std::filesystem::temp_directory_path() /
                               ("sod2_profile_fp16_" + std::to_string(::getpid()) + ".sod2"))
                                  .string();
  pipeline::CompileOptions options;
  options.rdp = r.rdp;
  auto compiled = pipeline::compile_file(r.model_path, options);
  ASSERT_TRUE(compiled.ok());
  ASSERT_TRUE(package::write_package(compiled->program, package).ok());
  r.model_path = package;
  auto refused = profiling::profile(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--weights fp16"), std::string::npos)
      << refused.status().message();
  std::filesystem::remove(package);
}

TEST_F(ProfileTest, AgentKilledMidRunIsRecordedAsFailedWithNoHalfRun) {
  profiling::ProfileRequest r = yolo_request();
  r.settings.runs = 200;
  bool killed = false;
  auto res = profiling::profile(r, killing_the_agent_mid_run(&killed));
  ASSERT_TRUE(killed);
  ASSERT_FALSE(res.ok());
  const std::string m = res.status().message();
  EXPECT_NE(m.find("mid-run"), std::string::npos) << m;
  EXPECT_NE(m.find("signal 9"), std::string::npos) << m;
  EXPECT_NE(m.find("recorded as failed run"), std::string::npos) << m;
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE status = 'failed' AND failure LIKE '%mid-run%'"),
            1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM run_latencies"), 0);
  EXPECT_EQ(count("SELECT COUNT(*) FROM group_timings"), 0);
}

TEST_F(ProfileTest, AFullDeviceDiskIsAClearFailure) {
  ::setenv("SOD2_REAL_AGENT", (kBin + "/sod2-agent").c_str(), 1);
  ::setenv("SOD2_AGENT", (kTests + "/limited_agent.sh").c_str(), 1);
  auto res = profiling::profile(yolo_request());
  ASSERT_FALSE(res.ok());
  const std::string m = res.status().message();
  EXPECT_NE(m.find("disk is full"), std::string::npos) << m;
  EXPECT_NE(m.find("no room on the device"), std::string::npos) << m;
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE status = 'failed'"), 1);
  // Nothing half-written is left in the agent's package folder.
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "agent"))
    EXPECT_EQ(e.path().extension(), "") << e.path();
}

TEST_F(ProfileTest, SomethingThatIsNotAnAgentIsNamed) {
  ::setenv("SOD2_AGENT", "/bin/echo", 1);
  auto res = profiling::profile(yolo_request());
  ASSERT_FALSE(res.ok());
  const std::string m = res.status().message();
  EXPECT_NE(m.find("not a sod2 agent"), std::string::npos) << m;
  EXPECT_NE(m.find("--dir"), std::string::npos) << m;  // what echo said
}

// Writing to an agent that stopped reading is an error message, never a SIGPIPE that kills the
// host (the CLI, the studio).
TEST_F(ProfileTest, AnAgentThatStopsReadingIsAnErrorNotASignal) {
  ::setenv("SOD2_AGENT", (kTests + "/deaf_agent.sh").c_str(), 1);
  auto res = profiling::profile(yolo_request());
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("the other end closed the stream"), std::string::npos)
      << res.status().message();
}

TEST_F(ProfileTest, CancellingMidRunStopsAndRecordsIt) {
  profiling::ProfileRequest r = yolo_request();
  r.settings.runs = 100000;
  std::atomic<bool> cancel{false};
  profiling::ProfileProgress p;
  p.cancel = &cancel;
  p.report = [&](const std::string& stage, double) {
    if (stage.rfind("run 3 of", 0) == 0) cancel = true;
  };
  auto res = profiling::profile(r, p);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kCancelled) << res.status().message();
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE status = 'failed' AND failure LIKE "
                  "'%cancelled%'"),
            1);
  EXPECT_TRUE(child_agents().empty()) << "the agent is stopped";
}

TEST_F(ProfileTest, MissingAgentBinarySaysWhereItLooked) {
  ::setenv("SOD2_AGENT", "/nonexistent/sod2-agent", 1);
  ::setenv("SOD2_PLUGIN_DIR", (SOD2_BINARY_DIR "/lib/sod2/plugins"), 1);
  auto t = device::load_transport("local");
  ASSERT_TRUE(t.ok()) << t.status().message();
  // The test binary's own folder has no agent either, so only $SOD2_AGENT could have served.
  auto child = (*t)->start_agent({});
  if (child.ok()) GTEST_SKIP() << "an agent beside the test binary was found";
  EXPECT_NE(child.status().message().find("/nonexistent/sod2-agent"), std::string::npos)
      << child.status().message();
}

TEST_F(ProfileTest, UnknownTransportAndMalformedDeviceIds) {
  profiling::ProfileRequest r = yolo_request();
  r.device = "bluetooth";
  auto res = profiling::profile(r);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("no device transport 'bluetooth'"), std::string::npos)
      << res.status().message();
  EXPECT_NE(res.status().message().find("adb, local"), std::string::npos);
  r.device = "adb:";
  res = profiling::profile(r);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("empty serial"), std::string::npos);
}

// #24 item 2: one package, one agent, a run at each value; the arena the plan predicts at every
// measured point is the arena the device reports, and each point is a run of the sweep.
TEST_F(ProfileTest, ASweepRunsOnePackageAtEveryPointAndThePlanPredictsEachArena) {
  profiling::SweepProfileRequest s;
  s.profile = yolo_request();
  s.profile.bind = {{"width", 96}};
  s.symbol = "height";
  s.lo = 64;
  s.hi = 192;
  s.step = 64;
  std::vector<int64_t> seen;
  auto sweep = profiling::profile_sweep(
      s, {}, [&](const profiling::MeasuredPoint& p) { seen.push_back(p.value); });
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  EXPECT_EQ(seen, (std::vector<int64_t>{64, 128, 192}));
  ASSERT_EQ(sweep->points.size(), 3u);
  EXPECT_EQ(sweep->failed, 0u);
  EXPECT_EQ(sweep->arena_mismatches, 0u);
  int64_t previous_arena = 0;
  for (const profiling::MeasuredPoint& p : sweep->points) {
    ASSERT_TRUE(p.result) << p.error;
    EXPECT_GT(p.predicted_arena_bytes, previous_arena) << "the arena grows with the height";
    EXPECT_EQ(p.predicted_arena_bytes, p.result->arena_bytes()) << "height=" << p.value;
    EXPECT_EQ(p.result->bindings, "height=" + std::to_string(p.value) + ",width=96");
    EXPECT_GT(p.result->stats.p90_ms, 0);
    EXPECT_LE(p.result->stats.p50_ms, p.result->stats.p90_ms);
    previous_arena = p.predicted_arena_bytes;
  }
  // One package: sent at the first point's agent, found by hash at no later one.
  EXPECT_EQ(sweep->points[0].result->package_sha256, sweep->points[2].result->package_sha256);
  EXPECT_EQ(count("SELECT COUNT(*) FROM sweeps"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE sweep_id = 1 AND status = 'ok' AND "
                  "predicted_arena_bytes = arena_bytes"),
            3);
  EXPECT_GT(count("SELECT COUNT(*) FROM group_timings WHERE ops > 0"), 10);

  // The store gives the sweep back as it was printed.
  std::ostringstream printed;
  profiling::print_sweep_table(*sweep, printed);
  ASSERT_EQ(cli(cli::run_history, {"--sweep", "1", "--db", db_}), 0) << err_.str();
  const std::string recorded = out_.str();
  for (const char* part :
       {"Sweep of height = 64..192 step 64, 3 points, held width=96", "p50 ms", "plan arena",
        "run arena", "prediction equals the device's at all 3 measured points",
        "Groups by time at height=192", "work x", "Recorded as sweep 1"}) {
    EXPECT_NE(recorded.find(part), std::string::npos) << part << "\n" << recorded;
    EXPECT_NE(printed.str().find(part), std::string::npos) << part << "\n" << printed.str();
  }
  ASSERT_EQ(cli(cli::run_history, {"--sweeps", "--db", db_}), 0) << err_.str();
  EXPECT_NE(out_.str().find("64..192 step 64"), std::string::npos) << out_.str();
  ASSERT_EQ(cli(cli::run_history, {"--db", db_}), 0) << err_.str();
  EXPECT_NE(out_.str().find("SWEEP"), std::string::npos) << out_.str();
  ASSERT_EQ(cli(cli::run_history, {"--sweep", "1", "--json", "--db", db_}), 0) << err_.str();
  const nlohmann::json j = nlohmann::json::parse(out_.str());
  ASSERT_EQ(j["points"].size(), 3u);
  EXPECT_EQ(j["points"][1]["value"], 128);
  EXPECT_EQ(j["points"][1]["predicted_arena_bytes"], j["points"][1]["arena_bytes"]);
  EXPECT_GT(j["points"][2]["ops"].get<int64_t>(), j["points"][0]["ops"].get<int64_t>());
  EXPECT_FALSE(j["points"][0]["groups"].empty());
  ASSERT_EQ(cli(cli::run_history, {"--sweep", "7", "--db", db_}), 1);
  EXPECT_NE(err_.str().find("no sweep 7"), std::string::npos) << err_.str();
}

// Execution symbols (the experts' token counts come from TopK/NonZero at run time): the plan a
// session lays out at each point is still the one the package view predicts there.
TEST_F(ProfileTest, ASweepOfAModelWithExecutionSymbolsPredictsEveryArena) {
  profiling::SweepProfileRequest s;
  s.profile.model_path = kModels + "/moe_tiny/model.onnx";
  s.profile.rdp = cli::rdp_options_from(ranges_of("moe_tiny"), std::nullopt);
  s.profile.bind = {{"batch", 2}};
  s.profile.settings = {2, 1, 1};
  s.profile.db_path = "";
  s.symbol = "seq";
  s.lo = 8;
  s.hi = 200;
  s.step = 64;
  auto sweep = profiling::profile_sweep(s);
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->points.size(), 4u);
  for (const profiling::MeasuredPoint& p : sweep->points) {
    ASSERT_TRUE(p.result) << p.error;
    // The agent reports the values its run bound the execution symbols to: the prediction is
    // the plan at exactly those, not at their bounds (which the routing rarely reaches).
    EXPECT_TRUE(p.result->prediction_exact) << "seq=" << p.value;
    EXPECT_EQ(p.predicted_arena_bytes, p.result->arena_bytes()) << "seq=" << p.value;
    EXPECT_GT(p.result->report.runs.back().symbol_values.size(), 2u)
        << "batch, seq and the execution symbols";
  }
  EXPECT_EQ(sweep->arena_mismatches, 0u);
  EXPECT_EQ(sweep->sweep_id, 0) << "recording was off";
}

// A point whose agent dies is a failed point with its reason; the sweep goes on with a new
// agent, and the run is recorded as a failed point of the sweep.
TEST_F(ProfileTest, ASweepPointWhoseAgentDiesFailsAndTheSweepGoesOn) {
  profiling::SweepProfileRequest s;
  s.profile = yolo_request();
  s.profile.bind = {{"width", 64}};
  s.profile.settings.runs = 50;
  s.symbol = "height";
  s.lo = 64;
  s.hi = 192;
  s.step = 64;
  bool killed = false;
  profiling::ProfileProgress progress;
  progress.report = [&killed](const std::string& stage, double) {
    if (killed || stage.rfind("height=128: run 2 of", 0) != 0) return;
    for (pid_t pid : child_agents()) ::kill(pid, SIGKILL);
    killed = true;
  };
  auto sweep = profiling::profile_sweep(s, progress);
  ASSERT_TRUE(killed);
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->points.size(), 3u);
  EXPECT_TRUE(sweep->points[0].result);
  EXPECT_FALSE(sweep->points[1].result);
  EXPECT_NE(sweep->points[1].error.find("signal 9"), std::string::npos) << sweep->points[1].error;
  ASSERT_TRUE(sweep->points[2].result) << sweep->points[2].error;
  EXPECT_EQ(sweep->failed, 1u);
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE sweep_id = 1 AND sweep_value = 128 AND "
                  "status = 'failed'"),
            1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE sweep_id = 1 AND status = 'ok'"), 2);
  std::ostringstream printed;
  profiling::print_sweep_table(*sweep, printed);
  EXPECT_NE(printed.str().find("1 of 3 points failed"), std::string::npos) << printed.str();
}

// #24 item 4 (the CLI half): two sweeps of one symbol point by point, values either measured
// paired, and the largest slowdown named with the command that compares its runs group by group.
TEST_F(ProfileTest, TwoSweepsCompareThePointsTheyShare) {
  profiling::SweepProfileRequest s;
  s.profile = yolo_request();
  s.profile.bind = {{"width", 64}};
  s.symbol = "height";
  s.lo = 64;
  s.hi = 128;
  s.step = 64;
  ASSERT_TRUE(profiling::profile_sweep(s).ok());
  s.hi = 192;
  ASSERT_TRUE(profiling::profile_sweep(s).ok());
  ASSERT_EQ(cli(cli::run_history, {"--compare-sweeps", "1", "2", "--db", db_}), 0) << err_.str();
  const std::string table = out_.str();
  for (const char* part : {"A: sweep 1", "B: sweep 2", "A p50 ms", "B p50 ms", "A arena",
                           "Largest slowdown at height=", "sod2 history --compare "})
    EXPECT_NE(table.find(part), std::string::npos) << part << "\n" << table;
  // 192 is only in B: its A side is empty.
  EXPECT_NE(table.find("192"), std::string::npos) << table;
  s.profile.bind = {{"width", 96}};
  ASSERT_TRUE(profiling::profile_sweep(s).ok());
  EXPECT_EQ(cli(cli::run_history, {"--compare-sweeps", "1", "3", "--db", db_}), 1);
  EXPECT_NE(err_.str().find("pass --force"), std::string::npos) << err_.str();
  EXPECT_EQ(cli(cli::run_history, {"--compare-sweeps", "1", "3", "--force", "--db", db_}), 0)
      << err_.str();
  EXPECT_EQ(cli(cli::run_history, {"--compare-sweeps", "1", "--db", db_}), 1);
  EXPECT_NE(err_.str().find("takes two sweep ids"), std::string::npos) << err_.str();
}

// Issue 24 item 3: a sustained run keeps one session running after its measured runs and
// records each window of time; the history prints it again and compares its cold start with its
// end. What this machine's /sys does not expose is said, not left out.
TEST_F(ProfileTest, ASustainedRunRecordsEveryWindowAndTheHistoryPrintsIt) {
  const std::string model = kModels + "/yolo_tiny/model.onnx";
  ASSERT_EQ(cli(cli::run_profile, {model, "--ranges", ranges_of("yolo_tiny"), "--bind",
                                   "height=64,width=64", "--runs", "3", "--threads", "1",
                                   "--duration", "1.2s", "--window", "0.3s", "--db", db_}),
            0)
      << err_.str();
  const std::string table = out_.str();
  for (const char* part : {"Sustained run: ran ", "s of the 1.2 s asked", "p99 ms",
                           "Window 0 (cold) -> window ", "Recorded as run 1"})
    EXPECT_NE(table.find(part), std::string::npos) << part << "\n" << table;
  const int64_t windows = count("SELECT COUNT(*) FROM run_windows WHERE run_id = 1");
  EXPECT_GE(windows, 3);
  EXPECT_LE(windows, 5);
  EXPECT_EQ(count("SELECT COUNT(DISTINCT idx) FROM window_groups WHERE run_id = 1"), windows);
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE duration_s = 1.2 AND window_s = 0.3"), 1);

  ASSERT_EQ(cli(cli::run_history, {"--db", db_}), 0) << err_.str();
  EXPECT_NE(out_.str().find("SUSTAINED"), std::string::npos) << out_.str();
  ASSERT_EQ(cli(cli::run_history, {"--windows", "1", "--db", db_}), 0) << err_.str();
  EXPECT_NE(out_.str().find("Window 0 (cold) -> window "), std::string::npos) << out_.str();
  ASSERT_EQ(cli(cli::run_history, {"--windows", "1", "--json", "--db", db_}), 0) << err_.str();
  const nlohmann::json j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["windows"].size(), static_cast<size_t>(windows));
  EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 1.2);
  EXPECT_FALSE(j["group_drift"].empty());

  // A run without a duration has no windows to print.
  ASSERT_EQ(cli(cli::run_profile, {model, "--ranges", ranges_of("yolo_tiny"), "--bind",
                                   "height=64,width=64", "--runs", "2", "--db", db_}),
            0)
      << err_.str();
  EXPECT_EQ(cli(cli::run_history, {"--windows", "2", "--db", db_}), 1);
  EXPECT_NE(err_.str().find("not a sustained run"), std::string::npos) << err_.str();
}

TEST_F(ProfileTest, CancellingASustainedRunKeepsWhatItMeasured) {
  profiling::ProfileRequest r = yolo_request();
  r.settings.duration_s = 600;
  r.settings.window_s = 0.2;
  std::atomic<bool> cancel{false};
  int windows = 0;
  profiling::ProfileProgress p;
  p.cancel = &cancel;
  p.window = [&](const device::SustainedWindow&) {
    if (++windows == 3) cancel = true;
  };
  auto res = profiling::profile(r, p);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_TRUE(res->report.stopped_early);
  EXPECT_GE(res->report.windows.size(), 3u);
  EXPECT_LT(res->report.windows.back().end_s, 60);
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE status = 'ok' AND stopped_early = 1"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM run_windows"),
            static_cast<int64_t>(res->report.windows.size()));
}

TEST_F(ProfileTest, ASustainedRunSaysWhatItNeeds) {
  const std::string model = kModels + "/yolo_tiny/model.onnx";
  for (const auto& [args, expected] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--duration", "10x"}, "--duration takes a positive time"},
           {{"--duration", "0"}, "--duration takes a positive time"},
           {{"--duration", "25h"}, "at most 86400 s"},
           {{"--duration", "inf"}, "--duration takes a positive time"},
           {{"--window", "5s"}, "--window goes with --duration"},
           {{"--duration", "1m", "--window", "2m"}, "--window takes a positive time"},
           {{"--duration", "1m", "--window", "0.01"}, "--window takes at least 0.1s"},
           {{"--duration", "1m", "--sweep", "height"}, "--duration does not combine with --sweep"},
       }) {
    std::vector<std::string> all = {model, "--db", db_};
    all.insert(all.end(), args.begin(), args.end());
    EXPECT_EQ(cli(cli::run_profile, all), 1) << args[0];
    EXPECT_NE(err_.str().find(expected), std::string::npos) << err_.str();
  }
}

TEST_F(ProfileTest, ASweepSaysWhatItNeeds) {
  profiling::SweepProfileRequest s;
  s.profile = yolo_request();
  s.profile.bind = {};
  s.symbol = "height";
  auto unbound = profiling::profile_sweep(s);
  ASSERT_FALSE(unbound.ok());
  EXPECT_NE(unbound.status().message().find("--bind: width"), std::string::npos)
      << unbound.status().message();
  s.symbol = "depth";
  s.profile.bind = {{"width", 64}};
  auto unknown = profiling::profile_sweep(s);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("height, width"), std::string::npos)
      << unknown.status().message();
  s.symbol = "height";
  s.lo = 16;
  s.hi = 64;
  auto outside = profiling::profile_sweep(s);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("outside its range 32:1024"), std::string::npos)
      << outside.status().message();
  EXPECT_EQ(cli(cli::run_profile, {"m.onnx", "--points", "4"}), 1);
  EXPECT_NE(err_.str().find("--points goes with --sweep"), std::string::npos) << err_.str();
  EXPECT_EQ(cli(cli::run_profile, {"m.onnx", "--sweep", "h=1:x"}), 1);
  EXPECT_NE(err_.str().find("--sweep: hi 'x' is not a whole number"), std::string::npos)
      << err_.str();
}

TEST(LatencyStats, PercentilesAreNearestRankOverTheMeasuredRuns) {
  std::vector<device::RunSample> runs;
  runs.push_back({true, 100.0});  // a warm-up, not counted
  for (double ms : {5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 6.0, 7.0, 8.0, 9.0}) runs.push_back({false, ms});
  const profiling::LatencyStats s = profiling::latency_stats(runs);
  EXPECT_EQ(s.count, 10);
  EXPECT_DOUBLE_EQ(s.p50_ms, 5.0);
  EXPECT_DOUBLE_EQ(s.p90_ms, 9.0);
  EXPECT_DOUBLE_EQ(s.min_ms, 1.0);
}

TEST_F(ProfileTest, DevicesListsThisMachine) {
  ::setenv("SOD2_ADB", (kTests + "/fake_adb.sh").c_str(), 1);
  ::setenv("FAKE_ADB_ROOT", dir_.c_str(), 1);
  std::ofstream(dir_ / "devices") << "SER1 device Pixel_7\nSER2 unauthorized\n";
  ASSERT_EQ(cli(cli::run_devices, {}), 0) << err_.str();
  const std::string o = out_.str();
  EXPECT_NE(o.find("local"), std::string::npos) << o;
  EXPECT_NE(o.find("adb:SER1"), std::string::npos) << o;
  EXPECT_NE(o.find("Pixel 7"), std::string::npos) << o;
  EXPECT_NE(o.find("unauthorized"), std::string::npos) << o;
}

class AdbTest : public ProfileTest {
 protected:
  void SetUp() override {
    ProfileTest::SetUp();
    ::setenv("SOD2_ADB", (kTests + "/fake_adb.sh").c_str(), 1);
    ::setenv("FAKE_ADB_ROOT", dir_.c_str(), 1);
  }
  void devices(const std::string& lines) { std::ofstream(dir_ / "devices") << lines; }
  std::string log() {
    std::ifstream in(dir_ / "log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

TEST_F(AdbTest, ProfilesOnTheOnlyDevicePushingTheAgentOnce) {
  devices("FAKE01 device Fake_Phone\n");
  profiling::ProfileRequest r = yolo_request();
  r.device = "adb";
  auto res = profiling::profile(r);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->device.id, "adb:FAKE01");
  EXPECT_EQ(res->device.model, "Fake Phone");
  EXPECT_EQ(res->stats.count, 3);
  EXPECT_TRUE(fs::exists(dir_ / "FAKE01/data/local/tmp/sod2/sod2-agent"));
  std::string calls = log();
  EXPECT_NE(calls.find("-s FAKE01 push"), std::string::npos) << calls;
  EXPECT_NE(calls.find("-s FAKE01 shell -T /data/local/tmp/sod2/sod2-agent"), std::string::npos)
      << calls;
  // Every call but the listing names the device.
  std::istringstream lines(calls);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("devices", 0) != 0) {
      EXPECT_EQ(line.rfind("-s FAKE01 ", 0), 0u) << line;
    }
  }

  fs::remove(dir_ / "log");
  auto again = profiling::profile(r);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(again->package_cached);
  EXPECT_EQ(log().find(" push "), std::string::npos) << "the agent on the device is current";
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE status = 'ok'"), 2);
  EXPECT_EQ(count("SELECT COUNT(*) FROM devices WHERE device_id = 'adb:FAKE01' AND model = "
                  "'Fake Phone'"),
            1);
}

TEST_F(AdbTest, SeveralDevicesWithoutASerialAskForOne) {
  devices("AAA device Phone_A\nBBB device Phone_B\n");
  profiling::ProfileRequest r = yolo_request();
  r.device = "adb";
  auto res = profiling::profile(r);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("several devices attached (adb:AAA, adb:BBB)"),
            std::string::npos)
      << res.status().message();
  EXPECT_NE(res.status().message().find("--device adb:SERIAL"), std::string::npos);
  r.device = "adb:BBB";
  auto picked = profiling::profile(r);
  ASSERT_TRUE(picked.ok()) << picked.status().message();
  EXPECT_EQ(picked->device.id, "adb:BBB");
}

TEST_F(AdbTest, NoDeviceUnauthorizedAndUnknownSerial) {
  devices("");
  profiling::ProfileRequest r = yolo_request();
  r.device = "adb";
  auto res = profiling::profile(r);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("no Android device attached"), std::string::npos)
      << res.status().message();
  devices("SER9 unauthorized\n");
  r.device = "adb:SER9";
  res = profiling::profile(r);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("accept the USB debugging prompt"), std::string::npos)
      << res.status().message();
  r.device = "adb:NOPE";
  res = profiling::profile(r);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("no device NOPE attached (adb sees SER9)"),
            std::string::npos)
      << res.status().message();
  // Each failure that reached a device transport is recorded with its reason.
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE status = 'failed'"), 3);
}

TEST_F(AdbTest, UnpluggedMidRunIsAClearFailure) {
  devices("FAKE01 device Fake_Phone\n");
  profiling::ProfileRequest r = yolo_request();
  r.device = "adb:FAKE01";
  r.settings.runs = 200;
  bool pulled = false;  // the agent dies under adb, as when the cable is pulled
  auto res = profiling::profile(r, killing_the_agent_mid_run(&pulled));
  ASSERT_TRUE(pulled);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("mid-run"), std::string::npos) << res.status().message();
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE status = 'failed'"), 1);
}

TEST_F(AdbTest, AdbMissingIsNamed) {
  ::setenv("SOD2_ADB", "/nonexistent/adb", 1);
  profiling::ProfileRequest r = yolo_request();
  r.device = "adb";
  auto res = profiling::profile(r);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("SOD2_ADB is /nonexistent/adb"), std::string::npos)
      << res.status().message();
  ::unsetenv("SOD2_ADB");
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path ? old_path : "";
  ::setenv("PATH", dir_.c_str(), 1);
  res = profiling::profile(r);
  ::setenv("PATH", saved.c_str(), 1);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("adb is not installed"), std::string::npos)
      << res.status().message();
}

// Debian's real adb with no phone attached: our "no device" message, not adb's.
TEST_F(ProfileTest, RealAdbWithNoDeviceSaysSo) {
  if (device::find_executable("adb").empty()) GTEST_SKIP() << "adb is not installed";
  auto t = device::load_transport("adb");
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto list = (*t)->list();
  ASSERT_TRUE(list.ok()) << list.status().message();
  for (const auto& d : *list)
    if (d.usable()) GTEST_SKIP() << "a real device is attached: " << d.id;
  profiling::ProfileRequest r = yolo_request();
  r.device = "adb";
  auto res = profiling::profile(r);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("no Android device attached"), std::string::npos)
      << res.status().message();
}

}  // namespace
}  // namespace sod2
