// What the CLI prints for a person (issue #23 item 8): tables whose columns never run together,
// long names that keep their ends, long constants elided with their count, `plan` short by
// default, `history --model` by the names people use, `--compare` across models refused, and a
// Top N table with columns of its own.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../onnx/proto_builder.h"
#include "app/cli/device_commands.h"
#include "app/cli/inspect_command.h"
#include "app/cli/plan_command.h"
#include "app/profiling/profile_report.h"
#include "app/profiling/recorded_run.h"
#include "core/store/profile_store.h"
#include "core/text/text_table.h"

namespace sod2::cli {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code;
  std::string out, err;
};

using Command = int (*)(const std::vector<std::string>&, std::ostream&, std::ostream&);

CliRun cli(Command command, const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = command(args, out, err);
  return {code, out.str(), err.str()};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The display column where `part` first (or last) starts in `line`, npos when absent.
size_t column_of(const std::string& line, const std::string& part, bool last = false) {
  const size_t at = last ? line.rfind(part) : line.find(part);
  return at == std::string::npos ? at : text::display_width(line.substr(0, at));
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sod2_cli_report_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

using InspectText = TempDir;

TEST_F(InspectText, ALongNodeNameKeepsTheColumnsAlignedAndItsEndVisible) {
  // y = x + c, c a Constant of 64 int64 zeros made by a node with a 60-character name.
  const std::string long_name = "/encoder/layers.0/attention/output/dense/xyz/the_Constant_11";
  ASSERT_EQ(long_name.size(), 60u);
  auto m = sod2::testing::make_model();
  auto* g = m.mutable_graph();
  sod2::testing::add_input(g, "x", {int64_t{64}}, onnx::TensorProto::INT64);
  auto* c = sod2::testing::add_node(g, "Constant", {}, {"c"});
  c->set_name(long_name);
  auto* value = c->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(64);
  for (int i = 0; i < 64; ++i) value->mutable_t()->add_int64_data(0);
  sod2::testing::add_node(g, "Add", {"x", "c"}, {"y"})->set_name("add");
  sod2::testing::add_output(g, "y", {int64_t{64}}, onnx::TensorProto::INT64);
  const std::string path = (dir_ / "long.onnx").string();
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();

  const CliRun r = cli(run_inspect, {path});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  std::string header, constant_row, add_row;
  for (const std::string& line : lines) {
    if (line.rfind("node ", 0) == 0) header = line;
    if (line.find("Constant_11") != std::string::npos) constant_row = line;
    if (line.rfind("add ", 0) == 0) add_row = line;
  }
  ASSERT_FALSE(header.empty()) << r.out;
  ASSERT_FALSE(constant_row.empty()) << "the end of the long name is shown\n" << r.out;
  ASSERT_FALSE(add_row.empty()) << r.out;
  // The op and class columns start at the same column on every row, after the name.
  const size_t op_column = column_of(header, "op ");
  EXPECT_EQ(column_of(constant_row, "Constant "), op_column) << r.out;
  EXPECT_EQ(column_of(add_row, "Add "), op_column) << r.out;
  EXPECT_EQ(column_of(constant_row, "ISDO"), column_of(header, "class")) << r.out;
  EXPECT_LT(column_of(constant_row, "Constant_11") + 11, op_column) << "two spaces at least";
  // The 64 zeros are four and a count.
  EXPECT_NE(constant_row.find("[64] = (0, 0, 0, 0, … 64 values)"), std::string::npos)
      << constant_row;
  for (const std::string& line : lines) EXPECT_LT(text::display_width(line), 160u) << line;
}

// Node and value names are any bytes. Each hostile one is shown escaped, on its own row, and no
// line of the report holds a control byte, a terminal escape or a byte that is not UTF-8.
const std::vector<std::string>& hostile_names() {
  static const std::vector<std::string> names = {"evil\nname",
                                                 "\x1b[2J\x1b[31mred\x1b]0;title\x07",
                                                 "tab\there\r",
                                                 "del\x7f",
                                                 "csi\xc2\x9b"
                                                 "31m",
                                                 "bidi\xe2\x80\xae"
                                                 "txt",
                                                 "bad\xff\xfe\xc3",
                                                 std::string("nul\0byte", 8),
                                                 "comma,plus+back\\slash"};
  return names;
}

// Every line already its own visible() form: nothing a terminal would act on.
void expect_every_line_visible(const std::string& text) {
  for (const std::string& line : lines_of(text)) EXPECT_EQ(line, text::visible(line));
}

TEST_F(InspectText, HostileNodeNamesStayOnTheirRowsInInspectAndPlan) {
  auto m = sod2::testing::make_model();
  auto* g = m.mutable_graph();
  sod2::testing::add_input(g, "x", {std::string("n")});
  const char* ops[] = {"Relu", "Sigmoid", "Neg", "Abs", "Exp", "Tanh", "Sqrt", "Floor", "Ceil"};
  const std::vector<std::string>& names = hostile_names();
  std::string in = "x";
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string out = i + 1 == names.size() ? "y" : "v" + std::to_string(i) + names[i];
    sod2::testing::add_node(g, ops[i], {in}, {out}, names[i]);
    in = out;
  }
  sod2::testing::add_output(g, "y", {std::string("n")});
  const std::string path = (dir_ / "hostile.onnx").string();
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();

  const CliRun inspected = cli(run_inspect, {path});
  ASSERT_EQ(inspected.code, 0) << inspected.err;
  expect_every_line_visible(inspected.out);
  const CliRun planned = cli(run_plan, {path, "--range", "n=1:64", "--verbose"});
  ASSERT_EQ(planned.code, 0) << planned.err;
  expect_every_line_visible(planned.out);
  const std::vector<std::string> inspect_lines = lines_of(inspected.out);
  for (size_t i = 0; i < names.size(); ++i) {
    // Inspect: the node's escaped name and its op on one row. Plan: the one fused group's row
    // lists every escaped name.
    const std::string shown = text::visible(names[i]);
    EXPECT_TRUE(std::any_of(inspect_lines.begin(), inspect_lines.end(),
                            [&](const std::string& l) {
                              return l.find(shown) != std::string::npos &&
                                     l.find(ops[i]) != std::string::npos;
                            }))
        << shown << "\n"
        << inspected.out;
    EXPECT_NE(planned.out.find(shown), std::string::npos) << shown << "\n" << planned.out;
  }
  // In the inspect node table, each op's column starts at the same place on every row.
  const std::vector<std::string> lines = lines_of(inspected.out);
  const auto header = std::find_if(lines.begin(), lines.end(),
                                   [](const std::string& l) { return l.rfind("node ", 0) == 0; });
  ASSERT_NE(header, lines.end()) << inspected.out;
  ASSERT_GE(lines.end() - header, static_cast<std::ptrdiff_t>(names.size()) + 1);
  for (size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(column_of(header[static_cast<std::ptrdiff_t>(i) + 1], std::string(ops[i]) + " "),
              column_of(*header, "op "))
        << header[static_cast<std::ptrdiff_t>(i) + 1];
}

const std::string kYolo = std::string(SOD2_SHARED_DIR) + "/models/yolo_tiny/model.onnx";

TEST(PlanText, ShortByDefaultEverythingWithVerbose) {
  const std::vector<std::string> args{kYolo, "--range", "height=32:640:32,width=32:640:32"};
  const CliRun brief = cli(run_plan, args);
  ASSERT_EQ(brief.code, 0) << brief.err;
  std::vector<std::string> verbose_args = args;
  verbose_args.push_back("--verbose");
  const CliRun full = cli(run_plan, verbose_args);
  ASSERT_EQ(full.code, 0) << full.err;
  const size_t brief_lines = lines_of(brief.out).size();
  EXPECT_LE(brief_lines, 30u) << brief.out;
  EXPECT_GT(lines_of(full.out).size(), 1000u);
  // The default keeps the yardsticks, the execution symbols and the largest tensors.
  for (const char* part :
       {"groups   ", "order    ", "arena    ", "lower bound", "execution symbol NonZero.out0.d1",
        "largest  5 of ", "summary  arena", "--verbose"})
    EXPECT_NE(brief.out.find(part), std::string::npos) << part << "\n" << brief.out;
  // --verbose has every step, every group and the symbolic tensor table.
  for (const char* part : {"  step  node", "  tensor  ", "segment  size", "/Gather_20",
                           "contraction: /stem/stem.0/Conv"})
    EXPECT_NE(full.out.find(part), std::string::npos) << part;
  EXPECT_EQ(brief.out.find("  step  node"), std::string::npos);
  const CliRun help = cli(run_plan, {"--help"});
  EXPECT_NE(help.out.find("--verbose"), std::string::npos);
}

class HistoryText : public TempDir {
 protected:
  void SetUp() override {
    TempDir::SetUp();
    db_ = (dir_ / "profiles.db").string();
    auto db = store::ProfileStore::open(db_);
    ASSERT_TRUE(db.ok()) << db.status().message();
    vit_ = record(**db, "vit_tiny/model.onnx", "/work/shared/models/vit_tiny/model.onnx", "aa11");
    vit_again_ =
        record(**db, "vit_tiny/model.onnx", "/work/shared/models/vit_tiny/model.onnx", "aa11");
    yolo_ = record(**db, "yolo_small.onnx", "/data/yolo_small.onnx", "bb22");
  }

  static int64_t record(store::ProfileStore& db, const std::string& name, const std::string& path,
                        const std::string& sha) {
    store::RunRecord r;
    r.device.device_id = "local";
    r.device.transport = "local";
    r.model_sha256 = sha;
    r.model_name = name;
    r.model_path = path;
    r.package_sha256 = "ff";
    r.bindings = "batch=1";
    r.threads = 1;
    r.runs = 1;
    r.ok = true;
    r.avg_ms = 2;
    r.groups = {{0, "/MatMul", "MatMul+Add", "/MatMul,/Add", "[1,16]", 1.5, 64},
                {1, "/Softmax", "Softmax", "/Softmax", "[1,16]", 0.5, 64}};
    auto id = db.record_run(r);
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? *id : -1;
  }

  std::string db_;
  int64_t vit_ = 0, vit_again_ = 0, yolo_ = 0;
};

TEST_F(HistoryText, ModelMatchesByFolderStemFileNameNameAndPath) {
  for (const char* name : {"vit_tiny", "vit_tiny/model.onnx", "vit_tiny/model",
                           "/work/shared/models/vit_tiny/model.onnx", "aa1"}) {
    const CliRun r = cli(run_history, {"--db", db_, "--model", name});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("vit_tiny/model.onnx"), std::string::npos) << name << "\n" << r.out;
    EXPECT_EQ(r.out.find("yolo_small"), std::string::npos) << name << "\n" << r.out;
  }
  for (const char* name : {"yolo_small", "yolo_small.onnx", "/data/yolo_small.onnx"}) {
    const CliRun r = cli(run_history, {"--db", db_, "--model", name});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("yolo_small.onnx"), std::string::npos) << name << "\n" << r.out;
    EXPECT_EQ(r.out.find("vit_tiny"), std::string::npos) << name << "\n" << r.out;
  }
  const CliRun none = cli(run_history, {"--db", db_, "--model", "vit"});
  EXPECT_EQ(none.code, 0);
  EXPECT_NE(none.out.find("no runs of a model called vit"), std::string::npos) << none.out;
  // --limit counts the matching runs, not the runs the store returned.
  const CliRun one = cli(run_history, {"--db", db_, "--model", "vit_tiny", "--limit", "1"});
  EXPECT_EQ(lines_of(one.out).size(), 2u) << one.out;
}

TEST_F(HistoryText, CompareRefusesTwoModelsUnlessForced) {
  const CliRun refused =
      cli(run_history, {"--db", db_, "--compare", std::to_string(vit_), std::to_string(yolo_)});
  EXPECT_EQ(refused.code, 1);
  EXPECT_TRUE(refused.out.empty()) << refused.out;
  for (const char* part : {"vit_tiny/model.onnx", "yolo_small.onnx", "--force"})
    EXPECT_NE(refused.err.find(part), std::string::npos) << part << "\n" << refused.err;

  const CliRun forced = cli(run_history, {"--db", db_, "--compare", std::to_string(vit_),
                                          std::to_string(yolo_), "--force"});
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_EQ(forced.out.rfind("warning: different models", 0), 0u) << forced.out;

  const CliRun same = cli(
      run_history, {"--db", db_, "--compare", std::to_string(vit_), std::to_string(vit_again_)});
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_EQ(same.out.find("warning"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("MatMul+Add"), std::string::npos) << same.out;
  EXPECT_NE(cli(run_history, {"--help"}).out.find("--force"), std::string::npos);
}

// A recorded run of skipnet whose If group broke down into `body` (the first taking conv_ms).
store::RunRecord gated_run(double conv_ms, std::vector<store::BodyRecord> body) {
  store::RunRecord r;
  r.device.device_id = "local";
  r.device.transport = "local";
  r.model_sha256 = "dd44";
  r.model_name = "skipnet/model.onnx";
  r.bindings = "height=64,width=64";
  r.ok = true;
  r.avg_ms = 4;
  r.latencies = {{false, 4.0, 1024, 2048}};
  r.groups = {{0, "/stem/Conv", "Conv+Relu", "/stem/Conv,/stem/Relu", "[1,16,32,32]", 1.0, 64},
              {1, "/gated/If", "If", "/gated/If", "[1,16,32,32]", 3.0, 64}};
  r.groups[1].body = std::move(body);
  r.groups[1].body.front().avg_ms = conv_ms;
  return r;
}

// Issue 23 item 2: `history --run` prints a recorded run's groups as `sod2 profile` did, an If's
// body nodes indented under it by depth (ms per run, % of the node holding them, x calls).
TEST_F(HistoryText, RunShowsBodyNodesIndentedUnderTheirGroup) {
  auto db = store::ProfileStore::open(db_);
  ASSERT_TRUE(db.ok());
  store::RunRecord r =
      gated_run(1.5, {{1, "then_branch", 1, 0, "/gated/then/Conv", "Conv+Relu", 1.5, 0.5, 50.0},
                      {1, "then_branch", 1, 1, "/gated/then/If", "If", 0.75, 0.5, 25.0},
                      {2, "else_branch", 3, 0, "/gated/inner/Add", "Add", 0.25, 0.25, 33.33}});
  r.model_sha256 = "cc33";
  auto id = (*db)->record_run(r);
  ASSERT_TRUE(id.ok()) << id.status().message();
  const CliRun shown = cli(run_history, {"--db", db_, "--run", std::to_string(*id)});
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_EQ(shown.out.rfind("run " + std::to_string(*id) +
                                "  skipnet/model.onnx  local  "
                                "height=64,width=64",
                            0),
            0u)
      << shown.out;
  const std::vector<std::string> lines = lines_of(shown.out);
  const auto group = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("/gated/If") != std::string::npos;
  });
  ASSERT_NE(group, lines.end()) << shown.out;
  ASSERT_GE(lines.end() - group, 4) << shown.out;
  // The If's row (75% of the groups' time), then its body nodes depth first.
  EXPECT_NE(group->find("75.00"), std::string::npos) << *group;
  // Indented by depth from where the op types column starts, as the fresh profile's table.
  const auto header = std::find_if(lines.begin(), group, [](const std::string& l) {
    return l.find("op types") != std::string::npos;
  });
  ASSERT_NE(header, group) << shown.out;
  const size_t op_column = column_of(*header, "op types");
  const struct {
    size_t depth;
    std::string label, calls, ms, percent, name;
  } expected[] = {{1, "then_branch: Conv+Relu", "x0.50", "1.500", "50.00", "/gated/then/Conv"},
                  {1, "then_branch: If", "x0.50", "0.750", "25.00", "/gated/then/If"},
                  {2, "else_branch: Add", "x0.25", "0.250", "33.33", "/gated/inner/Add"}};
  for (size_t i = 0; i < std::size(expected); ++i) {
    const std::string& line = group[static_cast<std::ptrdiff_t>(i) + 1];
    EXPECT_EQ(column_of(line, expected[i].label), op_column + 2 * expected[i].depth) << line;
    EXPECT_EQ(line.find_first_not_of(' '), line.find(expected[i].label)) << line;
    for (const std::string& part :
         {expected[i].calls, expected[i].ms, expected[i].percent, expected[i].name})
      EXPECT_NE(line.find(" " + part), std::string::npos) << part << " in " << line;
    EXPECT_EQ(line.substr(line.size() - expected[i].name.size()), expected[i].name) << line;
  }
  EXPECT_NE(shown.out.find("Bodies: 3 nodes ran inside 1 control-flow groups"), std::string::npos)
      << shown.out;
  // The same tables `sod2 profile` printed: one printer for both.
  profiling::ProfileResult fresh;
  auto group_of = [](int index, const std::string& name, std::vector<std::string> nodes,
                     std::vector<std::string> ops, double ms, double percent, double cum) {
    profiling::GroupProfile g;
    g.index = index;
    g.name = name;
    g.nodes = std::move(nodes);
    g.op_types = std::move(ops);
    g.shape = "[1,16,32,32]";
    g.avg_ms = ms;
    g.percent = percent;
    g.cumulative_percent = cum;
    g.output_bytes = 64;
    return g;
  };
  fresh.groups = {
      group_of(0, "/stem/Conv", {"/stem/Conv", "/stem/Relu"}, {"Conv", "Relu"}, 1.0, 25, 25),
      group_of(1, "/gated/If", {"/gated/If"}, {"If"}, 3.0, 75, 100)};
  fresh.groups[1].body = {
      {1, "then_branch", 1, 0, "/gated/then/Conv", {"Conv", "Relu"}, 1.5, 0.5, 50.0},
      {1, "then_branch", 1, 1, "/gated/then/If", {"If"}, 0.75, 0.5, 25.0},
      {2, "else_branch", 3, 0, "/gated/inner/Add", {"Add"}, 0.25, 0.25, 33.33}};
  fresh.stats.avg_ms = 4;
  std::ostringstream tables;
  profiling::print_group_tables(fresh, tables);
  EXPECT_NE(shown.out.find(tables.str()), std::string::npos) << shown.out << "\n" << tables.str();

  const CliRun missing = cli(run_history, {"--db", db_, "--run", "99"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("no run 99"), std::string::npos) << missing.err;
  EXPECT_EQ(cli(run_history, {"--db", db_, "--run", "x"}).code, 1);
  store::RunRecord failed = r;
  failed.ok = false;
  failed.failure = "the agent ended";
  auto failed_id = (*db)->record_run(failed);
  ASSERT_TRUE(failed_id.ok());
  const CliRun failure = cli(run_history, {"--db", db_, "--run", std::to_string(*failed_id)});
  EXPECT_EQ(failure.code, 0) << failure.err;
  EXPECT_NE(failure.out.find("Failed: the agent ended"), std::string::npos) << failure.out;
  EXPECT_EQ(failure.out.find("Per group"), std::string::npos) << failure.out;
}

// Issue 23 item 2: `history --compare` puts an If's body nodes under it, paired by their place,
// each with both times, the change, and its calls per run; a node in one run only shows "-" on
// the other side. The columns stay aligned, and a long label keeps its end.
TEST_F(HistoryText, CompareShowsBodyNodesUnderTheirGroupAligned) {
  auto db = store::ProfileStore::open(db_);
  ASSERT_TRUE(db.ok());
  const std::string long_op = "Conv+Relu+Add+Mul+Sigmoid+Mul+Conv+Relu+Softmax";
  const std::string long_name = "/gated/then/deep/block.11/attention/output/the_last_conv";
  auto a = (*db)->record_run(
      gated_run(1.5, {{1, "then_branch", 1, 0, long_name, long_op, 0, 0.5, 50.0},
                      {1, "then_branch", 1, 1, "/gated/then/If", "If", 0.75, 0.5, 25.0},
                      {2, "else_branch", 3, 0, "/gated/inner/Add", "Add", 0.25, 0.25, 33.33}}));
  auto b = (*db)->record_run(
      gated_run(3.0, {{1, "then_branch", 1, 0, long_name, long_op, 0, 1, 60.0},
                      {1, "then_branch", 1, 1, "/gated/then/If", "If", 0.5, 0.5, 25.0},
                      {2, "then_branch", 2, 0, "/gated/inner/Mul", "Mul", 0.2, 0.5, 40.0}}));
  ASSERT_TRUE(a.ok() && b.ok());
  const CliRun shown =
      cli(run_history, {"--db", db_, "--compare", std::to_string(*a), std::to_string(*b)});
  ASSERT_EQ(shown.code, 0) << shown.err;
  const std::vector<std::string> lines = lines_of(shown.out);
  const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("op types") != std::string::npos;
  });
  ASSERT_NE(header, lines.end()) << shown.out;
  const auto group = std::find_if(header, lines.end(), [](const std::string& l) {
    return l.find("/gated/If") != std::string::npos && l.rfind("If", 0) == 0;
  });
  ASSERT_GE(lines.end() - group, 5) << shown.out;
  const size_t b_end = column_of(*header, "B ms") + 4, calls_end = column_of(*header, "calls") + 5;
  const size_t name_at = column_of(*header, "group");
  ASSERT_NE(calls_end, std::string::npos + 5) << *header;
  const struct {
    size_t depth;
    std::string label, b, delta, calls, name;
  } expected[] = {{1, "then_bra", "3.000", "+100.0%", "x0.50 -> x1", long_name},
                  {1, "then_branch: If", "0.500", "-33.3%", "x0.50", "/gated/then/If"},
                  {2, "then_branch: Mul", "0.200", "only B", "x0.50", "/gated/inner/Mul"},
                  {2, "else_branch: Add", "-", "only A", "x0.25", "/gated/inner/Add"}};
  const size_t op_column = column_of(*group, "If");
  for (size_t i = 0; i < std::size(expected); ++i) {
    const std::string& line = group[static_cast<std::ptrdiff_t>(i) + 1];
    SCOPED_TRACE(line);
    EXPECT_EQ(column_of(line, expected[i].label), op_column + 2 * expected[i].depth);
    EXPECT_EQ(column_of(line, " " + expected[i].b + " ") + 1 + expected[i].b.size(), b_end);
    EXPECT_NE(line.find(" " + expected[i].delta + " "), std::string::npos);
    EXPECT_EQ(column_of(line, " " + expected[i].calls + " ") + 1 + expected[i].calls.size(),
              calls_end);
    EXPECT_EQ(column_of(line, expected[i].name, true), name_at);
    EXPECT_EQ(line.substr(line.size() - expected[i].name.size()), expected[i].name);
  }
  // The long label is elided in its middle: the column keeps its width, the op types their end.
  EXPECT_NE(group[1].find("…"), std::string::npos);
  EXPECT_NE(group[1].find("+Softmax "), std::string::npos);
  EXPECT_NE(shown.out.find("Body nodes of If/Loop/Scan groups are indented under them"),
            std::string::npos)
      << shown.out;
  // Runs without body rows print the table as before: no calls column, no note.
  const CliRun plain = cli(
      run_history, {"--db", db_, "--compare", std::to_string(vit_), std::to_string(vit_again_)});
  EXPECT_EQ(plain.out.find("calls"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("Body nodes"), std::string::npos) << plain.out;
}

// `history --sweep ID --json`: each point's group objects carry their body nodes, and a hostile
// node name leaves the document valid JSON.
TEST_F(HistoryText, SweepJsonHasEachGroupsBodyNodes) {
  auto db = store::ProfileStore::open(db_);
  ASSERT_TRUE(db.ok());
  store::SweepRecord w;
  w.symbol = "height";
  w.lo = 64;
  w.hi = 64;
  auto sweep = (*db)->record_sweep(w);
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  const std::string hostile = std::string("/gated/\"then\"\\Conv\n\x01") + "\xfe";
  store::RunRecord r =
      gated_run(1.5, {{1, "then_branch", 1, 0, hostile, "Conv+Relu", 0, 0.5, 50.0},
                      {2, "else_branch", 3, 0, "/gated/inner/Add", "Add", 0.25, 0.25, 33.33}});
  r.sweep_id = *sweep;
  r.sweep_value = 64;
  ASSERT_TRUE((*db)->record_run(r).ok());
  const CliRun shown = cli(run_history, {"--db", db_, "--sweep", std::to_string(*sweep), "--json"});
  ASSERT_EQ(shown.code, 0) << shown.err;
  const nlohmann::json j = nlohmann::json::parse(shown.out);
  const nlohmann::json& groups = j["points"][0]["groups"];
  ASSERT_EQ(groups.size(), 2u) << shown.out;
  EXPECT_TRUE(groups[0]["body"].empty());
  ASSERT_EQ(groups[1]["body"].size(), 2u) << shown.out;
  EXPECT_EQ(groups[1]["body"][0]["name"],
            std::string("/gated/\"then\"\\Conv\n\x01") + "\xef\xbf\xbd");
  EXPECT_EQ(groups[1]["body"][0]["op_types"], nlohmann::json::array({"Conv", "Relu"}));
  EXPECT_DOUBLE_EQ(groups[1]["body"][1]["calls_per_run"].get<double>(), 0.25);
  EXPECT_EQ(groups[1]["body"][1]["depth"], 2);
  EXPECT_EQ(groups[1]["body"][1]["body"], "else_branch");
  EXPECT_DOUBLE_EQ(groups[1]["body"][1]["percent_of_parent"].get<double>(), 33.33);
}

TEST(ProfileText, TopNHasItsOwnShareAndRunningSum) {
  profiling::ProfileResult r;
  // Execution order 0..3 taking 10, 40, 20, 30 % of the time.
  const double ms[] = {1, 4, 2, 3};
  double cum = 0;
  for (int i = 0; i < 4; ++i) {
    profiling::GroupProfile g;
    g.index = i;
    g.name = "/group_" + std::to_string(i);
    g.nodes = {g.name};
    g.op_types = {"Conv"};
    g.shape = "[1,8]";
    g.avg_ms = ms[i];
    g.percent = 10.0 * ms[i];
    cum += g.percent;
    g.cumulative_percent = cum;
    r.groups.push_back(g);
  }
  std::ostringstream out;
  profiling::print_profile_table(r, out, 3);
  const std::string text = out.str();
  const size_t top = text.find("Top 3 by time");
  ASSERT_NE(top, std::string::npos) << text;
  const std::vector<std::string> lines = lines_of(text.substr(top));
  ASSERT_GE(lines.size(), 5u) << text;
  EXPECT_NE(lines[1].find("% of total"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("cum % of top"), std::string::npos) << lines[1];
  // Slowest first, with the running sum of this order: 40, 70, 90 (not 50, 100, 80).
  const char* expected[] = {"/group_1", "/group_3", "/group_2"};
  const char* running[] = {"40.00", "70.00", "90.00"};
  const size_t sum_column = column_of(lines[1], "cum % of top") + 12;  // right-aligned: the end
  for (int i = 0; i < 3; ++i) {
    const std::string& row = lines[2 + i];
    EXPECT_NE(row.find(expected[i]), std::string::npos) << row;
    EXPECT_EQ(column_of(row, running[i], true) + 5, sum_column) << row;
  }
}

// An If's operations are its larger branch's, a bound: no GOP/s for it (an If that ran its
// Identity branch showed the other branch's convolutions as 1,915 GOP/s on two cores), and the
// run's work is printed as "at most".
TEST(ProfileText, AnIfsOperationsAreABoundWithoutGopPerSecond) {
  profiling::ProfileResult r;
  profiling::GroupProfile conv;
  conv.name = "/conv";
  conv.nodes = {"/conv"};
  conv.op_types = {"Conv"};
  conv.avg_ms = 1;
  conv.ops = 2'000'000;
  profiling::GroupProfile branch = conv;
  branch.index = 1;
  branch.name = "/gated/If";
  branch.nodes = {"/gated/If"};
  branch.op_types = {"If"};
  branch.avg_ms = 0.001;
  branch.ops = 2'000'000'000;
  EXPECT_DOUBLE_EQ(conv.gops_per_s(), 2.0);
  EXPECT_LT(branch.gops_per_s(), 0);
  r.groups = {conv, branch};
  r.stats.avg_ms = 1.001;
  EXPECT_TRUE(r.counted_ops_at_most());
  std::ostringstream out;
  profiling::print_profile_table(r, out, 3);
  EXPECT_NE(out.str().find(" at most per run"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("2000000.0"), std::string::npos) << out.str();
  r.groups = {conv};
  EXPECT_FALSE(r.counted_ops_at_most());
}

// A Loop that can end before its trip count (a computed condition: greedy decoding's EOS) is
// counted at the trip count, a bound as an If's is (plan::StepWork::bound): no GOP/s, "at most".
TEST(ProfileText, ALoopThatCanEndEarlyIsABoundWithoutGopPerSecond) {
  profiling::ProfileResult r;
  profiling::GroupProfile loop;
  loop.name = "/Loop";
  loop.nodes = {"/Loop"};
  loop.op_types = {"Loop"};
  loop.avg_ms = 0.5;
  loop.ops = 40'000'000;
  EXPECT_DOUBLE_EQ(loop.gops_per_s(), 80.0);  // a Loop that runs its trip count: exact
  loop.ops_bound = true;
  EXPECT_TRUE(loop.ops_are_bound());
  EXPECT_LT(loop.gops_per_s(), 0);
  r.groups = {loop};
  r.stats.avg_ms = 0.5;
  EXPECT_TRUE(r.counted_ops_at_most());
  std::ostringstream out;
  profiling::print_profile_table(r, out, 3);
  EXPECT_NE(out.str().find("Work: 40 MOP at most per run"), std::string::npos) << out.str();
  // The group tables show "-" where the group's GOP/s would be.
  const std::string tables = out.str().substr(out.str().find("Per group"));
  EXPECT_EQ(tables.find("80.0"), std::string::npos) << out.str();
  const std::vector<std::string> lines = lines_of(tables);
  ASSERT_GE(lines.size(), 3u) << tables;
  EXPECT_EQ(column_of(lines[2], " - ") + 2, column_of(lines[1], "GOP/s") + 5) << tables;
}

// A recorded run whose groups and body nodes have hostile names: `history --run`, `--compare` and
// the fresh profile's tables print each on one line of visible text.
// What the device says about itself and the model's file name reach the header lines: a
// device naming itself with a terminal escape must not drive the terminal of whoever reads the
// history, nor a failure message break it into lines.
TEST_F(HistoryText, HostileDeviceAndModelNamesStayVisibleInTheHeaders) {
  auto db = store::ProfileStore::open(db_);
  ASSERT_TRUE(db.ok());
  const std::vector<std::string>& names = hostile_names();
  store::RunRecord r = gated_run(1.0, {{1, "then_branch", 1, 0, "/x", "Conv", 0.5, 1, 50.0}});
  r.device.model = names[0];
  r.device.arch = names[1 % names.size()];
  r.device.os = names[2 % names.size()];
  r.agent_software = names[3 % names.size()];
  r.model_name = "m" + names[0];
  r.model_path = "/models/" + names[1 % names.size()] + ".onnx";
  r.bindings = "n=" + names[2 % names.size()];
  auto ok = (*db)->record_run(r);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  r.ok = false;
  r.failure = "agent said: " + names[0] + "\nsecond line";
  r.groups.clear();
  auto failed = (*db)->record_run(r);
  ASSERT_TRUE(failed.ok()) << failed.status().to_string();
  for (const int64_t id : {*ok, *failed}) {
    const CliRun run = cli(run_history, {"--db", db_, "--run", std::to_string(id)});
    ASSERT_EQ(run.code, 0) << run.err;
    expect_every_line_visible(run.out);
    EXPECT_NE(run.out.find(text::visible(names[0])), std::string::npos) << run.out;
  }
  expect_every_line_visible(cli(run_history, {"--db", db_}).out);
}

// The same for a fresh profile's header: the agent's hello (arch, OS, software) comes from the
// device.
TEST(ProfileText, AHostileAgentHelloStaysVisibleInTheHeader) {
  const std::vector<std::string>& names = hostile_names();
  profiling::ProfileResult r;
  r.device.id = "adb:" + names[0];
  r.device.model = names[1 % names.size()];
  r.agent.arch = names[2 % names.size()];
  r.agent.os = names[3 % names.size()];
  r.agent.software = names[0];
  r.model_name = names[1 % names.size()];
  r.bindings = "n=" + names[2 % names.size()];
  std::ostringstream out;
  profiling::print_profile_table(r, out, 3);
  expect_every_line_visible(out.str());
  EXPECT_NE(out.str().find("Device: adb:" + text::visible(names[0])), std::string::npos)
      << out.str();
}

TEST_F(HistoryText, HostileNamesStayOnTheirRowsInProfileAndHistoryTables) {
  auto db = store::ProfileStore::open(db_);
  ASSERT_TRUE(db.ok());
  const std::vector<std::string>& names = hostile_names();
  store::RunRecord r = gated_run(1.0, {{1, "then_branch", 1, 0, names[0], "Conv", 0.5, 1, 50.0}});
  for (size_t i = 0; i < names.size(); ++i) {
    store::GroupRecord g;
    g.index = static_cast<int64_t>(r.groups.size());
    g.name = names[i];
    g.op_types = "Relu";
    g.nodes = store::join_names({names[i]}, ',');
    g.shape = "[1," + names[(i + 1) % names.size()] + "]";
    g.avg_ms = 0.1;
    g.body = {{1, "body", 2, 0, names[(i + 2) % names.size()], "Add", 0.05, 3, 50.0}};
    r.groups.push_back(g);
  }
  auto a = (*db)->record_run(r);
  auto b = (*db)->record_run(r);
  ASSERT_TRUE(a.ok() && b.ok());
  const CliRun run = cli(run_history, {"--db", db_, "--run", std::to_string(*a)});
  ASSERT_EQ(run.code, 0) << run.err;
  expect_every_line_visible(run.out);
  const CliRun compare =
      cli(run_history, {"--db", db_, "--compare", std::to_string(*a), std::to_string(*b)});
  ASSERT_EQ(compare.code, 0) << compare.err;
  expect_every_line_visible(compare.out);
  const CliRun list = cli(run_history, {"--db", db_});
  expect_every_line_visible(list.out);
  // One row per group in the execution-order table, each followed by its body node's row.
  const std::vector<std::string> lines = lines_of(run.out);
  const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("op types") != std::string::npos;
  });
  ASSERT_NE(header, lines.end()) << run.out;
  const size_t first_group = 2 + 1;  // after gated_run's two groups and the If's body row
  ASSERT_GT(lines.end() - header, static_cast<std::ptrdiff_t>(first_group + 2 * names.size()));
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& row = header[static_cast<std::ptrdiff_t>(first_group + 2 * i) + 1];
    const std::string& body = header[static_cast<std::ptrdiff_t>(first_group + 2 * i) + 2];
    EXPECT_EQ(row.rfind(std::to_string(i + 2) + " ", row.find_first_not_of(' ')),
              row.find_first_not_of(' '))
        << row;
    EXPECT_NE(row.find(text::visible(names[i])), std::string::npos) << row;
    EXPECT_NE(body.find("body: Add"), std::string::npos) << body;
    EXPECT_NE(body.find(text::visible(names[(i + 2) % names.size()])), std::string::npos) << body;
  }
  // The fresh profile's tables are the same printer's.
  profiling::ProfileResult fresh;
  for (size_t i = 0; i < names.size(); ++i) {
    profiling::GroupProfile g;
    g.index = static_cast<int>(i);
    g.name = names[i];
    g.nodes = {names[i]};
    g.op_types = {names[(i + 1) % names.size()]};
    g.shape = names[(i + 2) % names.size()];
    g.avg_ms = 1;
    fresh.groups.push_back(g);
  }
  fresh.model_name = names[0];
  std::ostringstream profile;
  profiling::print_profile_table(fresh, profile, 5);
  const std::string text = profile.str();
  const size_t tables = text.find("Per group");
  ASSERT_NE(tables, std::string::npos) << text;
  expect_every_line_visible(text.substr(tables));
}

// A profile whose names hold the store's separators, its escape, quotes, newlines, NULs and bytes
// that are not UTF-8 is recorded and read back identical, and `history --run` prints the tables
// the profile printed.
TEST_F(HistoryText, HostileNamesRoundTripThroughTheStore) {
  const std::vector<std::string>& names = hostile_names();
  profiling::ProfileResult fresh;
  fresh.model_name = "hostile.onnx";  // no latencies: the history's statistics are zeros too
  for (size_t i = 0; i < names.size(); ++i) {
    profiling::GroupProfile g;
    g.index = static_cast<int>(i);
    g.name = names[i];
    g.nodes = {names[i], "a,b", "", names[(i + 1) % names.size()]};
    g.op_types = {"Conv", "My+Op\\", names[(i + 2) % names.size()]};
    g.shape = "[1,8]";
    g.avg_ms = 0.5;
    g.ops = 1000;
    g.ops_bound = i % 2 == 1;
    g.body = {{1, "body", 1, 0, names[(i + 3) % names.size()], {"Add", "x+y,z\\"}, 0.1, 2, 20}};
    fresh.groups.push_back(std::move(g));
  }
  fresh.groups.push_back(fresh.groups[0]);
  fresh.groups.back().index = static_cast<int>(names.size());
  fresh.groups.back().nodes = {""};  // one node with an empty name is not none
  profiling::set_time_shares(fresh.groups);
  store::RunRecord r;
  r.device.device_id = "local";
  r.device.transport = "local";
  r.model_sha256 = "ee55";
  r.model_name = fresh.model_name;
  r.ok = true;
  r.avg_ms = 1;
  for (const profiling::GroupProfile& g : fresh.groups)
    r.groups.push_back(profiling::group_record(g));
  auto db = store::ProfileStore::open(db_);
  ASSERT_TRUE(db.ok());
  auto id = (*db)->record_run(r);
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto kept = (*db)->run(*id);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  const profiling::ProfileResult back = profiling::result_from_record(*kept);
  ASSERT_EQ(back.groups.size(), fresh.groups.size());
  for (size_t i = 0; i < back.groups.size(); ++i) {
    const profiling::GroupProfile &b = back.groups[i], &f = fresh.groups[i];
    SCOPED_TRACE(text::visible(f.name));
    EXPECT_EQ(b.name, f.name);
    EXPECT_EQ(b.nodes, f.nodes);
    EXPECT_EQ(b.op_types, f.op_types);
    EXPECT_EQ(b.ops_bound, f.ops_bound);
    ASSERT_EQ(b.body.size(), 1u);
    EXPECT_EQ(b.body[0].name, f.body[0].name);
    EXPECT_EQ(b.body[0].op_types, f.body[0].op_types);
  }
  std::ostringstream tables;
  profiling::print_group_tables(fresh, tables);
  const CliRun shown = cli(run_history, {"--db", db_, "--run", std::to_string(*id)});
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_NE(shown.out.find(tables.str()), std::string::npos) << shown.out << "\n" << tables.str();
  expect_every_line_visible(shown.out);
}

}  // namespace
}  // namespace sod2::cli
