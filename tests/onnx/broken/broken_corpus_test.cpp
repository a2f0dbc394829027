// Every file of corpus/ must be refused by import_onnx_file with an error that names the file and
// says what is wrong (the substring listed for it in expected_errors.txt). A crash, a hang (ctest
// timeout) or an accepted file fails that file's test; so does a corpus file without a table line
// and a table line without a file.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "core/onnx/onnx_import.h"

namespace sod2 {
namespace {

namespace fs = std::filesystem;

const fs::path kHere = fs::path(SOD2_TEST_DATA_DIR);  // tests/onnx/broken
const fs::path kCorpus = kHere / "corpus";
const fs::path kTable = kHere / "expected_errors.txt";
// The valid models the broken ones were derived from; the fuzzer starts from them too.
const fs::path kValidSeeds = kHere / ".." / ".." / "fuzz" / "seeds" / "onnx_import";

struct Expectation {
  std::string file;
  std::string substring;
};

struct Table {
  std::vector<Expectation> rows;
  std::vector<std::string> errors;  // malformed lines, duplicates, an unreadable file
};

// Format: `filename<TAB>substring`, one per line; blank lines and lines starting with '#' are
// comments. The substring is everything after the first tab (it may contain spaces and quotes).
Table load_table() {
  Table t;
  std::ifstream in(kTable);
  if (!in) {
    t.errors.push_back("cannot read " + kTable.string());
    return t;
  }
  std::set<std::string> seen;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.find('\t');
    const std::string where = kTable.filename().string() + ":" + std::to_string(n);
    if (tab == std::string::npos || tab == 0 || tab + 1 == line.size()) {
      t.errors.push_back(where + ": expected 'filename<TAB>substring', got '" + line + "'");
      continue;
    }
    Expectation e{line.substr(0, tab), line.substr(tab + 1)};
    if (!seen.insert(e.file).second) {
      t.errors.push_back(where + ": '" + e.file + "' is listed twice");
      continue;
    }
    t.rows.push_back(std::move(e));
  }
  return t;
}

const Table& table() {
  static const Table t = load_table();
  return t;
}

// The model files of the corpus; other files (external data next to them) are not listed.
std::set<std::string> corpus_models() {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kCorpus, ec))
    if (e.is_regular_file() && e.path().extension() == ".onnx")
      out.insert(e.path().filename().string());
  return out;
}

TEST(BrokenCorpus, TableAndCorpusListTheSameFiles) {
  for (const std::string& err : table().errors) ADD_FAILURE() << err;
  const std::set<std::string> files = corpus_models();
  EXPECT_GE(files.size(), 30u) << "the corpus at " << kCorpus << " looks incomplete";
  std::set<std::string> listed;
  for (const Expectation& e : table().rows) listed.insert(e.file);
  for (const std::string& f : files)
    EXPECT_TRUE(listed.count(f)) << "corpus file '" << f << "' has no line in " << kTable;
  for (const std::string& f : listed)
    EXPECT_TRUE(files.count(f)) << kTable.filename().string() << " lists '" << f
                                << "' but there is no such file in " << kCorpus;
}

// One test per table line, named BrokenFile.<file name without .onnx>. Registered at start-up
// rather than with TEST_P so ctest's test names stay plain (no "# GetParam() = ..." suffix).
class BrokenFile : public ::testing::Test {
 public:
  explicit BrokenFile(Expectation e) : e_(std::move(e)) {}

  void TestBody() override {
    const fs::path path = kCorpus / e_.file;
    ASSERT_TRUE(fs::exists(path)) << path << " is listed but missing";
    const Expected<Model> model = import_onnx_file(path.string());
    ASSERT_FALSE(model.ok()) << e_.file << " was imported without error; it must be refused with "
                             << "an error containing \"" << e_.substring << "\"";
    const Status& status = model.status();
    std::cout << e_.file << " -> " << status.to_string() << "\n";
    const std::string& message = status.message();
    const size_t named_at = message.find(e_.file);
    EXPECT_NE(named_at, std::string::npos)
        << "the error does not name the file:\n  " << status.to_string();
    // The explanation follows the file name; searching only there keeps a file called "empty"
    // from satisfying its own "empty" expectation.
    const std::string explanation =
        named_at == std::string::npos ? message : message.substr(named_at + e_.file.size());
    EXPECT_NE(explanation.find(e_.substring), std::string::npos)
        << "the error does not say \"" << e_.substring << "\":\n  " << status.to_string();
    EXPECT_NE(status.code(), StatusCode::kInternal)
        << "a broken input is the user's problem, not an internal error:\n  "
        << status.to_string();
  }

 private:
  Expectation e_;
};

std::string test_name(const std::string& file) {
  std::string name = file;
  if (name.size() > 5 && name.ends_with(".onnx")) name.resize(name.size() - 5);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const Expectation& e : table().rows) {
    ::testing::RegisterTest("BrokenFile", test_name(e.file).c_str(), nullptr, nullptr,
                            __FILE__, __LINE__,
                            [e]() -> ::testing::Test* { return new BrokenFile(e); });
  }
  return true;
}();

// The broken files are the valid ones with one defect each; the valid ones must import cleanly or
// the broken ones prove nothing.
TEST(BrokenCorpus, ValidBaselineModelsImport) {
  int count = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kValidSeeds, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("valid_") || e.path().extension() != ".onnx") continue;
    ++count;
    const Expected<Model> model = import_onnx_file(e.path().string());
    EXPECT_TRUE(model.ok()) << name << ": " << model.status().to_string();
  }
  EXPECT_GE(count, 3) << "no valid_*.onnx models in " << kValidSeeds;
}

}  // namespace
}  // namespace sod2
