// What a profile feeds the model's inputs through the real agent: integer ranges valued at each
// sweep point, and input files whose dims bind the sizes (#23 item 5).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "app/cli/device_commands.h"
#include "app/profiling/profile_job.h"
#include "app/profiling/profile_report.h"
#include "onnx/onnx_pb.h"
#include "tests/device/profile_test_fixture.h"

namespace sod2 {
namespace {

using namespace profile_testing;

// #23 item 5: integer ranges are valued at each point of a sweep (lengths=seq follows the swept
// seq; it used to be valued once, at --bind, where seq has no value), and an input file's dims
// bind the symbols --bind leaves out.
TEST_F(ProfileTest, IntegerRangesFollowASweepAndInputFilesBindTheirSizes) {
  const std::string model = kModels + "/bert_tiny/model.onnx";
  ASSERT_EQ(cli(cli::run_profile,
                {model, "--ranges", ranges_of("bert_tiny"), "--sweep", "seq=8:16:8", "--bind",
                 "batch=1", "--int-range", "input_ids=seq:seq+1, attention_mask=1", "--runs", "1",
                 "--warmup", "0", "--threads", "1", "--db", db_}),
            0)
      << err_.str();
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE status = 'ok'"), 2);

  // input_ids [1, 6] from a TensorProto: seq=6 comes from the file.
  onnx::TensorProto ids;
  ids.set_data_type(onnx::TensorProto::INT64);
  ids.add_dims(1);
  ids.add_dims(6);
  for (int64_t v : {101, 7, 8, 9, 10, 102}) ids.add_int64_data(v);
  const std::string ids_path = (dir_ / "input_ids.pb").string();
  std::ofstream(ids_path, std::ios::binary) << ids.SerializeAsString();
  ASSERT_EQ(cli(cli::run_profile, {model, "--ranges", ranges_of("bert_tiny"), "--bind", "batch=1",
                                   "--input", ids_path, "--int-range", "attention_mask=1", "--runs",
                                   "1", "--warmup", "0", "--threads", "1", "--db", db_}),
            0)
      << err_.str();
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE bindings = 'batch=1,seq=6'"), 1);
  // --bind disagreeing with the file is refused, naming both.
  EXPECT_EQ(cli(cli::run_profile, {model, "--ranges", ranges_of("bert_tiny"), "--bind",
                                   "batch=1,seq=8", "--input", ids_path, "--db", db_}),
            1);
  EXPECT_NE(err_.str().find("gives seq=6, the binding gives 8"), std::string::npos) << err_.str();
}

}  // namespace
}  // namespace sod2
