// Table-driven rule tests, in two shapes:
//  - RuleCase: attributes and ranges as data, each output printed with its dtype (describe()); a
//    TEST runs a table of them with run_cases().
//  - SetupCase: a setup function for what is not data (omitted inputs, float initializers, range
//    multiples), each output printed without its dtype; a TEST_P instance each (named by
//    case_name), or a table run with run_cases().
// BadCase lists inputs a rule must reject.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "fake_context.h"

namespace sod2::testing {

// A fact's dtype and shape: "float32 [n, 3]".
inline std::string describe(const TensorFact& f) {
  return std::string(data_type_name(f.dtype)) + " " + f.to_string();
}

// The expected outputs 0, 1, ... as printed: one string or a list.
struct Outputs : std::vector<std::string> {
  Outputs(const char* first) : std::vector<std::string>{first} {}
  Outputs(std::initializer_list<std::string> all) : std::vector<std::string>(all) {}
};

// Whether run_case compares the requirements the rule recorded with the case's list (an empty
// list then means "none"). kUnchecked ignores them.
enum class Requirements { kChecked, kUnchecked };

struct RuleCase {
  std::string name;
  std::string op;
  std::vector<TensorFact> in;
  Outputs out;  // describe() of each output; the node has this many outputs
  std::vector<Attribute> attrs = {};
  int64_t opset = 17;
  std::vector<std::tuple<std::string, int64_t, int64_t>> ranges = {};
  std::vector<std::string> requirements = {};
};

inline void run_case(const RuleCase& c, Requirements check = Requirements::kChecked) {
  SCOPED_TRACE(c.name);
  FakeContext ctx(c.op, c.in, c.out.size(), c.opset);
  for (const Attribute& a : c.attrs) ctx.attr(a);
  for (const auto& [s, lo, hi] : c.ranges) ctx.range(s, lo, hi);
  const Status st = ctx.run();
  ASSERT_TRUE(st.ok()) << st.to_string();
  for (size_t i = 0; i < c.out.size(); ++i)
    EXPECT_EQ(describe(ctx.out(i)), c.out[i]) << "output " << i;
  if (check == Requirements::kChecked) {
    EXPECT_EQ(ctx.requirements, c.requirements);
  }
}

struct SetupCase {
  std::string name;
  std::string op;
  std::vector<TensorFact> inputs;
  std::function<void(FakeContext&)> setup;  // attributes, ranges, constant inputs
  Outputs want;                             // the first outputs, as printed
  std::vector<std::string> requirements = {};
  int64_t opset = 17;
  size_t num_outputs = 0;  // outputs of the node; 0: as many as `want`
};

inline void none(FakeContext&) {}

inline void run_case(const SetupCase& c, Requirements check = Requirements::kChecked) {
  SCOPED_TRACE(c.name);
  FakeContext ctx(c.op, c.inputs, c.num_outputs ? c.num_outputs : c.want.size(), c.opset);
  if (c.setup) c.setup(ctx);
  const Status st = ctx.run();
  ASSERT_TRUE(st.ok()) << st.to_string();
  for (size_t i = 0; i < c.want.size(); ++i) EXPECT_EQ(ctx.out_str(i), c.want[i]) << "output " << i;
  if (check == Requirements::kChecked) {
    EXPECT_EQ(ctx.requirements, c.requirements);
  }
}

// The test name of a SetupCase parameter: INSTANTIATE_TEST_SUITE_P(..., case_name).
inline std::string case_name(const ::testing::TestParamInfo<SetupCase>& info) {
  return info.param.name;
}

template <typename Case>
void run_cases(const std::vector<Case>& cases, Requirements check = Requirements::kChecked) {
  for (const Case& c : cases) run_case(c, check);
}

// Inputs the rule must reject as an invalid model.
struct BadCase {
  std::string op;
  std::vector<TensorFact> in;
  std::vector<Attribute> attrs = {};
  int64_t opset = 17;
};

// Runs each case on a one-output node; expects kInvalidModel, and `message_part` in the message
// when given.
inline void expect_invalid_model(const std::vector<BadCase>& bad,
                                 std::string_view message_part = {}) {
  for (const BadCase& b : bad) {
    FakeContext ctx(b.op, b.in, 1, b.opset);
    for (const Attribute& a : b.attrs) ctx.attr(a);
    const Status st = ctx.run();
    EXPECT_EQ(st.code(), StatusCode::kInvalidModel) << b.op << ": " << st.to_string();
    if (!message_part.empty()) {
      EXPECT_NE(st.message().find(message_part), std::string::npos) << st.message();
    }
  }
}

}  // namespace sod2::testing
