// Profiles of If and Loop models through the real agent: their groups broken down into the body
// nodes that ran, printed, recorded and printed again by `sod2 history --run` (#23 item 2).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "app/cli/device_commands.h"
#include "app/profiling/profile_job.h"
#include "app/profiling/profile_report.h"
#include "core/store/profile_store.h"
#include "tests/device/profile_test_fixture.h"

namespace sod2 {
namespace {

using namespace profile_testing;

// The agent times every node inside If and Loop bodies over the measured runs; the host hangs
// them under their group with the names of its own program (#23 item 2).
TEST_F(ProfileTest, ControlFlowGroupsAreBrokenDownIntoTheirBodies) {
  const std::vector<std::pair<std::string, std::map<std::string, int64_t>>> models = {
      {"skipnet", {{"height", 64}, {"width", 64}}}, {"lstm_greedy", {{"src_len", 12}}}};
  for (const auto& [model, bind] : models) {
    SCOPED_TRACE(model);
    profiling::ProfileRequest r;
    r.model_path = kModels + "/" + model + "/model.onnx";
    r.bind = bind;
    r.rdp = cli::rdp_options_from(ranges_of(model), std::nullopt);
    r.settings = {3, 2, 1};
    r.db_path = "";
    auto res = profiling::profile(r);
    ASSERT_TRUE(res.ok()) << res.status().message();
    const std::string parent = model == "skipnet" ? "If" : "Loop";
    size_t broken_down = 0;
    for (const profiling::GroupProfile& g : res->groups) {
      if (g.op_label() != parent) {
        EXPECT_TRUE(g.body.empty()) << g.name;
        continue;
      }
      ASSERT_FALSE(g.body.empty()) << g.name;  // every branch and body holds a node
      ++broken_down;
      // An If counts its larger branch; lstm_greedy's Loop ends at EOS, before its trip count:
      // both counts are bounds, never a GOP/s.
      EXPECT_TRUE(g.ops_bound) << g.name;
      EXPECT_LT(g.gops_per_s(), 0) << g.name;
      double direct_ms = 0;
      for (const profiling::BodyNodeProfile& b : g.body) {
        SCOPED_TRACE(b.name);
        EXPECT_GE(b.avg_ms, 0);
        EXPECT_LE(b.avg_ms, g.avg_ms);
        if (b.depth != 1) continue;
        direct_ms += b.avg_ms;
        if (parent == "If") {
          EXPECT_TRUE(b.body == "then_branch" || b.body == "else_branch") << b.body;
          // Once per measured run: the warm-up runs are not counted.
          EXPECT_DOUBLE_EQ(b.calls_per_run, 1.0);
        } else {
          EXPECT_EQ(b.body, "body");
          // Every node of the loop's body runs once per iteration.
          EXPECT_DOUBLE_EQ(b.calls_per_run, g.body[0].calls_per_run);
          EXPECT_GE(b.calls_per_run, 1.0);
        }
        // The host names the node from its program as the device did from the package.
        const auto sent = std::find_if(res->report.body_nodes.begin(), res->report.body_nodes.end(),
                                       [&](const auto& d) {
                                         return d.graph == static_cast<uint32_t>(b.graph) &&
                                                d.node == static_cast<uint32_t>(b.node);
                                       });
        ASSERT_NE(sent, res->report.body_nodes.end());
        EXPECT_EQ(sent->name, b.name);
        EXPECT_EQ(sent->op_type, b.op_types[0]);
      }
      // The group's time includes its bodies'.
      EXPECT_LE(direct_ms, g.avg_ms * (1 + 1e-9)) << g.name;
    }
    EXPECT_GT(broken_down, 0u);
    if (parent == "Loop") {  // lstm_greedy's loop body holds Ifs: their branches one level down
      const auto& body = std::find_if(res->groups.begin(), res->groups.end(), [](const auto& g) {
                           return g.op_label() == "Loop";
                         })->body;
      EXPECT_TRUE(std::any_of(body.begin(), body.end(), [](const auto& b) {
        return b.depth == 2 && (b.body == "then_branch" || b.body == "else_branch");
      }));
    }
    std::ostringstream table;
    profiling::print_profile_table(*res, table);
    EXPECT_NE(table.str().find(parent == "If" ? "_branch: " : "  body: "), std::string::npos)
        << table.str();
  }
}

// skipnet profiled and recorded, read back by `sod2 history --run`: the same group tables the
// profile printed, each If's branch nodes indented under it (#23 item 2), from the store's rows.
TEST_F(ProfileTest, HistoryShowsARecordedRunsBodyNodesAsTheProfileDid) {
  profiling::ProfileRequest r;
  r.model_path = kModels + "/skipnet/model.onnx";
  r.bind = {{"height", 64}, {"width", 64}};
  r.rdp = cli::rdp_options_from(ranges_of("skipnet"), std::nullopt);
  r.settings = {3, 2, 1};
  r.db_path = db_;
  auto res = profiling::profile(r);
  ASSERT_TRUE(res.ok()) << res.status().message();
  ASSERT_GT(res->run_id, 0);
  size_t body_nodes = 0;
  for (const profiling::GroupProfile& g : res->groups) body_nodes += g.body.size();
  ASSERT_GT(body_nodes, 0u);
  {
    auto db = store::ProfileStore::open(db_);
    ASSERT_TRUE(db.ok());
    auto run = (*db)->run(res->run_id);
    ASSERT_TRUE(run.ok()) << run.status().message();
    ASSERT_EQ(run->groups.size(), res->groups.size());
    for (size_t i = 0; i < run->groups.size(); ++i) {
      const auto& kept = run->groups[i].body;
      const auto& ran = res->groups[i].body;
      ASSERT_EQ(kept.size(), ran.size()) << res->groups[i].name;
      for (size_t b = 0; b < kept.size(); ++b) {
        EXPECT_EQ(kept[b].name, ran[b].name);
        EXPECT_EQ(kept[b].body, ran[b].body);
        EXPECT_EQ(kept[b].depth, ran[b].depth);
        EXPECT_DOUBLE_EQ(kept[b].avg_ms, ran[b].avg_ms);
        EXPECT_DOUBLE_EQ(kept[b].calls_per_run, ran[b].calls_per_run);
      }
    }
  }
  std::ostringstream fresh;
  profiling::print_group_tables(*res, fresh);
  std::ostringstream out, err;
  ASSERT_EQ(cli::run_history({"--db", db_, "--run", std::to_string(res->run_id)}, out, err), 0)
      << err.str();
  EXPECT_NE(out.str().find(fresh.str()), std::string::npos) << out.str() << "\n" << fresh.str();
  EXPECT_NE(out.str().find("_branch: "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("Bodies: " + std::to_string(body_nodes) + " nodes ran inside"),
            std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace sod2
