// String tensors: StringNormalizer, StringConcat, StringSplit and Cast to and from strings, each
// against values worked out from the spec (and ONNX Runtime's formatting for numbers).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../../kernel_harness.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2::rt {

void register_math_kernels(KernelRegistry& r);
void register_data_kernels(KernelRegistry& r);

namespace {

using testing::run_kernel;

const KernelRegistry& registry() {
  static const KernelRegistry r = [] {
    KernelRegistry k;
    register_string_kernels(k);
    register_math_kernels(k);
    register_data_kernels(k);
    return k;
  }();
  return r;
}

HostTensor strings(Shape shape, const std::vector<std::string>& values) {
  HostTensor t(DType::kString, shape);
  for (size_t i = 0; i < values.size(); ++i) t.strings()[i] = values[i];
  return t;
}

AttrValue str(const std::string& s) {
  AttrValue v;
  v.kind = AttrValue::Kind::kString;
  v.s = s;
  return v;
}

AttrValue strs(const std::vector<std::string>& s) {
  AttrValue v;
  v.kind = AttrValue::Kind::kStrings;
  v.strings = s;
  return v;
}

AttrValue integer(int64_t i) {
  AttrValue v;
  v.kind = AttrValue::Kind::kInt;
  v.i = i;
  return v;
}

TEST(StringKernels, StringNormalizerDropsStopwordsAndChangesCase) {
  const HostTensor x = strings({1, 4}, {"Monday", "tuesday", "MONDAY", "Zürich"});
  Attrs attrs;
  attrs.set("stopwords", strs({"monday"}));
  attrs.set("case_change_action", str("UPPER"));
  auto out = run_kernel(registry(), "StringNormalizer", 10, {&x}, 1, attrs);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // Case-insensitive by default: both Mondays go; non-ASCII bytes pass unchanged.
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 2}));
  EXPECT_EQ((*out)[0].strings(), (std::vector<std::string>{"TUESDAY", "ZüRICH"}));

  attrs.set("is_case_sensitive", integer(1));
  auto sensitive = run_kernel(registry(), "StringNormalizer", 10, {&x}, 1, attrs);
  ASSERT_TRUE(sensitive.ok());
  EXPECT_EQ((*sensitive)[0].strings(),
            (std::vector<std::string>{"MONDAY", "TUESDAY", "MONDAY", "ZüRICH"}));

  // Everything removed: one empty string.
  const HostTensor only = strings({2}, {"monday", "Monday"});
  Attrs drop;
  drop.set("stopwords", strs({"monday"}));
  auto empty = run_kernel(registry(), "StringNormalizer", 10, {&only}, 1, drop);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)[0].shape(), (Shape{1}));
  EXPECT_EQ((*empty)[0].strings()[0], "");

  const HostTensor wide = strings({2, 2}, {"a", "b", "c", "d"});
  auto bad = run_kernel(registry(), "StringNormalizer", 10, {&wide}, 1, drop);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("[C] or [1, C]"), std::string::npos);
}

TEST(StringKernels, StringConcatBroadcasts) {
  const HostTensor a = strings({2, 1}, {"a", "b"});
  const HostTensor b = strings({3}, {"1", "2", "3"});
  auto out = run_kernel(registry(), "StringConcat", 20, {&a, &b}, 1);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ((*out)[0].strings(), (std::vector<std::string>{"a1", "a2", "a3", "b1", "b2", "b3"}));
}

TEST(StringKernels, StringSplitFollowsPythonsSplit) {
  const HostTensor x = strings({3}, {"  a b  c ", "", "one"});
  auto ws = run_kernel(registry(), "StringSplit", 20, {&x}, 2);
  ASSERT_TRUE(ws.ok()) << ws.status().to_string();
  EXPECT_EQ((*ws)[0].shape(), (Shape{3, 3}));
  EXPECT_EQ((*ws)[0].strings(),
            (std::vector<std::string>{"a", "b", "c", "", "", "", "one", "", ""}));
  EXPECT_EQ((*ws)[1].data<int64_t>()[0], 3);
  EXPECT_EQ((*ws)[1].data<int64_t>()[1], 0);

  const HostTensor csv = strings({2}, {"1,,2", "3"});
  Attrs attrs;
  attrs.set("delimiter", str(","));
  attrs.set("maxsplit", integer(1));
  auto comma = run_kernel(registry(), "StringSplit", 20, {&csv}, 2, attrs);
  ASSERT_TRUE(comma.ok()) << comma.status().to_string();
  EXPECT_EQ((*comma)[0].shape(), (Shape{2, 2}));
  EXPECT_EQ((*comma)[0].strings(), (std::vector<std::string>{"1", ",2", "3", ""}));
  EXPECT_EQ((*comma)[1].data<int64_t>()[0], 2);
  EXPECT_EQ((*comma)[1].data<int64_t>()[1], 1);
}

TEST(StringKernels, CastWritesAndReadsNumbers) {
  HostTensor f(DType::kFloat, Shape{5});
  const float values[] = {0.9767611f, 1e20f, -3.f, NAN, -INFINITY};
  for (int i = 0; i < 5; ++i) f.data<float>()[i] = values[i];
  Attrs to_string;
  to_string.set("to", integer(static_cast<int64_t>(DType::kString)));
  auto s = run_kernel(registry(), "Cast", 13, {&f}, 1, to_string);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)[0].strings(),
            (std::vector<std::string>{"0.9767611", "1e+20", "-3", "NaN", "-INF"}));

  const HostTensor text = strings({5}, {"0.5", "+INF", "nan", "-1e3", "7"});
  Attrs to_float;
  to_float.set("to", integer(static_cast<int64_t>(DType::kFloat)));
  auto back = run_kernel(registry(), "Cast", 13, {&text}, 1, to_float);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  const float* v = (*back)[0].data<float>();
  EXPECT_EQ(v[0], 0.5f);
  EXPECT_TRUE(std::isinf(v[1]) && v[1] > 0);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], -1000.f);
  EXPECT_EQ(v[4], 7.f);

  Attrs to_int;
  to_int.set("to", integer(static_cast<int64_t>(DType::kInt32)));
  const HostTensor ints = strings({2}, {"-12", "+40"});
  auto i32 = run_kernel(registry(), "Cast", 13, {&ints}, 1, to_int);
  ASSERT_TRUE(i32.ok()) << i32.status().to_string();
  EXPECT_EQ((*i32)[0].data<int32_t>()[0], -12);
  EXPECT_EQ((*i32)[0].data<int32_t>()[1], 40);

  // Not a number, or out of the type's range: an error quoting the string.
  const HostTensor junk = strings({1}, {"12abc"});
  auto bad = run_kernel(registry(), "Cast", 13, {&junk}, 1, to_float);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'12abc'"), std::string::npos);
  const HostTensor big = strings({1}, {"99999999999"});
  EXPECT_FALSE(run_kernel(registry(), "Cast", 13, {&big}, 1, to_int).ok());
}

TEST(StringKernels, RegexFullMatchUsesRe2WithoutBacktracking) {
  // The spec's example; then a pattern that makes backtracking engines take exponential time.
  const HostTensor urls = strings({3}, {"www.google.com", "www.facebook.com", "www.bbc.co.uk"});
  Attrs attrs;
  attrs.set("pattern", str(R"(www\.[\w.-]+\.\bcom\b)"));
  auto out = run_kernel(registry(), "RegexFullMatch", 20, {&urls}, 1, attrs);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype(), DType::kBool);
  EXPECT_EQ(std::vector<bool>((*out)[0].data<bool>(), (*out)[0].data<bool>() + 3),
            (std::vector<bool>{true, true, false}));

  const HostTensor as = strings({1}, {std::string(5000, 'a')});
  Attrs evil;
  evil.set("pattern", str("(a*)*b"));
  auto quick = run_kernel(registry(), "RegexFullMatch", 20, {&as}, 1, evil);
  ASSERT_TRUE(quick.ok()) << quick.status().to_string();
  EXPECT_FALSE((*quick)[0].data<bool>()[0]);

  Attrs broken;
  broken.set("pattern", str("(unclosed"));
  auto bad = run_kernel(registry(), "RegexFullMatch", 20, {&urls}, 1, broken);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'(unclosed'"), std::string::npos)
      << bad.status().to_string();
}

TEST(StringKernels, ShapeOnlyOpsTakeStrings) {
  // Reshape/Unsqueeze copy the strings themselves; Shape and Size read only the shape.
  const HostTensor x = strings({2, 2}, {"a", "bb", "ccc", ""});
  HostTensor shape(DType::kInt64, Shape{1});
  shape.data<int64_t>()[0] = 4;
  auto flat = run_kernel(registry(), "Reshape", 14, {&x, &shape}, 1);
  ASSERT_TRUE(flat.ok()) << flat.status().to_string();
  EXPECT_EQ((*flat)[0].shape(), (Shape{4}));
  EXPECT_EQ((*flat)[0].strings(), (std::vector<std::string>{"a", "bb", "ccc", ""}));
  auto dims = run_kernel(registry(), "Shape", 15, {&x}, 1);
  ASSERT_TRUE(dims.ok()) << dims.status().to_string();
  EXPECT_EQ((*dims)[0].data<int64_t>()[1], 2);
  auto size = run_kernel(registry(), "Size", 13, {&x}, 1);
  ASSERT_TRUE(size.ok()) << size.status().to_string();
  EXPECT_EQ((*size)[0].data<int64_t>()[0], 4);
}

}  // namespace
}  // namespace sod2::rt
