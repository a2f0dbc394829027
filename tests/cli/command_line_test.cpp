// The argument parser: a list flag given twice adds to its list instead of dropping the first
// (`--range batch=1:8 --range seq=1:512` once left batch without a range, silently), and any other
// flag given twice is an error naming it.
#include "app/cli/command_line.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace sod2::cli {
namespace {

CommandLine parser() {
  return CommandLine({{"--range", true, "ranges", "k=lo:hi[:multiple],..."},
                      {"--bind", true, "values", "k=v,..."},
                      {"--runs", true, "runs", "N"},
                      {"--json", false, "json", ""}});
}

TEST(CommandLine, AListFlagGivenTwiceAddsToItsList) {
  CommandLine cl = parser();
  cl.parse({"m.onnx", "--range", "batch=1:8", "--range=seq=1:512", "--bind", "batch=2", "--bind",
            "seq=16", "--json"});
  EXPECT_EQ(cl.value("--range"), "batch=1:8,seq=1:512");
  EXPECT_EQ(cl.value("--bind"), "batch=2,seq=16");
  EXPECT_TRUE(cl.has("--json"));
  EXPECT_EQ(cl.positional(), std::vector<std::string>{"m.onnx"});
}

TEST(CommandLine, AnyOtherFlagGivenTwiceIsAnError) {
  CommandLine cl = parser();
  try {
    cl.parse({"--runs", "3", "--runs", "5"});
    FAIL() << "accepted --runs twice";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'--runs' is given twice"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sod2::cli
