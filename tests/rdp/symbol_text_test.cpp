// The one parser of bindings and ranges (core/rdp/symbol_text.h) the CLI and the studio share:
// values, and errors that name the item, never an exception.
#include "core/rdp/symbol_text.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace sod2 {
namespace {

TEST(SymbolText, Bindings) {
  auto b = parse_bindings("batch=1,seq=128,,+h=+7");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->at("batch"), 1);
  EXPECT_EQ(b->at("seq"), 128);
  EXPECT_EQ(b->at("+h"), 7);
  EXPECT_TRUE(parse_bindings("")->empty());
  // The last '=' splits, so a quoted name with '=' is not cut short.
  EXPECT_EQ(parse_bindings("a=b=3")->at("a=b"), 3);
  for (const char* bad : {"seq", "=4", "seq=", "seq=x", "seq=1.5", "seq=99999999999999999999"}) {
    auto r = parse_bindings(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(bad[0] == '=' ? "=4" : "seq"), std::string::npos)
        << r.status().message();
  }
  EXPECT_NE(parse_bindings("seq=99999999999999999999").status().message().find("int64"),
            std::string::npos);
}

TEST(SymbolText, Ranges) {
  auto r = parse_ranges("h=32:1024:32,batch=1:16");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->at("h").lo, 32);
  EXPECT_EQ(r->at("h").hi, 1024);
  EXPECT_EQ(r->at("h").multiple, 32);
  EXPECT_EQ(r->at("batch").multiple, 1);
  for (const char* bad : {"h=32", "h=1:2:3:4", "h=a:b", "h=10:1", ":1:2"}) {
    auto e = parse_ranges(bad);
    EXPECT_FALSE(e.ok()) << bad;
  }
  EXPECT_NE(parse_ranges("h=10:1").status().message().find("h=10:1"), std::string::npos);
}

TEST(SymbolText, RangesFileAndOverrides) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("sod2_symbol_text_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.json").string(), bad = (dir / "bad.json").string();
  std::ofstream(good) << R"({"ranges": {"h": [32, 1024, 32], "w": [1, 8]}})";
  std::ofstream(bad) << R"({"h": [32, "x"]})";
  auto o = rdp_options_from(good, std::string("w=2:4"));
  ASSERT_TRUE(o.ok()) << o.status().to_string();
  EXPECT_EQ(o->ranges.at("h").multiple, 32);
  EXPECT_EQ(o->ranges.at("w").lo, 2);  // the text overrides the file
  auto e = read_ranges_file(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("'h' must be [lo, hi]"), std::string::npos)
      << e.status().message();
  EXPECT_FALSE(read_ranges_file((dir / "missing.json").string()).ok());
  std::ofstream(bad) << "not json";
  EXPECT_NE(read_ranges_file(bad).status().message().find("not valid JSON"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(SymbolText, RangesFileDefaultsSayWhereViewsStart) {
  const auto dir = std::filesystem::temp_directory_path() / "sod2_range_defaults_test";
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.json").string();
  std::ofstream(good) << R"({"h": {"range": [32, 1024, 32], "default": 320}, "w": [1, 64]})";
  auto ranges = read_ranges_file(good);
  ASSERT_TRUE(ranges.ok()) << ranges.status().to_string();
  EXPECT_EQ(ranges->at("h").hi, 1024);
  EXPECT_EQ(ranges->at("w").hi, 64);
  auto defaults = read_range_defaults(good);
  ASSERT_TRUE(defaults.ok()) << defaults.status().to_string();
  EXPECT_EQ(*defaults, (std::map<std::string, int64_t>{{"h", 320}}));
  const std::pair<const char*, const char*> bad[] = {
      {R"({"h": {"range": [32, 1024, 32], "default": 100}})",
       "default 100 is not one of its values"},
      {R"({"h": {"range": [32, 1024, 32], "default": 2048}})", "default 2048 is not one of"},
      {R"({"h": {"range": [32, 1024], "default": "big"}})", "\"default\" must be an integer"},
      {R"({"h": {"default": 64}})", "'h' has no \"range\""},
      {R"({"h": {"range": [1, 8], "typical": 4}})", "unknown key 'typical'"}};
  for (const auto& [text, message] : bad) {
    const std::string path = (dir / "bad.json").string();
    std::ofstream(path) << text;
    auto e = read_range_defaults(path);
    ASSERT_FALSE(e.ok()) << text;
    EXPECT_NE(e.status().message().find(message), std::string::npos) << e.status().message();
    EXPECT_FALSE(read_ranges_file(path).ok()) << text;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sod2
