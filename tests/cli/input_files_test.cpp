// `sod2 run` driven in-process on input files that are not what they claim: a FIFO, /dev/zero or
// a huge sparse file as a test-data tensor, an --inputs tensor or its inputs.json, and a FIFO as
// the --ranges file. Each must be a one-line error naming the file, quickly; each run is in a
// bounded child so a regression fails the test instead of hanging it or exhausting memory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <tuple>

#include "../common/bounded_run.h"
#include "../onnx/proto_builder.h"
#include "app/cli/run_command.h"

namespace sod2::cli {
namespace {

namespace fs = std::filesystem;

class RunInputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sod2_cli_inputs_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "data");
    // y = x + w, x of 4 floats: compiles in milliseconds.
    auto m = sod2::testing::make_model();
    auto* g = m.mutable_graph();
    sod2::testing::add_input(g, "x", {int64_t{4}});
    sod2::testing::add_float_initializer(g, "w", {4}, {1, 2, 3, 4});
    sod2::testing::add_node(g, "Add", {"x", "w"}, {"y"});
    sod2::testing::add_output(g, "y", {int64_t{4}});
    model_ = (dir_ / "add.onnx").string();
    std::ofstream(model_, std::ios::binary) << m.SerializeAsString();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The exit status and stderr of `sod2 run ARGS`, in a child limited to 10 s and 1 GiB.
  static std::pair<bool, std::string> run(const std::vector<std::string>& args) {
    const auto r = sod2::testing::run_bounded(
        [&] {
          std::ostringstream out, err;
          const int code = run_run(args, out, err);
          return std::to_string(code) + "|" + err.str();
        },
        10, uint64_t{1} << 30);
    return {r.finished, r.result};
  }

  static void write_tensor(const fs::path& path, std::vector<float> values) {
    onnx::TensorProto p;
    p.set_data_type(onnx::TensorProto::FLOAT);
    p.add_dims(static_cast<int64_t>(values.size()));
    for (float v : values) p.add_float_data(v);
    std::ofstream(path, std::ios::binary) << p.SerializeAsString();
  }

  fs::path dir_;
  std::string model_;
};

TEST_F(RunInputFiles, AGoodTestDataSetStillPasses) {
  write_tensor(dir_ / "data" / "input_0.pb", {0, 1, 2, 3});
  write_tensor(dir_ / "data" / "output_0.pb", {1, 3, 5, 7});
  const auto [finished, result] = run({model_, "--test-data", (dir_ / "data").string()});
  ASSERT_TRUE(finished) << result;
  EXPECT_EQ(result.substr(0, 2), "0|") << result;
}

TEST_F(RunInputFiles, TestDataThatIsAFifoDevZeroOrHugeIsRefusedByName) {
  const fs::path input = dir_ / "data" / "input_0.pb";
  struct Case {
    const char* what;
    std::function<void()> make;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"a FIFO", [&] { ASSERT_EQ(::mkfifo(input.c_str(), 0600), 0); },
       input.string() + ": is a FIFO (named pipe), not a regular file"},
      {"/dev/zero", [&] { fs::create_symlink("/dev/zero", input); },
       input.string() + ": is a character device, not a regular file"},
      {"a 3 GiB sparse file",
       [&] {
         std::ofstream(input).close();
         fs::resize_file(input, uint64_t{3} << 30);
       },
       input.string() + ": is 3221225472 bytes, more than the 2147483647 bytes"},
  };
  for (const Case& c : cases) {
    fs::remove(input);
    c.make();
    const auto [finished, result] = run({model_, "--test-data", (dir_ / "data").string()});
    EXPECT_TRUE(finished) << c.what << ": " << result;
    if (!finished) continue;
    EXPECT_EQ(result.substr(0, 2), "1|") << c.what << ": " << result;
    EXPECT_NE(result.find(c.expect), std::string::npos) << c.what << ": " << result;
  }
}

TEST_F(RunInputFiles, SavedInputsThatAreAFifoOrDevZeroAreRefusedByName) {
  const fs::path json = dir_ / "data" / "inputs.json";
  const fs::path bin = dir_ / "data" / "x.bin";
  std::ofstream(json) << R"({"inputs": [{"name": "x", "type": "float32", "dims": [4],
                                         "file": "x.bin"}]})";
  const std::vector<std::string> args = {
      model_, "--inputs", (dir_ / "data").string(), "--runs", "1", "--warmup", "1"};
  ASSERT_EQ(::mkfifo(bin.c_str(), 0600), 0);
  auto [finished, result] = run(args);
  ASSERT_TRUE(finished) << result;
  EXPECT_NE(result.find(bin.string() + ": is a FIFO"), std::string::npos) << result;

  fs::remove(bin);
  fs::create_symlink("/dev/zero", bin);
  std::tie(finished, result) = run(args);
  ASSERT_TRUE(finished) << result;
  EXPECT_NE(result.find(bin.string() + ": is a character device"), std::string::npos) << result;

  // Dims asking for more than any input file may hold are refused before anything is allocated.
  fs::remove(bin);
  std::ofstream(bin, std::ios::binary).write("\0\0\0\0", 4);
  std::ofstream(json) << R"({"inputs": [{"name": "x", "type": "float32",
                             "dims": [4611686018427387904, 4], "file": "x.bin"}]})";
  std::tie(finished, result) = run(args);
  ASSERT_TRUE(finished) << result;
  EXPECT_NE(result.find("input 'x' in " + json.string()), std::string::npos) << result;

  fs::remove(json);
  ASSERT_EQ(::mkfifo(json.c_str(), 0600), 0);
  std::tie(finished, result) = run(args);
  ASSERT_TRUE(finished) << result;
  EXPECT_NE(result.find(json.string() + ": is a FIFO"), std::string::npos) << result;
}

// --input name=FILE (issue #23 item 5): a .npy or a TensorProto runs as given; a FIFO, /dev/zero
// or a file that does not fit the input is a one-line error naming the file.
TEST_F(RunInputFiles, InputFilesRunAsGivenAndBadOnesAreRefusedByName) {
  const fs::path pb = dir_ / "x.pb";
  write_tensor(pb, {0, 1, 2, 3});
  const std::vector<std::string> base = {model_, "--runs", "1", "--warmup", "1", "--input"};
  auto with = [&](const std::string& spec) {
    std::vector<std::string> args = base;
    args.push_back(spec);
    return run(args);
  };
  auto [finished, result] = with("x=" + pb.string());
  ASSERT_TRUE(finished) << result;
  EXPECT_EQ(result.substr(0, 2), "0|") << result;

  // float32 [4] as numpy.save writes it.
  const fs::path npy = dir_ / "x.npy";
  {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
    while ((10 + header.size() + 1) % 64) header += ' ';
    header += '\n';
    std::ofstream f(npy, std::ios::binary);
    f.write("\x93NUMPY\x01\x00", 8);
    f.put(static_cast<char>(header.size()));
    f.put(0);
    f << header;
    const float v[4] = {1, 2, 3, 4};
    f.write(reinterpret_cast<const char*>(v), sizeof v);
  }
  std::tie(finished, result) = with(npy.string());  // the stem names the input
  ASSERT_TRUE(finished) << result;
  EXPECT_EQ(result.substr(0, 2), "0|") << result;

  const fs::path wrong = dir_ / "wrong.pb";
  write_tensor(wrong, {0, 1, 2});
  std::tie(finished, result) = with("x=" + wrong.string());
  ASSERT_TRUE(finished) << result;
  EXPECT_NE(
      result.find("input file " + wrong.string() + " has dims [3], input 'x' dim 0 must be 4"),
      std::string::npos)
      << result;
  std::tie(finished, result) = with("y=" + pb.string());
  ASSERT_TRUE(finished) << result;
  EXPECT_NE(result.find("the model has no input 'y' (its inputs: x)"), std::string::npos) << result;

  const fs::path fifo = dir_ / "fifo.npy";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::tie(finished, result) = with("x=" + fifo.string());
  ASSERT_TRUE(finished) << result;
  EXPECT_NE(result.find(fifo.string() + ": is a FIFO"), std::string::npos) << result;
  const fs::path zero = dir_ / "zero.npy";
  fs::create_symlink("/dev/zero", zero);
  std::tie(finished, result) = with("x=" + zero.string());
  ASSERT_TRUE(finished) << result;
  EXPECT_NE(result.find(zero.string() + ": is a character device"), std::string::npos) << result;
}

TEST_F(RunInputFiles, ARangesFileThatIsAFifoIsRefusedByName) {
  write_tensor(dir_ / "data" / "input_0.pb", {0, 1, 2, 3});
  const fs::path ranges = dir_ / "ranges.json";
  ASSERT_EQ(::mkfifo(ranges.c_str(), 0600), 0);
  const auto [finished, result] =
      run({model_, "--ranges", ranges.string(), "--test-data", (dir_ / "data").string()});
  ASSERT_TRUE(finished) << result;
  EXPECT_EQ(result.substr(0, 2), "1|") << result;
  EXPECT_NE(result.find(ranges.string() + ": is a FIFO"), std::string::npos) << result;
}

}  // namespace
}  // namespace sod2::cli
