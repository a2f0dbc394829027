// The breakdown of a profile's control-flow groups (#23 item 2): body nodes under their If/Loop
// node depth first with per-run times, calls and shares of the node holding them; the device's
// times laid onto the package with every index checked; the table and trace that show them.
#include "app/profiling/body_profile.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "app/profiling/profile_report.h"
#include "app/profiling/sweep_report.h"

namespace sod2::profiling {
namespace {

rt::NodeDesc node(const std::string& name, const std::string& op, std::vector<int32_t> subgraphs) {
  rt::NodeDesc n;
  n.info.name = name;
  n.info.op_type = op;
  n.subgraphs = std::move(subgraphs);
  return n;
}

// main: conv, loop(body: matmul, if(then: relu, add; else: identity, never)).
rt::ProgramDesc nested_program() {
  rt::ProgramDesc p;
  p.graphs.resize(4);
  p.graphs[0].nodes = {node("conv", "Conv", {}), node("loop", "Loop", {1})};
  p.graphs[1].nodes = {node("matmul", "MatMul", {}), node("if", "If", {2, 3})};
  p.graphs[2].nodes = {node("relu", "Relu", {}), node("add", "Add", {})};
  p.graphs[3].nodes = {node("identity", "Identity", {}), node("never", "Neg", {})};
  p.graphs[3].nodes[1].fused_op_types = {"Neg", "Abs"};
  return p;
}

// Over two runs: the loop iterates 3 times a run, the If takes its then branch twice of three.
BodyTimes nested_times() {
  BodyTimes t;
  t.total_ms = {{}, {6.0, 8.0}, {3.0, 1.0}, {0.5, 0.0}};
  t.calls = {{}, {6, 6}, {4, 4}, {2, 0}};
  return t;
}

TEST(BodyProfile, NodesFollowTheirParentDepthFirstWithShareAndCallsPerRun) {
  const std::vector<double> group_ms = {1.0, 10.0};
  const auto rows = body_profiles(nested_program(), nested_times(), 2, group_ms);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].empty());   // not control flow
  ASSERT_EQ(rows[1].size(), 5u);  // the node that never ran is left out
  struct Want {
    int depth;
    const char* body;
    const char* name;
    double ms, calls, percent;
  };
  const Want want[] = {{1, "body", "matmul", 3.0, 3, 30.0},
                       {1, "body", "if", 4.0, 3, 40.0},
                       {2, "then_branch", "relu", 1.5, 2, 37.5},
                       {2, "then_branch", "add", 0.5, 2, 12.5},
                       {2, "else_branch", "identity", 0.25, 1, 6.25}};
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(want[i].name);
    const BodyNodeProfile& b = rows[1][i];
    EXPECT_EQ(b.depth, want[i].depth);
    EXPECT_EQ(b.body, want[i].body);
    EXPECT_EQ(b.name, want[i].name);
    EXPECT_DOUBLE_EQ(b.avg_ms, want[i].ms);
    EXPECT_DOUBLE_EQ(b.calls_per_run, want[i].calls);
    EXPECT_DOUBLE_EQ(b.percent_of_parent, want[i].percent);
  }
  EXPECT_EQ(rows[1][2].graph, 2);
  EXPECT_EQ(rows[1][2].node, 0);
  EXPECT_EQ(rows[1][1].op_label(), "If");
}

TEST(BodyProfile, NoRunsOrNoTimesGiveNoRows) {
  const std::vector<double> group_ms = {1.0, 10.0};
  for (const auto& rows : {body_profiles(nested_program(), nested_times(), 0, group_ms),
                           body_profiles(nested_program(), BodyTimes{}, 2, group_ms)}) {
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_TRUE(rows[1].empty());
  }
}

TEST(BodyProfile, TheDevicesTimesLandOnTheirNodesAndBadOnesAreNamed) {
  const rt::ProgramDesc p = nested_program();
  const std::vector<device::BodyNodeTime> good = {{1, 1, "if", "If", 8.0, 6},
                                                  {3, 0, "identity", "Identity", 0.5, 2}};
  auto t = body_times_of(p, good);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_DOUBLE_EQ(t->total_ms[1][1], 8.0);
  EXPECT_EQ(t->calls[3][0], 2);
  EXPECT_EQ(t->calls[2][0], 0);

  const std::vector<device::BodyNodeTime> past_graph = {{3, 2, "x", "Neg", 1, 1}};
  auto bad = body_times_of(p, past_graph);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node 2 of graph 3, which the package does not have"),
            std::string::npos)
      << bad.status().message();
  const std::vector<device::BodyNodeTime> main_graph = {{0, 0, "conv", "Conv", 1, 1}};
  EXPECT_FALSE(body_times_of(p, main_graph).ok());
  const std::vector<device::BodyNodeTime> negative = {{2, 1, "add", "Add", -1, 1}};
  bad = body_times_of(p, negative);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("negative or non-finite time for body node 'add'"),
            std::string::npos)
      << bad.status().message();
}

ProfileResult nested_result() {
  ProfileResult r;
  const rt::ProgramDesc p = nested_program();
  const std::vector<double> group_ms = {1.0, 10.0};
  auto rows = body_profiles(p, nested_times(), 2, group_ms);
  for (int i = 0; i < 2; ++i) {
    GroupProfile g;
    g.index = i;
    g.name = p.graphs[0].nodes[static_cast<size_t>(i)].info.name;
    g.nodes = {g.name};
    g.op_types = {p.graphs[0].nodes[static_cast<size_t>(i)].info.op_type};
    g.avg_ms = group_ms[static_cast<size_t>(i)];
    g.body = rows[static_cast<size_t>(i)];
    r.groups.push_back(g);
  }
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(BodyProfile, TheGroupTableIndentsBodyRowsUnderTheirGroup) {
  std::ostringstream out;
  print_profile_table(nested_result(), out, 10);
  const std::vector<std::string> lines = lines_of(out.str());
  size_t loop = 0;
  while (loop < lines.size() && lines[loop].find(" Loop ") == std::string::npos) ++loop;
  ASSERT_LT(loop + 5, lines.size()) << out.str();
  const size_t op_column = lines[loop].find("Loop");
  const char* labels[] = {"body: MatMul", "body: If", "then_branch: Relu", "then_branch: Add",
                          "else_branch: Identity"};
  const int depth[] = {1, 1, 2, 2, 2};
  const char* shares[] = {" 30.00", " 40.00", " 37.50", " 12.50", " 6.25"};
  const char* calls[] = {" x3 ", " x3 ", " x2 ", " x2 ", " x1 "};
  for (int i = 0; i < 5; ++i) {
    const std::string& row = lines[loop + 1 + static_cast<size_t>(i)];
    SCOPED_TRACE(row);
    EXPECT_EQ(row.find(labels[i]), op_column + 2 * static_cast<size_t>(depth[i]));
    EXPECT_NE(row.find(shares[i]), std::string::npos);
    EXPECT_NE(row.find(calls[i]), std::string::npos);
  }
  // The group after the loop's rows is the next group, not a body row.
  EXPECT_EQ(lines[loop + 6].find("then_branch"), std::string::npos);
  EXPECT_NE(out.str().find("Bodies: 5 nodes ran inside 1 control-flow groups"), std::string::npos)
      << out.str();
  // The top and op-type tables count groups only: the body rows are inside the loop's time.
  EXPECT_NE(out.str().find("Groups: 2, sum of group averages 11.000 ms"), std::string::npos)
      << out.str();
}

TEST(BodyProfile, TheTraceListsBodyNodesPerGroup) {
  const nlohmann::json doc = nlohmann::json::parse(trace_json(nested_result()));
  const nlohmann::json& bodies = doc["otherData"]["bodies"];
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0]["group"], 1);
  EXPECT_EQ(bodies[0]["name"], "loop");
  ASSERT_EQ(bodies[0]["nodes"].size(), 5u);
  EXPECT_EQ(bodies[0]["nodes"][2]["body"], "then_branch");
  EXPECT_EQ(bodies[0]["nodes"][2]["depth"], 2);
  EXPECT_DOUBLE_EQ(bodies[0]["nodes"][2]["percent_of_parent"].get<double>(), 37.5);
}

// A node name is whatever bytes the model holds: quotes, backslashes and control characters are
// escaped, a byte that is not UTF-8 becomes U+FFFD, and the document stays JSON.
const std::string kHostile = std::string("a\"b\\c\n\td\x01") + "\xff" + "e";
const std::string kHostileRead = std::string("a\"b\\c\n\td\x01") + "\xef\xbf\xbd" + "e";

TEST(BodyProfile, TheTraceStaysJsonWithHostileNodeNames) {
  ProfileResult r = nested_result();
  r.groups[1].body[2].name = kHostile;
  r.groups[1].name = kHostile;
  const nlohmann::json doc = nlohmann::json::parse(trace_json(r));
  EXPECT_EQ(doc["otherData"]["bodies"][0]["name"], kHostileRead);
  EXPECT_EQ(doc["otherData"]["bodies"][0]["nodes"][2]["name"], kHostileRead);
}

// `sod2 profile --sweep --json` and `sod2 history --sweep ID --json`: every group object has a
// "body" array, its control-flow group's body nodes as the trace lists them (#23 item 2).
TEST(BodyProfile, TheSweepJsonGivesEachGroupItsBodyNodes) {
  ProfileSweep s;
  s.symbol = "n";
  MeasuredPoint p;
  p.value = 4;
  p.result = nested_result();
  p.result->groups[1].body[2].name = kHostile;
  s.points.push_back(std::move(p));
  const nlohmann::json j = nlohmann::json::parse(json_text(sweep_json(s), 2));
  const nlohmann::json& groups = j["points"][0]["groups"];
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_TRUE(groups[0]["body"].is_array());
  EXPECT_TRUE(groups[0]["body"].empty());  // the Conv: no bodies
  const nlohmann::json& body = groups[1]["body"];
  ASSERT_EQ(body.size(), 5u);
  const BodyNodeProfile want = nested_result().groups[1].body[2];
  EXPECT_EQ(body[2]["depth"], want.depth);
  EXPECT_EQ(body[2]["body"], want.body);
  EXPECT_EQ(body[2]["graph"], want.graph);
  EXPECT_EQ(body[2]["node"], want.node);
  EXPECT_EQ(body[2]["name"], kHostileRead);
  EXPECT_EQ(body[2]["op_types"], nlohmann::json(want.op_types));
  EXPECT_DOUBLE_EQ(body[2]["avg_ms"].get<double>(), want.avg_ms);
  EXPECT_DOUBLE_EQ(body[2]["calls_per_run"].get<double>(), want.calls_per_run);
  EXPECT_DOUBLE_EQ(body[2]["percent_of_parent"].get<double>(), want.percent_of_parent);
  EXPECT_EQ(body[0], body_node_json(nested_result().groups[1].body[0]));
}

}  // namespace
}  // namespace sod2::profiling
