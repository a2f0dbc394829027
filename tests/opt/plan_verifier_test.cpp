// The verifier rejects every kind of broken layout and lifetime, naming the tensors involved.
#include <gtest/gtest.h>

#include "core/opt/lifetimes.h"
#include "core/opt/plan_verifier.h"
#include "golden_models.h"

namespace sod2::opt {
namespace {

using namespace sod2::testing;

Status check(std::vector<PlacedTensor> tensors, int64_t arena) {
  const std::vector<std::string> names{"a", "b", "c"};
  return verify_layout(tensors, arena, std::span(names).first(tensors.size()));
}

TEST(VerifyLayout, AcceptsReuseAcrossDisjointLifetimes) {
  EXPECT_TRUE(check({{128, 0, {0, 1}}, {128, 0, {2, 3}}, {64, 128, {1, 2}}}, 192).ok());
  EXPECT_TRUE(check({}, 0).ok());
}

TEST(VerifyLayout, RejectsOverlappingBytesOfTensorsLiveTogether) {
  Status s = check({{128, 0, {0, 1}}, {128, 64, {1, 2}}}, 192);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'a' [0, 128)"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'b' [64, 192)"), std::string::npos) << s.message();
  // Containment, and a tensor starting where another starts.
  EXPECT_FALSE(check({{256, 0, {0, 0}}, {64, 64, {0, 0}}}, 256).ok());
  EXPECT_FALSE(check({{64, 64, {0, 3}}, {128, 64, {3, 4}}}, 192).ok());
}

TEST(VerifyLayout, EmptyTensorsOverlapNothing) {
  EXPECT_TRUE(check({{128, 0, {0, 1}}, {0, 64, {0, 1}}}, 128).ok());
}

TEST(VerifyLayout, RejectsMisalignedNegativeAndOutOfArenaTensors) {
  EXPECT_FALSE(check({{64, 32, {0, 0}}}, 128).ok());
  EXPECT_FALSE(check({{64, -64, {0, 0}}}, 128).ok());
  EXPECT_FALSE(check({{-64, 0, {0, 0}}}, 128).ok());
  Status s = check({{128, 64, {0, 0}}}, 128);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ends past the arena"), std::string::npos) << s.message();
  EXPECT_FALSE(check({{64, 0, {2, 1}}}, 64).ok());
}

TEST(VerifyLifetimes, AcceptsComputedLifetimesAndRejectsShortenedOnes) {
  Analysed a = analyse(residual_mlp_model(), range_of("n", 1, 8));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  const std::vector<NodeId> order = *a.graph().topological_order();
  std::vector<Lifetime> lives = *tensor_lifetimes(a.graph(), order, set);
  EXPECT_TRUE(verify_lifetimes(a.graph(), order, set, lives).ok());

  std::vector<Lifetime> short_r = lives;
  short_r[0].last_step = 3;  // r is read by the residual Add at step 4
  Status s = verify_lifetimes(a.graph(), order, set, short_r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'r'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'residual'"), std::string::npos) << s.message();

  std::vector<Lifetime> late = lives;
  late[1].first_step = 2;  // h is written at step 1
  EXPECT_FALSE(verify_lifetimes(a.graph(), order, set, late).ok());
}

TEST(VerifyLifetimes, GraphOutputsMustLiveToTheLastStep) {
  Analysed a = analyse(chain_model(), range_of("n", 1, 8));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  const std::vector<NodeId> order = *a.graph().topological_order();
  std::vector<Lifetime> lives = *tensor_lifetimes(a.graph(), order, set);
  ASSERT_EQ(lives, (std::vector<Lifetime>{{0, 1}, {1, 2}, {2, 2}}));
  set.tensors[0].graph_output = true;  // as if `a` were also an output
  Status s = verify_lifetimes(a.graph(), order, set, lives);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("graph output"), std::string::npos) << s.message();
  lives[0].last_step = 2;
  EXPECT_TRUE(verify_lifetimes(a.graph(), order, set, lives).ok());
}

}  // namespace
}  // namespace sod2::opt
