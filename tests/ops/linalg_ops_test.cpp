#include <gtest/gtest.h>

#include "rule_cases.h"

namespace sod2::testing {
namespace {

class LinalgTest : public ::testing::TestWithParam<SetupCase> {};

TEST_P(LinalgTest, Output) { run_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Rules, LinalgTest,
    ::testing::Values(
        SetupCase{"MatMul2D", "MatMul", {ffact("m, k"), ffact("k, n")}, none, "[m, n]"},
        SetupCase{"MatMulInnerRequired",
                  "MatMul",
                  {ffact("m, k"), ffact("j, n")},
                  none,
                  "[m, n]",
                  {"k == j"}},
        SetupCase{"MatMulVecMat", "MatMul", {ffact("k"), ffact("k, n")}, none, "[n]"},
        SetupCase{"MatMulMatVec", "MatMul", {ffact("m, k"), ffact("k")}, none, "[m]"},
        SetupCase{"MatMulVecVec", "MatMul", {ffact("k"), ffact("k")}, none, "[]"},
        SetupCase{"MatMulBatchBroadcast",
                  "MatMul",
                  {ffact("b, 1, m, 64"), ffact("h, 64, n")},
                  none,
                  "[b, h, m, n]"},
        SetupCase{"MatMulBatchVsMatrix",
                  "MatMul",
                  {ffact("b, s, 768"), ffact("768, 3072")},
                  none,
                  "[b, s, 3072]"},
        SetupCase{
            "MatMulBatchVecRight", "MatMul", {ffact("2, 3, m, k"), ffact("k")}, none, "[2, 3, m]"},
        SetupCase{"MatMulBatchEqual",
                  "MatMul",
                  {ffact("4, m, k"), ffact("8, k, n")},
                  none,
                  "[4, m, n]",
                  {"4 == 8"}},
        SetupCase{"MatMulUnknownRank",
                  "MatMul",
                  {TensorFact::unknown(DataType::kFloat), ffact("k, n")},
                  none,
                  "<unknown rank>"},
        SetupCase{"MatMulUnknownDimsStay",
                  "MatMul",
                  {ffact("?, ?, k"), ffact("k, ?")},
                  none,
                  "[?, ?, ?]"},
        SetupCase{"MatMulInteger",
                  "MatMulInteger",
                  {fact(DataType::kUint8, "s, 16"), fact(DataType::kInt8, "16, 32")},
                  none,
                  "[s, 32]"},
        SetupCase{"QLinearMatMul",
                  "QLinearMatMul",
                  {fact(DataType::kUint8, "b, s, 16"), ffact(""), fact(DataType::kUint8, ""),
                   fact(DataType::kUint8, "16, 8"), ffact(""), fact(DataType::kUint8, ""),
                   ffact(""), fact(DataType::kUint8, "")},
                  none,
                  "[b, s, 8]"},
        SetupCase{"Gemm", "Gemm", {ffact("m, k"), ffact("k, n")}, none, "[m, n]"},
        SetupCase{"GemmTransA",
                  "Gemm",
                  {ffact("k, m"), ffact("k, n")},
                  [](FakeContext& c) { c.attr_i("transA", 1); },
                  "[m, n]"},
        SetupCase{"GemmTransB",
                  "Gemm",
                  {ffact("m, k"), ffact("n, k"), ffact("n")},
                  [](FakeContext& c) { c.attr_i("transB", 1); },
                  "[m, n]"},
        SetupCase{"GemmTransBoth",
                  "Gemm",
                  {ffact("k, m"), ffact("n, j")},
                  [](FakeContext& c) { c.attr_i("transA", 1).attr_i("transB", 1); },
                  "[m, n]",
                  {"k == j"}},
        SetupCase{"GemmCFillsUnknown",
                  "Gemm",
                  {ffact("?, 64"), ffact("64, ?"), ffact("8, 10")},
                  none,
                  "[8, 10]"},
        SetupCase{"GemmCRequires",
                  "Gemm",
                  {ffact("m, 64"), ffact("64, 10"), ffact("1, 12")},
                  none,
                  "[m, 10]",
                  {"10 == 12"}},
        SetupCase{"GemmCSymbolicMayBeOne",
                  "Gemm",
                  {ffact("m, 64"), ffact("64, 10"), ffact("c")},
                  none,
                  "[m, 10]"},
        SetupCase{"EinsumAttention",
                  "Einsum",
                  {ffact("b, h, q, 64"), ffact("b, h, k, 64")},
                  [](FakeContext& c) { c.attr_s("equation", "bhqd,bhkd->bhqk"); },
                  "[b, h, q, k]"},
        SetupCase{"EinsumMatmul",
                  "Einsum",
                  {ffact("i, j"), ffact("j, k")},
                  [](FakeContext& c) { c.attr_s("equation", "ij,jk"); },
                  "[i, k]"},
        SetupCase{"EinsumImplicitSorted",
                  "Einsum",
                  {ffact("3, 4"), ffact("5, 3")},
                  [](FakeContext& c) { c.attr_s("equation", "ba,cb"); },
                  "[4, 5]"},
        SetupCase{"EinsumEllipsis",
                  "Einsum",
                  {ffact("b, 2, m, 8"), ffact("2, 8, n")},
                  [](FakeContext& c) { c.attr_s("equation", "...ij,...jk->...ik"); },
                  "[b, 2, m, n]"},
        SetupCase{"EinsumEllipsisBroadcastsOne",
                  "Einsum",
                  {ffact("1, m, 8"), ffact("b, 8, n")},
                  [](FakeContext& c) { c.attr_s("equation", "...ij,...jk->...ik"); },
                  "[b, m, n]"},
        SetupCase{"EinsumEllipsisImplicit",
                  "Einsum",
                  {ffact("b, m, 8"), ffact("b, 8, n")},
                  [](FakeContext& c) { c.attr_s("equation", "...ij,...jk"); },
                  "[b, m, n]"},
        SetupCase{"EinsumEllipsisMiddle",
                  "Einsum",
                  {ffact("x, b, c, y")},
                  [](FakeContext& c) { c.attr_s("equation", "i...j->j...i"); },
                  "[y, b, c, x]"},
        SetupCase{"EinsumDiagonal",
                  "Einsum",
                  {ffact("n, m")},
                  [](FakeContext& c) { c.attr_s("equation", "ii->i"); },
                  "[n]",
                  {"n == m"}},
        SetupCase{"EinsumTrace",
                  "Einsum",
                  {ffact("n, n")},
                  [](FakeContext& c) { c.attr_s("equation", "ii"); },
                  "[]"},
        SetupCase{"EinsumContractedDimRequired",
                  "Einsum",
                  {ffact("2, 3"), ffact("4, 5")},
                  [](FakeContext& c) { c.attr_s("equation", "ij, jk -> ik"); },
                  "[2, 5]",
                  {"3 == 4"}},
        SetupCase{"EinsumMixedCaseImplicitStaysUnknown",
                  "Einsum",
                  {ffact("2, 3"), ffact("3, 4")},
                  [](FakeContext& c) { c.attr_s("equation", "aB,BC"); },
                  "[?, ?]"},
        SetupCase{"EinsumEllipsisUnknownRank",
                  "Einsum",
                  {TensorFact::unknown(DataType::kFloat), ffact("8, n")},
                  [](FakeContext& c) { c.attr_s("equation", "...j,jk->...k"); },
                  "<unknown rank>"},
        SetupCase{"EinsumUnknownRankNoEllipsis",
                  "Einsum",
                  {TensorFact::unknown(DataType::kFloat), ffact("8, n")},
                  [](FakeContext& c) { c.attr_s("equation", "ij,jk->ik"); },
                  "[?, n]"}),
    case_name);

TEST(LinalgTest, MatMulDtypes) {
  FakeContext mi("MatMulInteger", {fact(DataType::kUint8, "2, 3"), fact(DataType::kUint8, "3, 4")});
  ASSERT_TRUE(mi.run().ok());
  EXPECT_EQ(mi.out().dtype, DataType::kInt32);
  FakeContext q("QLinearMatMul",
                {fact(DataType::kUint8, "2, 3"), ffact(""), fact(DataType::kUint8, ""),
                 fact(DataType::kInt8, "3, 4"), ffact(""), fact(DataType::kInt8, ""), ffact(""),
                 fact(DataType::kInt8, "")});
  ASSERT_TRUE(q.run().ok());
  EXPECT_EQ(q.out().dtype, DataType::kInt8);
  FakeContext g("Gemm", {fact(DataType::kDouble, "2, 3"), fact(DataType::kDouble, "3, 4")});
  ASSERT_TRUE(g.run().ok());
  EXPECT_EQ(g.out().dtype, DataType::kDouble);
}

TEST(LinalgTest, MatMulDotProductCarriesValue) {
  FakeContext ctx("MatMul", {ints({"2", "h"}), ints({"3", "1"})});
  ASSERT_TRUE(ctx.run().ok());
  EXPECT_EQ(ctx.out_str(), "[] = (h+6)");
}

TEST(LinalgTest, MatMulBroadcastSymbolicBatch) {
  // Batch dims that are provably >= 2 on both sides must be equal: a requirement, not a guess.
  FakeContext ctx("MatMul", {ffact("a, m, k"), ffact("b, k, n")});
  ctx.range("a", 2, 8).range("b", 2, 8);
  ASSERT_TRUE(ctx.run().ok());
  EXPECT_EQ(ctx.out_str(), "[a, m, n]");
  EXPECT_EQ(ctx.requirements, std::vector<std::string>{"a == b"});
}

TEST(LinalgTest, Errors) {
  FakeContext scalar("MatMul", {ffact(""), ffact("2, 3")});
  EXPECT_EQ(scalar.run().code(), StatusCode::kInvalidModel);
  FakeContext gemm3d("Gemm", {ffact("2, 3, 4"), ffact("4, 5")});
  EXPECT_EQ(gemm3d.run().code(), StatusCode::kInvalidModel);
  FakeContext gemm_c("Gemm", {ffact("2, 3"), ffact("3, 5"), ffact("1, 2, 5")});
  EXPECT_EQ(gemm_c.run().code(), StatusCode::kInvalidModel);
  FakeContext no_eq("Einsum", {ffact("2, 3")});
  EXPECT_EQ(no_eq.run().code(), StatusCode::kInvalidModel);
  FakeContext bad_rank("Einsum", {ffact("2, 3")});
  bad_rank.attr_s("equation", "ijk->i");
  EXPECT_EQ(bad_rank.run().code(), StatusCode::kInvalidModel);
  FakeContext terms("Einsum", {ffact("2, 3")});
  terms.attr_s("equation", "ij,jk->ik");
  EXPECT_EQ(terms.run().code(), StatusCode::kInvalidModel);
  FakeContext out_label("Einsum", {ffact("2, 3")});
  out_label.attr_s("equation", "ij->iz");
  EXPECT_EQ(out_label.run().code(), StatusCode::kInvalidModel);
  FakeContext bad_char("Einsum", {ffact("2, 3")});
  bad_char.attr_s("equation", "i1->i");
  EXPECT_EQ(bad_char.run().code(), StatusCode::kInvalidModel);
}

TEST(LinalgTest, Registry) {
  for (const char* op : {"MatMul", "MatMulInteger", "QLinearMatMul", "Gemm", "Einsum"}) {
    const OpSpec* spec = OpRegistry::standard().find(op, 17);
    ASSERT_NE(spec, nullptr) << op;
    EXPECT_EQ(spec->op_class, OpClass::kISDOS) << op;
    EXPECT_TRUE(spec->value_inputs.empty()) << op;
  }
}

}  // namespace
}  // namespace sod2::testing
