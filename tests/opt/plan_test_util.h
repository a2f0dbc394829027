// Small hand-built models for the planner tests, imported and analysed like a real file, and a
// golden-file comparison (SOD2_UPDATE_GOLDENS=1 rewrites the files instead of comparing).
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "../onnx/proto_builder.h"
#include "core/onnx/onnx_import.h"
#include "core/rdp/rdp.h"

namespace sod2::testing {

struct Analysed {
  Model model;
  RdpResult rdp;
  const Graph& graph() const { return *model.graph; }
};

inline Analysed analyse(const onnx::ModelProto& m, RdpOptions options = {}) {
  auto model = import_onnx_bytes(serialize(m), "", "test.onnx");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  auto rdp = run_rdp(*model, options);
  EXPECT_TRUE(rdp.ok()) << rdp.status().to_string();
  return {std::move(*model), std::move(*rdp)};
}

inline RdpOptions range_of(const std::string& symbol, int64_t lo, int64_t hi,
                           int64_t multiple = 1) {
  RdpOptions o;
  o.ranges[symbol] = {lo, hi, multiple};
  return o;
}

inline void add_initializer(onnx::GraphProto* g, const std::string& name,
                            std::vector<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  add_float_initializer(g, name, std::move(dims), std::vector<float>(static_cast<size_t>(n), 0.5f));
}

// Compares `actual` with tests/opt/golden/<name>; SOD2_UPDATE_GOLDENS=1 writes it instead.
inline void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(SOD2_TEST_DATA_DIR) + "/golden/" + name;
  if (const char* u = std::getenv("SOD2_UPDATE_GOLDENS"); u && std::string(u) == "1") {
    std::ofstream(path) << actual;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden file " << path
                         << " (run with SOD2_UPDATE_GOLDENS=1 to create it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(expected.str(), actual) << "golden " << path << " differs";
}

}  // namespace sod2::testing
