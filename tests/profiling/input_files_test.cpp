// Inputs from files (issue #23 item 5): NumPy .npy and ONNX TensorProto, checked against the
// model's inputs, their dims binding symbols. The .npy parser gets hostile bytes too.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "app/profiling/input_files.h"
#include "app/profiling/npy_file.h"
#include "onnx/onnx_pb.h"

namespace sod2::profiling {
namespace {

namespace fs = std::filesystem;

// A .npy file as numpy.save writes it (version 1.0, header padded to 64 bytes).
std::vector<uint8_t> npy(const std::string& descr, const std::string& shape,
                         const std::vector<uint8_t>& data, bool fortran = false,
                         uint8_t major = 1) {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  const uint32_t len = static_cast<uint32_t>(header.size());
  out.push_back(len & 0xff);
  out.push_back((len >> 8) & 0xff);
  if (major != 1) {
    out.push_back((len >> 16) & 0xff);
    out.push_back(len >> 24);
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

template <typename T>
std::vector<uint8_t> bytes_of(std::vector<T> v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(NpyFile, ReadsTheTypesNumpyWritesInBothByteOrders) {
  auto f = parse_npy(npy("<f4", "(2, 3)", bytes_of<float>({1, 2, 3, 4, 5, 6.5f})), "a.npy");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->dtype(), rt::DType::kFloat);
  EXPECT_EQ(f->shape().rank(), 2);
  EXPECT_EQ(f->shape()[1], 3);
  EXPECT_FLOAT_EQ(f->data<float>()[5], 6.5f);

  // Big-endian int64 7 and 258.
  auto be = parse_npy(npy(">i8", "(2,)", {0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 1, 2}), "b");
  ASSERT_TRUE(be.ok()) << be.status().message();
  EXPECT_EQ(be->dtype(), rt::DType::kInt64);
  EXPECT_EQ(be->data<int64_t>()[0], 7);
  EXPECT_EQ(be->data<int64_t>()[1], 258);

  auto scalar = parse_npy(npy("<i4", "()", bytes_of<int32_t>({42}), false, 2), "s");
  ASSERT_TRUE(scalar.ok()) << scalar.status().message();
  EXPECT_EQ(scalar->shape().rank(), 0);
  EXPECT_EQ(scalar->data<int32_t>()[0], 42);

  auto b = parse_npy(npy("|b1", "(3,)", {0, 1, 5}), "b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->dtype(), rt::DType::kBool);
  EXPECT_EQ(b->bytes(), (std::vector<uint8_t>{0, 1, 1}));  // any non-zero byte is true

  auto empty = parse_npy(npy("<f8", "(0, 5)", {}), "e");
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_EQ(empty->shape().numel(), 0);

  for (const char* d : {"|i1", "<i2", "<u2", "<u4", "<u8", "<f2", "|u1"}) {
    const size_t size = static_cast<size_t>(d[2] - '0');
    EXPECT_TRUE(parse_npy(npy(d, "(4,)", std::vector<uint8_t>(4 * size)), d).ok()) << d;
  }
}

TEST(NpyFile, RefusesWhatItCannotReadSayingWhat) {
  auto message = [](const std::vector<uint8_t>& bytes) {
    auto r = parse_npy(bytes, "x.npy");
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(message(npy("|O", "(2,)", std::vector<uint8_t>(16))).find("element type '|O'"),
            std::string::npos);
  EXPECT_NE(message(npy("<f4", "(2, 2)", std::vector<uint8_t>(16), true)).find("Fortran"),
            std::string::npos);
  EXPECT_NE(message(npy("<f4", "(2, 2)", std::vector<uint8_t>(15))).find("needs 16 bytes"),
            std::string::npos);
  EXPECT_NE(message(npy("<f4", "(2, 2)", std::vector<uint8_t>(17))).find("the file has 17"),
            std::string::npos);
  EXPECT_NE(message(npy("<f4", "(4611686018427387904, 4)", std::vector<uint8_t>(16)))
                .find("more elements than the file has bytes"),
            std::string::npos);
  EXPECT_NE(message(npy("<f4", "(1,1,1,1,1,1,1,1,1)", std::vector<uint8_t>(4))).find("rank 9"),
            std::string::npos);
  EXPECT_NE(message({'P', 'K', 3, 4}).find("does not start with"), std::string::npos);
  std::vector<uint8_t> cut = npy("<f4", "(2,)", bytes_of<float>({1, 2}));
  cut.resize(20);
  EXPECT_NE(message(cut).find("cut short"), std::string::npos);
  // A header that is not a literal dict: never evaluated.
  std::vector<uint8_t> code = npy("<f4", "(2,)", bytes_of<float>({1, 2}));
  const std::string evil = "{'descr': __import__('os').system('true'), 'shape': (2,)}";
  std::memcpy(code.data() + 10, evil.data(), evil.size());
  EXPECT_NE(message(code).find("not a simple type string"), std::string::npos);
}

TEST(NpyFile, MutatedFilesAreErrorsOrTensorsNeverCrashes) {
  const std::vector<uint8_t> good = npy("<f4", "(3, 4)", std::vector<uint8_t>(48, 1));
  std::mt19937 rng(7);
  int ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> b = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % b.size();
      switch (rng() % 3) {
        case 0: b[at] = static_cast<uint8_t>(rng()); break;
        case 1: b.erase(b.begin() + static_cast<ptrdiff_t>(at)); break;
        default: b.insert(b.begin() + static_cast<ptrdiff_t>(at), static_cast<uint8_t>(rng()));
      }
      if (b.empty()) b.push_back(0);
    }
    auto r = parse_npy(b, "m.npy");
    if (r.ok()) {
      ++ok;
      EXPECT_EQ(static_cast<size_t>(r->shape().numel()) * rt::dtype_size(r->dtype()),
                r->bytes().size());
    }
  }
  EXPECT_GT(ok, 0);  // padding edits keep some files valid
}

TEST(InputFiles, ParsesNamedQuotedAndStemNamedItems) {
  auto files = parse_input_files("x = a.npy,\nlengths=\"/tmp/my, file.pb\", /data/mask.npy");
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(files->size(), 3u);
  EXPECT_EQ(files->at("x"), "a.npy");
  EXPECT_EQ(files->at("lengths"), "/tmp/my, file.pb");
  EXPECT_EQ(files->at("mask"), "/data/mask.npy");
  EXPECT_FALSE(parse_input_files("x=a.npy, x=b.npy").ok());
  EXPECT_FALSE(parse_input_files("x=").ok());
  EXPECT_TRUE(parse_input_files(" , ")->empty());
}

// Two inputs: x [batch, seq, 4] float, lengths [batch] int64; seq in [1, 64].
rt::ProgramDesc program() {
  rt::ProgramDesc p;
  p.symbols = {{"batch", false, 1, 8, 1}, {"seq", false, 1, 64, 1}};
  p.inputs = {{"x", rt::DType::kFloat, 3, rt::ValueType::kTensor},
              {"lengths", rt::DType::kInt64, 1, rt::ValueType::kTensor}};
  p.input_dims = {{0, 0, -1, 0}, {0, 1, -1, 1}, {0, 2, 4, -1}, {1, 0, -1, 0}};
  return p;
}

class InputFilesOnDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("sod2_input_files_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return p.string();
  }
  std::string write_proto(const std::string& name, std::vector<int64_t> values) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t.add_int64_data(v);
    const std::string s = t.SerializeAsString();
    return write(name, std::vector<uint8_t>(s.begin(), s.end()));
  }
  fs::path dir_;
};

TEST_F(InputFilesOnDisk, FilesBindTheSymbolsOfTheirDimsAndReplaceRandomInputs) {
  const std::string x = write("x.npy", npy("<f4", "(2, 5, 4)", std::vector<uint8_t>(160, 0)));
  const std::string lengths = write_proto("lengths.pb", {5, 3});
  auto files = load_input_files(program(), {{"x", x}, {"lengths", lengths}});
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_TRUE((*files)[1].has_value());
  EXPECT_EQ((*files)[1]->tensor.data<int64_t>()[1], 3);

  auto bind = bind_with_input_files(program(), *files, {});
  ASSERT_TRUE(bind.ok()) << bind.status().message();
  EXPECT_EQ(bind->at("batch"), 2);
  EXPECT_EQ(bind->at("seq"), 5);

  // The same value from --bind agrees; another one is an error naming both.
  EXPECT_TRUE(bind_with_input_files(program(), *files, {{"seq", 5}}).ok());
  auto clash = bind_with_input_files(program(), *files, {{"seq", 7}});
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find("gives seq=5, the binding gives 7"), std::string::npos)
      << clash.status().message();

  std::vector<rt::HostTensor> inputs;
  inputs.emplace_back(rt::DType::kFloat, rt::Shape{2, 5, 4});
  inputs.emplace_back(rt::DType::kInt64, rt::Shape{2});
  ASSERT_TRUE(use_input_files(*files, inputs).ok());
  EXPECT_EQ(inputs[1].data<int64_t>()[0], 5);
  // At other sizes (a sweep's next point) the file no longer fits.
  inputs[0] = rt::HostTensor(rt::DType::kFloat, rt::Shape{2, 6, 4});
  const Status moved = use_input_files(*files, inputs);
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.message().find("has dims [2,5,4], the binding gives its input [2,6,4]"),
            std::string::npos)
      << moved.message();
}

TEST_F(InputFilesOnDisk, FilesThatDoNotFitTheModelAreErrorsNamingInputAndFile) {
  auto error = [&](const std::map<std::string, std::string>& files) {
    auto r = load_input_files(program(), files);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  const std::string f64 = write("d.npy", npy("<f8", "(1, 2, 4)", std::vector<uint8_t>(64)));
  EXPECT_NE(error({{"x", f64}})
                .find("holds float64, input 'x' is float32 (numpy: save "
                      "a.astype(np.float32))"),
            std::string::npos)
      << error({{"x", f64}});
  const std::string rank2 = write("r.npy", npy("<f4", "(2, 4)", std::vector<uint8_t>(32)));
  EXPECT_NE(error({{"x", rank2}}).find("has rank 2 [2,4], input 'x' has rank 3"),
            std::string::npos);
  const std::string fixed = write("f.npy", npy("<f4", "(1, 2, 3)", std::vector<uint8_t>(24)));
  EXPECT_NE(error({{"x", fixed}}).find("dim 2 must be 4"), std::string::npos);
  EXPECT_NE(error({{"ids", fixed}}).find("no input 'ids' (its inputs: x, lengths)"),
            std::string::npos);
  EXPECT_NE(error({{"x", (dir_ / "missing.npy").string()}}).find("missing.npy"), std::string::npos);
  const std::string junk = write("j.pb", {0xff, 0xff, 0xff, 0x01, 0x02});
  EXPECT_NE(error({{"lengths", junk}}).find("neither a NumPy .npy file nor a serialized ONNX"),
            std::string::npos)
      << error({{"lengths", junk}});
  EXPECT_NE(error({{"x", dir_.string()}}).find("input 'x'"), std::string::npos);

  // A symbol value outside the model's range.
  const std::string big = write("big.npy", npy("<f4", "(1, 65, 4)", std::vector<uint8_t>(1040)));
  auto files = load_input_files(program(), {{"x", big}});
  ASSERT_TRUE(files.ok());
  auto bind = bind_with_input_files(program(), *files, {});
  ASSERT_FALSE(bind.ok());
  EXPECT_NE(bind.status().message().find("seq=65, outside its range [1, 64]"), std::string::npos)
      << bind.status().message();
}

}  // namespace
}  // namespace sod2::profiling
